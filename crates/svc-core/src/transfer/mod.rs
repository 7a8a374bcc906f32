//! Uploads of registered files to their pre-signed POST forms, and downloads of a
//! processing's outputs: streamed, in parallel, retried, with progress and cancel.
//!
//! [`Transfers`] holds the HTTP client (without the service's bearer token: object
//! storage authorizes by the form or the address) and the [`TransferOptions`].
//! [`Transfers::upload`] and [`Transfers::download`] start the work in a spawned task
//! and return at once a [`TransferHandle`]: [`progress`](TransferHandle::progress)
//! (a [`Progress`] snapshot), [`subscribe`](TransferHandle::subscribe) (a
//! `tokio::sync::watch` receiver), [`cancel`](TransferHandle::cancel), and
//! [`wait`](TransferHandle::wait) for the [`TransferReport`] or the [`TransferError`]
//! (from any number of clones of the handle, each wait getting the outcome).
//! A [`ProgressCallback`] in the options is called with snapshots too (at most once per
//! `progress_interval`, and once with the final snapshot before `wait` returns).
//! [`Transfers::upload_to_container`] and [`Transfers::download_outputs`] first ask the
//! service what to transfer (a container's forms, a processing's outputs), then
//! transfer it and wait, the caller's wait being the transfer's scope.
//!
//! # Uploads
//!
//! Each [`UploadJob`] is a file already registered in its container (the cloud client
//! does the registration). Before anything is sent, every job is checked: its local
//! file exists and holds exactly the registered size ([`TransferError::SizeMismatch`]
//! otherwise: the form's policy only accepts that length), and its form can be sent
//! ([`TransferError::InvalidUploadForm`], [`TransferError::InvalidAddress`]). Then each
//! file is sent as one `multipart/form-data` POST: every entry of `uploadInfo.fields`
//! unchanged and in the order received, then `file` last, streamed from disk (never the
//! whole file in memory) with a `Content-Length`. 2xx is success. 403 is
//! [`TransferError::UploadRefused`] ("the upload form was modified or has expired": read
//! the container again for a fresh form) and other 4xx are [`TransferError::Rejected`],
//! neither retried; 5xx, 408, 429, connection errors, broken connections and stalls are
//! retried from the start of the file per the [`RetryPolicy`].
//!
//! # Downloads
//!
//! Every [`OutputFile`] path is checked first: a path that is absolute, holds `..`, a
//! backslash, a drive prefix or NUL, is empty or appears twice is refused with
//! [`TransferError::UnsafeOutputPath`] before anything is downloaded or written. Each
//! file is then streamed to a temporary file beside its destination and renamed into
//! place once complete (its length checked against `Content-Length` when there is
//! one), so no partial file is ever left: not on failure, not on cancel. An existing
//! file at the destination is replaced. Retries as for uploads (a GET is safe to
//! repeat); 403 is [`TransferError::DownloadRefused`] (list the outputs again).
//!
//! # Several files
//!
//! At most `parallelism` files move at once. A file that fails does not stop the
//! others unless `fail_fast` is set; the result is then [`TransferError::Failed`],
//! listing each failed file's error with the report of all of them.
//!
//! ```no_run
//! # async fn demo(jobs: Vec<svc_core::transfer::UploadJob>) -> Result<(), svc_core::transfer::TransferError> {
//! use svc_core::transfer::{TransferOptions, Transfers};
//!
//! let transfers = Transfers::new(reqwest::Client::new(), TransferOptions::default());
//! let handle = transfers.upload(jobs);
//! let mut progress = handle.subscribe();
//! tokio::spawn(async move {
//!     while progress.changed().await.is_ok() {
//!         let p = progress.borrow().clone();
//!         println!("{} of {:?} bytes", p.done_bytes, p.total_bytes);
//!     }
//! });
//! let report = handle.wait().await?;
//! println!("{} files uploaded", report.completed().count());
//! # Ok(()) }
//! ```

mod download;
mod error;
mod progress;
mod run;
mod upload;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use svc_cloud_api::cloud::types::{Container, OutputFile, UploadInfo};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use uuid::Uuid;

