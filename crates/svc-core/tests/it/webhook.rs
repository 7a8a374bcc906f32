//! `svc_core::webhook`: signing, verifying, errors and secrecy.

use std::time::Duration;

use http::{HeaderMap, HeaderValue};
use svc_core::WebhookSecret;
use svc_core::webhook::{
    DEFAULT_TOLERANCE, EventType, SIGNATURE_HEADER, TIMESTAMP_HEADER, Webhook, WebhookError, sign,
    unix_now,
};

use crate::{OTHER_SECRET, PROGRESS_BODY, SECRET};

const SENT_AT: i64 = 1_719_911_822;

fn secret() -> WebhookSecret {
    WebhookSecret::new(SECRET)
}

fn headers(timestamp: &str, signature: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(TIMESTAMP_HEADER, HeaderValue::from_str(timestamp).unwrap());
    headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(signature).unwrap());
    headers
}

fn signed(timestamp: i64, body: &str) -> HeaderMap {
    headers(
        &timestamp.to_string(),
        &sign(&secret(), timestamp, body.as_bytes()),
    )
}

#[test]
fn sign_is_hmac_sha256_over_timestamp_dot_body_in_lowercase_hex() {
    // Reference values computed with Python's hmac/hashlib.
    assert_eq!(
        sign(
            &WebhookSecret::new("Jefe"),
            0,
            b"what do ya want for nothing?"
        ),
        "37f471929915ccd2cbbe79feb84ffcff4f2bb25e15fc41c2506687331ae179cc"
    );
    assert_eq!(
        sign(
            &WebhookSecret::new("clé secrète ✓"),
            SENT_AT,
            r#"{"a":"é"}"#.as_bytes()
        ),
        "b9aabec219e25e1b183aa8308f21f3ecf19508c6b6088080bec9963c78c1aacc"
    );
}

#[test]
fn a_fresh_delivery_verifies_against_the_system_clock() {
    let now = unix_now();
    let event = Webhook::new(secret())
        .verify(&signed(now, PROGRESS_BODY), PROGRESS_BODY.as_bytes())
        .unwrap();
    assert_eq!(event.event_type, EventType::CloudProcessingProgress);
    assert_eq!(event.payload.processing_progress, Some(0.42));
    assert_eq!(event.endpoint_metadata.unwrap()["team"], "field-ops");
}

#[test]
fn verify_parts_and_verify_at_agree() {
    let webhook = Webhook::new(secret());
    let signature = sign(&secret(), SENT_AT, PROGRESS_BODY.as_bytes());
    let from_parts = webhook
        .verify_parts(
            Some("1719911822"),
            Some(&signature),
            PROGRESS_BODY.as_bytes(),
            SENT_AT + 1,
        )
        .unwrap();
    let from_headers = webhook
        .verify_at(
            &signed(SENT_AT, PROGRESS_BODY),
            PROGRESS_BODY.as_bytes(),
            SENT_AT + 1,
        )
        .unwrap();
    assert_eq!(from_parts, from_headers);
}

#[test]
fn rotation_accepts_either_secret_and_nothing_else() {
    let webhook = Webhook::with_secrets(vec![WebhookSecret::new(OTHER_SECRET), secret()]).unwrap();
    for key in [OTHER_SECRET, SECRET] {
        let signature = sign(&WebhookSecret::new(key), SENT_AT, PROGRESS_BODY.as_bytes());
        let headers = headers(&SENT_AT.to_string(), &signature);
        assert!(
            webhook
                .verify_at(&headers, PROGRESS_BODY.as_bytes(), SENT_AT)
                .is_ok()
        );
    }
    let stranger = sign(
        &WebhookSecret::new("whsec_stranger"),
        SENT_AT,
        PROGRESS_BODY.as_bytes(),
    );
    assert_eq!(
        webhook.verify_at(
            &headers(&SENT_AT.to_string(), &stranger),
            PROGRESS_BODY.as_bytes(),
            SENT_AT
        ),
        Err(WebhookError::BadSignature)
    );
}

