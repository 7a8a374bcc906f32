//! The processing engine: runs the lifecycle of `openapi/cloud.yaml` ("States and
//! lifecycle") at the configured pace.
//!
//! `pending` → `processing` through the steps `import`, `base_station`, `preprocessing`,
//! `processing`, `export`, `report` with `processingProgress` rising from 0 to 1 →
//! `processed` with `processingResult` `succeeded` or `failed`. The outputs are computed
//! from the container's input files ([`outputs::process_into`]) during the `processing`
//! step, written to temporary files of the storage, and moved into place during `export`.
//! A cancel or an archive (which change the status under the state lock) stops the run at
//! its next tick: the engine never overwrites them, and the temporary files go.
//!
//! # Memory
//!
//! A processing's memory grows with the number of GNSS epochs of its inputs, not with
//! their size: each input file is read line by line through a 64 KiB buffer (a line is
//! kept up to 4 KiB), and 56 bytes are kept per epoch (a GGA and its RMC, about 150 bytes
//! of text, make one); the outputs are written to disk as they are produced, and the
//! epochs are freed when the processing step ends. 2 million fixes (a 307 MB NMEA file)
//! peak at about 110 MiB above the emulator's resting memory, which it is back to
//! afterwards.

pub mod outputs;

use std::sync::Arc;
use std::time::{Duration, Instant};

use svc_cloud_api::cloud::types::{ErrorCount, Processing, ProcessingError};
use svc_cloud_api::enums::{
    ContainerFileType, ProcessingErrorLevel, ProcessingResult, ProcessingStatus, ProcessingStep,
};
use uuid::Uuid;

use crate::state::{App, now};
use crate::storage::NewObject;

const STEPS: [ProcessingStep; 6] = [
    ProcessingStep::Import,
    ProcessingStep::BaseStation,
    ProcessingStep::Preprocessing,
    ProcessingStep::Processing,
    ProcessingStep::Export,
    ProcessingStep::Report,
];
/// Progress updates within a step.
const TICKS_PER_STEP: u32 = 2;

pub fn spawn(app: Arc<App>, id: Uuid) {
    tokio::spawn(async move { run(app, id).await });
}

/// Applies `change` to the processing if it is still running; publishes the update.
/// `false` when the processing was canceled, archived or removed meanwhile.
fn update(app: &Arc<App>, id: Uuid, change: impl FnOnce(&mut Processing)) -> bool {
    let snapshot = {
        let mut db = app.db();
        let Some(record) = db.processings.get_mut(&id) else {
            return false;
        };
        if !crate::state::is_running(&record.processing) {
            return false;
        }
        change(&mut record.processing);
        record.processing.updated_at = Some(now());
        record.processing.clone()
    };
    crate::notify::publish(app, &snapshot, false);
    true
}

async fn run(app: Arc<App>, id: Uuid) {
    let started = Instant::now();
    let tick = app.config.processing_time / (STEPS.len() as u32 * TICKS_PER_STEP + 1);
    if !app.sleep(tick).await {
        return;
    }
    if !update(&app, id, |p| {
        p.status = ProcessingStatus::Processing;
        p.processing_step = Some(STEPS[0].clone());
        p.processing_progress = Some(0.0);
    }) {
        return;
    }
    let total = (STEPS.len() as u32 * TICKS_PER_STEP) as f64;
    let mut result = None;
    for (i, step) in STEPS.iter().enumerate() {
        for t in 0..TICKS_PER_STEP {
            if !app.sleep(tick).await {
                return;
            }
            if *step == ProcessingStep::Processing && t == 0 {
                result = Some(compute(&app, id).await);
            }
            let progress = ((i as u32 * TICKS_PER_STEP + t + 1) as f64 / total).min(1.0);
            let step = step.clone();
            if !update(&app, id, |p| {
                p.processing_step = Some(step);
                // The last update is the end itself, at 1.
                p.processing_progress = Some(if progress >= 1.0 { 0.99 } else { progress });
            }) {
                return;
            }
        }
    }
    let elapsed = started.elapsed();
    finish(&app, id, result, elapsed).await;
}

/// What a run produced: the outputs to store (written, not yet in place), the messages to
/// record, the summary.
struct Computed {
    outputs: Vec<outputs::Written<NewObject>>,
    messages: Vec<(ProcessingErrorLevel, String)>,
    mission_length: Option<i64>,
    failed: bool,
    location: (Option<String>, Option<String>, Option<String>),
}

