//! A workflow under way, seen from outside: [`WorkflowHandle`] and
//! [`WorkflowCanceler`].

use std::sync::{Arc, Mutex};

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::{WorkflowError, WorkflowOutcome};

/// A workflow under way. Dropping it cancels the workflow; keep it, or
/// [`wait`](Self::wait) for it.
#[derive(Debug)]
pub struct WorkflowHandle {
    pub(super) task: Option<JoinHandle<Result<WorkflowOutcome, WorkflowError>>>,
    pub(super) cancel: CancellationToken,
    pub(super) ids: Arc<Mutex<Ids>>,
}

impl WorkflowHandle {
    /// Stops the workflow: transfers are aborted (no partial download is left), no
    /// further request is sent. [`wait`](Self::wait) then gives
    /// [`WorkflowError::Canceled`] (unless the workflow had already ended).
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// Something that cancels this workflow from elsewhere (a signal handler) while
    /// the handle is waited for, and tells what it has created so far.
    pub fn canceler(&self) -> WorkflowCanceler {
        WorkflowCanceler {
            cancel: self.cancel.clone(),
            ids: self.ids.clone(),
        }
    }

    /// The container, once created (or, for a resumed processing, once read).
    pub fn container_id(&self) -> Option<Uuid> {
        read_ids(&self.ids).container
    }

    /// The processing, once started: after a cancel it goes on in the cloud.
    pub fn processing_id(&self) -> Option<Uuid> {
        read_ids(&self.ids).processing
    }

    /// Waits for the end of the workflow.
    ///
    /// # Errors
    /// See [`WorkflowError`].
    pub async fn wait(mut self) -> Result<WorkflowOutcome, WorkflowError> {
        let Some(task) = self.task.as_mut() else {
            return Err(WorkflowError::Internal {
                reason: "the workflow was already waited for".to_owned(),
            });
        };
        let result = task.await;
        self.task = None;
        result.unwrap_or_else(|e| {
            Err(WorkflowError::Internal {
                reason: e.to_string(),
            })
        })
    }
}

impl Drop for WorkflowHandle {
    fn drop(&mut self) {
        if self.task.is_some() {
            self.cancel.cancel();
        }
    }
}

/// Cancels a workflow (see [`WorkflowHandle::cancel`]); cheap to clone.
#[derive(Clone, Debug)]
pub struct WorkflowCanceler {
    cancel: CancellationToken,
    ids: Arc<Mutex<Ids>>,
}

impl WorkflowCanceler {
    /// Stops the workflow, as [`WorkflowHandle::cancel`].
    pub fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The container, once created (see [`WorkflowHandle::container_id`]).
    pub fn container_id(&self) -> Option<Uuid> {
        read_ids(&self.ids).container
    }

    /// The processing, once started (see [`WorkflowHandle::processing_id`]).
    pub fn processing_id(&self) -> Option<Uuid> {
        read_ids(&self.ids).processing
    }
}

pub(super) fn read_ids(ids: &Mutex<Ids>) -> Ids {
    match ids.lock() {
        Ok(ids) => *ids,
        Err(poisoned) => *poisoned.into_inner(),
    }
}

/// The identifiers known so far (for [`WorkflowError::Canceled`]), and the creations
/// whose answer is awaited: a cancel arriving then looks their result up.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ids {
    pub(super) container: Option<Uuid>,
    pub(super) processing: Option<Uuid>,
    /// The tag of a container creation sent and not yet answered (until the container
    /// is known, it may exist).
    pub(super) creating: Option<Uuid>,
    /// A start of the container's processing sent and not yet answered.
    pub(super) starting: bool,
}
