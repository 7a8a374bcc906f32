//! The tracing audit: everything svc-core logs at TRACE level while it runs a whole
//! workflow (upload, processing followed by webhook events, download), verifies webhook
//! deliveries, uploads to a pre-signed form, retries through injected faults, and holds
//! unit sessions over HTTP and over the serial bridge (logins with passwords, password
//! changes, settings with the NTRIP caster's password, lock, reboot) is captured, and
//! must
//!
//! - show every area (cloud operations and requests, tokens, retries, transfers and
//!   their progress, workflow steps, webhooks, unit operations, serial link events);
//! - hold none of the secrets met on the way: the API secrets, the access token, the
//!   unit tokens and passwords, the webhook secrets, the pre-signed signatures,
//!   credentials and policies, the NTRIP password — nor anything shaped like one (a
//!   run of 32 or more hex digits, the `svc_at_` / `svc_secret_` / `whsec_` prefixes,
//!   an `X-Amz-Signature` parameter).
//!
//! The subscriber is the thread's default (`set_default`) and `#[tokio::test]` runs a
//! current-thread runtime, so every task spawned here (workflow, transfers, the
//! webhook listener, the in-process emulator) runs on this thread and is captured,
//! while the tests running beside it in other threads are not.

use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::{client_for, fast_retry};
use ins_device_api::enums::UserName;
use ins_device_api::{ClientInfo as _, Password};
use serde_json::{Value, json};
use svc_core::WebhookSecret;
use svc_core::cloud::{
    ContainerFileType, ContainerRegion, CreateContainerFile, CreateContainerRequest,
    CreateWebhookEndpointRequest, EventType, Metadata, ProcessingStatus,
};
use svc_core::transfer::{TransferOptions, Transfers, UploadJob};
use svc_core::unit::Unit;
use svc_core::unit::serial_link::{DEFAULT_INTER_BYTE_TIMEOUT, SerialOptions};
use svc_core::webhook::{Webhook, sign, unix_now};
use svc_core::workflow::{ProcessingJob, WebhookListener, Workflow, WorkflowOptions};
use svc_emulator::device::DeviceConfig;
use svc_emulator::{Emulator, EmulatorConfig, FaultConfig};
use tracing_subscriber::fmt::format::FmtSpan;

/// Passwords of the unit's users in this test.
const SETUP_PASSWORD: &str = "pw-setup-Zq81mX";
const SETUP_NEW_PASSWORD: &str = "pw-setup-new-Kv27dR";
const OPERATOR_PASSWORD: &str = "pw-operator-Hn45sT";
const FACTORY_PASSWORD: &str = "pw-factory-Wc93pL";
/// The NTRIP caster's passwords written to the unit's settings.
const NTRIP_PASSWORD: &str = "ntrip-caster-Pq62vB";
const NTRIP_PASSWORD_SERIAL: &str = "ntrip-caster-serial-Jd37yF";

/// Everything the subscriber writes.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

impl Write for Capture {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The secrets met during the test, each with what it is (for the failure message).
#[derive(Default)]
struct Secrets(Vec<(String, String)>);

impl Secrets {
    fn add(&mut self, what: &str, value: impl Into<String>) {
        let value = value.into();
        assert!(
            value.len() >= 6,
            "{what} is too short to be searched for: {value:?}"
        );
        self.0.push((what.to_owned(), value));
    }

