//! [`WorkflowError`]: why a workflow stopped before the processing's end was known.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use crate::cloud::CloudError;
use crate::error::ErrorKind;
use crate::transfer::TransferError;

/// What became of the container of a workflow that failed after creating it and before
/// a processing of it was started (see
/// [`WorkflowOptions::cleanup_on_failure`](super::WorkflowOptions::cleanup_on_failure)).
#[non_exhaustive]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Cleanup {
    /// Nothing was deleted: the cleanup was not asked for, no container had been
    /// created, or a processing of it had been started (the container stays with its
    /// processing).
    #[default]
    NotAttempted,
    /// The container and the files uploaded to it were deleted.
    Deleted,
    /// Deleting the container failed (best effort): it remains.
    Failed {
        /// Why, e.g. the service's answer.
        reason: String,
    },
}

impl Cleanup {
    /// Whether the container was deleted.
    #[must_use]
    pub fn deleted(&self) -> bool {
        matches!(self, Self::Deleted)
    }
}

/// Why [`Workflow::run`](super::Workflow::run) failed.
///
/// A processing that ended with the result `failed` is **not** an error: it is
/// returned in the [`WorkflowOutcome`](super::WorkflowOutcome) with its errors. The
/// variants raised after the container was created, or the processing started, carry
/// their identifiers, so that the caller can look at them, cancel or delete them, and
/// their message names them. When the workflow failed after creating the container
/// and before starting a processing, [`cleanup`](Self::cleanup) says whether the
/// container was deleted
/// ([`WorkflowOptions::cleanup_on_failure`](super::WorkflowOptions::cleanup_on_failure)).
///
/// Cheap to clone (the system's and the service's errors are shared), so that every
/// waiter of a workflow gets its error.
#[non_exhaustive]
#[derive(Clone, Debug, thiserror::Error)]
pub enum WorkflowError {
    /// The job cannot be run as it is: no input, two files with the same name (their
    /// container path), a file name that is not valid UTF-8, metadata over the
    /// service's limits. Nothing was sent.
    #[error("invalid job: {reason}; nothing was sent")]
    InvalidJob {
        /// What is wrong, naming the offending file or key.
        reason: String,
    },

    /// Another run (of this program or another) is writing the same output folder: its
    /// files would be mixed with this run's, each run listing files the other wrote.
    /// Nothing was sent.
    #[error(
        "another run is writing the output folder `{}` (it holds {}); choose another \
         folder or wait for it; nothing was sent",
        folder.display(),
        super::job::OUTPUT_LOCK_FILE
    )]
    OutputFolderBusy {
        /// The folder.
        folder: PathBuf,
    },

    /// A local input or resource file cannot be used (missing, not a regular file,
    /// unreadable). Nothing was sent.
    #[error("cannot use `{}`: {source}; nothing was sent", path.display())]
    LocalFile {
        /// The file as given.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: Arc<std::io::Error>,
    },

    /// The cloud service refused or failed a request (after the client's own retries,
    /// and the workflow's recovery for creations whose answer was lost).
    #[error("{stage}: {source}{}", left(*container_id, *processing_id, cleanup))]
    Cloud {
        /// What the workflow was doing, e.g. "starting the processing".
        stage: &'static str,
        /// The container, once created.
        container_id: Option<Uuid>,
        /// The processing, once started.
        processing_id: Option<Uuid>,
        /// The service's error.
        #[source]
        source: Arc<CloudError>,
        /// Whether the container was deleted (before a processing was started).
        cleanup: Cleanup,
    },

    /// An upload or a download failed (an unsafe output path is refused here too, as
    /// [`TransferError::UnsafeOutputPath`], before anything is written).
    #[error("{stage}: {source}{}", left(*container_id, *processing_id, cleanup))]
    Transfer {
        /// "uploading the files" or "downloading the outputs".
        stage: &'static str,
        /// The container.
        container_id: Option<Uuid>,
        /// The processing, when downloading.
        processing_id: Option<Uuid>,
        /// The transfer's error.
        #[source]
        source: Box<TransferError>,
        /// Whether the container was deleted (when uploading).
        cleanup: Cleanup,
    },

    /// The organization still had an ongoing processing after `max_wait` (see
    /// [`WorkflowOptions::wait_for_free_organization`](super::WorkflowOptions::wait_for_free_organization)).
    /// The container and its uploaded files remain, ready for a processing started
    /// later, unless they were cleaned up.
    #[error(
        "the organization still has an ongoing processing after waiting {} s: {source}{}",
        waited.as_secs(),
        left(Some(*container_id), None, cleanup)
    )]
    OrganizationBusy {
        /// How long the workflow waited.
        waited: Duration,
        /// The uploaded container.
        container_id: Uuid,
        /// The last 409 answer.
        #[source]
        source: Arc<CloudError>,
        /// Whether the container was deleted.
        cleanup: Cleanup,
    },

    /// The processing had not ended after
    /// [`WorkflowOptions::follow_timeout`](super::WorkflowOptions::follow_timeout); it
    /// goes on in the cloud.
    #[error(
        "processing {processing_id} had not ended after {} s (last status: {status})",
        waited.as_secs()
    )]
    FollowTimeout {
        /// The processing.
        processing_id: Uuid,
        /// Its last known status.
        status: String,
        /// How long it was followed.
        waited: Duration,
    },

    /// The workflow was canceled ([`WorkflowHandle::cancel`](super::WorkflowHandle::cancel)).
    /// Transfers under way were stopped (no partial download is left). A processing
    /// already started goes on in the cloud: cancel it with
    /// [`CloudClient::cancel_processing`](crate::cloud::CloudClient::cancel_processing)
    /// if it is not wanted.
    #[error("the workflow was canceled{}", canceled(*container_id, *processing_id, cleanup))]
    Canceled {
        /// The container, when it had been created.
        container_id: Option<Uuid>,
        /// The processing, when it had been started.
        processing_id: Option<Uuid>,
        /// Whether the container was deleted (when no processing had been started).
        cleanup: Cleanup,
    },

    /// The workflow's task failed unexpectedly (a panic in a progress callback).
    #[error("the workflow failed unexpectedly: {reason}")]
    Internal {
        /// What happened.
        reason: String,
    },
}

