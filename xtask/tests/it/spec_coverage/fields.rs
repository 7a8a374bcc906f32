//! (2) Fields of resources, request and response bodies.

use super::operation_helpers::{operation, request_schema, response_schema};
use super::schema_helpers::{
    T, check_fields, check_shape, deref, flatten, refers_to, required_of, schema, str_of, walk,
};
use super::{
    CONTAINER, CONTAINER_FILE, CONTAINER_FILES, Ck, Doc, INFO_V1, MISSED, ORG_CONTAINERS,
    ORG_PROCESSINGS, ORG_WEBHOOKS, PROCESSING, PROCESSING_ARCHIVE, PROCESSING_ERRORS,
    PROCESSING_OUTPUT, WEBHOOK, cloud, notification, unit,
};
use serde_json::Value;

const PROCESSING_FIELDS: &[(&str, T)] = &[
    ("id", T::Uuid),
    ("name", T::S),
    ("type", T::R("ProcessingType")),
    ("status", T::R("ProcessingStatus")),
    ("region", T::R("ContainerRegion")),
    ("processingResult", T::R("ProcessingResult")),
    ("processingDuration", T::I),
    ("processingStep", T::R("ProcessingStep")),
    ("processingProgress", T::N),
    ("archiveScheduledAt", T::Dt),
    ("createdAt", T::Dt),
    ("updatedAt", T::Dt),
    ("creatorId", T::Uuid),
    ("organizationId", T::Uuid),
    ("containerId", T::Uuid),
    ("errorCount", T::O),
    ("errorCount.errors", T::I),
    ("errorCount.warnings", T::I),
    ("missionLength", T::I),
    ("missionLocationCountry", T::S),
    ("missionLocationRegion", T::S),
    ("missionLocationPlace", T::S),
    ("metadata", T::R("Metadata")),
    ("processingJson", T::O),
];

const CONTAINER_FILE_FIELDS: &[(&str, T)] = &[
    ("id", T::Uuid),
    ("type", T::R("ContainerFileType")),
    ("status", T::R("ContainerFileStatus")),
    ("size", T::I),
    ("path", T::S),
    ("createdAt", T::Dt),
    ("updatedAt", T::Dt),
    ("creatorId", T::Uuid),
    ("metadata", T::R("Metadata")),
    ("uploadInfo", T::O),
    ("uploadInfo.url", T::Url),
    ("uploadInfo.fields", T::O),
    // the fields carried by uploadInfo.fields, as the vendor's API collection sends
    // them (temporary credentials: the session token too)
    ("uploadInfo.fields.bucket", T::S),
    ("uploadInfo.fields.X-Amz-Algorithm", T::S),
    ("uploadInfo.fields.X-Amz-Credential", T::S),
    ("uploadInfo.fields.X-Amz-Date", T::S),
    ("uploadInfo.fields.key", T::S),
    ("uploadInfo.fields.Policy", T::S),
    ("uploadInfo.fields.X-Amz-Signature", T::S),
    ("uploadInfo.fields.X-Amz-Security-Token", T::S),
];

/// The upload form's fields, in the order the service sends them (and they must be
/// sent back in): the one list the tests share.
const UPLOAD_FIELDS_ORDER: &[&str] = &svc_test_support::UPLOAD_FIELDS;

/// Top-level schemas of the cloud document and their fields.
const CLOUD_SCHEMA_FIELDS: &[(&str, &[(&str, T)])] = &[
    (
        "Container",
        &[
            ("id", T::Uuid),
            ("status", T::R("ContainerStatus")),
            ("region", T::R("ContainerRegion")),
            ("expirationDate", T::Dt),
            ("createdAt", T::Dt),
            ("updatedAt", T::Dt),
            ("creatorId", T::Uuid),
            ("organizationId", T::Uuid),
            ("metadata", T::R("Metadata")),
            ("files", T::Arr("ContainerFile")),
        ],
    ),
    ("ContainerFile", CONTAINER_FILE_FIELDS),
    (
        "CreateContainerFile",
        &[
            ("path", T::S),
            ("type", T::R("ContainerFileType")),
            ("size", T::I),
            ("metadata", T::R("Metadata")),
        ],
    ),
    ("Processing", PROCESSING_FIELDS),
    ("ErrorCount", &[("errors", T::I), ("warnings", T::I)]),
    (
        "ProcessingError",
        &[
            ("id", T::Uuid),
            ("level", T::R("ProcessingErrorLevel")),
            ("message", T::S),
            ("date", T::Dt),
        ],
    ),
    (
        "ServerInfo",
        &[
            ("version", T::S),
            ("engineVersions", T::ArrS),
            ("apiVersion", T::S),
            ("regionsStatus", T::Map("RegionStatus")),
        ],
    ),
    (
        "ContainerList",
        &[("numItems", T::I), ("containers", T::Arr("Container"))],
    ),
    (
        "ProcessingList",
        &[("numItems", T::I), ("processings", T::Arr("Processing"))],
    ),
    ("OutputFile", &[("path", T::S), ("url", T::Url)]),
    ("UploadInfo", &[("url", T::Url), ("fields", T::O)]),
    ("Error", &[("title", T::S), ("details", T::S)]),
];