#[test]
fn no_secret_is_a_configuration_error() {
    assert_eq!(
        Webhook::with_secrets(Vec::new()).unwrap_err(),
        WebhookError::NoSecret
    );
    assert_eq!(
        Webhook::with_secrets(vec![WebhookSecret::new(""), WebhookSecret::new("")]).unwrap_err(),
        WebhookError::NoSecret
    );
    // An empty secret would let anyone sign: it verifies nothing, even its own signature.
    let empty = WebhookSecret::new("");
    let signature = sign(&empty, SENT_AT, PROGRESS_BODY.as_bytes());
    let result = Webhook::new(empty).verify_at(
        &headers(&SENT_AT.to_string(), &signature),
        PROGRESS_BODY.as_bytes(),
        SENT_AT,
    );
    assert_eq!(result, Err(WebhookError::NoSecret));
    // Empty secrets among real ones are dropped.
    let webhook = Webhook::with_secrets(vec![WebhookSecret::new(""), secret()]).unwrap();
    assert!(
        webhook
            .verify_at(
                &signed(SENT_AT, PROGRESS_BODY),
                PROGRESS_BODY.as_bytes(),
                SENT_AT
            )
            .is_ok()
    );
}

#[test]
fn tolerance_defaults_to_five_minutes_and_can_be_changed() {
    assert_eq!(DEFAULT_TOLERANCE, Duration::from_secs(300));
    let webhook = Webhook::new(secret());
    assert_eq!(webhook.tolerance(), DEFAULT_TOLERANCE);
    let headers = signed(SENT_AT, PROGRESS_BODY);
    let body = PROGRESS_BODY.as_bytes();
    assert!(webhook.verify_at(&headers, body, SENT_AT + 300).is_ok());
    assert!(webhook.verify_at(&headers, body, SENT_AT - 300).is_ok());

    let strict = webhook
        .clone()
        .with_tolerance(Duration::from_millis(10_900));
    assert!(strict.verify_at(&headers, body, SENT_AT + 10).is_ok());
    assert_eq!(
        strict.verify_at(&headers, body, SENT_AT + 11),
        Err(WebhookError::TimestampTooOld {
            age_seconds: 11,
            tolerance_seconds: 10
        })
    );
    assert_eq!(
        strict.verify_at(&headers, body, SENT_AT - 11),
        Err(WebhookError::TimestampTooNew {
            ahead_seconds: 11,
            tolerance_seconds: 10
        })
    );

    let lenient = webhook.with_tolerance(Duration::from_secs(3600));
    assert!(lenient.verify_at(&headers, body, SENT_AT + 3600).is_ok());
}

#[test]
fn ignoring_the_timestamp_still_needs_a_well_formed_signed_one() {
    let webhook = Webhook::new(secret());
    let body = PROGRESS_BODY.as_bytes();
    let old = signed(1_000_000_000, PROGRESS_BODY);
    assert!(webhook.verify_ignoring_timestamp(&old, body).is_ok());
    assert!(
        webhook
            .verify_parts_ignoring_timestamp(
                Some("1000000000"),
                old[SIGNATURE_HEADER].to_str().ok(),
                body
            )
            .is_ok()
    );

    let mut other_timestamp = old.clone();
    other_timestamp.insert(TIMESTAMP_HEADER, HeaderValue::from_static("1000000001"));
    assert_eq!(
        webhook.verify_ignoring_timestamp(&other_timestamp, body),
        Err(WebhookError::BadSignature)
    );

    let mut missing = old.clone();
    missing.remove(TIMESTAMP_HEADER);
    assert_eq!(
        webhook.verify_ignoring_timestamp(&missing, body),
        Err(WebhookError::MissingHeader(TIMESTAMP_HEADER))
    );
}

