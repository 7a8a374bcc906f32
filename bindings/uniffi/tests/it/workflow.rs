//! The cloud client and the workflow from a foreign executor: progress, outputs, a
//! dropped wait, typed errors, cleanup on failure.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{config, kind, options, rig, samples};
use futures::executor::block_on;
use svc_emulator::{Emulator, EmulatorConfig};
use svc_ffi::*;

/// Records every report, and fails on the first one (as a Kotlin listener that throws):
/// the workflow must go on and report the rest.
#[derive(Default)]
struct Recorder(Mutex<Vec<WorkflowProgress>>);

impl WorkflowListener for Recorder {
    fn on_progress(&self, progress: WorkflowProgress) -> Result<(), ListenerError> {
        let mut seen = self.0.lock().map_err(|_| ListenerError::Failed {
            reason: "poisoned".into(),
        })?;
        seen.push(progress);
        if seen.len() == 1 {
            return Err(ListenerError::Failed {
                reason: "the first report fails".into(),
            });
        }
        Ok(())
    }
}

pub(crate) fn sample_job(out: Option<String>) -> ProcessingJob {
    let dir = samples();
    ProcessingJob {
        inputs: vec![
            dir.join("rover.nmea").to_string_lossy().into_owned(),
            dir.join("imu.csv").to_string_lossy().into_owned(),
        ],
        processing_config: processing_config_from_json(
            std::fs::read_to_string(dir.join("processing.json")).expect("config"),
        )
        .expect("a valid configuration"),
        resources: vec![],
        name: Some("ffi test".into()),
        metadata: HashMap::from([("vehicle".to_owned(), "van 1".to_owned())]),
        region: None,
        output_folder: out,
    }
}

#[test]
fn a_whole_workflow_from_a_foreign_executor_with_progress_and_outputs() {
    let rig = rig(Duration::from_millis(600));
    let client = CloudClient::create(config(&rig.info)).expect("client");
    let out = tempfile::tempdir().expect("out");
    let recorder = Arc::new(Recorder::default());
    let task = Workflow::new(client.clone())
        .start(
            sample_job(Some(out.path().to_string_lossy().into_owned())),
            options(),
            Some(recorder.clone()),
        )
        .expect("start");
    // Driven by futures' executor, not Tokio: the work runs on the crate's runtime.
    let outcome = block_on(task.wait()).expect("workflow");
    assert!(outcome.succeeded, "{outcome:?}");
    assert_eq!(outcome.processing.status, ProcessingStatus::Processed);
    assert_eq!(
        task.processing_id().as_deref(),
        Some(outcome.processing.id.as_str())
    );
    assert!(
        outcome
            .downloaded
            .iter()
            .any(|p| p.ends_with("trajectory.csv")),
        "{outcome:?}"
    );
    let csv = std::fs::read_to_string(out.path().join("trajectory.csv")).expect("csv");
    assert!(csv.lines().count() > 10);
    assert!(
        outcome
            .outputs
            .iter()
            .all(|o| !format!("{o:?}").contains("Signature"))
    );
    // A second wait gives the same outcome.
    assert_eq!(
        block_on(task.wait()).expect("again").processing.id,
        outcome.processing.id
    );

    let seen = recorder.0.lock().expect("seen").clone();
    assert!(
        matches!(seen.first(), Some(WorkflowProgress::CreatingContainer)),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|p| matches!(p, WorkflowProgress::Uploading { .. }))
    );
    assert!(
        seen.iter()
            .any(|p| matches!(p, WorkflowProgress::Downloading { .. }))
    );
    assert!(
        matches!(seen.last(), Some(WorkflowProgress::Done { .. })),
        "{seen:?}"
    );

    // The cloud operations see what the workflow did, the configuration included.
    let processing = block_on(client.get_processing(outcome.processing.id.clone())).expect("get");
    assert_eq!(
        processing.processing_config,
        sample_job(None).processing_config
    );
    assert!(matches!(
        processing.processing_config,
        ProcessingConfig::Shorthand { .. }
    ));
    assert_eq!(
        processing.processing_result,
        Some(ProcessingResult::Succeeded)
    );
    let pager = client.list_processings();
    let first = block_on(pager.next_page()).expect("page").expect("items");
    assert!(first.iter().any(|p| p.id == outcome.processing.id));
    assert!(block_on(pager.next_page()).expect("end").is_none());
    let errors =
        block_on(client.list_processing_errors(outcome.processing.id.clone())).expect("errors");
    assert_eq!(errors.len(), outcome.errors.len());
}