use crate::cloud::CloudClient;
use crate::http::{HttpClientConfig, TlsRoots};
use crate::retry::RetryPolicy;
use crate::task::Running;

pub use crate::observe::redact_url;
pub use error::TransferError;
pub use progress::{FileProgress, FileState, Progress, ProgressCallback};

/// The explanation given with a 403 to an upload.
pub const UPLOAD_REFUSED_REASON: &str = "the upload form was modified or has expired";

/// How transfers run. Build it with `..TransferOptions::default()`.
#[derive(Clone)]
pub struct TransferOptions {
    /// Files moved at the same time (at least 1). Default 4.
    pub parallelism: usize,
    /// Retries of each file on transient failures (5xx, 408, 429, connection errors,
    /// broken connections, stalls), each retry from the start of the file. The time
    /// budget `max_elapsed` counts from the start of the last attempt that moved data,
    /// so that a long transfer that breaks near its end is still retried.
    pub retry: RetryPolicy,
    /// Stop every other file at the first failed one (in-flight requests aborted,
    /// queued files skipped). Default `false`: every file runs to its end.
    pub fail_fast: bool,
    /// An attempt during which no byte moved for this long (sending, waiting for the
    /// answer, receiving) is abandoned and counts as a transient failure.
    /// `Duration::ZERO` turns this off. Default 60 s. Prefer it to a total timeout on
    /// the HTTP client, which would cut long transfers of big files.
    pub idle_timeout: Duration,
    /// Called with progress snapshots from a task of its own (never blocking the
    /// transfer), at most once per `progress_interval`, and once with the final
    /// snapshot (`finished` true) before [`TransferHandle::wait`] returns.
    pub on_progress: Option<ProgressCallback>,
    /// The shortest time between two calls of `on_progress`. Default 100 ms.
    pub progress_interval: Duration,
}

impl Default for TransferOptions {
    fn default() -> Self {
        Self {
            parallelism: 4,
            retry: RetryPolicy::default(),
            fail_fast: false,
            idle_timeout: Duration::from_secs(60),
            on_progress: None,
            progress_interval: Duration::from_millis(100),
        }
    }
}

impl fmt::Debug for TransferOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TransferOptions")
            .field("parallelism", &self.parallelism)
            .field("retry", &self.retry)
            .field("fail_fast", &self.fail_fast)
            .field("idle_timeout", &self.idle_timeout)
            .field(
                "on_progress",
                &self.on_progress.as_ref().map(|_| "callback"),
            )
            .field("progress_interval", &self.progress_interval)
            .finish()
    }
}

/// One registered file to upload.
#[derive(Clone)]
pub struct UploadJob {
    /// The file on disk.
    pub local_path: PathBuf,
    /// Its path in the container (names it in progress, reports and errors).
    pub container_path: String,
    /// The size registered for it, in bytes: the form accepts only this length.
    pub size: u64,
    /// The form returned at registration (or by reading the container).
    pub upload_info: UploadInfo,
}

impl UploadJob {
    /// The jobs that upload local files to the registered files of `container`:
    /// `files` pairs each file's container path with the local file. The size and the
    /// form are the registered ones (read the container again for fresh forms).
    ///
    /// # Errors
    /// [`TransferError::InvalidUploadForm`] naming the first container path that is not
    /// registered in the container, or that came without its upload form (a file
    /// already `ready` has none). Nothing is sent.
    pub fn for_container(
        container: &Container,
        files: impl IntoIterator<Item = (String, PathBuf)>,
    ) -> Result<Vec<UploadJob>, TransferError> {
        files
            .into_iter()
            .map(|(container_path, local_path)| {
                let refused = |reason: &str| TransferError::InvalidUploadForm {
                    file: container_path.clone(),
                    reason: reason.to_owned(),
                };
                let registered = container
                    .files
                    .iter()
                    .find(|f| f.path == container_path)
                    .ok_or_else(|| refused("no file of the container has this path"))?;
                let upload_info = registered.upload_info.clone().ok_or_else(|| {
                    refused("the container gave no upload form for it (already uploaded?)")
                })?;
                // A registration answer without the size (the service always sends it;
                // a reader does not rely on it): the file's own length is what was
                // registered.
                let size = match registered.size {
                    Some(size) => u64::try_from(size)
                        .map_err(|_| refused("its registered size is negative"))?,
                    None => std::fs::metadata(&local_path)
                        .map_err(|_| refused("no registered size, and the file cannot be read"))?
                        .len(),
                };
                Ok(UploadJob {
                    local_path,
                    container_path,
                    size,
                    upload_info,
                })
            })
            .collect()
    }
}