#[test]
fn missing_headers_are_named() {
    let webhook = Webhook::new(secret());
    let body = PROGRESS_BODY.as_bytes();
    let signature = sign(&secret(), SENT_AT, body);
    assert_eq!(
        webhook.verify_parts(None, Some(&signature), body, SENT_AT),
        Err(WebhookError::MissingHeader("Svc-Timestamp"))
    );
    assert_eq!(
        webhook.verify_parts(Some("1719911822"), None, body, SENT_AT),
        Err(WebhookError::MissingHeader("Svc-Signature"))
    );
    assert_eq!(
        webhook.verify_at(&HeaderMap::new(), body, SENT_AT),
        Err(WebhookError::MissingHeader("Svc-Timestamp"))
    );
    assert_eq!(
        WebhookError::MissingHeader(SIGNATURE_HEADER).to_string(),
        "the Svc-Signature header is missing"
    );
}

#[test]
fn a_duplicated_header_is_refused() {
    let webhook = Webhook::new(secret());
    let body = PROGRESS_BODY.as_bytes();
    let good = signed(SENT_AT, PROGRESS_BODY);

    let mut two_timestamps = good.clone();
    two_timestamps.append(TIMESTAMP_HEADER, HeaderValue::from_static("1719911822"));
    assert_eq!(
        webhook.verify_at(&two_timestamps, body, SENT_AT),
        Err(WebhookError::InvalidTimestamp)
    );

    // Even two copies of the right signature: the service sends one.
    let mut two_signatures = good.clone();
    two_signatures.append(SIGNATURE_HEADER, good[SIGNATURE_HEADER].clone());
    assert_eq!(
        webhook.verify_at(&two_signatures, body, SENT_AT),
        Err(WebhookError::BadSignature)
    );
}

#[test]
fn non_ascii_header_values_are_refused() {
    let webhook = Webhook::new(secret());
    let body = PROGRESS_BODY.as_bytes();
    let mut headers = signed(SENT_AT, PROGRESS_BODY);
    headers.insert(
        TIMESTAMP_HEADER,
        HeaderValue::from_bytes("١٧١٩٩١١٨٢٢".as_bytes()).unwrap(),
    );
    assert_eq!(
        webhook.verify_at(&headers, body, SENT_AT),
        Err(WebhookError::InvalidTimestamp)
    );

    let mut headers = signed(SENT_AT, PROGRESS_BODY);
    headers.insert(
        SIGNATURE_HEADER,
        HeaderValue::from_bytes(b"\xe9\xe9").unwrap(),
    );
    assert_eq!(
        webhook.verify_at(&headers, body, SENT_AT),
        Err(WebhookError::BadSignature)
    );
}

#[test]
fn the_body_is_decoded_only_after_the_signature_holds() {
    let webhook = Webhook::new(secret());
    let not_an_event = b"this is not JSON";
    // Unsigned garbage is a bad signature, never a decoding error.
    let signature = sign(&WebhookSecret::new(OTHER_SECRET), SENT_AT, not_an_event);
    assert_eq!(
        webhook.verify_parts(Some("1719911822"), Some(&signature), not_an_event, SENT_AT),
        Err(WebhookError::BadSignature)
    );
    let signature = sign(&secret(), SENT_AT, not_an_event);
    let error = webhook
        .verify_parts(Some("1719911822"), Some(&signature), not_an_event, SENT_AT)
        .unwrap_err();
    assert_eq!(error.code(), "invalid_payload");
    assert!(
        error
            .to_string()
            .starts_with("the signed body is not a webhook event: "),
        "{error}"
    );
    assert!(error.to_string().ends_with("at line 1 column 2"), "{error}");
}

