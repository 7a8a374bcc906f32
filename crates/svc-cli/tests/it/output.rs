//! `svc … | head -1`: a command whose stdout is closed ends quietly, with exit code 0
//! and nothing on stderr (it panicked with "failed printing to stdout", exit 101).

use std::io::{BufRead, BufReader};
use std::time::Duration;

use crate::support::*;

/// Runs `svc ARGS` with its stdout a pipe closed before anything is written to it:
/// the first line it prints meets a broken pipe.
fn with_stdout_closed(args: &[&str]) -> Run {
    let mut child = command(args).spawn().expect("svc starts");
    drop(child.stdout.take());
    finish_without_stdout(child)
}

fn assert_quiet(run: &Run, what: &str) {
    assert_eq!(run.code, 0, "{what}: {run:#?}");
    assert!(run.stderr.is_empty(), "{what}: nothing on stderr: {run:#?}");
}

#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let unit = TestUnit::start(&[]);
    let url = unit.url();
    // device.rs: a whole tree, many lines.
    let run = with_stdout_closed(&["device", "--url", &url, "settings", "get", "--pretty"]);
    assert_quiet(&run, "settings get");

    // fleet.rs: the first unit's line (status would exit 1: the unit differs).
    let dir = tempfile::tempdir().unwrap();
    let units = dir.path().join("units.txt");
    std::fs::write(&units, format!("{url}\n")).unwrap();
    let wanted = dir.path().join("wanted.json");
    std::fs::write(
        &wanted,
        r#"{"output": {"comA": {"messages": {"imuShort": "10ms"}}}}"#,
    )
    .unwrap();
    let run = with_stdout_closed(&[
        "device",
        "fleet",
        "--units",
        units.to_str().unwrap(),
        "--json",
        "status",
        wanted.to_str().unwrap(),
    ]);
    assert_quiet(&run, "fleet status");

    // webhooks.rs: a verified event.
    let secret = "whsec_4b1d0c7a9e3f25688d1e6b0a3c5f7e92d4a6c8e0f2b4d6a8c0e2f4a6b8d0c2e4";
    let body = r#"{"id":"2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3","eventType":"cloud:processing-progress","payload":{"id":"6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90","status":"processing"}}"#;
    let path = dir.path().join("body.json");
    std::fs::write(&path, body).unwrap();
    let signature = svc_core::webhook::sign(
        &svc_core::WebhookSecret::new(secret),
        1_700_000_000,
        body.as_bytes(),
    );
    let args = [
        "webhooks",
        "verify",
        "--ignore-timestamp",
        "--secret",
        secret,
        "--timestamp",
        "1700000000",
        "--signature",
        &signature,
        path.to_str().unwrap(),
    ];
    assert_eq!(svc(&args).code, 0, "the delivery is valid");
    let run = with_stdout_closed(&args);
    assert_quiet(&run, "webhooks verify");
}

/// As `| head -1` does: the first line is read, then the pipe is closed while `svc` is
/// still printing.
#[test]
fn head_one_line() {
    let unit = TestUnit::start(&[]);
    let url = unit.url();
    let mut child = command(&["device", "--url", &url, "settings", "get", "--pretty"])
        .spawn()
        .expect("svc starts");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert_eq!(first.trim(), "{");
    drop(out);
    let run = finish_without_stdout(child);
    assert_quiet(&run, "settings get | head -1");
}

/// Waits for `svc` (its stdout already taken), reading its stderr.
fn finish_without_stdout(mut child: std::process::Child) -> Run {
    let mut err = child.stderr.take().unwrap();
    let stderr = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut err, &mut text);
        text
    });
    let status = wait(&mut child, Duration::from_secs(60)).expect("svc ends");
    Run {
        code: status.code().unwrap_or(-1),
        stdout: String::new(),
        stderr: stderr.join().unwrap(),
    }
}
