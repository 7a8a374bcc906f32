//! Generated clients for the cloud post-processing service (`openapi/cloud.yaml`) and
//! its notification service (`openapi/notification.yaml`).
//!
//! The code under `src/generated/` is produced by `cargo xtask generate` from those
//! documents and committed; it is private and re-exported here. Beside it:
//! - [`hooks`]: the bearer token on every request ([`CloudState`], [`TokenSource`]);
//! - [`enums`]: every value set of the documents as an *open* enum, which keeps a
//!   value it does not know as `Unknown(String)` instead of failing to decode.
//!
//! Most users want the `svc-core` facade rather than these clients.
//!
//! ```
//! use svc_cloud_api::{cloud, AccessToken, CloudState};
//!
//! let client = cloud::Client::new(
//!     "http://127.0.0.1:8080",
//!     CloudState::with_static_token(AccessToken::new("token")),
//! );
//! let request = client.list_containers().organization_id(uuid::Uuid::nil()).page(0).per_page(10);
//! # drop(request);
//! ```
#![forbid(unsafe_code)]

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, unused_imports, dead_code, missing_docs)]
#[path = "generated/cloud.rs"]
mod cloud_generated;

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, unused_imports, dead_code, missing_docs)]
#[path = "generated/notification.rs"]
mod notification_generated;

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs)]
#[path = "generated/enums.rs"]
mod enums_generated;

pub mod hooks;
mod timestamp;

/// The cloud service client (`{base_url}`: `/api/v2` and `/api/v1/info`).
pub mod cloud {
    pub use crate::cloud_generated::*;
}

/// The notification (webhook endpoint) service client (`{notification_url}/api/v2`).
/// Schemas it shares with the cloud document (`Processing`, `Error`, ...) are the
/// [`cloud::types`] ones.
pub mod notification {
    pub use crate::notification_generated::*;
}

/// Every value set of the two documents, as open enums.
pub mod enums {
    pub use crate::enums_generated::*;
}

pub use hooks::{AccessToken, CloudState, TokenError, TokenSource};
pub use timestamp::Timestamp;

/// Free-form metadata: string keys to string values, in the order sent.
///
/// The service allows at most 50 keys, key names of at most 40 characters and values
/// of at most 500 characters (422 otherwise); an update replaces the whole object.
pub type Metadata = indexmap::IndexMap<String, String>;

/// The path of a file inside its container: a relative POSIX path, not empty, without
/// `..` segments or NUL, at most 1024 bytes, unique within the container (422 / 409
/// otherwise).
pub type ContainerPath = String;

/// The form fields of a pre-signed upload (`UploadInfo.fields`), in the order the
/// service sent them: `key`, `bucket`, `X-Amz-Algorithm`, `X-Amz-Credential`,
/// `X-Amz-Date`, `Policy`, `X-Amz-Signature`, `X-Amz-Security-Token`. Send every one
/// unchanged, in this order, with `file` last.
///
/// A form is a credential for its object until it expires: `Debug` prints the values
/// of the [`SECRET_UPLOAD_FIELDS`] as `[redacted]` (the others as they are). The map
/// itself is reached through `Deref` (and `DerefMut`).
#[derive(Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct UploadFields(pub indexmap::IndexMap<String, String>);

/// The fields of every upload form (`UploadFields`), in the order the service hands
/// them out and its own clients send them: the form of temporary credentials, the
/// session token last. A storage may add fields of its own after them.
pub const UPLOAD_FIELDS: [&str; 8] = [
    "bucket",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "key",
    "Policy",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
];

/// The upload form fields whose values must never be shown: the signature, the
/// credential, the session token, and the policy (base64 JSON that repeats the
/// credential and the session token in its conditions). Names compare without case.
pub const SECRET_UPLOAD_FIELDS: [&str; 4] = [
    "X-Amz-Signature",
    "X-Amz-Credential",
    "X-Amz-Security-Token",
    "Policy",
];

/// Whether a form field's value must never be shown (see [`SECRET_UPLOAD_FIELDS`]).
#[must_use]
pub fn is_secret_upload_field(name: &str) -> bool {
    SECRET_UPLOAD_FIELDS
        .iter()
        .any(|secret| secret.eq_ignore_ascii_case(name))
}

impl std::fmt::Debug for UploadFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(name, value)| {
                let shown = if is_secret_upload_field(name) {
                    "[redacted]"
                } else {
                    value.as_str()
                };
                (name, shown)
            }))
            .finish()
    }
}

impl std::ops::Deref for UploadFields {
    type Target = indexmap::IndexMap<String, String>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for UploadFields {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl<K: Into<String>, V: Into<String>> FromIterator<(K, V)> for UploadFields {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(iter: I) -> Self {
        Self(
            iter.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl<'a> IntoIterator for &'a UploadFields {
    type Item = (&'a String, &'a String);
    type IntoIter = indexmap::map::Iter<'a, String, String>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

svc_secret::secret_string!(
    /// A webhook endpoint's signing secret (`whsec_` + 64 hex characters), the
    /// HMAC-SHA256 key of `Svc-Signature`. `Debug` prints `[redacted]`.
    WebhookSecret
);
