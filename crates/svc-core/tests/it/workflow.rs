//! The whole processing workflow (`svc_core::workflow`) against the in-process emulator,
//! on the repository's sample data. No test sleeps a fixed time: each waits for the
//! workflow (or a processing) to end.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::StreamExt as _;

use crate::common::{client_for, emulator, fast_retry};
use svc_core::cloud::{
    ContainerFileType, ContainerRegion, CreateContainerFile, CreateContainerRequest, Metadata,
    ProcessingErrorLevel, ProcessingResult, ProcessingStatus,
};
use svc_core::transfer::TransferOptions;
use svc_core::workflow::{
    Cleanup, JOB_KEY, JobKey, ProcessingJob, WORKFLOW_TAG_KEY, WebhookListener, Workflow,
    WorkflowError, WorkflowOptions, WorkflowOutcome, WorkflowProgress,
};
use svc_emulator::{Emulator, EmulatorConfig, FaultConfig};

// ------------------------------------------------------------------------------ rig

async fn quick_emulator(processing_time: Duration) -> Emulator {
    emulator(EmulatorConfig {
        processing_time,
        ..EmulatorConfig::default()
    })
    .await
}

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn sample_job(output_folder: Option<PathBuf>) -> ProcessingJob {
    let text = std::fs::read_to_string(samples().join("processing.json")).unwrap();
    let config: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut job = ProcessingJob::new(
        vec![samples().join("rover.nmea"), samples().join("imu.csv")],
        config.as_object().cloned().unwrap(),
    );
    job.name = Some("sample".to_owned());
    job.metadata = Metadata::from_iter([("project".to_owned(), "tests".to_owned())]);
    job.region = ContainerRegion::EuWest3;
    job.output_folder = output_folder;
    job
}

fn quick_options() -> WorkflowOptions {
    WorkflowOptions {
        transfer: TransferOptions {
            retry: fast_retry(),
            ..TransferOptions::default()
        },
        ..WorkflowOptions::default()
    }
}

/// A container as a run killed before its uploads leaves it: one file registered.
async fn left_container(
    client: &svc_core::cloud::CloudClient,
    metadata: Option<Metadata>,
) -> svc_core::cloud::Container {
    client
        .create_container(CreateContainerRequest {
            region: ContainerRegion::EuWest3,
            metadata,
            files: vec![CreateContainerFile {
                path: "rover.nmea".to_owned(),
                type_: ContainerFileType::Input,
                size: 10,
                metadata: None,
            }],
        })
        .await
        .unwrap()
}

/// Every report given to the callback.
fn recorder() -> (
    Arc<Mutex<Vec<WorkflowProgress>>>,
    svc_core::workflow::WorkflowProgressCallback,
) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    (
        seen,
        Arc::new(move |p: &WorkflowProgress| sink.lock().unwrap().push(p.clone())),
    )
}

/// The downloaded files equal, byte for byte, what the emulator stored.
fn assert_outputs_identical(emulator: &Emulator, outcome: &WorkflowOutcome, folder: &Path) {
    let stored = emulator.stored_outputs(outcome.processing.id);
    assert!(!stored.is_empty(), "the emulator stored outputs");
    assert_eq!(outcome.outputs.len(), stored.len());
    assert_eq!(outcome.downloaded.len(), stored.len());
    for (path, bytes) in stored {
        let local = folder.join(&path);
        assert_eq!(
            std::fs::read(&local).unwrap_or_else(|e| panic!("{}: {e}", local.display())),
            bytes,
            "{path}"
        );
        assert!(outcome.downloaded.contains(&local), "{path} listed");
    }
}

// ------------------------------------------------------------------------------ tests

#[tokio::test]
async fn the_sample_job_runs_to_downloaded_outputs() {
    let emulator = quick_emulator(Duration::from_secs(1)).await;
    let client = client_for(emulator.info());
    let out = tempfile::tempdir().unwrap();
    let (seen, callback) = recorder();
    let outcome = Workflow::new(client.clone())
        .run(
            sample_job(Some(out.path().join("results"))),
            WorkflowOptions {
                on_progress: Some(callback),
                ..quick_options()
            },
        )
        .await
        .expect("the workflow runs");

    assert!(outcome.succeeded(), "{:?}", outcome.processing);
    assert_eq!(outcome.processing.status, ProcessingStatus::Processed);
    assert_eq!(outcome.processing.name.as_deref(), Some("sample"));
    assert_eq!(outcome.error_messages().count(), 0);
    let names: Vec<&str> = outcome.outputs.iter().map(|o| o.path.as_str()).collect();
    for expected in ["trajectory.csv", "trajectory.geojson", "report.json"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    assert_outputs_identical(&emulator, &outcome, &out.path().join("results"));

    // The container holds both files at their names, tagged by the workflow.
    let container = client
        .get_container(outcome.container_id.unwrap())
        .await
        .unwrap();
    let mut paths: Vec<&str> = container.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["imu.csv", "rover.nmea"]);
    let metadata = container.metadata.unwrap();
    assert_eq!(metadata.get("project").map(String::as_str), Some("tests"));
    assert!(metadata.contains_key(WORKFLOW_TAG_KEY));

    // Every stage was reported, in order.
    let seen = seen.lock().unwrap().clone();
    let stages: Vec<u8> = seen.iter().map(stage).collect();
    assert!(stages.is_sorted(), "{stages:?}");
    for s in 0..=5 {
        assert!(stages.contains(&s), "stage {s} reported: {stages:?}");
    }
    let last_upload = seen.iter().rev().find_map(|p| match p {
        WorkflowProgress::Uploading(p) => Some(p.clone()),
        _ => None,
    });
    let last_upload = last_upload.unwrap();
    assert_eq!(Some(last_upload.done_bytes), last_upload.total_bytes);
    assert!(matches!(
        seen.last(),
        Some(WorkflowProgress::Done {
            result: Some(ProcessingResult::Succeeded),
            ..
        })
    ));
    emulator.shutdown().await;
}

