//! Webhook deliveries: verify the signature and the timestamp, then decode the typed
//! [`WebhookEvent`].
//!
//! The notification service POSTs a JSON [`WebhookEvent`] to each endpoint with two
//! headers:
//! - [`TIMESTAMP_HEADER`] (`Svc-Timestamp`): the send time, whole seconds since the Unix
//!   epoch, in decimal;
//! - [`SIGNATURE_HEADER`] (`Svc-Signature`): the lowercase hex HMAC-SHA256, keyed with
//!   the UTF-8 bytes of the endpoint's secret (used whole, `whsec_` prefix included),
//!   over `<Svc-Timestamp>` + `.` + `<raw body>` (see [`sign`]).
//!
//! A [`Webhook`] holds one or more secrets (several during a rotation: a signature made
//! with any of them is accepted) and a timestamp tolerance ([`DEFAULT_TOLERANCE`],
//! ±5 minutes, can be changed). Give it the raw body bytes exactly as received:
//! re-serialized JSON does not verify.
//!
//! # Order of the checks
//!
//! Every implementation (Rust, Python, Kotlin) follows this order, and the shared test
//! vectors (`tests/data/webhook_vectors.json` at the workspace root) depend on it:
//!
//! 0. the [`Webhook`] has at least one non-empty secret, else [`WebhookError::NoSecret`];
//! 1. `Svc-Timestamp` is present, else [`WebhookError::MissingHeader`]; then
//!    `Svc-Signature` is present, else [`WebhookError::MissingHeader`];
//! 2. `Svc-Timestamp` is 1 to 18 ASCII digits (no sign, space, fraction or exponent),
//!    else [`WebhookError::InvalidTimestamp`];
//! 3. `Svc-Signature` is exactly 64 lowercase hex characters and equals, compared in
//!    constant time, the HMAC of one of the secrets, else
//!    [`WebhookError::BadSignature`]. Uppercase hex, a prefix such as `sha256=` or
//!    `v1,`, a truncated or a longer value are all a bad signature;
//! 4. the timestamp is at most the tolerance away from the receiver's clock, both ends
//!    included, else [`WebhookError::TimestampTooOld`] or
//!    [`WebhookError::TimestampTooNew`] (skipped by the `*_ignoring_timestamp`
//!    methods);
//! 5. only then is the body decoded, else [`WebhookError::InvalidPayload`].
//!
//! The signature is checked before the age, so that a timestamp error is reported only
//! for an authentic delivery: "too old" in a log means a replay or a wrong clock, never
//! a forged request.
//!
//! A header sent **twice** is refused: a duplicated `Svc-Timestamp` is
//! [`WebhookError::InvalidTimestamp`], a duplicated `Svc-Signature` is
//! [`WebhookError::BadSignature`] (the service sends each once; taking either copy
//! would let whatever added the other one choose). A header value that is not visible
//! ASCII is treated the same way. Header names are matched case-insensitively.
//!
//! Forward compatibility: an event type, status or other enumerated value this version
//! does not know decodes as an `Unknown` value, and unknown fields are ignored.
//!
//! # Example
//!
//! ```
//! use svc_core::webhook::{sign, Webhook, WebhookError, SIGNATURE_HEADER, TIMESTAMP_HEADER};
//! use svc_core::WebhookSecret;
//!
//! let secret = WebhookSecret::new("whsec_1f0e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0");
//! let body = br#"{"id":"2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3","eventType":"cloud:processing-ended","createdAt":"2024-07-02T09:17:02.500Z","endpointMetadata":{},"payload":{"id":"6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90","name":null,"type":"gnss","status":"processed","region":"eu-west-3","processingResult":"succeeded","processingDuration":95,"processingStep":"report","processingProgress":1.0,"archiveScheduledAt":null,"createdAt":"2024-07-02T09:15:30.123Z","updatedAt":"2024-07-02T09:17:02.456Z","creatorId":"0b8e7d6c-5a4f-4e3d-8c2b-1a0f9e8d7c6b","organizationId":"3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f","containerId":"8a7b6c5d-4e3f-4a1b-9c8d-7e6f5a4b3c2d","errorCount":{"errors":0,"warnings":0},"missionLength":3600,"missionLocationCountry":null,"missionLocationRegion":null,"missionLocationPlace":null,"processingJson":{"mode":"auto"}}}"#;
//! let sent_at = 1_719_911_822;
//! let signature = sign(&secret, sent_at, body);
//!
//! let mut headers = http::HeaderMap::new();
//! headers.insert(TIMESTAMP_HEADER, sent_at.to_string().parse()?);
//! headers.insert(SIGNATURE_HEADER, signature.parse()?);
//!
//! let webhook = Webhook::new(secret);
//! let event = webhook.verify_at(&headers, body, sent_at + 3)?;
//! assert_eq!(event.payload.id.to_string(), "6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90");
//!
//! // Ten minutes later the same delivery is refused (a replay).
//! let replayed = webhook.verify_at(&headers, body, sent_at + 600);
//! assert!(matches!(replayed, Err(WebhookError::TimestampTooOld { age_seconds: 600, .. })));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::HeaderMap;