const NOTIFICATION_SCHEMA_FIELDS: &[(&str, &[(&str, T)])] = &[
    (
        "WebhookEndpoint",
        &[
            ("id", T::Uuid),
            ("url", T::Url),
            ("enabledEventTypes", T::Arr("EventType")),
            ("secret", T::S),
            ("enabled", T::B),
            ("metadata", T::R("Metadata")),
        ],
    ),
    (
        "WebhookEvent",
        &[
            ("id", T::Uuid),
            ("eventType", T::R("EventType")),
            ("createdAt", T::Dt),
            ("endpointMetadata", T::O),
            ("payload", T::R("Processing")),
        ],
    ),
    (
        "MissedWebhook",
        &[
            ("id", T::Uuid),
            ("eventType", T::R("EventType")),
            ("payload", T::O),
            ("createdAt", T::Dt),
            ("endpointMetadata", T::O),
        ],
    ),
    ("Processing", PROCESSING_FIELDS),
    ("Error", &[("title", T::S), ("details", T::S)]),
];

/// Request bodies: (method, path, fields, required fields, optional fields, body optional)
type BodySpec = (
    &'static str,
    &'static str,
    &'static [(&'static str, T)],
    &'static [&'static str],
    &'static [&'static str],
    bool,
);

const CLOUD_BODIES: &[BodySpec] = &[
    (
        "post",
        ORG_CONTAINERS,
        &[
            ("region", T::R("ContainerRegion")),
            ("metadata", T::R("Metadata")),
            ("files", T::Arr("CreateContainerFile")),
        ],
        &["region"],
        &["metadata", "files"],
        false,
    ),
    (
        "patch",
        CONTAINER,
        &[("metadata", T::R("Metadata"))],
        &[],
        &["metadata"],
        true,
    ),
    (
        "post",
        CONTAINER_FILES,
        &[("files", T::Arr("CreateContainerFile"))],
        &["files"],
        &[],
        false,
    ),
    (
        "patch",
        CONTAINER_FILE,
        &[
            ("type", T::R("ContainerFileType")),
            ("path", T::S),
            ("metadata", T::R("Metadata")),
        ],
        &[],
        &["type", "path", "metadata"],
        true,
    ),
    (
        "post",
        ORG_PROCESSINGS,
        &[
            ("containerId", T::Uuid),
            ("processingJson", T::O),
            ("name", T::S),
            ("metadata", T::R("Metadata")),
        ],
        &["containerId", "processingJson"],
        &["name", "metadata"],
        false,
    ),
];

const NOTIFICATION_BODIES: &[BodySpec] = &[
    (
        "post",
        ORG_WEBHOOKS,
        &[
            ("url", T::Url),
            ("enabledEventTypes", T::Arr("EventType")),
            ("metadata", T::R("Metadata")),
        ],
        &["url", "enabledEventTypes"],
        &["metadata"],
        false,
    ),
    (
        "patch",
        WEBHOOK,
        &[
            ("url", T::Url),
            ("enabledEventTypes", T::Arr("EventType")),
            ("metadata", T::R("Metadata")),
            ("enabled", T::B),
        ],
        &[],
        &["url", "enabledEventTypes", "metadata", "enabled"],
        true,
    ),
];

const UNIT_BODIES: &[BodySpec] = &[
    (
        "post",
        "/api/v1/user/login",
        &[("user", T::R("UserName")), ("password", T::S)],
        &["user", "password"],
        &[],
        false,
    ),
    (
        "post",
        "/api/v1/user/password",
        &[("user", T::R("UserName")), ("password", T::S)],
        &["password"],
        &["user"],
        false,
    ),
    ("post", "/api/v1/settings", &[], &[], &[], false),
    ("post", "/api/v1/settings/import", &[], &[], &[], false),
];

/// Success bodies: (method, path, schema name, bare array of it?)
const CLOUD_RESPONSES: &[(&str, &str, &str, bool)] = &[
    ("get", INFO_V1, "ServerInfo", false),
    ("get", ORG_CONTAINERS, "ContainerList", false),
    ("post", ORG_CONTAINERS, "Container", false),
    ("get", CONTAINER, "Container", false),
    ("patch", CONTAINER, "Container", false),
    ("post", CONTAINER_FILES, "ContainerFile", true),
    ("patch", CONTAINER_FILE, "ContainerFile", false),
    ("get", ORG_PROCESSINGS, "ProcessingList", false),
    ("post", ORG_PROCESSINGS, "Processing", false),
    ("get", PROCESSING, "Processing", false),
    ("post", PROCESSING_ARCHIVE, "Processing", false),
    ("get", PROCESSING_OUTPUT, "OutputFile", true),
    ("get", PROCESSING_ERRORS, "ProcessingError", true),
];

