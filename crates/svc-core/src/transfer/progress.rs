//! Progress of a transfer: snapshots published through a `watch` channel, and the
//! optional callback fed from it.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

/// Where one file stands.
#[non_exhaustive]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FileState {
    /// Waiting for a free slot (see `TransferOptions::parallelism`).
    Queued,
    /// An attempt is sending or receiving the file.
    Running,
    /// An attempt failed with a transient error; the next one starts after a pause
    /// (from the start of the file).
    Retrying,
    /// Transferred.
    Done,
    /// Failed; the error is in [`super::TransferError::Failed`].
    Failed,
    /// Stopped by a cancel (or by `fail_fast` while it was running).
    Canceled,
    /// Never started: another file failed a check before anything was sent, or
    /// `fail_fast` stopped the transfer first.
    Skipped,
}

impl FileState {
    /// Whether the file has reached its end (done, failed, canceled or skipped).
    pub fn is_final(self) -> bool {
        !matches!(self, Self::Queued | Self::Running | Self::Retrying)
    }
}

/// One file's progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileProgress {
    /// The file's container path (upload) or output path (download).
    pub name: String,
    /// Bytes sent (upload) or received (download) by the current attempt: back to 0
    /// when an attempt starts again from the start of the file.
    pub done_bytes: u64,
    /// The file's size: known from the start for uploads, from the answer's
    /// `Content-Length` for downloads (`None` until then, or without one).
    pub total_bytes: Option<u64>,
    /// Where the file stands.
    pub state: FileState,
    /// Attempts started so far (0 while queued).
    pub attempts: u32,
}

/// A snapshot of a whole transfer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Progress {
    /// Every file, in the order given.
    pub files: Vec<FileProgress>,
    /// The sum of the files' `done_bytes`.
    pub done_bytes: u64,
    /// The sum of the files' `total_bytes`, once every one is known.
    pub total_bytes: Option<u64>,
    /// The transfer has ended (successfully or not): no further change will come.
    pub finished: bool,
}

impl Progress {
    pub(crate) fn new(files: impl IntoIterator<Item = (String, Option<u64>)>) -> Self {
        let files: Vec<FileProgress> = files
            .into_iter()
            .map(|(name, total_bytes)| FileProgress {
                name,
                done_bytes: 0,
                total_bytes,
                state: FileState::Queued,
                attempts: 0,
            })
            .collect();
        let mut progress = Self {
            files,
            done_bytes: 0,
            total_bytes: None,
            finished: false,
        };
        progress.sum();
        progress
    }

    fn sum(&mut self) {
        self.done_bytes = self.files.iter().map(|f| f.done_bytes).sum();
        self.total_bytes = self
            .files
            .iter()
            .map(|f| f.total_bytes)
            .sum::<Option<u64>>();
    }
}

/// Bytes between two progress events of a file whose size is unknown.
const PROGRESS_STEP_UNKNOWN: u64 = 1 << 20;

/// Receives progress snapshots; see `TransferOptions::on_progress`.
pub type ProgressCallback = Arc<dyn Fn(&Progress) + Send + Sync>;

/// The writing side of the progress of one transfer, shared by its files.
#[derive(Clone)]
pub(crate) struct Tracker {
    sender: Arc<watch::Sender<Progress>>,
    paths: Arc<Vec<PathBuf>>,
}