#[tokio::test]
async fn webhook_events_replace_most_status_reads() {
    let emulator = quick_emulator(Duration::from_secs(2)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());

    let polled = workflow
        .run(sample_job(None), quick_options())
        .await
        .unwrap();
    assert!(polled.succeeded());

    let listener = WebhookListener::register(&client).await.unwrap();
    assert!(listener.endpoint_id().is_some());
    let (seen, callback) = recorder();
    let followed = workflow
        .run(
            sample_job(None),
            WorkflowOptions {
                events: Some(listener.events()),
                on_progress: Some(callback),
                ..quick_options()
            },
        )
        .await
        .unwrap();
    assert!(followed.succeeded(), "{:?}", followed.processing);
    assert_eq!(followed.outputs.len(), polled.outputs.len());
    assert!(
        followed.status_reads < polled.status_reads,
        "events: {} reads, polling: {} reads",
        followed.status_reads,
        polled.status_reads
    );
    // Progress came from the events: the running steps were reported.
    let running = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|p| matches!(p, WorkflowProgress::Running { .. }))
        .count();
    assert!(running > 0);
    listener.unregister(&client).await.unwrap();
    emulator.shutdown().await;
}

#[tokio::test]
async fn an_ongoing_processing_is_waited_out_when_asked() {
    let emulator = quick_emulator(Duration::from_millis(1500)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());

    // A processing of the organization is under way ...
    let first = workflow
        .run(
            sample_job(None),
            WorkflowOptions {
                follow: false,
                ..quick_options()
            },
        )
        .await
        .unwrap();
    assert!(matches!(
        first.processing.status,
        ProcessingStatus::Pending | ProcessingStatus::Processing
    ));

    // ... so a start without waiting answers 409 ...
    let refused = workflow
        .run(sample_job(None), quick_options())
        .await
        .unwrap_err();
    let WorkflowError::Cloud {
        source,
        processing_id: None,
        container_id: Some(_),
        ..
    } = &refused
    else {
        panic!("{refused:?}");
    };
    assert_eq!(source.status(), Some(409), "{source}");

    // ... and a batch job waits for the organization to be free.
    let (seen, callback) = recorder();
    let out = tempfile::tempdir().unwrap();
    let outcome = workflow
        .run(
            sample_job(Some(out.path().to_owned())),
            WorkflowOptions {
                wait_for_free_organization: true,
                max_wait: Duration::from_secs(60),
                on_progress: Some(callback),
                ..quick_options()
            },
        )
        .await
        .unwrap();
    assert!(outcome.succeeded());
    assert_outputs_identical(&emulator, &outcome, out.path());
    assert!(
        seen.lock()
            .unwrap()
            .iter()
            .any(|p| matches!(p, WorkflowProgress::WaitingForOrganization { .. }))
    );
    let first = client.get_processing(first.processing.id).await.unwrap();
    assert_eq!(first.status, ProcessingStatus::Processed);
    emulator.shutdown().await;
}