async fn compute(app: &App, id: Uuid) -> Computed {
    let (inputs, json, bucket) = {
        let db = app.db();
        let Some(record) = db.processings.get(&id) else {
            return failure("the processing disappeared".into(), Vec::new());
        };
        let container = record
            .processing
            .container_id
            .and_then(|c| db.containers.get(&c));
        let inputs: Vec<outputs::InputFile> = container
            .map(|c| {
                c.files
                    .iter()
                    .filter_map(|f| db.files.get(f))
                    .filter(|f| f.type_ == ContainerFileType::Input)
                    .filter_map(|f| {
                        Some(outputs::InputFile {
                            path: f.path.clone(),
                            location: app.storage.object_path(&f.bucket, &f.key)?,
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();
        (
            inputs,
            record.processing.processing_json.clone(),
            record.bucket.clone(),
        )
    };
    let storage = app.storage.clone();
    let work = tokio::task::spawn_blocking(move || {
        outputs::process_into(&inputs, &json, |path| {
            storage.create_object(&bucket, &output_key(id, path))
        })
    })
    .await;
    match work {
        Ok(Ok(outcome)) => Computed {
            outputs: outcome.outputs,
            messages: outcome
                .warnings
                .into_iter()
                .map(|w| (ProcessingErrorLevel::Warning, w))
                .collect(),
            mission_length: Some(outcome.summary.mission_length_s),
            failed: false,
            location: (
                outcome.summary.country,
                outcome.summary.region,
                outcome.summary.place,
            ),
        },
        Ok(Err(failed)) => failure(failed.error, failed.warnings),
        Err(_) => failure(
            "the processing engine stopped unexpectedly".into(),
            Vec::new(),
        ),
    }
}

/// The storage key of a processing's output.
fn output_key(id: Uuid, path: &str) -> String {
    format!("processings/{id}/outputs/{path}")
}

fn failure(error: String, warnings: Vec<String>) -> Computed {
    let mut messages: Vec<_> = warnings
        .into_iter()
        .map(|w| (ProcessingErrorLevel::Warning, w))
        .collect();
    messages.push((ProcessingErrorLevel::Error, error));
    Computed {
        outputs: Vec::new(),
        messages,
        mission_length: None,
        failed: true,
        location: (None, None, None),
    }
}

async fn finish(app: &Arc<App>, id: Uuid, computed: Option<Computed>, elapsed: Duration) {
    let computed =
        computed.unwrap_or_else(|| failure("the processing step did not run".into(), Vec::new()));
    let bucket = match app.db().processings.get(&id) {
        Some(r) => r.bucket.clone(),
        None => return,
    };
    let mut stored = Vec::new();
    let mut messages = computed.messages;
    for output in computed.outputs {
        let key = output_key(id, &output.path);
        match output.file.commit() {
            Ok(()) => stored.push((output.path, key)),
            Err(e) => messages.push((
                ProcessingErrorLevel::Error,
                format!("could not store {}: {e}", output.path),
            )),
        }
    }
    let failed = computed.failed
        || messages
            .iter()
            .any(|(l, _)| *l == ProcessingErrorLevel::Error);
    let at = now();
    let errors: Vec<ProcessingError> = messages
        .into_iter()
        .map(|(level, message)| ProcessingError {
            id: Uuid::new_v4(),
            level: Some(level),
            message: Some(message),
            date: Some(at),
        })
        .collect();
    let error_recorded = errors
        .iter()
        .any(|e| e.level == Some(ProcessingErrorLevel::Error));
    let snapshot = {
        let mut db = app.db();
        let Some(record) = db.processings.get_mut(&id) else {
            return;
        };
        if !crate::state::is_running(&record.processing) {
            drop(db);
            // Canceled or archived while storing: the outputs are not kept.
            app.delete_objects(
                stored
                    .into_iter()
                    .map(|(_, k)| (bucket.clone(), k))
                    .collect(),
            );
            return;
        }
        let p = &mut record.processing;
        p.status = ProcessingStatus::Processed;
        p.processing_result = Some(if failed {
            ProcessingResult::Failed
        } else {
            ProcessingResult::Succeeded
        });
        p.processing_progress = Some(1.0);
        p.processing_duration = Some(i64::try_from(elapsed.as_secs()).unwrap_or(i64::MAX).max(1));
        p.mission_length = computed.mission_length;
        (
            p.mission_location_country,
            p.mission_location_region,
            p.mission_location_place,
        ) = computed.location;
        p.error_count = Some(ErrorCount {
            errors: errors
                .iter()
                .filter(|e| e.level == Some(ProcessingErrorLevel::Error))
                .count() as u64,
            warnings: errors
                .iter()
                .filter(|e| e.level == Some(ProcessingErrorLevel::Warning))
                .count() as u64,
        });
        p.archive_scheduled_at = Some(svc_cloud_api::Timestamp(
            at.0 + app.config.container_lifetime,
        ));
        p.updated_at = Some(at);
        record.errors = errors;
        record.outputs = stored;
        record.processing.clone()
    };
    crate::notify::publish(app, &snapshot, error_recorded);
}
