//! [`TransferError`], what storage said when it refused, and the redaction of signed
//! addresses.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use super::TransferReport;
use crate::cloud::CloudError;
use crate::error::ErrorKind;
use crate::observe::{error_chain, redact_url};

/// Why [`super::TransferHandle::wait`] failed, or why one file failed.
///
/// Problems found before anything is sent (a local size that differs from the
/// registered one, an unsafe output path, an unusable upload form) come back as they
/// are: nothing was transferred. Failures during the transfer come back as
/// [`TransferError::Failed`], which lists every failed file with its own error and
/// carries the report of the files that succeeded; [`TransferError::failures`] gives
/// that list either way.
///
/// Messages name the file. They never hold a signed address as it is: the values of
/// `X-Amz-Signature`, `X-Amz-Credential` and `X-Amz-Security-Token` are replaced by
/// `[redacted]` ([`redact_url`]).
///
/// Cheap to clone (the system's and the HTTP client's errors are shared), so that every
/// waiter of a transfer gets its error.
#[non_exhaustive]
#[derive(Clone, Debug, thiserror::Error)]
pub enum TransferError {
    /// The local file of an upload cannot be read: missing, not a regular file, or a
    /// read failed. Not retried.
    #[error("cannot read `{}`: {source}", file.display())]
    LocalFile {
        /// The local file.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },

    /// The local file's size differs from the size registered for it (the upload form
    /// only accepts that exact length). Nothing was sent: register the file again with
    /// its real size, or upload the right file.
    #[error(
        "`{}` holds {actual} bytes but {registered} bytes were registered for `{name}`; nothing was sent",
        file.display()
    )]
    SizeMismatch {
        /// The local file.
        file: PathBuf,
        /// The file's path in its container.
        name: String,
        /// The size registered for it.
        registered: u64,
        /// The local file's size.
        actual: u64,
    },

    /// The upload form cannot be sent as it is: a field name is empty or cannot be
    /// written in a form, or a field is named `file`. Nothing was sent.
    #[error("the upload form of `{file}` cannot be used: {reason}")]
    InvalidUploadForm {
        /// The file's path in its container.
        file: String,
        /// What is wrong (addresses redacted).
        reason: String,
    },

    /// An upload form's or output's address is not an `http(s)` URL. Nothing was sent.
    #[error("the address of `{file}` cannot be used ({address}): {reason}")]
    InvalidAddress {
        /// The file's container path (upload) or output path (download).
        file: String,
        /// The address, its signature and credential redacted.
        address: String,
        /// What is wrong with it.
        reason: String,
    },

    /// Storage answered 403 to an upload: a form field is missing or was modified, the
    /// signature does not match, or the form has expired. Not retried: read the
    /// container again (or list its files) for a fresh `uploadInfo`.
    #[error(
        "storage refused the upload of `{file}`: {reason} ({storage_message}); read the container again for a fresh upload form"
    )]
    UploadRefused {
        /// The file's path in its container.
        file: String,
        /// The explanation: "the upload form was modified or has expired".
        reason: &'static str,
        /// Storage's own message (its `<Message>`).
        storage_message: String,
    },

    /// Storage answered 403 to a download: the pre-signed address has expired or was
    /// modified. Not retried: list the processing's outputs again for fresh addresses.
    #[error(
        "storage refused the download of `{file}`: the download address has expired or was modified ({storage_message}); list the outputs again for fresh addresses"
    )]
    DownloadRefused {
        /// The output's path.
        file: String,
        /// Storage's own message.
        storage_message: String,
    },

    /// Storage rejected the request with another 4xx status, e.g. 400 when an upload's
    /// length differs from the registered size or the form is malformed, 411 without a
    /// `Content-Length`, 404 for an unknown bucket or object. Retrying unchanged cannot
    /// help, so it is not retried.
    #[error("storage rejected `{file}` with {status} {code}: {reason} ({storage_message})")]
    Rejected {
        /// The file's container path (upload) or output path (download).
        file: String,
        /// The HTTP status.
        status: u16,
        /// Storage's error code (`<Code>`), empty when there was none.
        code: String,
        /// What the status means here.
        reason: &'static str,
        /// Storage's own message.
        storage_message: String,
    },

    /// Storage kept failing (5xx, 408 or 429) until the retries were used up.
    #[error(
        "storage failed on `{file}` with {status} {code} after {attempts} attempt(s): {storage_message}"
    )]
    Storage {
        /// The file's container path (upload) or output path (download).
        file: String,
        /// The last HTTP status.
        status: u16,
        /// Storage's last error code, empty when there was none.
        code: String,
        /// Storage's last message.
        storage_message: String,
        /// Attempts made, the first included.
        attempts: u32,
    },

    /// The connection failed, timed out, broke, or stalled (no byte moved for the
    /// idle timeout) until the retries were used up.
    #[error("the transfer of `{file}` failed after {attempts} attempt(s): {reason}")]
    Network {
        /// The file's container path (upload) or output path (download).
        file: String,
        /// What went wrong the last time.
        reason: String,
        /// Attempts made, the first included.
        attempts: u32,
        /// The HTTP client's error (its address removed), when there is one.
        #[source]
        source: Option<Arc<reqwest::Error>>,
    },

    /// A download's body was shorter or longer than its `Content-Length`, until the
    /// retries were used up.
    #[error(
        "the download of `{file}` received {received} bytes instead of {expected}, after {attempts} attempt(s)"
    )]
    Incomplete {
        /// The output's path.
        file: String,
        /// The announced length.
        expected: u64,
        /// The bytes received by the last attempt.
        received: u64,
        /// Attempts made, the first included.
        attempts: u32,
    },

    /// An output path would escape the download folder, or cannot be a file name
    /// there (absolute, `..`, empty, backslash, drive prefix, NUL, a path given twice,
    /// or a folder reached through a link that leads outside). Checked before
    /// anything is downloaded or written.
    #[error("refused output path {path:?}: {reason}")]
    UnsafeOutputPath {
        /// The output path as the service gave it.
        path: String,
        /// Why it is refused.
        reason: &'static str,
    },

    /// A downloaded file cannot be written (folder creation, temporary file, write,
    /// rename). Not retried.
    #[error("cannot write `{}`: {source}", file.display())]
    LocalWrite {
        /// The file or folder being written.
        file: PathBuf,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },

    /// One or more files failed during the transfer; the others ran to their end
    /// (unless `fail_fast` stopped them). `failures` holds one error per failed file,
    /// in the order of the input; `report` tells what happened to every file.
    #[error("{} of {} file(s) failed: {}", failures.len(), report.files.len(), list(failures))]
    Failed {
        /// The error of each failed file.
        failures: Vec<TransferError>,
        /// Every file's outcome.
        report: TransferReport,
    },

    /// The transfer was canceled ([`super::TransferHandle::cancel`], or every clone of
    /// the handle was dropped). Requests in flight were aborted and partial downloads removed;
    /// `report` tells which files had completed.
    #[error("the transfer was canceled ({} of {} file(s) completed)", report.completed().count(), report.files.len())]
    Canceled {
        /// Every file's outcome at the time of the cancel.
        report: TransferReport,
    },

    /// The service did not give what was to be transferred: reading the container
    /// (for its upload forms) or listing the processing's outputs failed
    /// ([`super::Transfers::upload_to_container`], [`super::Transfers::download_outputs`]).
    /// Nothing was transferred.
    #[error("{source}; nothing was transferred")]
    Cloud {
        /// The service's error.
        #[source]
        source: Arc<CloudError>,
    },

    /// The transfer task ended abnormally (a panic): a bug.
    #[error("the transfer task ended abnormally: {reason}")]
    Internal {
        /// What the runtime said.
        reason: String,
    },
}

