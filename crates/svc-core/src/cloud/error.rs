//! [`CloudError`]: everything that can go wrong talking to the cloud service, its
//! notification service or its identity provider, and whether repeating can help.

use std::fmt;

use svc_cloud_api::cloud::types;

use crate::error::{ErrorKind, Side};
use crate::limits::LimitError;

/// The error type of the generated clients.
pub(crate) type ClientError = svc_cloud_api::cloud::Error<types::Error>;

/// What went wrong talking to the cloud service. No secret (API secret, access token,
/// webhook secret) ever appears in it.
///
/// Whether repeating the request can help follows the specification's error table:
/// see [`CloudError::retry_hint`] and [`CloudError::is_retryable`].
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum CloudError {
    /// The service answered with an error status and its `{title, details}` body.
    #[error("{operation}: the service answered {status} {title}: {details}")]
    Api {
        /// The operation (`operationId` of the OpenAPI document), e.g. `startProcessing`.
        operation: &'static str,
        /// The HTTP status (400, 401, 403, 404, 409, 422, 500, or another one a proxy sent).
        status: u16,
        /// The error body's `title` (the status's reason phrase when the body had none).
        title: String,
        /// The error body's `details` (empty when the body had none).
        details: String,
    },
    /// The request or its answer did not make it: no connection, a timeout, the
    /// connection broke, or the answer was cut off. See [`TransportKind`] for whether
    /// the request may have reached the service.
    #[error("{operation}: {kind}: {reason}")]
    Transport {
        /// The operation that was attempted.
        operation: &'static str,
        /// Where it failed.
        kind: TransportKind,
        /// What failed (the underlying errors, outermost first).
        reason: String,
        /// The HTTP client's error (its address removed), when there is one.
        #[source]
        source: Option<reqwest::Error>,
    },
    /// No access token could be had: the identity provider refused the API key and
    /// secret (`status` 400/401, `error` e.g. `invalid_grant`), failed, or could not be
    /// reached (`status` `None`). The secret is never part of it.
    #[error("authentication failed{}: {error}: {description}", status_text(*.status))]
    Authentication {
        /// The identity provider's HTTP status, `None` when it could not be reached.
        status: Option<u16>,
        /// The OAuth 2 error code (`invalid_grant`, `invalid_client`, …) or what failed.
        error: String,
        /// The identity provider's `error_description`, or what failed.
        description: String,
    },
    /// The service answered something this SDK cannot read.
    #[error("{operation}: unexpected answer from the service: {reason}")]
    InvalidResponse {
        /// The operation that was attempted.
        operation: &'static str,
        /// What could not be read.
        reason: String,
    },
    /// The request was refused before anything was sent: an argument over the service's
    /// limits (metadata, container file path, paging) or otherwise invalid. The service
    /// would have answered 422; nothing was sent.
    #[error("{operation}: invalid input: {reason}")]
    InvalidInput {
        /// The operation that was refused.
        operation: &'static str,
        /// Which argument is wrong, and why, naming the offending key or path.
        reason: String,
        /// The limit that was exceeded, when it is one of [`crate::limits`].
        limit: Option<LimitError>,
    },
    /// A setting of the client is missing or invalid (see
    /// [`CloudConfig`](super::CloudConfig)).
    #[error("invalid configuration: {setting} {reason}")]
    Config {
        /// The setting: the environment variable (`SVC_BASE_URL`) or the field (`base_url`).
        setting: String,
        /// What is wrong with it (never its value when it is the secret).
        reason: String,
        /// Whether the setting was not given at all (an environment variable not set or
        /// empty), as opposed to given with an invalid value.
        missing: bool,
    },
}

fn status_text(status: Option<u16>) -> String {
    match status {
        Some(s) => format!(" (identity provider answered {s})"),
        None => String::new(),
    }
}

/// Where a request failed on its way (see [`CloudError::Transport`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransportKind {
    /// No connection could be made: the request provably did not reach the service.
    Connect,
    /// The request or its answer took longer than the request timeout; the service may
    /// have received and applied it.
    Timeout,
    /// The service answered but the answer broke off: the service received the request
    /// (and, for a creation, most likely applied it).
    Interrupted,
    /// The connection failed after the request was (at least partly) sent; the service
    /// may have received it.
    Other,
}

impl TransportKind {
    /// Whether the request may have reached the service (everything but [`Self::Connect`]).
    pub fn may_have_reached_service(self) -> bool {
        self != Self::Connect
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Connect => "could not connect to the service",
            Self::Timeout => "the request timed out",
            Self::Interrupted => "the answer was cut off",
            Self::Other => "the connection failed",
        })
    }
}

/// Whether repeating a failed request can help, per the specification's error table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RetryHint {
    /// A transient failure — 500 (and other 5xx), 429, a transport error, a timeout:
    /// repeating the same request is reasonable. The client already retried it where
    /// that was safe (see [`CloudClient`](super::CloudClient)).
    Transient,
    /// 404: the resource cannot be found; it may exist later, so repeating is allowed,
    /// but the client never does so by itself.
    Allowed,
    /// 400, 409, 422, or a request refused before sending: repeat only after changing
    /// the request or resolving the conflict.
    AfterChange,
    /// 401 (the client already obtained a new token and repeated once), 403, refused
    /// credentials, an unreadable answer: repeating cannot help.
    Never,
}

