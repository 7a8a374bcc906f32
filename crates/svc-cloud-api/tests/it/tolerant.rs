//! The tolerant reader: every record the service sends decodes whole, trimmed to its
//! required fields, and extended with fields this SDK does not know; only the required
//! fields (ids, `status`, `eventType`) are relied on, and their absence is an error.
//!
//! The instances are built from the documents themselves (their examples where they
//! have one, else a value of each property's type), so a field added to a document is
//! covered without touching this test.

use serde_json::{Map, Value, json};
use svc_cloud_api::{cloud, notification};

/// One document, parsed.
struct Doc {
    schemas: Map<String, Value>,
}

impl Doc {
    fn load(name: &str) -> Doc {
        let path = format!("{}/../../openapi/{name}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).expect("the document is in the repository");
        let yaml: serde_yaml::Value = serde_yaml::from_str(&text).expect("the document is YAML");
        let json: Value = serde_json::to_value(yaml).expect("YAML maps to JSON");
        let schemas = json["components"]["schemas"]
            .as_object()
            .expect("components.schemas")
            .clone();
        Doc { schemas }
    }

    /// The schema a `$ref` (or a one-element `allOf`, the documents' way of making a
    /// reference nullable) points to.
    fn schema<'a>(&'a self, schema: &'a Value) -> &'a Value {
        if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
            let name = r.trim_start_matches("#/components/schemas/");
            return self.schema(&self.schemas[name]);
        }
        match schema.get("allOf").and_then(Value::as_array) {
            Some(all) if all.len() == 1 => self.schema(&all[0]),
            _ => schema,
        }
    }