const NOTIFICATION_RESPONSES: &[(&str, &str, &str, bool)] = &[
    // the specification: list, create and update all answer an array of WebhookEndpoint
    ("get", ORG_WEBHOOKS, "WebhookEndpoint", true),
    ("post", ORG_WEBHOOKS, "WebhookEndpoint", true),
    ("patch", WEBHOOK, "WebhookEndpoint", true),
    ("get", MISSED, "MissedWebhook", true),
];

const UNIT_RESPONSES: &[(&str, &str, &str, bool)] = &[
    ("get", "/api/v1/settings", "Settings", false),
    ("post", "/api/v1/settings", "WriteResult", false),
    ("post", "/api/v1/settings/{path}", "WriteResult", false),
    ("post", "/api/v1/settings/default", "WriteResult", false),
    ("post", "/api/v1/settings/import", "WriteResult", false),
    ("get", "/api/v1/settings/export", "SettingsFile", false),
    ("get", "/api/v1/info", "DeviceInfo", false),
    ("post", "/api/v1/user/login", "LoginResponse", false),
];

fn check_schema_fields(ck: &mut Ck, doc: Doc, table: &[(&str, &[(&str, T)])]) {
    for (name, fields) in table {
        let Some(s) = schema(doc, name) else {
            ck.check(false, || format!("{}: schema {name} missing", doc.name));
            continue;
        };
        check_fields(ck, doc, name, s, fields);
    }
}

#[test]
fn cloud_resource_fields() {
    let mut ck = Ck::new("cloud_resource_fields");
    let doc = cloud();
    check_schema_fields(&mut ck, doc, CLOUD_SCHEMA_FIELDS);
    // the upload form fields, in the order the service hands them out
    if let Ok(fields) = schema(doc, "ContainerFile")
        .ok_or_else(String::new)
        .and_then(|s| walk(doc.root, s, "uploadInfo.fields"))
    {
        let flat = flatten(doc.root, &fields);
        let order: Vec<String> = flat
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let listed: Vec<&String> = order
            .iter()
            .filter(|k| UPLOAD_FIELDS_ORDER.contains(&k.as_str()))
            .collect();
        ck.check(listed == UPLOAD_FIELDS_ORDER, || {
            format!("cloud.yaml: uploadInfo.fields properties are not in the order {UPLOAD_FIELDS_ORDER:?} (found {order:?})")
        });
        let req = required_of(&flat);
        for f in UPLOAD_FIELDS_ORDER {
            ck.check(req.contains(*f), || {
                format!("cloud.yaml: uploadInfo.fields.{f} is not required")
            });
        }
        // every entry is a string form field; other fields may be handed out
        let extra_ok = match flat.get("additionalProperties") {
            None | Some(Value::Bool(true)) => true,
            Some(Value::Bool(false)) => false,
            Some(a) => str_of(&flatten(doc.root, a), "type") == "string",
        };
        ck.check(extra_ok, || {
            "cloud.yaml: uploadInfo.fields must allow other fields, as strings".to_string()
        });
    }
    // the descriptions that list the fields list them in that order too
    for name in ["UploadFields", "UploadInfo"] {
        let text = schema(doc, name).map_or("", |s| str_of(s, "description"));
        let at: Vec<Option<usize>> = UPLOAD_FIELDS_ORDER
            .iter()
            .map(|f| text.find(&format!("`{f}`")))
            .collect();
        ck.check(
            at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1]),
            || {
                format!(
                    "cloud.yaml: the description of {name} does not list the upload fields in the order {UPLOAD_FIELDS_ORDER:?}"
                )
            },
        );
    }
    ck.finish();
}

#[test]
fn notification_resource_fields() {
    let mut ck = Ck::new("notification_resource_fields");
    let doc = notification();
    check_schema_fields(&mut ck, doc, NOTIFICATION_SCHEMA_FIELDS);
    // the delivered payload is a full Processing
    if let Some(ev) = schema(doc, "WebhookEvent") {
        let payload: Vec<(String, T)> = PROCESSING_FIELDS
            .iter()
            .map(|(f, t)| (format!("payload.{f}"), *t))
            .collect();
        let payload: Vec<(&str, T)> = payload.iter().map(|(f, t)| (f.as_str(), *t)).collect();
        check_fields(&mut ck, doc, "WebhookEvent", ev, &payload);
    }
    ck.finish();
}

