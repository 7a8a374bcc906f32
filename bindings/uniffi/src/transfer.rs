//! `Transfers` / `TransferTask`: uploads to the pre-signed forms and downloads of
//! outputs, in parallel, with progress and cancellation.

use std::sync::Arc;
use std::time::Duration;

use svc_core::transfer as st;
use tokio::sync::watch;

use crate::error::{ListenerError, SvcError, listener_failed};
use crate::runtime::{enter, run, spawn};
use crate::tls::{TlsRoots, http_client};
use crate::types::{OutputFile, UploadInfo};

/// Where one file of a transfer stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Enum)]
pub enum FileState {
    Queued,
    Running,
    Retrying,
    Done,
    Failed,
    Canceled,
    Skipped,
    /// A state this version of the binding does not know.
    Other,
}

impl From<st::FileState> for FileState {
    fn from(s: st::FileState) -> Self {
        match s {
            st::FileState::Queued => Self::Queued,
            st::FileState::Running => Self::Running,
            st::FileState::Retrying => Self::Retrying,
            st::FileState::Done => Self::Done,
            st::FileState::Failed => Self::Failed,
            st::FileState::Canceled => Self::Canceled,
            st::FileState::Skipped => Self::Skipped,
            _ => Self::Other,
        }
    }
}

/// One file's progress.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FileProgress {
    pub name: String,
    pub done_bytes: u64,
    pub total_bytes: Option<u64>,
    pub state: FileState,
    pub attempts: u32,
}

/// A snapshot of a whole transfer.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct TransferProgress {
    pub files: Vec<FileProgress>,
    pub done_bytes: u64,
    pub total_bytes: Option<u64>,
    /// The transfer has ended: no further change will come.
    pub finished: bool,
}

impl From<&st::Progress> for TransferProgress {
    fn from(p: &st::Progress) -> Self {
        Self {
            files: p
                .files
                .iter()
                .map(|f| FileProgress {
                    name: f.name.clone(),
                    done_bytes: f.done_bytes,
                    total_bytes: f.total_bytes,
                    state: f.state.into(),
                    attempts: f.attempts,
                })
                .collect(),
            done_bytes: p.done_bytes,
            total_bytes: p.total_bytes,
            finished: p.finished,
        }
    }
}

/// One file of a finished transfer.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FileReport {
    pub name: String,
    pub local_path: String,
    pub bytes: u64,
    pub attempts: u32,
    pub state: FileState,
}

/// What a transfer did.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct TransferReport {
    pub files: Vec<FileReport>,
    pub elapsed_ms: u64,
}

impl From<st::TransferReport> for TransferReport {
    fn from(r: st::TransferReport) -> Self {
        Self {
            files: r
                .files
                .into_iter()
                .map(|f| FileReport {
                    name: f.name,
                    local_path: f.local_path.to_string_lossy().into_owned(),
                    bytes: f.bytes,
                    attempts: f.attempts,
                    state: f.state.into(),
                })
                .collect(),
            elapsed_ms: u64::try_from(r.elapsed.as_millis()).unwrap_or(u64::MAX),
        }
    }
}

/// Receives transfer progress (from a worker thread of the SDK: keep it quick).
#[uniffi::export(with_foreign)]
pub trait TransferListener: Send + Sync {
    /// A snapshot, at most every `progressIntervalMs`, and a last one when finished.
    /// Whatever it throws is ignored: the transfer goes on.
    fn on_progress(&self, progress: TransferProgress) -> Result<(), ListenerError>;
}

/// How transfers run.
#[derive(Clone, Debug, uniffi::Record)]
pub struct TransferOptions {
    /// Files transferred at once.
    #[uniffi(default = 4)]
    pub parallelism: u32,
    /// Attempts in all per file on transient failures.
    #[uniffi(default = 5)]
    pub max_attempts: u32,
    /// Stop every file at the first failure.
    #[uniffi(default = false)]
    pub fail_fast: bool,
    /// Give up on a file after this long without progress, in milliseconds.
    #[uniffi(default = 60000)]
    pub idle_timeout_ms: u64,
    /// The shortest time between two progress reports, in milliseconds.
    #[uniffi(default = 100)]
    pub progress_interval_ms: u64,
}

impl Default for TransferOptions {
    fn default() -> Self {
        Self {
            parallelism: 4,
            max_attempts: 5,
            fail_fast: false,
            idle_timeout_ms: 60_000,
            progress_interval_ms: 100,
        }
    }
}

impl TransferOptions {
    pub(crate) fn to_core(
        &self,
        listener: Option<Arc<dyn TransferListener>>,
    ) -> st::TransferOptions {
        let mut options = st::TransferOptions {
            parallelism: usize::try_from(self.parallelism).unwrap_or(1).max(1),
            fail_fast: self.fail_fast,
            idle_timeout: Duration::from_millis(self.idle_timeout_ms.max(1)),
            progress_interval: Duration::from_millis(self.progress_interval_ms),
            on_progress: listener.map(|l| -> st::ProgressCallback {
                let failed = std::sync::atomic::AtomicBool::new(false);
                Arc::new(move |p: &st::Progress| {
                    // A listener that throws must not end the transfer.
                    if l.on_progress(p.into()).is_err() {
                        listener_failed("transfer", &failed);
                    }
                })
            }),
            ..st::TransferOptions::default()
        };
        options.retry.max_attempts = self.max_attempts.max(1);
        options
    }
}

