//! A workflow under way, seen from outside: [`WorkflowHandle`] and
//! [`WorkflowCanceler`].

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use uuid::Uuid;

use super::reports::{Reports, WorkflowReports};
use super::{WorkflowError, WorkflowOutcome};
use crate::task::Running;

/// A workflow under way. Cheap to clone: the clones share the workflow, and every
/// [`wait`](Self::wait), from any clone, gets its outcome, as many times as asked.
/// Dropping the last clone cancels the workflow (unless [`detach`](Self::detach)ed);
/// dropping a `wait` future ends that wait only.
#[derive(Clone)]
pub struct WorkflowHandle {
    pub(super) running: Running<WorkflowOutcome, WorkflowError>,
    pub(super) ids: Arc<Mutex<Ids>>,
    pub(super) reports: Arc<Reports>,
}

impl std::fmt::Debug for WorkflowHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkflowHandle")
            .field("running", &self.running)
            .field("ids", &read_ids(&self.ids))
            .finish_non_exhaustive()
    }
}

impl WorkflowHandle {
    /// Stops the workflow: transfers are aborted (no partial download is left), no
    /// further request is sent. [`wait`](Self::wait) then gives
    /// [`WorkflowError::Canceled`] (unless the workflow had already ended).
    pub fn cancel(&self) {
        self.running.cancel();
    }

    /// Something that cancels this workflow from elsewhere (a signal handler) while
    /// the handle is waited for, and tells what it has created so far, without keeping
    /// the workflow from being canceled when the handles are dropped.
    pub fn canceler(&self) -> WorkflowCanceler {
        WorkflowCanceler {
            cancel: self.running.token(),
            ids: self.ids.clone(),
        }
    }

    /// From now on, dropping the handles leaves the workflow running to its end (for a
    /// binding whose objects may be collected while the work should go on);
    /// [`cancel`](Self::cancel) still stops it.
    pub fn detach(&self) {
        self.running.detach();
    }

    /// The container, once created (or, for a resumed processing, once read).
    pub fn container_id(&self) -> Option<Uuid> {
        read_ids(&self.ids).container
    }

    /// The processing, once started: after a cancel it goes on in the cloud.
    pub fn processing_id(&self) -> Option<Uuid> {
        read_ids(&self.ids).processing
    }

    /// The workflow's progress reports from its start, as a stream (see
    /// [`WorkflowReports`]); each call makes a stream of its own. They are given to
    /// [`WorkflowOptions::on_progress`](super::WorkflowOptions::on_progress) too.
    pub fn subscribe(&self) -> WorkflowReports {
        self.reports.subscribe()
    }

    /// Whether the workflow has ended (`wait` would not wait).
    pub fn is_finished(&self) -> bool {
        self.running.is_finished()
    }

    /// Waits for the end of the workflow; every wait gets the outcome (a clone of it).
    ///
    /// # Errors
    /// See [`WorkflowError`].
    pub async fn wait(&self) -> Result<WorkflowOutcome, WorkflowError> {
        self.running.wait().await
    }

    /// As [`wait`](Self::wait), the caller's wait being the workflow's scope: dropped
    /// before the end (its caller cancelled), it cancels the workflow too, unless the
    /// handles were [`detach`](Self::detach)ed. What the bindings' `wait` is: cancelling
    /// or dropping what the caller holds stops the work, `detach` keeps it running.
    ///
    /// # Errors
    /// See [`WorkflowError`].
    pub async fn wait_or_cancel(&self) -> Result<WorkflowOutcome, WorkflowError> {
        self.running.wait_or_cancel().await
    }

    /// The caller's wait was cancelled (a Ctrl-C, a cancelled coroutine): cancels the
    /// workflow unless the handles were [`detach`](Self::detach)ed. What a dropped
    /// [`wait_or_cancel`](Self::wait_or_cancel) does, for a binding whose wait is made
    /// of several calls. Whether it cancelled it.
    pub fn cancel_unless_detached(&self) -> bool {
        self.running.cancel_unless_detached()
    }

    /// As [`wait`](Self::wait), for at most `timeout`: `None` when the workflow still
    /// runs then (it goes on). A workflow that has ended by then gives its outcome, even
    /// with a zero `timeout`.
    pub async fn wait_timeout(
        &self,
        timeout: Duration,
    ) -> Option<Result<WorkflowOutcome, WorkflowError>> {
        self.running.wait_timeout(timeout).await
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
