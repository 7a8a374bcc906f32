//! `svc device stream`: the unit's output logs as JSON Lines or a session file, from the
//! serial bridge, from UDP and from a growing file; `--messages`, `--count`,
//! `--seconds`, signals and exit codes.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_emulator::device::DeviceConfig;

use crate::support::{TestUnit, command, svc};

/// A unit whose Port A streams ekfNav every 10 ms and utcTime every 100 ms (and nothing
/// else).
fn streaming_unit() -> TestUnit {
    let unit = TestUnit::with(DeviceConfig {
        pty: false,
        ..DeviceConfig::default()
    });
    let mut messages = serde_json::Map::new();
    for name in [
        "status", "imuData", "imuShort", "ekfEuler", "ekfQuat", "gps1Pos",
    ] {
        messages.insert(name.to_owned(), json!("off"));
    }
    messages.insert("ekfNav".to_owned(), json!("10ms"));
    messages.insert("utcTime".to_owned(), json!("100ms"));
    let (status, body) = unit.raw_post(
        "/api/v1/settings",
        &json!({"output": {"comA": {"messages": messages}}}),
    );
    assert_eq!(status, 200, "{body}");
    unit
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

#[test]
fn json_lines_of_the_messages_asked_for() {
    let unit = streaming_unit();
    let bridge = unit.serial_tcp();
    let run = svc(&[
        "device",
        "--serial-tcp",
        &bridge,
        "stream",
        "--messages",
        "ekfNav",
        "--count",
        "25",
    ]);
    run.ok();
    let records = lines(&run.stdout);
    assert_eq!(records.len(), 25);
    let mut last = None;
    for record in &records {
        assert_eq!(record["message"], "ekfNav", "{record}");
        let t = record["timestamp"].as_u64().expect("timestamp");
        if let Some(before) = last {
            assert!(t > before, "in order");
        }
        last = Some(t);
        assert!(record["latitude"].as_f64().is_some(), "{record}");
    }
    // Both messages for a while, without --messages.
    let run = svc(&[
        "device",
        "--serial-tcp",
        &bridge,
        "stream",
        "--seconds",
        "0.6",
    ]);
    run.ok();
    let records = lines(&run.stdout);
    let utc = records.iter().filter(|r| r["message"] == "utcTime").count();
    let nav = records.iter().filter(|r| r["message"] == "ekfNav").count();
    assert!((3..=8).contains(&utc), "{utc} utcTime");
    assert!((35..=70).contains(&nav), "{nav} ekfNav");
}

/// `--record` writes the raw frames to a new file, which `svc logs inspect` reads and
/// `--follow` streams back; an existing file is never overwritten.
#[test]
fn record_then_follow_the_session_file() {
    let unit = streaming_unit();
    let bridge = unit.serial_tcp();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("live.bin");
    let file_arg = file.to_str().unwrap();
    let run = svc(&[
        "device",
        "--serial-tcp",
        &bridge,
        "stream",
        "--record",
        file_arg,
        "--count",
        "40",
    ]);
    run.ok();
    assert!(run.stderr.contains("40 frames written"), "{}", run.stderr);
    let bytes = std::fs::read(&file).unwrap();
    let mut reader = svc_logs::LogReader::new(bytes.as_slice());
    let mut frames = 0;
    while reader.next_record().unwrap().is_some() {
        frames += 1;
    }
    assert_eq!(frames, 40);
    assert_eq!(reader.stats().skipped_bytes, 0, "whole frames only");

    let run = svc(&["device", "stream", "--follow", file_arg, "--count", "40"]);
    run.ok();
    assert_eq!(lines(&run.stdout).len(), 40);

    let again = svc(&[
        "device",
        "--serial-tcp",
        &bridge,
        "stream",
        "--record",
        file_arg,
        "--count",
        "1",
    ]);
    again.fails_with(2);
    assert_eq!(std::fs::read(&file).unwrap(), bytes, "untouched");
}

/// SIGINT ends the stream with 130 once what was received is written; SIGTERM with 143.
#[cfg(unix)]
#[test]
fn a_signal_ends_the_stream_with_its_code() {
    let unit = streaming_unit();
    let bridge = unit.serial_tcp();
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("live.bin");
        let mut child = command(&[
            "device",
            "--serial-tcp",
            &bridge,
            "stream",
            "--record",
            file.to_str().unwrap(),
        ])
        .spawn()
        .expect("svc starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::fs::metadata(&file).map_or(0, |m| m.len()) < 2000 {
            assert!(Instant::now() < deadline, "nothing recorded");
            assert!(child.try_wait().unwrap().is_none(), "svc ended first");
            std::thread::sleep(Duration::from_millis(20));
        }
        let sent = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = crate::support::wait(&mut child, Duration::from_secs(20))
            .expect("svc ends after the signal");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {stderr}");
        assert!(stderr.contains("interrupted"), "{stderr}");
        assert!(stderr.contains("frames written"), "{stderr}");
        // Whole frames, flushed.
        let bytes = std::fs::read(&file).unwrap();
        let mut reader = svc_logs::LogReader::new(bytes.as_slice());
        while reader.next_record().unwrap().is_some() {}
        assert_eq!(reader.stats().truncated, 0, "{signal}");
        assert_eq!(reader.stats().skipped_bytes, 0, "{signal}");
    }
}