impl fmt::Debug for UploadJob {
    /// The form's field names only: its signature and credential are not printed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("UploadJob")
            .field("local_path", &self.local_path)
            .field("container_path", &self.container_path)
            .field("size", &self.size)
            .field("url", &redact_url(&self.upload_info.url))
            .field(
                "fields",
                &self.upload_info.fields.keys().collect::<Vec<_>>(),
            )
            .finish()
    }
}

/// What happened to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileReport {
    /// The file's container path (upload) or output path (download).
    pub name: String,
    /// The local file: the uploaded one, or where the download was written.
    pub local_path: PathBuf,
    /// Bytes moved by the last attempt (the file's size when done).
    pub bytes: u64,
    /// Attempts made (0 when it never started).
    pub attempts: u32,
    /// Its final state: [`FileState::Done`], `Failed`, `Canceled` or `Skipped`.
    pub state: FileState,
}

/// The outcome of a transfer, file by file in the order given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransferReport {
    /// Every file.
    pub files: Vec<FileReport>,
    /// From the start of the transfer to its end.
    pub elapsed: Duration,
}

impl TransferReport {
    /// The files transferred.
    pub fn completed(&self) -> impl Iterator<Item = &FileReport> {
        self.files.iter().filter(|f| f.state == FileState::Done)
    }

    /// The local paths of the files transferred (for downloads: the files written).
    pub fn written_paths(&self) -> Vec<PathBuf> {
        self.completed().map(|f| f.local_path.clone()).collect()
    }

    /// The bytes of the files transferred.
    pub fn bytes(&self) -> u64 {
        self.completed().map(|f| f.bytes).sum()
    }
}

/// Uploads and downloads with one HTTP client and one set of options.
#[derive(Clone, Debug)]
pub struct Transfers {
    http: reqwest::Client,
    options: TransferOptions,
}

impl HttpClientConfig {
    /// Uploads and downloads to and from storage: 10 s to connect, no total timeout
    /// (stalls are caught by
    /// [`TransferOptions::idle_timeout`]).
    pub fn transfers() -> Self {
        Self {
            roots: TlsRoots::default(),
            connect_timeout: Duration::from_secs(10),
            timeout: None,
            pool_idle_timeout: None,
            proxy: None,
        }
    }
}

impl Transfers {
    /// `http` must not add the service's bearer token (storage authorizes by the form
    /// or the pre-signed address) and should have no total timeout (see
    /// [`TransferOptions::idle_timeout`]).
    pub fn new(http: reqwest::Client, options: TransferOptions) -> Self {
        Self { http, options }
    }

    /// Transfers with an HTTP client of their own
    /// ([`HttpClientConfig::transfers`]: a 10 s connect timeout and no total timeout;
    /// stalls are caught by [`TransferOptions::idle_timeout`]).
    ///
    /// # Errors
    /// [`TransferError::Internal`] when the HTTP client cannot be built (no TLS
    /// backend); bring your own with [`Transfers::new`].
    pub fn with_options(options: TransferOptions) -> Result<Self, TransferError> {
        let http = HttpClientConfig::transfers()
            .build()
            .map_err(|e| TransferError::Internal {
                reason: e.to_string(),
            })?;
        Ok(Self::new(http, options))
    }

    /// The options in use.
    pub fn options(&self) -> &TransferOptions {
        &self.options
    }

