//! (8) Rights, security, webhook callback.

use super::operation_helpers::{all_operations, json_schema_of, operation, response_codes};
use super::schema_helpers::{deref, refers_to, str_of};
use super::value_sets::USERS;
use super::{Ck, Doc, ORG_WEBHOOKS, cloud, notification, unit};
use serde_json::Value;

pub(super) const CATEGORIES: [&str; 9] = [
    "Monitor",
    "Setting",
    "Calibration",
    "Reboot",
    "Logger",
    "FTP",
    "Firmware",
    "License",
    "Factory",
];

const RIGHTS: [(&str, [&str; 9]); 5] = [
    (
        "viewer",
        [
            "VIEW", "VIEW", "VIEW", "NO", "VIEW", "READ", "NO", "NO", "NO",
        ],
    ),
    (
        "operator",
        [
            "VIEW", "VIEW", "VIEW", "YES", "USE", "WRITE", "NO", "NO", "NO",
        ],
    ),
    (
        "powerUser",
        [
            "VIEW", "WRITE", "USE", "YES", "USE", "WRITE", "NO", "NO", "NO",
        ],
    ),
    (
        "setup",
        [
            "VIEW", "WRITE", "USE", "YES", "USE", "WRITE", "YES", "YES", "NO",
        ],
    ),
    (
        "factory",
        [
            "VIEW", "WRITE", "USE", "YES", "USE", "WRITE", "YES", "YES", "YES",
        ],
    ),
];

