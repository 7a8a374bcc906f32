//! Webhook verification and decoding (svc-core `webhook`, svc-protocol `webhook`):
//! arbitrary secrets, headers, body and clock; and, so that decoding is reached, a
//! valid signature over the arbitrary body.
//!
//! Input: a 15-byte header, then `secrets NUL headers NUL body`.
//! - byte 0: bit 0 sign the body correctly, with the secret of index bits 1-2;
//! - bytes 1-8: the receiver's clock (i64 LE); when signing, the timestamp (modulo
//!   10^18: the timestamps a receiver accepts);
//! - bytes 9-10: when signing, the receiver's clock minus the timestamp (i16 LE);
//! - bytes 11-14: the tolerance in seconds (u32 LE);
//! - secrets: one per line (at most 4); headers: `name: value` lines (at most 8).
//!
//! Properties checked:
//! 1. nothing panics;
//! 2. a delivery given as a `HeaderMap` and the same header values given as parts
//!    verify alike, and ignoring the timestamp changes only the age errors;
//! 3. a correctly signed delivery fails only by its timestamp's age or its body: it is
//!    accepted exactly when the body decodes as an event (with serde directly) and the
//!    age is within the tolerance;
//! 4. a verified event, re-serialized and re-signed, verifies and writes the same JSON
//!    again; the verified body with one byte changed does not verify;
//! 5. no error message and no `Debug` output holds a secret.
#![no_main]

use std::time::Duration;

use http::{HeaderMap, HeaderName, HeaderValue};
use libfuzzer_sys::fuzz_target;
use svc_core::webhook::{
    SIGNATURE_HEADER, TIMESTAMP_HEADER, Webhook, WebhookError, WebhookEvent, sign,
};
use svc_core::{ErrorKind, WebhookSecret};
use svc_fuzz::same_json;

/// Timestamps have at most 18 digits.
const TIMESTAMP_RANGE: u64 = 1_000_000_000_000_000_000;

struct Input<'a> {
    sign_with: Option<usize>,
    clock: i64,
    skew: i16,
    tolerance_seconds: u32,
    secrets: Vec<&'a [u8]>,
    headers: Vec<(&'a [u8], &'a [u8])>,
    body: &'a [u8],
}

impl<'a> Input<'a> {
    fn parse(data: &'a [u8]) -> Option<Self> {
        let (head, rest) = data.split_at_checked(15)?;
        let mut parts = rest.splitn(3, |&byte| byte == 0);
        let secrets = parts.next().unwrap_or_default();
        let headers = parts.next().unwrap_or_default();
        let body = parts.next().unwrap_or_default();
        Some(Input {
            sign_with: (head[0] & 1 != 0).then_some(usize::from((head[0] >> 1) & 0b11)),
            clock: i64::from_le_bytes(head[1..9].try_into().ok()?),
            skew: i16::from_le_bytes(head[9..11].try_into().ok()?),
            tolerance_seconds: u32::from_le_bytes(head[11..15].try_into().ok()?),
            secrets: if secrets.is_empty() {
                Vec::new()
            } else {
                secrets.split(|&byte| byte == b'\n').take(4).collect()
            },
            headers: headers
                .split(|&byte| byte == b'\n')
                .filter_map(|line| {
                    let colon = line.iter().position(|&byte| byte == b':')?;
                    let value = &line[colon + 1..];
                    Some((&line[..colon], value.strip_prefix(b" ").unwrap_or(value)))
                })
                .take(8)
                .collect(),
            body,
        })
    }
}

