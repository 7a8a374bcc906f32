//! What the `tracing` instrumentation may write, and how.
//!
//! svc-core emits spans and events with the [`tracing`] crate (targets `svc_core::…`):
//! a span per cloud operation and per HTTP request, token requests, retries with their
//! reason and delay, transfers and their progress, workflow steps, webhook
//! verifications, unit operations and serial link events. Fields carry identifiers,
//! operation names, statuses, sizes, attempt numbers and durations — never an API
//! secret, an access or unit token, a password, a webhook secret or signature, the query
//! of a pre-signed address, or a settings value. Addresses are written without their
//! query string (nor fragment or user information), through [`url`].

use std::time::Duration;

/// `address` as it may be logged: without user information, query or fragment (a
/// pre-signed address carries its signature in the query, a unit address its token).
pub(crate) fn url(address: &str) -> String {
    match reqwest::Url::parse(address) {
        Ok(parsed) => parsed_url(&parsed),
        Err(_) => address
            .split(['?', '#'])
            .next()
            .unwrap_or_default()
            .rsplit('@')
            .next()
            .unwrap_or_default()
            .to_owned(),
    }
}

/// As [`url`], for a parsed address.
pub(crate) fn parsed_url(address: &reqwest::Url) -> String {
    let mut clean = address.clone();
    clean.set_query(None);
    clean.set_fragment(None);
    let _ = clean.set_username("");
    let _ = clean.set_password(None);
    clean.to_string()
}

/// A duration in whole milliseconds, for a field.
pub(crate) fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_lose_their_query_and_credentials() {
        assert_eq!(
            url("https://s3.example/b/k?X-Amz-Signature=abc&X-Amz-Date=1#f"),
            "https://s3.example/b/k"
        );
        assert_eq!(
            url("http://user:pw@unit.local/api/v1/info?auth=TOKEN"),
            "http://unit.local/api/v1/info"
        );
        assert_eq!(url("not a url?auth=TOKEN"), "not a url");
        assert_eq!(millis(Duration::from_micros(2500)), 2);
    }
}
