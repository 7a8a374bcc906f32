//! (1) Operations and responses: every operation the specification names, with its
//! status codes (and, for the unit, the right it needs).

use std::collections::BTreeSet;

use super::operation_helpers::{all_operations, operation, parameter, response_codes};
use super::rights_security::CATEGORIES;
use super::schema_helpers::{flatten, str_of};
use super::{
    CONTAINER, CONTAINER_FILE, CONTAINER_FILES, Ck, Doc, INFO_V1, MISSED, ORG_CONTAINERS,
    ORG_PROCESSINGS, ORG_WEBHOOKS, PROCESSING, PROCESSING_ARCHIVE, PROCESSING_ERRORS,
    PROCESSING_OUTPUT, WEBHOOK, cloud, notification, unit,
};
use serde_json::Value;

/// (method, path, status codes the specification and its decided points imply)
const CLOUD_OPS: &[(&str, &str, &[&str])] = &[
    ("get", INFO_V1, &["200", "401", "403", "500"]),
    // list: 422 out of range, 400 missing page/perPage
    (
        "get",
        ORG_CONTAINERS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    // create: 422 invalid region/metadata/path, 409 duplicate file path in `files`
    (
        "post",
        ORG_CONTAINERS,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    ("get", CONTAINER, &["200", "401", "403", "404", "500"]),
    // update metadata: 422 metadata over limits
    (
        "patch",
        CONTAINER,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    // delete: 409 while a processing is pending or processing
    (
        "delete",
        CONTAINER,
        &["200", "401", "403", "404", "409", "500"],
    ),
    // add files: 409 path collision, 422 invalid path
    (
        "post",
        CONTAINER_FILES,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    // update file: 409 path collision, 422 invalid path
    (
        "patch",
        CONTAINER_FILE,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    (
        "delete",
        CONTAINER_FILE,
        &["200", "401", "403", "404", "500"],
    ),
    (
        "get",
        ORG_PROCESSINGS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    // start: 409 ongoing processing / file not ready, 403 no credit left
    (
        "post",
        ORG_PROCESSINGS,
        &["200", "400", "401", "403", "404", "409", "422", "500"],
    ),
    ("get", PROCESSING, &["200", "401", "403", "404", "500"]),
    // cancel: only a pending or running processing (409 otherwise)
    (
        "post",
        PROCESSING,
        &["200", "401", "403", "404", "409", "500"],
    ),
    (
        "post",
        PROCESSING_ARCHIVE,
        &["200", "401", "403", "404", "500"],
    ),
    // outputs: only for status processed (409 otherwise)
    (
        "get",
        PROCESSING_OUTPUT,
        &["200", "401", "403", "404", "409", "500"],
    ),
    (
        "get",
        PROCESSING_ERRORS,
        &["200", "401", "403", "404", "500"],
    ),
];

const NOTIFICATION_OPS: &[(&str, &str, &[&str])] = &[
    (
        "get",
        ORG_WEBHOOKS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    (
        "post",
        ORG_WEBHOOKS,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    (
        "patch",
        WEBHOOK,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
    ("delete", WEBHOOK, &["200", "401", "403", "404", "500"]),
    (
        "get",
        MISSED,
        &["200", "400", "401", "403", "404", "422", "500"],
    ),
];

/// Right an operation of the unit needs (the rights checked per route;
/// `docs/specification.md`, "Unit users and rights").
#[derive(Clone, Copy)]
enum Right {
    /// GET routes: Monitor or Setting VIEW
    View,
    /// settings writes, default, import, lock: Setting WRITE
    SettingWrite,
    /// reboot: Reboot YES
    Reboot,
    /// data logger start/stop: Logger USE
    LoggerUse,
    /// not stated by the specification: `x-required-right` must only be present
    Any,
    /// login: no right (it is how a token is obtained)
    None,
}

const UNIT_OPS: &[(&str, &str, &[&str], Right)] = &[
    // read all settings: 422 bad `format` value
    (
        "get",
        "/api/v1/settings",
        &["200", "401", "422", "500"],
        Right::View,
    ),
    // settings writes: 400 syntax, 403 rights, 409 lock held by another, 422 invalid
    (
        "post",
        "/api/v1/settings",
        &["200", "400", "401", "403", "409", "422", "500"],
        Right::SettingWrite,
    ),
    (
        "get",
        "/api/v1/settings/{path}",
        &["200", "401", "404", "500"],
        Right::View,
    ),
    (
        "post",
        "/api/v1/settings/{path}",
        &["200", "400", "401", "403", "404", "409", "422", "500"],
        Right::SettingWrite,
    ),
    (
        "post",
        "/api/v1/settings/default",
        &["200", "401", "403", "409", "500"],
        Right::SettingWrite,
    ),
    (
        "post",
        "/api/v1/settings/import",
        &["200", "400", "401", "403", "409", "422", "500"],
        Right::SettingWrite,
    ),
    (
        "get",
        "/api/v1/settings/export",
        &["200", "401", "500"],
        Right::View,
    ),
    (
        "post",
        "/api/v1/settings/lock",
        &["200", "401", "403", "409", "500"],
        Right::SettingWrite,
    ),
    (
        "post",
        "/api/v1/settings/unlock",
        &["200", "401", "500"],
        Right::Any,
    ),
    (
        "post",
        "/api/v1/reboot",
        &["200", "401", "403", "500"],
        Right::Reboot,
    ),
    ("get", "/api/v1/info", &["200", "401", "500"], Right::View),
    // login: wrong user or password 401
    (
        "post",
        "/api/v1/user/login",
        &["200", "400", "401", "500"],
        Right::None,
    ),
    (
        "post",
        "/api/v1/user/logout",
        &["200", "401", "500"],
        Right::Any,
    ),
    // change password: without auth 401, another user's by anyone but setup 403
    (
        "post",
        "/api/v1/user/password",
        &["200", "400", "401", "403", "500"],
        Right::Any,
    ),
    (
        "get",
        "/api/v1/dataLogger",
        &["200", "401", "500"],
        Right::View,
    ),
    (
        "post",
        "/api/v1/dataLogger/start",
        &["200", "401", "403", "500"],
        Right::LoggerUse,
    ),
    (
        "post",
        "/api/v1/dataLogger/stop",
        &["200", "401", "403", "500"],
        Right::LoggerUse,
    ),
];

/// Operations beyond the specification, seen in the vendor's own clients (its API
/// collection for the cloud service, its sbgECom example for the unit): each is
/// documented as observed there.
const VENDOR_OBSERVED: &[(&str, &str)] = &[
    ("post", "/api/v2/processings/{processingId}/cancel"),
    ("post", "/api/v1/settings/save"),
    ("post", "/api/v1/system/reboot"),
];

fn check_operations(ck: &mut Ck, doc: Doc, expected: &[(&str, &str, &[&str])]) {
    for (method, path, codes) in expected {
        let Some(op) = operation(doc, method, path) else {
            ck.check(false, || {
                format!(
                    "{}: operation {} {path} missing",
                    doc.name,
                    method.to_uppercase()
                )
            });
            continue;
        };
        ck.check(!str_of(op, "operationId").is_empty(), || {
            format!(
                "{}: {} {path} has no operationId",
                doc.name,
                method.to_uppercase()
            )
        });
        let have = response_codes(op);
        for code in *codes {
            ck.check(have.contains(*code), || {
                format!(
                    "{}: {} {path} lacks response {code}",
                    doc.name,
                    method.to_uppercase()
                )
            });
        }
    }
    // nothing beyond the specified operations
    let known: BTreeSet<(String, String)> = expected
        .iter()
        .map(|(m, p, _)| (m.to_string(), p.to_string()))
        .collect();
    for (m, p, op) in all_operations(doc) {
        if VENDOR_OBSERVED.contains(&(m.as_str(), p.as_str())) {
            ck.check(str_of(op, "description").contains("as observed"), || {
                format!(
                    "{}: {} {p} is the vendor's: its description must say where it was observed",
                    doc.name,
                    m.to_uppercase()
                )
            });
            continue;
        }
        ck.check(known.contains(&(m.clone(), p.clone())), || {
            format!(
                "{}: operation {} {p} is not in the specification",
                doc.name,
                m.to_uppercase()
            )
        });
    }
}

#[test]
fn cloud_operations_and_responses() {
    let mut ck = Ck::new("cloud_operations_and_responses");
    check_operations(&mut ck, cloud(), CLOUD_OPS);
    ck.finish();
}

#[test]
fn notification_operations_and_responses() {
    let mut ck = Ck::new("notification_operations_and_responses");
    check_operations(&mut ck, notification(), NOTIFICATION_OPS);
    ck.finish();
}

#[test]
fn unit_operations_responses_and_rights() {
    let mut ck = Ck::new("unit_operations_responses_and_rights");
    let doc = unit();
    let plain: Vec<(&str, &str, &[&str])> =
        UNIT_OPS.iter().map(|(m, p, c, _)| (*m, *p, *c)).collect();
    check_operations(&mut ck, doc, &plain);
    // only GET and POST exist on the unit
    for (m, p, _) in all_operations(doc) {
        ck.check(m == "get" || m == "post", || {
            format!(
                "ins-device.yaml: {} {p}: only GET and POST are supported by the unit",
                m.to_uppercase()
            )
        });
    }
    for (method, path, _, right) in UNIT_OPS {
        let Some(op) = operation(doc, method, path) else {
            continue;
        };
        let r = op.get("x-required-right");
        let cat = r.map(|r| str_of(r, "category")).unwrap_or("");
        let level = r.map(|r| str_of(r, "level")).unwrap_or("");
        let what = || format!("ins-device.yaml: {} {path}", method.to_uppercase());
        match right {
            Right::None => continue,
            Right::Any => {
                ck.check(r.is_some(), || {
                    format!("{}: x-required-right missing", what())
                });
            }
            Right::View => {
                ck.check(
                    (cat == "Monitor" || cat == "Setting") && level == "VIEW",
                    || format!("{}: x-required-right must be Monitor or Setting VIEW, found {cat:?} {level:?}", what()),
                );
            }
            Right::SettingWrite => {
                ck.check(cat == "Setting" && level == "WRITE", || {
                    format!(
                        "{}: x-required-right must be Setting WRITE, found {cat:?} {level:?}",
                        what()
                    )
                });
            }
            Right::Reboot => {
                ck.check(cat == "Reboot" && level == "YES", || {
                    format!(
                        "{}: x-required-right must be Reboot YES, found {cat:?} {level:?}",
                        what()
                    )
                });
            }
            Right::LoggerUse => {
                ck.check(cat == "Logger" && level == "USE", || {
                    format!(
                        "{}: x-required-right must be Logger USE, found {cat:?} {level:?}",
                        what()
                    )
                });
            }
        }
        if r.is_some() {
            ck.check(CATEGORIES.contains(&cat), || {
                format!(
                    "{}: x-required-right category {cat:?} is not a rights column",
                    what()
                )
            });
        }
    }
    ck.finish();
}

#[test]
fn operation_ids_unique() {
    let mut ck = Ck::new("operation_ids_unique");
    for doc in [cloud(), notification(), unit()] {
        let mut seen = BTreeSet::new();
        for (m, p, op) in all_operations(doc) {
            let id = str_of(op, "operationId").to_string();
            ck.check(!id.is_empty(), || {
                format!("{}: {} {p} has no operationId", doc.name, m.to_uppercase())
            });
            if !id.is_empty() {
                ck.check(seen.insert(id.clone()), || {
                    format!("{}: operationId {id} used twice", doc.name)
                });
            }
        }
    }
    ck.finish();
}

#[test]
fn path_parameters() {
    let mut ck = Ck::new("path_parameters");
    for doc in [cloud(), notification(), unit()] {
        for (m, p, _) in all_operations(doc) {
            let names: Vec<&str> = p
                .split('/')
                .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
                .collect();
            for name in names {
                let what = || {
                    format!(
                        "{}: {} {p}: path parameter `{name}`",
                        doc.name,
                        m.to_uppercase()
                    )
                };
                let Some(param) = parameter(doc, &m, &p, name, "path") else {
                    ck.check(false, || format!("{} not declared", what()));
                    continue;
                };
                ck.check(param.get("required") == Some(&Value::Bool(true)), || {
                    format!("{} not required", what())
                });
                let flat = flatten(doc.root, param.get("schema").unwrap_or(&Value::Null));
                if name == "path" {
                    ck.check(str_of(&flat, "type") == "string", || {
                        format!("{} is not a string", what())
                    });
                } else {
                    ck.check(
                        str_of(&flat, "type") == "string" && str_of(&flat, "format") == "uuid",
                        || format!("{} is not a uuid string", what()),
                    );
                }
            }
        }
    }
    ck.finish();
}