pub use svc_cloud_api::WebhookSecret;
pub use svc_cloud_api::cloud::types::Processing;
pub use svc_cloud_api::enums::{EventType, ProcessingStatus};
pub use svc_cloud_api::notification::types::WebhookEvent;

#[cfg(feature = "axum")]
mod receiver;
#[cfg(feature = "axum")]
pub use receiver::{VerifiedWebhook, WebhookRejection};

// The signing scheme and the header names are the protocol's (the emulator's
// notification service signs with the same `sign`); verification is the SDK's own.
pub use svc_protocol::webhook::{SIGNATURE_HEADER, TIMESTAMP_HEADER, sign};
use svc_protocol::webhook::{SIGNATURE_HEX_LEN, signature_matches};

/// Default timestamp tolerance: a delivery is accepted when its `Svc-Timestamp` is at
/// most 5 minutes before or after the receiver's clock.
pub const DEFAULT_TOLERANCE: Duration = Duration::from_secs(5 * 60);

/// At most 18 digits, so that every accepted timestamp fits an `i64` (and a Kotlin
/// `Long`) without overflow.
const MAX_TIMESTAMP_DIGITS: usize = 18;

/// Why a webhook delivery was refused.
///
/// Messages name the header or the check that failed; they never contain a secret,
/// and never the body (text values quoted in a decoding error are replaced by `"…"`).
/// `Debug` does not show the body either (only its size): it goes to logs.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookError {
    /// A required header is absent (its name: [`TIMESTAMP_HEADER`] or
    /// [`SIGNATURE_HEADER`]).
    #[error("the {0} header is missing")]
    MissingHeader(&'static str),
    /// `Svc-Timestamp` is not 1 to 18 decimal digits (whole seconds since the Unix
    /// epoch), or it was sent twice.
    #[error("the Svc-Timestamp header is not a whole number of seconds since the Unix epoch")]
    InvalidTimestamp,
    /// The delivery was signed longer ago than the tolerance allows: a replay, or the
    /// receiver's clock is ahead.
    #[error(
        "the delivery was signed {age_seconds} s ago, beyond the {tolerance_seconds} s tolerance (a replay, or a clock is wrong)"
    )]
    TimestampTooOld {
        /// How many seconds before the receiver's clock the delivery was signed.
        age_seconds: u64,
        /// The tolerance in force, in seconds.
        tolerance_seconds: u64,
    },
    /// The delivery claims to be signed further in the future than the tolerance
    /// allows: the sender's clock is ahead, or the receiver's is behind.
    #[error(
        "the delivery is dated {ahead_seconds} s in the future, beyond the {tolerance_seconds} s tolerance (a clock is wrong)"
    )]
    TimestampTooNew {
        /// How many seconds after the receiver's clock the delivery is dated.
        ahead_seconds: u64,
        /// The tolerance in force, in seconds.
        tolerance_seconds: u64,
    },
    /// `Svc-Signature` is not 64 lowercase hex characters, does not match the
    /// timestamp and body with any of the secrets, or was sent twice.
    #[error("the Svc-Signature header does not match the delivery with any configured secret")]
    BadSignature,
    /// The signature holds but the body is not JSON. Carries the decoder's message (with
    /// its line and column), never the body.
    #[error("the signed body is not a webhook event: {0}")]
    InvalidPayload(String),
    /// The signature holds (the delivery is authentic) and the body is JSON, but not an
    /// event this SDK can type: its `id`, `eventType` or `payload` (with the processing's
    /// `id` and `status`) is missing or of another type. Every other field may be
    /// missing or new without this error. The JSON is handed over as it came; the
    /// message names the field, never a value.
    #[error("the signed body is a webhook event this SDK cannot read: {reason}")]
    UntypedEvent {
        /// What could not be typed (the decoder's message, values replaced by `"…"`).
        reason: String,
        /// The authenticated body, as JSON.
        raw: Box<serde_json::Value>,
    },
    /// No (non-empty) secret was given to the [`Webhook`]: a configuration error of the
    /// receiver, not of the delivery.
    #[error("no webhook secret is configured")]
    NoSecret,
}

