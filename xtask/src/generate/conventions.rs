//! The conventions the generator and the SDK rely on (unique operation ids, no
//! `default` responses, every value set a named schema, shared schemas identical).

use std::collections::BTreeSet;

use super::Document;
use anyhow::{Result, bail};
use openapiv3::ReferenceOr;

/// Conventions the generator and the SDK rely on; each violation is named.
pub fn check_conventions(doc: &Document) -> Result<()> {
    let mut problems = Vec::new();
    let mut ids = BTreeSet::new();
    for (path, item) in doc.spec.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            problems.push(format!("{path}: external path items are not supported"));
            continue;
        };
        for (method, op) in item.iter() {
            let here = format!("{} {path}", method.to_uppercase());
            match &op.operation_id {
                None => problems.push(format!("{here}: no operationId")),
                Some(id) if !ids.insert(id.clone()) => {
                    problems.push(format!("{here}: operationId `{id}` is used twice"))
                }
                Some(_) => {}
            }
            if op.responses.default.is_some() {
                problems.push(format!("{here}: `default` response (use explicit codes)"));
            }
        }
    }
    // Every value set must be a named schema so that it becomes an open enum.
    find_inline_enums(&doc.yaml, "", true, &mut problems);
    if problems.is_empty() {
        Ok(())
    } else {
        bail!(
            "{} breaks the generator conventions:\n  {}",
            doc.path,
            problems.join("\n  ")
        )
    }
}

fn find_inline_enums(v: &serde_json::Value, at: &str, top: bool, problems: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            let is_named = at.starts_with("/components/schemas/") && at.matches('/').count() == 3;
            if map.contains_key("enum") && !is_named && !top {
                problems.push(format!(
                    "{at}: inline `enum` (make it a named schema under components/schemas)"
                ));
            }
            for (k, child) in map {
                // Extensions (x-...) and examples hold data, not schemas.
                if k.starts_with("x-") || k == "example" || k == "examples" {
                    continue;
                }
                let key = k.replace('~', "~0").replace('/', "~1");
                find_inline_enums(child, &format!("{at}/{key}"), false, problems);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, child) in items.iter().enumerate() {
                find_inline_enums(child, &format!("{at}/{i}"), false, problems);
            }
        }
        _ => {}
    }
}

/// Names of component schemas present in both documents; they must be identical.
pub(super) fn shared_schemas(base: &Document, doc: &Document) -> Result<Vec<String>> {
    let schemas = |d: &Document| {
        d.yaml
            .pointer("/components/schemas")
            .cloned()
            .unwrap_or_default()
    };
    let (a, b) = (schemas(base), schemas(doc));
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return Ok(Vec::new());
    };
    let mut shared = Vec::new();
    for (name, schema) in b {
        if let Some(other) = a.get(name) {
            if other != schema {
                bail!(
                    "schema `{name}` is in both {} and {} but differs; shared schemas must be identical",
                    base.path,
                    doc.path
                );
            }
            shared.push(name.clone());
        }
    }
    Ok(shared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::spec;

    #[test]
    fn conventions_are_checked_with_locations() {
        let yaml = r#"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /a:
    get:
      responses:
        default: {description: any}
  /b:
    get:
      operationId: same
      parameters:
        - {name: mode, in: query, schema: {type: string, enum: [x, y]}}
      responses:
        '200': {description: ok}
  /c:
    get:
      operationId: same
      responses:
        '200': {description: ok}
"#;
        let doc = Document {
            path: "test.yaml".into(),
            text: yaml.into(),
            yaml: serde_yaml::from_str(yaml).unwrap(),
            spec: spec(yaml),
        };
        let text = check_conventions(&doc).unwrap_err().to_string();
        for expected in [
            "GET /a: no operationId",
            "GET /a: `default` response",
            "GET /c: operationId `same` is used twice",
            "/paths/~1b/get/parameters/0/schema: inline `enum`",
        ] {
            assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
        }
    }
}
