//! [`SvcError`]: every error of the SDK as one enum, a variant per
//! [`ErrorKind`](svc_core::ErrorKind), each carrying what the subsystem's error knows.
//!
//! No field holds a secret: svc-core's errors never carry the API secret, a token, a
//! password or a webhook secret, and this module adds none.

use crate::types::Count;
use svc_core::ErrorKind as CoreKind;
use svc_core::cloud::CloudError;
use svc_core::settings::SettingsError;
use svc_core::transfer::TransferError;
use svc_core::unit::UnitError;
use svc_core::webhook::WebhookError;
use svc_core::workflow::WorkflowError;

/// One invalid node of a refused settings write (the unit's 422), or a node a
/// settings operation is about.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct NodeError {
    /// The node, e.g. `aiding/gnss1/leverArmPrimary`.
    pub path: String,
    /// Why it was refused.
    pub message: String,
}

/// What every variant of [`SvcError`] carries.
#[derive(Clone, Debug, Default)]
pub(crate) struct ErrorInfo {
    pub reason: String,
    pub status: Option<u16>,
    pub title: Option<String>,
    pub details: Option<String>,
    pub operation: Option<String>,
    pub code: Option<String>,
    pub container_id: Option<String>,
    pub processing_id: Option<String>,
    pub node_errors: Vec<NodeError>,
    pub retryable: bool,
    pub side: Option<String>,
}