/// What a failed workflow leaves in the cloud, for its message.
fn left(container: Option<Uuid>, processing: Option<Uuid>, cleanup: &Cleanup) -> String {
    match (container, processing) {
        (Some(c), Some(p)) => format!(" (processing {p}, container {c})"),
        (None, Some(p)) => format!(" (processing {p})"),
        (Some(c), None) => match cleanup {
            Cleanup::Deleted => format!(" (container {c} was deleted)"),
            Cleanup::Failed { reason } => {
                format!(" (container {c} remains: deleting it failed: {reason})")
            }
            Cleanup::NotAttempted => {
                format!(" (container {c} remains, with its uploaded files)")
            }
        },
        (None, None) => String::new(),
    }
}

fn canceled(container: Option<Uuid>, processing: Option<Uuid>, cleanup: &Cleanup) -> String {
    match (container, processing) {
        (_, Some(p)) => format!(" (processing {p} goes on in the cloud)"),
        (c, None) => left(c, None, cleanup),
    }
}

impl WorkflowError {
    /// The processing concerned, once it was started.
    pub fn processing_id(&self) -> Option<Uuid> {
        match self {
            Self::Cloud { processing_id, .. }
            | Self::Transfer { processing_id, .. }
            | Self::Canceled { processing_id, .. } => *processing_id,
            Self::FollowTimeout { processing_id, .. } => Some(*processing_id),
            _ => None,
        }
    }

    /// The container concerned, once it was created.
    pub fn container_id(&self) -> Option<Uuid> {
        match self {
            Self::Cloud { container_id, .. }
            | Self::Transfer { container_id, .. }
            | Self::Canceled { container_id, .. } => *container_id,
            Self::OrganizationBusy { container_id, .. } => Some(*container_id),
            _ => None,
        }
    }

    /// Whether the container created by the workflow was deleted after the failure
    /// ([`Cleanup::NotAttempted`] for the failures that leave nothing or that happened
    /// once a processing was started).
    pub fn cleanup(&self) -> &Cleanup {
        const NOT_ATTEMPTED: &Cleanup = &Cleanup::NotAttempted;
        match self {
            Self::Cloud { cleanup, .. }
            | Self::Transfer { cleanup, .. }
            | Self::OrganizationBusy { cleanup, .. }
            | Self::Canceled { cleanup, .. } => cleanup,
            _ => NOT_ATTEMPTED,
        }
    }

    /// Records what became of the container (the workflow's cleanup).
    pub(super) fn set_cleanup(&mut self, outcome: Cleanup) {
        match self {
            Self::Cloud { cleanup, .. }
            | Self::Transfer { cleanup, .. }
            | Self::OrganizationBusy { cleanup, .. }
            | Self::Canceled { cleanup, .. } => *cleanup = outcome,
            _ => {}
        }
    }

    /// The cloud service's error, when the workflow stopped on one.
    pub fn cloud_error(&self) -> Option<&CloudError> {
        match self {
            Self::Cloud { source, .. } => Some(source),
            Self::OrganizationBusy { source, .. } => Some(source),
            _ => None,
        }
    }

    /// What kind of failure this is (shared with the other subsystems and the bindings):
    /// the kind of the cloud or transfer error it stopped on, otherwise its own.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::InvalidJob { .. } => ErrorKind::InvalidInput,
            Self::LocalFile { .. } => ErrorKind::Io,
            Self::Cloud { source, .. } => source.kind(),
            Self::Transfer { source, .. } => source.kind(),
            Self::OrganizationBusy { .. } | Self::OutputFolderBusy { .. } => ErrorKind::Conflict,
            Self::FollowTimeout { .. } => ErrorKind::Timeout,
            Self::Canceled { .. } => ErrorKind::Canceled,
            Self::Internal { .. } => ErrorKind::Internal,
        }
    }

    /// Which side failed: the side of the cloud or transfer error it stopped on, the
    /// service for a busy organization or a processing that did not end in time, `None`
    /// for a local failure or a cancellation.
    pub fn side(&self) -> Option<crate::Side> {
        match self {
            Self::Cloud { source, .. } => source.side(),
            Self::Transfer { source, .. } => source.side(),
            Self::OrganizationBusy { .. } | Self::FollowTimeout { .. } => {
                Some(crate::Side::Service)
            }
            _ => None,
        }
    }

    /// The local file and the system's error, for [`WorkflowError::LocalFile`] and a
    /// transfer that failed on a local file (a binding raises its platform's file
    /// error with them: errno and file name).
    pub fn local_file(&self) -> Option<(&std::path::Path, &std::io::Error)> {
        match self {
            Self::LocalFile { path, source } => Some((path, &**source)),
            Self::Transfer { source, .. } => source.local_file(),
            _ => None,
        }
    }

    /// Whether nothing was sent: the job was refused by the local checks.
    pub fn is_refused_before_sending(&self) -> bool {
        match self {
            Self::InvalidJob { .. } | Self::LocalFile { .. } => true,
            Self::Cloud {
                source,
                container_id: None,
                ..
            } => matches!(**source, CloudError::InvalidInput { .. }),
            _ => false,
        }
    }
}