#[tokio::test]
async fn waiting_for_the_organization_is_bounded() {
    let emulator = quick_emulator(Duration::from_secs(30)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    let no_follow = WorkflowOptions {
        follow: false,
        ..quick_options()
    };
    workflow.run(sample_job(None), no_follow).await.unwrap();
    let e = workflow
        .run(
            sample_job(None),
            WorkflowOptions {
                wait_for_free_organization: true,
                max_wait: Duration::from_millis(700),
                ..quick_options()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(e, WorkflowError::OrganizationBusy { .. }), "{e:?}");
    assert!(e.container_id().is_some());
    emulator.shutdown().await;
}

#[tokio::test]
async fn a_failed_processing_is_an_outcome_with_its_errors() {
    let emulator = quick_emulator(Duration::from_millis(500)).await;
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("notes.txt");
    std::fs::write(&garbage, "no GNSS here, just words\n").unwrap();
    let mut job = sample_job(Some(dir.path().join("out")));
    job.inputs = vec![garbage];
    let outcome = Workflow::new(client_for(emulator.info()))
        .run(job, quick_options())
        .await
        .expect("a failed processing is not a workflow error");
    assert_eq!(outcome.processing.status, ProcessingStatus::Processed);
    assert_eq!(
        outcome.processing.processing_result,
        Some(ProcessingResult::Failed)
    );
    assert!(outcome.failed() && !outcome.succeeded());
    assert!(
        outcome
            .errors
            .iter()
            .any(|e| e.level == Some(ProcessingErrorLevel::Error)
                && e.message.as_deref().is_some_and(|m| !m.is_empty())),
        "{:?}",
        outcome.errors
    );
    emulator.shutdown().await;
}

#[tokio::test]
async fn tokens_expire_during_the_workflow() {
    let emulator = emulator(EmulatorConfig {
        token_lifetime: Duration::from_secs(1),
        processing_time: Duration::from_secs(3),
        ..EmulatorConfig::default()
    })
    .await;
    let out = tempfile::tempdir().unwrap();
    let outcome = Workflow::new(client_for(emulator.info()))
        .run(sample_job(Some(out.path().to_owned())), quick_options())
        .await
        .unwrap();
    assert!(outcome.succeeded());
    assert!(outcome.status_reads >= 3);
    assert_outputs_identical(&emulator, &outcome, out.path());
    emulator.shutdown().await;
}

#[tokio::test]
async fn a_batch_completes_under_injected_faults_without_duplicates() {
    let emulator = emulator(EmulatorConfig {
        processing_time: Duration::from_millis(700),
        faults: FaultConfig {
            rate: 0.2,
            delay: Duration::from_millis(50),
            // SVC_FAULT_SEED repeats the test with other fault sequences.
            seed: std::env::var("SVC_FAULT_SEED")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(7),
            ..FaultConfig::default()
        },
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let out = tempfile::tempdir().unwrap();
    let runs = (0..3).map(|i| {
        let workflow = workflow.clone();
        let folder = out.path().join(format!("job-{i}"));
        async move {
            let mut job = sample_job(Some(folder.clone()));
            job.name = Some(format!("batch {i}"));
            let options = WorkflowOptions {
                wait_for_free_organization: true,
                max_wait: Duration::from_secs(120),
                ..quick_options()
            };
            (workflow.run(job, options).await, folder)
        }
    });
    let results = futures::future::join_all(runs).await;
    let mut ids = Vec::new();
    for (result, folder) in results {
        let outcome = result.expect("each workflow of the batch completes");
        assert!(outcome.succeeded(), "{:?}", outcome.processing);
        assert_outputs_identical(&emulator, &outcome, &folder);
        ids.push(outcome.processing.id);
    }
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 3);
    // No processing was started twice.
    let all = client.list_processings_all().await.unwrap();
    assert_eq!(all.len(), 3, "{all:?}");
    emulator.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_workflows_start_first_come_first_served() {
    let emulator = quick_emulator(Duration::from_millis(400)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let ended = Arc::new(Mutex::new(Vec::new()));
    // Each mission's reports of where it stands in line: (behind, ahead).
    type Places = Vec<Vec<(Option<String>, usize)>>;
    let places: Arc<Mutex<Places>> = Arc::new(Mutex::new(vec![Vec::new(); 4]));
    let mut runs = Vec::new();
    for i in 0..4 {
        let places = places.clone();
        // Each mission comes after the previous one is in line (it reported
        // `Starting`, then takes its turn): the processings must start, and so end, in
        // that order, however the polls of the waiters fall.
        let (ready, in_line) = tokio::sync::oneshot::channel::<()>();
        let ready = Mutex::new(Some(ready));
        let ended = ended.clone();
        let options = WorkflowOptions {
            wait_for_free_organization: true,
            max_wait: Duration::from_secs(120),
            on_progress: Some(Arc::new(move |p: &WorkflowProgress| match p {
                WorkflowProgress::Starting { .. } => {
                    if let Some(ready) = ready.lock().unwrap().take() {
                        let _ = ready.send(());
                    }
                }
                WorkflowProgress::WaitingForOrganization { behind, ahead, .. } => {
                    places.lock().unwrap()[i].push((behind.clone(), *ahead));
                }
                WorkflowProgress::Done { .. } => ended.lock().unwrap().push(i),
                _ => {}
            })),
            ..quick_options()
        };
        let mut job = sample_job(None);
        job.name = Some(format!("mission {i}"));
        let workflow = workflow.clone();
        runs.push(tokio::spawn(
            async move { workflow.run(job, options).await },
        ));
        in_line.await.expect("the mission reaches its start");
    }
    for run in runs {
        let outcome = run.await.unwrap().expect("each mission is processed");
        assert!(outcome.succeeded(), "{:?}", outcome.processing);
    }
    assert_eq!(*ended.lock().unwrap(), [0, 1, 2, 3]);
    // Each waiting mission says what it waits behind: the mission `ahead` places
    // before it holds the turn; the last one saw the line move up to it.
    let places = places.lock().unwrap().clone();
    assert!(
        places[0].iter().all(|(behind, _)| behind.is_none()),
        "the first waits behind no mission: {places:?}"
    );
    for (i, seen) in places.iter().enumerate().skip(1) {
        assert!(
            seen.iter().any(|(behind, _)| behind.is_some()),
            "{i}: {places:?}"
        );
        for (behind, ahead) in seen {
            if let Some(behind) = behind {
                assert!((1..=i).contains(ahead), "{i}: {places:?}");
                assert_eq!(*behind, format!("mission {}", i - ahead), "{places:?}");
            }
        }
    }
    assert!(
        places[3].contains(&(Some("mission 2".to_owned()), 1)),
        "{places:?}"
    );
    let all = client.list_processings_all().await.unwrap();
    assert_eq!(all.len(), 4, "one processing per mission: {all:?}");
    emulator.shutdown().await;
}

#[tokio::test]
async fn run_many_isolates_failures_and_keeps_the_order_of_the_jobs() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let out = tempfile::tempdir().unwrap();
    let mut jobs: Vec<ProcessingJob> = (0..3)
        .map(|i| {
            let mut job = sample_job(Some(out.path().join(format!("m{i}"))));
            job.name = Some(format!("m{i}"));
            job
        })
        .collect();
    jobs[1].inputs.push(out.path().join("missing.nmea"));
    let (seen, callback) = recorder();
    let batch = svc_core::workflow::BatchOptions {
        options: Arc::new(move |_, _| WorkflowOptions {
            on_progress: Some(callback.clone()),
            ..quick_options()
        }),
        ..Default::default()
    };
    let results = workflow.run_many(jobs, batch).await;
    assert_eq!(results.len(), 3);
    let names: Vec<Option<String>> = results
        .iter()
        .map(|r| r.as_ref().ok().and_then(|o| o.processing.name.clone()))
        .collect();
    assert_eq!(names, [Some("m0".to_owned()), None, Some("m2".to_owned())]);
    assert!(
        matches!(&results[1], Err(WorkflowError::LocalFile { .. })),
        "{:?}",
        results[1]
    );
    for result in [&results[0], &results[2]] {
        let outcome = result.as_ref().unwrap();
        assert!(outcome.succeeded());
        assert!(!outcome.downloaded.is_empty());
    }
    // The two processings ran one after the other: no start was refused with a 409.
    assert_eq!(client.list_processings_all().await.unwrap().len(), 2);
    let done = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|p| matches!(p, WorkflowProgress::Done { .. }))
        .count();
    assert_eq!(done, 2);
    emulator.shutdown().await;
}

#[tokio::test]
async fn a_job_with_a_key_is_processed_once_and_its_orphans_removed() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let out = tempfile::tempdir().unwrap();
    let mut job = sample_job(Some(out.path().join("first")));
    job.key = Some(JobKey::Derived);
    let first = workflow.run(job.clone(), quick_options()).await.unwrap();
    assert!(first.succeeded() && !first.reused);
    let key = first.processing.metadata.as_ref().unwrap()[JOB_KEY].clone();
    assert!(key.starts_with("sha256:"), "{key}");

    // A run killed after creating its container left an orphan under the key.
    let orphan = left_container(
        &client,
        Some(Metadata::from_iter([(JOB_KEY.to_owned(), key.clone())])),
    )
    .await;

    // The same job again, its configuration's keys in another order: the earlier
    // processing, its outputs downloaded again, no second credit; the orphan deleted.
    let mut again = job.clone();
    let reversed: serde_json::Map<String, serde_json::Value> =
        job.processing_json.clone().into_iter().rev().collect();
    again.processing_json = reversed;
    again.output_folder = Some(out.path().join("second"));
    let second = workflow.run(again, quick_options()).await.unwrap();
    assert!(second.reused);
    assert_eq!(second.processing.id, first.processing.id);
    assert_eq!(second.downloaded.len(), first.downloaded.len());
    assert!(
        second
            .downloaded
            .iter()
            .all(|p| p.starts_with(out.path().join("second")))
    );
    assert_eq!(client.list_processings_all().await.unwrap().len(), 1);
    let e = client.get_container(orphan.id).await.unwrap_err();
    assert_eq!(e.status(), Some(404), "{e}");

    // Another configuration is another job; a given key is the caller's.
    let mut other = job.clone();
    other
        .processing_json
        .insert("mode".to_owned(), "static".into());
    other.output_folder = None;
    let third = workflow.run(other, quick_options()).await.unwrap();
    assert!(!third.reused);
    let mut given = job.clone();
    given.key = Some(JobKey::Given("survey 42".to_owned()));
    given.output_folder = None;
    let fourth = workflow.run(given.clone(), quick_options()).await.unwrap();
    assert!(!fourth.reused);
    assert_eq!(
        fourth.processing.metadata.as_ref().unwrap()[JOB_KEY],
        "survey 42"
    );
    let fifth = workflow.run(given, quick_options()).await.unwrap();
    assert!(fifth.reused);
    assert_eq!(client.list_processings_all().await.unwrap().len(), 3);

    let mut empty = job;
    empty.key = Some(JobKey::Given(String::new()));
    let e = workflow.run(empty, quick_options()).await.unwrap_err();
    assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e:?}");
    emulator.shutdown().await;
}

#[tokio::test]
async fn a_batch_resumes_from_its_journal_with_nothing_spent_twice() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let out = tempfile::tempdir().unwrap();
    let jobs: Vec<ProcessingJob> = (0..3)
        .map(|i| {
            let mut job = sample_job(Some(out.path().join(format!("m{i}"))));
            job.name = Some(format!("m{i}"));
            job
        })
        .collect();
    // A batch killed half-way: m0's processing started, m1's container created.
    let started = workflow
        .run(
            jobs[0].clone(),
            WorkflowOptions {
                follow: false,
                ..quick_options()
            },
        )
        .await
        .unwrap();
    let orphan = left_container(&client, None).await;
    let path = out.path().join("batch.jsonl");
    std::fs::write(
        &path,
        format!(
            "{{\"mission\":\"m0\",\"containerId\":\"{}\",\"processingId\":\"{}\"}}\n{{\"mission\":\"m1\",\"containerId\":\"{}\"}}\n{{\"mission\":\"m2\",",
            started.container_id.unwrap(),
            started.processing.id,
            orphan.id
        ),
    )
    .unwrap();

    let journal = Arc::new(svc_core::workflow::BatchJournal::open(&path).unwrap());
    let batch = svc_core::workflow::BatchOptions {
        options: Arc::new(|_, _| quick_options()),
        journal: Some(journal.clone()),
        ..Default::default()
    };
    let results = workflow.run_many(jobs, batch).await;
    let outcomes: Vec<WorkflowOutcome> = results.into_iter().map(Result::unwrap).collect();
    assert!(outcomes.iter().all(WorkflowOutcome::succeeded));
    assert_eq!(
        outcomes[0].processing.id, started.processing.id,
        "m0 followed, not started again"
    );
    assert!(!outcomes[0].downloaded.is_empty());
    let e = client.get_container(orphan.id).await.unwrap_err();
    assert_eq!(e.status(), Some(404), "m1's orphan deleted: {e}");
    assert_eq!(client.list_processings_all().await.unwrap().len(), 3);
    for (i, outcome) in outcomes.iter().enumerate() {
        let record = journal.record(&format!("m{i}")).unwrap();
        assert!(record.done, "{record:?}");
        assert_eq!(record.processing_id, Some(outcome.processing.id));
    }
    // Read again, the journal knows every mission done.
    let again = svc_core::workflow::BatchJournal::open(&path).unwrap();
    assert!((0..3).all(|i| again.record(&format!("m{i}")).is_some_and(|r| r.done)));
    emulator.shutdown().await;
}

