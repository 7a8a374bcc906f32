//! (5) Error bodies and unit answers.

use super::operation_helpers::{all_operations, operation, response_codes, response_schema};
use super::schema_helpers::{T, check_fields, flatten, required_of, schema, walk};
use super::{Ck, Doc, cloud, notification, unit};
use serde_json::Value;

const DEVICE_INFO_FIELDS: &[&str] = &[
    "productCode",
    "serialNumber",
    "hwRevision",
    "mnfVersion",
    "mnfDate",
    "macAddress",
    "productType",
    "fmwVersion",
    "btVersion",
    "eComVersion",
    "apiVersion",
];

fn check_error_responses(ck: &mut Ck, doc: Doc, fields: &[&str]) {
    for (m, p, op) in all_operations(doc) {
        for code in response_codes(op) {
            if !(code.starts_with('4') || code.starts_with('5')) {
                continue;
            }
            let what = format!("{}: {} {p} {code}", doc.name, m.to_uppercase());
            let body = response_schema(doc, op, &code);
            let props = body
                .as_ref()
                .map(|b| flatten(doc.root, b))
                .and_then(|f| f.get("properties").cloned())
                .unwrap_or(Value::Null);
            for f in fields {
                ck.check(props.get(*f).is_some(), || {
                    format!("{what}: error body lacks `{f}`")
                });
            }
        }
    }
}

#[test]
fn cloud_error_bodies() {
    let mut ck = Ck::new("cloud_error_bodies");
    for doc in [cloud(), notification()] {
        if let Some(e) = schema(doc, "Error") {
            let req = required_of(&flatten(doc.root, e));
            for f in ["title", "details"] {
                ck.check(req.contains(f), || {
                    format!("{}: Error.{f} must be required", doc.name)
                });
            }
        }
        check_error_responses(&mut ck, doc, &["title", "details"]);
    }
    ck.finish();
}

/// (label, body schema, fields)
type AnswerCase = (&'static str, Option<Value>, Vec<(&'static str, T)>);

#[test]
fn unit_error_and_result_bodies() {
    let mut ck = Ck::new("unit_error_and_result_bodies");
    let doc = unit();
    if let Some(e) = schema(doc, "Error") {
        check_fields(
            &mut ck,
            doc,
            "Error",
            e,
            &[
                ("status", T::I),
                ("title", T::S),
                ("detail", T::S),
                ("errors.[].path", T::S),
                ("errors.[].message", T::S),
            ],
        );
        let req = required_of(&flatten(doc.root, e));
        for f in ["status", "title", "detail"] {
            ck.check(req.contains(f), || {
                format!("ins-device.yaml: Error.{f} must be required")
            });
        }
    } else {
        ck.check(false, || {
            "ins-device.yaml: schema Error missing".to_string()
        });
    }
    check_error_responses(&mut ck, doc, &["status", "title", "detail"]);
    // a 422 on settings writes carries `errors`
    for path in [
        "/api/v1/settings",
        "/api/v1/settings/{path}",
        "/api/v1/settings/import",
    ] {
        let body = operation(doc, "post", path).and_then(|op| response_schema(doc, op, "422"));
        let ok = body
            .as_ref()
            .is_some_and(|b| walk(doc.root, b, "errors.[].path").is_ok());
        ck.check(ok, || {
            format!("ins-device.yaml: POST {path} 422 body lacks errors[].path/message")
        });
    }
    // WriteResult, DeviceInfo, login, change password
    let write =
        operation(doc, "post", "/api/v1/settings").and_then(|op| response_schema(doc, op, "200"));
    let info = operation(doc, "get", "/api/v1/info").and_then(|op| response_schema(doc, op, "200"));
    let login_res =
        operation(doc, "post", "/api/v1/user/login").and_then(|op| response_schema(doc, op, "200"));
    let device_fields: Vec<(&str, T)> = DEVICE_INFO_FIELDS.iter().map(|f| (*f, T::S)).collect();
    let cases: Vec<AnswerCase> = vec![
        (
            "WriteResult",
            write,
            vec![("title", T::S), ("needReboot", T::B)],
        ),
        ("DeviceInfo", info, device_fields),
        ("LoginResponse", login_res, vec![("token", T::S)]),
    ];
    for (label, body, fields) in cases {
        let Some(body) = body else {
            ck.check(false, || format!("ins-device.yaml: {label} body missing"));
            continue;
        };
        check_fields(&mut ck, doc, label, &body, &fields);
        let req = required_of(&flatten(doc.root, &body));
        for (f, _) in &fields {
            ck.check(req.contains(*f), || {
                format!("ins-device.yaml: {label}.{f} must be required")
            });
        }
    }
    ck.finish();
}
