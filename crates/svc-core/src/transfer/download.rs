//! Downloads: output paths checked, then each output streamed to a temporary file
//! beside its destination and renamed into place once complete.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use futures::FutureExt as _;
use reqwest::Url;
use svc_cloud_api::cloud::types::OutputFile;
use tokio::io::AsyncWriteExt as _;
use tokio::sync::Notify;
use tokio::time::Instant;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::error::{Failure, TransferError, Transient, retryable_status, stalled, storage_error};
use super::progress::Tracker;
use super::redact_url;
use super::run::{self, FileWork};
use super::upload::read_limited;
use super::{TransferOptions, TransferReport};

/// Write buffer of a download.
const WRITE_BUFFER: usize = 256 * 1024;

/// Where an output is written: `folder/<path>`, for a safe `path`.
pub(crate) fn destination(folder: &Path, path: &str) -> Result<PathBuf, &'static str> {
    Ok(folder.join(safe_relative(path)?))
}

/// `path` as a relative path that stays inside any folder it is joined to, or why not.
///
/// Refused: empty, NUL or another control character, a backslash, absolute, a `..`
/// segment, a drive prefix (`C:`), a trailing `/`, nothing but `.` and `/`; on Windows
/// also any `:` (streams) and device names (`CON`, `NUL`, `COM1`, ...). Empty and `.`
/// segments are dropped (`a//./b` is `a/b`).
pub(crate) fn safe_relative(path: &str) -> Result<PathBuf, &'static str> {
    if path.is_empty() {
        return Err("it is empty");
    }
    if path.contains('\0') {
        return Err("it contains NUL");
    }
    if path.chars().any(char::is_control) {
        return Err("it contains a control character");
    }
    if path.contains('\\') {
        return Err("it contains a backslash");
    }
    if path.starts_with('/') {
        return Err("it is absolute");
    }
    if path.ends_with('/') {
        return Err("it names a folder, not a file");
    }
    let mut relative = PathBuf::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => return Err("it contains `..`"),
            s => {
                let bytes = s.as_bytes();
                if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
                    return Err("it has a drive prefix");
                }
                if cfg!(windows) && (s.contains(':') || windows_device(s)) {
                    return Err("it is not a valid Windows file name");
                }
                relative.push(s);
            }
        }
    }
    if relative.as_os_str().is_empty() {
        return Err("it names no file");
    }
    if !relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
    {
        return Err("it is not a plain relative path");
    }
    Ok(relative)
}

/// `CON`, `PRN`, `AUX`, `NUL`, `COM0`-`COM9`, `LPT0`-`LPT9`, with any extension.
fn windows_device(segment: &str) -> bool {
    let stem = segment
        .split('.')
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_ascii_uppercase();
    matches!(stem.as_str(), "CON" | "PRN" | "AUX" | "NUL")
        || ((stem.starts_with("COM") || stem.starts_with("LPT"))
            && stem.len() == 4
            && stem.as_bytes()[3].is_ascii_digit())
}

/// The whole download: checks every output, then fetches them.
pub(crate) async fn run(
    http: reqwest::Client,
    options: TransferOptions,
    tracker: Tracker,
    outputs: Vec<OutputFile>,
    folder: PathBuf,
) -> Result<TransferReport, TransferError> {
    let started = Instant::now();
    let mut seen = HashSet::new();
    let mut plan = Vec::with_capacity(outputs.len());
    for (index, output) in outputs.iter().enumerate() {
        match check(output, &mut seen) {
            Ok(checked) => plan.push(checked),
            Err(e) => {
                run::refuse_before_start(&tracker, index);
                return Err(e);
            }
        }
    }
    let folder_error = |source| TransferError::LocalWrite {
        file: folder.clone(),
        source: Arc::new(source),
    };
    tokio::fs::create_dir_all(&folder)
        .await
        .map_err(folder_error)?;
    let root = tokio::fs::canonicalize(&folder)
        .await
        .map_err(folder_error)?;
    let files: Vec<FileWork> = outputs
        .into_iter()
        .zip(plan)
        .enumerate()
        .map(|(index, (output, (relative, url)))| {
            let file = Arc::new(FileDownload {
                http: http.clone(),
                url,
                destination: folder.join(relative),
                name: output.path,
                tracker: tracker.clone(),
                index,
                idle_timeout: options.idle_timeout,
            });
            let (root, retry) = (root.clone(), options.retry);
            let span = tracing::debug_span!("file", index, name = %file.name);
            async move {
                prepare_parent(&root, &file.destination, &file.name).await?;
                run::with_retries(&retry, &file.tracker, index, &file.name, |_| {
                    attempt(file.clone())
                })
                .await
            }
            .instrument(span)
            .boxed()
        })
        .collect();
    run::run_files(&tracker, &options, files, started).await
}

