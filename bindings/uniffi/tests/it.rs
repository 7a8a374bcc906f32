//! The binding as a foreign caller sees it: every constructor refuses bad input with an
//! error (never a panic), `async` methods run from an executor that is not Tokio, and
//! the main scenarios run against the in-process emulator.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::executor::block_on;
use svc_emulator::{Emulator, EmulatorConfig, EmulatorInfo};
use svc_ffi::*;

// ------------------------------------------------------------------ helpers

/// An emulator on its own runtime, as the foreign side's server would be.
struct Rig {
    info: EmulatorInfo,
    _emulator: Emulator,
    _runtime: tokio::runtime::Runtime,
}

fn rig(processing: Duration) -> Rig {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let emulator = runtime
        .block_on(Emulator::start(EmulatorConfig {
            processing_time: processing,
            ..EmulatorConfig::default()
        }))
        .expect("emulator");
    Rig {
        info: emulator.info().clone(),
        _emulator: emulator,
        _runtime: runtime,
    }
}

fn config(info: &EmulatorInfo) -> CloudConfig {
    CloudConfig {
        base_url: info.base_url.clone(),
        auth_url: info.auth_url.clone(),
        notification_url: info.notification_url.clone(),
        api_key: info.api_key.clone(),
        api_secret: Secret::new(info.api_secret.clone()),
        organization_id: info.organization_id.to_string(),
        request_timeout_ms: 30_000,
        page_size: 100,
        max_attempts: 5,
        tls: None,
    }
}

fn kind<T>(result: Result<T, SvcError>) -> (&'static str, SvcError) {
    match result {
        Ok(_) => panic!("expected an error"),
        Err(e) => (e.kind_name(), e),
    }
}

fn samples() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

// ------------------------------------------------------------------ constructors

