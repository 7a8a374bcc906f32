//! `Workflow` and `WorkflowTask`: svc-core's whole processing workflow (and the resume
//! of a processing by its id) started on the module's runtime, as a thin wrapper over
//! svc-core's `WorkflowHandle`; progress reports are read from the handle's report
//! stream and handed to the Python callback on the thread that waits, so a progress
//! bar (tqdm in a notebook) is only ever touched from Python's own thread.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::{FutureExt as _, StreamExt as _};

use pyo3::exceptions::PyKeyboardInterrupt;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::{Map, Value};
use svc_core::Metadata;
use svc_core::cloud::ContainerRegion;
use svc_core::workflow::{
    BatchJournal, BatchOptions, JobKey, ProcessingJob, Workflow as Core, WorkflowError,
    WorkflowHandle, WorkflowOptions, WorkflowOutcome, WorkflowProgress, WorkflowReports,
};

use crate::cloud::{CloudClient, body, json, uuid_arg};
use crate::errors::SvcErr;
use crate::failures;
use crate::runtime::{block_on, runtime};

type Ended = Result<WorkflowOutcome, WorkflowError>;

/// One mission of [`Workflow::start_many`]: its inputs, name, output folder and key.
type Mission = (
    Vec<PathBuf>,
    Option<String>,
    Option<PathBuf>,
    Option<String>,
);

/// Runs processing workflows with one cloud client.
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct Workflow {
    core: Core,
    /// The client's [`WorkflowOptions::outage_tolerance`].
    outage_tolerance: Duration,
}

/// What a report of progress says, as a dict (`stage` and the stage's fields).
fn progress_dict<'py>(
    py: Python<'py>,
    progress: &WorkflowProgress,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let transfer = |d: &Bound<'py, PyDict>, stage: &str, p: &svc_core::transfer::Progress| {
        d.set_item("stage", stage)?;
        d.set_item("done_bytes", p.done_bytes)?;
        d.set_item("total_bytes", p.total_bytes)?;
        d.set_item("files", p.files.len())?;
        PyResult::Ok(())
    };
    match progress {
        WorkflowProgress::CreatingContainer => d.set_item("stage", "creating_container")?,
        WorkflowProgress::Uploading(p) => transfer(&d, "uploading", p)?,
        WorkflowProgress::Starting { container_id } => {
            d.set_item("stage", "starting")?;
            d.set_item("container_id", container_id.to_string())?;
        }
        WorkflowProgress::WaitingForOrganization {
            waited,
            behind,
            ahead,
        } => {
            d.set_item("stage", "waiting_for_organization")?;
            d.set_item("waited", waited.as_secs_f64())?;
            d.set_item("behind", behind.as_deref())?;
            d.set_item("ahead", *ahead)?;
        }
        WorkflowProgress::Queued { processing_id } => {
            d.set_item("stage", "queued")?;
            d.set_item("processing_id", processing_id.to_string())?;
        }
        WorkflowProgress::Running {
            processing_id,
            step,
            progress,
        } => {
            d.set_item("stage", "running")?;
            d.set_item("processing_id", processing_id.to_string())?;
            d.set_item("step", step.as_ref().map(ToString::to_string))?;
            d.set_item("progress", *progress)?;
        }
        WorkflowProgress::Downloading(p) => transfer(&d, "downloading", p)?,
        WorkflowProgress::Done {
            processing_id,
            status,
            result,
        } => {
            d.set_item("stage", "done")?;
            d.set_item("processing_id", processing_id.to_string())?;
            d.set_item("status", status.to_string())?;
            d.set_item("result", result.as_ref().map(ToString::to_string))?;
        }
        _ => d.set_item("stage", "other")?,
    }
    Ok(d)
}

/// The outcome as a dict: the records with the wire's names, the paths written.
fn outcome(py: Python<'_>, outcome: WorkflowOutcome) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    d.set_item("processing", json(py, &outcome.processing)?)?;
    d.set_item("errors", json(py, &outcome.errors)?)?;
    d.set_item("outputs", json(py, &outcome.outputs)?)?;
    let downloaded: Vec<String> = outcome
        .downloaded
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    d.set_item("downloaded", downloaded)?;
    d.set_item(
        "container_id",
        outcome.container_id.map(|id| id.to_string()),
    )?;
    d.set_item("status_reads", outcome.status_reads)?;
    d.set_item("reused", outcome.reused)?;
    Ok(d.into_any().unbind())
}