impl CloudError {
    /// The HTTP status the service answered, when it answered with an error status.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The error body's `title`, when the service answered with an error status.
    pub fn title(&self) -> Option<&str> {
        match self {
            Self::Api { title, .. } => Some(title),
            _ => None,
        }
    }

    /// The error body's `details`, when the service answered with an error status.
    pub fn details(&self) -> Option<&str> {
        match self {
            Self::Api { details, .. } => Some(details),
            _ => None,
        }
    }

    /// The operation (`operationId`) that failed, when there was one.
    pub fn operation(&self) -> Option<&'static str> {
        match self {
            Self::Api { operation, .. }
            | Self::Transport { operation, .. }
            | Self::InvalidResponse { operation, .. }
            | Self::InvalidInput { operation, .. } => Some(operation),
            Self::Authentication { .. } | Self::Config { .. } => None,
        }
    }

    /// What kind of failure this is (shared with the other subsystems, the CLI's exit
    /// codes and the bindings). An identity provider that cannot be reached is
    /// [`ErrorKind::Unreachable`] and one that fails (5xx) [`ErrorKind::Transient`],
    /// never [`ErrorKind::Authentication`], which is kept for refused credentials. A
    /// request without an answer within the request timeout is [`ErrorKind::Timeout`],
    /// as a unit's is ([`side`](Self::side) says which side did not answer).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Api { status, .. } => ErrorKind::from_status(*status),
            Self::Transport { kind, .. } => match kind {
                TransportKind::Timeout => ErrorKind::Timeout,
                _ => ErrorKind::Unreachable,
            },
            Self::Authentication { status: None, .. } => ErrorKind::Unreachable,
            Self::Authentication {
                status: Some(s), ..
            } => match ErrorKind::from_status(*s) {
                ErrorKind::Transient => ErrorKind::Transient,
                _ => ErrorKind::Authentication,
            },
            Self::InvalidResponse { .. } => ErrorKind::InvalidResponse,
            Self::InvalidInput { .. } | Self::Config { .. } => ErrorKind::InvalidInput,
        }
    }

    /// Which side failed: the identity provider for its discovery and token requests,
    /// the service for every other request; `None` for a request refused before
    /// sending or a setting of the client.
    pub fn side(&self) -> Option<Side> {
        match self {
            Self::Api { operation, .. }
            | Self::Transport { operation, .. }
            | Self::InvalidResponse { operation, .. } => Some(
                if [super::auth::DISCOVERY, super::auth::TOKEN].contains(operation) {
                    Side::IdentityProvider
                } else {
                    Side::Service
                },
            ),
            Self::Authentication { .. } => Some(Side::IdentityProvider),
            Self::InvalidInput { .. } | Self::Config { .. } => None,
        }
    }

    /// Whether repeating can help, and how (see [`RetryHint`]).
    pub fn retry_hint(&self) -> RetryHint {
        match self {
            Self::Api { status, .. } => hint_for_status(*status),
            Self::Transport { .. } => RetryHint::Transient,
            Self::Authentication { status, .. } => match status {
                None => RetryHint::Transient,
                Some(s) if *s >= 500 || *s == 429 || *s == 408 => RetryHint::Transient,
                Some(_) => RetryHint::Never,
            },
            Self::InvalidResponse { .. } => RetryHint::Never,
            Self::InvalidInput { .. } | Self::Config { .. } => RetryHint::AfterChange,
        }
    }

    /// Whether repeating the same request unchanged can help: a transient failure
    /// (5xx, 429, a transport error, a timeout), as [`ErrorKind::is_retryable`] decides
    /// for every error of the SDK. 400, 401, 403, 404, 409 and 422 need a change first
    /// (a 404 may be worth asking again once the resource exists: see
    /// [`RetryHint::Allowed`]).
    pub fn is_retryable(&self) -> bool {
        self.kind().is_retryable()
    }

    /// A refused argument (nothing sent).
    pub(crate) fn invalid_input(
        operation: &'static str,
        at: Option<&str>,
        limit: LimitError,
    ) -> Self {
        let reason = match at {
            Some(at) => format!("{at}: {limit}"),
            None => limit.to_string(),
        };
        Self::InvalidInput {
            operation,
            reason,
            limit: Some(limit),
        }
    }

    /// Maps an error of the generated clients; every variant is handled.
    pub(crate) async fn from_client(operation: &'static str, e: ClientError) -> Self {
        use svc_cloud_api::cloud::Error as E;
        match e {
            E::ErrorResponse(body) => {
                let status = body.status().as_u16();
                let body = body.into_inner();
                Self::Api {
                    operation,
                    status,
                    title: body.title,
                    details: body.details,
                }
            }
            E::CommunicationError(e) | E::InvalidUpgrade(e) => Self::Transport {
                operation,
                kind: classify(&e),
                reason: transport_reason(&e),
                source: Some(e.without_url()),
            },
            E::ResponseBodyError(e) => Self::Transport {
                operation,
                kind: if e.is_timeout() {
                    TransportKind::Timeout
                } else {
                    TransportKind::Interrupted
                },
                reason: transport_reason(&e),
                source: Some(e.without_url()),
            },
            // The body is not quoted: it may hold a secret (a webhook endpoint's).
            // Nor is serde's message, which quotes the value it could not read.
            E::InvalidResponsePayload(_, e) => Self::InvalidResponse {
                operation,
                reason: format!(
                    "the answer does not match the documented body ({} at line {}, column {})",
                    match e.classify() {
                        serde_json::error::Category::Io => "read error",
                        serde_json::error::Category::Syntax => "not JSON",
                        serde_json::error::Category::Data => "missing or mistyped fields",
                        serde_json::error::Category::Eof => "truncated JSON",
                    },
                    e.line(),
                    e.column()
                ),
            },
            E::UnexpectedResponse(response) => unexpected(operation, response).await,
            E::InvalidRequest(reason) => Self::InvalidInput {
                operation,
                reason,
                limit: None,
            },
            // Only the request hook fails this way: no access token could be had.
            E::Custom(reason) => Self::Authentication {
                status: None,
                error: "no_access_token".to_owned(),
                description: reason,
            },
        }
    }
}