#[test]
fn every_constructor_refuses_bad_input_with_an_error() {
    let good = CloudConfig {
        base_url: "https://cloud.example.com".into(),
        auth_url: "https://auth.example.com".into(),
        notification_url: "https://notify.example.com".into(),
        api_key: "key".into(),
        api_secret: Secret::new("secret".into()),
        organization_id: "5b1f4b52-43a4-4c5e-9a7b-6f1d1c3c0b11".into(),
        request_timeout_ms: 1000,
        page_size: 10,
        max_attempts: 1,
        tls: None,
    };
    assert!(CloudClient::create(good.clone()).is_ok());
    let bad: Vec<(&str, CloudConfig)> = vec![
        (
            "base_url",
            CloudConfig {
                base_url: "not a url".into(),
                ..good.clone()
            },
        ),
        (
            "auth_url",
            CloudConfig {
                auth_url: "ftp://x".into(),
                ..good.clone()
            },
        ),
        (
            "notification_url",
            CloudConfig {
                notification_url: String::new(),
                ..good.clone()
            },
        ),
        (
            "api_key",
            CloudConfig {
                api_key: " ".into(),
                ..good.clone()
            },
        ),
        (
            "api_secret",
            CloudConfig {
                api_secret: Secret::new(String::new()),
                ..good.clone()
            },
        ),
        (
            "organizationId",
            CloudConfig {
                organization_id: "nope".into(),
                ..good.clone()
            },
        ),
        (
            "request_timeout",
            CloudConfig {
                request_timeout_ms: 0,
                ..good.clone()
            },
        ),
        (
            "page_size",
            CloudConfig {
                page_size: 0,
                ..good.clone()
            },
        ),
        (
            "page_size",
            CloudConfig {
                page_size: 101,
                ..good.clone()
            },
        ),
    ];
    for (setting, config) in bad {
        let (name, e) = kind(CloudClient::create(config));
        assert_eq!(name, "invalid_input", "{setting}: {e}");
        assert!(e.reason().contains(setting), "{setting}: {e}");
        assert!(!e.reason().contains("secret\""), "{e}");
    }

    for secrets in [vec![], vec![String::new()]] {
        let (name, e) = kind(Webhook::new(secrets, None));
        assert_eq!(name, "invalid_input", "{e}");
        assert_eq!(e.code(), Some("no_secret"));
    }
    assert!(Webhook::new(vec!["whsec_x".into()], Some(10)).is_ok());

    for url in ["ftp://unit", "not a url", "https://unit.local"] {
        let (name, e) = kind(InsUnit::http(url.into()));
        assert_eq!(name, "invalid_input", "{url}: {e}");
    }
    assert!(InsUnit::http("http://192.0.2.1".into()).is_ok());
    // A serial bridge nobody listens on: an error, at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let address = closed.local_addr().expect("address").to_string();
    drop(closed);
    let (name, e) = kind(block_on(InsUnit::serial_tcp(address, None)));
    assert_eq!(name, "unreachable", "{e}");
    let (name, _) = kind(block_on(InsUnit::serial_tcp("no port".into(), None)));
    assert_eq!(name, "unreachable");

    for json in ["{", "", "[1,", "nul"] {
        let (name, e) = kind(SettingsTree::from_json(json.into()));
        assert_eq!(name, "invalid_input", "{json:?}: {e}");
    }
    assert!(Transfers::new(TransferOptions::default(), None, None).is_ok());

    // Objects built from valid parts refuse bad arguments of their methods the same way.
    let client = CloudClient::create(good).expect("client");
    let workflow = Workflow::new(client.clone());
    let job = |json: &str| ProcessingJob {
        inputs: vec!["x".into()],
        processing_json: json.into(),
        resources: vec![],
        name: None,
        metadata: HashMap::new(),
        region: None,
        output_folder: None,
    };
    for json in ["[]", "{", "1"] {
        let (name, e) = kind(workflow.start(job(json), options(), None));
        assert_eq!(name, "invalid_input", "{json}: {e}");
    }
    let (name, _) = kind(workflow.resume("x".into(), None, options(), None));
    assert_eq!(name, "invalid_input");
    let (name, e) = kind(block_on(client.get_container("not-an-id".into())));
    assert_eq!(name, "invalid_input", "{e}");
    assert!(e.reason().contains("containerId"), "{e}");
    let (name, _) = kind(client.list_missed_webhooks("x".into()));
    assert_eq!(name, "invalid_input");
    let (name, _) = kind(block_on(client.list_containers_page(-1, 10)));
    assert_eq!(name, "invalid_input");
}

fn options() -> WorkflowOptions {
    WorkflowOptions {
        wait_for_free_organization: false,
        max_wait_ms: 60_000,
        follow: true,
        follow_timeout_ms: Some(120_000),
        poll_initial_ms: 50,
        poll_max_ms: 300,
        cleanup_on_failure: false,
        transfer: None,
    }
}

/// Runs the named test of this binary in a child process with `env` (values `None`
/// removed), returning whether it passed. Environment changes stay out of this process.
fn in_child(test: &str, env: &[(&str, Option<&str>)]) -> bool {
    let mut command = std::process::Command::new(std::env::current_exe().expect("test binary"));
    command
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env("SVC_FFI_CHILD", "1");
    for (name, value) in env {
        match value {
            Some(v) => command.env(name, v),
            None => command.env_remove(name),
        };
    }
    let output = command.output().expect("child");
    let text = String::from_utf8_lossy(&output.stdout);
    output.status.success() && text.contains("1 passed")
}

