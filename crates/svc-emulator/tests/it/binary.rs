//! The `svc-emulator` binary: one JSON line on stdout, serving, SIGTERM, bad flags.

use std::io::{BufRead as _, BufReader, Read as _};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{Resp, client, token};

const BIN: &str = env!("CARGO_BIN_EXE_svc-emulator");

/// A child process that is killed if the test ends while it still runs.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Polls the child every 20 ms until it exits (fails after `limit`).
async fn wait_exit(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "the process did not exit within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn binary_prints_one_json_line_serves_and_stops_on_sigterm() {
    // Its own temporary folder, to see that the emulator leaves nothing behind.
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let child = Command::new(BIN)
        .args([
            "--port",
            "0",
            "--processing-seconds",
            "0.5",
            "--device-password",
            "setup=secret",
        ])
        .env("TMPDIR", tmp.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut proc = Proc(child);
    let stdout = proc.0.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = tx.send(line);
        let mut rest = String::new();
        let _ = reader.read_to_string(&mut rest);
        let _ = tx.send(rest);
    });
    let (line, rx) =
        tokio::task::spawn_blocking(move || (rx.recv_timeout(Duration::from_secs(30)), rx))
            .await
            .unwrap();
    let line = line.expect("one line on stdout within 30 s");
    assert!(line.ends_with('\n'), "a whole line: {line:?}");
    let info: Value = serde_json::from_str(line.trim_end())
        .unwrap_or_else(|e| panic!("one JSON object ({e}): {line:?}"));
    assert!(info.is_object(), "{info}");
    for field in [
        "base_url",
        "auth_url",
        "notification_url",
        "storage_url",
        "organization_id",
        "api_key",
        "api_secret",
        "member_api_key",
        "member_api_secret",
    ] {
        assert!(
            info[field].as_str().is_some_and(|s| !s.is_empty()),
            "`{field}` in {info}"
        );
    }
    assert!(
        info["organization_id"]
            .as_str()
            .unwrap()
            .parse::<uuid::Uuid>()
            .is_ok()
    );

    let http = client();
    let s = |k: &str| info[k].as_str().unwrap().to_owned();
    let access = token(&http, &s("auth_url"), &s("api_key"), &s("api_secret")).await;
    let r = Resp::read(
        http.get(format!("{}/api/v1/info", s("base_url")))
            .bearer_auth(&access)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert!(r.ok()["version"].is_string(), "{}", r.text);
    let member = token(
        &http,
        &s("auth_url"),
        &s("member_api_key"),
        &s("member_api_secret"),
    )
    .await;
    let r = Resp::read(
        http.get(format!("{}/api/v1/info", s("base_url")))
            .bearer_auth(&member)
            .send()
            .await
            .unwrap(),
    )
    .await;
    r.err(403);

    // The unit side: its three addresses, and the initial password the flag set.
    let device_url = s("device_url");
    let serial_path = s("device_serial_path");
    assert!(
        std::path::Path::new(&serial_path).exists(),
        "the pty {serial_path} exists"
    );
    let serial_tcp: std::net::SocketAddr = s("device_serial_tcp")
        .parse()
        .expect("device_serial_tcp is HOST:PORT");
    assert!(serial_tcp.ip().is_loopback(), "{serial_tcp}");
    tokio::net::TcpStream::connect(serial_tcp)
        .await
        .expect("the serial bridge accepts a connection");
    let login = |password: &'static str| {
        http.post(format!("{device_url}/api/v1/user/login"))
            .json(&serde_json::json!({"user": "setup", "password": password}))
            .send()
    };
    let r = Resp::read(login("secret").await.unwrap()).await;
    assert!(
        r.ok()["token"].as_str().is_some_and(|t| !t.is_empty()),
        "{}",
        r.text
    );
    let r = Resp::read(login("wrong").await.unwrap()).await;
    assert_eq!(r.status.as_u16(), 401, "{}", r.text);

    let killed = Command::new("kill")
        .args(["-TERM", &proc.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = wait_exit(&mut proc.0, Duration::from_secs(10)).await;
    assert_eq!(
        status.code(),
        Some(0),
        "exit status after SIGTERM: {status:?}"
    );
    let rest = tokio::task::spawn_blocking(move || rx.recv_timeout(Duration::from_secs(5)))
        .await
        .unwrap();
    assert_eq!(rest.unwrap_or_default(), "", "nothing else on stdout");
    let left: Vec<_> = std::fs::read_dir(tmp.path())
        .expect("readable")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "the emulator left files behind: {left:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_flags_exit_non_zero_with_a_message() {
    for args in [
        &["--port", "0", "--fault-rate", "2"][..],
        &["--port", "0", "--no-such-flag"][..],
        &["--port", "0", "--upload-extra-field", "x-amz-meta-origin"][..],
        &["--port", "0", "--upload-extra-field", "file=x"][..],
        &[
            "--port",
            "0",
            "--upload-extra-field",
            "X-Amz-Security-Token=x",
        ][..],
        &["--port", "0", "--upload-extra-field", "x-ignore-note=x"][..],
    ] {
        let child = Command::new(BIN)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the binary starts");
        let mut proc = Proc(child);
        let status = wait_exit(&mut proc.0, Duration::from_secs(30)).await;
        assert!(!status.success(), "{args:?}: {status:?}");
        let mut stderr = String::new();
        proc.0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let mut stdout = String::new();
        proc.0
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        assert!(!stderr.trim().is_empty(), "{args:?}: a message on stderr");
        let flag = args[2].trim_start_matches('-');
        assert!(
            stderr.contains(flag),
            "{args:?}: stderr names the flag: {stderr}"
        );
        assert!(stdout.trim().is_empty(), "{args:?}: no JSON line: {stdout}");
    }
}

/// `--upload-extra-field NAME=VALUE` (repeatable; the value may hold `=`): the forms the
/// binary's service hands out end with these fields, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_extra_fields_from_the_command_line_reach_the_forms() {
    let child = Command::new(BIN)
        .args([
            "--port",
            "0",
            "--no-device",
            "--upload-extra-field",
            "x-amz-meta-origin=cli=1",
            "--upload-extra-field",
            "Content-Type=application/octet-stream",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary starts");
    let mut proc = Proc(child);
    let stdout = proc.0.stdout.take().unwrap();
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        line
    })
    .await
    .unwrap();
    let info: Value = serde_json::from_str(line.trim_end())
        .unwrap_or_else(|e| panic!("one JSON object ({e}): {line:?}"));
    let s = |k: &str| info[k].as_str().unwrap().to_owned();
    let http = client();
    let access = token(&http, &s("auth_url"), &s("api_key"), &s("api_secret")).await;
    let r = Resp::read(
        http.post(format!(
            "{}/api/v2/organizations/{}/containers",
            s("base_url"),
            s("organization_id")
        ))
        .bearer_auth(&access)
        .json(&serde_json::json!({
            "region": "eu-west-3",
            "files": [{"path": "a.nmea", "type": "input", "size": 1}],
        }))
        .send()
        .await
        .unwrap(),
    )
    .await;
    let fields: Vec<(String, String)> = r.ok()["files"][0]["uploadInfo"]["fields"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(
        fields.len(),
        crate::common::UPLOAD_FIELDS.len() + 2,
        "{fields:?}"
    );
    assert_eq!(
        fields[crate::common::UPLOAD_FIELDS.len()..],
        [
            ("x-amz-meta-origin".to_owned(), "cli=1".to_owned()),
            (
                "Content-Type".to_owned(),
                "application/octet-stream".to_owned()
            ),
        ]
    );
    let _ = Command::new("kill")
        .args(["-TERM", &proc.0.id().to_string()])
        .status();
    let status = wait_exit(&mut proc.0, Duration::from_secs(30)).await;
    assert!(status.success(), "{status:?}");
}
