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
