//! Fault and scale suites: the SDK against the in-process emulator when things go wrong.
//!
//! - **Scale under faults**: one process drives many workflows at once (bounded
//!   parallelism, both organizations of the emulator) while a fifth of the requests to
//!   every server fail (500), are delayed or have their answer cut. Every workflow
//!   completes; its outputs are byte-identical to those of a fault-free run of the same
//!   job; no processing was started twice; no container is left over; the peak RSS
//!   (`VmHWM`) and the faults met are reported. CI runs 100 workflows;
//!   `scale_under_faults_heavy` (ignored; `cargo xtask faults`) runs 1000.
//! - **Identity provider down for 30 s**: workflows wait the outage out and resume.
//! - **Notification service down**: the workflow polls while events are lost, and the
//!   listener replays the missed webhooks once the service is back: no event is lost.
//! - **A noisy serial line** (`serial_faults` of the emulated unit): reads recover by
//!   retry, and no write is applied twice (the unit's tree and its write counter).
//!
//! The figures are printed on stdout (`-- --nocapture` shows them). `SVC_FAULT_SEED`
//! repeats a suite with another fault sequence.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use svc_core::cloud::{ApiSecret, CloudClient, CloudConfig, Metadata};
use svc_core::transfer::TransferOptions;
use svc_core::workflow::{PollSettings, ProcessingJob, Workflow, WorkflowOptions};
use svc_emulator::{EmulatorConfig, EmulatorInfo, FaultConfig};

use crate::common::{emulator, fast_retry};

// ------------------------------------------------------------------------------ rig

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

