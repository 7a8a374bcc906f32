//! One workflow under way ([`Run`]): the container, the uploads, the start, then
//! following, collecting and downloading; and the recovery of creations whose answer
//! was lost.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::TryStreamExt as _;
use tokio::time::Instant;
use tracing::field::display;
use uuid::Uuid;

use super::follow;
use super::job::{JOB_KEY, check_job, job_key, resolve_folder, upload_jobs};
use super::outage::{Patience, Reached, never_sent};
use super::reports::Reports;
use super::{
    Cleanup, Ids, ProcessingJob, WORKFLOW_TAG_KEY, WorkflowError, WorkflowOptions, WorkflowOutcome,
    WorkflowProgress, WorkflowProgressCallback,
};
use crate::cloud::{
    CloudClient, CloudError, Container, CreateContainerFile, CreateContainerRequest, ListFilter,
    Processing, ProcessingStatus, RetryHint, StartProcessingRequest, TransportKind,
};
use crate::limits;
use crate::retry::RetryPolicy;
use crate::transfer::{Progress, TransferError, TransferHandle, TransferReport, Transfers};

/// Attempts in a row of a creation (container, processing start) that failed in
/// transit or with a 5xx.
const CREATION_ATTEMPTS: u32 = 6;

/// The shortest time between two progress reports of a transfer.
const TRANSFER_REPORT_INTERVAL: Duration = Duration::from_millis(100);

/// One workflow's state.
pub(super) struct Run {
    pub(super) client: CloudClient,
    pub(super) http: reqwest::Client,
    pub(super) on_progress: Option<WorkflowProgressCallback>,
    /// The streams of the workflow's handles.
    pub(super) reports: Arc<Reports>,
    pub(super) ids: Arc<Mutex<Ids>>,
    /// The workflow's span, which gets the identifiers once known.
    pub(super) span: tracing::Span,
    /// Whether the service has answered yet (see [`Reached`]).
    pub(super) reached: Reached,
    /// See [`WorkflowOptions::outage_tolerance`].
    pub(super) outage_tolerance: Duration,
}

impl Run {
    fn report(&self, progress: WorkflowProgress) {
        if let Some(callback) = &self.on_progress {
            callback(&progress);
        }
        self.reports.publish(&progress);
    }

    fn set_ids(&self, container: Option<Uuid>, processing: Option<Uuid>) {
        if let Some(id) = container {
            self.span.record("container_id", display(id));
        }
        if let Some(id) = processing {
            self.span.record("processing_id", display(id));
        }
        self.update_ids(|ids| {
            ids.container = container.or(ids.container);
            ids.processing = processing.or(ids.processing);
        });
    }

    fn update_ids(&self, change: impl FnOnce(&mut Ids)) {
        match self.ids.lock() {
            Ok(mut ids) => change(&mut ids),
            Err(poisoned) => change(&mut poisoned.into_inner()),
        }
    }