impl std::fmt::Debug for WebhookError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::MissingHeader(name) => f.debug_tuple("MissingHeader").field(name).finish(),
            Self::InvalidTimestamp => f.write_str("InvalidTimestamp"),
            Self::TimestampTooOld {
                age_seconds,
                tolerance_seconds,
            } => f
                .debug_struct("TimestampTooOld")
                .field("age_seconds", age_seconds)
                .field("tolerance_seconds", tolerance_seconds)
                .finish(),
            Self::TimestampTooNew {
                ahead_seconds,
                tolerance_seconds,
            } => f
                .debug_struct("TimestampTooNew")
                .field("ahead_seconds", ahead_seconds)
                .field("tolerance_seconds", tolerance_seconds)
                .finish(),
            Self::BadSignature => f.write_str("BadSignature"),
            Self::InvalidPayload(reason) => f.debug_tuple("InvalidPayload").field(reason).finish(),
            Self::UntypedEvent { reason, raw } => f
                .debug_struct("UntypedEvent")
                .field("reason", reason)
                .field(
                    "raw",
                    &format_args!("[{} bytes of JSON, not shown]", raw.to_string().len()),
                )
                .finish(),
            Self::NoSecret => f.write_str("NoSecret"),
        }
    }
}

impl WebhookError {
    /// What kind of failure this is: [`Verification`](crate::ErrorKind::Verification)
    /// for a delivery that fails a check,
    /// [`InvalidResponse`](crate::ErrorKind::InvalidResponse) for a signed body that is
    /// not an event, [`InvalidInput`](crate::ErrorKind::InvalidInput) for a receiver
    /// without a secret.
    #[must_use]
    pub fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind;
        match self {
            Self::InvalidPayload(_) | Self::UntypedEvent { .. } => ErrorKind::InvalidResponse,
            Self::NoSecret => ErrorKind::InvalidInput,
            _ => ErrorKind::Verification,
        }
    }

    /// A stable, language-neutral code for the error: `missing_header`,
    /// `invalid_timestamp`, `too_old`, `too_new`, `bad_signature`, `invalid_payload`,
    /// `untyped_event` or `no_secret`. These are the `expected` values of the shared test vectors, and what
    /// the bindings expose.
    #[must_use]
    pub fn code(&self) -> &'static str {
        match self {
            Self::MissingHeader(_) => "missing_header",
            Self::InvalidTimestamp => "invalid_timestamp",
            Self::TimestampTooOld { .. } => "too_old",
            Self::TimestampTooNew { .. } => "too_new",
            Self::BadSignature => "bad_signature",
            Self::InvalidPayload(_) => "invalid_payload",
            Self::UntypedEvent { .. } => "untyped_event",
            Self::NoSecret => "no_secret",
        }
    }
}

/// The receiver's clock: whole seconds since the Unix epoch (0 for a clock set before
/// 1970). For callers of [`Webhook::verify_parts`] that want the current time.
#[must_use]
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| {
            i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX)
        })
}

/// Verifies webhook deliveries with one or more secrets and a timestamp tolerance.
///
/// Cheap to clone; share it (for example in an `Arc`) between requests. `Debug` shows
/// how many secrets it holds, never the secrets.
#[derive(Clone)]
pub struct Webhook {
    /// Non-empty secrets only; empty when built from an empty secret.
    secrets: Vec<WebhookSecret>,
    tolerance: Duration,
}

