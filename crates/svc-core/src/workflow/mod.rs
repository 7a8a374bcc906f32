//! The whole processing workflow in one call: local files in, final processing, its
//! errors and warnings, and downloaded outputs out.
//!
//! [`Workflow::run`] takes a [`ProcessingJob`] (input and resource files, the
//! processing configuration, a name, metadata, a region, an output folder) and
//! [`WorkflowOptions`], and:
//!
//! 1. **checks the job** before anything is sent: at least one input, every file a
//!    readable regular file, every file name (its container path) unique, the
//!    metadata within the service's limits, the output folder not an existing file
//!    ([`WorkflowError::InvalidJob`], [`WorkflowError::LocalFile`]);
//! 2. **creates the container** with every file registered at once (inputs as
//!    `input`, resources as `resources`, each at its file name);
//! 3. **uploads** the files in parallel ([`crate::transfer`]), reporting
//!    [`WorkflowProgress::Uploading`];
//! 4. **starts the processing**; with
//!    [`wait_for_free_organization`](WorkflowOptions::wait_for_free_organization), a
//!    409 saying that the organization already has an ongoing processing is waited
//!    out (retried with backoff, up to [`max_wait`](WorkflowOptions::max_wait)); the
//!    other 409 (a file not uploaded) is not;
//! 5. **follows** it to its end (`processed`, `canceled` or `archived`): through the
//!    webhook events of [`events`](WorkflowOptions::events) when given, with an
//!    occasional poll in case events are lost, otherwise by polling `getProcessing`
//!    with backoff ([`PollSettings`]), reporting [`WorkflowProgress::Queued`] and
//!    [`WorkflowProgress::Running`];
//! 6. **collects** the processing's errors and warnings, and its outputs when it was
//!    `processed`, and **downloads** them to
//!    [`output_folder`](ProcessingJob::output_folder) when one is given — streamed,
//!    in parallel, each output path checked so that none can escape the folder.
//!
//! A failure names what it leaves in the cloud (the container, the processing once
//! started). With [`cleanup_on_failure`](WorkflowOptions::cleanup_on_failure), a
//! workflow that fails or is canceled after creating the container and before a
//! processing of it was started deletes the container and its uploaded files, best
//! effort ([`WorkflowError::cleanup`] says whether it did).
//!
//! A processing whose result is `failed` is not an error of the workflow: it is
//! returned in the [`WorkflowOutcome`] with its errors (a command-line tool decides
//! what exit code it deserves).
//!
//! # Lost answers
//!
//! The cloud client does not repeat a creation whose answer was lost (a timeout, an
//! answer cut off, a 500): the service may have applied it. The workflow recovers:
//!
//! - **createContainer**: the container is tagged with a random identifier in its
//!   metadata ([`WORKFLOW_TAG_KEY`], when the job's metadata leaves room for one key);
//!   after a lost answer the organization's containers are listed and the tagged one
//!   is used; only when none is found is a container created again (an empty orphan is
//!   possible without the tag, a duplicate upload never).
//! - **startProcessing**: after a lost answer, the organization's processings are
//!   listed and a processing of this container, if any, is taken as the one started;
//!   only when none exists is the start repeated. No second processing is started.
//!
//! # Cancel
//!
//! [`Workflow::start`] returns a [`WorkflowHandle`]: [`WorkflowHandle::cancel`] (or
//! dropping every clone of the handle, or the future of [`Workflow::run`]) stops the
//! workflow and its transfers at once; a processing already started goes on in the
//! cloud (see [`WorkflowError::Canceled`]). Any number of clones of the handle, on any
//! thread, may wait for the outcome ([`WorkflowHandle::wait`],
//! [`WorkflowHandle::wait_timeout`]) and read the reports
//! ([`WorkflowHandle::subscribe`]).
//!
//! # Bindings
//!
//! Entry points take and return owned values, with no generics or lifetimes.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use svc_core::cloud::{CloudClient, CloudConfig};
//! use svc_core::workflow::{ProcessingJob, Workflow, WorkflowOptions};
//!
//! let workflow = Workflow::new(CloudClient::new(CloudConfig::from_env()?)?);
//! let config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string("processing.json")?)?;
//! let mut job = ProcessingJob::new(
//!     vec!["rover.nmea".into(), "imu.csv".into()],
//!     config.as_object().cloned().unwrap_or_default(),
//! );
//! job.output_folder = Some("out".into());
//! let outcome = workflow.run(job, WorkflowOptions::default()).await?;
//! println!("{} {:?}: {} file(s)", outcome.processing.status, outcome.processing.processing_result, outcome.downloaded.len());
//! # Ok(()) }
//! ```

