//! The binding as a foreign caller sees it: every constructor refuses bad input with an
//! error (never a panic), `async` methods run from an executor that is not Tokio, and
//! the main scenarios run against the in-process emulator.
//!
//! One binary; the helpers and the constructors' tests here (tests that run as a child
//! process, to change the environment, are named by their path in this file), the
//! other areas in a file each.

mod cancel;
mod config;
mod logs;
mod pin;
mod settings;
mod tokens;
#[cfg(target_os = "linux")]
mod transfers;
mod unit;
mod webhooks;
mod workflow;

use std::collections::HashMap;
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
        auth_url: Some(info.auth_url.clone()),
        notification_url: info.notification_url.clone(),
        api_key: Some(info.api_key.clone()),
        api_secret: Some(Secret::new(info.api_secret.clone())),
        organization_id: info.organization_id.to_string(),
        token_provider: None,
        request_timeout: None,
        page_size: Count(100),
        max_attempts: Count(5),
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
        auth_url: Some("https://auth.example.com".into()),
        notification_url: "https://notify.example.com".into(),
        api_key: Some("key".into()),
        api_secret: Some(Secret::new("secret".into())),
        organization_id: "5b1f4b52-43a4-4c5e-9a7b-6f1d1c3c0b11".into(),
        token_provider: None,
        request_timeout: Some(Duration::from_secs(1)),
        page_size: Count(10),
        max_attempts: Count(1),
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
                auth_url: Some("ftp://x".into()),
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
                api_key: Some(" ".into()),
                ..good.clone()
            },
        ),
        (
            "api_secret",
            CloudConfig {
                api_secret: Some(Secret::new(String::new())),
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
                request_timeout: Some(Duration::ZERO),
                ..good.clone()
            },
        ),
        (
            "page_size",
            CloudConfig {
                page_size: Count(0),
                ..good.clone()
            },
        ),
        (
            "page_size",
            CloudConfig {
                page_size: Count(101),
                ..good.clone()
            },
        ),
        (
            "authUrl",
            CloudConfig {
                auth_url: None,
                ..good.clone()
            },
        ),
        (
            "apiSecret",
            CloudConfig {
                api_secret: None,
                ..good.clone()
            },
        ),
        (
            "not both",
            CloudConfig {
                token_provider: Some(std::sync::Arc::new(tokens::Refusing)),
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
        assert_eq!(e.code().as_deref(), Some("no_secret"));
    }
    assert!(Webhook::new(vec!["whsec_x".into()], Some(Duration::from_secs(10))).is_ok());

    for url in [
        "ftp://unit",
        "not a url",
        "https://unit.local",
        "http://unit.local/api/v1/settings/default#",
        "http://unit.local/api/v1/reboot?",
    ] {
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
        processing_config: ProcessingConfig::Json { json: json.into() },
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
    let (name, _) = kind(block_on(client.list_containers_page(Count(-1), Count(10))));
    assert_eq!(name, "invalid_input");
}

fn options() -> WorkflowOptions {
    WorkflowOptions {
        wait_for_free_organization: false,
        max_wait: Some(Duration::from_secs(60)),
        follow: true,
        follow_timeout: Some(Duration::from_secs(120)),
        poll_initial: Some(Duration::from_millis(50)),
        poll_max: Some(Duration::from_millis(300)),
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