fn effective_security(doc: Doc, op: &Value) -> Vec<Value> {
    op.get("security")
        .or_else(|| doc.root.get("security"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

#[test]
fn unit_rights_matrix_and_role_order() {
    let mut ck = Ck::new("unit_rights_matrix_and_role_order");
    let doc = unit();
    let order: Vec<&str> = doc
        .root
        .get("x-role-order")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    ck.check(order == USERS, || {
        format!("ins-device.yaml: x-role-order must be {USERS:?}, found {order:?}")
    });
    let rights = doc.root.get("x-access-rights");
    ck.check(rights.is_some_and(Value::is_object), || {
        "ins-device.yaml: x-access-rights missing".to_string()
    });
    let rights = rights.cloned().unwrap_or(Value::Null);
    for (user, levels) in RIGHTS {
        for (cat, level) in CATEGORIES.iter().zip(levels) {
            let have = rights
                .get(user)
                .and_then(|u| u.get(*cat))
                .and_then(Value::as_str);
            ck.check(have == Some(level), || {
                format!(
                    "ins-device.yaml: x-access-rights.{user}.{cat} must be {level}, found {have:?}"
                )
            });
        }
    }
    if let Some(m) = rights.as_object() {
        for (user, cats) in m {
            ck.check(USERS.contains(&user.as_str()), || {
                format!("ins-device.yaml: x-access-rights has unknown user {user}")
            });
            for cat in cats
                .as_object()
                .map(|c| c.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default()
            {
                ck.check(CATEGORIES.contains(&cat.as_str()), || {
                    format!("ins-device.yaml: x-access-rights.{user} has unknown category {cat}")
                });
            }
        }
    }
    ck.finish();
}

fn check_oidc(ck: &mut Ck, doc: Doc, scope: &str) {
    let schemes = doc
        .root
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let oidc: Vec<String> = schemes
        .iter()
        .filter(|(_, s)| str_of(deref(doc.root, s), "type") == "openIdConnect")
        .map(|(k, _)| k.clone())
        .collect();
    ck.check(!oidc.is_empty(), || {
        format!("{}: no openIdConnect security scheme", doc.name)
    });
    for k in &oidc {
        let s = deref(doc.root, &schemes[k]);
        ck.check(
            str_of(s, "openIdConnectUrl").ends_with("/.well-known/openid-configuration"),
            || {
                format!(
                    "{}: scheme {k}: openIdConnectUrl must be the discovery document",
                    doc.name
                )
            },
        );
    }
    for (m, p, op) in all_operations(doc) {
        let sec = effective_security(doc, op);
        let ok = !sec.is_empty()
            && sec.iter().all(|req| {
                req.as_object().is_some_and(|r| {
                    r.iter().any(|(k, scopes)| {
                        oidc.contains(k)
                            && scopes
                                .as_array()
                                .is_some_and(|a| a.iter().any(|s| s.as_str() == Some(scope)))
                    })
                })
            });
        ck.check(ok, || {
            format!(
                "{}: {} {p} must require the OpenID Connect scope `{scope}` (no anonymous access)",
                doc.name,
                m.to_uppercase()
            )
        });
    }
}

#[test]
fn security_schemes_and_scopes() {
    let mut ck = Ck::new("security_schemes_and_scopes");
    check_oidc(&mut ck, cloud(), "cloud:api-key");
    check_oidc(&mut ck, notification(), "notification:user");
    let doc = unit();
    let schemes = doc
        .root
        .pointer("/components/securitySchemes")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let auth: Vec<String> = schemes
        .iter()
        .filter(|(_, s)| {
            let s = deref(doc.root, s);
            str_of(s, "type") == "apiKey"
                && str_of(s, "in") == "query"
                && str_of(s, "name") == "auth"
        })
        .map(|(k, _)| k.clone())
        .collect();
    ck.check(!auth.is_empty(), || {
        "ins-device.yaml: no apiKey security scheme in query named `auth`".to_string()
    });
    for (k, s) in &schemes {
        let s = deref(doc.root, s);
        ck.check(
            str_of(s, "type") == "apiKey" && str_of(s, "in") == "query",
            || format!("ins-device.yaml: security scheme {k} is not a query token (header-based tokens are unsupported)"),
        );
    }
    for (m, p, op) in all_operations(doc) {
        if p == "/api/v1/user/login" {
            continue;
        }
        let sec = effective_security(doc, op);
        let ok = sec.iter().any(|req| {
            req.as_object()
                .is_some_and(|r| r.keys().any(|k| auth.contains(k)))
        });
        ck.check(ok, || {
            format!(
                "ins-device.yaml: {} {p} does not accept the `auth` query token",
                m.to_uppercase()
            )
        });
    }
    ck.finish();
}

#[test]
fn webhook_callback() {
    let mut ck = Ck::new("webhook_callback");
    let doc = notification();
    let op = operation(doc, "post", ORG_WEBHOOKS);
    let deliveries: Vec<Value> = op
        .and_then(|o| o.get("callbacks"))
        .and_then(Value::as_object)
        .map(|cbs| {
            cbs.values()
                .map(|cb| deref(doc.root, cb))
                .filter_map(Value::as_object)
                .flat_map(|exprs| exprs.values())
                .filter_map(|item| item.get("post").cloned())
                .collect()
        })
        .unwrap_or_default();
    ck.check(!deliveries.is_empty(), || {
        "notification.yaml: createWebhookEndpoint has no callback with a POST delivery".to_string()
    });
    let Some(post) = deliveries.first() else {
        ck.finish();
        return;
    };
    let params: Vec<Value> = post
        .get("parameters")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|p| deref(doc.root, p).clone()).collect())
        .unwrap_or_default();
    for h in ["Svc-Timestamp", "Svc-Signature"] {
        let p = params
            .iter()
            .find(|p| str_of(p, "in") == "header" && str_of(p, "name").eq_ignore_ascii_case(h));
        ck.check(p.is_some(), || {
            format!("notification.yaml: webhook delivery lacks header {h}")
        });
        ck.check(
            p.is_some_and(|p| p.get("required") == Some(&Value::Bool(true))),
            || format!("notification.yaml: webhook delivery header {h} must be required"),
        );
    }
    let body = json_schema_of(doc, post.get("requestBody").unwrap_or(&Value::Null));
    ck.check(
        body.as_ref().is_some_and(|b| refers_to(b, "WebhookEvent")),
        || "notification.yaml: webhook delivery body must be a WebhookEvent".to_string(),
    );
    let codes = response_codes(post);
    ck.check(codes.iter().any(|c| c.starts_with('2')), || {
        "notification.yaml: webhook delivery must declare a 2xx answer".to_string()
    });
    ck.finish();
}