fn list(failures: &[TransferError]) -> String {
    failures
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

impl From<CloudError> for TransferError {
    fn from(source: CloudError) -> Self {
        Self::Cloud {
            source: Arc::new(source),
        }
    }
}

impl TransferError {
    /// The local file and the system's error when the transfer failed on a local
    /// file (reading an upload, writing a download; the only failure of a transfer).
    pub fn local_file(&self) -> Option<(&std::path::Path, &std::io::Error)> {
        match self {
            Self::LocalFile { file, source } | Self::LocalWrite { file, source } => {
                Some((file, &**source))
            }
            Self::Failed { failures, .. } if failures.len() == 1 => failures[0].local_file(),
            _ => None,
        }
    }

    /// The service's error, for [`TransferError::Cloud`].
    pub fn cloud_error(&self) -> Option<&CloudError> {
        match self {
            Self::Cloud { source } => Some(source),
            _ => None,
        }
    }

    /// The errors of the failed files: the list of [`TransferError::Failed`], nothing
    /// for [`TransferError::Canceled`], otherwise this error alone.
    pub fn failures(&self) -> &[TransferError] {
        match self {
            Self::Failed { failures, .. } => failures,
            Self::Canceled { .. } => &[],
            other => std::slice::from_ref(other),
        }
    }

    /// The report of every file, for [`TransferError::Failed`] and
    /// [`TransferError::Canceled`].
    pub fn report(&self) -> Option<&TransferReport> {
        match self {
            Self::Failed { report, .. } | Self::Canceled { report } => Some(report),
            _ => None,
        }
    }

    /// What kind of failure this is (shared with the other subsystems and the bindings).
    /// [`TransferError::Failed`] is the kind of its first failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::LocalFile { .. } | Self::LocalWrite { .. } => ErrorKind::Io,
            Self::SizeMismatch { .. } => ErrorKind::InvalidInput,
            Self::InvalidUploadForm { .. }
            | Self::InvalidAddress { .. }
            | Self::UnsafeOutputPath { .. } => ErrorKind::InvalidResponse,
            Self::UploadRefused { .. } | Self::DownloadRefused { .. } => ErrorKind::Verification,
            Self::Rejected { status, .. } => ErrorKind::from_status(*status),
            Self::Storage { .. } | Self::Incomplete { .. } => ErrorKind::Transient,
            Self::Network { .. } => ErrorKind::Unreachable,
            Self::Failed { failures, .. } => failures
                .first()
                .map_or(ErrorKind::Internal, TransferError::kind),
            Self::Canceled { .. } => ErrorKind::Canceled,
            Self::Cloud { source } => source.kind(),
            Self::Internal { .. } => ErrorKind::Internal,
        }
    }

    /// Which side failed: the object storage, except for a local file, a cancellation
    /// or a bug of the SDK (`None`).
    pub fn side(&self) -> Option<crate::Side> {
        match self {
            Self::LocalFile { .. }
            | Self::LocalWrite { .. }
            | Self::SizeMismatch { .. }
            | Self::Canceled { .. }
            | Self::Internal { .. } => None,
            Self::Failed { failures, .. } => failures.first().and_then(TransferError::side),
            Self::Cloud { source } => source.side(),
            _ => Some(crate::Side::Storage),
        }
    }

    /// Whether running the same transfer again later may succeed without any change
    /// (storage or network trouble), as opposed to a fresh form or address, another
    /// local file, or another path being needed.
    pub fn is_transient(&self) -> bool {
        match self {
            Self::Storage { .. } | Self::Network { .. } | Self::Incomplete { .. } => true,
            Self::Failed { failures, .. } => failures.iter().all(Self::is_transient),
            Self::Cloud { source } => source.is_retryable(),
            _ => false,
        }
    }
}