macro_rules! svc_error {
    ($( $(#[$doc:meta])* $variant:ident ),+ $(,)?) => {
        /// The kind of an [`SvcError`] (`error.kind()`), one per variant: for a `when` /
        /// `switch` over kinds, or to compare with one.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, uniffi::Enum)]
        pub enum ErrorKind {
            $( $(#[$doc])* $variant, )+
        }

        /// Every error of the SDK: one variant per kind of failure (the shared
        /// `ErrorKind` of svc-core), each with the same fields, which the methods read
        /// whatever the variant (`error.kind()`, `error.status()`, `error.retryable()`,
        /// `error.title()`, `error.details()`, …):
        ///
        /// - `reason`: the whole message (named so because `message` is taken by
        ///   Kotlin's `Throwable`);
        /// - `status`, `title`, `details`: the HTTP status and error body of the
        ///   service or the unit, when it answered with an error;
        /// - `operation`: the `operationId` that failed;
        /// - `code`: a stable code of the subsystem (webhook verification:
        ///   `missing_header`, `invalid_timestamp`, `too_old`, `too_new`,
        ///   `bad_signature`, `invalid_payload`, `untyped_event` — with the signed
        ///   JSON in `details` —, `no_secret`);
        /// - `container_id`, `processing_id`: what a workflow had created;
        /// - `node_errors`: the invalid nodes of a refused settings write;
        /// - `retryable`: whether repeating the same request later may help;
        /// - `side`: which side failed (`service`, `identity_provider`, `storage`,
        ///   `unit`), none for a local failure.
        ///
        /// Its text is `reason` (Kotlin `toString()`, Swift `description` and
        /// `localizedDescription`).
        #[derive(Clone, Debug, thiserror::Error, uniffi::Error)]
        #[uniffi::export(Display)]
        pub enum SvcError {
            $(
                $(#[$doc])*
                #[error("{reason}")]
                $variant {
                    reason: String,
                    status: Option<Count>,
                    title: Option<String>,
                    details: Option<String>,
                    operation: Option<String>,
                    code: Option<String>,
                    container_id: Option<String>,
                    processing_id: Option<String>,
                    node_errors: Vec<NodeError>,
                    retryable: bool,
                    side: Option<String>,
                },
            )+
        }

        impl SvcError {
            pub(crate) fn new(kind: CoreKind, info: ErrorInfo) -> Self {
                let ErrorInfo {
                    reason, status, title, details, operation, code, container_id,
                    processing_id, node_errors, retryable, side,
                } = info;
                let status = status.map(|s| Count(i32::from(s)));
                match kind {
                    $( CoreKind::$variant => Self::$variant {
                        reason, status, title, details, operation, code, container_id,
                        processing_id, node_errors, retryable, side,
                    }, )+
                    // A kind added to svc-core later: an internal error until this
                    // crate names it.
                    _ => Self::Internal {
                        reason, status, title, details, operation, code, container_id,
                        processing_id, node_errors, retryable, side,
                    },
                }
            }

            /// The fields every variant has.
            fn info(&self) -> (ErrorKind, ErrorFields<'_>) {
                match self {
                    $( Self::$variant {
                        reason, status, title, details, operation, code, container_id,
                        processing_id, node_errors, retryable, side,
                    } => (ErrorKind::$variant, ErrorFields {
                        reason, status: *status, title, details, operation, code,
                        container_id, processing_id, node_errors, retryable: *retryable, side,
                    }), )+
                }
            }

            /// svc-core's kind of this error.
            pub fn core_kind(&self) -> CoreKind {
                match self {
                    $( Self::$variant { .. } => CoreKind::$variant, )+
                }
            }
        }
    };
}

/// The fields of a variant, borrowed.
struct ErrorFields<'a> {
    reason: &'a String,
    status: Option<Count>,
    title: &'a Option<String>,
    details: &'a Option<String>,
    operation: &'a Option<String>,
    code: &'a Option<String>,
    container_id: &'a Option<String>,
    processing_id: &'a Option<String>,
    node_errors: &'a Vec<NodeError>,
    retryable: bool,
    side: &'a Option<String>,
}

svc_error! {
    /// The credentials were refused (401, the identity provider, the unit's login).
    Authentication,
    /// Known credentials without the right (403).
    PermissionDenied,
    /// 404: the resource does not exist.
    NotFound,
    /// 409: the request conflicts with the current state (a lock, an ongoing processing).
    Conflict,
    /// The request is invalid (refused before sending, or 400/413/422).
    InvalidInput,
    /// The other side could not be reached or the connection broke.
    Unreachable,
    /// A transient failure of the other side (5xx, 429).
    Transient,
    /// The operation was cancelled.
    Canceled,
    /// A wait ran out: a request without an answer in time (`side` says whose), a
    /// processing not ended, a unit not back.
    Timeout,
    /// The other side answered something the SDK cannot read.
    InvalidResponse,
    /// A webhook delivery or a storage form failed its verification.
    Verification,
    /// A local file could not be read or written.
    Io,
    /// A bug of the SDK.
    Internal,
}

/// The fields every variant has, whatever the variant (in Kotlin, `e.kind()` on any
/// `SvcException`; in Swift, `error.kind()` on any `SvcError`); the error is still
/// matchable by variant.
#[uniffi::export]
impl SvcError {
    /// The kind of failure (one per variant).
    pub fn kind(&self) -> ErrorKind {
        self.info().0
    }

    /// The whole message.
    pub fn reason(&self) -> String {
        self.info().1.reason.clone()
    }

    /// The HTTP status the service or the unit answered, if any.
    pub fn status(&self) -> Option<Count> {
        self.info().1.status
    }

    /// Whether repeating the same request later may help.
    pub fn retryable(&self) -> bool {
        self.info().1.retryable
    }

    /// Which side failed: `service`, `identity_provider`, `storage` or `unit`; none for
    /// a local failure. A request without an answer in time is a `Timeout` whichever
    /// side was silent; this tells them apart.
    pub fn side(&self) -> Option<String> {
        self.info().1.side.clone()
    }

    /// The `title` of the error body the service or unit answered, if any.
    pub fn title(&self) -> Option<String> {
        self.info().1.title.clone()
    }

    /// The `details` of the error body (or the signed JSON of an `untyped_event`).
    pub fn details(&self) -> Option<String> {
        self.info().1.details.clone()
    }

    /// The `operationId` that failed, if known.
    pub fn operation(&self) -> Option<String> {
        self.info().1.operation.clone()
    }

    /// The subsystem's stable code, if any (webhook verification codes).
    pub fn code(&self) -> Option<String> {
        self.info().1.code.clone()
    }

    /// The container a workflow had created, if any.
    pub fn container_id(&self) -> Option<String> {
        self.info().1.container_id.clone()
    }

    /// The processing a workflow had started, if any.
    pub fn processing_id(&self) -> Option<String> {
        self.info().1.processing_id.clone()
    }

    /// The invalid nodes of a refused settings write.
    pub fn node_errors(&self) -> Vec<NodeError> {
        self.info().1.node_errors.clone()
    }
}

impl SvcError {
    /// svc-core's stable name of the kind (`conflict`, `invalid_input`, …).
    pub fn kind_name(&self) -> &'static str {
        self.core_kind().as_str()
    }

    pub(crate) fn of(kind: CoreKind, reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Self::new(
            kind,
            ErrorInfo {
                reason,
                retryable: kind.is_retryable(),
                ..ErrorInfo::default()
            },
        )
    }

    pub(crate) fn internal(reason: impl Into<String>) -> Self {
        Self::of(CoreKind::Internal, reason)
    }

    pub(crate) fn canceled(reason: impl Into<String>) -> Self {
        Self::of(CoreKind::Canceled, reason)
    }

    pub(crate) fn invalid(reason: impl Into<String>) -> Self {
        Self::of(CoreKind::InvalidInput, reason)
    }
}

/// What a progress listener threw. The SDK goes on with its work: a listener's failure
/// never ends a workflow or a transfer.
#[derive(Clone, Debug, thiserror::Error, uniffi::Error)]
pub enum ListenerError {
    /// The listener failed; `reason` is what the foreign exception said.
    #[error("{reason}")]
    Failed { reason: String },
}

/// A listener that throws any exception: an error value, never a panic in the SDK's
/// worker threads (an app's panic hook or crash reporter would record one).
impl From<uniffi::UnexpectedUniFFICallbackError> for ListenerError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Failed { reason: e.reason }
    }
}

/// Reports the first failure of a listener (at `warn`, without what it said: an app's
/// exception text may hold anything) and ignores the others.
pub(crate) fn listener_failed(what: &str, already: &std::sync::atomic::AtomicBool) {
    if !already.swap(true, std::sync::atomic::Ordering::Relaxed) {
        tracing::warn!("a {what} progress listener threw; its later failures are ignored too");
    }
}

/// A foreign callback failed with an exception it did not declare.
impl From<uniffi::UnexpectedUniFFICallbackError> for SvcError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::internal(format!("a callback failed: {}", e.reason))
    }
}

