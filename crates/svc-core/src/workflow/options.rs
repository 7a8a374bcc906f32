//! How a workflow runs ([`WorkflowOptions`], [`PollSettings`]) and what it reports on
//! the way ([`WorkflowProgress`]).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use super::events::EventSource;
use crate::cloud::{ProcessingResult, ProcessingStatus, ProcessingStep};
use crate::transfer::{Progress, TransferOptions};

/// How often the processing's status is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PollSettings {
    /// The first wait; it doubles after each read. Default 200 ms.
    pub initial: Duration,
    /// The longest wait between two reads. Default 5 s.
    pub max: Duration,
    /// With an event source: the time without an event of the processing after which
    /// its status is read anyway (events can be lost). Default 15 s.
    pub event_fallback: Duration,
}

impl Default for PollSettings {
    fn default() -> Self {
        Self {
            initial: Duration::from_millis(200),
            max: Duration::from_secs(5),
            event_fallback: Duration::from_secs(15),
        }
    }
}

impl PollSettings {
    /// The wait after `n` reads (0 for the first).
    pub(super) fn delay(&self, n: u32) -> Duration {
        self.initial
            .saturating_mul(1u32 << n.min(20))
            .min(self.max)
            .max(Duration::from_millis(1))
    }
}

/// Where a workflow stands, given to [`WorkflowOptions::on_progress`].
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq)]
pub enum WorkflowProgress {
    /// Creating the container and registering the files.
    CreatingContainer,
    /// Uploading the files (a snapshot of the transfer).
    Uploading(Progress),
    /// Starting the processing.
    Starting {
        /// The uploaded container.
        container_id: Uuid,
    },
    /// The organization has an ongoing processing; waiting for it to end. Reported when
    /// the wait begins and each time what it waits behind changes.
    WaitingForOrganization {
        /// How long the workflow has waited so far.
        waited: Duration,
        /// The workflow of this process whose processing it waits behind (its job's
        /// name, or its container when the job has none); `None` when it waits for a
        /// processing started elsewhere (another process or user of the organization).
        behind: Option<String>,
        /// The workflows of this process before this one in line, the one whose
        /// processing runs included; 0 when it is next and waits for a processing
        /// started elsewhere.
        ahead: usize,
    },
    /// The processing is `pending`.
    Queued {
        /// The processing.
        processing_id: Uuid,
    },
    /// The processing runs.
    Running {
        /// The processing.
        processing_id: Uuid,
        /// The step it is at.
        step: Option<ProcessingStep>,
        /// The fraction done, 0 to 1.
        progress: Option<f64>,
    },
    /// Downloading the outputs (a snapshot of the transfer).
    Downloading(Progress),
    /// The workflow is over.
    Done {
        /// The processing.
        processing_id: Uuid,
        /// Its final status.
        status: ProcessingStatus,
        /// Its result.
        result: Option<ProcessingResult>,
    },
}

/// Receives [`WorkflowProgress`] reports (from the workflow's task: keep it quick).
pub type WorkflowProgressCallback = Arc<dyn Fn(&WorkflowProgress) + Send + Sync>;

/// The default [`WorkflowOptions::outage_tolerance`]: a restart of the service or of its
/// identity provider, not a long failure.
pub const DEFAULT_OUTAGE_TOLERANCE: Duration = Duration::from_secs(120);

/// How a workflow runs. Build it with `..WorkflowOptions::default()`.
pub struct WorkflowOptions {
    /// Wait out a 409 "the organization already has an ongoing processing" (batch
    /// jobs) instead of failing at once. Default `false`.
    ///
    /// The workflows of one process that wait for the same organization start their
    /// processings first come, first served: each takes its turn once its files are
    /// uploaded (so uploads overlap the processing running) and gives it to the next
    /// when its processing has ended; only the one whose turn it is asks the service,
    /// polling with jitter while a processing started elsewhere runs. Waiting in line
    /// counts in [`max_wait`](Self::max_wait) and is reported as
    /// [`WorkflowProgress::WaitingForOrganization`].
    pub wait_for_free_organization: bool,
    /// The longest wait for a free organization. Default 30 minutes.
    pub max_wait: Duration,
    /// Follow the processing to its end (default). `false`: return as soon as it is
    /// started (the outcome holds the processing as started, no errors, no outputs).
    pub follow: bool,
    /// The longest time the processing is followed; `None` (default): until it ends.
    pub follow_timeout: Option<Duration>,
    /// Status reads: backoff, and the fallback read while following events.
    pub poll: PollSettings,
    /// Follow the processing through these webhook events (see
    /// [`WebhookListener`](super::WebhookListener)); `None`: by polling.
    pub events: Option<EventSource>,
    /// Called with each change of stage and progress.
    pub on_progress: Option<WorkflowProgressCallback>,
    /// Uploads and downloads: parallelism, retries, idle timeout (its own
    /// `on_progress` is called as well, with the raw transfer progress).
    pub transfer: TransferOptions,
    /// When the workflow fails (or is canceled) after creating the container and
    /// before a processing of it was started — a refused start (409, 403 no credit
    /// left, 413), a failed upload, a busy organization — delete the container and
    /// the files uploaded to it, best effort;
    /// [`WorkflowError::cleanup`](super::WorkflowError::cleanup) says whether that
    /// succeeded. Default `false`: the container remains (the error names it) and can
    /// be processed later.
    pub cleanup_on_failure: bool,
    /// How long an outage is waited out: while the service, its identity provider or
    /// the notification service keeps failing (5xx, 429, timeouts, no token to be had,
    /// or — once the workflow has reached the service — no connection), the workflow
    /// keeps trying with backoff, and fails only once the failures have lasted this
    /// long in a row. Nothing is repeated that could apply twice: a creation whose
    /// answer was lost is looked for first (see the module documentation). An address
    /// that has never answered (a wrong URL) is not an outage and fails as before,
    /// after a few attempts. Default 2 minutes.
    pub outage_tolerance: Duration,
}

impl Default for WorkflowOptions {
    fn default() -> Self {
        Self {
            wait_for_free_organization: false,
            max_wait: Duration::from_secs(30 * 60),
            follow: true,
            follow_timeout: None,
            poll: PollSettings::default(),
            events: None,
            on_progress: None,
            transfer: TransferOptions::default(),
            cleanup_on_failure: false,
            outage_tolerance: DEFAULT_OUTAGE_TOLERANCE,
        }
    }
}

impl fmt::Debug for WorkflowOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkflowOptions")
            .field(
                "wait_for_free_organization",
                &self.wait_for_free_organization,
            )
            .field("max_wait", &self.max_wait)
            .field("follow", &self.follow)
            .field("follow_timeout", &self.follow_timeout)
            .field("poll", &self.poll)
            .field("events", &self.events.as_ref().map(|_| "events"))
            .field(
                "on_progress",
                &self.on_progress.as_ref().map(|_| "callback"),
            )
            .field("transfer", &self.transfer)
            .field("cleanup_on_failure", &self.cleanup_on_failure)
            .field("outage_tolerance", &self.outage_tolerance)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_back_off_to_the_cap() {
        let p = PollSettings::default();
        let delays: Vec<u128> = (0..7).map(|n| p.delay(n).as_millis()).collect();
        assert_eq!(delays, [200, 400, 800, 1600, 3200, 5000, 5000]);
    }
}
