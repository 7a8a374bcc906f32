//! svc-core's logs reach the app's `LogSink`, without a secret. The sink is
//! process-wide: this test runs in a child process.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::{config, in_child, rig};
use futures::executor::block_on;
use svc_ffi::*;

#[derive(Default)]
struct Collect(Mutex<Vec<LogRecord>>);

impl LogSink for Collect {
    fn log(&self, record: LogRecord) -> Result<(), ListenerError> {
        self.0
            .lock()
            .map_err(|_| ListenerError::Failed {
                reason: "poisoned".into(),
            })?
            .push(record);
        Ok(())
    }
}

#[test]
fn child_logs_of_a_workflow_and_a_unit_session_reach_the_sink_without_secrets() {
    if std::env::var_os("SVC_FFI_CHILD").is_none() {
        return;
    }
    let sink = Arc::new(Collect::default());
    set_log_sink(Some(sink.clone()), LogLevel::Trace).expect("sink");
    let rig = rig(Duration::from_millis(200));
    let client = CloudClient::create(config(&rig.info)).expect("client");
    let out = tempfile::tempdir().expect("out");
    let outcome = block_on(
        Workflow::new(client.clone())
            .start(
                super::workflow::sample_job(Some(out.path().to_string_lossy().into_owned())),
                super::options(),
                None,
            )
            .expect("start")
            .wait(),
    )
    .expect("workflow");
    let unit = InsUnit::http(rig.info.device_url.clone().expect("device")).expect("unit");
    block_on(unit.login(UserName::Setup, String::new())).expect("login");
    block_on(unit.change_password(Some(UserName::Operator), "op-pa55word".into()))
        .expect("password");
    let _ = block_on(
        InsUnit::http(unit.link())
            .expect("unit")
            .login(UserName::Operator, "wr0ng-pa55".into()),
    );
    block_on(unit.write(r#"{"oem":{"label":"logged"}}"#.into(), false)).expect("write");
    let token = block_on(client.access_token())
        .expect("token")
        .token
        .reveal();

    let records = sink.0.lock().expect("records").clone();
    assert!(records.len() > 20, "{records:?}");
    assert!(records.iter().all(|r| r.target.starts_with("svc_")));
    assert!(
        records
            .iter()
            .any(|r| r.level == LogLevel::Info && r.message.contains("access token obtained")),
        "{records:#?}"
    );
    let mut secrets = vec![
        rig.info.api_secret.clone(),
        token,
        "op-pa55word".to_owned(),
        "wr0ng-pa55".to_owned(),
    ];
    for output in &outcome.outputs {
        let url = output.url.reveal();
        if let Some((_, query)) = url.split_once('?') {
            secrets.push(query.to_owned());
        }
    }
    for record in &records {
        for secret in &secrets {
            assert!(!record.message.contains(secret.as_str()), "{record:?}");
        }
    }

    // No sink: nothing more.
    set_log_sink(None, LogLevel::Trace).expect("no sink");
    let before = sink.0.lock().expect("records").len();
    block_on(unit.info()).expect("info");
    assert_eq!(sink.0.lock().expect("records").len(), before);
}

#[test]
fn logs_of_a_workflow_and_a_unit_session_reach_the_sink_without_secrets() {
    assert!(in_child(
        "logs::child_logs_of_a_workflow_and_a_unit_session_reach_the_sink_without_secrets",
        &[]
    ));
}