#[test]
fn usage_errors() {
    let run = svc(&[
        "device",
        "stream",
        "--udp",
        "127.0.0.1:0",
        "--messages",
        "ekfNavv",
    ]);
    run.fails_with(2);
    assert!(run.stderr.contains("ekfNavv"), "{}", run.stderr);
    svc(&["device", "stream"]).fails_with(2);
    // Over HTTP the unit streams nothing to the session: an invalid request.
    let unit = streaming_unit();
    let run = svc(&["device", "--url", &unit.url(), "stream", "--count", "1"]);
    run.fails_with(5);
    assert!(run.stderr.contains("UDP"), "{}", run.stderr);
}

/// `wait-ready`: a JSON report once the unit is ready; exit 1 with what was missing
/// when the time runs out; `--fix` checked.
#[test]
fn wait_ready_reports_and_exits_by_readiness() {
    let unit = TestUnit::with(DeviceConfig {
        pty: false,
        startup: Duration::from_millis(1200),
        ..DeviceConfig::default()
    });
    let (status, body) = unit.raw_post(
        "/api/v1/settings",
        &json!({"output": {"comA": {"messages": {"gps1Pos": "100ms", "ekfNav": "50ms", "utcTime": "100ms"}}}}),
    );
    assert_eq!(status, 200, "{body}");
    let bridge = unit.serial_tcp();
    let run = svc(&[
        "device",
        "--serial-tcp",
        &bridge,
        "wait-ready",
        "--timeout",
        "20",
    ]);
    run.ok();
    let report: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON object");
    assert_eq!(report["ready"], true, "{report}");
    assert_eq!(report["filter"], "NavPosition", "{report}");
    assert_eq!(report["utcValid"], true, "{report}");

    let slow = TestUnit::with(DeviceConfig {
        pty: false,
        startup: Duration::from_secs(600),
        ..DeviceConfig::default()
    });
    let run = svc(&[
        "device",
        "--serial-tcp",
        &slow.serial_tcp(),
        "wait-ready",
        "--timeout",
        "0.5",
        "--fix",
        "rtkFixed",
    ]);
    run.fails_with(1);
    let report: Value = serde_json::from_str(run.stdout.trim()).expect("one JSON object");
    assert_eq!(report["ready"], false, "{report}");
    let missing = report["missing"].as_array().expect("missing");
    assert!(!missing.is_empty(), "{report}");
    assert!(run.stderr.contains("not ready"), "{}", run.stderr);

    svc(&[
        "device",
        "--serial-tcp",
        &bridge,
        "wait-ready",
        "--fix",
        "great",
    ])
    .fails_with(2);
}