impl fmt::Debug for Webhook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Webhook")
            .field(
                "secrets",
                &format_args!("{} [redacted]", self.secrets.len()),
            )
            .field("tolerance", &self.tolerance)
            .finish()
    }
}

/// Which clock the timestamp is checked against.
#[derive(Clone, Copy)]
enum Clock {
    /// Check the age against this time (Unix seconds).
    At(i64),
    /// Do not check the age (the timestamp must still be well formed and signed).
    Ignore,
}

impl Webhook {
    /// A verifier with one secret and the [`DEFAULT_TOLERANCE`].
    ///
    /// An empty secret is never used to verify: every verification then fails with
    /// [`WebhookError::NoSecret`] (an unset configuration value must not turn into a
    /// key that anyone can sign with).
    #[must_use]
    pub fn new(secret: WebhookSecret) -> Self {
        let secrets = if secret.expose_secret().is_empty() {
            Vec::new()
        } else {
            vec![secret]
        };
        Self {
            secrets,
            tolerance: DEFAULT_TOLERANCE,
        }
    }

    /// A verifier accepting a signature made with any of `secrets` (a rotation: the
    /// new secret and the one it replaces), with the [`DEFAULT_TOLERANCE`]. Empty
    /// secrets are dropped.
    ///
    /// # Errors
    /// [`WebhookError::NoSecret`] when `secrets` holds no non-empty secret.
    pub fn with_secrets(secrets: Vec<WebhookSecret>) -> Result<Self, WebhookError> {
        let secrets: Vec<WebhookSecret> = secrets
            .into_iter()
            .filter(|secret| !secret.expose_secret().is_empty())
            .collect();
        if secrets.is_empty() {
            return Err(WebhookError::NoSecret);
        }
        Ok(Self {
            secrets,
            tolerance: DEFAULT_TOLERANCE,
        })
    }

    /// Changes the timestamp tolerance: a delivery is accepted when its timestamp is at
    /// most `tolerance` before or after the receiver's clock (both ends included). Only
    /// whole seconds count (a fraction of a second is ignored).
    #[must_use]
    pub fn with_tolerance(mut self, tolerance: Duration) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The timestamp tolerance in force.
    #[must_use]
    pub fn tolerance(&self) -> Duration {
        self.tolerance
    }

    /// Verifies a delivery against the system clock, then decodes its body.
    ///
    /// `body` must be the raw request body, byte for byte.
    ///
    /// # Errors
    /// [`WebhookError::NoSecret`], [`WebhookError::MissingHeader`],
    /// [`WebhookError::InvalidTimestamp`], [`WebhookError::BadSignature`],
    /// [`WebhookError::TimestampTooOld`], [`WebhookError::TimestampTooNew`],
    /// [`WebhookError::InvalidPayload`], checked in the order of the
    /// [module documentation](self).
    pub fn verify(&self, headers: &HeaderMap, body: &[u8]) -> Result<WebhookEvent, WebhookError> {
        self.verify_at(headers, body, unix_now())
    }

    /// Verifies a delivery as [`verify`](Self::verify) does, with `now_unix` (seconds
    /// since the Unix epoch) as the receiver's clock.
    ///
    /// # Errors
    /// As [`verify`](Self::verify).
    pub fn verify_at(
        &self,
        headers: &HeaderMap,
        body: &[u8],
        now_unix: i64,
    ) -> Result<WebhookEvent, WebhookError> {
        let (timestamp, signature) = header_values(headers);
        self.check(timestamp, signature, body, Clock::At(now_unix))
    }