// ----- what went wrong in one attempt ---------------------------------------------------

/// The outcome of a failed attempt: final, or worth another attempt.
#[derive(Debug)]
pub(crate) enum Failure {
    /// Not retried.
    Fatal(TransferError),
    /// Retried while the policy allows.
    Transient(Transient),
}

/// A failure that another attempt may not meet.
#[derive(Debug)]
pub(crate) enum Transient {
    Status {
        status: u16,
        code: String,
        message: String,
    },
    Network {
        reason: String,
        source: Option<Arc<reqwest::Error>>,
    },
    Incomplete {
        expected: u64,
        received: u64,
    },
}

impl Transient {
    /// The error reported once the retries are used up.
    pub(crate) fn into_error(self, file: &str, attempts: u32) -> TransferError {
        let file = file.to_owned();
        match self {
            Self::Status {
                status,
                code,
                message,
            } => TransferError::Storage {
                file,
                status,
                code,
                storage_message: message,
                attempts,
            },
            Self::Network { reason, source } => TransferError::Network {
                file,
                reason,
                attempts,
                source,
            },
            Self::Incomplete { expected, received } => TransferError::Incomplete {
                file,
                expected,
                received,
                attempts,
            },
        }
    }

    /// What failed, for the logs: the status and storage's error code, the network
    /// failure (without the address) or the missing bytes. Storage's message is left
    /// out (it may quote the request).
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::Status { status, code, .. } if code.is_empty() => {
                format!("storage answered {status}")
            }
            Self::Status { status, code, .. } => format!("storage answered {status} {code}"),
            Self::Network { reason, .. } => redact_url(reason),
            Self::Incomplete { expected, received } => {
                format!("the answer was cut off: {received} of {expected} bytes")
            }
        }
    }

    /// A transport error of the HTTP client, its address removed.
    pub(crate) fn network(e: reqwest::Error) -> Self {
        let e = e.without_url();
        Self::Network {
            reason: error_chain(&e),
            source: Some(Arc::new(e)),
        }
    }
}