    /// Starts uploading `jobs` (see the [module documentation](self)); returns at once.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn upload(&self, jobs: Vec<UploadJob>) -> TransferHandle {
        let tracker = progress::Tracker::new(
            jobs.iter()
                .map(|j| (j.container_path.clone(), j.local_path.clone(), Some(j.size)))
                .collect(),
        );
        let span = tracing::info_span!(
            "upload",
            files = jobs.len(),
            bytes = jobs.iter().map(|j| j.size).sum::<u64>()
        );
        let work = upload::run(
            self.http.clone(),
            self.options.clone(),
            tracker.clone(),
            jobs,
        );
        self.spawn(span, tracker, work)
    }

    /// Starts downloading `outputs` into `folder` (created if needed), each to
    /// `folder/<path>` (see the [module documentation](self)); returns at once.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn download(&self, outputs: Vec<OutputFile>, folder: PathBuf) -> TransferHandle {
        let tracker = progress::Tracker::new(
            outputs
                .iter()
                .map(|o| {
                    let local = download::destination(&folder, &o.path).unwrap_or_default();
                    (o.path.clone(), local, None)
                })
                .collect(),
        );
        let span = tracing::info_span!(
            "download",
            files = outputs.len(),
            folder = %folder.display()
        );
        let work = download::run(
            self.http.clone(),
            self.options.clone(),
            tracker.clone(),
            outputs,
            folder,
        );
        self.spawn(span, tracker, work)
    }

    /// Uploads local files to the registered files of a container: reads the
    /// container for the files' forms and sizes ([`UploadJob::for_container`]), then
    /// uploads them and waits. `files` pairs each container path with its local file.
    ///
    /// The caller's wait is the upload's scope: dropping the returned future (its
    /// caller cancelled) cancels the upload, as [`TransferHandle::wait_or_cancel`].
    /// [`Transfers::upload`] gives a handle instead (progress, `detach`).
    ///
    /// # Errors
    ///
    /// [`TransferError::Cloud`] when the container cannot be read,
    /// [`TransferError::InvalidUploadForm`] for a path the container does not list with
    /// a form, else those of [`TransferHandle::wait`]. Nothing is sent unless every
    /// file has its form.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub async fn upload_to_container(
        &self,
        client: &CloudClient,
        container_id: Uuid,
        files: impl IntoIterator<Item = (String, PathBuf)>,
    ) -> Result<TransferReport, TransferError> {
        let container = client
            .get_container(container_id)
            .await
            .map_err(TransferError::from)?;
        let jobs = UploadJob::for_container(&container, files)?;
        self.upload(jobs).wait_or_cancel().await
    }

    /// Downloads every output of a processed processing into `folder` (created if
    /// needed): lists the outputs, then downloads them as [`Transfers::download`] and
    /// waits. Dropping the returned future cancels the download (no partial file is
    /// left).
    ///
    /// # Errors
    ///
    /// [`TransferError::Cloud`] when the outputs cannot be listed, else those of
    /// [`TransferHandle::wait`].
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub async fn download_outputs(
        &self,
        client: &CloudClient,
        processing_id: Uuid,
        folder: PathBuf,
    ) -> Result<TransferReport, TransferError> {
        let outputs = client
            .list_processing_outputs(processing_id)
            .await
            .map_err(TransferError::from)?;
        self.download(outputs, folder).wait_or_cancel().await
    }

    fn spawn(
        &self,
        span: tracing::Span,
        tracker: progress::Tracker,
        work: impl Future<Output = Result<TransferReport, TransferError>> + Send + 'static,
    ) -> TransferHandle {
        let cancel = CancellationToken::new();
        let receiver = tracker.subscribe();
        let feeder = self.options.on_progress.clone().map(|callback| {
            tokio::spawn(progress::feed_callback(
                tracker.subscribe(),
                callback,
                self.options.progress_interval,
            ))
        });
        let token = cancel.clone();
        let work = async move {
            let started = tokio::time::Instant::now();
            tracing::debug!("transfer started");
            let result = tokio::select! {
                biased;
                () = token.cancelled() => {
                    tracker.stop_all(FileState::Canceled, FileState::Canceled);
                    tracing::info!("transfer canceled");
                    Err(TransferError::Canceled { report: run::report(&tracker, started.elapsed()) })
                }
                result = work => result,
            };
            tracker.finish();
            if let Some(feeder) = feeder {
                let _ = feeder.await;
            }
            result
        };
        TransferHandle {
            running: Running::spawn(
                cancel,
                |reason| TransferError::Internal { reason },
                work.instrument(span),
            ),
            progress: receiver,
        }
    }
}