mod batch;
mod error;
mod events;
mod follow;
mod handle;
mod job;
mod journal;
mod options;
mod outage;
mod outcome;
mod queue;
mod reports;
mod run;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use tracing::field::Empty;
use uuid::Uuid;

use crate::cloud::{CloudClient, CloudError};
use crate::http::HttpClientConfig;
use crate::task::Running;

pub use batch::{BatchOptions, DEFAULT_AHEAD, MissionOptions};
pub use error::{Cleanup, WorkflowError};
pub use events::EventSource;
#[cfg(feature = "webhook-listener")]
pub use events::{ListenerOptions, WebhookListener};
pub use handle::{WorkflowCanceler, WorkflowHandle};
pub use job::{JOB_KEY, JobKey, ProcessingJob, check_output_folder, read_processing_config};
pub use journal::{BatchJournal, MissionRecord};
pub use options::{
    DEFAULT_OUTAGE_TOLERANCE, PollSettings, WorkflowOptions, WorkflowProgress,
    WorkflowProgressCallback,
};
pub use outcome::WorkflowOutcome;
pub use reports::WorkflowReports;

use handle::{Ids, read_ids};
use reports::{EndReports, Reports};
use run::Run;

/// The metadata key under which the container is tagged with the workflow's random
/// identifier, so that a container whose creation answer was lost can be found again.
pub const WORKFLOW_TAG_KEY: &str = "svc-workflow";

/// Replaced by the processing's identifier in [`ProcessingJob::output_folder`].
pub const PROCESSING_ID_PLACEHOLDER: &str = "{processing_id}";

/// Runs processing workflows with one cloud client. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Workflow {
    client: CloudClient,
    http: reqwest::Client,
}

impl Workflow {
    /// A workflow runner; transfers use an HTTP client of their own (a 10 s connect
    /// timeout, no total timeout: see
    /// [`TransferOptions::idle_timeout`](crate::transfer::TransferOptions::idle_timeout)).
    ///
    /// # Panics
    ///
    /// When that HTTP client cannot be built, which reqwest refuses only when its TLS
    /// backend cannot be initialized (no root certificate on the system): a `client`
    /// from [`CloudClient::new`] proves it can, having built one of the same kind.
    /// [`Workflow::try_new`] returns that failure instead.
    pub fn new(client: CloudClient) -> Self {
        // Cannot fail for a client from `CloudClient::new`: reqwest refuses to build a
        // client only when its TLS backend cannot be initialized, and `CloudClient::new`
        // built one with the same backend and roots. (A fallback to
        // `reqwest::Client::default()` would drop the connect timeout, and panic on that
        // very failure anyway.)
        #[allow(clippy::expect_used)]
        Self::try_new(client)
            .expect("the HTTP client of transfers builds as the cloud client's did")
    }

    /// As [`Workflow::new`], returning the failure to build the HTTP client of
    /// transfers instead of panicking.
    ///
    /// # Errors
    ///
    /// [`CloudError::Config`] (setting `http client`) when reqwest's TLS backend cannot
    /// be initialized (no root certificate on the system); [`Workflow::with_http`] takes
    /// a client of your own (e.g. with bundled roots).
    pub fn try_new(client: CloudClient) -> Result<Self, CloudError> {
        let http = HttpClientConfig::transfers().build()?;
        Ok(Self { client, http })
    }

    /// A workflow runner whose transfers use `http` (it must not add the service's
    /// bearer token, and should have no total timeout).
    pub fn with_http(client: CloudClient, http: reqwest::Client) -> Self {
        Self { client, http }
    }

    /// The cloud client.
    pub fn client(&self) -> &CloudClient {
        &self.client
    }

