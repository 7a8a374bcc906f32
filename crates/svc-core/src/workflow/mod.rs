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
//! dropping the handle, or the future of [`Workflow::run`]) stops the workflow and its
//! transfers at once; a processing already started goes on in the cloud (see
//! [`WorkflowError::Canceled`]).
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

mod error;
mod events;
mod follow;

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::TryStreamExt as _;
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;
use tracing::field::{Empty, display};
use uuid::Uuid;

use crate::Metadata;
use crate::cloud::{
    CloudClient, CloudError, Container, ContainerFileType, ContainerRegion, CreateContainerFile,
    CreateContainerRequest, OutputFile, Processing, ProcessingError, ProcessingErrorLevel,
    ProcessingResult, ProcessingStatus, ProcessingStep, RetryHint, StartProcessingRequest,
    TransportKind,
};
use crate::limits;
use crate::retry::RetryPolicy;
use crate::transfer::{
    Progress, TransferError, TransferHandle, TransferOptions, TransferReport, Transfers, UploadJob,
};

pub use error::{Cleanup, WorkflowError};
pub use events::EventSource;
#[cfg(feature = "webhook-listener")]
pub use events::WebhookListener;

/// The metadata key under which the container is tagged with the workflow's random
/// identifier, so that a container whose creation answer was lost can be found again.
pub const WORKFLOW_TAG_KEY: &str = "svc-workflow";

/// Replaced by the processing's identifier in [`ProcessingJob::output_folder`].
pub const PROCESSING_ID_PLACEHOLDER: &str = "{processing_id}";

/// Attempts in a row of a creation (container, processing start) that failed in
/// transit or with a 5xx.
const CREATION_ATTEMPTS: u32 = 6;

/// The shortest time between two progress reports of a transfer.
const TRANSFER_REPORT_INTERVAL: Duration = Duration::from_millis(100);

/// What to process: files, configuration, and where the outputs go.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcessingJob {
    /// Input files (raw GNSS, INS logs, IMU, odometer data); at least one. Each is
    /// registered at its file name.
    pub inputs: Vec<PathBuf>,
    /// Resource files (export profiles, report templates, geodesy resources), each at
    /// its file name.
    pub resources: Vec<PathBuf>,
    /// The complete processing configuration (`processingJson`).
    pub processing_json: serde_json::Map<String, serde_json::Value>,
    /// The processing's name.
    pub name: Option<String>,
    /// Metadata of the container and of the processing.
    pub metadata: Metadata,
    /// Where the files are stored and the processing runs.
    pub region: ContainerRegion,
    /// Where to download the outputs (created if needed); `None`: not downloaded (the
    /// outcome still lists them with their addresses). [`PROCESSING_ID_PLACEHOLDER`]
    /// (`{processing_id}`) in it is replaced by the processing's identifier, e.g.
    /// `svc-output/{processing_id}`.
    pub output_folder: Option<PathBuf>,
}

