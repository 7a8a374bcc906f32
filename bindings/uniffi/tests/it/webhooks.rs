//! The webhook test vectors shared with the other bindings.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use svc_ffi::*;

#[test]
fn shared_webhook_vectors() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/webhook_vectors.json"),
    )
    .expect("vectors");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let vectors = doc["vectors"].as_array().expect("vectors");
    assert!(vectors.len() >= 10);
    for v in vectors {
        let name = v["name"].as_str().unwrap_or_default();
        let secrets: Vec<String> = v["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .map(|s| s.as_str().unwrap_or_default().to_owned())
            .collect();
        let tolerance = v["tolerance_seconds"].as_u64().map(Duration::from_secs);
        let webhook = Webhook::new(secrets, tolerance).expect("webhook");
        let mut headers = HashMap::new();
        if let Some(t) = v["timestamp"].as_str() {
            headers.insert("Svc-Timestamp".to_owned(), t.to_owned());
        }
        if let Some(s) = v["signature"].as_str() {
            headers.insert("svc-signature".to_owned(), s.to_owned());
        }
        let body = v["body"].as_str().unwrap_or_default().as_bytes().to_vec();
        let now = v["now"].as_u64().expect("now");
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(now);
        let outcome = |r: Result<WebhookEvent, SvcError>| match r {
            Ok(_) => "valid".to_owned(),
            Err(e) => e.code().unwrap_or_else(|| "none".to_owned()),
        };
        assert_eq!(
            outcome(webhook.verify_at(headers.clone(), body.clone(), now)),
            v["expected"].as_str().unwrap_or_default(),
            "{name}"
        );
        assert_eq!(
            outcome(webhook.verify_ignoring_timestamp(headers, body)),
            v["ignoring_timestamp"].as_str().unwrap_or_default(),
            "{name}"
        );
    }
}
