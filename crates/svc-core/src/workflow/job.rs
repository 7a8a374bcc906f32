//! The job: what to process, its checks before anything is sent, and where its
//! outputs go.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use uuid::Uuid;

use super::{PROCESSING_ID_PLACEHOLDER, WorkflowError};
use crate::Metadata;
use crate::cloud::{CloudError, Container, ContainerFileType, ContainerRegion};
use crate::limits;
use crate::transfer::UploadJob;

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
    /// How the job is known again by a later run (`None`: it is not). With a key, the
    /// container and the processing carry it in their metadata ([`JOB_KEY`]); a run
    /// whose key an earlier run's processing carries follows that processing (pending,
    /// running or processed) instead of starting another, and containers left with the
    /// key and no processing (a run stopped before its start) are deleted first (so
    /// two runs of one key at once are not supported).
    pub key: Option<JobKey>,
}

/// The metadata key under which a job's key is stored (see [`ProcessingJob::key`]).
pub const JOB_KEY: &str = "svc-job-key";

/// How a job is known again across runs (see [`ProcessingJob::key`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobKey {
    /// Derived from the job: its configuration (its keys in any order), and each
    /// file's path in the container, size and content (SHA-256), in order. The same
    /// files and configuration give the same key on any machine.
    Derived,
    /// Given by the caller: 1 to 500 characters.
    Given(String),
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
            key: None,
        }
    }
}

/// The key of a job (see [`JobKey`]): a given one checked, a derived one computed from
/// the configuration and the files (read on a blocking thread).
pub(super) async fn job_key(
    key: &JobKey,
    config: &serde_json::Map<String, serde_json::Value>,
    files: &[LocalFile],
) -> Result<String, WorkflowError> {
    match key {
        JobKey::Given(key) => {
            let chars = key.chars().count();
            if chars == 0 || chars > limits::MAX_METADATA_VALUE_CHARS {
                return Err(WorkflowError::InvalidJob {
                    reason: format!(
                        "the job's key has {chars} characters (1 to {} allowed)",
                        limits::MAX_METADATA_VALUE_CHARS
                    ),
                });
            }
            Ok(key.clone())
        }
        JobKey::Derived => {
            let mut canonical = Vec::new();
            canonical_json(&serde_json::Value::Object(config.clone()), &mut canonical);
            let files: Vec<(String, u64, PathBuf)> = files
                .iter()
                .map(|f| (f.name.clone(), f.size, f.path.clone()))
                .collect();
            tokio::task::spawn_blocking(move || derive_key(&canonical, &files))
                .await
                .map_err(|e| WorkflowError::InvalidJob {
                    reason: format!("deriving the job's key stopped: {e}"),
                })?
        }
    }
}

/// `sha256:` and the first 32 hexadecimal digits of the SHA-256 of the canonical
/// configuration, then of each file's name, size and content.
fn derive_key(config: &[u8], files: &[(String, u64, PathBuf)]) -> Result<String, WorkflowError> {
    use sha2::Digest as _;
    use std::io::Read as _;
    let mut hash = sha2::Sha256::new();
    hash.update(b"svc-job-key 1\n");
    hash.update((config.len() as u64).to_le_bytes());
    hash.update(config);
    let mut buffer = vec![0u8; 1 << 20];
    for (name, size, path) in files {
        hash.update((name.len() as u64).to_le_bytes());
        hash.update(name.as_bytes());
        hash.update(size.to_le_bytes());
        let local = |source: std::io::Error| WorkflowError::LocalFile {
            path: path.clone(),
            source: Arc::new(source),
        };
        let mut file = std::fs::File::open(path).map_err(local)?;
        loop {
            let n = file.read(&mut buffer).map_err(local)?;
            if n == 0 {
                break;
            }
            hash.update(&buffer[..n]);
        }
    }
    let digest = hash.finalize();
    Ok(format!("sha256:{}", hex::encode(&digest[..16])))
}