impl ProcessingJob {
    /// A job of `inputs` with `processing_json`, no resources, name or metadata, in
    /// `eu-west-3`, without download.
    pub fn new(
        inputs: Vec<PathBuf>,
        processing_json: serde_json::Map<String, serde_json::Value>,
    ) -> Self {
        Self {
            inputs,
            resources: Vec::new(),
            processing_json,
            name: None,
            metadata: Metadata::new(),
            region: ContainerRegion::EuWest3,
            output_folder: None,
        }
    }
}

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
    fn delay(&self, n: u32) -> Duration {
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
    /// The organization has an ongoing processing; waiting for it to end.
    WaitingForOrganization {
        /// How long the workflow has waited so far.
        waited: Duration,
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

/// How a workflow runs. Build it with `..WorkflowOptions::default()`.
pub struct WorkflowOptions {
    /// Wait out a 409 "the organization already has an ongoing processing" (batch
    /// jobs) instead of failing at once. Default `false`.
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
    /// [`WebhookListener`]); `None`: by polling.
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
    /// [`WorkflowError::cleanup`] says whether that succeeded. Default `false`: the
    /// container remains (the error names it) and can be processed later.
    pub cleanup_on_failure: bool,
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
            .finish()
    }
}

/// What a workflow produced. `Debug` shows the outputs' download addresses with their
/// signatures redacted.
#[derive(Clone, PartialEq)]
pub struct WorkflowOutcome {
    /// The processing as last read: at its end (`processed`, `canceled`, `archived`),
    /// or as started when not followed.
    pub processing: Processing,
    /// Its errors and warnings (empty when not followed).
    pub errors: Vec<ProcessingError>,
    /// Its outputs, with their download addresses (when `processed`).
    pub outputs: Vec<OutputFile>,
    /// The files written in the output folder.
    pub downloaded: Vec<PathBuf>,
    /// The container of the job (for a resumed processing: its container, when the
    /// service says).
    pub container_id: Option<Uuid>,
    /// How many times the processing's status was read (`getProcessing`) while it was
    /// followed.
    pub status_reads: u32,
}

impl std::fmt::Debug for WorkflowOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outputs: Vec<(&str, String)> = self
            .outputs
            .iter()
            .map(|o| (o.path.as_str(), crate::transfer::redact_url(&o.url)))
            .collect();
        f.debug_struct("WorkflowOutcome")
            .field("processing", &self.processing)
            .field("errors", &self.errors)
            .field("outputs", &outputs)
            .field("downloaded", &self.downloaded)
            .field("container_id", &self.container_id)
            .field("status_reads", &self.status_reads)
            .finish()
    }
}

impl WorkflowOutcome {
    /// Whether the processing ended `processed` with the result `succeeded`.
    pub fn succeeded(&self) -> bool {
        self.processing.status == ProcessingStatus::Processed
            && self.processing.processing_result == Some(ProcessingResult::Succeeded)
    }

    /// Whether the processing ended `processed` with the result `failed`.
    pub fn failed(&self) -> bool {
        self.processing.processing_result == Some(ProcessingResult::Failed)
    }

    /// The recorded errors (level `error`).
    pub fn error_messages(&self) -> impl Iterator<Item = &ProcessingError> {
        self.errors
            .iter()
            .filter(|e| e.level == Some(ProcessingErrorLevel::Error))
    }

    /// The recorded warnings (level `warning`).
    pub fn warnings(&self) -> impl Iterator<Item = &ProcessingError> {
        self.errors
            .iter()
            .filter(|e| e.level == Some(ProcessingErrorLevel::Warning))
    }
}

/// Runs processing workflows with one cloud client. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Workflow {
    client: CloudClient,
    http: reqwest::Client,
}