#[test]
fn an_invalid_payload_message_quotes_no_text_of_the_body() {
    let body = PROGRESS_BODY.replace(
        r#""errorCount":{"errors":0,"warnings":2}"#,
        r#""errorCount":"the pipeline on rover-7 is confidential""#,
    );
    let signature = sign(&secret(), SENT_AT, body.as_bytes());
    let error = Webhook::new(secret())
        .verify_parts(
            Some("1719911822"),
            Some(&signature),
            body.as_bytes(),
            SENT_AT,
        )
        .unwrap_err();
    let message = error.to_string();
    assert!(!message.contains("confidential"), "{message}");
    assert!(message.contains("invalid type: string \"…\""), "{message}");
    assert!(
        message.contains("payload.errorCount"),
        "the field's path: {message}"
    );
    // Authentic JSON that does not type is handed over, not refused as forged; its
    // `Debug` (what a log shows) gives its size, not its content.
    assert_eq!(error.code(), "untyped_event");
    let debug = format!("{error:?}");
    assert!(!debug.contains("confidential"), "{debug}");
    assert!(debug.contains("bytes of JSON, not shown"), "{debug}");
    let WebhookError::UntypedEvent { raw, .. } = error else {
        panic!("expected an untyped event, got {error:?}");
    };
    assert_eq!(
        *raw,
        serde_json::from_str::<serde_json::Value>(&body).unwrap()
    );
}

/// A delivery that differs a little from the documents (fields left out, fields this
/// SDK does not know) is an event: a missing `archiveScheduledAt` made a listener
/// answer 400, and the service retry it ten times and record it as missed.
#[test]
fn a_trimmed_or_extended_event_verifies() {
    let mut body: serde_json::Value = serde_json::from_str(PROGRESS_BODY).unwrap();
    let payload = body["payload"].as_object_mut().unwrap();
    for gone in [
        "archiveScheduledAt",
        "createdAt",
        "updatedAt",
        "errorCount",
        "region",
        "type",
        "missionLocationPlace",
    ] {
        payload.remove(gone);
    }
    payload.insert("qualityScore".into(), serde_json::json!({"h": 0.02}));
    body.as_object_mut()
        .unwrap()
        .insert("deliveryAttempt".into(), serde_json::json!(3));
    let body = body.to_string();
    let event = Webhook::new(secret())
        .verify_parts(
            Some("1719911822"),
            Some(&sign(&secret(), SENT_AT, body.as_bytes())),
            body.as_bytes(),
            SENT_AT,
        )
        .unwrap();
    assert_eq!(event.event_type, EventType::CloudProcessingProgress);
    assert_eq!(event.payload.archive_scheduled_at, None);
    assert_eq!(event.payload.error_count, None);
    assert_eq!(event.payload.processing_progress, Some(0.42));
}

/// Without what identifies it (here the processing's `id`), a signed event cannot be
/// typed: reported as such, with its JSON, never as a bad signature.
#[test]
fn a_signed_event_without_its_identity_is_untyped_not_forged() {
    let mut body: serde_json::Value = serde_json::from_str(PROGRESS_BODY).unwrap();
    body["payload"].as_object_mut().unwrap().remove("id");
    let body = body.to_string();
    let error = Webhook::new(secret())
        .verify_parts(
            Some("1719911822"),
            Some(&sign(&secret(), SENT_AT, body.as_bytes())),
            body.as_bytes(),
            SENT_AT,
        )
        .unwrap_err();
    assert_eq!(error.code(), "untyped_event");
    assert_eq!(error.kind(), svc_core::ErrorKind::InvalidResponse);
    // The field is named by its path from the event's root.
    assert!(error.to_string().contains("payload.id: missing"), "{error}");
    let WebhookError::UntypedEvent { raw, .. } = error else {
        panic!("expected an untyped event");
    };
    assert_eq!(raw["payload"]["status"], "processing");
    let mut body: serde_json::Value = serde_json::from_str(PROGRESS_BODY).unwrap();
    body["payload"]["processingProgress"] = serde_json::json!("half, secretly");
    let body = body.to_string();
    let error = Webhook::new(secret())
        .verify_parts(
            Some("1719911822"),
            Some(&sign(&secret(), SENT_AT, body.as_bytes())),
            body.as_bytes(),
            SENT_AT,
        )
        .unwrap_err();
    let shown = error.to_string();
    assert!(
        shown.contains("payload.processingProgress: invalid type"),
        "{shown}"
    );
    assert!(!shown.contains("secretly"), "{shown}");
}