    /// Verifies a delivery without checking how old its timestamp is (the timestamp
    /// must still be present, well formed and covered by the signature). For replaying
    /// stored deliveries; a live receiver uses [`verify`](Self::verify), which refuses
    /// replays.
    ///
    /// # Errors
    /// As [`verify`](Self::verify), except [`WebhookError::TimestampTooOld`] and
    /// [`WebhookError::TimestampTooNew`].
    pub fn verify_ignoring_timestamp(
        &self,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<WebhookEvent, WebhookError> {
        let (timestamp, signature) = header_values(headers);
        self.check(timestamp, signature, body, Clock::Ignore)
    }

    /// Verifies a delivery from the header values themselves, for callers without a
    /// [`HeaderMap`] (command line, bindings): `None` is a missing header. `now_unix`
    /// is the receiver's clock in seconds since the Unix epoch ([`unix_now`]).
    ///
    /// # Errors
    /// As [`verify`](Self::verify).
    pub fn verify_parts(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        now_unix: i64,
    ) -> Result<WebhookEvent, WebhookError> {
        self.check(timestamp, signature, body, Clock::At(now_unix))
    }

    /// [`verify_parts`](Self::verify_parts) without the age check, as
    /// [`verify_ignoring_timestamp`](Self::verify_ignoring_timestamp).
    ///
    /// # Errors
    /// As [`verify_ignoring_timestamp`](Self::verify_ignoring_timestamp).
    pub fn verify_parts_ignoring_timestamp(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
    ) -> Result<WebhookEvent, WebhookError> {
        self.check(timestamp, signature, body, Clock::Ignore)
    }

    /// The checks, in the order of the module documentation, and their outcome logged
    /// (the event's type and identifiers, or the check that failed; never a secret,
    /// the signature or the body).
    fn check(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        clock: Clock,
    ) -> Result<WebhookEvent, WebhookError> {
        let age_checked = matches!(clock, Clock::At(_));
        let result = self.run_checks(timestamp, signature, body, clock);
        match &result {
            Ok(event) => tracing::debug!(
                event_id = %event.id,
                event_type = %event.event_type,
                processing_id = %event.payload.id,
                body_bytes = body.len(),
                secrets = self.secrets.len(),
                "webhook delivery verified"
            ),
            Err(e) => tracing::debug!(
                code = e.code(),
                error = %e,
                body_bytes = body.len(),
                secrets = self.secrets.len(),
                age_checked,
                "webhook delivery refused"
            ),
        }
        result
    }

    fn run_checks(
        &self,
        timestamp: Option<&str>,
        signature: Option<&str>,
        body: &[u8],
        clock: Clock,
    ) -> Result<WebhookEvent, WebhookError> {
        if self.secrets.is_empty() {
            return Err(WebhookError::NoSecret);
        }
        let timestamp = timestamp.ok_or(WebhookError::MissingHeader(TIMESTAMP_HEADER))?;
        let signature = signature.ok_or(WebhookError::MissingHeader(SIGNATURE_HEADER))?;
        let sent_at = parse_timestamp(timestamp)?;
        self.check_signature(timestamp, signature, body)?;
        if let Clock::At(now) = clock {
            self.check_age(sent_at, now)?;
        }
        decode_event(body)
    }

    /// Compares `signature` in constant time with the HMAC of each secret.
    fn check_signature(
        &self,
        timestamp: &str,
        signature: &str,
        body: &[u8],
    ) -> Result<(), WebhookError> {
        let well_formed = signature.len() == SIGNATURE_HEX_LEN
            && signature
                .bytes()
                .all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'));
        if !well_formed {
            return Err(WebhookError::BadSignature);
        }
        let mut tag = [0_u8; SIGNATURE_HEX_LEN / 2];
        hex::decode_to_slice(signature, &mut tag).map_err(|_| WebhookError::BadSignature)?;
        let matches = self
            .secrets
            .iter()
            .any(|secret| signature_matches(secret, timestamp, body, &tag));
        if matches {
            Ok(())
        } else {
            Err(WebhookError::BadSignature)
        }
    }

    /// Checks that `sent_at` is within the tolerance of `now`, both ends included.
    fn check_age(&self, sent_at: i64, now: i64) -> Result<(), WebhookError> {
        let tolerance_seconds = self.tolerance.as_secs();
        let age = i128::from(now) - i128::from(sent_at);
        let tolerance = i128::from(tolerance_seconds);
        if age > tolerance {
            return Err(WebhookError::TimestampTooOld {
                age_seconds: u64::try_from(age).unwrap_or(u64::MAX),
                tolerance_seconds,
            });
        }
        if -age > tolerance {
            return Err(WebhookError::TimestampTooNew {
                ahead_seconds: u64::try_from(-age).unwrap_or(u64::MAX),
                tolerance_seconds,
            });
        }
        Ok(())
    }
}

/// The two header values; a header sent twice, or whose value is not visible ASCII,
/// becomes an empty value, which fails its syntax check (`InvalidTimestamp`,
/// `BadSignature`) after the presence checks.
fn header_values(headers: &HeaderMap) -> (Option<&str>, Option<&str>) {
    (
        single_header(headers, TIMESTAMP_HEADER),
        single_header(headers, SIGNATURE_HEADER),
    )
}

fn single_header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    if values.next().is_some() {
        return Some("");
    }
    Some(first.to_str().unwrap_or(""))
}