#[test]
fn child_no_ca_certificates() {
    if std::env::var_os("SVC_FFI_CHILD").is_none() {
        return;
    }
    // Bundled roots do not need the system's certificates.
    let info = EmulatorInfo {
        base_url: "https://cloud.example.com".into(),
        auth_url: "https://auth.example.com".into(),
        notification_url: "https://notify.example.com".into(),
        storage_url: String::new(),
        organization_id: uuid::Uuid::nil(),
        api_key: "k".into(),
        api_secret: "s".into(),
        member_api_key: String::new(),
        member_api_secret: String::new(),
        organizations: vec![],
        device_url: None,
        device_serial_path: None,
        device_serial_tcp: None,
    };
    assert!(CloudClient::create(config(&info)).is_ok());
    assert!(Transfers::new(TransferOptions::default(), None, Some(TlsRoots::Bundled)).is_ok());
    // The platform verifier finds none: an error, not a panic.
    let (name, e) = kind(CloudClient::create(CloudConfig {
        tls: Some(TlsRoots::Platform),
        ..config(&info)
    }));
    assert_eq!(name, "invalid_input", "{e}");
    assert!(e.reason().contains("Platform"), "{e}");
    let (name, _) = kind(Transfers::new(
        TransferOptions::default(),
        None,
        Some(TlsRoots::Platform),
    ));
    assert_eq!(name, "invalid_input");
}

#[test]
fn without_ca_certificates_bundled_roots_work_and_the_platform_verifier_is_an_error() {
    let empty = tempfile::tempdir().expect("dir");
    let dir = empty.path().to_string_lossy().into_owned();
    let file = empty.path().join("none.pem").to_string_lossy().into_owned();
    std::fs::write(&file, "").expect("empty bundle");
    assert!(in_child(
        "child_no_ca_certificates",
        &[("SSL_CERT_FILE", Some(&file)), ("SSL_CERT_DIR", Some(&dir))],
    ));
}

#[test]
fn child_from_env_without_variables() {
    if std::env::var_os("SVC_FFI_CHILD").is_none() {
        return;
    }
    let (name, e) = kind(CloudClient::from_env(None));
    assert_eq!(name, "invalid_input", "{e}");
    assert!(e.reason().contains("SVC_BASE_URL"), "{e}");
}

#[test]
fn child_from_env_with_a_bad_organization() {
    if std::env::var_os("SVC_FFI_CHILD").is_none() {
        return;
    }
    let (name, e) = kind(CloudClient::from_env(None));
    assert_eq!(name, "invalid_input", "{e}");
    assert!(e.reason().contains("SVC_ORGANIZATION_ID"), "{e}");
    assert!(!e.reason().contains("s3cr3t"), "{e}");
}

#[test]
fn from_env_refuses_missing_and_invalid_variables() {
    let unset: Vec<(&str, Option<&str>)> = [
        "SVC_BASE_URL",
        "SVC_AUTH_URL",
        "SVC_NOTIFICATION_URL",
        "SVC_API_KEY",
        "SVC_API_SECRET",
        "SVC_ORGANIZATION_ID",
    ]
    .iter()
    .map(|n| (*n, None))
    .collect();
    assert!(in_child("child_from_env_without_variables", &unset));
    let set = [
        ("SVC_BASE_URL", Some("http://127.0.0.1:1")),
        ("SVC_AUTH_URL", Some("http://127.0.0.1:1")),
        ("SVC_NOTIFICATION_URL", Some("http://127.0.0.1:1")),
        ("SVC_API_KEY", Some("k")),
        ("SVC_API_SECRET", Some("s3cr3t")),
        ("SVC_ORGANIZATION_ID", Some("not-a-uuid")),
    ];
    assert!(in_child("child_from_env_with_a_bad_organization", &set));
}

#[test]
fn secrets_are_redacted_in_debug_and_display() {
    let secret = Secret::new("whsec_topsecret".into());
    assert_eq!(secret.to_string(), "[redacted]");
    assert!(!format!("{secret:?}").contains("topsecret"));
    assert_eq!(secret.reveal(), "whsec_topsecret");
    let info = EmulatorInfo {
        base_url: "http://a".into(),
        auth_url: "http://a".into(),
        notification_url: "http://a".into(),
        storage_url: String::new(),
        organization_id: uuid::Uuid::nil(),
        api_key: "key".into(),
        api_secret: "apisecretvalue".into(),
        member_api_key: String::new(),
        member_api_secret: String::new(),
        organizations: vec![],
        device_url: None,
        device_serial_path: None,
        device_serial_tcp: None,
    };
    let config = config(&info);
    assert!(!format!("{config:?}").contains("apisecretvalue"));
    let client = CloudClient::create(config).expect("client");
    assert!(!format!("{client:?}").contains("apisecretvalue"));
}

