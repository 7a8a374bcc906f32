//! [`UnitError`]: what went wrong talking to a unit, built from the generated client's
//! errors, and what of it may be logged.

use ins_device_api::types;

use crate::error::{ErrorKind, Side};

/// One invalid node of a refused settings write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeError {
    /// The node, e.g. `aiding/gnss1/leverArmPrimary`.
    pub path: String,
    /// Why the unit refused it.
    pub message: String,
}

/// What went wrong talking to a unit. The token and passwords never appear in it.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum UnitError {
    /// The unit answered with an error status and its error body.
    #[error("{operation}: the unit answered {status} {title}: {detail}{}", node_list(.errors))]
    Api {
        /// The operation (`operationId` of the document), e.g. `updateSettings`.
        operation: &'static str,
        /// The unit's status (400, 401, 403, 404, 409, 422, 500).
        status: u16,
        /// The error body's `title`.
        title: String,
        /// The error body's `detail`.
        detail: String,
        /// For a refused settings write (422): every invalid node.
        errors: Vec<NodeError>,
    },
    /// The unit could not be reached, the link broke (connection refused while it
    /// reboots, a serial framing failure), or the unit did not answer within the
    /// request's deadline (`timed_out`: kind [`Timeout`](ErrorKind::Timeout), as a
    /// service's request timeout is; otherwise [`Unreachable`](ErrorKind::Unreachable)).
    /// Either way the request may have reached the unit.
    #[error("{operation}: {}: {reason}", if *.timed_out { "the unit did not answer in time" } else { "the unit could not be reached" })]
    Unreachable {
        /// The operation that was attempted.
        operation: &'static str,
        /// What failed, without the token.
        reason: String,
        /// Whether the unit stayed silent until the deadline (HTTP request timeout,
        /// serial answer timeout) rather than the link failing.
        timed_out: bool,
        /// The HTTP client's error (the token redacted from its address), when there is
        /// one (not over a serial link).
        #[source]
        source: Option<reqwest::Error>,
    },
    /// The unit answered something this SDK cannot read.
    #[error("{operation}: unexpected answer from the unit: {reason}")]
    InvalidResponse {
        /// The operation that was attempted.
        operation: &'static str,
        /// What could not be read.
        reason: String,
    },
    /// The request was refused before it was sent (an invalid argument).
    #[error("{operation}: invalid request: {reason}")]
    InvalidRequest {
        /// The operation that was refused.
        operation: &'static str,
        /// Which argument is wrong, and why.
        reason: String,
    },
    /// A settings tree (or node) refused before it was sent: every node the settings
    /// schema refuses (a value of the wrong type or shape, a key it does not define), as
    /// the unit's own 422 lists them ([`UnitError::node_errors`]), never the values.
    #[error("{operation}: the settings tree was refused before sending{}", node_list(.errors))]
    InvalidSettings {
        /// The operation that was refused.
        operation: &'static str,
        /// Every refused node.
        errors: Vec<NodeError>,
    },
    /// Applying a wanted tree: the unit's tree differs from the wanted one after writing.
    #[error("the unit's settings differ from the wanted ones after writing, at: {}", .paths.join(", "))]
    NotApplied {
        /// The nodes whose read-back value differs from the wanted one.
        paths: Vec<String>,
    },
    /// [`Unit::wait_until_back`](super::Unit::wait_until_back): the unit still did not
    /// answer when the time given ran out.
    #[error("the unit was not back after {} ms: {last}", .waited.as_millis())]
    NotBack {
        /// How long it was waited for.
        waited: std::time::Duration,
        /// The last failure of the unit's answer (unreachable while it reboots).
        last: Box<UnitError>,
    },
    /// A reboot whose answer was lost, and the unit was not seen to reboot: it answers
    /// and still knows the session's token of before (tokens end at a reboot), or it
    /// did not answer again in time. It may not have rebooted: reboot it again.
    #[error("reboot: not confirmed: {reason}")]
    RebootNotConfirmed {
        /// What was seen instead.
        reason: String,
    },
    /// [`Unit::wait_ready`](super::Unit::wait_ready): the unit's output logs did not
    /// say it was ready to log in time (or their stream ended); what was missing.
    #[error("wait_ready: {0}")]
    NotReady(Box<crate::live::NotReady>),
    /// What the unit sent could not be saved locally (an export to a file), or the
    /// session's [`Journal`](super::Journal) could not be read or written.
    #[error("{operation}: {reason}")]
    Io {
        /// The operation whose result was being saved.
        operation: &'static str,
        /// The file and what the system said.
        reason: String,
    },
}

fn node_list(errors: &[NodeError]) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let list: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    format!(" [{}]", list.join("; "))
}

impl UnitError {
    /// The unit's HTTP-like status, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The invalid nodes of a refused settings write, by the unit or before sending
    /// (empty otherwise).
    pub fn node_errors(&self) -> &[NodeError] {
        match self {
            Self::Api { errors, .. } | Self::InvalidSettings { errors, .. } => errors,
            _ => &[],
        }
    }