impl From<CloudError> for SvcError {
    fn from(e: CloudError) -> Self {
        Self::new(
            e.kind(),
            ErrorInfo {
                reason: e.to_string(),
                status: e.status(),
                title: e.title().map(str::to_owned),
                details: e.details().map(str::to_owned),
                operation: e.operation().map(str::to_owned),
                retryable: e.is_retryable(),
                side: e.side().map(|side| side.as_str().to_owned()),
                ..ErrorInfo::default()
            },
        )
    }
}

impl From<UnitError> for SvcError {
    fn from(e: UnitError) -> Self {
        let (operation, title, details) = match &e {
            UnitError::Api {
                operation,
                title,
                detail,
                ..
            } => (
                Some((*operation).to_owned()),
                Some(title.clone()),
                Some(detail.clone()),
            ),
            UnitError::Unreachable { operation, .. }
            | UnitError::InvalidResponse { operation, .. }
            | UnitError::InvalidRequest { operation, .. }
            | UnitError::InvalidSettings { operation, .. } => {
                (Some((*operation).to_owned()), None, None)
            }
            UnitError::NotReady(not) => (
                Some("waitReady".to_owned()),
                None,
                Some(not.missing.join("; ")),
            ),
            _ => (None, None, None),
        };
        let node_errors = match &e {
            UnitError::NotApplied { paths } => paths
                .iter()
                .map(|path| NodeError {
                    path: path.clone(),
                    message: "differs from the wanted value after writing".to_owned(),
                })
                .collect(),
            _ => e
                .node_errors()
                .iter()
                .map(|n| NodeError {
                    path: n.path.clone(),
                    message: n.message.clone(),
                })
                .collect(),
        };
        Self::new(
            e.kind(),
            ErrorInfo {
                reason: e.to_string(),
                status: e.status(),
                title,
                details,
                operation,
                node_errors,
                retryable: e.is_retryable(),
                side: e.side().map(|side| side.as_str().to_owned()),
                ..ErrorInfo::default()
            },
        )
    }
}

