//! [`ErrorKind`]: one classification of every error of the SDK, shared by the
//! command-line tool (its exit codes), the Python exceptions and the uniffi error enum.
//!
//! It lives in the protocol crate because the codec's and the limits' errors
//! ([`SerialError`], [`LimitError`]) report it; the SDK's other error types (in
//! `svc-core`) report it too, each with a `kind()` saying which of these few cases it
//! is, so that a caller can react without matching every variant: ask for new
//! credentials, fix the input, wait and retry, report a conflict.
//!
//! [`SerialError`]: crate::serial::SerialError
//! [`LimitError`]: crate::limits::LimitError

use std::fmt;

/// What kind of failure an error is, whatever its subsystem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The credentials were refused: the identity provider refused the API key and
    /// secret, the service answered 401, the unit refused the user or password.
    Authentication,
    /// Known credentials without the right: 403 (not an organization administrator, a
    /// scope missing, no processing credit left, a unit user without the right).
    PermissionDenied,
    /// 404: the resource does not exist (it may exist later).
    NotFound,
    /// 409: the request conflicts with the current state (an ongoing processing, a file
    /// not uploaded yet, a path taken, the unit's settings locked by someone else).
    Conflict,
    /// The request is invalid: refused by the SDK's own checks before sending, or by
    /// the service or unit (400, 413, 422); a setting of the client is invalid; a
    /// settings tree or node path is invalid. Change the request before repeating it.
    InvalidInput,
    /// The service, identity provider, storage or unit could not be reached, or the
    /// connection broke: repeating later may help.
    Unreachable,
    /// A transient failure of the other side: 5xx, 429, storage failing until the
    /// retries were used up. Repeating later may help.
    Transient,
    /// The caller canceled the operation.
    Canceled,
    /// A wait ran out: a request of the service, its identity provider or the unit
    /// without an answer within its timeout (the same kind whichever side was silent:
    /// each error's `side()` says which), a processing still not ended after the follow
    /// timeout, a unit still not back after a reboot, an organization still busy.
    Timeout,
    /// The other side answered something the SDK cannot read (or did not do what it
    /// acknowledged, e.g. settings that differ after a write).
    InvalidResponse,
    /// A webhook delivery failed its verification (header, timestamp, signature), or
    /// a storage form or address was refused as modified or expired.
    Verification,
    /// A local file could not be read or written.
    Io,
    /// A bug of the SDK (a task that ended abnormally).
    Internal,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 13] = [
        Self::Authentication,
        Self::PermissionDenied,
        Self::NotFound,
        Self::Conflict,
        Self::InvalidInput,
        Self::Unreachable,
        Self::Transient,
        Self::Canceled,
        Self::Timeout,
        Self::InvalidResponse,
        Self::Verification,
        Self::Io,
        Self::Internal,
    ];

    /// A stable, language-neutral name: `authentication`, `permission_denied`,
    /// `not_found`, `conflict`, `invalid_input`, `unreachable`, `transient`, `canceled`,
    /// `timeout`, `invalid_response`, `verification`, `io`, `internal`. The bindings
    /// expose it as it is.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Authentication => "authentication",
            Self::PermissionDenied => "permission_denied",
            Self::NotFound => "not_found",
            Self::Conflict => "conflict",
            Self::InvalidInput => "invalid_input",
            Self::Unreachable => "unreachable",
            Self::Transient => "transient",
            Self::Canceled => "canceled",
            Self::Timeout => "timeout",
            Self::InvalidResponse => "invalid_response",
            Self::Verification => "verification",
            Self::Io => "io",
            Self::Internal => "internal",
        }
    }

    /// The kind of an HTTP error status of the service or the unit.
    #[must_use]
    pub fn from_status(status: u16) -> Self {
        match status {
            401 => Self::Authentication,
            403 => Self::PermissionDenied,
            404 => Self::NotFound,
            409 => Self::Conflict,
            408 | 429 => Self::Transient,
            s if s >= 500 => Self::Transient,
            _ => Self::InvalidInput,
        }
    }

    /// Whether repeating the same request later, unchanged, may succeed (the other
    /// side unreachable or failing for a while).
    #[must_use]
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Unreachable | Self::Transient)
    }

    /// Whether an error of this kind is worth repeating unchanged, later: the one rule
    /// behind every error's `retryable` (cloud, unit, transfer, workflow), whatever its
    /// source. The other side was unreachable or failing ([`is_transient`](Self::is_transient)),
    /// or a wait ran out (a processing still running, a unit still rebooting). Never a
    /// 404, a conflict, a refusal or invalid input: those need a change first.
    #[must_use]
    pub fn is_retryable(self) -> bool {
        self.is_transient() || self == Self::Timeout
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorKind;

    #[test]
    fn names_are_distinct_and_stable() {
        let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len());
        assert_eq!(ErrorKind::PermissionDenied.to_string(), "permission_denied");
    }

    #[test]
    fn statuses_map_to_kinds() {
        assert_eq!(ErrorKind::from_status(401), ErrorKind::Authentication);
        assert_eq!(ErrorKind::from_status(403), ErrorKind::PermissionDenied);
        assert_eq!(ErrorKind::from_status(404), ErrorKind::NotFound);
        assert_eq!(ErrorKind::from_status(409), ErrorKind::Conflict);
        assert_eq!(ErrorKind::from_status(413), ErrorKind::InvalidInput);
        assert_eq!(ErrorKind::from_status(422), ErrorKind::InvalidInput);
        assert_eq!(ErrorKind::from_status(429), ErrorKind::Transient);
        assert_eq!(ErrorKind::from_status(503), ErrorKind::Transient);
        assert!(ErrorKind::Unreachable.is_transient());
        assert!(!ErrorKind::Conflict.is_transient());
    }
}