    /// The value of each `X-Amz-*` secret parameter of a pre-signed address.
    fn add_presigned(&mut self, what: &str, address: &str) {
        let url = reqwest::Url::parse(address).unwrap();
        let mut found = false;
        for (key, value) in url.query_pairs() {
            if ["X-Amz-Signature", "X-Amz-Credential"].contains(&key.as_ref()) {
                self.add(&format!("{what} {key}"), value.into_owned());
                found |= key == "X-Amz-Signature";
            }
        }
        assert!(found, "{what} is a pre-signed address: {address}");
    }
}

fn samples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

fn sample_job(output_folder: PathBuf) -> ProcessingJob {
    let text = std::fs::read_to_string(samples().join("processing.json")).unwrap();
    let config: Value = serde_json::from_str(&text).unwrap();
    let mut job = ProcessingJob::new(
        vec![samples().join("rover.nmea"), samples().join("imu.csv")],
        config.as_object().cloned().unwrap(),
    );
    job.name = Some("tracing audit".to_owned());
    job.metadata = Metadata::from_iter([("project".to_owned(), "audit".to_owned())]);
    job.region = ContainerRegion::EuWest3;
    job.output_folder = Some(output_folder);
    job
}

/// The unit's session token, read from the generated client's state.
fn unit_token(unit: &Unit) -> String {
    unit.client()
        .inner()
        .token()
        .expect("logged in")
        .expose_secret()
        .to_owned()
}

/// Whether `text` holds a run of at least 32 hex digits (a token, a signature, a
/// secret's hex part); identifiers are hyphenated UUIDs, whose longest run is 12.
fn long_hex_run(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut start = 0;
    for (i, b) in bytes.iter().enumerate() {
        if !b.is_ascii_hexdigit() {
            if i - start >= 32 {
                return Some(&text[start..i]);
            }
            start = i + 1;
        }
    }
    (bytes.len() - start >= 32).then(|| &text[start..])
}

#[tokio::test]
async fn no_secret_reaches_the_logs_at_trace_level() {
    let capture = Capture::default();
    let writer = capture.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_ansi(false)
        .with_span_events(FmtSpan::NEW | FmtSpan::CLOSE)
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let mut secrets = Secrets::default();

    let emulator = Emulator::start(EmulatorConfig {
        processing_time: Duration::from_millis(800),
        webhook_retry_base: Duration::from_millis(100),
        device: Some(DeviceConfig {
            passwords: [("setup".to_owned(), SETUP_PASSWORD.to_owned())].into(),
            factory_password: FACTORY_PASSWORD.to_owned(),
            reboot_time: Duration::from_millis(300),
            pty: false,
            ..DeviceConfig::default()
        }),
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    let info = emulator.info().clone();
    secrets.add("the API secret", info.api_secret.clone());
    for org in &info.organizations {
        secrets.add("an organization's API secret", org.api_secret.clone());
        secrets.add("a member's API secret", org.member_api_secret.clone());
    }
    secrets.add("the factory password", FACTORY_PASSWORD);
    let client = client_for(&info);

    // ---- the whole workflow, followed by webhook events --------------------------
    let listener = WebhookListener::start().await.unwrap();
    let endpoint = client
        .create_webhook_endpoint(CreateWebhookEndpointRequest {
            url: listener.url().to_owned(),
            enabled_event_types: vec![
                EventType::CloudProcessingProgress,
                EventType::CloudProcessingEnded,
                EventType::CloudProcessingError,
            ],
            metadata: None,
        })
        .await
        .unwrap();
    let secret = endpoint.secret.clone().unwrap();
    secrets.add("the webhook secret", secret.expose_secret());
    listener.set_webhook(Webhook::new(secret));

    let out = tempfile::tempdir().unwrap();
    let options = WorkflowOptions {
        transfer: TransferOptions {
            retry: fast_retry(),
            ..TransferOptions::default()
        },
        events: Some(listener.events()),
        ..WorkflowOptions::default()
    };
    let outcome = Workflow::new(client.clone())
        .run(sample_job(out.path().to_path_buf()), options)
        .await
        .unwrap();
    assert_eq!(outcome.processing.status, ProcessingStatus::Processed);
    assert!(!outcome.downloaded.is_empty());
    for output in &outcome.outputs {
        secrets.add_presigned("a download address", &output.url);
    }
    let token = client.access_token().await.unwrap();
    secrets.add("the access token", token.expose_secret());

    // ---- an upload to a pre-signed form, outside the workflow --------------------
    let local = out.path().join("extra.nmea");
    std::fs::write(
        &local,
        b"$GPGGA,092750.000,5321.6802,N,00630.3372,W,1,8,1.03,61.7,M,55.2,M,,*76\n",
    )
    .unwrap();
    let size = std::fs::metadata(&local).unwrap().len();
    let container = client
        .create_container(CreateContainerRequest {
            region: ContainerRegion::EuWest3,
            metadata: None,
            files: vec![CreateContainerFile {
                path: "extra/rover.nmea".to_owned(),
                type_: ContainerFileType::Input,
                size: i64::try_from(size).unwrap(),
                metadata: None,
            }],
        })
        .await
        .unwrap();
    let form = container.files[0]
        .upload_info
        .clone()
        .expect("a pending file has its form");
    for (field, value) in &form.fields {
        if [
            "X-Amz-Signature",
            "X-Amz-Credential",
            "X-Amz-Security-Token",
            "Policy",
        ]
        .contains(&field.as_str())
        {
            secrets.add(&format!("the upload form's {field}"), value.clone());
        }
    }
    let jobs =
        UploadJob::for_container(&container, [("extra/rover.nmea".to_owned(), local)]).unwrap();
    Transfers::with_options(TransferOptions {
        retry: fast_retry(),
        ..TransferOptions::default()
    })
    .unwrap()
    .upload(jobs)
    .wait()
    .await
    .unwrap();
    client.delete_container(container.id).await.unwrap();
    client.delete_webhook_endpoint(endpoint.id).await.unwrap();

    // ---- webhook verification -----------------------------------------------------
    let now = unix_now();
    let body = crate::PROGRESS_BODY.as_bytes();
    for secret in [crate::SECRET, crate::OTHER_SECRET] {
        secrets.add("a test webhook secret", secret);
    }
    let secret = WebhookSecret::new(crate::SECRET);
    let signature = sign(&secret, now, body);
    secrets.add("a webhook signature", signature.clone());
    let webhook = Webhook::new(secret);
    let timestamp = now.to_string();
    webhook
        .verify_parts(Some(&timestamp), Some(&signature), body, now)
        .unwrap();
    let other = sign(&WebhookSecret::new(crate::OTHER_SECRET), now, body);
    secrets.add("another webhook signature", other.clone());
    webhook
        .verify_parts(Some(&timestamp), Some(&other), body, now)
        .unwrap_err();
    webhook
        .verify_parts(Some(&timestamp), Some(&signature), body, now + 3600)
        .unwrap_err();

    // ---- retries through injected faults -----------------------------------------
    let faulty = Emulator::start(EmulatorConfig {
        device: None,
        faults: FaultConfig {
            rate: 0.4,
            delays: false,
            ..FaultConfig::default()
        },
        ..EmulatorConfig::default()
    })
    .await
    .unwrap();
    let faulty_info = faulty.info().clone();
    for org in &faulty_info.organizations {
        secrets.add("an organization's API secret", org.api_secret.clone());
        secrets.add("a member's API secret", org.member_api_secret.clone());
    }
    let faulty_client = client_for(&faulty_info);
    for _ in 0..20 {
        let _ = faulty_client.server_info().await;
        let _ = faulty_client.list_containers_all().await;
        if capture
            .text()
            .contains("retrying after a transient failure")
        {
            break;
        }
    }
    if let Ok(token) = faulty_client.access_token().await {
        secrets.add("an access token", token.expose_secret());
    }

    // ---- a unit session over HTTP --------------------------------------------------
    secrets.add("the setup password", SETUP_PASSWORD);
    secrets.add("the new setup password", SETUP_NEW_PASSWORD);
    secrets.add("the operator password", OPERATOR_PASSWORD);
    secrets.add("the NTRIP password", NTRIP_PASSWORD);
    secrets.add(
        "the NTRIP password written over serial",
        NTRIP_PASSWORD_SERIAL,
    );
    let device_url = info.device_url.clone().unwrap();
    let unit = Unit::http(&device_url).unwrap();
    unit.info().await.unwrap();
    unit.login(UserName::Setup, Password::new(SETUP_PASSWORD))
        .await
        .unwrap();
    secrets.add("a unit token", unit_token(&unit));
    unit.change_password(None, Password::new(SETUP_NEW_PASSWORD))
        .await
        .unwrap();
    unit.change_password(Some(UserName::Operator), Password::new(OPERATOR_PASSWORD))
        .await
        .unwrap();
    unit.lock().await.unwrap();
    unit.write(
        &json!({"network": {"ntrip": {
            "hostname": "caster.example", "authEnabled": true,
            "username": "rover", "password": NTRIP_PASSWORD
        }}}),
        false,
    )
    .await
    .unwrap();
    assert_eq!(
        unit.node("network/ntrip/password").await.unwrap(),
        json!(NTRIP_PASSWORD)
    );
    let tree = unit.settings().await.unwrap();
    assert_eq!(tree["network"]["ntrip"]["password"], json!(NTRIP_PASSWORD));
    let report = unit
        .apply_wanted(
            &json!({"network": {"ntrip": {"password": format!("{NTRIP_PASSWORD}-2")}}}),
            Default::default(),
        )
        .await
        .unwrap();
    assert_eq!(report.changed, vec!["network/ntrip/password".to_owned()]);
    secrets.add("the NTRIP password applied", format!("{NTRIP_PASSWORD}-2"));
    unit.write_node("network/ntrip/password", &json!(NTRIP_PASSWORD), false)
        .await
        .unwrap();
    unit.export().await.unwrap();
    unit.unlock().await.unwrap();
    // A refused login (the old password), then the session's own re-login after a reboot.
    let stale = Unit::http(&device_url).unwrap();
    stale
        .login(UserName::Setup, Password::new(SETUP_PASSWORD))
        .await
        .unwrap_err();
    unit.reboot().await.unwrap();
    unit.wait_until_back(Duration::from_secs(20)).await.unwrap();
    secrets.add("the unit token after the reboot", unit_token(&unit));
    let operator = Unit::http(&device_url).unwrap();
    operator
        .login(UserName::Operator, Password::new(OPERATOR_PASSWORD))
        .await
        .unwrap();
    secrets.add("the operator's unit token", unit_token(&operator));
    operator.settings_delta().await.unwrap();
    operator.logout().await.unwrap();

    // ---- the same over the serial bridge ------------------------------------------
    let serial = Unit::serial_tcp_with(
        &info.device_serial_tcp.clone().unwrap(),
        SerialOptions {
            answer_timeout: Duration::from_secs(5),
            get_attempts: 2,
            inter_byte_timeout: DEFAULT_INTER_BYTE_TIMEOUT,
        },
    )
    .await
    .unwrap();
    serial
        .login(UserName::Setup, Password::new(SETUP_NEW_PASSWORD))
        .await
        .unwrap();
    secrets.add("the serial session's unit token", unit_token(&serial));
    assert_eq!(
        serial.node("network/ntrip/password").await.unwrap(),
        json!(NTRIP_PASSWORD)
    );
    serial
        .write_node(
            "network/ntrip/password",
            &json!(NTRIP_PASSWORD_SERIAL),
            false,
        )
        .await
        .unwrap();
    serial.settings().await.unwrap();
    serial
        .change_password(None, Password::new(SETUP_PASSWORD))
        .await
        .unwrap();
    serial.logout().await.unwrap();
    unit.logout().await.unwrap();

    drop(listener);
    faulty.shutdown().await;
    emulator.shutdown().await;

    // ---- the audit -------------------------------------------------------------------
    let logs = capture.text();
    let lines = logs.lines().count();
    assert!(lines > 200, "only {lines} lines were captured:\n{logs}");
    let expected = [
        // cloud operations and their HTTP requests
        "cloud{op=\"createContainer\"",
        "cloud{op=\"listProcessingOutputs\" resource_id=",
        "http{op=\"startProcessing\" attempt=1 status=",
        "operation succeeded",
        // tokens
        "token{reason=",
        "access token obtained",
        // retries, with their reason and delay
        "retrying after a transient failure",
        "delay_ms=",
        // transfers
        "upload{files=2",
        "download{files=",
        "storage answered",
        "transfer_done_bytes=",
        "file transferred",
        "transfer ended",
        // workflow steps
        "workflow{kind=\"run\"",
        "step: creating the container",
        "step: uploading the files",
        "step: starting the processing",
        "step: following the processing",
        "webhook event of the processing",
        "processing ended",
        "step: downloading the outputs",
        "workflow ended",
        // webhooks
        "webhook delivery verified",
        "webhook delivery refused",
        "code=\"bad_signature\"",
        "code=\"too_old\"",
        // unit operations
        "unit_login{user=setup",
        "logged in",
        "login refused or failed",
        "password changed",
        "settings locked",
        "unit{op=\"updateSettings\"",
        "settings node written",
        "node=network/ntrip/password",
        "wanted settings applied",
        "unit rebooting",
        "the unit is back",
        "logged out",
        // serial link
        "connected to the unit's serial bridge",
        "serial{link=serial bridge",
        "frames sent",
        "bytes received",
        "message received",
        "answer received",
    ];
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|e| !logs.contains(e))
        .collect();
    assert!(
        missing.is_empty(),
        "missing from the logs: {missing:?}\n{logs}"
    );

    let lower = logs.to_lowercase();
    let mut leaks = Vec::new();
    for (what, value) in &secrets.0 {
        if logs.contains(value.as_str()) {
            leaks.push(format!("{what} ({value})"));
        }
    }
    for shape in [
        "svc_at_",
        "svc_secret_",
        "whsec_",
        "x-amz-signature",
        "x-amz-credential",
        "auth=",
    ] {
        if lower.contains(shape) {
            leaks.push(format!("something shaped like a secret: {shape}"));
        }
    }
    if let Some(run) = long_hex_run(&logs) {
        leaks.push(format!("a run of {} hex digits: {run}", run.len()));
    }
    assert!(leaks.is_empty(), "leaked into the logs: {leaks:#?}\n{logs}");
}

#[test]
fn the_hex_run_check_finds_tokens_and_spares_identifiers() {
    assert_eq!(
        long_hex_run("id=6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90"),
        None
    );
    let token = "0123456789abcdef0123456789abcdef";
    assert_eq!(long_hex_run(&format!("x {token} y")), Some(token));
    assert_eq!(long_hex_run(&format!("x={token}")), Some(token));
}