    /// Runs a whole workflow (see the [module documentation](self)). Dropping the
    /// future stops it, as [`WorkflowHandle::cancel`] does.
    ///
    /// # Errors
    /// See [`WorkflowError`]. A processing that ended `failed` is not an error.
    pub async fn run(
        &self,
        job: ProcessingJob,
        options: WorkflowOptions,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        self.start(job, options).wait().await
    }

    /// Starts a workflow in a task of its own and returns at once a handle to cancel
    /// it or wait for it.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn start(&self, job: ProcessingJob, options: WorkflowOptions) -> WorkflowHandle {
        let cleanup = options.cleanup_on_failure;
        let span = tracing::info_span!(
            "workflow",
            kind = "run",
            container_id = Empty,
            processing_id = Empty
        );
        let tolerance = options.outage_tolerance;
        self.spawn(
            span,
            options.on_progress.clone(),
            cleanup,
            tolerance,
            move |run| run.execute(job, options),
        )
    }

    /// Picks up a processing started earlier — by this program before it restarted,
    /// by another one, or with `follow: false` — and does the rest of a workflow: follows
    /// it to its end (events or polling, as [`WorkflowOptions`] says; at once when it
    /// has already ended), collects its errors and outputs, and downloads them to
    /// `output_folder` (where [`PROCESSING_ID_PLACEHOLDER`] is replaced). A notebook
    /// restarted mid-processing calls it with the processing's identifier.
    ///
    /// [`WorkflowOptions::follow`] is ignored (resuming is following).
    ///
    /// # Errors
    /// See [`WorkflowError`]; a processing that does not exist is a
    /// [`WorkflowError::Cloud`] of kind `not_found`.
    pub async fn resume(
        &self,
        processing_id: Uuid,
        output_folder: Option<PathBuf>,
        options: WorkflowOptions,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        self.start_resume(processing_id, output_folder, options)
            .wait()
            .await
    }

    /// As [`Workflow::resume`], in a task of its own: returns at once a handle to
    /// cancel it or wait for it (canceling stops following and downloading; the
    /// processing goes on in the cloud).
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn start_resume(
        &self,
        processing_id: Uuid,
        output_folder: Option<PathBuf>,
        options: WorkflowOptions,
    ) -> WorkflowHandle {
        // A resumed processing exists: there is nothing to clean up.
        let span = tracing::info_span!(
            "workflow",
            kind = "resume",
            container_id = Empty,
            processing_id = %processing_id
        );
        let tolerance = options.outage_tolerance;
        self.spawn(
            span,
            options.on_progress.clone(),
            false,
            tolerance,
            move |run| run.resume(processing_id, output_folder, options),
        )
    }

    fn spawn<F, Fut>(
        &self,
        span: tracing::Span,
        on_progress: Option<WorkflowProgressCallback>,
        cleanup_on_failure: bool,
        outage_tolerance: Duration,
        body: F,
    ) -> WorkflowHandle
    where
        F: FnOnce(Run) -> Fut,
        Fut: Future<Output = Result<WorkflowOutcome, WorkflowError>> + Send + 'static,
    {
        let cancel = CancellationToken::new();
        let ids = Arc::new(Mutex::new(Ids::default()));
        let reports = Arc::new(Reports::default());
        let run = Run {
            client: self.client.clone(),
            http: self.http.clone(),
            on_progress,
            reports: reports.clone(),
            ids: ids.clone(),
            span: span.clone(),
            reached: outage::Reached::default(),
            outage_tolerance,
        };
        let work = body(run);
        let token = cancel.clone();
        let known = ids.clone();
        let client = self.client.clone();
        // The reports end when the task does, before its outcome is given.
        let end_reports = EndReports(reports.clone());
        let work = async move {
            let _end_reports = end_reports;
            let began = Instant::now();
            let mut result = tokio::select! {
                biased;
                () = token.cancelled() => {
                    tracing::info!("workflow canceled");
                    let ids = resolve_in_flight(&client, read_ids(&known)).await;
                    if let Ok(mut known) = known.lock() {
                        *known = ids;
                    }
                    Err(WorkflowError::Canceled {
                        container_id: ids.container,
                        processing_id: ids.processing,
                        cleanup: Cleanup::NotAttempted,
                    })
                }
                result = work => result,
            };
            if cleanup_on_failure && let Err(e) = &mut result {
                // A processing started (or a start whose answer was lost) keeps its
                // container: the service refuses the delete while it runs.
                let started = e.processing_id().or(read_ids(&known).processing);
                if let (Some(container), None) = (e.container_id(), started) {
                    e.set_cleanup(delete_container(&client, container).await);
                }
            }
            let elapsed_ms = crate::observe::millis(began.elapsed());
            match &result {
                Ok(outcome) => tracing::info!(
                    status = %outcome.processing.status,
                    result = outcome.processing.processing_result.as_ref().map(display),
                    outputs = outcome.outputs.len(),
                    downloaded = outcome.downloaded.len(),
                    elapsed_ms,
                    "workflow ended"
                ),
                Err(e) => {
                    tracing::info!(kind = %e.kind(), error = %e, elapsed_ms, "workflow failed")
                }
            }
            result
        };
        WorkflowHandle {
            running: Running::spawn(
                cancel,
                |reason| WorkflowError::Internal { reason },
                work.instrument(span),
            ),
            ids,
            reports,
        }
    }
}