fn seconds(py: Python<'_>, name: &str, value: Option<f64>) -> PyResult<Option<Duration>> {
    value
        .map(|s| {
            Duration::try_from_secs_f64(s).map_err(|_| {
                SvcErr::new(
                    "invalid_input",
                    format!("{name} must be a finite number of seconds >= 0"),
                )
                .into_pyerr(py)
            })
        })
        .transpose()
}

/// A job without inputs, name, output folder or key: what the missions of a batch
/// share, and the rest of one job.
fn template(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    resources: Vec<PathBuf>,
    metadata: Option<&Bound<'_, PyAny>>,
    region: Option<String>,
) -> PyResult<ProcessingJob> {
    let config: Map<String, Value> = body(py, "config (a processing configuration)", config)?;
    let mut job = ProcessingJob::new(Vec::new(), config);
    job.resources = resources;
    if let Some(metadata) = metadata {
        job.metadata = body::<Metadata>(py, "metadata", metadata)?;
    }
    if let Some(region) = region {
        job.region = ContainerRegion::from(region.as_str());
    }
    Ok(job)
}

/// A job's key: given, derived from the job, or none.
fn job_key(given: Option<String>, derived: bool) -> Option<JobKey> {
    match given {
        Some(key) => Some(JobKey::Given(key)),
        None => derived.then_some(JobKey::Derived),
    }
}

/// The workflow's options (its progress is read from the handle's report stream by
/// [`WorkflowTask::wait`]).
fn options(
    outage_tolerance: Duration,
    follow: bool,
    follow_timeout: Option<Duration>,
    wait_for_organization: bool,
    cleanup_on_failure: bool,
) -> WorkflowOptions {
    WorkflowOptions {
        follow,
        follow_timeout,
        wait_for_free_organization: wait_for_organization,
        cleanup_on_failure,
        outage_tolerance,
        ..WorkflowOptions::default()
    }
}

#[pymethods]
impl Workflow {
    #[new]
    fn new(client: &CloudClient) -> Self {
        Self {
            core: Core::new(client.core.clone()),
            outage_tolerance: client.outage_tolerance,
        }
    }

    /// Starts a workflow: creates the container, uploads, starts the processing,
    /// follows it and downloads its outputs to `out`.
    #[pyo3(signature = (inputs, config, *, resources=Vec::new(), name=None, metadata=None, out=None, region=None, follow=true, follow_timeout=None, wait_for_organization=false, cleanup_on_failure=false, key=None, derived_key=false))]
    #[allow(clippy::too_many_arguments)]
    fn start(
        &self,
        py: Python<'_>,
        inputs: Vec<PathBuf>,
        config: &Bound<'_, PyAny>,
        resources: Vec<PathBuf>,
        name: Option<String>,
        metadata: Option<&Bound<'_, PyAny>>,
        out: Option<PathBuf>,
        region: Option<String>,
        follow: bool,
        follow_timeout: Option<f64>,
        wait_for_organization: bool,
        cleanup_on_failure: bool,
        key: Option<String>,
        derived_key: bool,
    ) -> PyResult<WorkflowTask> {
        let job = ProcessingJob {
            inputs,
            name,
            output_folder: out,
            key: job_key(key, derived_key),
            ..template(py, config, resources, metadata, region)?
        };
        let options = options(
            self.outage_tolerance,
            follow,
            seconds(py, "follow_timeout", follow_timeout)?,
            wait_for_organization,
            cleanup_on_failure,
        );
        let runtime = runtime()?;
        let _inside = runtime.enter();
        let handle = self.core.start(job, options);
        Ok(WorkflowTask::new(handle))
    }

