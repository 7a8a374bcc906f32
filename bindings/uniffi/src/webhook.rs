//! `Webhook`: verifies the signature and timestamp of a webhook delivery, then decodes
//! it into a typed event.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use http::{HeaderMap, HeaderName, HeaderValue};
use svc_core::WebhookSecret;
use svc_core::webhook as sw;

use crate::error::SvcError;
use crate::types::WebhookEvent;

/// Verifies webhook deliveries with one or more secrets (a rotation) and a timestamp
/// tolerance (default 300 s). Never holds an empty secret. For servers: deliveries
/// reach the endpoint's server, never a phone.
#[derive(Debug, uniffi::Object)]
pub struct Webhook {
    inner: sw::Webhook,
}

/// The request's headers as a `HeaderMap` (names in any case). A header whose name is
/// not a valid HTTP name cannot be one the verification reads and is left out; an
/// invalid value is kept as an empty one, which the verification refuses.
fn header_map(headers: HashMap<String, String>) -> HeaderMap {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if let Ok(name) = HeaderName::from_bytes(name.as_bytes()) {
            let value = HeaderValue::from_str(&value).unwrap_or(HeaderValue::from_static(""));
            map.append(name, value);
        }
    }
    map
}

#[uniffi::export]
impl Webhook {
    /// A verifier accepting a signature made with any of `secrets` (`whsec_…`, empty
    /// ones dropped), with a timestamp `tolerance` (default 5 minutes).
    ///
    /// Errors: `InvalidInput` (code `no_secret`) when no secret is left.
    #[uniffi::constructor(default(tolerance = None))]
    pub fn new(secrets: Vec<String>, tolerance: Option<Duration>) -> Result<Arc<Self>, SvcError> {
        let secrets = secrets.into_iter().map(WebhookSecret::new).collect();
        let mut inner = sw::Webhook::with_secrets(secrets)?;
        if let Some(tolerance) = tolerance {
            inner = inner.with_tolerance(tolerance);
        }
        Ok(Arc::new(Self { inner }))
    }

    /// Verifies a delivery (its headers, names in any case, and its raw body) against
    /// the system clock, then decodes it.
    ///
    /// Errors: `Verification` with `code` `missing_header`, `invalid_timestamp`,
    /// `too_old`, `too_new` or `bad_signature`; `InvalidResponse` with code
    /// `invalid_payload` for a signed body that is not JSON, or `untyped_event` (the
    /// JSON in `details`) for a signed event this SDK cannot read.
    pub fn verify(
        &self,
        headers: HashMap<String, String>,
        body: Vec<u8>,
    ) -> Result<WebhookEvent, SvcError> {
        Ok(self.inner.verify(&header_map(headers), &body)?.into())
    }

    /// As `verify`, with `now` as the receiver's clock.
    pub fn verify_at(
        &self,
        headers: HashMap<String, String>,
        body: Vec<u8>,
        now: SystemTime,
    ) -> Result<WebhookEvent, SvcError> {
        let now_unix = match now.duration_since(SystemTime::UNIX_EPOCH) {
            Ok(after) => i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            Err(before) => i64::try_from(before.duration().as_secs()).map_or(i64::MIN, |s| -s),
        };
        Ok(self
            .inner
            .verify_at(&header_map(headers), &body, now_unix)?
            .into())
    }

    /// As `verify`, without checking the timestamp's age (replaying stored
    /// deliveries).
    pub fn verify_ignoring_timestamp(
        &self,
        headers: HashMap<String, String>,
        body: Vec<u8>,
    ) -> Result<WebhookEvent, SvcError> {
        Ok(self
            .inner
            .verify_ignoring_timestamp(&header_map(headers), &body)?
            .into())
    }

    /// The timestamp tolerance in force.
    pub fn tolerance(&self) -> Duration {
        self.inner.tolerance()
    }
}
