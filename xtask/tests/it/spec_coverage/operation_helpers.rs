//! Operation helpers: operations, parameters, request and response schemas, and the
//! texts of a document.

use std::collections::BTreeSet;

use super::schema_helpers::{deref, str_of};
use super::{Ck, Doc};
use serde_json::Value;

const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

pub(super) fn operation(doc: Doc, method: &str, path: &str) -> Option<&'static Value> {
    doc.root.get("paths")?.get(path)?.get(method)
}

pub(super) fn all_operations(doc: Doc) -> Vec<(String, String, &'static Value)> {
    let mut out = Vec::new();
    if let Some(paths) = doc.root.get("paths").and_then(Value::as_object) {
        for (p, item) in paths {
            for m in METHODS {
                if let Some(op) = item.get(m) {
                    out.push((m.to_string(), p.clone(), op));
                }
            }
        }
    }
    out
}

/// Parameters of an operation (path-level ones overridden by operation-level ones).
fn parameters(doc: Doc, method: &str, path: &str) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let item = doc.root.get("paths").and_then(|p| p.get(path));
    let lists = [
        item.and_then(|i| i.get("parameters")),
        item.and_then(|i| i.get(method))
            .and_then(|o| o.get("parameters")),
    ];
    for list in lists.into_iter().flatten() {
        for p in list.as_array().into_iter().flatten() {
            let p = deref(doc.root, p).clone();
            out.retain(|q| !(q.get("name") == p.get("name") && q.get("in") == p.get("in")));
            out.push(p);
        }
    }
    out
}

pub(super) fn parameter(
    doc: Doc,
    method: &str,
    path: &str,
    name: &str,
    loc: &str,
) -> Option<Value> {
    parameters(doc, method, path)
        .into_iter()
        .find(|p| str_of(p, "name") == name && str_of(p, "in") == loc)
}

pub(super) fn json_schema_of(doc: Doc, holder: &Value) -> Option<Value> {
    let holder = deref(doc.root, holder);
    let content = holder.get("content")?.as_object()?;
    content
        .get("application/json")
        .or_else(|| content.values().next())
        .and_then(|c| c.get("schema"))
        .cloned()
}

pub(super) fn request_schema(doc: Doc, op: &Value) -> Option<Value> {
    json_schema_of(doc, op.get("requestBody")?)
}

pub(super) fn response_schema(doc: Doc, op: &Value, code: &str) -> Option<Value> {
    json_schema_of(doc, op.get("responses")?.get(code)?)
}

pub(super) fn response_codes(op: &Value) -> BTreeSet<String> {
    op.get("responses")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default()
}

/// All description/summary/title strings of a document, lowercased.
pub(super) fn texts(doc: Doc) -> Vec<String> {
    fn collect(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if matches!(k.as_str(), "description" | "summary" | "title")
                        && let Some(s) = x.as_str()
                    {
                        out.push(s.to_lowercase());
                    }
                    collect(x, out);
                }
            }
            Value::Array(a) => {
                for x in a {
                    collect(x, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    collect(doc.root, &mut out);
    out
}

/// Checks that one description holds all `parts` (one of the alternatives of each).
pub(super) fn check_text(ck: &mut Ck, doc: Doc, all: &[String], parts: &[&[&str]], rule: &str) {
    let found = all.iter().any(|t| {
        parts
            .iter()
            .all(|alts| alts.iter().any(|a| t.contains(&a.to_lowercase())))
    });
    ck.check(found, || {
        format!(
            "{}: no description states the rule \"{rule}\" (looked for {parts:?})",
            doc.name
        )
    });
}