/// The reports as a stream of their own: read beside the wait, and again after the end
/// (the whole history), each ending with `Done` then `None`.
#[test]
fn the_progress_stream_gives_every_stage_and_ends() {
    let rig = rig(Duration::from_millis(300));
    let client = CloudClient::create(config(&rig.info)).expect("client");
    let task = Workflow::new(client)
        .start(sample_job(None), options(), None)
        .expect("start");
    let read = |stream: Arc<WorkflowProgressStream>| {
        std::thread::spawn(move || {
            let mut seen = Vec::new();
            while let Some(progress) = block_on(stream.next()).expect("a report") {
                seen.push(progress);
            }
            seen
        })
    };
    let reader = read(task.progress());
    assert!(block_on(task.wait()).expect("the outcome").succeeded);
    for seen in [
        reader.join().expect("reader"),
        read(task.progress()).join().expect("reader"),
    ] {
        assert!(
            matches!(seen.first(), Some(WorkflowProgress::CreatingContainer)),
            "{seen:?}"
        );
        assert!(
            seen.iter()
                .any(|p| matches!(p, WorkflowProgress::Running { .. })),
            "{seen:?}"
        );
        assert!(
            matches!(seen.last(), Some(WorkflowProgress::Done { .. })),
            "{seen:?}"
        );
    }
}

