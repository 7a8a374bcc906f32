//! [`ErrorKind`]: one classification of every error of the SDK, shared by the
//! command-line tool (its exit codes), the Python exceptions and the uniffi error enum.
//!
//! Each subsystem keeps its own error type with its own details ([`CloudError`],
//! [`UnitError`], [`WorkflowError`], [`TransferError`], [`WebhookError`],
//! [`SettingsError`], [`SerialError`], [`LimitError`]); each has a `kind()` saying which
//! of these few cases it is, so that a caller can react without matching every variant:
//! ask for new credentials, fix the input, wait and retry, report a conflict.
//!
//! [`CloudError`]: crate::cloud::CloudError
//! [`UnitError`]: crate::unit::UnitError
//! [`WorkflowError`]: crate::workflow::WorkflowError
//! [`TransferError`]: crate::transfer::TransferError
//! [`WebhookError`]: crate::webhook::WebhookError
//! [`SettingsError`]: crate::settings::SettingsError
//! [`SerialError`]: crate::serial::SerialError
//! [`LimitError`]: crate::limits::LimitError

// Defined in the protocol crate, whose codec and limit errors report it too.
pub use svc_protocol::error::ErrorKind;

/// Which side of the SDK an error came from: who did not answer in time, could not be
/// reached, or answered the failure. Every error type has a `side()`; `None` means the
/// failure is local (the SDK's own checks before sending, a local file, the caller).
///
/// With [`ErrorKind::Timeout`] it tells a request that got no answer in time from the
/// service apart from one that got none from the unit: the same kind, one side each.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Side {
    /// The cloud service (its REST interface and its processing).
    Service,
    /// The service's identity provider (discovery and token requests).
    IdentityProvider,
    /// The object storage that uploads and downloads go to.
    Storage,
    /// The unit, over HTTP, a serial link or its logger's FTP server.
    Unit,
}

impl Side {
    /// Every side, in declaration order.
    pub const ALL: [Side; 4] = [
        Self::Service,
        Self::IdentityProvider,
        Self::Storage,
        Self::Unit,
    ];

    /// A stable, language-neutral name: `service`, `identity_provider`, `storage`,
    /// `unit`. The bindings expose it as it is.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Service => "service",
            Self::IdentityProvider => "identity_provider",
            Self::Storage => "storage",
            Self::Unit => "unit",
        }
    }
}

impl std::fmt::Display for Side {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
