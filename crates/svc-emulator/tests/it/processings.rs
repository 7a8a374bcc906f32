//! Processings (`openapi/cloud.yaml`, `Processing` and "States and lifecycle"): start,
//! lifecycle, cancel, archive, container deletion and the info endpoint (their outputs:
//! `outputs.rs`).

use std::time::{Duration, Instant};

use reqwest::Method;
use serde_json::{Value, json};
use svc_emulator::EmulatorConfig;

use crate::common::{
    DEADLINE, Env, FIXES, POLL, REGIONS, STEPS, assert_processing_shape, config, nmea_track, poll,
    upload,
};

#[track_caller]
fn mentions(details: &str, word: &str) {
    assert!(
        details.to_lowercase().contains(&word.to_lowercase()),
        "details {details:?} should mention `{word}`"
    );
}

fn status(p: &Value) -> &str {
    p["status"].as_str().unwrap_or_default()
}

pub(crate) fn id(p: &Value) -> String {
    p["id"].as_str().expect("id").to_owned()
}

fn start_body(container: &str) -> Value {
    json!({"containerId": container, "processingJson": {"mode": "auto"}})
}

/// A container holding one registered file that is not uploaded.
async fn not_uploaded_container(env: &Env) -> (String, Value) {
    let c = env
        .create_container(json!([{"path": "late.nmea", "type": "input", "size": 4}]))
        .await;
    (c["id"].as_str().unwrap().to_owned(), c["files"][0].clone())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_with_a_file_not_uploaded_is_409() {
    let env = Env::start().await;
    let (container, file) = not_uploaded_container(&env).await;
    let details = env
        .start_processing_raw(&start_body(&container))
        .await
        .err(409);
    mentions(&details, "late.nmea");
    // Uploaded: it starts.
    let (status, body) = upload(&env.http, &file, b"$X\r\n".to_vec()).await;
    assert_eq!(status, 204, "{body}");
    let p = env.start_processing(&container).await;
    assert_eq!(p["status"], "pending");
    env.wait_end(&id(&p)).await;
    // A deleted pending file no longer counts as registered.
    let ready = env.nmea_container().await;
    let added = env
        .post(
            &format!("/api/v2/containers/{ready}/files"),
            &json!({"files": [{"path": "extra.bin", "type": "input", "size": 9}]}),
        )
        .await;
    let extra = added.created()[0]["id"].as_str().unwrap().to_owned();
    env.start_processing_raw(&start_body(&ready)).await.err(409);
    let r = env
        .delete(&format!("/api/v2/container-files/{extra}"))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let p = env.start_processing(&ready).await;
    env.wait_end(&id(&p)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lifecycle_walks_the_steps_in_order_and_ends_processed() {
    let env = Env::with(EmulatorConfig {
        processing_time: Duration::from_millis(600),
        ..config()
    })
    .await;
    let container = env.nmea_container().await;
    let started = env.start_processing(&container).await;
    assert_processing_shape(&started);
    assert_eq!(started["status"], "pending", "{started}");
    assert!(started["processingStep"].is_null(), "{started}");
    assert!(started["processingProgress"].is_null(), "{started}");
    assert!(started["processingResult"].is_null(), "{started}");
    assert!(started["processingDuration"].is_null(), "{started}");
    assert_eq!(started["containerId"], container);
    assert_eq!(started["organizationId"], env.org());
    assert_eq!(started["region"], "eu-west-3", "the container's region");
    let pid = id(&started);
    let c = env.container(&container).await;
    assert_eq!(
        started["creatorId"], c["creatorId"],
        "started by the same key owner"
    );

    // Poll and record the sequence.
    let mut seen = vec![started.clone()];
    let deadline = Instant::now() + DEADLINE;
    loop {
        let p = env.processing(&pid).await;
        let done = !matches!(status(&p), "pending" | "processing");
        seen.push(p);
        if done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "processing did not end: {:?}",
            seen.last()
        );
        tokio::time::sleep(POLL).await;
    }
    let rank = |s: &str| match s {
        "pending" => 0,
        "processing" => 1,
        "processed" => 2,
        other => panic!("unexpected status {other} during a normal run"),
    };
    let mut last_rank = 0;
    let mut last_step = 0;
    let mut last_progress = 0.0_f64;
    let mut steps_seen = Vec::new();
    for p in &seen {
        assert_processing_shape(p);
        let r = rank(status(p));
        assert!(r >= last_rank, "status went back: {p}");
        last_rank = r;
        if status(p) == "processing" {
            let step = p["processingStep"]
                .as_str()
                .unwrap_or_else(|| panic!("step while processing: {p}"));
            let index = STEPS
                .iter()
                .position(|s| *s == step)
                .unwrap_or_else(|| panic!("unknown step {step}"));
            assert!(index >= last_step, "step went back to {step}: {p}");
            last_step = index;
            if steps_seen.last() != Some(&step.to_owned()) {
                steps_seen.push(step.to_owned());
            }
            let progress = p["processingProgress"]
                .as_f64()
                .unwrap_or_else(|| panic!("progress while processing: {p}"));
            assert!(
                (0.0..1.0).contains(&progress),
                "progress while running is in [0, 1): {p}"
            );
            assert!(progress >= last_progress, "progress went back: {p}");
            last_progress = progress;
            assert!(
                p["processingResult"].is_null(),
                "no result before the end: {p}"
            );
        }
        if status(p) == "pending" {
            assert!(
                p["processingStep"].is_null() && p["processingProgress"].is_null(),
                "{p}"
            );
        }
    }
    assert!(
        !steps_seen.is_empty(),
        "the status `processing` was never observed: {seen:?}"
    );

    let end = seen.last().unwrap();
    assert_eq!(end["status"], "processed", "{end}");
    assert_eq!(end["processingResult"], "succeeded", "{end}");
    assert_eq!(end["processingProgress"].as_f64(), Some(1.0), "{end}");
    assert!(
        end["processingStep"].is_null() || end["processingStep"] == "report",
        "after the end the step is the last one reached or null: {end}"
    );
    let duration = end["processingDuration"]
        .as_i64()
        .unwrap_or_else(|| panic!("processingDuration integer: {end}"));
    assert!(
        (0..=10).contains(&duration),
        "processingDuration in seconds: {end}"
    );
    let mission = end["missionLength"]
        .as_i64()
        .unwrap_or_else(|| panic!("missionLength integer: {end}"));
    assert!(
        (FIXES as i64 - 2..=FIXES as i64).contains(&mission),
        "missionLength ≈ {FIXES} s: {end}"
    );
    assert_eq!(
        end["errorCount"],
        json!({"errors": 0, "warnings": 0}),
        "{end}"
    );
    let errors = env.get(&format!("/api/v2/processings/{pid}/errors")).await;
    assert_eq!(errors.ok(), &json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_ongoing_processing_per_organization() {
    let env = Env::start().await;
    let a = env.nmea_container().await;
    let b = env.nmea_container().await;
    let first = env.start_processing(&a).await;
    let details = env.start_processing_raw(&start_body(&a)).await.err(409);
    mentions(&details, "processing");
    env.start_processing_raw(&start_body(&b)).await.err(409);
    // The other organization is not blocked.
    let (other_token, other_org) = env.other_org().await;
    let created = env
        .call_as(
            Some(&other_token),
            Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/containers")),
            Some(&json!({"region": "eu-west-3", "files": [{"path": "t.nmea", "type": "input", "size": nmea_track(5).len()}]})),
        )
        .await;
    let created = created.ok().clone();
    let (status, body) = upload(&env.http, &created["files"][0], nmea_track(5).into_bytes()).await;
    assert_eq!(status, 204, "{body}");
    let other = env
        .call_as(
            Some(&other_token),
            Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/processings")),
            Some(&start_body(created["id"].as_str().unwrap())),
        )
        .await;
    assert_eq!(other.ok()["organizationId"], other_org.as_str());
    // Once the first has ended, the next one starts.
    env.wait_end(&id(&first)).await;
    let second = env.start_processing(&b).await;
    env.wait_end(&id(&second)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credit_is_403_and_each_start_uses_one() {
    let env = Env::with(EmulatorConfig {
        credits: 2,
        ..config()
    })
    .await;
    let org: uuid::Uuid = env.info.organization_id;
    let container = env.nmea_container().await;
    // A refused start (409) uses no credit.
    let (pending_container, _) = not_uploaded_container(&env).await;
    env.start_processing_raw(&start_body(&pending_container))
        .await
        .err(409);
    for _ in 0..2 {
        let p = env.start_processing(&container).await;
        env.wait_end(&id(&p)).await;
    }
    let details = env
        .start_processing_raw(&start_body(&container))
        .await
        .err(403);
    mentions(&details, "credit");
    env.emu.set_credits(org, 1);
    let p = env.start_processing(&container).await;
    env.wait_end(&id(&p)).await;
    env.start_processing_raw(&start_body(&container))
        .await
        .err(403);
    env.emu.set_credits(org, 5);
    let p = env.start_processing(&container).await;
    env.wait_end(&id(&p)).await;
    env.emu.set_credits(org, 0);
    env.start_processing_raw(&start_body(&container))
        .await
        .err(403);
    // Refused starts created nothing: 4 processings in all.
    let list = env
        .get(&format!(
            "/api/v2/organizations/{}/processings?page=0&perPage=100",
            env.org()
        ))
        .await;
    assert_eq!(list.ok()["numItems"], 4, "{}", list.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn start_request_is_validated_and_stored() {
    let env = Env::start().await;
    let container = env.nmea_container().await;
    for bad in [json!([1, 2]), json!("auto"), json!(3), json!(true)] {
        let r = env
            .start_processing_raw(&json!({"containerId": container, "processingJson": bad}))
            .await;
        mentions(&r.err(422), "processingJson");
    }
    mentions(
        &env.start_processing_raw(&json!({"containerId": container}))
            .await
            .err(400),
        "processingJson",
    );
    mentions(
        &env.start_processing_raw(&json!({"processingJson": {}}))
            .await
            .err(400),
        "containerId",
    );
    let over =
        json!({"containerId": container, "processingJson": {}, "metadata": {"k": "v".repeat(501)}});
    mentions(&env.start_processing_raw(&over).await.err(422), "metadata");
    env.start_processing_raw(&json!({"containerId": uuid::Uuid::new_v4(), "processingJson": {}}))
        .await
        .err(404);
    env.call_raw(
        Method::POST,
        &env.cloud(&format!("/api/v2/organizations/{}/processings", env.org())),
        "{oops",
    )
    .await
    .err(400);

    let settings = json!({
        "mode": "auto",
        "type": "gnss",
        "outputs": {"csv": true, "geojson": true},
        "nested": {"list": [1, 2.5, -3e-7, "x", null, false, {"deep": []}], "unicode": "Zürich ✓"},
        "big": 12345678901234_i64,
    });
    let body = json!({"containerId": container, "processingJson": settings, "name": "Survey run 1", "metadata": {"project": "p-42"}});
    let p = env.start_processing_raw(&body).await.ok().clone();
    assert_eq!(p["processingJson"], settings, "returned unchanged");
    assert_eq!(p["name"], "Survey run 1");
    assert_eq!(p["metadata"], json!({"project": "p-42"}));
    let ended = env.wait_end(&id(&p)).await;
    assert_eq!(ended["processingJson"], settings);
    assert_eq!(ended["name"], "Survey run 1");
    assert_eq!(ended["metadata"], json!({"project": "p-42"}));
    // Without a name: null.
    let p = env.start_processing(&container).await;
    assert!(p["name"].is_null(), "{p}");
    env.wait_end(&id(&p)).await;
}

/// `type` follows the processing type the settings name (`processing.type`, or a
/// top-level `type`): `ins` for one starting with `ins`, `gnss` otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_type_follows_the_processing_settings() {
    let env = Env::start().await;
    let container = env.nmea_container().await;
    for (settings, expected) in [
        (json!({"processing": {"type": "insSingle"}}), "ins"),
        (
            json!({"processing": {"type": "insMulti"}, "mode": "auto"}),
            "ins",
        ),
        (json!({"processing": {"type": "gnssSingle"}}), "gnss"),
        (json!({"type": "ins"}), "ins"),
        (
            json!({"type": "gnss", "processing": {"type": "insSingle"}}),
            "ins",
        ),
        (
            json!({"type": "ins", "processing": {"type": "gnssSingle"}}),
            "gnss",
        ),
        (
            json!({"processing": {"type": 3}, "type": "insSingle"}),
            "ins",
        ),
        (json!({"mode": "auto"}), "gnss"),
        (json!({"processing": "ins"}), "gnss"),
    ] {
        let body = json!({"containerId": container, "processingJson": settings});
        let started = env.start_processing_raw(&body).await.ok().clone();
        assert_eq!(started["type"], expected, "{settings}");
        let ended = env.wait_end(&id(&started)).await;
        assert_eq!(ended["type"], expected, "{settings}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_moves_a_running_processing_to_canceled() {
    let env = Env::with(EmulatorConfig {
        processing_time: Duration::from_millis(600),
        ..config()
    })
    .await;
    let container = env.nmea_container().await;
    let p = env.start_processing(&container).await;
    let pid = id(&p);
    env.wait_processing(&pid, "processing", |p| p["status"] == "processing")
        .await;
    let r = env.post_empty(&format!("/api/v2/processings/{pid}")).await;
    assert!(r.status.is_success(), "cancel: {} {}", r.status, r.text);
    let canceled = env.processing(&pid).await;
    assert_eq!(canceled["status"], "canceled", "{canceled}");
    assert!(
        canceled["processingResult"].is_null(),
        "no result for a canceled processing: {canceled}"
    );
    env.post_empty(&format!("/api/v2/processings/{pid}"))
        .await
        .err(409);
    env.get(&format!("/api/v2/processings/{pid}/output"))
        .await
        .err(409);
    // A canceled processing is not ongoing: the next one starts, runs and ends, and the
    // canceled one stays canceled.
    let next = env.start_processing(&container).await;
    // Cancel while pending (or just started).
    let r = env
        .post_empty(&format!("/api/v2/processings/{}", id(&next)))
        .await;
    assert!(r.status.is_success(), "{}", r.text);
    assert_eq!(env.processing(&id(&next)).await["status"], "canceled");
    let third = env.start_processing(&container).await;
    let end = env.wait_end(&id(&third)).await;
    assert_eq!(end["status"], "processed");
    assert_eq!(env.processing(&pid).await["status"], "canceled");
    assert_eq!(env.processing(&id(&next)).await["status"], "canceled");
    // A processed one cannot be canceled.
    env.post_empty(&format!("/api/v2/processings/{}", id(&third)))
        .await
        .err(409);
    env.post_empty(&format!("/api/v2/processings/{}", uuid::Uuid::new_v4()))
        .await
        .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn archive_deletes_the_result_files() {
    let env = Env::start().await;
    let end = env.run_nmea_processing().await;
    let pid = id(&end);
    let outputs = env.outputs(&pid).await;
    let r = env
        .post_empty(&format!("/api/v2/processings/{pid}/archive"))
        .await;
    assert_eq!(r.ok()["status"], "archived", "{}", r.text);
    assert_eq!(r.json["id"], pid.as_str());
    assert_eq!(env.processing(&pid).await["status"], "archived");
    env.get(&format!("/api/v2/processings/{pid}/output"))
        .await
        .err(409);
    for output in &outputs {
        let url = output["url"].as_str().unwrap();
        let status = poll("result file deletion", Duration::from_secs(5), || async {
            let s = env.http.get(url).send().await.unwrap().status().as_u16();
            (s != 200).then_some(s)
        })
        .await;
        assert!(
            matches!(status, 403 | 404),
            "download after archive: {status}"
        );
    }
    assert!(env.emu.stored_outputs(pid.parse().unwrap()).is_empty());
    // The errors stay readable; archiving a running processing works too.
    env.get(&format!("/api/v2/processings/{pid}/errors"))
        .await
        .ok();
    let container = env.nmea_container().await;
    let running = env.start_processing(&container).await;
    let r = env
        .post_empty(&format!("/api/v2/processings/{}/archive", id(&running)))
        .await;
    assert_eq!(r.ok()["status"], "archived");
    // It is no longer ongoing, and stays archived.
    let next = env.start_processing(&container).await;
    env.wait_end(&id(&next)).await;
    assert_eq!(env.processing(&id(&running)).await["status"], "archived");
    env.post_empty(&format!(
        "/api/v2/processings/{}/archive",
        uuid::Uuid::new_v4()
    ))
    .await
    .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_container_waits_for_its_processing_and_keeps_results() {
    let env = Env::start().await;
    let container = env.nmea_container().await;
    let p = env.start_processing(&container).await;
    let pid = id(&p);
    let details = env
        .delete(&format!("/api/v2/containers/{container}"))
        .await
        .err(409);
    mentions(&details, "processing");
    env.container(&container).await;
    let end = env.wait_end(&pid).await;
    assert_eq!(end["processingResult"], "succeeded");
    let r = env.delete(&format!("/api/v2/containers/{container}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    env.get(&format!("/api/v2/containers/{container}"))
        .await
        .err(404);
    let after = env.processing(&pid).await;
    assert!(
        after["containerId"].is_null(),
        "containerId becomes null: {after}"
    );
    assert_eq!(after["status"], "processed");
    let stored = env.emu.stored_outputs(pid.parse().unwrap());
    let outputs = env.outputs(&pid).await;
    assert_eq!(outputs.len(), 3);
    for output in &outputs {
        let response = env
            .http
            .get(output["url"].as_str().unwrap())
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "result files remain");
        let bytes = response.bytes().await.unwrap();
        let (_, expected) = stored
            .iter()
            .find(|(p, _)| p == output["path"].as_str().unwrap())
            .unwrap();
        assert_eq!(&bytes[..], &expected[..]);
    }
    // It is still listed.
    let list = env
        .get(&format!(
            "/api/v2/organizations/{}/processings?page=0&perPage=10",
            env.org()
        ))
        .await;
    assert!(
        list.ok()["processings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["id"] == pid.as_str())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_processings_pages_with_total_count() {
    let env = Env::start().await;
    let container = env.nmea_container().await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        let p = env.start_processing(&container).await;
        let r = env
            .post_empty(&format!("/api/v2/processings/{}", id(&p)))
            .await;
        assert!(r.status.is_success(), "{}", r.text);
        ids.push(id(&p));
    }
    let base = format!("/api/v2/organizations/{}/processings", env.org());
    let mut seen = Vec::new();
    for (page, expected) in [(0, 2), (1, 1), (2, 0)] {
        let r = env.get(&format!("{base}?page={page}&perPage=2")).await;
        assert_eq!(r.ok()["numItems"], 3, "{}", r.text);
        let items = r.json["processings"].as_array().expect("processings array");
        assert_eq!(items.len(), expected, "page {page}");
        for p in items {
            assert_processing_shape(p);
            seen.push(id(p));
        }
    }
    seen.sort();
    ids.sort();
    assert_eq!(seen, ids);
    for (query, code) in [
        ("page=0", 400),
        ("perPage=5", 400),
        ("page=0&perPage=0", 422),
        ("page=-1&perPage=5", 422),
        ("page=0&perPage=101", 422),
    ] {
        env.get(&format!("{base}?{query}")).await.err(code);
    }
    env.get(&format!("/api/v2/processings/{}", uuid::Uuid::new_v4()))
        .await
        .err(404);
    env.get(&format!(
        "/api/v2/processings/{}/errors",
        uuid::Uuid::new_v4()
    ))
    .await
    .err(404);
    env.get(&format!(
        "/api/v2/processings/{}/output",
        uuid::Uuid::new_v4()
    ))
    .await
    .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_info_reports_versions_and_regions() {
    let env = Env::start().await;
    let r = env.get("/api/v1/info").await;
    let info = r.ok();
    let version = info["version"].as_str().expect("version");
    let (numbers, qualifier) = version
        .split_once('-')
        .unwrap_or_else(|| panic!("Major.Minor.Build-Qualifier: {version}"));
    let parts: Vec<&str> = numbers.split('.').collect();
    assert!(
        parts.len() == 3
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            && !qualifier.is_empty(),
        "version {version} is not Major.Minor.Build-Qualifier"
    );
    let engines = info["engineVersions"]
        .as_array()
        .expect("engineVersions array");
    assert!(
        !engines.is_empty()
            && engines
                .iter()
                .all(|e| e.as_str().is_some_and(|s| !s.is_empty())),
        "{info}"
    );
    assert!(
        info["apiVersion"]
            .as_str()
            .is_some_and(|v| v.starts_with('2')),
        "apiVersion of the v2 API: {info}"
    );
    let regions = info["regionsStatus"]
        .as_object()
        .expect("regionsStatus object");
    let mut names: Vec<&str> = regions.keys().map(String::as_str).collect();
    names.sort_unstable();
    let mut expected = REGIONS.to_vec();
    expected.sort_unstable();
    assert_eq!(names, expected);
    assert!(
        regions
            .values()
            .all(|v| matches!(v.as_str(), Some("online" | "degraded" | "offline"))),
        "{info}"
    );
    // It lives under /api/v1, not /api/v2.
    let v2 = env.get("/api/v2/info").await;
    assert_eq!(v2.status, 404, "{}", v2.text);
    // And it needs a token like every request.
    env.call_as(None, Method::GET, &env.cloud("/api/v1/info"), None)
        .await
        .err(401);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processing_region_is_the_container_region() {
    let env = Env::start().await;
    let track = nmea_track(10);
    let c = env
        .post(
            &format!("/api/v2/organizations/{}/containers", env.org()),
            &json!({"region": "ap-northeast-1", "files": [{"path": "t.nmea", "type": "input", "size": track.len()}]}),
        )
        .await;
    let c = c.ok().clone();
    let (status, body) = upload(&env.http, &c["files"][0], track.into_bytes()).await;
    assert_eq!(status, 204, "{body}");
    let p = env.start_processing(c["id"].as_str().unwrap()).await;
    assert_eq!(p["region"], "ap-northeast-1");
    let end = env.wait_end(&id(&p)).await;
    assert_eq!(end["region"], "ap-northeast-1");
    let mission = end["missionLength"].as_i64().unwrap();
    assert!((8..=10).contains(&mission), "{end}");
}
