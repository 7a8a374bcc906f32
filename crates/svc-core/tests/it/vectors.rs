//! Runs every shared test vector of `tests/data/webhook_vectors.json` (workspace root),
//! the file the Python and Kotlin tests read too.

use std::collections::BTreeSet;
use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use serde::Deserialize;
use svc_core::WebhookSecret;
use svc_core::webhook::{
    SIGNATURE_HEADER, TIMESTAMP_HEADER, Webhook, WebhookError, WebhookEvent, sign,
};
use svc_test_support::PROCESSING_FIELDS;

const PATH: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/data/webhook_vectors.json"
);

const OUTCOMES: [&str; 8] = [
    "valid",
    "missing_header",
    "invalid_timestamp",
    "too_old",
    "too_new",
    "bad_signature",
    "invalid_payload",
    "untyped_event",
];

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct VectorFile {
    description: String,
    vectors: Vec<Vector>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Vector {
    name: String,
    secrets: Vec<String>,
    timestamp: Option<String>,
    signature: Option<String>,
    body: String,
    now: i64,
    tolerance_seconds: u64,
    expected: String,
    ignoring_timestamp: String,
}

impl Vector {
    fn webhook(&self) -> Webhook {
        let secrets = self
            .secrets
            .iter()
            .map(|s| WebhookSecret::new(s.as_str()))
            .collect();
        Webhook::with_secrets(secrets)
            .unwrap()
            .with_tolerance(Duration::from_secs(self.tolerance_seconds))
    }

    fn headers(&self) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(timestamp) = &self.timestamp {
            headers.insert(
                TIMESTAMP_HEADER,
                HeaderValue::from_bytes(timestamp.as_bytes()).unwrap(),
            );
        }
        if let Some(signature) = &self.signature {
            headers.insert(
                SIGNATURE_HEADER,
                HeaderValue::from_bytes(signature.as_bytes()).unwrap(),
            );
        }
        headers
    }
}

fn load() -> VectorFile {
    let text = std::fs::read_to_string(PATH).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn outcome(result: &Result<WebhookEvent, WebhookError>) -> &'static str {
    match result {
        Ok(_) => "valid",
        Err(error) => error.code(),
    }
}