// ------------------------------------------------------------------ webhook vectors

#[test]
fn shared_webhook_vectors() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/webhook_vectors.json"),
    )
    .expect("vectors");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("json");
    let vectors = doc["vectors"].as_array().expect("vectors");
    assert!(vectors.len() >= 10);
    for v in vectors {
        let name = v["name"].as_str().unwrap_or_default();
        let secrets: Vec<String> = v["secrets"]
            .as_array()
            .expect("secrets")
            .iter()
            .map(|s| s.as_str().unwrap_or_default().to_owned())
            .collect();
        let tolerance = v["tolerance_seconds"].as_u64();
        let webhook = Webhook::new(secrets, tolerance).expect("webhook");
        let mut headers = HashMap::new();
        if let Some(t) = v["timestamp"].as_str() {
            headers.insert("Svc-Timestamp".to_owned(), t.to_owned());
        }
        if let Some(s) = v["signature"].as_str() {
            headers.insert("svc-signature".to_owned(), s.to_owned());
        }
        let body = v["body"].as_str().unwrap_or_default().as_bytes().to_vec();
        let now = v["now"].as_i64().expect("now");
        let outcome = |r: Result<WebhookEvent, SvcError>| match r {
            Ok(_) => "valid".to_owned(),
            Err(e) => e.code().unwrap_or("none").to_owned(),
        };
        assert_eq!(
            outcome(webhook.verify_at(headers.clone(), body.clone(), now)),
            v["expected"].as_str().unwrap_or_default(),
            "{name}"
        );
        assert_eq!(
            outcome(webhook.verify_ignoring_timestamp(headers, body)),
            v["ignoring_timestamp"].as_str().unwrap_or_default(),
            "{name}"
        );
    }
}

// ------------------------------------------------------------------ settings