/// The fault sequence: `SVC_FAULT_SEED`, or `default`.
fn seed(default: u64) -> u64 {
    std::env::var("SVC_FAULT_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The process's peak resident set (`VmHWM` of `/proc/self/status`), in KiB; `None`
/// where there is no such file.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A client of organization `index` of the emulator, with quick retries.
fn org_client(info: &EmulatorInfo, index: usize) -> CloudClient {
    let org = &info.organizations[index];
    let mut config = CloudConfig::new(
        info.base_url.clone(),
        info.auth_url.clone(),
        info.notification_url.clone(),
        org.api_key.clone(),
        ApiSecret::new(org.api_secret.clone()),
        org.organization_id,
    );
    config.retry = fast_retry();
    CloudClient::new(config).expect("valid settings")
}

/// Distinct jobs: the sample's rover file cut to a different length for each (so each
/// has outputs of its own), with the sample's IMU file and configuration.
struct Variants {
    _dir: tempfile::TempDir,
    rovers: Vec<PathBuf>,
    imu: PathBuf,
    processing_json: serde_json::Map<String, serde_json::Value>,
}

impl Variants {
    fn new(count: usize) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let rover = std::fs::read_to_string(samples().join("rover.nmea")).unwrap();
        let lines: Vec<&str> = rover.lines().collect();
        let rovers = (0..count)
            .map(|v| {
                let folder = dir.path().join(format!("variant-{v}"));
                std::fs::create_dir(&folder).unwrap();
                let keep = lines.len() * (v + 2) / (count + 1);
                let path = folder.join("rover.nmea");
                std::fs::write(&path, lines[..keep].join("\n") + "\n").unwrap();
                path
            })
            .collect();
        let text = std::fs::read_to_string(samples().join("processing.json")).unwrap();
        let config: serde_json::Value = serde_json::from_str(&text).unwrap();
        Self {
            _dir: dir,
            rovers,
            imu: samples().join("imu.csv"),
            processing_json: config.as_object().cloned().unwrap(),
        }
    }

    fn job(&self, variant: usize, name: String, output_folder: PathBuf) -> ProcessingJob {
        let mut job = ProcessingJob::new(
            vec![self.rovers[variant].clone(), self.imu.clone()],
            self.processing_json.clone(),
        );
        job.name = Some(name);
        job.metadata = Metadata::from_iter([("suite".to_owned(), "faults".to_owned())]);
        job.output_folder = Some(output_folder);
        job
    }
}

/// Every file under `folder`, by its path relative to it.
fn files_under(folder: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else {
                let relative = path.strip_prefix(folder).unwrap().to_string_lossy();
                files.insert(relative.into_owned(), std::fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// Options for workflows that share an organization with many others: the busy
/// organization is waited out, at a quick pace.
fn batch_options() -> WorkflowOptions {
    WorkflowOptions {
        wait_for_free_organization: true,
        max_wait: Duration::from_secs(600),
        poll: PollSettings {
            initial: Duration::from_millis(20),
            max: Duration::from_millis(250),
            ..PollSettings::default()
        },
        transfer: TransferOptions {
            retry: fast_retry(),
            ..TransferOptions::default()
        },
        ..WorkflowOptions::default()
    }
}

// ------------------------------------------------------------------- scale under faults

/// Jobs of the scale suite (each of the workflows runs one of them).
const VARIANTS: usize = 4;

/// What a scale run measured.
#[derive(Debug)]
struct ScaleReport {
    workflows: usize,
    parallelism: usize,
    elapsed: Duration,
    faults: svc_emulator::FaultCounts,
    peak_rss_kib: Option<u64>,
}

/// The outputs of each variant from a fault-free emulator: the reference the runs
/// under faults must match byte for byte.
async fn fault_free_outputs(variants: &Variants) -> Vec<BTreeMap<String, Vec<u8>>> {
    let emulator = emulator(EmulatorConfig {
        processing_time: Duration::from_millis(50),
        ..EmulatorConfig::default()
    })
    .await;
    let workflow = Workflow::new(org_client(emulator.info(), 0));
    let out = tempfile::tempdir().unwrap();
    let mut reference = Vec::new();
    for v in 0..VARIANTS {
        let folder = out.path().join(format!("variant-{v}"));
        let outcome = workflow
            .run(
                variants.job(v, format!("reference {v}"), folder.clone()),
                batch_options(),
            )
            .await
            .expect("the fault-free run completes");
        assert!(outcome.succeeded(), "{:?}", outcome.processing);
        let files = files_under(&folder);
        assert!(files.len() >= 3, "{:?}", files.keys());
        reference.push(files);
    }
    // The variants differ: matching the reference says which job an output came from.
    let distinct: HashSet<&Vec<u8>> = reference
        .iter()
        .filter_map(|files| files.get("report.json"))
        .collect();
    assert_eq!(distinct.len(), VARIANTS);
    emulator.shutdown().await;
    reference
}

/// Runs `workflows` workflows, `parallelism` at a time, across both organizations of
/// an emulator injecting faults in 20 % of the requests, and checks everything the
/// suite promises.
async fn scale_under_faults(workflows: usize, parallelism: usize) -> ScaleReport {
    let variants = Variants::new(VARIANTS);
    let reference = fault_free_outputs(&variants).await;

    let faults = FaultConfig {
        rate: 0.2,
        delay: Duration::from_millis(50),
        seed: seed(11),
        ..FaultConfig::default()
    };
    let counters = faults.handle.clone();
    let emulator = emulator(EmulatorConfig {
        processing_time: Duration::from_millis(100),
        // More than the run needs: a second start of a job would not be refused for
        // want of credit, it would be counted.
        credits: 10_000,
        faults,
        ..EmulatorConfig::default()
    })
    .await;
    let clients = [
        org_client(emulator.info(), 0),
        org_client(emulator.info(), 1),
    ];
    let out = tempfile::tempdir().unwrap();
    let began = Instant::now();
    let results: Vec<_> = futures::stream::iter(0..workflows)
        .map(|i| {
            let workflow = Workflow::new(clients[i % 2].clone());
            let folder = out.path().join(format!("job-{i}"));
            let job = variants.job(i % VARIANTS, format!("scale {i}"), folder.clone());
            async move { (i, workflow.run(job, batch_options()).await, folder) }
        })
        .buffer_unordered(parallelism)
        .collect()
        .await;
    let elapsed = began.elapsed();

    // Every workflow completed, with the fault-free run's outputs, byte for byte.
    let mut containers_of: [HashMap<uuid::Uuid, uuid::Uuid>; 2] = Default::default();
    for (i, result, folder) in results {
        let outcome = result.unwrap_or_else(|e| panic!("workflow {i} failed: {e}"));
        assert!(
            outcome.succeeded(),
            "workflow {i}: {:?}",
            outcome.processing
        );
        let downloaded = files_under(&folder);
        assert!(
            downloaded == reference[i % VARIANTS],
            "workflow {i}: its outputs differ from the fault-free run's ({:?} vs {:?})",
            downloaded.keys().collect::<Vec<_>>(),
            reference[i % VARIANTS].keys().collect::<Vec<_>>()
        );
        let container = outcome
            .container_id
            .expect("the workflow names its container");
        let previous = containers_of[i % 2].insert(outcome.processing.id, container);
        assert!(
            previous.is_none(),
            "workflow {i}: a processing of another workflow"
        );
    }

    // Per organization: one processing per workflow (none started twice), each of its
    // workflow's container, and no other container (no orphan).
    for (org, client) in clients.iter().enumerate() {
        let expected = containers_of[org].len();
        let processings = client.list_processings_all().await.unwrap();
        assert_eq!(
            processings.len(),
            expected,
            "organization {org}: {} processings for {expected} workflows",
            processings.len()
        );
        for p in &processings {
            assert_eq!(
                p.container_id,
                containers_of[org].get(&p.id).copied(),
                "organization {org}: processing {} is no workflow's",
                p.id
            );
        }
        let containers = client.list_containers_all().await.unwrap();
        let ours: HashSet<uuid::Uuid> = containers_of[org].values().copied().collect();
        assert_eq!(ours.len(), expected, "each workflow has its own container");
        let left_over: Vec<uuid::Uuid> = containers
            .iter()
            .map(|c| c.id)
            .filter(|id| !ours.contains(id))
            .collect();
        assert!(
            left_over.is_empty(),
            "organization {org}: orphan containers {left_over:?}"
        );
        assert_eq!(containers.len(), expected);
    }

    let faults = counters.counts();
    // The run met faults of every kind (else it proves nothing).
    assert!(
        faults.errors > 0 && faults.delays > 0 && faults.cuts > 0,
        "{faults:?}"
    );
    let share = (faults.errors + faults.delays + faults.cuts) as f64 / faults.requests as f64;
    assert!(
        (0.15..0.25).contains(&share),
        "fault share {share}: {faults:?}"
    );
    emulator.shutdown().await;
    let report = ScaleReport {
        workflows,
        parallelism,
        elapsed,
        faults,
        peak_rss_kib: peak_rss_kib(),
    };
    println!(
        "scale under faults: {} workflows, {} at a time, in {:.1} s; {} requests: {} answered 500, \
         {} delayed, {} cut; peak RSS (VmHWM, whole test process) {} MiB",
        report.workflows,
        report.parallelism,
        report.elapsed.as_secs_f64(),
        report.faults.requests,
        report.faults.errors,
        report.faults.delays,
        report.faults.cuts,
        report
            .peak_rss_kib
            .map_or_else(|| "unknown".to_owned(), |k| (k / 1024).to_string()),
    );
    report
}

/// The peak RSS of the test process after the CI scale run. It is the whole process's,
/// with the other tests running beside it (about 0.5 GiB at most in a full run; the
/// scale run alone: about 50 MiB): a guard against gross regressions only.
const MAX_PEAK_RSS_KIB: u64 = 1024 * 1024;

/// The peak RSS after the heavy run, the suites running one at a time (`cargo xtask
/// faults`): its 1000 workflows move about 360 MB of inputs and their outputs, so
/// holding a share of them in memory (a transfer buffered whole, workflows' state kept
/// after they end) would pass it; measured about 85 MiB.
const MAX_HEAVY_PEAK_RSS_KIB: u64 = 256 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn scale_under_faults_100_workflows() {
    let report = scale_under_faults(100, 16).await;
    if let Some(peak) = report.peak_rss_kib {
        assert!(peak < MAX_PEAK_RSS_KIB, "peak RSS {peak} KiB");
    }
}

/// The heavier variant: `SVC_SCALE_WORKFLOWS` workflows (default 1000), 64 at a time.
/// Run with `cargo xtask faults`.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "heavy: run by `cargo xtask faults`"]
async fn scale_under_faults_heavy() {
    let workflows = std::env::var("SVC_SCALE_WORKFLOWS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let report = scale_under_faults(workflows, 64).await;
    if let Some(peak) = report.peak_rss_kib {
        assert!(peak < MAX_HEAVY_PEAK_RSS_KIB, "peak RSS {peak} KiB");
    }
}

// -------------------------------------------------------- identity provider outage

/// How long the identity provider is down in its suite (the figure).
const IDP_OUTAGE: Duration = Duration::from_secs(30);

/// The identity provider goes down for 30 s while one workflow follows its processing
/// and another is about to create its container. Tokens last 2 s, so both need a new
/// one during the outage and get none. Neither fails: each waits the outage out
/// (within the default outage tolerance) and resumes when the identity provider is
/// back, with the outputs the emulator stored, one container and one processing each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_resumes_when_the_identity_provider_returns() {
    let emulator = emulator(EmulatorConfig {
        token_lifetime: Duration::from_secs(2),
        processing_time: Duration::from_secs(4),
        ..EmulatorConfig::default()
    })
    .await;
    let faults = emulator.faults().clone();
    let client = org_client(emulator.info(), 0);
    let variants = Variants::new(2);
    let out = tempfile::tempdir().unwrap();
    let options = || WorkflowOptions {
        poll: PollSettings {
            initial: Duration::from_millis(200),
            max: Duration::from_secs(1),
            ..PollSettings::default()
        },
        ..batch_options()
    };

    // The first workflow: its processing started, then the identity provider goes.
    let (started_tx, started_rx) = tokio::sync::oneshot::channel();
    let started_tx = std::sync::Mutex::new(Some(started_tx));
    let first = Workflow::new(client.clone()).start(
        variants.job(0, "before the outage".into(), out.path().join("first")),
        WorkflowOptions {
            on_progress: Some(std::sync::Arc::new(move |p| {
                if matches!(p, svc_core::workflow::WorkflowProgress::Queued { .. })
                    && let Some(tx) = started_tx.lock().unwrap().take()
                {
                    let _ = tx.send(());
                }
            })),
            ..options()
        },
    );
    started_rx.await.expect("the first processing starts");
    faults.set_down(svc_emulator::Service::IdentityProvider, true);
    let down_at = Instant::now();

    // The second workflow starts during the outage: it needs a token to create its
    // container (its client has none yet).
    tokio::time::sleep(Duration::from_secs(1)).await;
    let second = Workflow::new(org_client(emulator.info(), 1)).start(
        variants.job(1, "during the outage".into(), out.path().join("second")),
        options(),
    );

    tokio::time::sleep(IDP_OUTAGE.saturating_sub(down_at.elapsed())).await;
    let refused_before_return = faults.refused(svc_emulator::Service::IdentityProvider);
    faults.set_down(svc_emulator::Service::IdentityProvider, false);
    let back_at = Instant::now();
    assert!(
        first.processing_id().is_some() && second.container_id().is_none(),
        "during the outage the first workflow kept its processing and the second \
         created nothing"
    );

    let first = first.wait().await.expect("the first workflow resumes");
    let first_done = back_at.elapsed();
    let second = second.wait().await.expect("the second workflow resumes");
    assert!(first.succeeded() && second.succeeded());
    // Their processings ended during the outage; their outcome came after it (the
    // status, the errors and the outputs all need a token).
    assert!(
        refused_before_return >= 4,
        "both workflows kept asking for a token during the outage ({refused_before_return} refused)"
    );
    for (outcome, folder) in [(&first, "first"), (&second, "second")] {
        let stored = emulator.stored_outputs(outcome.processing.id);
        let downloaded = files_under(&out.path().join(folder));
        assert_eq!(
            downloaded,
            stored.into_iter().collect::<BTreeMap<_, _>>(),
            "{folder}"
        );
    }
    for (org, client) in [(0, &client), (1, &org_client(emulator.info(), 1))] {
        assert_eq!(
            client.list_processings_all().await.unwrap().len(),
            1,
            "{org}"
        );
        assert_eq!(
            client.list_containers_all().await.unwrap().len(),
            1,
            "{org}"
        );
    }
    println!(
        "identity provider down {} s: {} token requests refused; the first workflow ended {} ms \
         after its return",
        IDP_OUTAGE.as_secs(),
        faults.refused(svc_emulator::Service::IdentityProvider),
        first_done.as_millis()
    );
    emulator.shutdown().await;
}

// ------------------------------------------------------------------- noisy serial line

/// A unit whose serial bridge loses and corrupts bytes in 20 % of the chunks (both
/// ways). Reads recover by being sent again: every read of the settings tree and of
/// `/info` succeeds and matches the unit. Writes are never sent twice blindly: each
/// wanted value is applied with `apply_wanted`, which reads the tree back when a
/// write's answer is lost (and sends it again only when the unit holds none of it),
/// and when that fails too the caller runs it again, which reads the tree first and
/// writes only what is not there yet. The unit's write counter then equals the number
/// of values written, exactly: none was applied twice, none was lost; the tree holds
/// the last one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_noisy_serial_line_recovers_reads_and_never_applies_a_write_twice() {
    use svc_core::unit::serial_link::SerialOptions;
    use svc_core::unit::{ApplyOptions, Unit, UnitError};
    use svc_emulator::SerialFaultConfig;
    use svc_emulator::device::{DeviceConfig, DeviceEmulator};

    const READS: usize = 20;
    const WRITES: usize = 40;
    let noise = SerialFaultConfig {
        rate: 0.2,
        seed: seed(23),
        ..SerialFaultConfig::default()
    };
    let counts = noise.handle.clone();
    let dev = DeviceEmulator::start(DeviceConfig {
        pty: false,
        serial_faults: noise,
        ..DeviceConfig::default()
    })
    .await
    .unwrap();
    let core_get = |path: &str| -> serde_json::Value {
        let (status, body) = dev.handle("GET", path, "", b"").expect("the unit answers");
        assert_eq!(status, 200);
        serde_json::from_slice(&body).unwrap()
    };
    let link = svc_core::unit::serial_link::SerialLink::tcp(
        dev.serial_tcp(),
        SerialOptions {
            // The emulated unit answers within milliseconds: a lost answer is known soon.
            answer_timeout: Duration::from_millis(120),
            // A request and its answer each cross the line once: 64 % of the attempts
            // get through; 12 attempts leave one read in 200 000 unanswered.
            get_attempts: 12,
            inter_byte_timeout: Duration::from_millis(30),
        },
    )
    .await
    .unwrap();
    let unanswered = Arc::new(AtomicUsize::new(0));
    let unit = Unit::over(
        Arc::new(UnansweredWrites {
            inner: link,
            count: unanswered.clone(),
        }),
        "noisy serial bridge".to_owned(),
    );

    // Reads: sent again until answered, and what the unit holds.
    for _ in 0..READS {
        let info = unit.info().await.expect("a read recovers by retry");
        assert_eq!(
            serde_json::to_value(&info).unwrap()["serialNumber"],
            core_get("/api/v1/info")["serialNumber"]
        );
        let tree = unit.settings().await.expect("a read recovers by retry");
        assert_eq!(tree, core_get("/api/v1/settings"));
    }

    // Writes: each value applied once, whatever the line loses.
    let mut lost_answers = 0;
    let mut applied_but_unanswered = 0;
    for i in 0..WRITES {
        let value = serde_json::json!([i as f64 / 100.0, 0.0, -1.2]);
        let wanted = serde_json::json!({"aiding": {"gnss1": {"leverArmPrimary": value}}});
        let mut runs = 0;
        loop {
            runs += 1;
            let before = dev.applied_writes();
            match unit.apply_wanted(&wanted, ApplyOptions::default()).await {
                Ok(report) => {
                    assert!(report.written || runs > 1, "write {i}: {report:?}");
                    break;
                }
                Err(e @ UnitError::Unreachable { .. }) => {
                    lost_answers += 1;
                    if dev.applied_writes() > before {
                        applied_but_unanswered += 1;
                    }
                    assert!(runs < 20, "write {i}: still failing after {runs} runs: {e}");
                }
                Err(e) => panic!("write {i}: {e}"),
            }
        }
        assert_eq!(
            core_get("/api/v1/settings/aiding/gnss1/leverArmPrimary"),
            value,
            "write {i}"
        );
    }
    assert_eq!(
        dev.applied_writes(),
        WRITES as u64,
        "each value applied exactly once"
    );
    let unanswered = unanswered.load(Ordering::SeqCst);
    assert!(
        unanswered > 0,
        "some write got no answer (else the suite proves nothing): {lost_answers} runs failed"
    );
    let faults = counts.counts();
    assert!(faults.dropped > 0 && faults.corrupted > 0, "{faults:?}");
    println!(
        "noisy serial line: {} chunks, {} lost bytes, {} corrupted; {READS} reads of the tree \
         and of /info; {WRITES} writes, {lost_answers} runs without an answer, \
         {applied_but_unanswered} of them applied; {unanswered} writes without an answer \
         (read back, sent again only when not applied)",
        faults.chunks, faults.dropped, faults.corrupted
    );
    dev.shutdown().await;
}

// -------------------------------------------------------- notification service outage

/// The notification service goes down for 3 s while a workflow follows its processing
/// by webhook events. The workflow notices that the processing changes without events
/// and polls at the polling pace until events come back (many more status reads than
/// its 1 s fallback read alone would make), and completes. The events raised during
/// the outage end up as missed webhooks; once the service answers again, the listener
/// replays them, so its subscribers get every event raised, each once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notification_outage_falls_back_to_polling_and_loses_no_event() {
    use svc_core::workflow::{ListenerOptions, WebhookListener, WorkflowProgress};

    const OUTAGE: Duration = Duration::from_secs(3);
    let emulator = emulator(EmulatorConfig {
        processing_time: Duration::from_secs(6),
        // Retries that run out within the outage: its events become missed webhooks.
        webhook_retry_base: Duration::from_millis(20),
        webhook_retry_cap: Duration::from_millis(50),
        ..EmulatorConfig::default()
    })
    .await;
    let faults = emulator.faults().clone();
    let client = org_client(emulator.info(), 0);
    let listener = WebhookListener::register_with(
        &client,
        ListenerOptions {
            catch_up_every: Some(Duration::from_millis(200)),
        },
    )
    .await
    .unwrap();
    let endpoint = listener.endpoint_id().unwrap();

    // A subscriber that records every event it gets, delivered or replayed.
    let mut watcher = listener.events();
    let received = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = received.clone();
    let recorder = tokio::spawn(async move {
        while let Some(event) = watcher.next_event().await {
            sink.lock().unwrap().push(event.id);
        }
    });

    let (running_tx, running_rx) = tokio::sync::oneshot::channel();
    let running_tx = std::sync::Mutex::new(Some(running_tx));
    let variants = Variants::new(1);
    let out = tempfile::tempdir().unwrap();
    let handle = Workflow::new(client.clone()).start(
        variants.job(0, "notification outage".into(), out.path().to_owned()),
        WorkflowOptions {
            events: Some(listener.events()),
            poll: PollSettings {
                initial: Duration::from_millis(100),
                max: Duration::from_millis(300),
                event_fallback: Duration::from_secs(1),
            },
            on_progress: Some(std::sync::Arc::new(move |p| {
                if matches!(p, WorkflowProgress::Running { .. })
                    && let Some(tx) = running_tx.lock().unwrap().take()
                {
                    let _ = tx.send(());
                }
            })),
            ..batch_options()
        },
    );
    running_rx.await.expect("the processing runs");
    faults.set_down(svc_emulator::Service::Notification, true);
    tokio::time::sleep(OUTAGE).await;
    faults.set_down(svc_emulator::Service::Notification, false);

    let outcome = handle.wait().await.expect("the workflow completes");
    assert!(outcome.succeeded(), "{:?}", outcome.processing);
    assert_eq!(
        files_under(out.path()),
        emulator
            .stored_outputs(outcome.processing.id)
            .into_iter()
            .collect::<BTreeMap<_, _>>()
    );
    // Events were followed before and after the outage; during it, the processing was
    // polled: a 1 s fallback read alone would have read it at most 4 times.
    assert!(
        outcome.status_reads >= 6,
        "{} status reads: no fallback to polling",
        outcome.status_reads
    );

    // The outage lost deliveries: they are the endpoint's missed webhooks.
    let counts = faults.counts();
    assert!(counts.deliveries_failed_while_down > 0, "{counts:?}");
    let missed = client.list_missed_webhooks_all(endpoint).await.unwrap();
    assert!(!missed.is_empty());
    assert!(
        faults.refused(svc_emulator::Service::Notification) > 0,
        "the listener tried to list them during the outage"
    );

    // Every event raised reaches the subscriber, each once.
    let raised = emulator.raised_webhook_events(endpoint);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = received.lock().unwrap().clone();
        let complete = raised.iter().all(|id| got.contains(id));
        if complete || Instant::now() > deadline {
            let unique: HashSet<&uuid::Uuid> = got.iter().collect();
            assert_eq!(unique.len(), got.len(), "an event was forwarded twice");
            let lost: Vec<&uuid::Uuid> = raised.iter().filter(|id| !got.contains(id)).collect();
            assert!(
                lost.is_empty(),
                "{} of {} events lost",
                lost.len(),
                raised.len()
            );
            assert_eq!(got.len(), raised.len());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(missed.iter().all(|m| raised.contains(&m.id)));
    println!(
        "notification service down {} s: {} deliveries failed, {} events missed and replayed \
         of {} raised; {} status reads",
        OUTAGE.as_secs(),
        counts.deliveries_failed_while_down,
        missed.len(),
        raised.len(),
        outcome.status_reads
    );
    recorder.abort();
    listener.unregister(&client).await.unwrap();
    emulator.shutdown().await;
}

/// Counts the settings writes (not check-only) that the link got no answer to.
struct UnansweredWrites {
    inner: svc_core::unit::serial_link::SerialLink,
    count: Arc<AtomicUsize>,
}

impl svc_core::unit::Exchange for UnansweredWrites {
    fn exchange(
        &self,
        request: svc_core::unit::ExchangeRequest,
    ) -> svc_core::unit::ExchangeFuture<'_> {
        let write = request.method == http::Method::POST
            && request.path.ends_with("/settings")
            && !request.query.contains("checkOnly=true");
        Box::pin(async move {
            let answer = self.inner.exchange(request).await;
            if write && answer.is_err() {
                self.count.fetch_add(1, Ordering::SeqCst);
            }
            answer
        })
    }
}

/// What `svc device --serial-tcp … settings apply --lock` does, ten times over a line
/// that damages 20 % of the chunks, with the link's default attempts: a fresh session
/// logs in, applies a new value under the lock, and logs out. At least 9 of 10 succeed
/// (a damaged answer shows the unit is there, so it does not use up the silent
/// attempts; a write whose answer is lost is read back), and each value is applied
/// once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nine_of_ten_locked_applies_succeed_over_a_noisy_serial_line() {
    use ins_device_api::Password;
    use ins_device_api::enums::UserName;
    use svc_core::unit::serial_link::SerialOptions;
    use svc_core::unit::{ApplyOptions, Unit};
    use svc_emulator::SerialFaultConfig;
    use svc_emulator::device::{DeviceConfig, DeviceEmulator};

    let dev = DeviceEmulator::start(DeviceConfig {
        pty: false,
        serial_faults: SerialFaultConfig {
            rate: 0.2,
            seed: seed(31),
            ..SerialFaultConfig::default()
        },
        ..DeviceConfig::default()
    })
    .await
    .unwrap();
    let options = SerialOptions {
        // The emulated unit answers within milliseconds: a lost answer is known soon.
        answer_timeout: Duration::from_millis(150),
        inter_byte_timeout: Duration::from_millis(30),
        ..SerialOptions::default()
    };
    let mut succeeded = 0;
    let mut failures = Vec::new();
    for run in 0..10 {
        let outcome = async {
            let unit = Unit::serial_tcp_with(dev.serial_tcp(), options).await?;
            unit.login(UserName::Setup, Password::new("")).await?;
            let wanted = serde_json::json!({"oem": {"label": format!("run {run}")}});
            let applied = unit
                .apply_wanted(
                    &wanted,
                    ApplyOptions {
                        lock: true,
                        ..ApplyOptions::default()
                    },
                )
                .await;
            let _ = unit.logout().await;
            applied
        }
        .await;
        match outcome {
            Ok(report) => {
                assert!(report.written, "run {run}: {report:?}");
                succeeded += 1;
            }
            Err(e) => failures.push(format!("run {run}: {e}")),
        }
    }
    assert!(succeeded >= 9, "{succeeded} of 10 succeeded: {failures:?}");
    assert!(dev.applied_writes() <= 10, "no value applied twice");
    println!("noisy serial line, locked applies: {succeeded} of 10 succeeded; {failures:?}");
}