    pub(super) async fn execute(
        self,
        job: ProcessingJob,
        mut options: WorkflowOptions,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        let files = check_job(&job).await?;
        // Held until the outputs are downloaded: another run writing the same folder
        // is refused before anything is sent.
        let _output_lock = super::job::lock_output_folder(job.output_folder.as_deref())?;
        tracing::info!(
            files = files.len(),
            bytes = files.iter().map(|f| f.size).sum::<u64>(),
            follow = options.follow,
            "job checked"
        );

        // A job known by its key: an earlier run's processing is followed instead.
        let mut metadata = job.metadata.clone();
        if let Some(key) = &job.key {
            let key = job_key(key, &job.processing_json, &files).await?;
            if !metadata.contains_key(JOB_KEY) && metadata.len() >= limits::MAX_METADATA_KEYS {
                return Err(WorkflowError::InvalidJob {
                    reason: format!(
                        "metadata: {} entries leave no room for the job's key ({JOB_KEY})",
                        metadata.len()
                    ),
                });
            }
            if let Some(outcome) = self.rerun(&key, &job, &mut options).await? {
                return Ok(outcome);
            }
            metadata.insert(JOB_KEY.to_owned(), key);
        }

        // Container, tagged so that it can be found again after a lost answer.
        tracing::info!("step: creating the container");
        self.report(WorkflowProgress::CreatingContainer);
        let mut container_metadata = metadata.clone();
        let tag = (container_metadata.len() < limits::MAX_METADATA_KEYS
            && !container_metadata.contains_key(WORKFLOW_TAG_KEY))
        .then(Uuid::new_v4);
        if let Some(tag) = tag {
            container_metadata.insert(WORKFLOW_TAG_KEY.to_owned(), tag.to_string());
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
        // A cancel from here on looks the container up by its tag.
        self.update_ids(|ids| ids.creating = tag);
        let container = self
            .create_container(request, tag.map(|t| t.to_string()).as_deref())
            .await;
        self.update_ids(|ids| ids.creating = None);
        let container = container.map_err(|source| WorkflowError::Cloud {
            stage: "creating the container",
            container_id: None,
            processing_id: None,
            source: Arc::new(source),
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
            source: Arc::new(source),
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
            metadata: (!metadata.is_empty()).then(|| metadata.clone()),
        };
        // One start at a time per organization in this process, in the order the
        // workflows got here; held until the processing has ended.
        let began = Instant::now();
        let turn = if options.wait_for_free_organization {
            let label = job
                .name
                .clone()
                .unwrap_or_else(|| format!("container {container_id}"));
            self.take_turn(&label, options.max_wait).await
        } else {
            None
        };
        // A cancel from here on looks for a processing of the container.
        self.update_ids(|ids| ids.starting = true);
        let started = self.start_processing(request, &options, began).await;
        if let Ok(p) = &started {
            self.set_ids(None, Some(p.id));
        }
        self.update_ids(|ids| ids.starting = false);
        let started = started?;
        tracing::info!(
            processing_id = %started.id,
            status = %started.status,
            "processing started"
        );
        if !options.follow {
            drop(turn);
            tracing::info!("not following the processing (follow: false)");
            self.report_processing(&started);
            return Ok(WorkflowOutcome {
                processing: started,
                errors: Vec::new(),
                outputs: Vec::new(),
                downloaded: Vec::new(),
                container_id: Some(container_id),
                status_reads: 0,
                reused: false,
            });
        }
        self.conclude(
            started,
            job.output_folder.as_deref(),
            &mut options,
            &transfers,
            turn,
        )
        .await
    }

    /// An earlier run of the job of `key`: its processing (pending, running or
    /// processed) followed, its errors and outputs collected and downloaded, instead of
    /// starting another; `None` when there is none. First, the containers of the key
    /// that no processing uses (left by a run stopped before its start) are deleted.
    async fn rerun(
        &self,
        key: &str,
        job: &ProcessingJob,
        options: &mut WorkflowOptions,
    ) -> Result<Option<WorkflowOutcome>, WorkflowError> {
        let filter = ListFilter::metadata(JOB_KEY, key);
        let cloud_error = |source| WorkflowError::Cloud {
            stage: "looking for an earlier run of the job",
            container_id: None,
            processing_id: None,
            source: Arc::new(source),
            cleanup: Cleanup::NotAttempted,
        };
        let processings: Vec<Processing> = self
            .read(|| {
                self.client
                    .list_processings_matching(filter.clone())
                    .try_collect()
            })
            .await
            .map_err(cloud_error)?;
        let used: Vec<Uuid> = processings.iter().filter_map(|p| p.container_id).collect();
        let containers: Vec<Container> = self
            .read(|| {
                self.client
                    .list_containers_matching(filter.clone())
                    .try_collect()
            })
            .await
            .map_err(cloud_error)?;
        for container in containers.iter().filter(|c| !used.contains(&c.id)) {
            delete_left_container(&self.client, container.id).await;
        }
        let earlier = processings.iter().find(|p| {
            matches!(
                p.status,
                ProcessingStatus::Pending
                    | ProcessingStatus::Processing
                    | ProcessingStatus::Processed
            )
        });
        if let Some(p) = earlier.cloned() {
            tracing::info!(
                processing_id = %p.id,
                status = %p.status,
                "an earlier run of this job started this processing: following it instead of starting another"
            );
            self.set_ids(p.container_id, Some(p.id));
            if !options.follow {
                self.report_processing(&p);
                return Ok(Some(WorkflowOutcome {
                    container_id: p.container_id,
                    processing: p,
                    errors: Vec::new(),
                    outputs: Vec::new(),
                    downloaded: Vec::new(),
                    status_reads: 0,
                    reused: true,
                }));
            }
            let transfers = Transfers::new(self.http.clone(), options.transfer.clone());
            let mut outcome = self
                .conclude(p, job.output_folder.as_deref(), options, &transfers, None)
                .await?;
            outcome.reused = true;
            return Ok(Some(outcome));
        }
        Ok(None)
    }

    /// Follows an existing processing (see [`Workflow::resume`]).
    pub(super) async fn resume(
        self,
        processing_id: Uuid,
        output_folder: Option<PathBuf>,
        mut options: WorkflowOptions,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        let _output_lock = super::job::lock_output_folder(output_folder.as_deref())?;
        self.set_ids(None, Some(processing_id));
        tracing::info!(%processing_id, "step: reading the processing to resume");
        let processing = self
            .read(|| self.client.get_processing(processing_id))
            .await
            .map_err(|source| WorkflowError::Cloud {
                stage: "reading the processing",
                container_id: None,
                processing_id: Some(processing_id),
                source: Arc::new(source),
                cleanup: Cleanup::NotAttempted,
            })?;
        self.set_ids(processing.container_id, None);
        let transfers = Transfers::new(self.http.clone(), options.transfer.clone());
        self.conclude(
            processing,
            output_folder.as_deref(),
            &mut options,
            &transfers,
            None,
        )
        .await
    }

    /// Follows a started processing to its end, then collects its errors and outputs
    /// and downloads them to `output_folder`. The organization's `turn`, if held, is
    /// given to the next in line as soon as the processing has ended.
    async fn conclude(
        &self,
        started: Processing,
        output_folder: Option<&std::path::Path>,
        options: &mut WorkflowOptions,
        transfers: &Transfers,
        turn: Option<super::queue::Turn>,
    ) -> Result<WorkflowOutcome, WorkflowError> {
        let processing_id = started.id;
        let container_id = started.container_id;

        // Follow.
        let cloud_error = |stage, source| WorkflowError::Cloud {
            stage,
            container_id,
            processing_id: Some(processing_id),
            source: Arc::new(source),
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
        drop(turn);
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
            reused: false,
        })
    }

    /// Reports where a processing stands.
    pub(super) fn report_processing(&self, p: &Processing) {
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
    /// failures (the workflow has come far; a blip should not waste it), and for as
    /// long as the outage tolerance allows while the service or its identity
    /// provider is out.
    pub(super) async fn read<T, F, Fut>(&self, mut f: F) -> Result<T, CloudError>
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
        let mut patience = Patience::new(self.outage_tolerance);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let e = match f().await {
                Ok(value) => {
                    self.reached.mark();
                    return Ok(value);
                }
                Err(e) => e,
            };
            if self.reached.is_outage(&e) {
                if patience.wait_out("reading", &e).await {
                    continue;
                }
                return Err(e);
            }
            if e.retry_hint() != RetryHint::Transient || attempt >= policy.max_attempts {
                return Err(e);
            }
            let delay = policy.delay(attempt);
            tracing::info!(
                attempt,
                max_attempts = policy.max_attempts,
                delay_ms = crate::observe::millis(delay),
                reason = %e,
                "reading again after a transient failure"
            );
            tokio::time::sleep(delay).await;
        }
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
        let mut patience = Patience::new(self.outage_tolerance);
        loop {
            match self.client.create_container(request.clone()).await {
                Ok(container) => {
                    self.reached.mark();
                    return Ok(container);
                }
                // Nothing was sent (no token, no connection): an outage is waited out
                // without counting an attempt whose outcome is unknown.
                Err(e) if never_sent(&e) && self.reached.is_outage(&e) => {
                    if !patience.wait_out("creating the container", &e).await {
                        return Err(e);
                    }
                }
                Err(e)
                    if e.retry_hint() == RetryHint::Transient
                        && attempt + 1 < CREATION_ATTEMPTS =>
                {
                    attempt += 1;
                    if may_have_been_applied(&e) {
                        // Without a tag the first attempt's container cannot be found:
                        // creating again could duplicate it, so the error is returned.
                        let Some(tag) = tag else { return Err(e) };
                        tracing::info!(
                            reason = %e,
                            "the container may have been created: looking for it by its tag"
                        );
                        if let Some(found) = self.read(|| self.find_container(tag)).await? {
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
        find_container(&self.client, tag).await
    }

    /// A processing of `container_id`, if any.
    async fn find_processing(&self, container_id: Uuid) -> Result<Option<Processing>, CloudError> {
        find_processing(&self.client, container_id).await
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

    /// The organization's turn in this process (see [`super::queue`]), waited for at
    /// most `max_wait`; `None` when that passed (the start is then tried once, and a
    /// 409 ends the wait).
    async fn take_turn(&self, label: &str, max_wait: Duration) -> Option<super::queue::Turn> {
        if let Some(turn) = super::queue::try_turn(&self.client, label) {
            return Some(turn);
        }
        tracing::info!("waiting for the workflows before this one to end their processings");
        let began = Instant::now();
        let turn = super::queue::turn(&self.client, label, |place| {
            self.report(WorkflowProgress::WaitingForOrganization {
                waited: began.elapsed(),
                behind: place.behind,
                ahead: place.ahead,
            });
        });
        tokio::time::timeout(max_wait, turn).await.ok()
    }

    /// Starts the processing: waits out an ongoing processing of the organization
    /// when asked (until `max_wait` after `began`), and never starts a second one
    /// after a lost answer.
    async fn start_processing(
        &self,
        request: StartProcessingRequest,
        options: &WorkflowOptions,
        began: Instant,
    ) -> Result<Processing, WorkflowError> {
        let container_id = request.container_id;
        let cloud_error = |source| WorkflowError::Cloud {
            stage: "starting the processing",
            container_id: Some(container_id),
            processing_id: None,
            source: Arc::new(source),
            cleanup: Cleanup::NotAttempted,
        };
        let policy = creation_policy();
        let mut uncertain = false;
        let mut lost = 0;
        let mut outage = Patience::new(self.outage_tolerance);
        let mut busy = 0;
        loop {
            if uncertain {
                // An earlier start may have been applied: take its processing.
                if let Some(p) = self
                    .read(|| self.find_processing(container_id))
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
            // Nothing was sent (no token, no connection): an outage is waited out
            // without counting an attempt whose outcome is unknown.
            if never_sent(&e) && self.reached.is_outage(&e) {
                if !outage.wait_out("starting the processing", &e).await {
                    return Err(cloud_error(e));
                }
                continue;
            }
            outage.reset();
            if e.retry_hint() == RetryHint::Transient {
                lost += 1;
                uncertain |= may_have_been_applied(&e);
                if lost >= CREATION_ATTEMPTS {
                    if uncertain
                        && let Some(p) = self
                            .read(|| self.find_processing(container_id))
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
            if !self
                .read(|| self.is_ongoing_conflict(&e))
                .await
                .map_err(cloud_error)?
            {
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
                    source: Arc::new(e),
                    cleanup: Cleanup::NotAttempted,
                });
            }
            self.report(WorkflowProgress::WaitingForOrganization {
                waited,
                behind: None,
                ahead: 0,
            });
            // Jittered, so that waiters elsewhere do not ask in lockstep.
            let pause = options
                .poll
                .delay(busy)
                .mul_f64(crate::retry::jitter())
                .min(options.max_wait - waited);
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

/// Deletes, best effort, a container an earlier run left without a processing.
pub(super) async fn delete_left_container(client: &CloudClient, container_id: Uuid) {
    match client.delete_container(container_id).await {
        Ok(()) => tracing::info!(
            %container_id,
            "deleted a container an earlier run left without a processing"
        ),
        Err(e) => tracing::warn!(
            %container_id,
            reason = %e,
            "could not delete a container an earlier run left"
        ),
    }
}

/// The container tagged with `tag`, if any.
pub(super) async fn find_container(
    client: &CloudClient,
    tag: &str,
) -> Result<Option<Uuid>, CloudError> {
    let mut containers = client.list_containers();
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
pub(super) async fn find_processing(
    client: &CloudClient,
    container_id: Uuid,
) -> Result<Option<Processing>, CloudError> {
    let mut processings = client.list_processings();
    while let Some(p) = processings.try_next().await? {
        if p.container_id == Some(container_id) {
            return Ok(Some(p));
        }
    }
    Ok(None)
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
/// Whether a failed request may nonetheless have been applied by the service. One that
/// failed for want of an access token was never sent.
fn may_have_been_applied(e: &CloudError) -> bool {
    if never_sent(e) {
        return false;
    }
    match e {
        CloudError::Transport { kind, .. } => *kind != TransportKind::Connect,
        CloudError::Api { status, .. } => *status != 429,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
