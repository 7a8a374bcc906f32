//! `svc webhooks verify` against the shared vectors, and `svc webhooks listen`.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use svc_core::WebhookSecret;

use crate::support::*;

fn vectors() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/webhook_vectors.json"
    ))
    .unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    file["vectors"].as_array().unwrap().clone()
}

#[test]
fn verify_agrees_with_every_vector_ignoring_the_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for v in vectors() {
        let (Some(timestamp), Some(signature)) = (v["timestamp"].as_str(), v["signature"].as_str())
        else {
            continue; // A missing header cannot be given on this command line.
        };
        let body = dir.path().join("body");
        std::fs::write(&body, v["body"].as_str().unwrap()).unwrap();
        // `--flag=value`: a timestamp such as `-1` is a value, not a flag.
        let mut args = vec![
            "webhooks".to_owned(),
            "verify".to_owned(),
            "--ignore-timestamp".to_owned(),
            format!("--timestamp={timestamp}"),
            format!("--signature={signature}"),
        ];
        for s in v["secrets"].as_array().unwrap() {
            args.push(format!("--secret={}", s.as_str().unwrap()));
        }
        args.push(body.to_string_lossy().into_owned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = svc(&args);
        // An authentic event this SDK cannot type is printed as it came (exit 0).
        let expected_valid =
            v["ignoring_timestamp"] == "valid" || v["ignoring_timestamp"] == "untyped_event";
        assert_eq!(
            run.code == 0,
            expected_valid,
            "vector {}: {run:#?}",
            v["name"]
        );
        if v["ignoring_timestamp"] == "untyped_event" {
            let printed: Value = serde_json::from_str(&run.stdout).unwrap();
            let sent: Value = serde_json::from_str(v["body"].as_str().unwrap()).unwrap();
            assert_eq!(printed, sent, "{}", v["name"]);
            assert!(run.stderr.contains("cannot read"), "{}", run.stderr);
        } else if expected_valid {
            let event: Value = serde_json::from_str(&run.stdout).unwrap();
            assert!(event["payload"]["id"].is_string(), "{}", v["name"]);
        } else {
            assert_eq!(run.code, 1, "{}", v["name"]);
            assert!(
                run.stderr.contains("invalid delivery"),
                "{}: {}",
                v["name"],
                run.stderr
            );
        }
        checked += 1;
    }
    assert!(checked > 40, "{checked} vectors checked");
}

#[test]
fn verify_checks_the_timestamp_window() {
    let v = vectors()
        .into_iter()
        .find(|v| v["expected"] == "valid")
        .unwrap();
    let secret = v["secrets"][0].as_str().unwrap();
    let body = v["body"].as_str().unwrap();
    let now = svc_core::webhook::unix_now();
    for (timestamp, valid) in [(now, true), (now - 400, false)] {
        let signature =
            svc_core::webhook::sign(&WebhookSecret::new(secret), timestamp, body.as_bytes());
        let ts = timestamp.to_string();
        let mut child = command(&[
            "webhooks",
            "verify",
            "--secret",
            secret,
            "--timestamp",
            &ts,
            "--signature",
            &signature,
        ])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), body.as_bytes()).unwrap();
        let run = finish(child, Duration::from_secs(30), &["webhooks", "verify"]);
        assert_eq!(run.code == 0, valid, "{run:#?}");
        if !valid {
            // "signed 400 s ago" (or a second more when the machine is slow to start svc).
            assert!(
                run.stderr.contains(" s ago, beyond the 300 s tolerance"),
                "{}",
                run.stderr
            );
        }
    }
}

#[tokio::test]
async fn listen_accepts_signed_deliveries_and_refuses_others() {
    let v = vectors()
        .into_iter()
        .find(|v| v["expected"] == "valid")
        .unwrap();
    let secret = v["secrets"][0].as_str().unwrap().to_owned();
    let body = v["body"].as_str().unwrap().to_owned();
    let mut child = command(&["webhooks", "listen", "--port", "0", "--secret", &secret])
        .spawn()
        .unwrap();
    // Killed even if an assertion fails below, so no listener outlives the test;
    // disarmed once the child is reaped, so it never signals a reused pid.
    struct KillOnDrop(Option<u32>);
    impl Drop for KillOnDrop {
        fn drop(&mut self) {
            if let Some(pid) = self.0 {
                let _ = std::process::Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
    }
    let mut guard = KillOnDrop(Some(child.id()));

    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .to_owned();

    let http = reqwest::Client::new();
    let now = svc_core::webhook::unix_now();
    let good = svc_core::webhook::sign(&WebhookSecret::new(secret.as_str()), now, body.as_bytes());
    let send = |signature: String| {
        http.post(&url)
            .header("Svc-Timestamp", now.to_string())
            .header("Svc-Signature", signature)
            .body(body.clone())
            .send()
    };
    assert_eq!(send(good).await.unwrap().status(), 200);
    // A delivery without `archiveScheduledAt` and other fields (was answered 400, so
    // the service retried it and recorded it as missed), and one this SDK cannot type
    // at all: both authentic, both accepted and printed.
    let trimmed = vectors()
        .into_iter()
        .find(|v| v["name"] == "valid_trimmed_and_extended_payload")
        .unwrap()["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!trimmed.contains("archiveScheduledAt"));
    let untyped = r#"{"id":"not-a-uuid","eventType":"cloud:processing-ended"}"#.to_owned();
    for other in [&trimmed, &untyped] {
        let signature =
            svc_core::webhook::sign(&WebhookSecret::new(secret.as_str()), now, other.as_bytes());
        let answer = http
            .post(&url)
            .header("Svc-Timestamp", now.to_string())
            .header("Svc-Signature", signature)
            .body(other.clone())
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200, "{other}");
    }
    let bad = "0".repeat(64);
    let refused = send(bad).await.unwrap();
    assert_eq!(refused.status(), 400);
    assert!(
        refused
            .text()
            .await
            .unwrap()
            .contains("Svc-Signature header does not match")
    );

    let _ = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let status = wait(&mut child, Duration::from_secs(10)).expect("listen stops on SIGTERM");
    guard.0 = None;
    assert!(status.success(), "{status:?}");
    let mut out = String::new();
    std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
    let printed: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        printed.len(),
        3,
        "three authentic deliveries printed: {out}"
    );
    assert_eq!(
        printed[0]["id"],
        serde_json::from_str::<Value>(&body).unwrap()["id"]
    );
    assert_eq!(
        printed[1]["payload"]["qualityIndicators"]["hPrecision"],
        0.02
    );
    assert_eq!(printed[2], serde_json::from_str::<Value>(&untyped).unwrap());
}