/// Checks an output before anything is fetched: a safe path, given once, and an
/// `http(s)` address.
fn check(
    output: &OutputFile,
    seen: &mut HashSet<PathBuf>,
) -> Result<(PathBuf, Url), TransferError> {
    let unsafe_path = |reason| TransferError::UnsafeOutputPath {
        path: output.path.clone(),
        reason,
    };
    let relative = safe_relative(&output.path).map_err(unsafe_path)?;
    if !seen.insert(relative.clone()) {
        return Err(unsafe_path("another output has the same path"));
    }
    let invalid = |reason: String| TransferError::InvalidAddress {
        file: output.path.clone(),
        address: redact_url(&output.url),
        reason,
    };
    let url = Url::parse(&output.url).map_err(|e| invalid(e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(invalid("not an http(s) address".to_owned()));
    }
    Ok((relative, url))
}

/// Creates the folders of `destination` below `root`, refusing any that resolves
/// outside `root` (a link on the way).
async fn prepare_parent(root: &Path, destination: &Path, name: &str) -> Result<(), TransferError> {
    let parent = destination.parent().unwrap_or(root);
    let escapes = || TransferError::UnsafeOutputPath {
        path: name.to_owned(),
        reason: "a folder on its way is a link that leads outside the download folder",
    };
    let write_error = |file: &Path| {
        let file = file.to_path_buf();
        move |source| TransferError::LocalWrite {
            file,
            source: Arc::new(source),
        }
    };
    // The deepest folder that exists already must lie inside the root ...
    let mut existing = parent;
    while tokio::fs::symlink_metadata(existing).await.is_err() {
        match existing.parent() {
            Some(up) => existing = up,
            None => break,
        }
    }
    let real = tokio::fs::canonicalize(existing)
        .await
        .map_err(write_error(existing))?;
    if !real.starts_with(root) {
        return Err(escapes());
    }
    // ... and so must the folder once created.
    tokio::fs::create_dir_all(parent)
        .await
        .map_err(write_error(parent))?;
    let real = tokio::fs::canonicalize(parent)
        .await
        .map_err(write_error(parent))?;
    if !real.starts_with(root) {
        return Err(escapes());
    }
    remove_stale_parts(parent).await;
    Ok(())
}

/// The prefix and suffix of a download's temporary file:
/// `.svc-download-<process id>-<random>.part`.
const PART_PREFIX: &str = ".svc-download-";
const PART_SUFFIX: &str = ".part";

/// How old a temporary file of an unknown process must be to count as left behind.
const STALE_PART_AGE: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Removes the temporary files that downloads of processes no longer running left in
/// `folder` (a process killed outright cannot remove its own). A file is removed when
/// the process its name records has ended (where the system tells: `/proc`), or, when
/// that cannot be told, once it has not changed for a day. Best effort: what cannot be
/// read or removed is left as it is.
async fn remove_stale_parts(folder: &Path) {
    let Ok(mut entries) = tokio::fs::read_dir(folder).await else {
        return;
    };
    let own = std::process::id();
    let processes_known = Path::new("/proc/self").exists();
    while let Ok(Some(entry)) = entries.next_entry().await {
        let name = entry.file_name();
        let Some(rest) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PART_PREFIX))
            .and_then(|n| n.strip_suffix(PART_SUFFIX))
        else {
            continue;
        };
        let pid = rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        let stale = match pid {
            Some(pid) if pid == own => false,
            Some(pid) if processes_known => !Path::new("/proc").join(pid.to_string()).exists(),
            _ => entry
                .metadata()
                .await
                .ok()
                .and_then(|m| m.modified().ok())
                .and_then(|modified| modified.elapsed().ok())
                .is_some_and(|age| age > STALE_PART_AGE),
        };
        if stale && tokio::fs::remove_file(entry.path()).await.is_ok() {
            tracing::info!(
                file = %entry.path().display(),
                "removed a temporary download file left by an interrupted download"
            );
        }
    }
}

/// One output to download, with what its attempts need.
struct FileDownload {
    http: reqwest::Client,
    url: Url,
    destination: PathBuf,
    name: String,
    tracker: Tracker,
    index: usize,
    idle_timeout: std::time::Duration,
}