/// Whether a status is worth another attempt: server errors, 408 and 429.
pub(crate) fn retryable_status(status: u16) -> bool {
    status >= 500 || status == 408 || status == 429
}

pub(crate) fn stalled(idle: Duration) -> Transient {
    Transient::Network {
        reason: format!("no data moved for {} s", idle.as_secs_f64()),
        source: None,
    }
}

// ----- storage answers ------------------------------------------------------------------

/// The `<Code>` and `<Message>` of an S3-style error body; for another body, its
/// (shortened) text as the message.
pub(crate) fn storage_error(body: &str) -> (String, String) {
    let code = xml_element(body, "Code").unwrap_or_default();
    let message = match xml_element(body, "Message") {
        Some(m) => m,
        None => {
            let text = body.trim();
            let mut end = text.len().min(MAX_MESSAGE);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            if text.is_empty() {
                "(no message)".to_owned()
            } else {
                text[..end].to_owned()
            }
        }
    };
    (code, redact_url(&message))
}

/// Longest message kept from a body that is not an S3 error document.
const MAX_MESSAGE: usize = 500;

fn xml_element(body: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = body.find(&open)? + open.len();
    let end = start + body[start..].find(&close)?;
    Some(xml_unescape(&body[start..end]))
}

fn xml_unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_errors_are_read_from_s3_documents_or_plain_text() {
        let (code, message) = storage_error(
            "<?xml version=\"1.0\"?>\n<Error><Code>AccessDenied</Code><Message>Field key does &lt;not&gt; match</Message></Error>",
        );
        assert_eq!(code, "AccessDenied");
        assert_eq!(message, "Field key does <not> match");
        let (code, message) = storage_error("{\"title\":\"Internal\"}");
        assert_eq!(code, "");
        assert_eq!(message, "{\"title\":\"Internal\"}");
        assert_eq!(storage_error("").1, "(no message)");
    }
}