fuzz_target!(|data: &[u8]| {
    let Some(input) = Input::parse(data) else {
        return;
    };
    let secrets: Vec<WebhookSecret> = input
        .secrets
        .iter()
        .map(|s| WebhookSecret::new(String::from_utf8_lossy(s)))
        .collect();
    let tolerance = Duration::from_secs(u64::from(input.tolerance_seconds));
    let webhook = match secrets.as_slice() {
        [] => Webhook::new(WebhookSecret::new("")),
        [one] => Webhook::new(one.clone()),
        _ => match Webhook::with_secrets(secrets.clone()) {
            Ok(webhook) => webhook,
            Err(error) => {
                assert_eq!(error, WebhookError::NoSecret);
                assert!(secrets.iter().all(|s| s.expose_secret().is_empty()));
                return;
            }
        },
    }
    .with_tolerance(tolerance);
    let usable: Vec<&WebhookSecret> = secrets
        .iter()
        .filter(|s| !s.expose_secret().is_empty())
        .collect();
    check_no_secret(&format!("{webhook:?}"), &usable, &[]);

    let mut headers = HeaderMap::new();
    for (name, value) in &input.headers {
        if let (Ok(name), Ok(value)) =
            (HeaderName::from_bytes(name), HeaderValue::from_bytes(value))
        {
            headers.append(name, value);
        }
    }
    // A correct signature over the body, in place of the arbitrary ones.
    let mut now = input.clock;
    let mut signed_at = None;
    if let Some(index) = input.sign_with
        && !usable.is_empty()
    {
        let timestamp = (input.clock.cast_unsigned() % TIMESTAMP_RANGE).cast_signed();
        let secret = usable[index % usable.len()];
        headers.remove(TIMESTAMP_HEADER);
        headers.remove(SIGNATURE_HEADER);
        headers.insert(TIMESTAMP_HEADER, header(&timestamp.to_string()));
        headers.insert(
            SIGNATURE_HEADER,
            header(&sign(secret, timestamp, input.body)),
        );
        now = timestamp + i64::from(input.skew);
        signed_at = Some(timestamp);
    }

    let result = webhook.verify_at(&headers, input.body, now);
    if let Err(error) = &result {
        check_no_secret(&error.to_string(), &usable, input.body);
        check_no_secret(&format!("{error:?}"), &usable, input.body);
    }

    // 2: the same values as parts verify alike, when each header was sent at most once
    // and is visible ASCII.
    let single = |name: &str| {
        let mut values = headers.get_all(name).iter();
        match (values.next(), values.next()) {
            (None, _) => Some(None),
            (Some(value), None) => value.to_str().ok().map(Some),
            (Some(_), Some(_)) => None,
        }
    };
    if let (Some(timestamp), Some(signature)) = (single(TIMESTAMP_HEADER), single(SIGNATURE_HEADER))
    {
        let parts = webhook.verify_parts(timestamp, signature, input.body, now);
        assert_eq!(parts, result, "HeaderMap and parts disagree");
    }
    let ignoring = webhook.verify_ignoring_timestamp(&headers, input.body);
    match &result {
        Ok(event) => assert_eq!(ignoring.as_ref(), Ok(event)),
        Err(WebhookError::TimestampTooOld { .. } | WebhookError::TimestampTooNew { .. }) => {}
        Err(error) => assert_eq!(ignoring.as_ref(), Err(error)),
    }

    // 3: a correct signature fails only by age or body.
    if let Some(timestamp) = signed_at {
        let decoded = serde_json::from_slice::<WebhookEvent>(input.body);
        let age = i128::from(now) - i128::from(timestamp);
        let in_time = age.unsigned_abs() <= u128::from(tolerance.as_secs());
        match &result {
            Ok(event) => {
                assert!(in_time);
                assert_eq!(decoded.as_ref().ok(), Some(event));
            }
            Err(WebhookError::TimestampTooOld { .. }) => assert!(age > 0 && !in_time),
            Err(WebhookError::TimestampTooNew { .. }) => assert!(age < 0 && !in_time),
            // The body is not an event (not JSON, or JSON that does not type).
            Err(error) if error.kind() == ErrorKind::InvalidResponse => {
                assert!(in_time && decoded.is_err());
            }
            Err(other) => panic!("a correctly signed delivery was refused: {other:?}"),
        }
    }

    // 4: re-serialized and re-signed, a verified event verifies again; tampering fails.
    if let Ok(event) = &result {
        let timestamp: i64 = headers
            .get(TIMESTAMP_HEADER)
            .and_then(|value| value.to_str().ok()?.parse().ok())
            .expect("a verified delivery has a valid timestamp");
        let body = serde_json::to_vec(event).expect("an event serializes");
        let signature = sign(usable[0], timestamp, &body);
        let reverified = webhook
            .verify_parts(Some(&timestamp.to_string()), Some(&signature), &body, now)
            .expect("a verified event, re-serialized and re-signed, verifies");
        let rewritten = serde_json::to_vec(&reverified).expect("an event serializes");
        assert!(
            same_json(&body, &rewritten),
            "an event read back from its own JSON writes different JSON"
        );
        let mut tampered = input.body.to_vec();
        if let Some(byte) = tampered.get_mut(input.body.len() / 2) {
            *byte ^= 0x01;
            assert_eq!(
                webhook.verify_at(&headers, &tampered, now),
                Err(WebhookError::BadSignature)
            );
        }
    }
});

fn header(text: &str) -> HeaderValue {
    HeaderValue::from_str(text).expect("digits and hex are valid header values")
}

/// No secret appears in `text` (unless the sender's `body`, which an error may quote,
/// holds it too). Only secrets of the service's form (`whsec_` and at least 10 more
/// characters) are looked for: the fuzzer would otherwise make a secret out of a
/// message's own words.
fn check_no_secret(text: &str, secrets: &[&WebhookSecret], body: &[u8]) {
    for secret in secrets {
        let secret = secret.expose_secret();
        if !secret.starts_with("whsec_") || secret.len() < 16 {
            continue;
        }
        let in_body = body.windows(secret.len()).any(|w| w == secret.as_bytes());
        if !in_body {
            assert!(!text.contains(secret), "a secret is shown: {text}");
        }
    }
}