impl From<WorkflowError> for SvcError {
    fn from(e: WorkflowError) -> Self {
        let cloud = e.cloud_error();
        Self::new(
            e.kind(),
            ErrorInfo {
                reason: e.to_string(),
                status: cloud.and_then(CloudError::status),
                title: cloud.and_then(CloudError::title).map(str::to_owned),
                details: cloud.and_then(CloudError::details).map(str::to_owned),
                operation: cloud.and_then(CloudError::operation).map(str::to_owned),
                container_id: e.container_id().map(|id| id.to_string()),
                processing_id: e.processing_id().map(|id| id.to_string()),
                retryable: e.kind().is_retryable(),
                side: e.side().map(|side| side.as_str().to_owned()),
                ..ErrorInfo::default()
            },
        )
    }
}

/// An HTTP client that cannot be built with the TLS roots asked for.
impl From<svc_core::http::HttpClientError> for SvcError {
    fn from(e: svc_core::http::HttpClientError) -> Self {
        Self::invalid(e.to_string())
    }
}

/// An error of the unit's logger files (FTP): the FTP reply code of a refused command
/// as `status` (530, 550), the command as `operation`.
impl From<svc_core::unit::LoggerError> for SvcError {
    fn from(e: svc_core::unit::LoggerError) -> Self {
        use svc_core::unit::LoggerError;
        let e = match e {
            LoggerError::Unit(e) => return e.into(),
            e => e,
        };
        let operation = match &e {
            LoggerError::Refused { command, .. } => Some((*command).to_owned()),
            _ => None,
        };
        Self::new(
            e.kind(),
            ErrorInfo {
                reason: e.to_string(),
                status: e.code().and_then(|code| u16::try_from(code).ok()),
                operation,
                retryable: e.kind().is_retryable(),
                side: e.side().map(|side| side.as_str().to_owned()),
                ..ErrorInfo::default()
            },
        )
    }
}

/// A transfer error; the service's fields when the service did not give what was to
/// be transferred.
impl From<TransferError> for SvcError {
    fn from(e: TransferError) -> Self {
        let cloud = e.cloud_error();
        Self::new(
            e.kind(),
            ErrorInfo {
                reason: e.to_string(),
                status: cloud.and_then(CloudError::status),
                title: cloud.and_then(CloudError::title).map(str::to_owned),
                details: cloud.and_then(CloudError::details).map(str::to_owned),
                operation: cloud.and_then(CloudError::operation).map(str::to_owned),
                retryable: e.kind().is_retryable(),
                side: e.side().map(|side| side.as_str().to_owned()),
                ..ErrorInfo::default()
            },
        )
    }
}

impl From<WebhookError> for SvcError {
    fn from(e: WebhookError) -> Self {
        // An authentic event this SDK cannot type: its JSON, as it came, in `details`.
        let details = match &e {
            WebhookError::UntypedEvent { raw, .. } => Some(raw.to_string()),
            _ => None,
        };
        Self::new(
            e.kind(),
            ErrorInfo {
                reason: e.to_string(),
                code: Some(e.code().to_owned()),
                details,
                ..ErrorInfo::default()
            },
        )
    }
}

impl From<SettingsError> for SvcError {
    fn from(e: SettingsError) -> Self {
        let reason = e.to_string();
        let node_errors = e
            .paths()
            .into_iter()
            .map(|path| NodeError {
                path,
                message: reason.clone(),
            })
            .collect();
        Self::new(
            e.kind(),
            ErrorInfo {
                reason,
                node_errors,
                ..ErrorInfo::default()
            },
        )
    }
}

/// A JSON argument that cannot be read: the parser's line and column, never the text.
pub(crate) fn json_error(what: &str, e: &serde_json::Error) -> SvcError {
    SvcError::invalid(format!(
        "{what} is not valid JSON ({:?} at line {}, column {})",
        e.classify(),
        e.line(),
        e.column()
    ))
}

/// An identifier argument that is not a UUID (the value is quoted: identifiers are
/// not secrets; it is shortened).
pub(crate) fn parse_id(what: &str, value: &str) -> Result<uuid::Uuid, SvcError> {
    value.trim().parse().map_err(|_| {
        let shown: String = value.chars().take(64).collect();
        SvcError::invalid(format!("{what} is not a UUID: {shown:?}"))
    })
}