/// JSON with object keys sorted, no spaces: one text per value, whatever the order of
/// its keys.
fn canonical_json(value: &serde_json::Value, out: &mut Vec<u8>) {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (key, value)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(&serde_json::Value::String(key.clone()), out);
                out.push(b':');
                canonical_json(value, out);
            }
            out.push(b'}');
        }
        serde_json::Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_json(item, out);
            }
            out.push(b']');
        }
        other => out.extend_from_slice(other.to_string().as_bytes()),
    }
}

/// Reads a processing configuration file: one JSON object (the `processingJson` of the
/// start), as [`ProcessingJob::processing_json`] takes it.
///
/// # Errors
/// [`WorkflowError::LocalFile`] when the file cannot be read (missing, a folder,
/// unreadable: the system's error kept, with its code); [`WorkflowError::InvalidJob`]
/// naming the file, the line and the column when it is not JSON (the parser's message,
/// without the file's values), or when its JSON is not an object.
pub fn read_processing_config(
    path: &std::path::Path,
) -> Result<serde_json::Map<String, serde_json::Value>, WorkflowError> {
    let text = std::fs::read_to_string(path).map_err(unusable(path))?;
    let invalid = |reason: String| WorkflowError::InvalidJob { reason };
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(map)) => Ok(map),
        Ok(_) => Err(invalid(format!(
            "the processing configuration `{}` is not a JSON object",
            path.display()
        ))),
        Err(e) => Err(invalid(format!(
            "the processing configuration `{}` is not valid JSON at line {}, column {}: {}",
            path.display(),
            e.line(),
            e.column(),
            crate::observe::without_values(&e.to_string())
        ))),
    }
}

/// The error of a local file that cannot be used.
fn unusable(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> WorkflowError + '_ {
    move |source| WorkflowError::LocalFile {
        path: path.to_path_buf(),
        source: std::sync::Arc::new(source),
    }
}

/// A local file of the job.
pub(super) struct LocalFile {
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) size: u64,
    pub(super) kind: ContainerFileType,
}

/// The file in an output folder whose advisory lock a run holds while it may write
/// there (removed when the run ends).
pub const OUTPUT_LOCK_FILE: &str = ".svc-output.lock";

/// The advisory lock of an output folder, held until dropped: then the lock file is
/// removed (while still locked), and the folder too when the lock created it and
/// nothing was written into it.
#[derive(Debug)]
pub(super) struct OutputLock {
    file: Option<std::fs::File>,
    path: PathBuf,
    created: Option<PathBuf>,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        drop(self.file.take());
        if let Some(folder) = &self.created {
            // Only an empty folder is removed.
            let _ = std::fs::remove_dir(folder);
        }
    }
}

/// Takes the advisory lock of the output folder `folder` (created if needed) for as
/// long as the returned guard lives: two runs never download into one folder at
/// once. A folder named with [`PROCESSING_ID_PLACEHOLDER`] is each processing's own
/// and is not locked; neither is one on a file system without locks (the lock is then
/// only skipped, with a log line).
///
/// # Errors
/// [`WorkflowError::OutputFolderBusy`] when another run holds it;
/// [`WorkflowError::InvalidJob`] when the folder cannot be created.
pub(super) fn lock_output_folder(
    folder: Option<&std::path::Path>,
) -> Result<Option<OutputLock>, WorkflowError> {
    let Some(folder) = folder else {
        return Ok(None);
    };
    if folder
        .to_str()
        .is_some_and(|text| text.contains(PROCESSING_ID_PLACEHOLDER))
    {
        return Ok(None);
    }
    let created = (!folder.exists()).then(|| folder.to_path_buf());
    std::fs::create_dir_all(folder).map_err(|e| WorkflowError::InvalidJob {
        reason: format!(
            "the output folder `{}` cannot be created: {e}",
            folder.display()
        ),
    })?;
    let path = folder.join(OUTPUT_LOCK_FILE);
    let unlocked = |e: &dyn std::fmt::Display| {
        tracing::info!(path = %path.display(), error = %e, "the output folder cannot be locked: going on without");
        Ok(None)
    };
    let file = match std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(e) => return unlocked(&e),
    };
    match file.try_lock() {
        Ok(()) => Ok(Some(OutputLock {
            file: Some(file),
            path,
            created,
        })),
        Err(std::fs::TryLockError::WouldBlock) => Err(WorkflowError::OutputFolderBusy {
            folder: folder.to_path_buf(),
        }),
        Err(std::fs::TryLockError::Error(e)) => unlocked(&e),
    }
}