impl Tracker {
    /// `files`: (name, local path, total bytes when known).
    pub(crate) fn new(files: Vec<(String, PathBuf, Option<u64>)>) -> Self {
        let mut paths = Vec::with_capacity(files.len());
        let progress = Progress::new(files.into_iter().map(|(name, path, total)| {
            paths.push(path);
            (name, total)
        }));
        let (sender, _) = watch::channel(progress);
        Self {
            sender: Arc::new(sender),
            paths: Arc::new(paths),
        }
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<Progress> {
        self.sender.subscribe()
    }

    pub(crate) fn snapshot(&self) -> Progress {
        self.sender.borrow().clone()
    }

    pub(crate) fn local_path(&self, index: usize) -> PathBuf {
        self.paths.get(index).cloned().unwrap_or_default()
    }

    /// Changes one file's progress. Once the final snapshot is published
    /// ([`Self::finish`]) nothing changes any more: a request body that is still being
    /// read by the connection for a moment after a cancel cannot move the numbers.
    fn file(&self, index: usize, change: impl FnOnce(&mut FileProgress)) {
        self.sender.send_if_modified(|p| {
            if p.finished {
                return false;
            }
            if let Some(f) = p.files.get_mut(index) {
                change(f);
            }
            p.sum();
            true
        });
    }

    /// An attempt starts (from the start of the file).
    pub(crate) fn begin_attempt(&self, index: usize, attempt: u32) {
        self.file(index, |f| {
            f.done_bytes = 0;
            f.attempts = attempt;
            f.state = FileState::Running;
        });
    }

    /// Counts bytes moved; ignored once the file or the transfer has ended (see
    /// [`Self::file`]).
    pub(crate) fn add(&self, index: usize, bytes: u64) {
        let mut moved = None;
        self.sender.send_if_modified(|p| {
            if p.finished {
                return false;
            }
            match p.files.get_mut(index) {
                Some(f) if !f.state.is_final() => {
                    let before = f.done_bytes;
                    f.done_bytes = f.done_bytes.saturating_add(bytes);
                    p.done_bytes = p.done_bytes.saturating_add(bytes);
                    moved = Some((before, f.done_bytes, f.total_bytes));
                    true
                }
                _ => false,
            }
        });
        if let Some((before, after, total)) = moved {
            self.log_progress(index, before, after, total);
        }
    }

    /// A debug event each time a file passes another tenth of its size (or another
    /// [`PROGRESS_STEP_UNKNOWN`] bytes when its size is unknown), and at its end.
    fn log_progress(&self, index: usize, before: u64, after: u64, total: Option<u64>) {
        if !tracing::enabled!(tracing::Level::DEBUG) {
            return;
        }
        let step = total.map_or(PROGRESS_STEP_UNKNOWN, |t| (t / 10).max(1));
        let crossed = before / step != after / step || total == Some(after);
        if !crossed {
            return;
        }
        let progress = self.sender.borrow();
        let Some(file) = progress.files.get(index) else {
            return;
        };
        tracing::debug!(
            file = %file.name,
            done_bytes = after,
            total_bytes = total,
            transfer_done_bytes = progress.done_bytes,
            transfer_total_bytes = progress.total_bytes,
            "progress"
        );
    }

    pub(crate) fn set_total(&self, index: usize, total: Option<u64>) {
        self.file(index, |f| f.total_bytes = total);
    }

    pub(crate) fn set_state(&self, index: usize, state: FileState) {
        self.file(index, |f| f.state = state);
    }

    /// Bytes moved by the current attempt of a file.
    pub(crate) fn done_bytes(&self, index: usize) -> u64 {
        self.sender
            .borrow()
            .files
            .get(index)
            .map_or(0, |f| f.done_bytes)
    }

    /// Every file not at its end yet gets `running` (if it runs or waits for a retry)
    /// or `waiting` (if it has not started).
    pub(crate) fn stop_all(&self, running: FileState, waiting: FileState) {
        self.sender.send_modify(|p| {
            for f in &mut p.files {
                match f.state {
                    FileState::Queued => f.state = waiting,
                    FileState::Running | FileState::Retrying => f.state = running,
                    _ => {}
                }
            }
        });
    }

    pub(crate) fn finish(&self) {
        self.sender.send_modify(|p| p.finished = true);
    }
}

/// Calls `callback` with the latest snapshot whenever the progress changed, at most
/// once per `interval`, and a last time with the final snapshot; ends after it.
pub(crate) async fn feed_callback(
    mut receiver: watch::Receiver<Progress>,
    callback: ProgressCallback,
    interval: Duration,
) {
    loop {
        if receiver.changed().await.is_err() {
            // The transfer is gone without a final snapshot: give the last one.
            let last = receiver.borrow().clone();
            callback(&last);
            return;
        }
        let snapshot = receiver.borrow_and_update().clone();
        callback(&snapshot);
        if snapshot.finished {
            return;
        }
        tokio::time::sleep(interval).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_are_known_once_every_file_is() {
        let t = Tracker::new(vec![
            ("a".into(), PathBuf::from("a"), Some(10)),
            ("b".into(), PathBuf::from("b"), None),
        ]);
        assert_eq!(t.snapshot().total_bytes, None);
        t.set_total(1, Some(5));
        t.begin_attempt(0, 1);
        t.add(0, 4);
        t.add(1, 5);
        let p = t.snapshot();
        assert_eq!((p.done_bytes, p.total_bytes), (9, Some(15)));
        t.begin_attempt(0, 2);
        let p = t.snapshot();
        assert_eq!(
            (p.done_bytes, p.files[0].attempts),
            (5, 2),
            "a retry starts at 0"
        );
        t.stop_all(FileState::Canceled, FileState::Skipped);
        let p = t.snapshot();
        assert_eq!(p.files[0].state, FileState::Canceled);
        assert_eq!(p.files[1].state, FileState::Skipped);
    }
}