/// A transfer under way. Cheap to clone: the clones share the transfer, and every
/// [`wait`](TransferHandle::wait), from any clone, gets its outcome, as many times as
/// asked. Dropping the last clone cancels the transfer (unless
/// [`detach`](TransferHandle::detach)ed); dropping a `wait` future ends that wait only.
#[derive(Clone, Debug)]
pub struct TransferHandle {
    running: Running<TransferReport, TransferError>,
    progress: watch::Receiver<Progress>,
}

impl TransferHandle {
    /// The progress now.
    pub fn progress(&self) -> Progress {
        self.progress.borrow().clone()
    }

    /// A receiver of the progress: it changes with every chunk moved and every state
    /// change; the last value has `finished` true.
    pub fn subscribe(&self) -> watch::Receiver<Progress> {
        self.progress.clone()
    }

    /// Stops every file promptly: requests in flight are aborted, partial downloads
    /// removed, queued files never start. [`wait`](Self::wait) then gives
    /// [`TransferError::Canceled`] (unless the transfer had already ended).
    pub fn cancel(&self) {
        self.running.cancel();
    }

    /// Something that cancels this transfer from elsewhere (another task, a signal
    /// handler) without keeping it from being canceled when the handles are dropped.
    pub fn canceler(&self) -> TransferCanceler {
        TransferCanceler(self.running.token())
    }

    /// From now on, dropping the handles leaves the transfer running to its end (for a
    /// binding whose objects may be collected while the work should go on);
    /// [`cancel`](Self::cancel) still stops it.
    pub fn detach(&self) {
        self.running.detach();
    }

    /// Whether the transfer has ended (`wait` would not wait).
    pub fn is_finished(&self) -> bool {
        self.running.is_finished()
    }

    /// Waits for the end of the transfer; every wait gets the outcome (a clone of it).
    ///
    /// # Errors
    ///
    /// See [`TransferError`]: a check failed before anything was sent, some files
    /// failed ([`TransferError::Failed`]), or the transfer was canceled.
    pub async fn wait(&self) -> Result<TransferReport, TransferError> {
        self.running.wait().await
    }

    /// As [`wait`](Self::wait), the caller's wait being the transfer's scope: dropped
    /// before the end (its caller cancelled), it cancels the transfer too, unless the
    /// handles were [`detach`](Self::detach)ed. What the bindings' `wait` is: cancelling
    /// or dropping what the caller holds stops the work, `detach` keeps it running.
    ///
    /// # Errors
    ///
    /// As [`wait`](Self::wait).
    pub async fn wait_or_cancel(&self) -> Result<TransferReport, TransferError> {
        self.running.wait_or_cancel().await
    }

    /// As [`wait`](Self::wait), for at most `timeout`: `None` when the transfer still
    /// runs then (it goes on). A transfer that has ended by then gives its outcome,
    /// even with a zero `timeout`.
    pub async fn wait_timeout(
        &self,
        timeout: Duration,
    ) -> Option<Result<TransferReport, TransferError>> {
        self.running.wait_timeout(timeout).await
    }
}

/// Cancels a transfer (see [`TransferHandle::cancel`]); cheap to clone.
#[derive(Clone, Debug)]
pub struct TransferCanceler(CancellationToken);

impl TransferCanceler {
    /// Stops the transfer, as [`TransferHandle::cancel`].
    pub fn cancel(&self) {
        self.0.cancel();
    }
}