#[tokio::test]
async fn duplicate_names_and_missing_files_are_refused_before_sending() {
    let emulator = quick_emulator(Duration::from_millis(500)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("other")).unwrap();
    let twin = dir.path().join("other/rover.nmea");
    std::fs::write(&twin, "$GPGGA\n").unwrap();

    let mut job = sample_job(None);
    job.resources = vec![twin];
    let e = workflow.run(job, quick_options()).await.unwrap_err();
    assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e:?}");
    assert!(e.to_string().contains("rover.nmea"), "{e}");
    assert!(e.is_refused_before_sending());

    let mut job = sample_job(None);
    job.inputs.push(dir.path().join("missing.nmea"));
    let e = workflow.run(job, quick_options()).await.unwrap_err();
    assert!(matches!(e, WorkflowError::LocalFile { .. }), "{e:?}");
    assert!(e.to_string().contains("missing.nmea"), "{e}");

    let mut job = sample_job(None);
    job.inputs.clear();
    let e = workflow.run(job, quick_options()).await.unwrap_err();
    assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e:?}");

    // A configuration of the wrong shape, named by its field.
    let mut job = sample_job(None);
    job.processing_json = serde_json::json!({
        "version": "1.0",
        "project": {"name": "demo", "type": "sbgECom", "path": "rover/"},
        "processing": {"type": "insSingle", "bases": [{"data": "base/a.20o"}]}
    })
    .as_object()
    .unwrap()
    .clone();
    let e = workflow.run(job, quick_options()).await.unwrap_err();
    assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e:?}");
    assert!(e.to_string().contains("processing.bases[0].data"), "{e}");
    assert!(e.is_refused_before_sending());

    assert!(client.list_containers_all().await.unwrap().is_empty());
    emulator.shutdown().await;
}