fn hint_for_status(status: u16) -> RetryHint {
    match status {
        408 | 429 | 500..=599 => RetryHint::Transient,
        404 => RetryHint::Allowed,
        400 | 409 | 422 => RetryHint::AfterChange,
        _ => RetryHint::Never,
    }
}

/// A status the document does not list for the operation (e.g. 503 from a gateway):
/// read as `{title, details}` when it is one, otherwise the reason phrase and the text.
async fn unexpected(operation: &'static str, response: reqwest::Response) -> CloudError {
    let status = response.status();
    if status.is_success() {
        return CloudError::InvalidResponse {
            operation,
            reason: format!("undocumented success status {}", status.as_u16()),
        };
    }
    let reason_phrase = status.canonical_reason().unwrap_or("Error").to_owned();
    let bytes = response.bytes().await.unwrap_or_default();
    let (title, details) = match serde_json::from_slice::<types::Error>(&bytes) {
        Ok(body) => (body.title, body.details),
        Err(_) => (
            reason_phrase,
            shorten(&String::from_utf8_lossy(&bytes), 500),
        ),
    };
    CloudError::Api {
        operation,
        status: status.as_u16(),
        title,
        details,
    }
}

pub(crate) fn shorten(text: &str, chars: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(chars) {
        None => text.to_owned(),
        Some((end, _)) => format!("{}…", &text[..end]),
    }
}

pub(crate) fn classify(e: &reqwest::Error) -> TransportKind {
    if e.is_connect() {
        TransportKind::Connect
    } else if e.is_timeout() {
        TransportKind::Timeout
    } else if e.is_body() || e.is_decode() {
        TransportKind::Interrupted
    } else {
        TransportKind::Other
    }
}

/// The HTTP client could not be built (reqwest: its TLS backend cannot be initialized,
/// e.g. no root certificate on the system).
pub(crate) fn http_client_error(e: &reqwest::Error) -> CloudError {
    CloudError::Config {
        setting: "http client".to_owned(),
        reason: transport_reason(e),
        missing: false,
    }
}

/// A transport error's text with its causes. It names the URL, which holds no secret
/// (tokens travel in a header); the error kept as the source goes without it, as in
/// [`TransferError`](crate::transfer::TransferError).
pub(crate) fn transport_reason(e: &reqwest::Error) -> String {
    crate::observe::causes(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn api(status: u16) -> CloudError {
        CloudError::Api {
            operation: "getContainer",
            status,
            title: "t".into(),
            details: "d".into(),
        }
    }

    #[test]
    fn hints_follow_the_error_table() {
        assert_eq!(api(500).retry_hint(), RetryHint::Transient);
        assert_eq!(api(503).retry_hint(), RetryHint::Transient);
        assert_eq!(api(404).retry_hint(), RetryHint::Allowed);
        for s in [400, 409, 422] {
            assert_eq!(api(s).retry_hint(), RetryHint::AfterChange, "{s}");
            assert!(!api(s).is_retryable());
        }
        for s in [401, 403] {
            assert_eq!(api(s).retry_hint(), RetryHint::Never, "{s}");
        }
        assert!(api(500).is_retryable() && !api(404).is_retryable());
        let auth = |status| CloudError::Authentication {
            status,
            error: "e".into(),
            description: "d".into(),
        };
        assert!(auth(None).is_retryable());
        assert!(auth(Some(502)).is_retryable());
        assert!(!auth(Some(401)).is_retryable());
    }
}