/// `folder` with [`PROCESSING_ID_PLACEHOLDER`] replaced.
pub(super) fn resolve_folder(folder: &std::path::Path, processing_id: Uuid) -> PathBuf {
    match folder.to_str() {
        Some(text) if text.contains(PROCESSING_ID_PLACEHOLDER) => {
            PathBuf::from(text.replace(PROCESSING_ID_PLACEHOLDER, &processing_id.to_string()))
        }
        _ => folder.to_path_buf(),
    }
}

/// Checks the job before anything is sent; the files with their names and sizes.
pub(super) async fn check_job(job: &ProcessingJob) -> Result<Vec<LocalFile>, WorkflowError> {
    let invalid = |reason: String| WorkflowError::InvalidJob { reason };
    if job.inputs.is_empty() {
        return Err(invalid("no input file".to_owned()));
    }
    limits::check_metadata(&job.metadata).map_err(|e| invalid(format!("metadata: {e}")))?;
    if let Some(folder) = &job.output_folder {
        check_output_folder(folder)?;
    }
    let config = crate::processing_config::ProcessingConfig::from_map(&job.processing_json)
        .map_err(|e| invalid(e.to_string()))?;
    let mut files = Vec::new();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    let mut all = Vec::new();
    for (path, kind) in job
        .inputs
        .iter()
        .map(|p| (p, ContainerFileType::Input))
        .chain(
            job.resources
                .iter()
                .map(|p| (p, ContainerFileType::Resources)),
        )
    {
        if tokio::fs::metadata(path).await.is_ok_and(|m| m.is_dir()) {
            // A folder: its files, at their paths below it.
            for (file, name) in folder_files(path)? {
                all.push((file, name, kind.clone()));
            }
        } else {
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
            all.push((path.clone(), name, kind));
        }
    }
    for (path, name, kind) in all {
        let path = &path;
        if let Some(other) = seen.get(&name) {
            return Err(invalid(format!(
                "`{}` and `{}` have the same name `{name}` (each file is stored at its name in the container); rename one",
                other.display(),
                path.display()
            )));
        }
        limits::check_container_path(&name)
            .map_err(|e| invalid(format!("`{}`: {e}", path.display())))?;
        let metadata = tokio::fs::metadata(path).await.map_err(unusable(path))?;
        if !metadata.is_file() {
            return Err(unusable(path)(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a regular file",
            )));
        }
        // Readable?
        tokio::fs::File::open(path).await.map_err(unusable(path))?;
        seen.insert(name.clone(), path.clone());
        files.push(LocalFile {
            path: path.clone(),
            name,
            size: metadata.len(),
            kind,
        });
    }
    // The files the vendor's configuration names are among the inputs (the shorthand's
    // IMU file is optional: without it the rover's NMEA is processed alone).
    let named = match &config {
        crate::processing_config::ProcessingConfig::Project(_) => config.named_input_paths(),
        crate::processing_config::ProcessingConfig::Shorthand(_) => Vec::new(),
    };
    for (field, named) in named {
        let found = match named.strip_suffix('/') {
            Some(folder) => files.iter().any(|f| {
                f.name
                    .strip_prefix(folder)
                    .is_some_and(|rest| rest.starts_with('/'))
            }),
            None => files.iter().any(|f| f.name == named),
        };
        if !found {
            return Err(invalid(format!(
                "processing configuration: {field}: `{named}` is none of the input files ({}); \
                 give the mission's folder to keep the files' paths",
                files
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(files)
}

/// The files below `folder` (its sub-folders included, hidden files and folders left
/// out), sorted, each with its path below `folder`, `/`-separated: the name it is
/// stored at in the container.
fn folder_files(folder: &std::path::Path) -> Result<Vec<(PathBuf, String)>, WorkflowError> {
    let mut out = Vec::new();
    let mut pending = vec![(folder.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let mut entries = std::fs::read_dir(&dir)
            .map_err(unusable(&dir))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(unusable(&dir))?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(WorkflowError::InvalidJob {
                    reason: format!(
                        "the name of `{}` is not valid UTF-8",
                        entry.path().display()
                    ),
                });
            };
            if name.starts_with('.') {
                continue;
            }
            let relative = format!("{prefix}{name}");
            if entry.path().is_dir() {
                pending.push((entry.path(), format!("{relative}/")));
            } else {
                out.push((entry.path(), relative));
            }
        }
    }
    out.sort_by(|a, b| a.1.cmp(&b.1));
    if out.is_empty() {
        return Err(WorkflowError::InvalidJob {
            reason: format!("the folder `{}` holds no file", folder.display()),
        });
    }
    Ok(out)
}

/// Checks that the outputs can be written to `folder` (a job's
/// [`output_folder`](ProcessingJob::output_folder), placeholder included): the nearest
/// part of it that exists must be a folder (the rest is created below it) in which a
/// file can be created (a read-only folder or file system is refused; the check
/// creates a hidden empty file there and removes it). [`Workflow::run`](super::Workflow::run)
/// checks it before anything is sent, so that a mistaken path does not cost a
/// processing credit; a command-line tool can check it before it even connects.
///
/// # Errors
/// [`WorkflowError::InvalidJob`] naming the folder and the reason.
pub fn check_output_folder(folder: &std::path::Path) -> Result<(), WorkflowError> {
    let invalid = |reason: String| WorkflowError::InvalidJob { reason };
    let relative_root = std::path::Path::new(".");
    let existing = folder
        .ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                relative_root
            } else {
                p
            }
        })
        .find_map(|at| std::fs::metadata(at).ok().map(|m| (at, m)));
    let Some((at, metadata)) = existing else {
        return Ok(());
    };
    if !metadata.is_dir() {
        return Err(invalid(if at == folder {
            format!(
                "the output folder `{}` is an existing file, not a folder",
                folder.display()
            )
        } else {
            format!(
                "the output folder `{}` cannot be created: `{}` is a file",
                folder.display(),
                at.display()
            )
        }));
    }
    let probe = at.join(format!(
        ".svc-write-check-{}-{}",
        std::process::id(),
        Uuid::new_v4().simple()
    ));
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&probe)
    {
        Ok(file) => {
            drop(file);
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(invalid(format!(
            "the outputs cannot be written to `{}`: `{}` {}",
            folder.display(),
            at.display(),
            match e.kind() {
                std::io::ErrorKind::PermissionDenied => "is not writable".to_owned(),
                _ => format!("cannot hold a new file ({e})"),
            }
        ))),
    }
}

/// The uploads of the container's files still waiting for their content.
pub(super) fn upload_jobs(
    container: &Container,
    files: &[LocalFile],
) -> Result<Vec<UploadJob>, CloudError> {
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
    fn output_folders_are_checked_for_writing() {
        let dir = tempfile::tempdir().unwrap();
        check_output_folder(&dir.path().join("new/{processing_id}")).unwrap();
        check_output_folder(dir.path()).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "the check leaves nothing behind");
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        for folder in [file.clone(), file.join("below")] {
            let e = check_output_folder(&folder).unwrap_err();
            assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e}");
        }
        if cfg!(target_os = "linux") {
            let e = check_output_folder(std::path::Path::new("/proc/svc-out")).unwrap_err();
            assert!(e.to_string().contains("cannot be written"), "{e}");
        }
    }
}
