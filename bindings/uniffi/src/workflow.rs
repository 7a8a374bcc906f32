//! `Workflow`: local files in, a processing followed to its end, outputs downloaded.

use std::sync::Arc;
use std::time::Duration;

use svc_core::workflow as sw;

use crate::cloud::CloudClient;
use crate::config::ProcessingConfig;
use crate::error::{ListenerError, SvcError, listener_failed, parse_id};
use crate::runtime::{enter, run};
use crate::transfer::{TransferOptions, TransferProgress};
use crate::types::Count;
use crate::types::{
    ContainerRegion, OutputFile, Processing, ProcessingError, ProcessingResult, ProcessingStatus,
    ProcessingStep, metadata_in, small,
};

/// What to process.
#[derive(Clone, Debug, uniffi::Record)]
pub struct ProcessingJob {
    /// Input files (raw GNSS, INS logs, IMU data); at least one.
    pub inputs: Vec<String>,
    /// The complete processing configuration.
    pub processing_config: ProcessingConfig,
    /// Resource files.
    #[uniffi(default = [])]
    pub resources: Vec<String>,
    /// The processing's name.
    #[uniffi(default = None)]
    pub name: Option<String>,
    /// Metadata of the container and the processing.
    #[uniffi(default)]
    pub metadata: std::collections::HashMap<String, String>,
    /// Where the files are stored and the processing runs (`None`: `EuWest3`).
    #[uniffi(default = None)]
    pub region: Option<ContainerRegion>,
    /// Where to download the outputs (`{processing_id}` is replaced); `None`: not
    /// downloaded.
    #[uniffi(default = None)]
    pub output_folder: Option<String>,
}

impl TryFrom<ProcessingJob> for sw::ProcessingJob {
    type Error = SvcError;
    fn try_from(j: ProcessingJob) -> Result<Self, SvcError> {
        let mut job = sw::ProcessingJob::new(
            j.inputs.into_iter().map(Into::into).collect(),
            j.processing_config.into_map()?,
        );
        job.resources = j.resources.into_iter().map(Into::into).collect();
        job.name = j.name;
        job.metadata = metadata_in(j.metadata);
        if let Some(region) = j.region {
            job.region = region.into();
        }
        job.output_folder = j.output_folder.map(Into::into);
        Ok(job)
    }
}

/// How a workflow runs.
#[derive(Clone, Debug, uniffi::Record)]
pub struct WorkflowOptions {
    /// Wait out a 409 "the organization already has an ongoing processing".
    #[uniffi(default = false)]
    pub wait_for_free_organization: bool,
    /// The longest wait for a free organization (`None`: 30 minutes).
    #[uniffi(default = None)]
    pub max_wait: Option<Duration>,
    /// Follow the processing to its end (`false`: return once started).
    #[uniffi(default = true)]
    pub follow: bool,
    /// The longest time the processing is followed; `None`: until it ends.
    #[uniffi(default = None)]
    pub follow_timeout: Option<Duration>,
    /// The first wait between two status reads, doubling up to `pollMax` (`None`:
    /// 200 ms).
    #[uniffi(default = None)]
    pub poll_initial: Option<Duration>,
    /// The longest wait between two status reads (`None`: 5 s).
    #[uniffi(default = None)]
    pub poll_max: Option<Duration>,
    /// When the workflow fails (or is cancelled) after creating the container and
    /// before a processing of it started, delete the container and its uploaded files
    /// (best effort; the error's `reason` says what happened). Default: the container
    /// remains, named by the error's `containerId`, and can be processed later.
    #[uniffi(default = false)]
    pub cleanup_on_failure: bool,
    /// Uploads and downloads (`None`: the defaults of `TransferOptions`).
    #[uniffi(default = None)]
    pub transfer: Option<TransferOptions>,
}

/// Where a workflow stands.
#[derive(Clone, Debug, PartialEq, uniffi::Enum)]
pub enum WorkflowProgress {
    CreatingContainer,
    Uploading {
        progress: TransferProgress,
    },
    Starting {
        container_id: String,
    },
    WaitingForOrganization {
        waited: Duration,
        /// The workflow of this process whose processing it waits behind (its job's
        /// name, or its container); none when it waits for a processing started
        /// elsewhere.
        behind: Option<String>,
        /// The workflows of this process before this one, the running one included.
        ahead: u32,
    },
    Queued {
        processing_id: String,
    },
    Running {
        processing_id: String,
        step: Option<ProcessingStep>,
        /// 0 to 1.
        progress: Option<f64>,
    },
    Downloading {
        progress: TransferProgress,
    },
    Done {
        processing_id: String,
        status: ProcessingStatus,
        result: Option<ProcessingResult>,
    },
    /// A stage this version of the binding does not know.
    Other {
        description: String,
    },
}

