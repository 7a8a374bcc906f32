//! Processing outputs (`openapi/cloud.yaml`, "Outputs"): listed only once processed,
//! downloadable through addresses that expire, and the errors and warnings that bad
//! inputs leave.

use std::time::Duration;

use serde_json::Value;
use svc_emulator::EmulatorConfig;

use crate::common::{
    Env, FIXES, assert_timestamp, assert_uuid, config, nmea_sentence, nmea_track, poll,
};
use crate::processings::id;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_are_listed_only_when_processed_and_downloadable() {
    let env = Env::start().await;
    let container = env.nmea_container().await;
    let p = env.start_processing(&container).await;
    let pid = id(&p);
    env.get(&format!("/api/v2/processings/{pid}/output"))
        .await
        .err(409);
    let end = env.wait_end(&pid).await;
    assert_eq!(end["processingResult"], "succeeded", "{end}");
    let outputs = env.outputs(&pid).await;
    let mut names: Vec<&str> = outputs
        .iter()
        .map(|o| o["path"].as_str().expect("path"))
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        ["report.json", "trajectory.csv", "trajectory.geojson"]
    );
    let stored = env.emu.stored_outputs(pid.parse().unwrap());
    assert_eq!(stored.len(), 3);
    for output in &outputs {
        let url = output["url"].as_str().expect("url");
        assert!(
            url.starts_with(&env.info.storage_url),
            "a storage address: {url}"
        );
        // A plain GET, without the bearer token.
        let response = env.http.get(url).send().await.unwrap();
        assert_eq!(response.status(), 200, "{url}");
        let bytes = response.bytes().await.unwrap();
        let (_, expected) = stored
            .iter()
            .find(|(p, _)| p == output["path"].as_str().unwrap())
            .expect("stored");
        assert_eq!(
            &bytes[..],
            &expected[..],
            "{} is byte-identical to the stored output",
            output["path"]
        );
    }
    let csv = &stored
        .iter()
        .find(|(p, _)| p == "trajectory.csv")
        .unwrap()
        .1;
    let csv = String::from_utf8(csv.clone()).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(
        lines[0].starts_with("time,latitude,longitude,height,velocity_north,velocity_east,velocity_up,roll,pitch,heading,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), FIXES + 1, "one row per fix");
    let first: Vec<&str> = lines[1].split(',').collect();
    assert_eq!(first.len(), 20);
    assert!(first[0].starts_with("2024-06-15T10:30:00"), "{}", lines[1]);
    let lat: f64 = first[1].parse().unwrap();
    let lon: f64 = first[2].parse().unwrap();
    assert!(
        (lat - 48.85).abs() < 1e-6 && (lon - 2.35).abs() < 1e-6,
        "{}",
        lines[1]
    );
    let geojson: Value = serde_json::from_slice(
        &stored
            .iter()
            .find(|(p, _)| p == "trajectory.geojson")
            .unwrap()
            .1,
    )
    .unwrap();
    assert_eq!(geojson["type"], "FeatureCollection");
    let report: Value =
        serde_json::from_slice(&stored.iter().find(|(p, _)| p == "report.json").unwrap().1)
            .unwrap();
    assert!(report.is_object());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_download_url_is_403() {
    let env = Env::start().await;
    let end = env.run_nmea_processing().await;
    let outputs = env.outputs(&id(&end)).await;
    let url = outputs[0]["url"].as_str().unwrap();
    let (head, signature) = url.rsplit_once("X-Amz-Signature=").expect("signed url");
    let flipped = format!(
        "{}{}",
        if signature.starts_with('0') { "1" } else { "0" },
        &signature[1..]
    );
    let other_key = outputs[1]["url"]
        .as_str()
        .unwrap()
        .split_once('?')
        .unwrap()
        .0
        .to_owned();
    for tampered in [
        format!("{head}X-Amz-Signature={flipped}"),
        url.replace("X-Amz-Expires=", "X-Amz-Expires=9"),
        format!("{other_key}?{}", url.split_once('?').unwrap().1),
        url.split_once('?').unwrap().0.to_owned(),
    ] {
        let response = env.http.get(&tampered).send().await.unwrap();
        let status = response.status();
        let body = response.text().await.unwrap();
        assert_eq!(status, 403, "{tampered}: {body}");
        crate::common::assert_storage_error(&body);
    }
    assert_eq!(env.http.get(url).send().await.unwrap().status(), 200);
}

async fn failing_container(env: &Env) -> String {
    let imu = "time,ax,ay,az\n0.00,0.1,0.2,9.8\n0.01,0.1,0.2,9.8\n";
    env.uploaded_container("imu/imu.csv", imu.as_bytes()).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_nmea_input_fails_with_an_error_entry() {
    let env = Env::start().await;
    let container = failing_container(&env).await;
    let p = env.start_processing(&container).await;
    let end = env.wait_end(&id(&p)).await;
    assert_eq!(end["status"], "processed", "{end}");
    assert_eq!(end["processingResult"], "failed", "{end}");
    assert!(end["errorCount"]["errors"].as_u64() >= Some(1), "{end}");
    let errors = env
        .get(&format!("/api/v2/processings/{}/errors", id(&p)))
        .await;
    let errors = errors.ok().as_array().expect("a bare array").clone();
    let levels: Vec<&str> = errors
        .iter()
        .map(|e| e["level"].as_str().unwrap_or_default())
        .collect();
    assert!(levels.contains(&"error"), "{errors:?}");
    // A failed processing is still `processed`: its output list answers 200 (an array).
    let outputs = env
        .get(&format!("/api/v2/processings/{}/output", id(&p)))
        .await;
    assert!(outputs.ok().is_array(), "{}", outputs.text);
    assert_eq!(
        levels.iter().filter(|l| **l == "error").count() as u64,
        end["errorCount"]["errors"].as_u64().unwrap()
    );
    assert_eq!(
        levels.iter().filter(|l| **l == "warning").count() as u64,
        end["errorCount"]["warnings"].as_u64().unwrap()
    );
    for e in &errors {
        assert_uuid(&e["id"]);
        assert!(
            matches!(e["level"].as_str(), Some("error" | "warning")),
            "{e}"
        );
        assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
        assert_timestamp(&e["date"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_nmea_line_is_a_warning() {
    let env = Env::start().await;
    let mut track = nmea_track(FIXES);
    // A sentence with a wrong checksum, and a GGA without fix.
    let good =
        nmea_sentence("GPGGA,103100.00,4851.100000,N,00221.100000,E,1,12,0.8,35.000,M,47.000,M,,");
    let broken = format!(
        "{}{}",
        &good[..good.len() - 2],
        if good.ends_with("00") { "11" } else { "00" }
    );
    track.push_str(&broken);
    track.push_str("\r\n");
    let container = env
        .uploaded_container("rover/bad.nmea", track.as_bytes())
        .await;
    let p = env.start_processing(&container).await;
    let end = env.wait_end(&id(&p)).await;
    assert_eq!(end["status"], "processed", "{end}");
    assert_eq!(
        end["processingResult"], "succeeded",
        "a warning does not fail the processing: {end}"
    );
    assert!(end["errorCount"]["warnings"].as_u64() >= Some(1), "{end}");
    assert_eq!(end["errorCount"]["errors"], 0, "{end}");
    let errors = env
        .get(&format!("/api/v2/processings/{}/errors", id(&p)))
        .await;
    let errors = errors.ok().as_array().unwrap().clone();
    assert!(errors.iter().any(|e| e["level"] == "warning"), "{errors:?}");
    assert!(errors.iter().all(|e| e["level"] != "error"), "{errors:?}");
    // The good fixes are all in the trajectory.
    let stored = env.emu.stored_outputs(id(&p).parse().unwrap());
    let csv = &stored
        .iter()
        .find(|(p, _)| p == "trajectory.csv")
        .expect("csv")
        .1;
    assert_eq!(String::from_utf8_lossy(csv).lines().count(), FIXES + 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_urls_expire_and_a_new_list_gives_fresh_ones() {
    let env = Env::with(EmulatorConfig {
        download_ttl: Duration::from_secs(1),
        ..config()
    })
    .await;
    let end = env.run_nmea_processing().await;
    let pid = id(&end);
    let outputs = env.outputs(&pid).await;
    let url = outputs[0]["url"].as_str().unwrap().to_owned();
    assert_eq!(env.http.get(&url).send().await.unwrap().status(), 200);
    // X-Amz-Date (whole seconds) + X-Amz-Expires (1 s): wait, bounded, until it has passed.
    let date = url
        .split("X-Amz-Date=")
        .nth(1)
        .and_then(|r| r.split('&').next())
        .expect("X-Amz-Date");
    let signed = chrono::NaiveDateTime::parse_from_str(date, "%Y%m%dT%H%M%SZ")
        .expect("basic format")
        .and_utc();
    poll("download URL expiry", Duration::from_secs(5), || async {
        (chrono::Utc::now() > signed + chrono::TimeDelta::milliseconds(1200)).then_some(())
    })
    .await;
    let response = env.http.get(&url).send().await.unwrap();
    let status = response.status();
    let body = response.text().await.unwrap();
    assert_eq!(status, 403, "an expired download URL: {body}");
    crate::common::assert_storage_error(&body);
    let fresh = env.outputs(&pid).await;
    let again = fresh
        .iter()
        .find(|o| o["path"] == outputs[0]["path"])
        .unwrap();
    assert_eq!(
        env.http
            .get(again["url"].as_str().unwrap())
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}