fn check_bodies(ck: &mut Ck, doc: Doc, bodies: &[BodySpec]) {
    for (method, path, fields, required, optional, body_optional) in bodies {
        let label = format!("{} {path} request body", method.to_uppercase());
        let Some(op) = operation(doc, method, path) else {
            ck.check(false, || {
                format!("{}: {label}: operation missing", doc.name)
            });
            continue;
        };
        let Some(body) = request_schema(doc, op) else {
            ck.check(false, || format!("{}: {label} missing", doc.name));
            continue;
        };
        let rb = deref(doc.root, op.get("requestBody").unwrap_or(&Value::Null));
        let body_required = rb.get("required") == Some(&Value::Bool(true));
        if *body_optional {
            ck.check(!body_required, || {
                format!(
                    "{}: {label} must be optional (requestBody.required is true)",
                    doc.name
                )
            });
        } else {
            ck.check(body_required, || {
                format!("{}: {label} must be required", doc.name)
            });
        }
        check_fields(ck, doc, &label, &body, fields);
        let flat = flatten(doc.root, &body);
        let req = required_of(&flat);
        for f in *required {
            ck.check(req.contains(*f), || {
                format!("{}: {label}: `{f}` must be required", doc.name)
            });
        }
        for f in *optional {
            ck.check(!req.contains(*f), || {
                format!("{}: {label}: `{f}` must be optional", doc.name)
            });
        }
    }
}

#[test]
fn request_bodies() {
    let mut ck = Ck::new("request_bodies");
    check_bodies(&mut ck, cloud(), CLOUD_BODIES);
    check_bodies(&mut ck, notification(), NOTIFICATION_BODIES);
    check_bodies(&mut ck, unit(), UNIT_BODIES);
    // settings writes and import take the settings tree
    let doc = unit();
    for path in ["/api/v1/settings", "/api/v1/settings/import"] {
        let body = operation(doc, "post", path).and_then(|op| request_schema(doc, op));
        ck.check(
            body.as_ref().is_some_and(|b| refers_to(b, "Settings")),
            || format!("ins-device.yaml: POST {path} body must be the Settings tree"),
        );
    }
    // the node write takes a JSON body
    let node =
        operation(doc, "post", "/api/v1/settings/{path}").and_then(|op| request_schema(doc, op));
    ck.check(node.is_some(), || {
        "ins-device.yaml: POST /api/v1/settings/{path} has no JSON request body".to_string()
    });
    ck.finish();
}

fn check_responses(ck: &mut Ck, doc: Doc, table: &[(&str, &str, &'static str, bool)]) {
    for (method, path, name, array) in table {
        let what = format!("{}: {} {path} 200 body", doc.name, method.to_uppercase());
        let body = operation(doc, method, path).and_then(|op| response_schema(doc, op, "200"));
        let Some(body) = body else {
            ck.check(false, || format!("{what} missing"));
            continue;
        };
        let r = if *array {
            check_shape(doc.root, &body, T::Arr(name))
        } else {
            check_shape(doc.root, &body, T::R(name))
        };
        ck.result(r.map_err(|e| format!("{what}: {e}")));
    }
}

#[test]
fn response_bodies() {
    let mut ck = Ck::new("response_bodies");
    check_responses(&mut ck, cloud(), CLOUD_RESPONSES);
    check_responses(&mut ck, notification(), NOTIFICATION_RESPONSES);
    check_responses(&mut ck, unit(), UNIT_RESPONSES);
    ck.finish();
}

#[test]
fn nullable_fields() {
    let mut ck = Ck::new("nullable_fields");
    let nullable = |doc: Doc, root: &Value, path: &str| -> bool {
        walk(doc.root, root, path)
            .map(|n| flatten(doc.root, &n).get("nullable") == Some(&Value::Bool(true)))
            .unwrap_or(false)
    };
    for doc in [cloud(), notification()] {
        let Some(p) = schema(doc, "Processing") else {
            ck.check(false, || format!("{}: schema Processing missing", doc.name));
            continue;
        };
        for f in [
            "name",
            "containerId",
            "processingResult",
            "processingStep",
            "processingProgress",
        ] {
            ck.check(nullable(doc, p, f), || {
                format!("{}: Processing.{f} must be nullable", doc.name)
            });
        }
    }
    let doc = cloud();
    if let Some(body) =
        operation(doc, "post", ORG_PROCESSINGS).and_then(|op| request_schema(doc, op))
    {
        ck.check(nullable(doc, &body, "name"), || {
            "cloud.yaml: start processing body `name` must be nullable".to_string()
        });
    } else {
        ck.check(false, || {
            "cloud.yaml: start processing body missing".to_string()
        });
    }
    ck.finish();
}