impl From<&sw::WorkflowProgress> for WorkflowProgress {
    fn from(p: &sw::WorkflowProgress) -> Self {
        use sw::WorkflowProgress as P;
        match p {
            P::CreatingContainer => Self::CreatingContainer,
            P::Uploading(progress) => Self::Uploading {
                progress: progress.into(),
            },
            P::Starting { container_id } => Self::Starting {
                container_id: container_id.to_string(),
            },
            P::WaitingForOrganization {
                waited,
                behind,
                ahead,
            } => Self::WaitingForOrganization {
                waited: *waited,
                behind: behind.clone(),
                ahead: u32::try_from(*ahead).unwrap_or(u32::MAX),
            },
            P::Queued { processing_id } => Self::Queued {
                processing_id: processing_id.to_string(),
            },
            P::Running {
                processing_id,
                step,
                progress,
            } => Self::Running {
                processing_id: processing_id.to_string(),
                step: step.clone().map(Into::into),
                progress: *progress,
            },
            P::Downloading(progress) => Self::Downloading {
                progress: progress.into(),
            },
            P::Done {
                processing_id,
                status,
                result,
            } => Self::Done {
                processing_id: processing_id.to_string(),
                status: status.clone().into(),
                result: result.clone().map(Into::into),
            },
            other => Self::Other {
                description: format!("{other:?}"),
            },
        }
    }
}

/// Receives workflow progress (from a worker thread of the SDK: keep it quick).
#[uniffi::export(with_foreign)]
pub trait WorkflowListener: Send + Sync {
    /// Each change of stage and progress. Whatever it throws is ignored: the workflow goes on.
    fn on_progress(&self, progress: WorkflowProgress) -> Result<(), ListenerError>;
}

impl WorkflowOptions {
    // Options svc-core adds later take their defaults until the binding exposes them.
    #[allow(clippy::needless_update)]
    fn to_core(&self, listener: Option<Arc<dyn WorkflowListener>>) -> sw::WorkflowOptions {
        let defaults = sw::WorkflowOptions::default();
        let poll = sw::PollSettings::default();
        let positive = |d: Duration| d.max(Duration::from_millis(1));
        sw::WorkflowOptions {
            wait_for_free_organization: self.wait_for_free_organization,
            max_wait: self.max_wait.unwrap_or(defaults.max_wait),
            follow: self.follow,
            follow_timeout: self.follow_timeout,
            poll: sw::PollSettings {
                initial: positive(self.poll_initial.unwrap_or(poll.initial)),
                max: positive(self.poll_max.unwrap_or(poll.max)),
                ..poll
            },
            events: None,
            on_progress: listener.map(|l| -> sw::WorkflowProgressCallback {
                let failed = std::sync::atomic::AtomicBool::new(false);
                Arc::new(move |p: &sw::WorkflowProgress| {
                    // A listener that throws must not end the workflow.
                    if l.on_progress(p.into()).is_err() {
                        listener_failed("workflow", &failed);
                    }
                })
            }),
            transfer: self.transfer.clone().unwrap_or_default().to_core(None),
            cleanup_on_failure: self.cleanup_on_failure,
            ..sw::WorkflowOptions::default()
        }
    }
}

/// What a workflow produced.
#[derive(Clone, Debug, uniffi::Record)]
pub struct WorkflowOutcome {
    /// The processing as last read.
    pub processing: Processing,
    /// Whether it ended `processed` with the result `succeeded`.
    pub succeeded: bool,
    /// Its errors and warnings.
    pub errors: Vec<ProcessingError>,
    /// Its outputs, with their download addresses.
    pub outputs: Vec<OutputFile>,
    /// The files written in the output folder.
    pub downloaded: Vec<String>,
    /// The container of the job.
    pub container_id: Option<String>,
    /// How many times the processing's status was read.
    pub status_reads: Count,
}

impl From<sw::WorkflowOutcome> for WorkflowOutcome {
    fn from(o: sw::WorkflowOutcome) -> Self {
        Self {
            succeeded: o.succeeded(),
            processing: o.processing.into(),
            errors: o.errors.into_iter().map(Into::into).collect(),
            outputs: o.outputs.into_iter().map(Into::into).collect(),
            downloaded: o
                .downloaded
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect(),
            container_id: o.container_id.map(|id| id.to_string()),
            status_reads: small(o.status_reads),
        }
    }
}

/// Runs processing workflows with one cloud client.
#[derive(Debug, uniffi::Object)]
pub struct Workflow {
    inner: sw::Workflow,
}