    fn required(&self, name: &str) -> Vec<String> {
        self.schemas[name]["required"]
            .as_array()
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A whole instance: every property present (the schema's example, when it has one,
    /// gives the values it lists).
    fn full(&self, schema: &Value) -> Value {
        let schema = self.schema(schema);
        if let Some(Value::Object(props)) = schema.get("properties") {
            let example = schema.get("example").and_then(Value::as_object);
            let mut out = Map::new();
            for (key, prop) in props {
                let value = example
                    .and_then(|e| e.get(key))
                    .filter(|v| !v.is_null())
                    .cloned()
                    .unwrap_or_else(|| self.full(prop));
                out.insert(key.clone(), value);
            }
            return Value::Object(out);
        }
        if let Some(example) = schema.get("example") {
            return example.clone();
        }
        if let Some(values) = schema.get("enum").and_then(Value::as_array) {
            return values[0].clone();
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => json!([self.full(&schema["items"])]),
            Some("integer") => json!(1),
            Some("number") => json!(0.5),
            Some("boolean") => json!(true),
            Some("object") => match schema.get("additionalProperties") {
                Some(Value::Object(_)) => {
                    json!({ "key": self.full(&schema["additionalProperties"]) })
                }
                _ => json!({}),
            },
            _ => match schema.get("format").and_then(Value::as_str) {
                Some("uuid") => json!("6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90"),
                Some("date-time") => json!("2024-07-02T09:15:30.123Z"),
                Some("uri") => json!("https://example.com/a"),
                _ => json!("text"),
            },
        }
    }

    /// `value` with a field this SDK does not know added to every record in it (not to
    /// free-form maps such as `metadata`, whose values are strings).
    fn extended(&self, schema: &Value, value: &Value) -> Value {
        let schema = self.schema(schema);
        match (schema.get("properties"), value) {
            (Some(Value::Object(props)), Value::Object(fields)) => {
                let mut out: Map<String, Value> = fields
                    .iter()
                    .map(|(k, v)| (k.clone(), self.extended(&props[k], v)))
                    .collect();
                // A record whose extra fields are typed (an upload form's fields are
                // strings) gets one of that type.
                let added = match schema.get("additionalProperties") {
                    Some(extra @ Value::Object(_)) => self.full(extra),
                    _ => json!({ "nested": [1, "two", null], "flag": true }),
                };
                out.insert("addedLater".to_owned(), added);
                Value::Object(out)
            }
            (_, Value::Array(items)) if schema.get("items").is_some() => Value::Array(
                items
                    .iter()
                    .map(|i| self.extended(&schema["items"], i))
                    .collect(),
            ),
            _ => value.clone(),
        }
    }

    /// `full` with only the required properties, at every level.
    fn trimmed(&self, schema: &Value, value: &Value) -> Value {
        let schema = self.schema(schema);
        match (schema.get("properties"), value) {
            (Some(Value::Object(props)), Value::Object(fields)) => {
                let required: Vec<&str> = schema["required"]
                    .as_array()
                    .map(|r| r.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let mut out = Map::new();
                for (key, v) in fields {
                    if required.contains(&key.as_str()) {
                        out.insert(key.clone(), self.trimmed(&props[key], v));
                    }
                }
                Value::Object(out)
            }
            (_, Value::Array(items)) if schema.get("items").is_some() => Value::Array(
                items
                    .iter()
                    .map(|i| self.trimmed(&schema["items"], i))
                    .collect(),
            ),
            _ => value.clone(),
        }
    }
}

type Decode = fn(Value) -> Result<Value, serde_json::Error>;

/// Decodes as `T`, and gives back what `T` writes.
fn via<T: serde::de::DeserializeOwned + serde::Serialize>(
    v: Value,
) -> Result<Value, serde_json::Error> {
    let typed: T = serde_json::from_value(v)?;
    serde_json::to_value(typed)
}

/// Every record a response or a delivery carries, with the type that reads it.
const RECORDS: &[(&str, &str, Decode)] = &[
    ("cloud.yaml", "Processing", via::<cloud::types::Processing>),
    (
        "cloud.yaml",
        "ProcessingList",
        via::<cloud::types::ProcessingList>,
    ),
    (
        "cloud.yaml",
        "ProcessingError",
        via::<cloud::types::ProcessingError>,
    ),
    ("cloud.yaml", "Container", via::<cloud::types::Container>),
    (
        "cloud.yaml",
        "ContainerFile",
        via::<cloud::types::ContainerFile>,
    ),
    (
        "cloud.yaml",
        "ContainerList",
        via::<cloud::types::ContainerList>,
    ),
    ("cloud.yaml", "OutputFile", via::<cloud::types::OutputFile>),
    ("cloud.yaml", "ServerInfo", via::<cloud::types::ServerInfo>),
    ("cloud.yaml", "UploadInfo", via::<cloud::types::UploadInfo>),
    ("cloud.yaml", "ErrorCount", via::<cloud::types::ErrorCount>),
    ("cloud.yaml", "Error", via::<cloud::types::Error>),
    (
        "notification.yaml",
        "WebhookEndpoint",
        via::<notification::types::WebhookEndpoint>,
    ),
    (
        "notification.yaml",
        "WebhookEvent",
        via::<notification::types::WebhookEvent>,
    ),
    (
        "notification.yaml",
        "MissedWebhook",
        via::<notification::types::MissedWebhook>,
    ),
];

#[test]
fn every_record_reads_whole_trimmed_and_extended() {
    let docs = [
        ("cloud.yaml", Doc::load("cloud.yaml")),
        ("notification.yaml", Doc::load("notification.yaml")),
    ];
    for (doc_name, schema_name, decode) in RECORDS {
        let doc = &docs
            .iter()
            .find(|(n, _)| n == doc_name)
            .expect("a known document")
            .1;
        let schema = json!({ "$ref": format!("#/components/schemas/{schema_name}") });
        let full = doc.full(&schema);
        let trimmed = doc.trimmed(&schema, &full);

        let written = decode(full.clone())
            .unwrap_or_else(|e| panic!("{schema_name} (whole) does not read: {e}\n{full:#}"));
        // What is read whole is written whole: nothing the service sent is dropped.
        assert_eq!(
            written, full,
            "{schema_name}: whole instance read and written"
        );

        decode(trimmed.clone()).unwrap_or_else(|e| {
            panic!("{schema_name} (required fields only) does not read: {e}\n{trimmed:#}")
        });
        for value in [&full, &trimmed] {
            let more = doc.extended(&schema, value);
            decode(more.clone()).unwrap_or_else(|e| {
                panic!("{schema_name} with unknown fields does not read: {e}\n{more:#}")
            });
        }

        // A required field is relied on: without it, the record is not read.
        for key in doc.required(schema_name) {
            let mut missing = trimmed.clone();
            missing
                .as_object_mut()
                .expect("records are objects")
                .remove(&key);
            assert!(
                decode(missing).is_err(),
                "{schema_name} without its required `{key}` must not read"
            );
        }
    }
}

/// The documents promise only what a reader may rely on.
#[test]
fn records_require_only_their_identity() {
    let cloud = Doc::load("cloud.yaml");
    let notification = Doc::load("notification.yaml");
    for (doc, name, required) in [
        (&cloud, "Processing", &["id", "status"][..]),
        (&notification, "Processing", &["id", "status"]),
        (&cloud, "Container", &["id", "status"]),
        (&cloud, "ContainerFile", &["id", "status", "path"]),
        (&cloud, "ProcessingError", &["id"]),
        (&cloud, "ServerInfo", &[]),
        (&notification, "WebhookEndpoint", &["id"]),
        (
            &notification,
            "WebhookEvent",
            &["id", "eventType", "payload"],
        ),
        (&notification, "MissedWebhook", &["id", "eventType"]),
    ] {
        let mut found = doc.required(name);
        found.sort();
        let mut expected: Vec<String> = required.iter().map(|s| (*s).to_owned()).collect();
        expected.sort();
        assert_eq!(found, expected, "required fields of {name}");
    }
}

/// A delivery without `archiveScheduledAt` (and other fields), as a service that
/// answers a little differently from the documents may send it, is still an event.
#[test]
fn an_event_without_optional_processing_fields_reads() {
    let event = json!({
        "id": "2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3",
        "eventType": "cloud:processing-ended",
        "payload": {
            "id": "6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90",
            "status": "processed",
            "processingResult": "succeeded",
            "someFutureField": {"x": 1}
        }
    });
    let read: notification::types::WebhookEvent =
        serde_json::from_value(event).expect("a trimmed event reads");
    assert_eq!(read.payload.archive_scheduled_at, None);
    assert_eq!(read.payload.created_at, None);
    assert_eq!(read.payload.error_count, None);
    assert_eq!(
        read.payload.processing_result,
        Some(svc_cloud_api::enums::ProcessingResult::Succeeded)
    );
    // A nullable field left out is written as null, as the service writes it.
    let written = serde_json::to_value(&read.payload).expect("writes");
    assert_eq!(written["archiveScheduledAt"], Value::Null);
    assert!(written.get("createdAt").is_none());
}