/// `^[0-9]{1,18}$`, as whole seconds since the Unix epoch.
fn parse_timestamp(timestamp: &str) -> Result<i64, WebhookError> {
    let digits_only = !timestamp.is_empty()
        && timestamp.len() <= MAX_TIMESTAMP_DIGITS
        && timestamp.bytes().all(|byte| byte.is_ascii_digit());
    if !digits_only {
        return Err(WebhookError::InvalidTimestamp);
    }
    timestamp
        .parse()
        .map_err(|_| WebhookError::InvalidTimestamp)
}

/// Decodes the (already authenticated) body. JSON this SDK cannot type is handed over
/// rather than lost (decoded a second time, as plain JSON, only then).
fn decode_event(body: &[u8]) -> Result<WebhookEvent, WebhookError> {
    serde_json::from_slice(body).map_err(|typed| {
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(raw) => WebhookError::UntypedEvent {
                reason: untyped_reason(&raw)
                    .unwrap_or_else(|| crate::observe::without_values(&typed.to_string())),
                raw: Box::new(raw),
            },
            Err(error) => {
                WebhookError::InvalidPayload(crate::observe::without_values(&error.to_string()))
            }
        }
    })
}

/// Why JSON does not type as an event, naming the field by its path from the event's
/// root (`payload.id: missing`, `payload.status: invalid type: ...`), never its value.
fn untyped_reason(raw: &serde_json::Value) -> Option<String> {
    let error = serde_path_to_error::deserialize::<_, WebhookEvent>(raw).err()?;
    let mut path: Vec<String> = error
        .path()
        .iter()
        .filter_map(|segment| match segment {
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
            serde_path_to_error::Segment::Enum { variant } => Some(variant.clone()),
            serde_path_to_error::Segment::Unknown => None,
        })
        .collect();
    let message = crate::observe::without_values(&error.inner().to_string());
    // A missing field is reported at the object that lacks it: name the field itself.
    let message = match message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split_once('`'))
    {
        Some((field, rest)) => {
            path.push(field.to_owned());
            format!("missing{rest}")
        }
        None => message,
    };
    Some(if path.is_empty() {
        message
    } else {
        format!("{}: {message}", path.join("."))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_syntax() {
        assert_eq!(parse_timestamp("0"), Ok(0));
        assert_eq!(parse_timestamp("001"), Ok(1));
        assert_eq!(
            parse_timestamp("999999999999999999"),
            Ok(999_999_999_999_999_999)
        );
        for bad in [
            "",
            "-1",
            "+1",
            "1.0",
            "1e9",
            " 1",
            "1 ",
            "1_000",
            "9999999999999999999",
            "١٢",
        ] {
            assert_eq!(
                parse_timestamp(bad),
                Err(WebhookError::InvalidTimestamp),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn age_does_not_overflow_at_the_extremes() {
        let webhook = Webhook::new("whsec_x".into());
        assert!(matches!(
            webhook.check_age(999_999_999_999_999_999, i64::MIN),
            Err(WebhookError::TimestampTooNew { .. })
        ));
        assert!(matches!(
            webhook.check_age(0, i64::MAX),
            Err(WebhookError::TimestampTooOld { .. })
        ));
    }

    #[test]
    fn duplicated_or_non_ascii_headers_become_unusable() {
        let mut headers = HeaderMap::new();
        headers.append(TIMESTAMP_HEADER, "1".parse().unwrap());
        headers.append(TIMESTAMP_HEADER, "2".parse().unwrap());
        headers.insert(
            SIGNATURE_HEADER,
            http::HeaderValue::from_bytes(b"caf\xe9").unwrap(),
        );
        assert_eq!(header_values(&headers), (Some(""), Some("")));
        assert_eq!(header_values(&HeaderMap::new()), (None, None));
    }
}
