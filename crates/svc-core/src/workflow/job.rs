//! The job: what to process, its checks before anything is sent, and where its
//! outputs go.

use std::collections::HashMap;
use std::path::PathBuf;

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
        }
    }
}

/// A local file of the job.
pub(super) struct LocalFile {
    pub(super) path: PathBuf,
    pub(super) name: String,
    pub(super) size: u64,
    pub(super) kind: ContainerFileType,
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
        check_output_folder(folder).map_err(invalid)?;
    }
    let mut files = Vec::new();
    let mut seen: HashMap<String, PathBuf> = HashMap::new();
    let all = job
        .inputs
        .iter()
        .map(|p| (p, ContainerFileType::Input))
        .chain(
            job.resources
                .iter()
                .map(|p| (p, ContainerFileType::Resources)),
        );
    for (path, kind) in all {
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
        if let Some(other) = seen.get(&name) {
            return Err(invalid(format!(
                "`{}` and `{}` have the same name `{name}` (each file is stored at its name in the container); rename one",
                other.display(),
                path.display()
            )));
        }
        limits::check_container_path(&name)
            .map_err(|e| invalid(format!("`{}`: {e}", path.display())))?;
        let metadata =
            tokio::fs::metadata(path)
                .await
                .map_err(|source| WorkflowError::LocalFile {
                    path: path.clone(),
                    source,
                })?;
        if !metadata.is_file() {
            return Err(WorkflowError::LocalFile {
                path: path.clone(),
                source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a regular file"),
            });
        }
        // Readable?
        tokio::fs::File::open(path)
            .await
            .map_err(|source| WorkflowError::LocalFile {
                path: path.clone(),
                source,
            })?;
        seen.insert(name.clone(), path.clone());
        files.push(LocalFile {
            path: path.clone(),
            name,
            size: metadata.len(),
            kind,
        });
    }
    Ok(files)
}

/// Checks that the output folder can be a folder: the nearest part of it that exists
/// must be a folder (it is created below that). Checked before anything is sent, so
/// that a mistaken path does not cost a processing credit.
fn check_output_folder(folder: &std::path::Path) -> Result<(), String> {
    for at in folder.ancestors().filter(|p| !p.as_os_str().is_empty()) {
        match std::fs::metadata(at) {
            Ok(m) if m.is_dir() => return Ok(()),
            Ok(_) if at == folder => {
                return Err(format!(
                    "the output folder `{}` is an existing file, not a folder",
                    folder.display()
                ));
            }
            Ok(_) => {
                return Err(format!(
                    "the output folder `{}` cannot be created: `{}` is a file",
                    folder.display(),
                    at.display()
                ));
            }
            Err(_) => {}
        }
    }
    Ok(())
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
}