#[test]
fn settings_diff_apply_merge_and_trees_through_json_strings() {
    let old = r#"{"a":{"b":1,"c":"x"},"d":[1,2]}"#;
    let new = r#"{"a":{"b":2,"c":"x"},"d":[1,2]}"#;
    let patch = settings_diff(old.into(), new.into()).expect("diff");
    assert_eq!(patch.changed, ["a/b"]);
    assert_eq!(patch.tree, r#"{"a":{"b":2}}"#);
    assert!(patch.removed.is_empty());
    assert_eq!(
        settings_apply(old.into(), patch.tree.clone().into()).expect("apply"),
        new
    );
    let theirs = r#"{"a":{"b":3,"c":"y"},"d":[1,2]}"#;
    let merged = settings_merge(old.into(), new.into(), theirs.into()).expect("merge");
    assert_eq!(merged.conflicts.len(), 1);
    assert_eq!(merged.conflicts[0].path, "a/b");
    assert_eq!(merged.conflicts[0].theirs.as_deref(), Some("3"));
    assert!(merged.tree.contains(r#""c":"y""#), "{}", merged.tree);

    let a = SettingsTree::from_json(old.into()).expect("tree");
    let b = SettingsTree::from_json(new.into()).expect("tree");
    assert!(a.same_shape(b.clone()));
    assert_eq!(a.leaf_count(), 3);
    assert_eq!(b.get("a/b".into()).expect("path").as_deref(), Some("2"));
    assert_eq!(b.get("a/zz".into()).expect("path"), None);
    assert_eq!(kind(b.get("a//b".into())).0, "invalid_input");
    let p = a.diff(b);
    assert_eq!(p.changed(), ["a/b"]);
    assert_eq!(p.to_json().expect("json"), r#"{"a":{"b":2}}"#);
    assert_eq!(p.to_write().expect("write"), r#"{"a":{"b":2}}"#);

    let removed = SettingsTree::from_json(r#"{"a":{"b":2}}"#.into()).expect("tree");
    let p = SettingsTree::from_json(old.into())
        .expect("tree")
        .diff(removed);
    assert_eq!(p.removed(), ["a/c", "d"]);
    let (name, e) = kind(p.to_write());
    assert_eq!(name, "invalid_input");
    assert_eq!(e.node_errors().len(), 2);
    assert_eq!(
        kind(settings_diff("{".into(), "{}".into())).0,
        "invalid_input"
    );
}

// ------------------------------------------------------------------ cloud and workflow

#[derive(Default)]
struct Recorder(Mutex<Vec<WorkflowProgress>>);

impl WorkflowListener for Recorder {
    fn on_progress(&self, progress: WorkflowProgress) {
        if let Ok(mut seen) = self.0.lock() {
            seen.push(progress);
        }
    }
}

fn sample_job(out: Option<String>) -> ProcessingJob {
    let dir = samples();
    ProcessingJob {
        inputs: vec![
            dir.join("rover.nmea").to_string_lossy().into_owned(),
            dir.join("imu.csv").to_string_lossy().into_owned(),
        ],
        processing_json: std::fs::read_to_string(dir.join("processing.json")).expect("config"),
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

    // The cloud operations see what the workflow did.
    let processing = block_on(client.get_processing(outcome.processing.id.clone())).expect("get");
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

#[test]
fn dropping_the_wait_cancels_the_workflow() {
    let rig = rig(Duration::from_secs(30));
    let client = CloudClient::create(config(&rig.info)).expect("client");
    let task = Workflow::new(client.clone())
        .start(sample_job(None), options(), None)
        .expect("start");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(async {
        // The coroutine waits until the processing runs, then is cancelled.
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while task.processing_id().is_none() {
            assert!(tokio::time::Instant::now() < deadline, "never started");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let waited = tokio::time::timeout(Duration::from_millis(200), task.wait()).await;
        assert!(waited.is_err(), "the processing takes 30 s");
    });
    let (name, e) = kind(block_on(task.wait()));
    assert_eq!(name, "canceled", "{e}");
    assert_eq!(e.kind(), svc_core::ErrorKind::Canceled);
    let processing_id = task.processing_id().expect("started");
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
    bad.api_secret = Secret::new("s3cr3t-xyz".into());
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
    assert_eq!(e.status(), Some(404));
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

// ------------------------------------------------------------------ unit

/// A ByteLink implemented in Rust over a TCP socket, as an app implements one over USB.
struct TcpLink {
    read: tokio::sync::Mutex<tokio::net::tcp::OwnedReadHalf>,
    write: tokio::sync::Mutex<tokio::net::tcp::OwnedWriteHalf>,
}

#[async_trait::async_trait]
impl ByteLink for TcpLink {
    async fn read(&self, max_bytes: u32) -> Result<Vec<u8>, LinkError> {
        use tokio::io::AsyncReadExt;
        let mut buffer = vec![0; max_bytes as usize];
        let n = self
            .read
            .lock()
            .await
            .read(&mut buffer)
            .await
            .map_err(|e| LinkError::Io {
                reason: e.to_string(),
            })?;
        buffer.truncate(n);
        Ok(buffer)
    }

    async fn write(&self, data: Vec<u8>) -> Result<(), LinkError> {
        use tokio::io::AsyncWriteExt;
        self.write
            .lock()
            .await
            .write_all(&data)
            .await
            .map_err(|e| LinkError::Io {
                reason: e.to_string(),
            })
    }
}

fn configure(unit: &InsUnit, label: &str) {
    block_on(unit.login(UserName::Setup, String::new())).expect("login");
    let info = block_on(unit.info()).expect("info");
    assert!(!info.serial_number.is_empty());
    let outcome = block_on(unit.write(format!(r#"{{"oem":{{"label":"{label}"}}}}"#).into(), false))
        .expect("write");
    assert!(!outcome.need_reboot);
    assert_eq!(
        block_on(unit.node("oem/label".into())).expect("node"),
        format!("\"{label}\"")
    );
    let tree: serde_json::Value =
        serde_json::from_str(&block_on(unit.settings()).expect("settings")).expect("json");
    assert_eq!(tree["oem"]["label"], label);
}

#[test]
fn a_unit_over_http_serial_tcp_and_a_byte_link() {
    let rig = rig(Duration::from_millis(200));
    let url = rig.info.device_url.clone().expect("device");
    let bridge = rig.info.device_serial_tcp.clone().expect("bridge");

    configure(&InsUnit::http(url.clone()).expect("http"), "over http");
    configure(
        &block_on(InsUnit::serial_tcp(bridge.clone(), None)).expect("tcp"),
        "over tcp",
    );

    // The link's socket lives on a runtime of its own, as an app's I/O would.
    let io = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let stream = io
        .block_on(tokio::net::TcpStream::connect(&bridge))
        .expect("connect");
    let (read, write) = stream.into_split();
    let link = Arc::new(TcpLink {
        read: tokio::sync::Mutex::new(read),
        write: tokio::sync::Mutex::new(write),
    });
    let _guard = io.enter();
    let unit = InsUnit::over_link(link, "test link".into(), None);
    assert_eq!(unit.link(), "test link");
    configure(&unit, "over a byte link");
    let tree = block_on(unit.export()).expect("export");
    assert!(tree.len() > 1000);
}

#[test]
fn unit_errors_carry_status_and_node_errors() {
    let rig = rig(Duration::from_millis(200));
    let url = rig.info.device_url.clone().expect("device");
    let a = InsUnit::http(url.clone()).expect("a");
    let b = InsUnit::http(url).expect("b");
    block_on(a.login(UserName::Setup, String::new())).expect("login a");
    block_on(b.login(UserName::Setup, String::new())).expect("login b");

    // 422: every invalid node, nothing applied.
    let patch = r#"{"output":{"comA":{"messages":{"imuShort":"10ms","noSuchMessage":"10ms"}},"comB":{"messages":{"ekfNav":"7ms"}}}}"#;
    let (name, e) = kind(block_on(a.write(patch.into(), false)));
    assert_eq!(name, "invalid_input", "{e}");
    assert_eq!(e.status(), Some(422));
    let mut paths: Vec<&str> = e.node_errors().iter().map(|n| n.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "output/comA/messages/noSuchMessage",
            "output/comB/messages/ekfNav"
        ]
    );

    // 409: the lock of another session.
    block_on(a.lock()).expect("lock");
    let (name, e) = kind(block_on(b.write(r#"{"oem":{"label":"b"}}"#.into(), false)));
    assert_eq!(name, "conflict", "{e}");
    assert_eq!(e.status(), Some(409));
    assert!(matches!(e, SvcError::Conflict { .. }));
    block_on(a.unlock()).expect("unlock");

    // 401: a wrong password.
    let c = InsUnit::http(rig.info.device_url.clone().expect("device")).expect("c");
    let (name, e) = kind(block_on(c.login(UserName::Factory, "p4ss-xyz".into())));
    assert_eq!(name, "authentication", "{e}");
    assert_eq!(e.status(), Some(401));
    assert!(!format!("{e:?}").contains("p4ss-xyz"), "{e:?}");

    // Refused before sending: JSON that is not JSON.
    assert_eq!(
        kind(block_on(a.write("{".into(), false))).0,
        "invalid_input"
    );
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
                status: Some(403),
                ..
            } => id.clone(),
            other => panic!("{other:?}"),
        };
        let found = block_on(client.get_container(container_id));
        assert_eq!(found.is_ok(), !cleanup, "cleanup {cleanup}: {e}");
    }
}