#[test]
fn a_workflow_is_scoped_to_its_waits_and_its_object_unless_detached() {
    let rig = rig(Duration::from_secs(2));
    let client = CloudClient::create(config(&rig.info)).expect("client");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let started = |task: &WorkflowTask| {
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while task.processing_id().is_none() {
            assert!(std::time::Instant::now() < deadline, "never started");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    // The cloud runs one processing at a time: a workflow cancelled here leaves its
    // processing running there.
    let queued = || WorkflowOptions {
        wait_for_free_organization: true,
        ..options()
    };
    let done = |recorder: &Recorder| {
        recorder
            .0
            .lock()
            .expect("seen")
            .iter()
            .any(|p| matches!(p, WorkflowProgress::Done { .. }))
    };

    // A wait given up (a cancelled coroutine, a view going away) cancels the workflow.
    let task = Workflow::new(client.clone())
        .start(sample_job(None), queued(), None)
        .expect("start");
    started(&task);
    let waited = runtime
        .block_on(async { tokio::time::timeout(Duration::from_millis(100), task.wait()).await });
    assert!(waited.is_err(), "the processing takes 2 s");
    let (name, e) = kind(block_on(task.wait()));
    assert_eq!(name, "canceled", "{e}");
    // So does the object dropped (`close()`, the garbage collector): nothing is
    // downloaded after, though the processing ends in the cloud.
    let recorder = Arc::new(Recorder::default());
    let task = Workflow::new(client.clone())
        .start(sample_job(None), queued(), Some(recorder.clone()))
        .expect("start");
    started(&task);
    let processing_id = task.processing_id().expect("started");
    drop(task);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let p = block_on(client.get_processing(processing_id.clone())).expect("get");
        if p.status == ProcessingStatus::Processed {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{p:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        !done(&recorder),
        "the workflow went on after its object was dropped"
    );

    // Detached, it runs on when its wait is given up and its object dropped.
    let recorder = Arc::new(Recorder::default());
    let task = Workflow::new(client.clone())
        .start(sample_job(None), queued(), Some(recorder.clone()))
        .expect("start");
    task.detach();
    started(&task);
    let waited = runtime
        .block_on(async { tokio::time::timeout(Duration::from_millis(100), task.wait()).await });
    assert!(waited.is_err(), "the processing takes 2 s");
    let processing_id = task.processing_id().expect("started");
    assert!(!task.is_finished());
    drop(task);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !done(&recorder) {
        assert!(std::time::Instant::now() < deadline, "the workflow stopped");
        std::thread::sleep(Duration::from_millis(20));
    }
    let p = block_on(client.get_processing(processing_id)).expect("get");
    assert_eq!(p.status, ProcessingStatus::Processed, "{p:?}");

    // `cancel()` stops it; every wait then says so.
    let slow = super::rig(Duration::from_secs(30));
    let client = CloudClient::create(config(&slow.info)).expect("client");
    let task = Workflow::new(client.clone())
        .start(sample_job(None), options(), None)
        .expect("start");
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while task.processing_id().is_none() {
        assert!(std::time::Instant::now() < deadline, "never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    task.cancel();
    let (name, e) = kind(block_on(task.wait()));
    assert_eq!(name, "canceled", "{e}");
    assert_eq!(e.kind(), ErrorKind::Canceled);
    assert!(task.is_finished());
    let processing_id = task.processing_id().expect("started");
    assert_eq!(e.processing_id().as_deref(), Some(processing_id.as_str()));
    match &e {
        SvcError::Canceled {
            processing_id: Some(id),
            ..
        } => assert_eq!(id, &processing_id),
        other => panic!("{other:?}"),
    }
    // The processing goes on in the cloud.
    let p = block_on(client.get_processing(processing_id)).expect("get");
    assert!(
        matches!(
            p.status,
            ProcessingStatus::Pending | ProcessingStatus::Processing
        ),
        "{p:?}"
    );
}

#[test]
fn typed_errors_for_refused_credentials_and_unknown_resources() {
    let rig = rig(Duration::from_millis(200));
    let mut bad = config(&rig.info);
    bad.api_secret = Some(Secret::new("s3cr3t-xyz".into()));
    let client = CloudClient::create(bad).expect("client");
    let (name, e) = kind(block_on(client.list_containers_all()));
    assert_eq!(name, "authentication", "{e}");
    assert!(matches!(e, SvcError::Authentication { .. }));
    assert!(!format!("{e:?}").contains("s3cr3t-xyz"), "{e:?}");

    let client = CloudClient::create(config(&rig.info)).expect("client");
    let (name, e) = kind(block_on(
        client.get_container(uuid::Uuid::new_v4().to_string()),
    ));
    assert_eq!(name, "not_found", "{e}");
    assert_eq!(e.status(), Some(Count(404)));
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert!(e.title().is_some() && e.details().is_some(), "{e:?}");
    assert!(!e.retryable());
    match e {
        SvcError::NotFound {
            operation, title, ..
        } => {
            assert_eq!(operation.as_deref(), Some("getContainer"));
            assert!(title.is_some());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn cleanup_on_failure_reaches_the_workflow() {
    // No processing credit: every start is refused (403) after the uploads.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let emulator = runtime
        .block_on(Emulator::start(EmulatorConfig {
            credits: 0,
            ..EmulatorConfig::default()
        }))
        .expect("emulator");
    let client = CloudClient::create(config(emulator.info())).expect("client");
    for cleanup in [false, true] {
        let task = Workflow::new(client.clone())
            .start(
                sample_job(None),
                WorkflowOptions {
                    cleanup_on_failure: cleanup,
                    ..options()
                },
                None,
            )
            .expect("start");
        let (name, e) = kind(block_on(task.wait()));
        assert_eq!(name, "permission_denied", "{e}");
        let container_id = match &e {
            SvcError::PermissionDenied {
                container_id: Some(id),
                status: Some(Count(403)),
                ..
            } => id.clone(),
            other => panic!("{other:?}"),
        };
        let found = block_on(client.get_container(container_id));
        assert_eq!(found.is_ok(), !cleanup, "cleanup {cleanup}: {e}");
    }
}