#[test]
fn signatures_must_be_exactly_64_lowercase_hex_characters() {
    let webhook = Webhook::new(secret());
    let body = PROGRESS_BODY.as_bytes();
    let good = sign(&secret(), SENT_AT, body);
    assert!(
        webhook
            .verify_parts(Some("1719911822"), Some(&good), body, SENT_AT)
            .is_ok()
    );
    for bad in [
        String::new(),
        good[..63].to_owned(),
        format!("{good}0"),
        format!("{good}\n"),
        good.to_uppercase(),
        format!("sha256={good}"),
        format!("v1,{good}"),
        format!(" {good}"),
    ] {
        assert_eq!(
            webhook.verify_parts(Some("1719911822"), Some(&bad), body, SENT_AT),
            Err(WebhookError::BadSignature),
            "{bad:?}"
        );
    }
}

#[test]
fn debug_and_messages_never_show_a_secret() {
    let webhook = Webhook::with_secrets(vec![secret(), WebhookSecret::new(OTHER_SECRET)])
        .unwrap()
        .with_tolerance(Duration::from_secs(60));
    let debug = format!("{webhook:?}");
    assert_eq!(debug, "Webhook { secrets: 2 [redacted], tolerance: 60s }");
    assert!(!format!("{:?}", secret()).contains("4b1d0c7a"));

    let body = PROGRESS_BODY.as_bytes();
    let good = sign(&secret(), SENT_AT, body);
    let errors = [
        webhook.verify_parts(None, Some(&good), body, SENT_AT),
        webhook.verify_parts(Some("x"), Some(&good), body, SENT_AT),
        webhook.verify_parts(Some("1719911822"), Some(SECRET), body, SENT_AT),
        webhook.verify_parts(Some("1719911822"), Some(&good), body, SENT_AT + 61),
        webhook.verify_parts(Some("1719911822"), Some(&good), body, SENT_AT - 61),
        webhook.verify_parts(Some("1719911822"), Some(&good), b"[", SENT_AT),
    ];
    for result in errors {
        let error = result.unwrap_err();
        for text in [error.to_string(), format!("{error:?}")] {
            assert!(
                !text.contains("4b1d0c7a") && !text.contains("0f9e8d7c"),
                "{text}"
            );
            assert!(!text.contains(&good), "{text}");
        }
    }
}

#[test]
fn error_codes_and_messages() {
    let cases = [
        (
            WebhookError::MissingHeader(TIMESTAMP_HEADER),
            "missing_header",
            "the Svc-Timestamp header is missing",
        ),
        (
            WebhookError::InvalidTimestamp,
            "invalid_timestamp",
            "the Svc-Timestamp header is not a whole number of seconds since the Unix epoch",
        ),
        (
            WebhookError::TimestampTooOld {
                age_seconds: 301,
                tolerance_seconds: 300,
            },
            "too_old",
            "the delivery was signed 301 s ago, beyond the 300 s tolerance (a replay, or a clock is wrong)",
        ),
        (
            WebhookError::TimestampTooNew {
                ahead_seconds: 301,
                tolerance_seconds: 300,
            },
            "too_new",
            "the delivery is dated 301 s in the future, beyond the 300 s tolerance (a clock is wrong)",
        ),
        (
            WebhookError::BadSignature,
            "bad_signature",
            "the Svc-Signature header does not match the delivery with any configured secret",
        ),
        (
            WebhookError::InvalidPayload("EOF while parsing a value at line 1 column 0".into()),
            "invalid_payload",
            "the signed body is not a webhook event: EOF while parsing a value at line 1 column 0",
        ),
        (
            WebhookError::NoSecret,
            "no_secret",
            "no webhook secret is configured",
        ),
    ];
    for (error, code, message) in cases {
        assert_eq!(error.code(), code);
        assert_eq!(error.to_string(), message);
    }
}

#[test]
fn unix_now_is_the_system_clock() {
    let now = unix_now();
    let system = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(now.abs_diff(i64::try_from(system).unwrap()) <= 1);
}