#[tokio::test]
async fn a_canceled_workflow_names_its_processing() {
    let emulator = quick_emulator(Duration::from_secs(30)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    let (started, mut started_rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = workflow.start(
        sample_job(None),
        WorkflowOptions {
            on_progress: Some(Arc::new(move |p: &WorkflowProgress| {
                if let WorkflowProgress::Queued { processing_id }
                | WorkflowProgress::Running { processing_id, .. } = p
                {
                    let _ = started.send(*processing_id);
                }
            })),
            ..quick_options()
        },
    );
    let id = started_rx.recv().await.unwrap();
    assert_eq!(handle.processing_id(), Some(id), "the handle knows it too");
    assert!(handle.container_id().is_some());
    let canceler = handle.canceler();
    handle.cancel();
    let e = handle.wait().await.unwrap_err();
    assert!(matches!(e, WorkflowError::Canceled { .. }), "{e:?}");
    assert_eq!(e.processing_id(), Some(id));
    assert_eq!(canceler.processing_id(), Some(id));
    emulator.shutdown().await;
}

/// The stage of each report, in the workflow's order.
fn stage(p: &WorkflowProgress) -> u8 {
    match p {
        WorkflowProgress::CreatingContainer => 0,
        WorkflowProgress::Uploading(_) => 1,
        WorkflowProgress::Starting { .. } => 2,
        WorkflowProgress::Queued { .. } | WorkflowProgress::Running { .. } => 3,
        WorkflowProgress::Downloading(_) => 4,
        WorkflowProgress::Done { .. } => 5,
        _ => 9,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_clone_of_a_handle_gets_the_outcome_and_the_reports_from_the_start() {
    let emulator = quick_emulator(Duration::from_millis(500)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    let out = tempfile::tempdir().unwrap();
    let handle = workflow.start(sample_job(Some(out.path().to_owned())), quick_options());
    assert!(handle.wait_timeout(Duration::ZERO).await.is_none());
    assert!(!handle.is_finished());

    // Waiters on tasks and on threads of their own, each with its clone.
    let on_tasks: Vec<_> = (0..2)
        .map(|_| {
            let handle = handle.clone();
            tokio::spawn(async move { handle.wait().await })
        })
        .collect();
    let on_a_thread = {
        let handle = handle.clone();
        let runtime = tokio::runtime::Handle::current();
        std::thread::spawn(move || runtime.block_on(handle.wait_timeout(Duration::from_secs(60))))
    };
    // A stream made once the workflow is well under way still starts at the start.
    while handle.processing_id().is_none() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let reports: Vec<WorkflowProgress> = handle.subscribe().collect().await;

    let outcome = handle.wait().await.expect("the workflow runs");
    assert!(outcome.succeeded(), "{:?}", outcome.processing);
    assert!(handle.is_finished());
    for waiter in on_tasks {
        assert_eq!(waiter.await.unwrap().expect("same outcome"), outcome);
    }
    let waited = on_a_thread.join().unwrap().expect("ended in time");
    assert_eq!(waited.expect("same outcome"), outcome);
    // Later waits, with or without a timeout, give it too.
    assert_eq!(handle.wait().await.unwrap(), outcome);
    assert_eq!(
        handle.wait_timeout(Duration::ZERO).await.unwrap().unwrap(),
        outcome
    );

    let stages: Vec<u8> = reports.iter().map(stage).collect();
    assert!(stages.is_sorted(), "{stages:?}");
    for s in 0..=5 {
        assert!(stages.contains(&s), "stage {s} reported: {stages:?}");
    }
    // A stream made after the end gives the same reports (merged) and ends.
    let after: Vec<u8> = handle.subscribe().map(|p| stage(&p)).collect().await;
    let mut merged = stages.clone();
    merged.dedup();
    let mut after_merged = after.clone();
    after_merged.dedup();
    assert_eq!(after_merged, merged);
    emulator.shutdown().await;
}

#[tokio::test]
async fn dropping_every_handle_cancels_the_workflow_unless_detached() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    for detached in [false, true] {
        let handle = workflow.start(sample_job(None), quick_options());
        let reports = handle.subscribe();
        let clone = handle.clone();
        if detached {
            clone.detach();
        }
        drop(handle);
        drop(clone);
        // The stream ends with the workflow: at its end, or at once when canceled.
        let last = reports.collect::<Vec<_>>().await.pop();
        let done = matches!(last, Some(WorkflowProgress::Done { .. }));
        assert_eq!(done, detached, "{last:?}");
    }
    emulator.shutdown().await;
}

#[tokio::test]
async fn a_processing_started_earlier_is_resumed_by_its_id() {
    let emulator = quick_emulator(Duration::from_secs(1)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    // Started without following, as a program that then stopped.
    let started = workflow
        .run(
            sample_job(None),
            WorkflowOptions {
                follow: false,
                ..quick_options()
            },
        )
        .await
        .expect("started");
    assert!(matches!(
        started.processing.status,
        ProcessingStatus::Pending | ProcessingStatus::Processing
    ));
    let id = started.processing.id;

    // Picked up by its identifier: followed to its end and downloaded.
    let out = tempfile::tempdir().unwrap();
    let folder = out.path().join("{processing_id}");
    let (seen, callback) = recorder();
    let outcome = workflow
        .resume(
            id,
            Some(folder),
            WorkflowOptions {
                on_progress: Some(callback),
                ..quick_options()
            },
        )
        .await
        .expect("resumed");
    assert!(outcome.succeeded(), "{:?}", outcome.processing);
    assert_eq!(outcome.processing.id, id);
    assert_eq!(outcome.container_id, started.container_id);
    assert_outputs_identical(&emulator, &outcome, &out.path().join(id.to_string()));
    assert!(seen.lock().unwrap().iter().any(
        |p| matches!(p, WorkflowProgress::Done { processing_id, .. } if *processing_id == id)
    ));

    // Resuming an ended processing collects it at once, without reading its status
    // more than once; a processing that does not exist is not_found.
    let again = workflow
        .resume(id, None, quick_options())
        .await
        .expect("ended");
    assert!(again.succeeded());
    assert!(again.downloaded.is_empty(), "no folder, no download");
    assert_eq!(again.outputs.len(), outcome.outputs.len());
    assert_eq!(again.status_reads, 0);
    let e = workflow
        .resume(uuid::Uuid::new_v4(), None, quick_options())
        .await
        .unwrap_err();
    assert_eq!(e.kind(), svc_core::ErrorKind::NotFound, "{e:?}");
    emulator.shutdown().await;
}

/// A start refused with 409 (the organization's processing is ongoing) names the
/// container the workflow created, so that it is not left behind unknown; with
/// `cleanup_on_failure` the container is deleted and the error says so.
#[tokio::test]
async fn a_refused_start_names_its_container_and_cleans_it_up_when_asked() {
    let emulator = quick_emulator(Duration::from_secs(30)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let no_follow = WorkflowOptions {
        follow: false,
        ..quick_options()
    };
    let first = workflow.run(sample_job(None), no_follow).await.unwrap();

    // Without cleanup: the container remains, named in the error.
    let e = workflow
        .run(sample_job(None), quick_options())
        .await
        .unwrap_err();
    assert_eq!(e.cloud_error().and_then(|c| c.status()), Some(409), "{e}");
    let kept = e.container_id().expect("the container was created");
    assert_eq!(e.processing_id(), None);
    assert_eq!(e.cleanup(), &Cleanup::NotAttempted);
    assert!(e.to_string().contains(&kept.to_string()), "{e}");
    assert!(e.to_string().contains("remains"), "{e}");
    assert_eq!(client.get_container(kept).await.unwrap().files.len(), 2);

    // With cleanup: the container and its uploads are gone, and the error says so.
    let e = workflow
        .run(
            sample_job(None),
            WorkflowOptions {
                cleanup_on_failure: true,
                ..quick_options()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.cloud_error().and_then(|c| c.status()), Some(409), "{e}");
    assert_eq!(e.kind(), svc_core::ErrorKind::Conflict);
    let deleted = e.container_id().expect("named even though deleted");
    assert_eq!(e.cleanup(), &Cleanup::Deleted);
    assert!(e.cleanup().deleted());
    assert!(
        e.to_string()
            .contains(&format!("container {deleted} was deleted")),
        "{e}"
    );
    let gone = client.get_container(deleted).await.unwrap_err();
    assert_eq!(gone.status(), Some(404), "{gone}");
    let mut left: Vec<_> = client
        .list_containers_all()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    left.sort_unstable();
    let mut expected = vec![first.container_id.unwrap(), kept];
    expected.sort_unstable();
    assert_eq!(left, expected, "only the deleted container is gone");
    emulator.shutdown().await;
}

/// No processing credit left (403): the container is cleaned up as well; a started
/// processing's container never is.
#[tokio::test]
async fn a_start_without_credit_cleans_up_and_a_started_processing_keeps_its_container() {
    let emulator = emulator(EmulatorConfig {
        processing_time: Duration::from_millis(300),
        credits: 1,
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let cleanup = || WorkflowOptions {
        cleanup_on_failure: true,
        ..quick_options()
    };
    // The one credit: the workflow succeeds, nothing is deleted.
    let outcome = workflow.run(sample_job(None), cleanup()).await.unwrap();
    assert!(outcome.succeeded());
    let processed = outcome.container_id.unwrap();

    let e = workflow.run(sample_job(None), cleanup()).await.unwrap_err();
    assert_eq!(e.cloud_error().and_then(|c| c.status()), Some(403), "{e}");
    assert_eq!(e.cleanup(), &Cleanup::Deleted, "{e}");
    let ids: Vec<_> = client
        .list_containers_all()
        .await
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(ids, [processed]);

    // A processing started and then canceled: its container stays.
    emulator.set_credits(emulator.info().organization_id, 1);
    let (started, mut started_rx) = tokio::sync::mpsc::unbounded_channel();
    let handle = workflow.start(
        sample_job(None),
        WorkflowOptions {
            on_progress: Some(Arc::new(move |p: &WorkflowProgress| {
                if let WorkflowProgress::Queued { processing_id }
                | WorkflowProgress::Running { processing_id, .. } = p
                {
                    let _ = started.send(*processing_id);
                }
            })),
            ..cleanup()
        },
    );
    started_rx.recv().await.unwrap();
    handle.cancel();
    let e = handle.wait().await.unwrap_err();
    assert!(matches!(e, WorkflowError::Canceled { .. }), "{e:?}");
    assert_eq!(e.cleanup(), &Cleanup::NotAttempted);
    let container = e.container_id().unwrap();
    client.get_container(container).await.expect("kept");
    emulator.shutdown().await;
}

/// An output folder that is an existing file is refused before anything is sent (it
/// used to be found only after the processing, and its credit, were spent).
#[tokio::test]
async fn an_output_folder_that_is_a_file_is_refused_before_sending() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("results");
    std::fs::write(&file, "not a folder").unwrap();
    for folder in [file.clone(), file.join("{processing_id}")] {
        let e = Workflow::new(client.clone())
            .run(sample_job(Some(folder.clone())), quick_options())
            .await
            .unwrap_err();
        assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e:?}");
        assert!(e.is_refused_before_sending());
        assert!(e.to_string().contains("results"), "{e}");
    }
    assert!(client.list_containers_all().await.unwrap().is_empty());
    assert!(client.list_processings_all().await.unwrap().is_empty());
    emulator.shutdown().await;
}

/// A workflow canceled while uploading, with `cleanup_on_failure`, deletes its
/// container (no processing was started).
#[tokio::test]
async fn a_workflow_canceled_while_uploading_cleans_up_when_asked() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    // The test runs on one thread: the canceler is set before the workflow's task runs.
    let canceler = Arc::new(std::sync::OnceLock::<svc_core::workflow::WorkflowCanceler>::new());
    let cancel_at_upload = canceler.clone();
    let handle = Workflow::new(client.clone()).start(
        sample_job(None),
        WorkflowOptions {
            cleanup_on_failure: true,
            on_progress: Some(Arc::new(move |p: &WorkflowProgress| {
                if matches!(p, WorkflowProgress::Uploading(_))
                    && let Some(c) = cancel_at_upload.get()
                {
                    c.cancel();
                }
            })),
            ..quick_options()
        },
    );
    canceler.set(handle.canceler()).unwrap();
    let e = handle.wait().await.unwrap_err();
    assert!(matches!(e, WorkflowError::Canceled { .. }), "{e:?}");
    assert_eq!(e.processing_id(), None);
    let container = e.container_id().expect("created before the upload");
    assert_eq!(e.cleanup(), &Cleanup::Deleted, "{e}");
    assert!(e.to_string().contains("was deleted"), "{e}");
    assert_eq!(
        client.get_container(container).await.unwrap_err().status(),
        Some(404)
    );
    assert!(client.list_processings_all().await.unwrap().is_empty());
    emulator.shutdown().await;
}

/// A configuration over the service's body limit is refused with 413 (the emulator's
/// documented JSON error); the container created for it is cleaned up when asked.
#[tokio::test]
async fn a_start_refused_with_413_cleans_up_when_asked() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    let mut job = sample_job(None);
    job.processing_json
        .insert("blob".to_owned(), "x".repeat(3 << 20).into());
    let e = Workflow::new(client.clone())
        .run(
            job,
            WorkflowOptions {
                cleanup_on_failure: true,
                ..quick_options()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.cloud_error().and_then(|c| c.status()), Some(413), "{e}");
    assert_eq!(e.kind(), svc_core::ErrorKind::InvalidInput, "{e}");
    assert_eq!(e.cleanup(), &Cleanup::Deleted, "{e}");
    assert!(client.list_containers_all().await.unwrap().is_empty());
    assert!(client.list_processings_all().await.unwrap().is_empty());
    emulator.shutdown().await;
}

/// A file name holding CR or LF (allowed in a container path) is uploaded and
/// processed: the name in the upload's part header cannot break the header.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_names_with_line_breaks_are_uploaded() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("day\r\n1 \"rover\".nmea");
    std::fs::copy(samples().join("rover.nmea"), &odd).unwrap();
    let mut job = sample_job(None);
    job.inputs = vec![odd];
    let outcome = Workflow::new(client_for(emulator.info()))
        .run(job, quick_options())
        .await
        .expect("the workflow succeeds");
    assert_eq!(outcome.processing.status, ProcessingStatus::Processed);
    let container = outcome.container_id.unwrap();
    let stored = client_for(emulator.info())
        .get_container(container)
        .await
        .unwrap();
    assert_eq!(stored.files[0].path, "day\r\n1 \"rover\".nmea");
}

/// A mission folder is uploaded keeping its files' paths below it (`rover/…`,
/// `base/…`), the paths the vendor's configuration names; a configuration naming a
/// file the inputs lack is refused before anything is sent, naming its field.
#[tokio::test]
async fn a_mission_folder_keeps_its_paths_and_the_configuration_names_them() {
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let client = client_for(emulator.info());
    let workflow = Workflow::new(client.clone());
    let mission = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(mission.path().join("rover")).unwrap();
    std::fs::create_dir_all(mission.path().join("base")).unwrap();
    std::fs::copy(
        samples().join("rover.nmea"),
        mission.path().join("rover/rover.nmea"),
    )
    .unwrap();
    std::fs::write(
        mission.path().join("base/base.20o"),
        "     3.04           OBSERVATION DATA    M                   RINEX VERSION / TYPE\n",
    )
    .unwrap();
    std::fs::write(mission.path().join(".DS_Store"), "hidden").unwrap();
    let config = |base: &str| {
        serde_json::json!({
            "version": "1.0",
            "project": {"name": "mission", "type": "nmea", "path": "rover/"},
            "processing": {"type": "gnssSingle", "bases": [{"data": [base]}]}
        })
        .as_object()
        .unwrap()
        .clone()
    };

    let job = ProcessingJob::new(vec![mission.path().to_path_buf()], config("base/base.20o"));
    let outcome = workflow.run(job, quick_options()).await.expect("processed");
    let container = client
        .get_container(outcome.container_id.unwrap())
        .await
        .unwrap();
    let mut paths: Vec<&str> = container.files.iter().map(|f| f.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(paths, ["base/base.20o", "rover/rover.nmea"]);

    let job = ProcessingJob::new(vec![mission.path().to_path_buf()], config("base/other.20o"));
    let e = workflow.run(job, quick_options()).await.unwrap_err();
    assert!(matches!(e, WorkflowError::InvalidJob { .. }), "{e:?}");
    assert!(e.to_string().contains("processing.bases[0].data[0]"), "{e}");
    assert!(
        e.to_string().contains("base/base.20o"),
        "the inputs listed: {e}"
    );
    assert!(e.is_refused_before_sending());
    assert_eq!(client.list_containers_all().await.unwrap().len(), 1);
    emulator.shutdown().await;
}

/// The vendor's form end to end: a mission folder (the rover's data and its settings
/// sidecar) processed with exports and a report; the SBET and ASCII exports read back
/// agree with `trajectory.csv`; another lever arm in the sidecar moves the trajectory
/// by that much, as the comparison shows.
#[tokio::test]
async fn the_vendor_form_gives_exports_the_readers_agree_on() {
    use svc_core::trajectory::{compare, read_points, read_sbet};
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    let dir = tempfile::tempdir().unwrap();
    let config = serde_json::json!({
        "version": "1.0",
        "project": {"name": "paris", "type": "nmea", "path": "rover/"},
        "processing": {"type": "insSingle", "motionProfile": "automotive"},
        "exports": [
            {"name": "Export SBET", "profile": "SBET: 5Hz", "outputDir": "export"},
            {"name": "Export ASCII", "profile": "ASCII: INS at 5Hz", "outputDir": "export"}
        ],
        "reports": [{"name": "JSON report", "template": "Minimal JSON", "outputDir": "reports"}]
    });
    let run = |arm: f64| {
        let mission = dir.path().join(format!("mission{arm}"));
        std::fs::create_dir_all(mission.join("rover")).unwrap();
        std::fs::copy(
            samples().join("rover.nmea"),
            mission.join("rover/rover.nmea"),
        )
        .unwrap();
        let sidecar = serde_json::json!({"settings": {"sensor": {"leverArm": [0.0, 0.0, -arm]}}});
        std::fs::write(mission.join("rover/settings.json"), sidecar.to_string()).unwrap();
        let mut job =
            ProcessingJob::new(vec![mission.clone()], config.as_object().cloned().unwrap());
        job.output_folder = Some(dir.path().join(format!("out{arm}")));
        let workflow = workflow.clone();
        async move { workflow.run(job, quick_options()).await }
    };
    let outcome = run(0.0).await.expect("processed");
    assert!(outcome.succeeded(), "{:?}", outcome.errors);
    let out = dir.path().join("out0");
    let csv = read_points(std::io::BufReader::new(
        std::fs::File::open(out.join("trajectory.csv")).unwrap(),
    ))
    .unwrap();
    let ascii = read_points(std::io::BufReader::new(
        std::fs::File::open(out.join("export/export_ascii.txt")).unwrap(),
    ))
    .unwrap();
    let sbet =
        read_sbet(std::fs::File::open(out.join("export/export_sbet.sbet")).unwrap()).unwrap();
    // Both exports at 5 Hz over the mission: the same epochs.
    assert_eq!(sbet.len(), ascii.len());
    let duration = (csv[csv.len() - 1].time - csv[0].time).num_milliseconds() as f64 / 1000.0;
    assert_eq!(ascii.len(), (duration * 5.0).floor() as usize + 1);
    for (s, a) in sbet.iter().zip(&ascii).step_by(7) {
        assert!(
            (s.latitude.to_degrees() - a.latitude).abs() < 1e-8,
            "{s:?} {a:?}"
        );
        assert!((s.height - a.height).abs() < 1e-3);
        let attitude = a.attitude.expect("an attitude");
        assert!(
            (s.heading.to_degrees() - attitude[2]).abs() < 1e-2,
            "{s:?} {a:?}"
        );
    }
    // The 5 Hz export passes through the fixes: it agrees with trajectory.csv there.
    let same = compare(&csv, &ascii);
    assert_eq!(same.differences.len(), csv.len());
    assert!(
        same.horizontal.max_abs < 1e-3 && same.vertical.max_abs < 1e-3,
        "{same:?}"
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("reports/json_report.json")).unwrap())
            .unwrap();
    assert_eq!(report["epochs"], csv.len());

    // The antenna 2 m above the IMU: the trajectory 2 m lower, and shifted by the few
    // centimetres the vehicle's pitch and roll turn the lever arm by.
    run(2.0).await.expect("processed");
    let lower = read_points(std::io::BufReader::new(
        std::fs::File::open(dir.path().join("out2/trajectory.csv")).unwrap(),
    ))
    .unwrap();
    let moved = compare(&csv, &lower);
    assert!(
        (moved.vertical.mean + 2.0).abs() < 0.01,
        "{:?}",
        moved.vertical
    );
    assert!(moved.horizontal.max_abs < 0.1, "{:?}", moved.horizontal);
    emulator.shutdown().await;
}

/// The vendor's demo configuration as its published samples submit it (SBET and ASCII
/// at 200 Hz, a JSON and a PDF report, a base station), on a unit's data-logger session
/// with its settings sidecar and a base's compressed RINEX: every export and report is
/// written, at the profile's rate, with the unit's own attitude.
#[tokio::test]
async fn the_vendor_demo_configuration_processes_a_logger_session() {
    use svc_core::trajectory::{read_points, read_sbet};
    let emulator = quick_emulator(Duration::from_millis(300)).await;
    let workflow = Workflow::new(client_for(emulator.info()));
    let dir = tempfile::tempdir().unwrap();
    let mission = dir.path().join("mission");
    std::fs::create_dir_all(mission.join("rover")).unwrap();
    std::fs::create_dir_all(mission.join("base")).unwrap();
    let session = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/recording.sbg");
    std::fs::copy(&session, mission.join("rover/Navsight-Auto-Demo.002")).unwrap();
    let sidecar = serde_json::json!({"settings": {"sensor": {"leverArm": [0.0, 0.0, 0.0]}}});
    std::fs::write(mission.join("rover/settings.json"), sidecar.to_string()).unwrap();
    let line = |content: &str, label: &str| format!("{content:<60}{label}\n");
    let rinex = [
        line(
            "1.0                 COMPACT RINEX FORMAT",
            "CRINEX VERS   / TYPE",
        ),
        line(
            "     2.11           OBSERVATION DATA    M (MIXED)",
            "RINEX VERSION / TYPE",
        ),
        line(
            "  2026    11    29     9    50    0.0000000     GPS",
            "TIME OF FIRST OBS",
        ),
        line(
            "  2026    11    29    10    30    0.0000000     GPS",
            "TIME OF LAST OBS",
        ),
        line("", "END OF HEADER"),
    ]
    .concat();
    std::fs::write(mission.join("base/sbgs167p.20d"), rinex).unwrap();
    let config = svc_test_support::vendor_sample_config();
    let out = dir.path().join("out");
    let mut job = ProcessingJob::new(vec![mission], config.as_object().cloned().unwrap());
    job.output_folder = Some(out.clone());
    let outcome = workflow.run(job, quick_options()).await.expect("processed");
    assert!(outcome.succeeded(), "{:?}", outcome.errors);
    assert!(
        outcome.errors.is_empty(),
        "the base covers the session: {:?}",
        outcome.errors
    );
    let mut written: Vec<String> = outcome
        .downloaded
        .iter()
        .map(|p| p.strip_prefix(&out).unwrap().to_string_lossy().into_owned())
        .collect();
    written.sort();
    assert_eq!(
        written,
        [
            "export/export_ascii.txt",
            "export/export_sbet.sbet",
            "pdf_report.pdf",
            "report.json",
            "reports/json/json_report.json",
            "trajectory.csv",
            "trajectory.geojson",
        ]
    );
    // The session's navigation: 10 Hz from 10:00:01 UTC, the last 4.8 s (UTC known from
    // the first utcTime on); the exports at 200 Hz over it.
    let csv = read_points(std::io::BufReader::new(
        std::fs::File::open(out.join("trajectory.csv")).unwrap(),
    ))
    .unwrap();
    let sbet =
        read_sbet(std::fs::File::open(out.join("export/export_sbet.sbet")).unwrap()).unwrap();
    let seconds = (csv[csv.len() - 1].time - csv[0].time).num_milliseconds() as f64 / 1000.0;
    assert_eq!(sbet.len(), (seconds * 200.0).floor() as usize + 1);
    // The unit's own attitude: the recording's ekfEuler, in the trajectory and the SBET.
    let mut log = svc_logs::LogReader::new(std::fs::File::open(&session).unwrap());
    let mut euler = None;
    while let Ok(Some(record)) = log.next_record() {
        if let svc_logs::Record::EkfEuler(e) = record {
            euler = Some(e.euler);
        }
    }
    let last_heading = f64::from(euler.expect("ekfEuler records")[2])
        .to_degrees()
        .rem_euclid(360.0);
    let attitude = csv[csv.len() - 1].attitude.expect("an attitude");
    assert!(
        (attitude[2] - last_heading).abs() < 0.02,
        "{attitude:?} {last_heading}"
    );
    assert!(
        (sbet[sbet.len() - 1].heading.to_degrees().rem_euclid(360.0) - last_heading).abs() < 0.02
    );
    let pdf = std::fs::read(out.join("pdf_report.pdf")).unwrap();
    assert!(pdf.starts_with(b"%PDF-"));
    emulator.shutdown().await;
}