/// The longest a cleanup may take (the client retries transient failures within it).
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(30);

/// The longest a canceled workflow looks for what a creation or start it was awaiting
/// the answer of has made.
const IN_FLIGHT_LOOKUP_TIMEOUT: Duration = Duration::from_secs(20);

/// How long a canceled workflow waits before looking a second time for what an
/// unanswered creation or start made (the service may still be handling it).
const IN_FLIGHT_SETTLE: Duration = Duration::from_millis(500);

/// What a creation or start whose answer was awaited when the workflow was canceled
/// made, looked up as after a lost answer: the tagged container, a processing of the
/// container. The request was sent (or about to be): the service may have applied
/// it, and the workflow must neither report it as not made nor delete a container a
/// processing runs in. Looked for twice, the second time a moment later, when the
/// first finds nothing.
async fn resolve_in_flight(client: &CloudClient, mut ids: Ids) -> Ids {
    let open = |ids: &Ids| {
        ids.creating.is_some() && ids.container.is_none()
            || ids.starting && ids.processing.is_none()
    };
    if !open(&ids) {
        return ids;
    }
    let lookup = async {
        for attempt in 0..2 {
            if attempt > 0 {
                tokio::time::sleep(IN_FLIGHT_SETTLE).await;
            }
            if let (None, Some(tag)) = (ids.container, ids.creating) {
                match run::find_container(client, &tag.to_string()).await {
                    Ok(found) => ids.container = found,
                    Err(e) => {
                        tracing::info!(error = %e, "cannot look for the container being created")
                    }
                }
            }
            if let (Some(container), None, true) = (ids.container, ids.processing, ids.starting) {
                match run::find_processing(client, container).await {
                    Ok(found) => ids.processing = found.map(|p| p.id),
                    Err(e) => {
                        tracing::info!(error = %e, "cannot look for the processing being started")
                    }
                }
            }
            if !open(&ids) {
                break;
            }
        }
    };
    if tokio::time::timeout(IN_FLIGHT_LOOKUP_TIMEOUT, lookup)
        .await
        .is_err()
    {
        tracing::info!("looking for what the canceled request made took too long");
    }
    tracing::info!(
        container_id = ids.container.map(display),
        processing_id = ids.processing.map(display),
        "what the request awaited at the cancel made"
    );
    ids
}

/// Deletes the container of a failed workflow, best effort.
async fn delete_container(client: &CloudClient, container: Uuid) -> Cleanup {
    tracing::info!(container_id = %container, "cleanup: deleting the container of the failed workflow");
    let cleanup =
        match tokio::time::timeout(CLEANUP_TIMEOUT, client.delete_container(container)).await {
            Ok(Ok(())) => Cleanup::Deleted,
            Ok(Err(e)) => Cleanup::Failed {
                reason: e.to_string(),
            },
            Err(_) => Cleanup::Failed {
                reason: format!("no answer within {} s", CLEANUP_TIMEOUT.as_secs()),
            },
        };
    tracing::info!(container_id = %container, ?cleanup, "cleanup ended");
    cleanup
}