    /// Starts a batch of missions (svc-core's `Workflow::start_many`): each mission is
    /// `(inputs, name, out, key)`, all with the same configuration and settings; `ahead`
    /// missions under way at once, one processing at a time per organization, first
    /// come first served. A task per mission, in the order given.
    #[pyo3(signature = (missions, config, *, resources=Vec::new(), metadata=None, region=None, follow_timeout=None, cleanup_on_failure=false, ahead=2, derived_key=false, journal=None))]
    #[allow(clippy::too_many_arguments)]
    fn start_many(
        &self,
        py: Python<'_>,
        missions: Vec<Mission>,
        config: &Bound<'_, PyAny>,
        resources: Vec<PathBuf>,
        metadata: Option<&Bound<'_, PyAny>>,
        region: Option<String>,
        follow_timeout: Option<f64>,
        cleanup_on_failure: bool,
        ahead: usize,
        derived_key: bool,
        journal: Option<PathBuf>,
    ) -> PyResult<Vec<WorkflowTask>> {
        let journal = match journal {
            Some(path) => Some(Arc::new(BatchJournal::open(&path).map_err(|e| {
                SvcErr::new("io", format!("the batch journal {}: {e}", path.display()))
                    .into_pyerr(py)
            })?)),
            None => None,
        };
        let template = template(py, config, resources, metadata, region)?;
        let jobs = missions
            .into_iter()
            .map(|(inputs, name, out, key)| ProcessingJob {
                inputs,
                name,
                output_folder: out,
                key: job_key(key, derived_key),
                ..template.clone()
            })
            .collect();
        let follow_timeout = seconds(py, "follow_timeout", follow_timeout)?;
        let outage_tolerance = self.outage_tolerance;
        let batch = BatchOptions {
            ahead,
            journal,
            options: Arc::new(move |_, _| {
                options(
                    outage_tolerance,
                    true,
                    follow_timeout,
                    true,
                    cleanup_on_failure,
                )
            }),
        };
        let runtime = runtime()?;
        let _inside = runtime.enter();
        Ok(self
            .core
            .start_many(jobs, batch)
            .into_iter()
            .map(WorkflowTask::new)
            .collect())
    }

    /// Picks up an existing processing by its id: follows it to its end, collects its
    /// errors and outputs and downloads them to `out`.
    #[pyo3(signature = (processing_id, *, out=None, follow_timeout=None))]
    fn resume(
        &self,
        py: Python<'_>,
        processing_id: &str,
        out: Option<PathBuf>,
        follow_timeout: Option<f64>,
    ) -> PyResult<WorkflowTask> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let options = options(
            self.outage_tolerance,
            true,
            seconds(py, "follow_timeout", follow_timeout)?,
            false,
            false,
        );
        let runtime = runtime()?;
        let _inside = runtime.enter();
        let handle = self.core.start_resume(id, out, options);
        Ok(WorkflowTask::new(handle))
    }
}

/// A workflow under way: wait for it (progress reported to the callback on the
/// waiting thread), cancel it, or ask what it has created. Dropped before its end, it
/// cancels the workflow (a processing already started goes on in the cloud), unless
/// detached.
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct WorkflowTask {
    /// The workflow (dropping the task cancels it, unless `detach` was called).
    handle: WorkflowHandle,
    /// The workflow's reports from its start, read by the waits that have a callback
    /// (one at a time; each report reaches one of them).
    reports: tokio::sync::Mutex<WorkflowReports>,
}

impl WorkflowTask {
    fn new(handle: WorkflowHandle) -> Self {
        let reports = tokio::sync::Mutex::new(handle.subscribe());
        Self { handle, reports }
    }
}

/// What one slice of waiting gave.
enum Step {
    Progress(Vec<WorkflowProgress>),
    Ended(Box<Ended>),
    TimedOut,
}