/// Runs `check` on every vector and reports every mismatch at once.
fn run(check: impl Fn(&Vector) -> (&'static str, &str)) {
    let file = load();
    let failures: Vec<String> = file
        .vectors
        .iter()
        .filter_map(|vector| {
            let (got, want) = check(vector);
            (got != want).then(|| format!("{}: got {got}, want {want}", vector.name))
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn every_vector_through_verify_parts() {
    run(|v| {
        let result = v.webhook().verify_parts(
            v.timestamp.as_deref(),
            v.signature.as_deref(),
            v.body.as_bytes(),
            v.now,
        );
        (outcome(&result), &v.expected)
    });
}

#[test]
fn every_vector_through_verify_at_with_a_header_map() {
    run(|v| {
        let result = v
            .webhook()
            .verify_at(&v.headers(), v.body.as_bytes(), v.now);
        (outcome(&result), &v.expected)
    });
}

#[test]
fn every_vector_through_verify_parts_ignoring_timestamp() {
    run(|v| {
        let result = v.webhook().verify_parts_ignoring_timestamp(
            v.timestamp.as_deref(),
            v.signature.as_deref(),
            v.body.as_bytes(),
        );
        (outcome(&result), &v.ignoring_timestamp)
    });
}

#[test]
fn every_vector_through_verify_ignoring_timestamp_with_a_header_map() {
    run(|v| {
        let result = v
            .webhook()
            .verify_ignoring_timestamp(&v.headers(), v.body.as_bytes());
        (outcome(&result), &v.ignoring_timestamp)
    });
}

#[test]
fn header_names_match_case_insensitively() {
    run(|v| {
        let mut headers = HeaderMap::new();
        if let Some(timestamp) = &v.timestamp {
            headers.insert(
                "svc-timestamp",
                HeaderValue::from_bytes(timestamp.as_bytes()).unwrap(),
            );
        }
        if let Some(signature) = &v.signature {
            headers.insert(
                "SVC-SIGNATURE",
                HeaderValue::from_bytes(signature.as_bytes()).unwrap(),
            );
        }
        (
            outcome(&v.webhook().verify_at(&headers, v.body.as_bytes(), v.now)),
            &v.expected,
        )
    });
}

#[test]
fn valid_signatures_are_what_sign_produces() {
    let file = load();
    let mut checked = 0;
    for v in file
        .vectors
        .iter()
        .filter(|v| v.ignoring_timestamp == "valid")
    {
        let timestamp = v.timestamp.as_deref().unwrap();
        let signature = v.signature.as_deref().unwrap();
        let Ok(seconds) = timestamp.parse::<i64>() else {
            continue;
        };
        if seconds.to_string() != timestamp {
            continue; // leading zeros: signed over the literal header value
        }
        let signed_by_one = v.secrets.iter().any(|s| {
            sign(&WebhookSecret::new(s.as_str()), seconds, v.body.as_bytes()) == signature
        });
        assert!(signed_by_one, "{}", v.name);
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} vectors checked");
}

#[test]
fn the_file_is_well_formed_and_covers_the_required_cases() {
    let file = load();
    assert!(file.description.contains("Svc-Timestamp"));
    let names: BTreeSet<&str> = file.vectors.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names.len(), file.vectors.len(), "names must be unique");
    for v in &file.vectors {
        assert!(
            OUTCOMES.contains(&v.expected.as_str()),
            "{}: {}",
            v.name,
            v.expected
        );
        assert!(
            OUTCOMES.contains(&v.ignoring_timestamp.as_str()),
            "{}",
            v.name
        );
        assert!(!v.secrets.is_empty(), "{}", v.name);
        for secret in &v.secrets {
            let hex = secret.strip_prefix("whsec_").unwrap();
            assert!(
                hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()),
                "{}",
                v.name
            );
        }
        assert!(
            v.name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{}",
            v.name
        );
    }
    for required in [
        "valid_progress_event",
        "rotation_signed_with_second_of_two_secrets",
        "wrong_secret",
        "body_changed_by_one_byte",
        "body_whitespace_reformatted",
        "signature_truncated_to_32_chars",
        "signature_empty",
        "signature_uppercase",
        "signature_63_chars",
        "signature_65_chars",
        "signature_with_sha256_prefix",
        "signature_with_v1_prefix",
        "timestamp_exactly_tolerance_ahead",
        "timestamp_exactly_tolerance_old",
        "timestamp_301_seconds_old",
        "timestamp_301_seconds_ahead",
        "timestamp_not_numeric",
        "timestamp_negative",
        "timestamp_fractional",
        "timestamp_empty",
        "missing_timestamp",
        "missing_signature",
        "payload_other_json_object",
        "valid_trimmed_and_extended_payload",
        "unicode_body",
        "unknown_event_type",
        "unknown_processing_status_step_region_and_type",
    ] {
        assert!(names.contains(required), "missing vector {required}");
    }
    let seen: BTreeSet<&str> = file.vectors.iter().map(|v| v.expected.as_str()).collect();
    assert_eq!(
        seen,
        OUTCOMES.into_iter().collect(),
        "every outcome is covered"
    );
}

#[test]
fn valid_bodies_are_complete_webhook_events() {
    let file = load();
    // All but the one that leaves fields out on purpose (the tolerant reader).
    for v in file
        .vectors
        .iter()
        .filter(|v| v.expected == "valid" && v.name != "valid_trimmed_and_extended_payload")
    {
        let body: serde_json::Value = serde_json::from_str(&v.body).unwrap();
        for field in [
            "id",
            "eventType",
            "createdAt",
            "endpointMetadata",
            "payload",
        ] {
            assert!(body.get(field).is_some(), "{}: {field}", v.name);
        }
        for field in PROCESSING_FIELDS {
            assert!(
                body["payload"].get(field).is_some(),
                "{}: payload.{field}",
                v.name
            );
        }
    }
}

#[test]
fn unicode_and_forward_compatible_values_decode() {
    use svc_core::webhook::{EventType, ProcessingStatus};
    let file = load();
    let find = |name: &str| file.vectors.iter().find(|v| v.name == name).unwrap();
    let decode = |v: &Vector| {
        v.webhook()
            .verify_parts(
                v.timestamp.as_deref(),
                v.signature.as_deref(),
                v.body.as_bytes(),
                v.now,
            )
            .unwrap()
    };

    let event = decode(find("unicode_body"));
    assert!(event.payload.name.unwrap().contains("Zürich"));

    let event = decode(find("unknown_event_type"));
    assert_eq!(
        event.event_type,
        EventType::Unknown("cloud:processing-archived".into())
    );

    let event = decode(find("unknown_processing_status_step_region_and_type"));
    assert_eq!(
        event.payload.status,
        ProcessingStatus::Unknown("paused".into())
    );
    assert_eq!(event.payload.status.as_str(), "paused");

    let event = decode(find("valid_canceled_without_metadata_and_null_container"));
    assert_eq!(event.payload.container_id, None);
    assert_eq!(event.payload.metadata, None);
    assert_eq!(event.payload.status, ProcessingStatus::Canceled);
}
