//! Independent coverage test of the three OpenAPI documents against the specification.
//!
//! The expectations in these files were written by reading, line by line, the
//! specifications of the cloud service and of the unit together with the decisions taken
//! on their open points (see `docs/specification.md`); nothing here is derived from the
//! YAML. Every test collects all missing or wrong items and reports them in one message,
//! so a single run lists everything a document lacks.
//!
//! One file per section of checks, each with the expectations it checks; the documents,
//! the checker and the cloud paths here, the schema and operation helpers in files of
//! their own.

mod descriptions;
mod error_bodies;
mod fields;
mod limits;
mod operation_helpers;
mod operations;
mod rights_security;
mod schema_helpers;
mod settings;
mod value_sets;

use std::sync::OnceLock;

use serde_json::Value;

use schema_helpers::str_of;

#[derive(Clone, Copy)]
struct Doc {
    name: &'static str,
    root: &'static Value,
}

fn parse(path: &str) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    serde_yaml::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{path}: invalid YAML: {e}"))
}

fn cloud() -> Doc {
    static D: OnceLock<Value> = OnceLock::new();
    Doc {
        name: "cloud.yaml",
        root: D.get_or_init(|| {
            parse(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../openapi/cloud.yaml"
            ))
        }),
    }
}

fn notification() -> Doc {
    static D: OnceLock<Value> = OnceLock::new();
    Doc {
        name: "notification.yaml",
        root: D.get_or_init(|| {
            parse(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../openapi/notification.yaml"
            ))
        }),
    }
}

fn unit() -> Doc {
    static D: OnceLock<Value> = OnceLock::new();
    Doc {
        name: "ins-device.yaml",
        root: D.get_or_init(|| {
            parse(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../openapi/ins-device.yaml"
            ))
        }),
    }
}

struct Ck {
    area: &'static str,
    n: usize,
    missing: Vec<String>,
}

impl Ck {
    fn new(area: &'static str) -> Self {
        Ck {
            area,
            n: 0,
            missing: Vec::new(),
        }
    }

    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) -> bool {
        self.n += 1;
        if !ok {
            self.missing.push(what());
        }
        ok
    }

    fn result(&mut self, r: Result<(), String>) -> bool {
        self.n += 1;
        match r {
            Ok(()) => true,
            Err(e) => {
                self.missing.push(e);
                false
            }
        }
    }

    fn finish(self) {
        println!(
            "{}: {} items checked, {} missing or wrong",
            self.area,
            self.n,
            self.missing.len()
        );
        assert!(
            self.missing.is_empty(),
            "{}: {} of {} checked items are missing or wrong:\n  - {}",
            self.area,
            self.missing.len(),
            self.n,
            self.missing.join("\n  - ")
        );
    }
}

const ORG_CONTAINERS: &str = "/api/v2/organizations/{organizationId}/containers";
const CONTAINER: &str = "/api/v2/containers/{containerId}";
const CONTAINER_FILES: &str = "/api/v2/containers/{containerId}/files";
const CONTAINER_FILE: &str = "/api/v2/container-files/{containerFileId}";
const ORG_PROCESSINGS: &str = "/api/v2/organizations/{organizationId}/processings";
const PROCESSING: &str = "/api/v2/processings/{processingId}";
const PROCESSING_ARCHIVE: &str = "/api/v2/processings/{processingId}/archive";
const PROCESSING_OUTPUT: &str = "/api/v2/processings/{processingId}/output";
const PROCESSING_ERRORS: &str = "/api/v2/processings/{processingId}/errors";
const INFO_V1: &str = "/api/v1/info";
const ORG_WEBHOOKS: &str = "/api/v2/organizations/{organizationId}/webhook-endpoints";
const WEBHOOK: &str = "/api/v2/webhook-endpoints/{webhookEndpointId}";
const MISSED: &str = "/api/v2/webhook-endpoints/{webhookEndpointId}/missed-webhooks";

#[test]
fn documents_are_openapi_3_0_3() {
    let mut ck = Ck::new("documents_are_openapi_3_0_3");
    for doc in [cloud(), notification(), unit()] {
        ck.check(str_of(doc.root, "openapi") == "3.0.3", || {
            format!("{}: `openapi` is not 3.0.3", doc.name)
        });
    }
    ck.finish();
}
