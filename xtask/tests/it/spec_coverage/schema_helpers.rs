//! Schema helpers: `$ref`s followed, schemas flattened, dotted paths walked, shapes
//! checked.

use std::collections::BTreeSet;

use super::{Ck, Doc};
use serde_json::{Map, Value};

/// Target of a local `$ref` (`#/...`).
fn lookup<'a>(doc: &'a Value, r: &str) -> Option<&'a Value> {
    r.strip_prefix('#').and_then(|p| doc.pointer(p))
}

/// Follows `$ref`s until a node without one.
pub(super) fn deref<'a>(doc: &'a Value, v: &'a Value) -> &'a Value {
    let mut cur = v;
    for _ in 0..32 {
        match cur
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| lookup(doc, r))
        {
            Some(next) => cur = next,
            None => break,
        }
    }
    cur
}

/// One object holding the effective keywords of a schema: `$ref` resolved, `allOf`
/// (and `oneOf`/`anyOf` members) merged, `properties` merged and `required` united; the
/// outer keywords (e.g. `nullable` beside an `allOf`) win.
pub(super) fn flatten(doc: &Value, v: &Value) -> Value {
    let mut out = Map::new();
    flatten_into(doc, v, &mut out, 0);
    Value::Object(out)
}

fn flatten_into(doc: &Value, v: &Value, out: &mut Map<String, Value>, depth: usize) {
    if depth > 32 {
        return;
    }
    let Some(obj) = v.as_object() else {
        return;
    };
    if let Some(target) = obj
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| lookup(doc, r))
    {
        flatten_into(doc, target, out, depth + 1);
    }
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(parts) = obj.get(key).and_then(Value::as_array) {
            for part in parts {
                flatten_into(doc, part, out, depth + 1);
            }
        }
    }
    for (k, val) in obj {
        match k.as_str() {
            "$ref" | "allOf" | "oneOf" | "anyOf" => {}
            "properties" => {
                let entry = out
                    .entry("properties")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let (Some(dst), Some(src)) = (entry.as_object_mut(), val.as_object()) {
                    for (pk, pv) in src {
                        dst.insert(pk.clone(), pv.clone());
                    }
                }
            }
            "required" => {
                let entry = out
                    .entry("required")
                    .or_insert_with(|| Value::Array(Vec::new()));
                if let (Some(dst), Some(src)) = (entry.as_array_mut(), val.as_array()) {
                    for r in src {
                        if !dst.contains(r) {
                            dst.push(r.clone());
                        }
                    }
                }
            }
            _ => {
                out.insert(k.clone(), val.clone());
            }
        }
    }
}

/// Names of the schemas a node refers to directly (`$ref`) or through
/// `allOf`/`oneOf`/`anyOf` members.
fn ref_names(v: &Value) -> Vec<String> {
    fn push(x: &Value, out: &mut Vec<String>) {
        if let Some(r) = x.get("$ref").and_then(Value::as_str) {
            out.push(r.rsplit('/').next().unwrap_or(r).to_string());
        }
    }
    let mut out = Vec::new();
    push(v, &mut out);
    for key in ["allOf", "oneOf", "anyOf"] {
        if let Some(parts) = v.get(key).and_then(Value::as_array) {
            for part in parts {
                push(part, &mut out);
            }
        }
    }
    out
}

pub(super) fn refers_to(v: &Value, name: &str) -> bool {
    ref_names(v).iter().any(|n| n == name)
}

pub(super) fn schema(doc: Doc, name: &str) -> Option<&'static Value> {
    doc.root.pointer(&format!("/components/schemas/{name}"))
}

pub(super) fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn required_of(flat: &Value) -> BTreeSet<String> {
    flat.get("required")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub(super) fn enum_values(doc: &Value, v: &Value) -> Vec<String> {
    flatten(doc, v)
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Walks a dotted path of property names from a schema (`[]` steps into `items`) and
/// returns the raw (unflattened) node found there.
pub(super) fn walk(doc: &Value, root: &Value, path: &str) -> Result<Value, String> {
    let mut cur = root.clone();
    let mut done: Vec<&str> = Vec::new();
    for seg in path.split('.') {
        let flat = flatten(doc, &cur);
        let next = if seg == "[]" {
            flat.get("items").cloned()
        } else {
            flat.get("properties").and_then(|p| p.get(seg)).cloned()
        };
        match next {
            Some(n) => cur = n,
            None => {
                let at = if done.is_empty() {
                    "<root>".to_string()
                } else {
                    done.join(".")
                };
                return Err(format!("`{seg}` missing under `{at}`"));
            }
        }
        done.push(seg);
    }
    Ok(cur)
}

/// Expected JSON shape of a field.
#[derive(Clone, Copy, Debug)]
pub(super) enum T {
    /// string
    S,
    /// integer
    I,
    /// number
    N,
    /// boolean
    B,
    /// object
    O,
    /// string, format uuid
    Uuid,
    /// string, format date-time
    Dt,
    /// string (URL), format uri
    Url,
    /// `$ref` (possibly inside allOf) to the named schema
    R(&'static str),
    /// array whose items refer to the named schema
    Arr(&'static str),
    /// array of strings
    ArrS,
    /// object whose additionalProperties refer to the named schema
    Map(&'static str),
}

pub(super) fn check_shape(doc: &Value, node: &Value, t: T) -> Result<(), String> {
    let flat = flatten(doc, node);
    let ty = str_of(&flat, "type");
    let fmt = str_of(&flat, "format");
    let ok = match t {
        T::S => ty == "string",
        T::I => ty == "integer",
        T::N => ty == "number",
        T::B => ty == "boolean",
        T::O => ty == "object",
        T::Uuid => ty == "string" && fmt == "uuid",
        T::Dt => ty == "string" && fmt == "date-time",
        T::Url => ty == "string" && (fmt == "uri" || fmt == "url"),
        T::R(name) => refers_to(node, name),
        T::Arr(name) => ty == "array" && flat.get("items").is_some_and(|i| refers_to(i, name)),
        T::ArrS => {
            ty == "array"
                && flat
                    .get("items")
                    .is_some_and(|i| str_of(&flatten(doc, i), "type") == "string")
        }
        T::Map(name) => {
            ty == "object"
                && flat
                    .get("additionalProperties")
                    .is_some_and(|a| refers_to(a, name))
        }
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "expected {t:?}, found type={ty:?} format={fmt:?} refs={:?}",
            ref_names(node)
        ))
    }
}

/// Checks every `(dotted field path, shape)` under `root`.
pub(super) fn check_fields(ck: &mut Ck, doc: Doc, label: &str, root: &Value, fields: &[(&str, T)]) {
    for (path, t) in fields {
        let r = walk(doc.root, root, path)
            .and_then(|node| check_shape(doc.root, &node, *t))
            .map_err(|e| format!("{}: {label}.{path}: {e}", doc.name));
        ck.result(r);
    }
}
