//! Running progenitor: an error or a panic of the generator is reported with the
//! operation that causes it.

use std::panic::{AssertUnwindSafe, catch_unwind};

use anyhow::{Result, bail};
use openapiv3::{OpenAPI, ReferenceOr};
use proc_macro2::TokenStream;
use progenitor::{GenerationSettings, Generator};

/// Runs progenitor; an error or a panic is reported with the operation that causes it.
pub(super) fn run_progenitor(
    settings: &GenerationSettings,
    spec: &OpenAPI,
    doc: &str,
) -> Result<TokenStream> {
    match attempt(settings, spec) {
        Ok(tokens) => Ok(tokens),
        Err(whole) => {
            let culprits = failing_operations(settings, spec);
            if culprits.is_empty() {
                bail!("{doc}: code generation failed: {whole}");
            }
            bail!("{doc}: code generation failed in {}", culprits.join("; "))
        }
    }
}

fn attempt(
    settings: &GenerationSettings,
    spec: &OpenAPI,
) -> std::result::Result<TokenStream, String> {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let result = catch_unwind(AssertUnwindSafe(|| {
        Generator::new(settings).generate_tokens(spec)
    }));
    std::panic::set_hook(previous);
    match result {
        Ok(Ok(tokens)) => Ok(tokens),
        Ok(Err(e)) => Err(e.to_string()),
        Err(panic) => Err(panic_text(&panic)),
    }
}

fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        format!("generator panicked: {s}")
    } else if let Some(s) = panic.downcast_ref::<String>() {
        format!("generator panicked: {s}")
    } else {
        "generator panicked".to_owned()
    }
}

/// Generates each operation alone to find which ones the generator rejects.
fn failing_operations(settings: &GenerationSettings, spec: &OpenAPI) -> Vec<String> {
    let mut found = Vec::new();
    for (path, item) in spec.paths.iter() {
        let ReferenceOr::Item(item) = item else {
            continue;
        };
        for (method, op) in item.iter() {
            let mut alone = spec.clone();
            let mut only = item.clone();
            for (m, slot) in [
                ("get", &mut only.get),
                ("put", &mut only.put),
                ("post", &mut only.post),
                ("delete", &mut only.delete),
                ("options", &mut only.options),
                ("head", &mut only.head),
                ("patch", &mut only.patch),
                ("trace", &mut only.trace),
            ] {
                if m != method {
                    *slot = None;
                }
            }
            alone.paths.paths = [(path.clone(), ReferenceOr::Item(only))]
                .into_iter()
                .collect();
            if let Err(e) = attempt(settings, &alone) {
                let id = op.operation_id.as_deref().unwrap_or("(no operationId)");
                found.push(format!(
                    "operation `{id}` ({} {path}): {e}",
                    method.to_uppercase()
                ));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::spec;

    #[test]
    fn a_generator_panic_names_the_operation() {
        // Two distinct success body types in one operation make progenitor panic.
        let spec = spec(
            r#"
openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /fine:
    get:
      operationId: fineOperation
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: string}}}}
  /broken:
    get:
      operationId: brokenOperation
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: string}}}}
        '201': {description: ok, content: {application/json: {schema: {type: integer}}}}
"#,
        );
        let err = run_progenitor(&GenerationSettings::default(), &spec, "test.yaml").unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("operation `brokenOperation` (GET /broken)"),
            "{text}"
        );
        assert!(!text.contains("fineOperation"), "{text}");
    }
}