/// One GET of the whole output.
async fn attempt(download: Arc<FileDownload>) -> Result<u64, Failure> {
    let FileDownload {
        http,
        url,
        destination,
        name,
        tracker,
        index,
        idle_timeout,
    } = &*download;
    let (index, idle_timeout) = (*index, *idle_timeout);
    let write_error = |file: &Path| {
        let file = file.to_path_buf();
        move |source| {
            Failure::Fatal(TransferError::LocalWrite {
                file,
                source: Arc::new(source),
            })
        }
    };
    let folder = destination.parent().unwrap_or(Path::new("."));
    let mut temp = TempFile::create(folder).map_err(write_error(folder))?;
    let activity = Notify::new();
    let span = tracing::debug_span!(
        "http",
        method = "GET",
        url = %crate::observe::parsed_url(url),
        status = Empty
    );
    let started = Instant::now();
    let exchange = async {
        let mut response = http
            .get(url.clone())
            .send()
            .await
            .map_err(|e| Failure::Transient(Transient::network(e)))?;
        let status = response.status();
        tracing::Span::current().record("status", status.as_u16());
        tracing::debug!(
            elapsed_ms = crate::observe::millis(started.elapsed()),
            content_length = response.content_length(),
            "storage answered"
        );
        if !status.is_success() {
            let body = read_limited(response, &activity).await;
            return Err(refusal(name, status.as_u16(), &body));
        }
        let expected = response.content_length();
        tracker.set_total(index, expected);
        let mut received: u64 = 0;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| Failure::Transient(Transient::network(e)))?
        {
            let length = chunk.len() as u64;
            received += length;
            if let Some(expected) = expected.filter(|e| received > *e) {
                return Err(Failure::Transient(Transient::Incomplete {
                    expected,
                    received,
                }));
            }
            temp.write(&chunk).await.map_err(write_error(temp.path()))?;
            tracker.add(index, length);
            activity.notify_one();
        }
        if let Some(expected) = expected.filter(|e| received != *e) {
            return Err(Failure::Transient(Transient::Incomplete {
                expected,
                received,
            }));
        }
        Ok(received)
    };
    let received = tokio::select! {
        result = exchange.instrument(span) => result?,
        () = run::stalled(&activity, idle_timeout) => {
            tracing::debug!(idle_s = idle_timeout.as_secs_f64(), "the download stalled");
            return Err(Failure::Transient(stalled(idle_timeout)));
        }
    };
    temp.persist(destination)
        .await
        .map_err(write_error(destination))?;
    Ok(received)
}

/// A download's error status, classified.
fn refusal(name: &str, status: u16, body: &str) -> Failure {
    let (code, storage_message) = storage_error(body);
    let file = name.to_owned();
    if status == 403 {
        Failure::Fatal(TransferError::DownloadRefused {
            file,
            storage_message,
        })
    } else if retryable_status(status) {
        Failure::Transient(Transient::Status {
            status,
            code,
            message: storage_message,
        })
    } else {
        let reason = if status == 404 {
            "the output does not exist (any more)"
        } else {
            "storage refused the download"
        };
        Failure::Fatal(TransferError::Rejected {
            file,
            status,
            code,
            reason,
            storage_message,
        })
    }
}

/// A hidden temporary file in the destination's folder, removed when dropped unless
/// it was moved into place.
struct TempFile {
    path: PathBuf,
    writer: Option<tokio::io::BufWriter<tokio::fs::File>>,
}

impl TempFile {
    /// Created synchronously (it is quick), so that a cancel cannot leave a file
    /// created after the guard ran.
    fn create(folder: &Path) -> std::io::Result<Self> {
        let path = folder.join(format!(
            "{PART_PREFIX}{}-{}{PART_SUFFIX}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&path)?;
        Ok(Self {
            path,
            writer: Some(tokio::io::BufWriter::with_capacity(
                WRITE_BUFFER,
                tokio::fs::File::from_std(file),
            )),
        })
    }

    fn path(&self) -> &Path {
        &self.path
    }

    async fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        match self.writer.as_mut() {
            Some(w) => w.write_all(data).await,
            None => Err(std::io::Error::other("the temporary file is closed")),
        }
    }

    /// Writes out, closes and renames the file to `to` (replacing a file there).
    async fn persist(&mut self, to: &Path) -> std::io::Result<()> {
        let Some(mut writer) = self.writer.take() else {
            return Err(std::io::Error::other("the temporary file is closed"));
        };
        writer.flush().await?;
        // Closed before the rename (Windows refuses to rename an open file).
        drop(writer.into_inner().into_std().await);
        std::fs::rename(&self.path, to)?;
        self.path = PathBuf::new();
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        drop(self.writer.take());
        if !self.path.as_os_str().is_empty() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_that_would_escape_are_refused() {
        for (path, reason) in [
            ("", "it is empty"),
            ("../evil", "it contains `..`"),
            ("a/../../evil", "it contains `..`"),
            ("..", "it contains `..`"),
            ("/etc/x", "it is absolute"),
            ("a\\..\\b", "it contains a backslash"),
            ("C:/x", "it has a drive prefix"),
            ("c:x", "it has a drive prefix"),
            ("a\0b", "it contains NUL"),
            ("a\nb", "it contains a control character"),
            ("dir/", "it names a folder, not a file"),
            (".", "it names no file"),
            ("././/.", "it names no file"),
        ] {
            assert_eq!(safe_relative(path), Err(reason), "{path:?}");
        }
    }

    #[test]
    fn plain_relative_paths_are_kept() {
        assert_eq!(
            safe_relative("trajectory.csv"),
            Ok(PathBuf::from("trajectory.csv"))
        );
        assert_eq!(
            safe_relative("./exports//day1/./report.json"),
            Ok(["exports", "day1", "report.json"].iter().collect())
        );
        assert_eq!(safe_relative("..a/b..").map(|_| ()), Ok(()));
        assert!(windows_device("nul.txt") && windows_device("COM1") && !windows_device("COMX"));
    }
}
