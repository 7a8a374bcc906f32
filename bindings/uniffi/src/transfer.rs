//! `Transfers` / `TransferTask`: uploads to the pre-signed forms and downloads of
//! outputs, in parallel, with progress and cancellation.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use svc_core::http::HttpClientConfig;
use svc_core::transfer as st;

use crate::cloud::{CloudClient, TlsRoots};
use crate::error::{ListenerError, SvcError, listener_failed, parse_id};
use crate::runtime::{enter, run};
use crate::types::{Count, LongCount};
use crate::types::{OutputFile, UploadInfo, at_least, signed, small};

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
    pub done_bytes: LongCount,
    pub total_bytes: Option<LongCount>,
    pub state: FileState,
    pub attempts: Count,
}

/// A snapshot of a whole transfer.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct TransferProgress {
    pub files: Vec<FileProgress>,
    pub done_bytes: LongCount,
    pub total_bytes: Option<LongCount>,
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
                    done_bytes: signed(f.done_bytes),
                    total_bytes: f.total_bytes.map(signed),
                    state: f.state.into(),
                    attempts: small(f.attempts),
                })
                .collect(),
            done_bytes: signed(p.done_bytes),
            total_bytes: p.total_bytes.map(signed),
            finished: p.finished,
        }
    }
}

/// One file of a finished transfer.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct FileReport {
    pub name: String,
    pub local_path: String,
    pub bytes: LongCount,
    pub attempts: Count,
    pub state: FileState,
}

/// What a transfer did.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct TransferReport {
    pub files: Vec<FileReport>,
    pub elapsed: Duration,
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
                    bytes: signed(f.bytes),
                    attempts: small(f.attempts),
                    state: f.state.into(),
                })
                .collect(),
            elapsed: r.elapsed,
        }
    }
}

/// Receives transfer progress (from a worker thread of the SDK: keep it quick).
#[uniffi::export(with_foreign)]
pub trait TransferListener: Send + Sync {
    /// A snapshot, at most every `progressInterval`, and a last one when finished.
    /// Whatever it throws is ignored: the transfer goes on.
    fn on_progress(&self, progress: TransferProgress) -> Result<(), ListenerError>;
}

/// How transfers run.
#[derive(Clone, Debug, uniffi::Record)]
pub struct TransferOptions {
    /// Files transferred at once.
    #[uniffi(default = 4)]
    pub parallelism: Count,
    /// Attempts in all per file on transient failures.
    #[uniffi(default = 5)]
    pub max_attempts: Count,
    /// Stop every file at the first failure.
    #[uniffi(default = false)]
    pub fail_fast: bool,
    /// Give up on a file after this long without progress (`None`: 60 s).
    #[uniffi(default = None)]
    pub idle_timeout: Option<Duration>,
    /// The shortest time between two progress reports (`None`: 100 ms).
    #[uniffi(default = None)]
    pub progress_interval: Option<Duration>,
}

impl Default for TransferOptions {
    fn default() -> Self {
        Self {
            parallelism: Count(4),
            max_attempts: Count(5),
            fail_fast: false,
            idle_timeout: None,
            progress_interval: None,
        }
    }
}

impl TransferOptions {
    pub(crate) fn to_core(
        &self,
        listener: Option<Arc<dyn TransferListener>>,
    ) -> st::TransferOptions {
        let defaults = st::TransferOptions::default();
        let mut options = st::TransferOptions {
            parallelism: usize::try_from(self.parallelism.0).unwrap_or(1).max(1),
            fail_fast: self.fail_fast,
            idle_timeout: self
                .idle_timeout
                .unwrap_or(defaults.idle_timeout)
                .max(Duration::from_millis(1)),
            progress_interval: self.progress_interval.unwrap_or(defaults.progress_interval),
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
        options.retry.max_attempts = at_least(self.max_attempts, 1);
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
    pub size: LongCount,
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
        let http = tls
            .unwrap_or_default()
            .client(HttpClientConfig::transfers())?;
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
                size: u64::try_from(j.size.0).unwrap_or(0),
                upload_info: j.upload_info.inner.clone(),
            })
            .collect();
        let handle = enter(|| self.inner.upload(jobs))?;
        Ok(TransferTask::new(handle))
    }

    /// Starts downloading `outputs` into `folder` (created if needed); returns at once.
    pub fn download(
        &self,
        outputs: Vec<OutputFile>,
        folder: String,
    ) -> Result<Arc<TransferTask>, SvcError> {
        let outputs = outputs.into_iter().map(Into::into).collect();
        let handle = enter(|| self.inner.download(outputs, folder.into()))?;
        Ok(TransferTask::new(handle))
    }

    /// Uploads local files to the registered files of a container and waits: reads
    /// the container for their forms and sizes, then uploads. `files` maps each
    /// container path to its local file. Cancelling the call (the coroutine, the
    /// `Task`) cancels the upload; an unknown container is the service's error, with
    /// nothing sent.
    pub async fn upload_to_container(
        &self,
        client: Arc<CloudClient>,
        container_id: String,
        files: HashMap<String, String>,
    ) -> Result<TransferReport, SvcError> {
        let id = parse_id("containerId", &container_id)?;
        let transfers = self.inner.clone();
        let files: Vec<(String, PathBuf)> = files
            .into_iter()
            .map(|(path, local)| (path, local.into()))
            .collect();
        let client = client.inner.clone();
        run(async move {
            Ok(transfers
                .upload_to_container(&client, id, files)
                .await?
                .into())
        })
        .await
    }

    /// Downloads every output of a `processed` processing into `folder` (created if
    /// needed) and waits: lists the outputs, then downloads them. Cancelling the call
    /// cancels the download (no partial file is left).
    pub async fn download_outputs(
        &self,
        client: Arc<CloudClient>,
        processing_id: String,
        folder: String,
    ) -> Result<TransferReport, SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let transfers = self.inner.clone();
        let client = client.inner.clone();
        run(async move {
            Ok(transfers
                .download_outputs(&client, id, folder.into())
                .await?
                .into())
        })
        .await
    }
}

