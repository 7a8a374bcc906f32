//! (3) Value sets.

use super::operation_helpers::parameter;
use super::schema_helpers::{enum_values, flatten, refers_to, schema, str_of};
use super::{Ck, Doc, cloud, notification, unit};
use serde_json::Value;

const REGIONS: &[&str] = &["eu-west-3", "us-west-1", "ap-northeast-1", "ap-southeast-2"];

/// (schema, values) — value sets of the specification and its decided points.
const CLOUD_VALUE_SETS: &[(&str, &[&str])] = &[
    ("ContainerRegion", REGIONS),
    ("ContainerFileType", &["input", "resources"]),
    ("ContainerStatus", &["empty", "valid", "archived"]),
    (
        "ContainerFileStatus",
        &["pending", "ready", "deleting", "deleted"],
    ),
    (
        "ProcessingStatus",
        &["pending", "processing", "processed", "canceled", "archived"],
    ),
    ("ProcessingResult", &["succeeded", "failed"]),
    ("ProcessingType", &["gnss", "ins"]),
    (
        "ProcessingStep",
        &[
            "import",
            "base_station",
            "preprocessing",
            "processing",
            "export",
            "report",
        ],
    ),
    ("ProcessingErrorLevel", &["error", "warning"]),
    ("RegionStatus", &["online", "degraded", "offline"]),
];

const EVENT_TYPES: &[&str] = &[
    "cloud:processing-ended",
    "cloud:processing-progress",
    "cloud:processing-error",
];

const NOTIFICATION_VALUE_SETS: &[(&str, &[&str])] = &[
    ("EventType", EVENT_TYPES),
    // shared copies used by the Processing payload
    ("ContainerRegion", REGIONS),
    (
        "ProcessingStatus",
        &["pending", "processing", "processed", "canceled", "archived"],
    ),
    ("ProcessingResult", &["succeeded", "failed"]),
    ("ProcessingType", &["gnss", "ins"]),
    (
        "ProcessingStep",
        &[
            "import",
            "base_station",
            "preprocessing",
            "processing",
            "export",
            "report",
        ],
    ),
];

pub(super) const USERS: &[&str] = &["viewer", "operator", "powerUser", "setup", "factory"];

const TRIGGERS: &[&str] = &[
    "off", "onChange", "1ms", "2ms", "4ms", "5ms", "8ms", "10ms", "20ms", "25ms", "40ms", "50ms",
    "100ms", "200ms", "500ms", "1000ms",
];

const UNIT_VALUE_SETS: &[(&str, &[&str])] = &[
    ("SettingsFormat", &["compact", "pretty"]),
    ("UserName", USERS),
    ("MessageTrigger", TRIGGERS),
];

fn check_value_sets(ck: &mut Ck, doc: Doc, sets: &[(&str, &[&str])]) {
    for (name, values) in sets {
        let Some(s) = schema(doc, name) else {
            ck.check(false, || format!("{}: value set {name} missing", doc.name));
            continue;
        };
        ck.check(str_of(&flatten(doc.root, s), "type") == "string", || {
            format!("{}: {name} is not `type: string`", doc.name)
        });
        let have = enum_values(doc.root, s);
        for v in *values {
            ck.check(have.iter().any(|h| h == v), || {
                format!("{}: {name} lacks value `{v}`", doc.name)
            });
        }
        for h in &have {
            ck.check(values.contains(&h.as_str()), || {
                format!(
                    "{}: {name} has value `{h}` the specification does not define",
                    doc.name
                )
            });
        }
    }
}

#[test]
fn value_sets() {
    let mut ck = Ck::new("value_sets");
    check_value_sets(&mut ck, cloud(), CLOUD_VALUE_SETS);
    check_value_sets(&mut ck, notification(), NOTIFICATION_VALUE_SETS);
    check_value_sets(&mut ck, unit(), UNIT_VALUE_SETS);
    // the `format` query parameter of settings reads uses SettingsFormat
    let doc = unit();
    {
        let path = "/api/v1/settings";
        let p = parameter(doc, "get", path, "format", "query");
        ck.check(
            p.as_ref()
                .and_then(|p| p.get("schema"))
                .is_some_and(|s| refers_to(s, "SettingsFormat")),
            || format!("ins-device.yaml: GET {path}: query `format` must refer to SettingsFormat"),
        );
    }
    ck.finish();
}

#[test]
fn unit_query_parameters() {
    let mut ck = Ck::new("unit_query_parameters");
    let doc = unit();
    let cases: &[(&str, &str, &str, &str)] = &[
        ("get", "/api/v1/settings", "delta", "boolean"),
        ("post", "/api/v1/settings", "checkOnly", "boolean"),
    ];
    for (m, path, name, ty) in cases {
        let p = parameter(doc, m, path, name, "query");
        let what = format!(
            "ins-device.yaml: {} {path}: query `{name}`",
            m.to_uppercase()
        );
        let Some(p) = p else {
            ck.check(false, || format!("{what} missing"));
            continue;
        };
        ck.check(p.get("required") != Some(&Value::Bool(true)), || {
            format!("{what} must be optional")
        });
        let flat = flatten(doc.root, p.get("schema").unwrap_or(&Value::Null));
        ck.check(str_of(&flat, "type") == *ty, || {
            format!("{what} must be {ty}")
        });
    }
    let p = parameter(doc, "get", "/api/v1/settings", "format", "query");
    ck.check(
        p.is_some_and(|p| p.get("required") != Some(&Value::Bool(true))),
        || "ins-device.yaml: GET /api/v1/settings: query `format` missing or required".to_string(),
    );
    ck.finish();
}
