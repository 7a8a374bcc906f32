//! How a webhook delivery is signed, and the names of its headers.
//!
//! The notification service POSTs a JSON event to each endpoint with two headers:
//! - [`TIMESTAMP_HEADER`] (`Svc-Timestamp`): the send time, whole seconds since the Unix
//!   epoch, in decimal;
//! - [`SIGNATURE_HEADER`] (`Svc-Signature`): the lowercase hex HMAC-SHA256, keyed with
//!   the UTF-8 bytes of the endpoint's secret (used whole, `whsec_` prefix included),
//!   over `<Svc-Timestamp>` + `.` + `<raw body>` (see [`sign`]).
//!
//! The emulator's notification service signs with [`sign`]; receivers verify with
//! `svc_core::webhook::Webhook`, which owns the order of the checks, the timestamp
//! tolerance and the decoding of the event, and compares signatures with
//! [`signature_matches`].
//!
//! ```
//! use svc_cloud_api::WebhookSecret;
//! use svc_protocol::webhook::{sign, signature_matches};
//!
//! let secret = WebhookSecret::new("whsec_x");
//! let signature = sign(&secret, 1_719_911_822, b"{}");
//! assert_eq!(signature.len(), 64);
//! let tag = hex::decode(&signature)?;
//! assert!(signature_matches(&secret, "1719911822", b"{}", &tag));
//! assert!(!signature_matches(&secret, "1719911823", b"{}", &tag));
//! # Ok::<(), hex::FromHexError>(())
//! ```

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use svc_cloud_api::WebhookSecret;

/// Name of the header carrying the send time (whole seconds since the Unix epoch).
pub const TIMESTAMP_HEADER: &str = "Svc-Timestamp";

/// Name of the header carrying the lowercase hex HMAC-SHA256 signature.
pub const SIGNATURE_HEADER: &str = "Svc-Signature";

/// Length of a signature: 32 bytes of HMAC-SHA256, as hex.
pub const SIGNATURE_HEX_LEN: usize = 64;

type HmacSha256 = Hmac<Sha256>;

/// Signs a delivery: the lowercase hex HMAC-SHA256 keyed with the UTF-8 bytes of
/// `secret` over `"{timestamp}." + body`, the value of [`SIGNATURE_HEADER`].
///
/// Used by tests and by the emulator's notification service; a receiver calls one of
/// the `verify` methods of `svc_core::webhook::Webhook` instead. Never fails (HMAC
/// takes keys of any length).
#[must_use]
pub fn sign(secret: &WebhookSecret, timestamp: i64, body: &[u8]) -> String {
    hex::encode(
        keyed_mac(secret, timestamp.to_string().as_bytes(), body)
            .finalize()
            .into_bytes(),
    )
}

/// Whether `tag` (the decoded bytes of a signature) is the HMAC of `timestamp` (the
/// header's text, exactly as received) and `body` with `secret`, compared in constant
/// time.
#[must_use]
pub fn signature_matches(secret: &WebhookSecret, timestamp: &str, body: &[u8], tag: &[u8]) -> bool {
    keyed_mac(secret, timestamp.as_bytes(), body)
        .verify_slice(tag)
        .is_ok()
}

/// The HMAC-SHA256 of `timestamp` + `.` + `body`, keyed with the secret's UTF-8 bytes.
fn keyed_mac(secret: &WebhookSecret, timestamp: &[u8], body: &[u8]) -> HmacSha256 {
    let Ok(mut mac) = HmacSha256::new_from_slice(secret.expose_secret().as_bytes()) else {
        unreachable!("HMAC accepts keys of any length")
    };
    mac.update(timestamp);
    mac.update(b".");
    mac.update(body);
    mac
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signs_the_timestamp_a_dot_and_the_body() {
        let secret = WebhookSecret::new("whsec_x");
        let signature = sign(&secret, 42, b"body");
        assert_eq!(signature.len(), SIGNATURE_HEX_LEN);
        assert!(
            signature
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        );
        let tag = hex::decode(&signature).unwrap();
        assert!(signature_matches(&secret, "42", b"body", &tag));
        assert!(!signature_matches(&secret, "042", b"body", &tag));
        assert!(!signature_matches(&secret, "42", b"body!", &tag));
        assert!(!signature_matches(
            &WebhookSecret::new("whsec_y"),
            "42",
            b"body",
            &tag
        ));
        assert!(!signature_matches(&secret, "42", b"body", &tag[..31]));
    }
}