impl Workflow {
    /// A workflow runner; transfers use an HTTP client of their own (a 10 s connect
    /// timeout, no total timeout: see [`TransferOptions::idle_timeout`]).
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
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .map_err(|e| crate::cloud::http_client_error(&e))?;
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
        self.spawn(span, options.on_progress.clone(), cleanup, move |run| {
            run.execute(job, options)
        })
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
        self.spawn(span, options.on_progress.clone(), false, move |run| {
            run.resume(processing_id, output_folder, options)
        })
    }

    fn spawn<F, Fut>(
        &self,
        span: tracing::Span,
        on_progress: Option<WorkflowProgressCallback>,
        cleanup_on_failure: bool,
        body: F,
    ) -> WorkflowHandle
    where
        F: FnOnce(Run) -> Fut,
        Fut: Future<Output = Result<WorkflowOutcome, WorkflowError>> + Send + 'static,
    {
        let cancel = CancellationToken::new();
        let ids = Arc::new(Mutex::new(Ids::default()));
        let run = Run {
            client: self.client.clone(),
            http: self.http.clone(),
            on_progress,
            ids: ids.clone(),
            span: span.clone(),
        };
        let work = body(run);
        let token = cancel.clone();
        let known = ids.clone();
        let client = self.client.clone();
        let task = tokio::spawn(
            async move {
                let began = Instant::now();
                let mut result = tokio::select! {
                    biased;
                    () = token.cancelled() => {
                        let ids = read_ids(&known);
                        tracing::info!("workflow canceled");
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
            }
            .instrument(span),
        );
        WorkflowHandle {
            task: Some(task),
            cancel,
            ids,
        }
    }
}

/// A workflow under way. Dropping it cancels the workflow; keep it, or
/// [`wait`](Self::wait) for it.
#[derive(Debug)]
pub struct WorkflowHandle {
    task: Option<JoinHandle<Result<WorkflowOutcome, WorkflowError>>>,
    cancel: CancellationToken,
    ids: Arc<Mutex<Ids>>,
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

fn read_ids(ids: &Mutex<Ids>) -> Ids {
    match ids.lock() {
        Ok(ids) => *ids,
        Err(poisoned) => *poisoned.into_inner(),
    }
}

/// The identifiers known so far (for [`WorkflowError::Canceled`]).
#[derive(Clone, Copy, Debug, Default)]
struct Ids {
    container: Option<Uuid>,
    processing: Option<Uuid>,
}

/// A local file of the job.
struct LocalFile {
    path: PathBuf,
    name: String,
    size: u64,
    kind: ContainerFileType,
}

/// One workflow's state.
struct Run {
    client: CloudClient,
    http: reqwest::Client,
    on_progress: Option<WorkflowProgressCallback>,
    ids: Arc<Mutex<Ids>>,
    /// The workflow's span, which gets the identifiers once known.
    span: tracing::Span,
}

impl Run {
    fn report(&self, progress: WorkflowProgress) {
        if let Some(callback) = &self.on_progress {
            callback(&progress);
        }
    }

    fn set_ids(&self, container: Option<Uuid>, processing: Option<Uuid>) {
        if let Some(id) = container {
            self.span.record("container_id", display(id));
        }
        if let Some(id) = processing {
            self.span.record("processing_id", display(id));
        }
        if let Ok(mut ids) = self.ids.lock() {
            ids.container = container.or(ids.container);
            ids.processing = processing.or(ids.processing);
        }
    }

    async fn execute(
        self,
        job: ProcessingJob,
        mut options: WorkflowOptions,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        let files = check_job(&job).await?;
        tracing::info!(
            files = files.len(),
            bytes = files.iter().map(|f| f.size).sum::<u64>(),
            follow = options.follow,
            "job checked"
        );

        // Container, tagged so that it can be found again after a lost answer.
        tracing::info!("step: creating the container");
        self.report(WorkflowProgress::CreatingContainer);
        let mut container_metadata = job.metadata.clone();
        let tag = (container_metadata.len() < limits::MAX_METADATA_KEYS
            && !container_metadata.contains_key(WORKFLOW_TAG_KEY))
        .then(|| Uuid::new_v4().to_string());
        if let Some(tag) = &tag {
            container_metadata.insert(WORKFLOW_TAG_KEY.to_owned(), tag.clone());
        }
        let request = CreateContainerRequest {
            region: job.region.clone(),
            metadata: Some(container_metadata),
            files: files
                .iter()
                .map(|f| CreateContainerFile {
                    path: f.name.clone(),
                    type_: f.kind.clone(),
                    size: i64::try_from(f.size).unwrap_or(i64::MAX),
                    metadata: None,
                })
                .collect(),
        };
        let container = self
            .create_container(request, tag.as_deref())
            .await
            .map_err(|source| WorkflowError::Cloud {
                stage: "creating the container",
                container_id: None,
                processing_id: None,
                source: Box::new(source),
                cleanup: Cleanup::NotAttempted,
            })?;
        let container_id = container.id;
        self.set_ids(Some(container_id), None);
        tracing::info!(%container_id, files = container.files.len(), "container created");

        // Uploads.
        let jobs = upload_jobs(&container, &files).map_err(|source| WorkflowError::Cloud {
            stage: "creating the container",
            container_id: Some(container_id),
            processing_id: None,
            source: Box::new(source),
            cleanup: Cleanup::NotAttempted,
        })?;
        let transfers = Transfers::new(self.http.clone(), options.transfer.clone());
        if !jobs.is_empty() {
            tracing::info!(files = jobs.len(), "step: uploading the files");
            self.drive(transfers.upload(jobs), WorkflowProgress::Uploading)
                .await
                .map_err(|source| WorkflowError::Transfer {
                    stage: "uploading the files",
                    container_id: Some(container_id),
                    processing_id: None,
                    source: Box::new(source),
                    cleanup: Cleanup::NotAttempted,
                })?;
        }

        // Start.
        tracing::info!(%container_id, "step: starting the processing");
        self.report(WorkflowProgress::Starting { container_id });
        let request = StartProcessingRequest {
            container_id,
            processing_json: job.processing_json.clone(),
            name: job.name.clone(),
            metadata: (!job.metadata.is_empty()).then(|| job.metadata.clone()),
        };
        let started = self.start_processing(request, &options).await?;
        self.set_ids(None, Some(started.id));
        tracing::info!(
            processing_id = %started.id,
            status = %started.status,
            "processing started"
        );
        if !options.follow {
            tracing::info!("not following the processing (follow: false)");
            self.report_processing(&started);
            return Ok(WorkflowOutcome {
                processing: started,
                errors: Vec::new(),
                outputs: Vec::new(),
                downloaded: Vec::new(),
                container_id: Some(container_id),
                status_reads: 0,
            });
        }
        self.conclude(
            started,
            job.output_folder.as_deref(),
            &mut options,
            &transfers,
        )
        .await
    }

    /// Follows an existing processing (see [`Workflow::resume`]).
    async fn resume(
        self,
        processing_id: Uuid,
        output_folder: Option<PathBuf>,
        mut options: WorkflowOptions,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        self.set_ids(None, Some(processing_id));
        tracing::info!(%processing_id, "step: reading the processing to resume");
        let processing = self
            .read(|| self.client.get_processing(processing_id))
            .await
            .map_err(|source| WorkflowError::Cloud {
                stage: "reading the processing",
                container_id: None,
                processing_id: Some(processing_id),
                source: Box::new(source),
                cleanup: Cleanup::NotAttempted,
            })?;
        self.set_ids(processing.container_id, None);
        let transfers = Transfers::new(self.http.clone(), options.transfer.clone());
        self.conclude(
            processing,
            output_folder.as_deref(),
            &mut options,
            &transfers,
        )
        .await
    }

    /// Follows a started processing to its end, then collects its errors and outputs
    /// and downloads them to `output_folder`.
    async fn conclude(
        &self,
        started: Processing,
        output_folder: Option<&std::path::Path>,
        options: &mut WorkflowOptions,
        transfers: &Transfers,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        let processing_id = started.id;
        let container_id = started.container_id;

        // Follow.
        let cloud_error = |stage, source| WorkflowError::Cloud {
            stage,
            container_id,
            processing_id: Some(processing_id),
            source: Box::new(source),
            cleanup: Cleanup::NotAttempted,
        };
        let mut status_reads = 0;
        tracing::info!(
            %processing_id,
            by = if options.events.is_some() { "webhook events" } else { "polling" },
            "step: following the processing"
        );
        let processing = follow::follow(
            self,
            started,
            &options.poll,
            options.follow_timeout,
            options.events.take(),
            &mut status_reads,
        )
        .await?;
        tracing::info!(
            status = %processing.status,
            result = processing.processing_result.as_ref().map(display),
            status_reads,
            "processing ended"
        );

        // Errors, outputs, downloads.
        let errors = self
            .read(|| self.client.list_processing_errors(processing_id))
            .await
            .map_err(|e| cloud_error("listing the processing's errors", e))?;
        let outputs = if processing.status == ProcessingStatus::Processed {
            self.read(|| self.client.list_processing_outputs(processing_id))
                .await
                .map_err(|e| cloud_error("listing the outputs", e))?
        } else {
            Vec::new()
        };
        tracing::info!(
            errors = errors.len(),
            outputs = outputs.len(),
            "step: collected the errors and outputs"
        );
        let downloaded = match output_folder {
            Some(folder) if !outputs.is_empty() => {
                let folder = resolve_folder(folder, processing_id);
                tracing::info!(
                    files = outputs.len(),
                    folder = %folder.display(),
                    "step: downloading the outputs"
                );
                let report = self
                    .drive(
                        transfers.download(outputs.clone(), folder),
                        WorkflowProgress::Downloading,
                    )
                    .await
                    .map_err(|source| WorkflowError::Transfer {
                        stage: "downloading the outputs",
                        container_id,
                        processing_id: Some(processing_id),
                        source: Box::new(source),
                        cleanup: Cleanup::NotAttempted,
                    })?;
                report.written_paths()
            }
            _ => Vec::new(),
        };
        self.report(WorkflowProgress::Done {
            processing_id,
            status: processing.status.clone(),
            result: processing.processing_result.clone(),
        });
        Ok(WorkflowOutcome {
            processing,
            errors,
            outputs,
            downloaded,
            container_id,
            status_reads,
        })
    }

    /// Reports where a processing stands.
    fn report_processing(&self, p: &Processing) {
        match &p.status {
            ProcessingStatus::Pending => self.report(WorkflowProgress::Queued {
                processing_id: p.id,
            }),
            ProcessingStatus::Processing => self.report(WorkflowProgress::Running {
                processing_id: p.id,
                step: p.processing_step.clone(),
                progress: p.processing_progress,
            }),
            _ => {}
        }
    }

    /// Waits for a transfer, forwarding its progress (at most every 100 ms, and the
    /// last snapshot).
    async fn drive(
        &self,
        handle: TransferHandle,
        stage: fn(Progress) -> WorkflowProgress,
    ) -> Result<TransferReport, TransferError> {
        let mut progress = handle.subscribe();
        let wait = handle.wait();
        tokio::pin!(wait);
        let mut last: Option<Instant> = None;
        let mut open = true;
        loop {
            tokio::select! {
                result = &mut wait => {
                    self.report(stage(progress.borrow().clone()));
                    return result;
                }
                changed = progress.changed(), if open => {
                    if changed.is_err() {
                        open = false;
                        continue;
                    }
                    if last.is_none_or(|l| l.elapsed() >= TRANSFER_REPORT_INTERVAL) {
                        last = Some(Instant::now());
                        let snapshot = progress.borrow_and_update().clone();
                        self.report(stage(snapshot));
                    }
                }
            }
        }
    }

    /// A read repeated a few more times than the client does by itself on transient
    /// failures (the workflow has come far; a blip should not waste it).
    async fn read<T, F, Fut>(&self, mut f: F) -> Result<T, CloudError>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, CloudError>>,
    {
        let policy = RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(60),
        };
        policy
            .run_explained(
                |_| f(),
                |e| e.retry_hint() == RetryHint::Transient,
                ToString::to_string,
            )
            .await
    }

    /// Creates the container; after a lost answer, looks for the tagged container
    /// before creating again.
    async fn create_container(
        &self,
        request: CreateContainerRequest,
        tag: Option<&str>,
    ) -> Result<Container, CloudError> {
        let policy = creation_policy();
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.client.create_container(request.clone()).await {
                Ok(container) => return Ok(container),
                Err(e) if e.retry_hint() == RetryHint::Transient && attempt < CREATION_ATTEMPTS => {
                    if may_have_been_applied(&e) {
                        // Without a tag the first attempt's container cannot be found:
                        // creating again could duplicate it, so the error is returned.
                        let Some(tag) = tag else { return Err(e) };
                        tracing::info!(
                            reason = %e,
                            "the container may have been created: looking for it by its tag"
                        );
                        if let Some(found) = self.find_container(tag).await? {
                            tracing::info!(container_id = %found, "the container was created after all");
                            return self.read(|| self.client.get_container(found)).await;
                        }
                    }
                    let delay = policy.delay(attempt);
                    tracing::info!(
                        attempt,
                        max_attempts = CREATION_ATTEMPTS,
                        delay_ms = crate::observe::millis(delay),
                        reason = %e,
                        "creating the container again after a transient failure"
                    );
                    tokio::time::sleep(delay).await;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The container tagged with `tag`, if any.
    async fn find_container(&self, tag: &str) -> Result<Option<Uuid>, CloudError> {
        let mut containers = self.client.list_containers();
        while let Some(c) = containers.try_next().await? {
            if c.metadata
                .as_ref()
                .and_then(|m| m.get(WORKFLOW_TAG_KEY))
                .is_some_and(|t| t == tag)
            {
                return Ok(Some(c.id));
            }
        }
        Ok(None)
    }

    /// A processing of `container_id`, if any.
    async fn find_processing(&self, container_id: Uuid) -> Result<Option<Processing>, CloudError> {
        let mut processings = self.client.list_processings();
        while let Some(p) = processings.try_next().await? {
            if p.container_id == Some(container_id) {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    /// Whether the organization has a `pending` or `processing` processing.
    async fn organization_busy(&self) -> Result<bool, CloudError> {
        let mut processings = self.client.list_processings();
        while let Some(p) = processings.try_next().await? {
            if matches!(
                p.status,
                ProcessingStatus::Pending | ProcessingStatus::Processing
            ) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a 409 to a start says the organization has an ongoing processing (and
    /// not that a file is not uploaded). The wording is read first; when it says
    /// neither, the organization's processings are looked at.
    async fn is_ongoing_conflict(&self, e: &CloudError) -> Result<bool, CloudError> {
        if e.status() != Some(409) {
            return Ok(false);
        }
        let text = format!(
            "{} {}",
            e.title().unwrap_or_default(),
            e.details().unwrap_or_default()
        )
        .to_lowercase();
        if ["ongoing", "one at a time", "already running", "in progress"]
            .iter()
            .any(|w| text.contains(w))
        {
            return Ok(true);
        }
        if ["file", "upload", "ready"].iter().any(|w| text.contains(w)) {
            return Ok(false);
        }
        self.organization_busy().await
    }

    /// Starts the processing: waits out an ongoing processing of the organization
    /// when asked, and never starts a second one after a lost answer.
    async fn start_processing(
        &self,
        request: StartProcessingRequest,
        options: &WorkflowOptions,
    ) -> Result<Processing, WorkflowError> {
        let container_id = request.container_id;
        let cloud_error = |source| WorkflowError::Cloud {
            stage: "starting the processing",
            container_id: Some(container_id),
            processing_id: None,
            source: Box::new(source),
            cleanup: Cleanup::NotAttempted,
        };
        let began = Instant::now();
        let policy = creation_policy();
        let mut uncertain = false;
        let mut lost = 0;
        let mut busy = 0;
        loop {
            if uncertain {
                // An earlier start may have been applied: take its processing.
                if let Some(p) = self
                    .find_processing(container_id)
                    .await
                    .map_err(cloud_error)?
                {
                    tracing::info!(processing_id = %p.id, "an earlier start was applied after all");
                    return Ok(p);
                }
                // None: the earlier attempts were not applied.
                uncertain = false;
            }
            let e = match self.client.start_processing(request.clone()).await {
                Ok(p) => return Ok(p),
                Err(e) => e,
            };
            if e.retry_hint() == RetryHint::Transient {
                lost += 1;
                uncertain |= may_have_been_applied(&e);
                if lost >= CREATION_ATTEMPTS {
                    if uncertain
                        && let Some(p) = self
                            .find_processing(container_id)
                            .await
                            .map_err(cloud_error)?
                    {
                        return Ok(p);
                    }
                    return Err(cloud_error(e));
                }
                let delay = policy.delay(lost);
                tracing::info!(
                    attempt = lost,
                    max_attempts = CREATION_ATTEMPTS,
                    delay_ms = crate::observe::millis(delay),
                    may_have_been_applied = uncertain,
                    reason = %e,
                    "starting the processing again after a transient failure"
                );
                tokio::time::sleep(delay).await;
                continue;
            }
            // Failures are counted in a row: a long wait sees many blips.
            lost = 0;
            if uncertain {
                // Refused because an earlier start was applied after all (409 ongoing,
                // 403 no credit left)? Checked at the top of the loop.
                continue;
            }
            if !self.is_ongoing_conflict(&e).await.map_err(cloud_error)? {
                return Err(cloud_error(e));
            }
            if !options.wait_for_free_organization {
                return Err(cloud_error(e));
            }
            let waited = began.elapsed();
            if waited >= options.max_wait {
                return Err(WorkflowError::OrganizationBusy {
                    waited,
                    container_id,
                    source: Box::new(e),
                    cleanup: Cleanup::NotAttempted,
                });
            }
            self.report(WorkflowProgress::WaitingForOrganization { waited });
            let pause = options.poll.delay(busy).min(options.max_wait - waited);
            tracing::info!(
                waited_s = waited.as_secs(),
                pause_ms = crate::observe::millis(pause),
                "the organization has an ongoing processing: waiting for it to end"
            );
            busy += 1;
            tokio::time::sleep(pause).await;
        }
    }
}

/// Backoff between the attempts of a creation whose answer was lost.
fn creation_policy() -> RetryPolicy {
    RetryPolicy {
        max_attempts: CREATION_ATTEMPTS,
        base_delay: Duration::from_millis(200),
        max_delay: Duration::from_secs(5),
        max_elapsed: Duration::from_secs(120),
    }
}

/// The longest a cleanup may take (the client retries transient failures within it).
const CLEANUP_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Whether a failed request may nonetheless have been applied by the service.
fn may_have_been_applied(e: &CloudError) -> bool {
    match e {
        CloudError::Transport { kind, .. } => *kind != TransportKind::Connect,
        CloudError::Api { status, .. } => *status != 429,
        _ => false,
    }
}

/// `folder` with [`PROCESSING_ID_PLACEHOLDER`] replaced.
fn resolve_folder(folder: &std::path::Path, processing_id: Uuid) -> PathBuf {
    match folder.to_str() {
        Some(text) if text.contains(PROCESSING_ID_PLACEHOLDER) => {
            PathBuf::from(text.replace(PROCESSING_ID_PLACEHOLDER, &processing_id.to_string()))
        }
        _ => folder.to_path_buf(),
    }
}

/// Checks the job before anything is sent; the files with their names and sizes.
async fn check_job(job: &ProcessingJob) -> Result<Vec<LocalFile>, WorkflowError> {
    let invalid = |reason: String| WorkflowError::InvalidJob { reason };
    if job.inputs.is_empty() {
        return Err(invalid("no input file".to_owned()));
    }
    limits::check_metadata(&job.metadata).map_err(|e| invalid(format!("metadata: {e}")))?;
    if let Some(folder) = &job.output_folder {
        check_output_folder(folder).map_err(invalid)?;
    }
    let mut files = Vec::new();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    let all = job
        .inputs
        .iter()
        .map(|p| (p, ContainerFileType::Input))
        .chain(
            job.resources
                .iter()
                .map(|p| (p, ContainerFileType::Resources)),
        );
    for (path, kind) in all {
        let name = path
            .file_name()
            .ok_or_else(|| invalid(format!("`{}` does not name a file", path.display())))?
            .to_str()
            .ok_or_else(|| {
                invalid(format!(
                    "the name of `{}` is not valid UTF-8",
                    path.display()
                ))
            })?
            .to_owned();
        if let Some(other) = seen.get(&name) {
            return Err(invalid(format!(
                "`{}` and `{}` have the same name `{name}` (each file is stored at its name in the container); rename one",
                other.display(),
                path.display()
            )));
        }
        limits::check_container_path(&name)
            .map_err(|e| invalid(format!("`{}`: {e}", path.display())))?;
        let metadata =
            tokio::fs::metadata(path)
                .await
                .map_err(|source| WorkflowError::LocalFile {
                    path: path.clone(),
                    source,
                })?;
        if !metadata.is_file() {
            return Err(WorkflowError::LocalFile {
                path: path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
            });
        }
        // Readable?
        tokio::fs::File::open(path)
            .await
            .map_err(|source| WorkflowError::LocalFile {
                path: path.clone(),
                source,
            })?;
        seen.insert(name.clone(), path.clone());
        files.push(LocalFile {
            path: path.clone(),
            name,
            size: metadata.len(),
            kind,
        });
    }
    Ok(files)
}

/// Checks that the output folder can be a folder: the nearest part of it that exists
/// must be a folder (it is created below that). Checked before anything is sent, so
/// that a mistaken path does not cost a processing credit.
fn check_output_folder(folder: &std::path::Path) -> Result<(), String> {
    for at in folder.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(at) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if at == folder => {
                return Err(format!(
                    "the output folder `{}` is an existing file, not a folder",
                    folder.display()
                ));
            }
            Ok(_) => {
                return Err(format!(
                    "the output folder `{}` cannot be created: `{}` is a file",
                    folder.display(),
                    at.display()
                ));
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// The uploads of the container's files still waiting for their content.
fn upload_jobs(container: &Container, files: &[LocalFile]) -> Result<Vec<UploadJob>, CloudError> {
    let mut jobs = Vec::new();
    for local in files {
        let Some(registered) = container.files.iter().find(|f| f.path == local.name) else {
            return Err(CloudError::InvalidResponse {
                operation: "createContainer",
                reason: format!("the container holds no file `{}`", local.name),
            });
        };
        if registered.status == crate::cloud::ContainerFileStatus::Ready {
            continue;
        }
        let Some(upload_info) = registered.upload_info.clone() else {
            return Err(CloudError::InvalidResponse {
                operation: "createContainer",
                reason: format!("the file `{}` came without its upload form", local.name),
            });
        };
        jobs.push(UploadJob {
            local_path: local.path.clone(),
            container_path: local.name.clone(),
            size: local.size,
            upload_info,
        });
    }
    Ok(jobs)
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

    #[test]
    fn the_processing_id_goes_into_the_folder() {
        let id = Uuid::nil();
        assert_eq!(
            resolve_folder(std::path::Path::new("out/{processing_id}/x"), id),
            PathBuf::from(format!("out/{id}/x"))
        );
        assert_eq!(
            resolve_folder(std::path::Path::new("out"), id),
            PathBuf::from("out")
        );
    }

    #[test]
    fn lost_answers_may_have_been_applied() {
        let transport = |kind| CloudError::Transport {
            operation: "startProcessing",
            kind,
            reason: String::new(),
            source: None,
        };
        assert!(!may_have_been_applied(&transport(TransportKind::Connect)));
        assert!(may_have_been_applied(&transport(
            TransportKind::Interrupted
        )));
        assert!(may_have_been_applied(&transport(TransportKind::Timeout)));
    }
}