    /// What kind of failure this is (shared with the other subsystems and the bindings).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Api { status, .. } => ErrorKind::from_status(*status),
            Self::Unreachable {
                timed_out: true, ..
            } => ErrorKind::Timeout,
            Self::Unreachable { .. } | Self::RebootNotConfirmed { .. } => ErrorKind::Unreachable,
            Self::InvalidResponse { .. } | Self::NotApplied { .. } => ErrorKind::InvalidResponse,
            Self::InvalidRequest { .. } | Self::InvalidSettings { .. } => ErrorKind::InvalidInput,
            Self::NotBack { .. } => ErrorKind::Timeout,
            Self::NotReady(not) if not.closed.is_some() => ErrorKind::Unreachable,
            Self::NotReady(_) => ErrorKind::Timeout,
            Self::Io { .. } => ErrorKind::Io,
        }
    }

    /// Which side failed: the unit, except for a request refused before sending and a
    /// local file (`None`).
    pub fn side(&self) -> Option<Side> {
        match self {
            Self::InvalidRequest { .. } | Self::InvalidSettings { .. } | Self::Io { .. } => None,
            _ => Some(Side::Unit),
        }
    }

    /// Whether repeating the same request can help (the specification's error table:
    /// 500 — "retry reasonable" — and an unreachable unit, e.g. while it reboots), as
    /// [`ErrorKind::is_retryable`] decides for every error of the SDK. 400, 401, 403,
    /// 404, 409 and 422 need a change first.
    pub fn is_retryable(&self) -> bool {
        self.kind().is_retryable()
    }

    pub(super) fn from_client(
        operation: &'static str,
        e: ins_device_api::Error<types::Error>,
    ) -> Self {
        use ins_device_api::Error as E;
        match e {
            E::ErrorResponse(body) => {
                let status = body.status().as_u16();
                let body = body.into_inner();
                UnitError::Api {
                    operation,
                    status,
                    title: body.title,
                    detail: body.detail,
                    errors: body
                        .errors
                        .into_iter()
                        .map(|e| NodeError {
                            path: e.path,
                            message: e.message,
                        })
                        .collect(),
                }
            }
            E::CommunicationError(e) | E::ResponseBodyError(e) | E::InvalidUpgrade(e) => {
                UnitError::Unreachable {
                    operation,
                    reason: transport_reason(&e),
                    timed_out: e.is_timeout(),
                    source: Some(e),
                }
            }
            E::Custom(custom) => {
                let (reason, timed_out) =
                    ins_device_api::hooks::ExchangeError::from_custom(&custom);
                UnitError::Unreachable {
                    operation,
                    reason: reason.to_owned(),
                    timed_out,
                    source: None,
                }
            }
            // The decoder's message without the values it quotes (a password).
            E::InvalidResponsePayload(_, e) => UnitError::InvalidResponse {
                operation,
                reason: crate::observe::without_values(&e.to_string()),
            },
            E::UnexpectedResponse(r) => UnitError::InvalidResponse {
                operation,
                reason: format!(
                    "status {} is not documented for this operation",
                    r.status().as_u16()
                ),
            },
            E::InvalidRequest(reason) => UnitError::InvalidRequest { operation, reason },
        }
    }
}

/// A transport error's text; its URL is already redacted by the client hooks.
fn transport_reason(e: &reqwest::Error) -> String {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason.push_str(": ");
        reason.push_str(&s.to_string());
        source = s.source();
    }
    reason
}

/// What may be logged of a unit error: the status, title and invalid node paths of an
/// answer, the reason of an unreachable unit (token-free) — never the unit's detail or
/// node messages, nor a decoder's text, which could quote a settings value (a password).
pub(super) fn loggable(e: &UnitError) -> String {
    match e {
        UnitError::Api {
            status,
            title,
            errors,
            ..
        } => {
            let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
            if paths.is_empty() {
                format!("the unit answered {status} {title}")
            } else {
                format!(
                    "the unit answered {status} {title}; invalid nodes: {}",
                    paths.join(", ")
                )
            }
        }
        UnitError::Unreachable { reason, .. } => format!("unreachable: {reason}"),
        UnitError::InvalidResponse { .. } => "an unreadable answer".to_owned(),
        UnitError::InvalidRequest { .. } => "an invalid request (not sent)".to_owned(),
        UnitError::InvalidSettings { errors, .. } => {
            let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
            format!(
                "a settings tree refused before sending; invalid nodes: {}",
                paths.join(", ")
            )
        }
        UnitError::NotReady(not) => not.to_string(),
        UnitError::NotApplied { paths } => {
            format!("not applied at: {}", paths.join(", "))
        }
        UnitError::NotBack { waited, last } => {
            format!(
                "not back after {} ms: {}",
                waited.as_millis(),
                loggable(last)
            )
        }
        UnitError::RebootNotConfirmed { reason } => format!("reboot not confirmed: {reason}"),
        UnitError::Io { .. } => "a local file error".to_owned(),
    }
}
