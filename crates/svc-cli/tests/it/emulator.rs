//! `svc emulator`: one JSON line on stdout, serves the unit, ends on SIGTERM with 0.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::support::{command, svc, wait};

#[test]
fn emulator_prints_one_line_and_stops_on_sigterm() {
    let mut child = command(&["emulator", "--port", "0", "--no-device-pty"])
        .stderr(Stdio::null())
        .spawn()
        .expect("svc emulator starts");
    let stdout = child.stdout.take().unwrap();
    // Read the first line on a thread, so that a silent emulator fails the test in time.
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().and_then(Result::ok);
        let _ = tx.send(first);
        // The rest of stdout (nothing is expected).
        lines.map_while(Result::ok).collect::<Vec<String>>()
    });
    let line = match rx.recv_timeout(Duration::from_secs(30)) {
        Ok(Some(line)) => line,
        other => {
            let _ = child.kill();
            panic!("no JSON line from svc emulator: {other:?}");
        }
    };
    let info: Value = serde_json::from_str(&line).expect("one JSON object");
    let url = info["device_url"].as_str().expect("device_url").to_owned();
    let serial_tcp = info["device_serial_tcp"]
        .as_str()
        .expect("device_serial_tcp")
        .to_owned();
    assert!(url.starts_with("http://"), "{info}");
    assert!(
        info["device_serial_path"].is_null(),
        "--no-device-pty: {info}"
    );

    // The unit it serves answers over both links.
    let over_http = svc(&["device", "--url", &url, "info"]).json();
    let over_tcp = svc(&["device", "--serial-tcp", &serial_tcp, "info"]).json();
    assert_eq!(over_http, over_tcp);
    assert!(over_http["productCode"].is_string());

    let pid = child.id().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let status = wait(&mut child, Duration::from_secs(20)).expect("svc emulator ends on SIGTERM");
    assert_eq!(status.code(), Some(0), "{status:?}");
    let rest = reader.join().unwrap();
    assert!(rest.is_empty(), "only one line on stdout: {rest:?}");
}