#[uniffi::export]
impl Workflow {
    /// A workflow runner over `client` (its transfers use the client's TLS roots).
    #[uniffi::constructor]
    pub fn new(client: Arc<CloudClient>) -> Arc<Self> {
        Arc::new(Self {
            inner: sw::Workflow::with_http(client.inner.clone(), client.transfer_http.clone()),
        })
    }

    /// Starts a workflow (check, container, uploads, start, follow, outputs); returns
    /// at once. Errors here are only those of the job's own fields (a processing
    /// configuration that is not a JSON object); the others come from `wait()`.
    #[uniffi::method(default(listener = None))]
    pub fn start(
        &self,
        job: ProcessingJob,
        options: WorkflowOptions,
        listener: Option<Arc<dyn WorkflowListener>>,
    ) -> Result<Arc<WorkflowTask>, SvcError> {
        let job = sw::ProcessingJob::try_from(job)?;
        let options = options.to_core(listener);
        let handle = enter(|| self.inner.start(job, options))?;
        Ok(WorkflowTask::new(handle))
    }

    /// Picks up a processing started earlier: follows it to its end, collects its
    /// errors and outputs, downloads them to `outputFolder`.
    #[uniffi::method(default(listener = None))]
    pub fn resume(
        &self,
        processing_id: String,
        output_folder: Option<String>,
        options: WorkflowOptions,
        listener: Option<Arc<dyn WorkflowListener>>,
    ) -> Result<Arc<WorkflowTask>, SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let options = options.to_core(listener);
        let handle = enter(|| {
            self.inner
                .start_resume(id, output_folder.map(Into::into), options)
        })?;
        Ok(WorkflowTask::new(handle))
    }
}

/// A workflow under way, scoped to what holds it: `cancel()`, cancelling the coroutine
/// or task that waits for it, or dropping (closing) this object stops it (a processing
/// already started goes on in the cloud), unless `detach()` was called, after which it
/// runs to its end whatever happens to its waits and to this object (`cancel()` still
/// stops it). `wait()` gives its outcome any number of times; after a stop it fails
/// with `Canceled`.
#[derive(uniffi::Object)]
pub struct WorkflowTask {
    handle: sw::WorkflowHandle,
}

impl WorkflowTask {
    fn new(handle: sw::WorkflowHandle) -> Arc<Self> {
        Arc::new(Self { handle })
    }
}

#[uniffi::export]
impl WorkflowTask {
    /// The processing, once started.
    pub fn processing_id(&self) -> Option<String> {
        self.handle.processing_id().map(|id| id.to_string())
    }

    /// The container, once created.
    pub fn container_id(&self) -> Option<String> {
        self.handle.container_id().map(|id| id.to_string())
    }

    /// Stops the workflow; `wait()` then fails with `Canceled` (unless it had ended).
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// Lets the workflow run to its end even if the waits are cancelled or this object
    /// is dropped (an upload that must survive the screen that started it); `cancel()`
    /// still stops it.
    pub fn detach(&self) {
        self.handle.detach();
    }

    /// The workflow's progress reports from its start, as a stream of their own (each
    /// call makes one; Kotlin `asFlow()`, Swift `reports`). A reader that falls behind
    /// is not held up by and does not hold up the workflow: it gets every change of
    /// stage, in order, and the latest report of each (the buffer holds one report per
    /// stage at most).
    pub fn progress(&self) -> Arc<WorkflowProgressStream> {
        Arc::new(WorkflowProgressStream {
            reports: Arc::new(tokio::sync::Mutex::new(self.handle.subscribe())),
        })
    }

    /// Whether the workflow has ended (`wait()` answers at once).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Waits for the end of the workflow (any number of times, from any number of
    /// callers: each gets the outcome). A processing that ended `failed` is not an
    /// error: see `WorkflowOutcome.succeeded`. Cancelling the wait cancels the workflow
    /// too, unless it was detached.
    pub async fn wait(&self) -> Result<WorkflowOutcome, SvcError> {
        let handle = self.handle.clone();
        run(async move { Ok(handle.wait_or_cancel().await?.into()) }).await
    }
}

/// A workflow's progress reports (see `WorkflowTask.progress()`).
#[derive(uniffi::Object)]
pub struct WorkflowProgressStream {
    reports: Arc<tokio::sync::Mutex<sw::WorkflowReports>>,
}

#[uniffi::export]
impl WorkflowProgressStream {
    /// The next report, waiting for it; `None` once the workflow has ended and every
    /// report was read. Cancelling the wait takes nothing from the stream.
    pub async fn next(&self) -> Result<Option<WorkflowProgress>, SvcError> {
        let reports = Arc::clone(&self.reports);
        run(async move {
            let mut reports = reports.lock().await;
            Ok(futures::StreamExt::next(&mut *reports)
                .await
                .map(|p| (&p).into()))
        })
        .await
    }
}
