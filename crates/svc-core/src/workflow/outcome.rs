//! What a workflow produced: [`WorkflowOutcome`].

use std::path::PathBuf;

use uuid::Uuid;

use crate::cloud::{
    OutputFile, Processing, ProcessingError, ProcessingErrorLevel, ProcessingResult,
    ProcessingStatus,
};

/// What a workflow produced. `Debug` shows the outputs' download addresses with their
/// signatures redacted.
#[derive(Clone, PartialEq)]
pub struct WorkflowOutcome {
    /// The processing as last read: at its end (`processed`, `canceled`, `archived`),
    /// or as started when not followed.
    pub processing: Processing,
    /// Its errors and warnings (empty when not followed).
    pub errors: Vec<ProcessingError>,
    /// Its outputs, with their download addresses (when `processed`).
    pub outputs: Vec<OutputFile>,
    /// The files written in the output folder.
    pub downloaded: Vec<PathBuf>,
    /// The container of the job (for a resumed processing: its container, when the
    /// service says).
    pub container_id: Option<Uuid>,
    /// How many times the processing's status was read (`getProcessing`) while it was
    /// followed.
    pub status_reads: u32,
    /// Whether the processing is an earlier run's of the same job, found by its key
    /// ([`ProcessingJob::key`](super::ProcessingJob::key)) instead of starting another.
    pub reused: bool,
}

impl std::fmt::Debug for WorkflowOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let outputs: Vec<(&str, String)> = self
            .outputs
            .iter()
            .map(|o| (o.path.as_str(), crate::transfer::redact_url(&o.url)))
            .collect();
        f.debug_struct("WorkflowOutcome")
            .field("processing", &self.processing)
            .field("errors", &self.errors)
            .field("outputs", &outputs)
            .field("downloaded", &self.downloaded)
            .field("container_id", &self.container_id)
            .field("status_reads", &self.status_reads)
            .finish()
    }
}

impl WorkflowOutcome {
    /// Whether the processing ended `processed` with the result `succeeded`.
    pub fn succeeded(&self) -> bool {
        self.processing.status == ProcessingStatus::Processed
            && self.processing.processing_result == Some(ProcessingResult::Succeeded)
    }

    /// Whether the processing ended `processed` with the result `failed`.
    pub fn failed(&self) -> bool {
        self.processing.processing_result == Some(ProcessingResult::Failed)
    }

    /// The recorded errors (level `error`).
    pub fn error_messages(&self) -> impl Iterator<Item = &ProcessingError> {
        self.errors
            .iter()
            .filter(|e| e.level == Some(ProcessingErrorLevel::Error))
    }

    /// The recorded warnings (level `warning`).
    pub fn warnings(&self) -> impl Iterator<Item = &ProcessingError> {
        self.errors
            .iter()
            .filter(|e| e.level == Some(ProcessingErrorLevel::Warning))
    }
}