/// A transfer under way, scoped to what holds it: `cancel()`, cancelling the coroutine
/// or task that waits for it, or dropping (closing) this object stops it (no partial
/// download is left), unless `detach()` was called, after which it runs to its end
/// (`cancel()` still stops it). `wait()` gives its report any number of times.
#[derive(uniffi::Object)]
pub struct TransferTask {
    handle: st::TransferHandle,
}

impl TransferTask {
    fn new(handle: st::TransferHandle) -> Arc<Self> {
        Arc::new(Self { handle })
    }
}

#[uniffi::export]
impl TransferTask {
    /// The latest progress snapshot.
    pub fn progress(&self) -> TransferProgress {
        (&self.handle.progress()).into()
    }

    /// Stops the transfer (no partial download is left); `wait()` then fails with
    /// `Canceled`.
    pub fn cancel(&self) {
        self.handle.cancel();
    }

    /// Lets the transfer run to its end even if the waits are cancelled or this object
    /// is dropped; `cancel()` still stops it.
    pub fn detach(&self) {
        self.handle.detach();
    }

    /// Whether the transfer has ended (`wait()` answers at once).
    pub fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// The transfer's progress as a stream of its own (Kotlin `progressFlow()`, Swift
    /// `progressUpdates`): the snapshot now, then the latest one after each change (a
    /// reader that falls behind gets the newest, never a backlog, and never holds the
    /// transfer up), ending after the snapshot that says `finished`.
    pub fn progress_stream(&self) -> Arc<TransferProgressStream> {
        Arc::new(TransferProgressStream {
            watch: Arc::new(tokio::sync::Mutex::new(ProgressWatch {
                receiver: self.handle.subscribe(),
                started: false,
                ended: false,
            })),
        })
    }

    /// Waits for the end of the transfer. Cancelling the wait cancels the transfer too,
    /// unless it was detached.
    pub async fn wait(&self) -> Result<TransferReport, SvcError> {
        let handle = self.handle.clone();
        run(async move { Ok(handle.wait_or_cancel().await?.into()) }).await
    }
}

/// A transfer's progress snapshots (see `TransferTask.progressStream()`).
#[derive(uniffi::Object)]
pub struct TransferProgressStream {
    watch: Arc<tokio::sync::Mutex<ProgressWatch>>,
}

struct ProgressWatch {
    receiver: tokio::sync::watch::Receiver<st::Progress>,
    /// The snapshot at the start was given.
    started: bool,
    /// The `finished` snapshot was given (or the transfer is gone): nothing follows.
    ended: bool,
}

#[uniffi::export]
impl TransferProgressStream {
    /// The next snapshot: at once the first time, then once the progress has changed;
    /// `None` after the `finished` one. Cancelling the wait takes nothing from the
    /// stream.
    pub async fn next(&self) -> Result<Option<TransferProgress>, SvcError> {
        let watch = Arc::clone(&self.watch);
        run(async move {
            let mut watch = watch.lock().await;
            if watch.ended {
                return Ok(None);
            }
            if watch.started && watch.receiver.changed().await.is_err() {
                watch.ended = true;
                return Ok(None);
            }
            watch.started = true;
            let snapshot = watch.receiver.borrow_and_update().clone();
            watch.ended = snapshot.finished;
            Ok(Some((&snapshot).into()))
        })
        .await
    }
}
