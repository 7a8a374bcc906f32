//! Batches of missions: [`Workflow::run_many`].

use std::fmt;
use std::sync::Arc;

use tokio::sync::{Semaphore, oneshot};
use tracing::field::Empty;

use super::journal::BatchJournal;
use super::{
    ProcessingJob, Workflow, WorkflowError, WorkflowHandle, WorkflowOptions, WorkflowOutcome,
    WorkflowProgress,
};

/// How many missions of a batch are under way at once by default: one processing while
/// the next mission uploads.
pub const DEFAULT_AHEAD: usize = 2;

/// The options of one mission of a batch, from its index in the batch and its job.
pub type MissionOptions = Arc<dyn Fn(usize, &ProcessingJob) -> WorkflowOptions + Send + Sync>;

/// How [`Workflow::run_many`] runs a batch.
#[derive(Clone)]
pub struct BatchOptions {
    /// How many missions are under way at once (uploading, in line for the
    /// organization, processing, downloading), at least 1. Default
    /// [`DEFAULT_AHEAD`]: the next mission's files are uploaded while a processing
    /// runs, and no mission waits long with its container uploaded.
    pub ahead: usize,
    /// The options of each mission (say, a progress callback that names it).
    /// [`WorkflowOptions::wait_for_free_organization`] is set for every mission.
    pub options: MissionOptions,
    /// Where the batch notes what each mission created, to resume after a restart
    /// (see [`BatchJournal`]); missions are known in it by their job's name (or, without
    /// one, their index in the batch). `None`: no journal.
    pub journal: Option<Arc<BatchJournal>>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        Self {
            ahead: DEFAULT_AHEAD,
            options: Arc::new(|_, _| WorkflowOptions::default()),
            journal: None,
        }
    }
}

impl fmt::Debug for BatchOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BatchOptions")
            .field("ahead", &self.ahead)
            .field("journal", &self.journal.as_ref().map(|j| j.path()))
            .finish_non_exhaustive()
    }
}

impl Workflow {
    /// Runs a batch of missions as fast as the service allows: it runs one processing
    /// at a time per organization, so the missions begin in the order of `jobs`,
    /// [`BatchOptions::ahead`] at a time, and take their turns in the order their
    /// files are uploaded (first come, first served: see
    /// [`WorkflowOptions::wait_for_free_organization`]), the next ones uploading while
    /// a processing runs. Each mission is a whole [`Workflow::run`]; one that fails
    /// does not stop the others.
    ///
    /// The results are in the order of `jobs`. Dropping the future stops every
    /// mission not yet done, as dropping each [`Workflow::run`] would (processings
    /// already started go on in the cloud).
    pub async fn run_many(
        &self,
        jobs: Vec<ProcessingJob>,
        batch: BatchOptions,
    ) -> Vec<Result<WorkflowOutcome, WorkflowError>> {
        let handles = self.start_many(jobs, batch);
        futures::future::join_all(handles.iter().map(WorkflowHandle::wait)).await
    }

    /// As [`Workflow::run_many`], returning at once a handle per mission, in the order
    /// of `jobs`: each cancels, waits for and reports on its own mission.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn start_many(&self, jobs: Vec<ProcessingJob>, batch: BatchOptions) -> Vec<WorkflowHandle> {
        let slots = Arc::new(Semaphore::new(batch.ahead.max(1)));
        let mut previous: Option<oneshot::Receiver<()>> = None;
        let mut handles = Vec::with_capacity(jobs.len());
        for (index, job) in jobs.into_iter().enumerate() {
            let mut options = (batch.options)(index, &job);
            options.wait_for_free_organization = true;
            let mission = job.name.clone().unwrap_or_else(|| index.to_string());
            let record = batch.journal.as_ref().and_then(|j| j.record(&mission));
            if let Some(journal) = &batch.journal {
                let journal = journal.clone();
                let inner = options.on_progress.take();
                let name = mission.clone();
                options.on_progress = Some(Arc::new(move |p: &WorkflowProgress| {
                    journal.note(&name, p);
                    if let Some(inner) = &inner {
                        inner(p);
                    }
                }));
            }
            // Started by an earlier run of the batch: followed, not started again.
            if let Some(processing_id) = record.as_ref().and_then(|r| r.processing_id) {
                tracing::info!(mission, %processing_id, "resuming the mission's processing from the journal");
                handles.push(self.start_resume(processing_id, job.output_folder.clone(), options));
                continue;
            }
            // A container an earlier run left without a processing: deleted first.
            let orphan = record.and_then(|r| r.container_id);
            let journal = batch.journal.clone();
            let client = self.client.clone();
            let (has_slot, next_may_ask) = oneshot::channel();
            let after = previous.replace(next_may_ask);
            let slots = slots.clone();
            // A mission asks for its slot once the one before has its own (or is gone):
            // the missions begin in the order of the jobs.
            let slot = async move {
                if let Some(after) = after {
                    let _ = after.await;
                }
                let slot = slots.acquire_owned().await.ok();
                let _ = has_slot.send(());
                slot
            };
            let span = tracing::info_span!(
                "workflow",
                kind = "batch",
                mission = index,
                container_id = Empty,
                processing_id = Empty
            );
            let cleanup = options.cleanup_on_failure;
            let tolerance = options.outage_tolerance;
            handles.push(self.spawn(
                span,
                options.on_progress.clone(),
                cleanup,
                tolerance,
                move |run| async move {
                    let _slot = slot.await;
                    if let Some(container_id) = orphan {
                        super::run::delete_left_container(&client, container_id).await;
                        if let Some(journal) = &journal {
                            journal.forget_container(&mission);
                        }
                    }
                    run.execute(job, options).await
                },
            ));
        }
        handles
    }
}