/// A file to upload to its container's pre-signed form.
#[derive(Clone, Debug, uniffi::Record)]
pub struct UploadJob {
    pub local_path: String,
    /// The file's path in the container.
    pub container_path: String,
    /// Its registered size in bytes.
    pub size: u64,
    /// The form of the registered (`pending`) file.
    pub upload_info: Arc<UploadInfo>,
}

/// Runs uploads and downloads with the given options.
#[derive(Debug, uniffi::Object)]
pub struct Transfers {
    inner: st::Transfers,
}

#[uniffi::export]
impl Transfers {
    /// Transfers with `options`, reporting to `listener`, over HTTPS with `tls`.
    #[uniffi::constructor(default(listener = None, tls = None))]
    pub fn new(
        options: TransferOptions,
        listener: Option<Arc<dyn TransferListener>>,
        tls: Option<TlsRoots>,
    ) -> Result<Arc<Self>, SvcError> {
        let http = http_client(tls.unwrap_or_default(), Duration::from_secs(10), None)?;
        Ok(Arc::new(Self {
            inner: st::Transfers::new(http, options.to_core(listener)),
        }))
    }

    /// Starts uploading; returns at once.
    pub fn upload(&self, jobs: Vec<UploadJob>) -> Result<Arc<TransferTask>, SvcError> {
        let jobs = jobs
            .into_iter()
            .map(|j| st::UploadJob {
                local_path: j.local_path.into(),
                container_path: j.container_path,
                size: j.size,
                upload_info: j.upload_info.inner.clone(),
            })
            .collect();
        let handle = enter(|| self.inner.upload(jobs))?;
        TransferTask::new(handle)
    }

    /// Starts downloading `outputs` into `folder` (created if needed); returns at once.
    pub fn download(
        &self,
        outputs: Vec<OutputFile>,
        folder: String,
    ) -> Result<Arc<TransferTask>, SvcError> {
        let outputs = outputs.into_iter().map(Into::into).collect();
        let handle = enter(|| self.inner.download(outputs, folder.into()))?;
        TransferTask::new(handle)
    }
}

type Shared<T> = watch::Receiver<Option<Result<T, SvcError>>>;

/// A transfer under way. `cancel()` stops it; `wait()` gives its report. Cancelling
/// the coroutine or task that waits cancels the transfer too. Dropping the object
/// cancels it.
#[derive(uniffi::Object)]
pub struct TransferTask {
    progress: watch::Receiver<st::Progress>,
    canceler: st::TransferCanceler,
    result: Shared<TransferReport>,
}

impl TransferTask {
    fn new(handle: st::TransferHandle) -> Result<Arc<Self>, SvcError> {
        let (progress, canceler) = (handle.subscribe(), handle.canceler());
        let result = settle(async move { Ok(handle.wait().await?.into()) })?;
        Ok(Arc::new(Self {
            progress,
            canceler,
            result,
        }))
    }
}

#[uniffi::export]
impl TransferTask {
    /// The latest progress snapshot.
    pub fn progress(&self) -> TransferProgress {
        (&*self.progress.borrow()).into()
    }

    /// Stops the transfer (no partial download is left); `wait()` then fails with
    /// `Canceled`.
    pub fn cancel(&self) {
        self.canceler.cancel();
    }

    /// Waits for the end of the transfer.
    pub async fn wait(&self) -> Result<TransferReport, SvcError> {
        let guard = CancelOnDrop(Some(self.canceler.clone()));
        let result = outcome(self.result.clone()).await;
        guard.disarm();
        result
    }
}

impl Drop for TransferTask {
    fn drop(&mut self) {
        self.canceler.cancel();
    }
}

/// Something that cancels a running task.
pub(crate) trait Cancel {
    fn cancel_now(&self);
}

impl Cancel for st::TransferCanceler {
    fn cancel_now(&self) {
        self.cancel();
    }
}

impl Cancel for svc_core::workflow::WorkflowCanceler {
    fn cancel_now(&self) {
        self.cancel();
    }
}

/// Cancels when dropped, unless disarmed: a `wait()` whose caller went away.
pub(crate) struct CancelOnDrop<C: Cancel>(pub(crate) Option<C>);

impl<C: Cancel> CancelOnDrop<C> {
    pub(crate) fn disarm(mut self) {
        self.0 = None;
    }
}

impl<C: Cancel> Drop for CancelOnDrop<C> {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            c.cancel_now();
        }
    }
}

/// Runs `work` on the runtime and keeps its result for every later `wait()`.
pub(crate) fn settle<T, F>(work: F) -> Result<Shared<T>, SvcError>
where
    F: std::future::Future<Output = Result<T, SvcError>> + Send + 'static,
    T: Clone + Send + Sync + 'static,
{
    let (sender, receiver) = watch::channel(None);
    spawn(async move {
        sender.send_replace(Some(work.await));
    })?;
    Ok(receiver)
}

/// The kept result of [`settle`], once it is there.
pub(crate) async fn outcome<T>(mut result: Shared<T>) -> Result<T, SvcError>
where
    T: Clone + Send + Sync + 'static,
{
    run(async move {
        match result.wait_for(Option::is_some).await {
            Ok(value) => value
                .clone()
                .unwrap_or_else(|| Err(SvcError::internal("the task ended without a result"))),
            Err(_) => Err(SvcError::internal("the task ended without a result")),
        }
    })
    .await
}