#[pymethods]
impl WorkflowTask {
    /// Waits for the end (at most `timeout` seconds when given), calling
    /// `on_progress(dict)` on this thread with each report; returns the outcome as a
    /// dict or raises the workflow's error. A timeout raises a `timeout` error and
    /// leaves the workflow running (wait again, or cancel). Ctrl-C raises
    /// KeyboardInterrupt saying what goes on in the cloud (the Python layer then stops
    /// the workflow unless it is detached).
    /// Any number of threads may wait at once, each gets the outcome; each report
    /// reaches the callback of one of them (a wait without a callback takes none).
    #[pyo3(signature = (timeout=None, on_progress=None))]
    fn wait(
        &self,
        py: Python<'_>,
        timeout: Option<f64>,
        on_progress: Option<Py<PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let deadline = seconds(py, "timeout", timeout)?.map(|t| tokio::time::Instant::now() + t);
        let interrupted = |interrupt: PyErr| {
            if interrupt.is_instance_of::<PyKeyboardInterrupt>(py) {
                PyKeyboardInterrupt::new_err(self.left_in_the_cloud())
            } else {
                interrupt
            }
        };
        let reporting = on_progress.is_some();
        loop {
            let step = block_on(py, async {
                let sleep = async {
                    match deadline {
                        Some(d) => tokio::time::sleep_until(d).await,
                        None => std::future::pending().await,
                    }
                };
                // The reports there: the next one, and those already behind it.
                let batch = async {
                    let mut reports = self.reports.lock().await;
                    let first = reports.next().await?;
                    let mut batch = vec![first];
                    while let Some(Some(more)) = reports.next().now_or_never() {
                        batch.push(more);
                    }
                    Some(batch)
                };
                tokio::select! {
                    biased;
                    ended = self.handle.wait() => Step::Ended(Box::new(ended)),
                    // `None` when the reports have ended: the end is there at once.
                    Some(batch) = batch, if reporting => Step::Progress(batch),
                    () = sleep => {
                        // Ended just now (`done()` may already say so): not a timeout.
                        match self.handle.wait_timeout(Duration::ZERO).await {
                            Some(ended) => Step::Ended(Box::new(ended)),
                            None => Step::TimedOut,
                        }
                    }
                }
            })
            .map_err(interrupted)?;
            match step {
                Step::Progress(batch) => {
                    // The reports' lock is released: a `wait` made from the callback
                    // runs as any other.
                    if let Some(callback) = &on_progress {
                        for p in &batch {
                            callback.call1(py, (progress_dict(py, p)?,))?;
                        }
                    }
                }
                Step::Ended(ended) => {
                    // Reports queued before the end still reach the callback.
                    if let Some(callback) = &on_progress {
                        let queued = block_on(py, async { self.reports.lock().await.queued() })
                            .map_err(interrupted)?;
                        for p in &queued {
                            callback.call1(py, (progress_dict(py, p)?,))?;
                        }
                    }
                    // svc-core keeps the outcome: every wait converts its own copy.
                    return match *ended {
                        Ok(o) => outcome(py, o),
                        Err(e) => Err(failures::workflow(py, e)),
                    };
                }
                Step::TimedOut => {
                    return Err(SvcErr::new(
                        "timeout",
                        format!(
                            "the workflow had not ended after {} s; it goes on (wait again, or cancel it)",
                            timeout.unwrap_or_default()
                        ),
                    )
                    .into_pyerr(py));
                }
            }
        }
    }

    /// What the workflow has left in the cloud so far, as a sentence (the message of a
    /// KeyboardInterrupt): what it created, and whether it still goes on (then it may
    /// yet start its processing, a credit, unless it is canceled).
    fn left_in_the_cloud(&self) -> String {
        let running = !self.handle.is_finished();
        match (self.handle.processing_id(), self.handle.container_id()) {
            (Some(p), _) => format!(
                "processing {p} goes on in the cloud; follow it again with Workflow.resume({p:?}) or cancel it with CloudClient.cancel_processing({p:?})",
                p = p.to_string()
            ),
            (None, Some(c)) if running => format!(
                "the workflow goes on: container {c} was created and no processing is started yet, but the workflow will start it (a credit) unless it is canceled (task.cancel())"
            ),
            (None, Some(c)) => format!("container {c} was created; no processing was started"),
            (None, None) if running => "the workflow goes on: nothing is created in the cloud yet, but it will be unless the workflow is canceled (task.cancel())".to_owned(),
            (None, None) => "nothing was created in the cloud".to_owned(),
        }
    }

    /// Stops the workflow: transfers aborted, no further request; a processing already
    /// started goes on in the cloud. `wait` then raises a `canceled` error.
    fn cancel(&self) {
        self.handle.cancel();
    }

    /// Lets the workflow run to its end even when this task is dropped or its wait
    /// cancelled; `cancel` still stops it.
    fn detach(&self) {
        self.handle.detach();
    }

    /// The caller's wait was cancelled (Ctrl-C, a cancelled asyncio task): stops the
    /// workflow unless detached (svc-core's rule for work handles); whether it did.
    fn cancel_unless_detached(&self) -> bool {
        self.handle.cancel_unless_detached()
    }

    /// Whether the workflow has ended (its outcome is ready).
    fn done(&self) -> bool {
        self.handle.is_finished()
    }

    #[getter]
    fn processing_id(&self) -> Option<String> {
        self.handle.processing_id().map(|id| id.to_string())
    }

    #[getter]
    fn container_id(&self) -> Option<String> {
        self.handle.container_id().map(|id| id.to_string())
    }
}

/// A processing configuration file (one JSON object) as a dict; a missing or unreadable
/// file raises the SDK's file error (also an `OSError`), invalid JSON an
/// `InvalidInputError` naming the file, line and column.
#[pyfunction]
fn read_processing_config(py: Python<'_>, path: PathBuf) -> PyResult<Py<PyAny>> {
    let map =
        svc_core::workflow::read_processing_config(&path).map_err(|e| failures::workflow(py, e))?;
    json(py, &map)
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Workflow>()?;
    module.add_class::<WorkflowTask>()?;
    module.add_function(wrap_pyfunction!(read_processing_config, module)?)?;
    Ok(())
}
