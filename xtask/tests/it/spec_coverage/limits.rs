//! (4) Limits.

use super::operation_helpers::parameter;
use super::schema_helpers::{flatten, schema, str_of, walk};
use super::{Ck, MISSED, ORG_CONTAINERS, ORG_PROCESSINGS, ORG_WEBHOOKS, cloud, notification};
use serde_json::Value;

#[test]
fn limits_metadata_and_progress() {
    let mut ck = Ck::new("limits_metadata_and_progress");
    for doc in [cloud(), notification()] {
        let Some(m) = schema(doc, "Metadata") else {
            ck.check(false, || format!("{}: schema Metadata missing", doc.name));
            continue;
        };
        let flat = flatten(doc.root, m);
        ck.check(str_of(&flat, "type") == "object", || {
            format!("{}: Metadata is not an object", doc.name)
        });
        ck.check(
            flat.get("maxProperties").and_then(Value::as_u64) == Some(50),
            || format!("{}: Metadata maxProperties must be 50", doc.name),
        );
        ck.check(
            flat.get("x-max-key-length").and_then(Value::as_u64) == Some(40),
            || format!("{}: Metadata x-max-key-length must be 40", doc.name),
        );
        let add = flat
            .get("additionalProperties")
            .map(|a| flatten(doc.root, a));
        ck.check(
            add.as_ref().is_some_and(|a| str_of(a, "type") == "string"),
            || format!("{}: Metadata values must be strings", doc.name),
        );
        ck.check(
            add.as_ref()
                .and_then(|a| a.get("maxLength"))
                .and_then(Value::as_u64)
                == Some(500),
            || format!("{}: Metadata value maxLength must be 500", doc.name),
        );
        if let Some(p) = schema(doc, "Processing") {
            let prog = walk(doc.root, p, "processingProgress").map(|n| flatten(doc.root, &n));
            let min = prog
                .as_ref()
                .ok()
                .and_then(|f| f.get("minimum"))
                .and_then(Value::as_f64);
            let max = prog
                .as_ref()
                .ok()
                .and_then(|f| f.get("maximum"))
                .and_then(Value::as_f64);
            ck.check(min == Some(0.0), || {
                format!(
                    "{}: Processing.processingProgress minimum must be 0",
                    doc.name
                )
            });
            ck.check(max == Some(1.0), || {
                format!(
                    "{}: Processing.processingProgress maximum must be 1",
                    doc.name
                )
            });
        }
    }
    ck.finish();
}

#[test]
fn limits_paging_parameters() {
    let mut ck = Ck::new("limits_paging_parameters");
    let lists = [
        (cloud(), ORG_CONTAINERS),
        (cloud(), ORG_PROCESSINGS),
        (notification(), ORG_WEBHOOKS),
        (notification(), MISSED),
    ];
    for (doc, path) in lists {
        for (name, min, max) in [("page", 0, None), ("perPage", 1, Some(100))] {
            let what = format!("{}: GET {path}: query `{name}`", doc.name);
            let Some(p) = parameter(doc, "get", path, name, "query") else {
                ck.check(false, || format!("{what} missing"));
                continue;
            };
            ck.check(p.get("required") == Some(&Value::Bool(true)), || {
                format!("{what} must be required")
            });
            let flat = flatten(doc.root, p.get("schema").unwrap_or(&Value::Null));
            ck.check(str_of(&flat, "type") == "integer", || {
                format!("{what} must be an integer")
            });
            ck.check(
                flat.get("minimum").and_then(Value::as_i64) == Some(min),
                || format!("{what} minimum must be {min}"),
            );
            ck.check(
                flat.get("exclusiveMinimum") != Some(&Value::Bool(true)),
                || format!("{what} minimum must be inclusive"),
            );
            if let Some(max) = max {
                ck.check(
                    flat.get("maximum").and_then(Value::as_i64) == Some(max),
                    || format!("{what} maximum must be {max}"),
                );
                ck.check(
                    flat.get("exclusiveMaximum") != Some(&Value::Bool(true)),
                    || format!("{what} maximum must be inclusive"),
                );
            }
        }
    }
    ck.finish();
}
