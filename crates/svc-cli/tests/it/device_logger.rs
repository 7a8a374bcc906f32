//! `svc device logger sessions | download | delete` against an emulated unit's FTP
//! server: listing, downloading into a folder, `--delete-after`, the FTP right and the
//! exit codes.

use std::time::Duration;

use serde_json::Value;
use svc_emulator::device::{DeviceConfig, DeviceEmulator};

use crate::support::{svc, svc_with};

/// A unit with one recorded session, on its own runtime.
struct LoggerUnit {
    dev: Option<DeviceEmulator>,
    runtime: tokio::runtime::Runtime,
}

impl LoggerUnit {
    fn start(passwords: &[(&str, &str)]) -> LoggerUnit {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let dev = runtime
            .block_on(DeviceEmulator::start(DeviceConfig {
                pty: false,
                passwords: passwords
                    .iter()
                    .map(|(u, p)| ((*u).to_owned(), (*p).to_owned()))
                    .collect(),
                ..DeviceConfig::default()
            }))
            .expect("the unit starts");
        let post = |path: &str| dev.handle("POST", path, "", b"").expect("answer").0;
        assert_eq!(post("/api/v1/dataLogger/start"), 200);
        std::thread::sleep(Duration::from_millis(200));
        assert_eq!(post("/api/v1/dataLogger/stop"), 200);
        LoggerUnit {
            dev: Some(dev),
            runtime,
        }
    }

    fn dev(&self) -> &DeviceEmulator {
        self.dev.as_ref().unwrap()
    }

    fn ftp(&self) -> String {
        self.dev().ftp_address().to_owned()
    }

    fn args<'a>(&'a self, ftp: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
        let mut all = vec!["device", "logger"];
        all.extend_from_slice(rest);
        all.extend_from_slice(&["--ftp", ftp]);
        all
    }
}

impl Drop for LoggerUnit {
    fn drop(&mut self) {
        if let Some(dev) = self.dev.take() {
            self.runtime.block_on(dev.shutdown());
        }
    }
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect()
}

#[test]
fn sessions_and_download_then_delete_after() {
    let unit = LoggerUnit::start(&[]);
    let ftp = unit.ftp();
    let run = svc(&unit.args(&ftp, &["sessions"]));
    assert_eq!(run.code, 0, "{run:#?}");
    let sessions = lines(&run.stdout);
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0]["session"], "session");
    let size = sessions[0]["size"].as_u64().expect("size");
    assert!(size > 0);
    assert_eq!(sessions[0]["files"][0]["name"], "session.001");
    // FTP alone cannot tell whether the logger writes it; with --url the status does.
    assert_eq!(sessions[0]["recording"], Value::Null);
    let url = unit.dev().url().to_owned();
    let mut with_url = unit.args(&ftp, &["sessions"]);
    with_url.extend_from_slice(&["--url", &url]);
    let run = svc(&with_url);
    assert_eq!(run.code, 0, "{run:#?}");
    assert_eq!(lines(&run.stdout)[0]["recording"], false);

    let out = tempfile::tempdir().unwrap();
    let out_path = out.path().to_str().unwrap();
    // The viewer (default user) downloads but cannot delete: the download stays.
    let run = svc(&unit.args(
        &ftp,
        &["download", "session", "--out", out_path, "--delete-after"],
    ));
    assert_eq!(run.code, 3, "{run:#?}");
    let file = out.path().join("session/session.001");
    assert_eq!(std::fs::metadata(&file).unwrap().len(), size);
    assert_eq!(unit.dev().logger_sessions().len(), 1);

    // One file of a session with --delete-after: that file only is deleted.
    let root = unit.dev().logger_root();
    std::fs::write(root.join("session/session.002"), b"\xff\x5a").unwrap();
    let one = tempfile::tempdir().unwrap();
    let args = unit.args(
        &ftp,
        &[
            "download",
            "session/session.002",
            "--out",
            one.path().to_str().unwrap(),
            "--delete-after",
            "--user",
            "operator",
        ],
    );
    let run = svc(&args);
    assert_eq!(run.code, 0, "{run:#?}");
    let left = unit.dev().logger_sessions();
    let names: Vec<&str> = left[0].1.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["session.001"]);

    // An operator downloads again and deletes once complete.
    let again = tempfile::tempdir().unwrap();
    let again_path = again.path().to_str().unwrap();
    let args = unit.args(
        &ftp,
        &[
            "download",
            "session",
            "--out",
            again_path,
            "--delete-after",
            "--user",
            "operator",
        ],
    );
    let run = svc(&args);
    assert_eq!(run.code, 0, "{run:#?}");
    let done: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    assert_eq!(done["bytes"].as_u64(), Some(size));
    assert_eq!(done["deleted"], true);
    assert_eq!(
        std::fs::read(again.path().join("session/session.001")).unwrap(),
        std::fs::read(&file).unwrap()
    );
    assert!(unit.dev().logger_sessions().is_empty());
    let run = svc(&unit.args(&ftp, &["sessions"]));
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stdout.trim().is_empty());
}

#[test]
fn delete_needs_the_right_and_a_password() {
    let unit = LoggerUnit::start(&[("operator", "op-S3cr3t")]);
    let ftp = unit.ftp();
    // Viewer: refused (exit 3).
    svc(&unit.args(&ftp, &["delete", "session"])).fails_with(3);
    // Operator with a wrong password: 530, exit 3.
    let mut args = unit.args(&ftp, &["delete", "session", "--user", "operator"]);
    svc_with(&args, &[("SVC_DEVICE_PASSWORD", "bad-S3cr3t")], None).fails_with(3);
    // Missing session: exit 7.
    svc(&unit.args(&ftp, &["download", "nope", "--out", "/tmp"])).fails_with(7);
    // Password from stdin.
    args.push("--password-stdin");
    let run = svc_with(&args, &[], Some("op-S3cr3t\n"));
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(unit.dev().logger_sessions().is_empty());
    // Nobody listens: exit 6; without --ftp nor --url: usage (2).
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().to_string()
    };
    svc(&unit.args(&closed, &["sessions"])).fails_with(6);
    svc(&["device", "logger", "sessions"]).fails_with(2);
}
