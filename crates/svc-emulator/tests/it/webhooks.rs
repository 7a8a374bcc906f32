//! Webhook endpoints and deliveries (`openapi/notification.yaml`: "Webhook endpoints",
//! "Events", "Delivery").

use std::time::Duration;

use serde_json::{Value, json};
use svc_emulator::receiver::{ReceivedDelivery, WebhookReceiver};

use crate::common::{Env, STEPS, assert_timestamp, assert_uuid, check_delivery, event_type};

const ALL: [&str; 3] = [
    "cloud:processing-progress",
    "cloud:processing-ended",
    "cloud:processing-error",
];
const ENDED: &str = "cloud:processing-ended";

#[track_caller]
fn mentions(details: &str, word: &str) {
    assert!(
        details.to_lowercase().contains(&word.to_lowercase()),
        "details {details:?} should mention `{word}`"
    );
}

fn endpoints_path(env: &Env) -> String {
    format!("/api/v2/organizations/{}/webhook-endpoints", env.org())
}

#[track_caller]
fn assert_secret(endpoint: &Value) -> String {
    let secret = endpoint["secret"]
        .as_str()
        .unwrap_or_else(|| panic!("secret: {endpoint}"));
    let hex = secret
        .strip_prefix("whsec_")
        .unwrap_or_else(|| panic!("secret must start with whsec_: {secret}"));
    assert!(
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "secret must be whsec_ + 64 lowercase hex: {secret}"
    );
    secret.to_owned()
}

fn with_type<'a>(deliveries: &'a [ReceivedDelivery], t: &str) -> Vec<&'a ReceivedDelivery> {
    deliveries.iter().filter(|d| event_type(d) == t).collect()
}

fn has_ended(deliveries: &[ReceivedDelivery]) -> bool {
    deliveries
        .iter()
        .any(|d| event_type(d) == ENDED && d.answered == 200)
}

fn now_secs() -> i64 {
    chrono::Utc::now().timestamp()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_create_update_list_delete() {
    let env = Env::start().await;
    let e = env
        .create_endpoint(
            "http://127.0.0.1:9/hooks",
            &[ENDED],
            json!({"team": "survey"}),
        )
        .await;
    assert_uuid(&e["id"]);
    assert_eq!(e["url"], "http://127.0.0.1:9/hooks");
    assert_eq!(e["enabledEventTypes"], json!([ENDED]));
    assert_eq!(e["enabled"], true, "a new endpoint is enabled");
    assert_eq!(e["metadata"], json!({"team": "survey"}));
    let secret = assert_secret(&e);
    let eid = e["id"].as_str().unwrap();
    let one = env
        .create_endpoint("https://example.com/other", &ALL, json!({}))
        .await;
    assert_ne!(
        assert_secret(&one),
        secret,
        "each endpoint has its own secret"
    );

    let list = env
        .nget(&format!("{}?page=0&perPage=10", endpoints_path(&env)))
        .await;
    let list = list
        .ok()
        .as_array()
        .expect("list answers a bare array")
        .clone();
    assert_eq!(list.len(), 2);
    assert!(list.contains(&e), "{list:?}");

    let path = format!("/api/v2/webhook-endpoints/{eid}");
    let r = env
        .npatch(&path, &json!({"url": "http://127.0.0.1:9/new", "enabledEventTypes": ALL, "metadata": {"x": "1"}}))
        .await;
    let updated = r
        .ok()
        .as_array()
        .unwrap_or_else(|| panic!("update answers an array: {}", r.text))
        .clone();
    assert_eq!(updated.len(), 1);
    let u = &updated[0];
    assert_eq!(u["id"], eid);
    assert_eq!(u["url"], "http://127.0.0.1:9/new");
    assert_eq!(u["enabledEventTypes"], json!(ALL));
    assert_eq!(u["metadata"], json!({"x": "1"}), "metadata replaced whole");
    assert_eq!(u["secret"], secret.as_str(), "the secret is unchanged");
    assert_eq!(u["enabled"], true);
    let r = env.npatch(&path, &json!({"enabled": false})).await;
    let u = r.ok()[0].clone();
    assert_eq!(u["enabled"], false);
    assert_eq!(
        u["url"], "http://127.0.0.1:9/new",
        "absent fields unchanged"
    );
    assert_eq!(u["metadata"], json!({"x": "1"}));

    let r = env.ndelete(&path).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let list = env
        .nget(&format!("{}?page=0&perPage=10", endpoints_path(&env)))
        .await;
    let list = list.ok().as_array().unwrap().clone();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], one["id"]);
    env.npatch(&path, &json!({"enabled": true})).await.err(404);
    env.ndelete(&path).await.err(404);
    env.nget(&format!("{path}/missed-webhooks?page=0&perPage=10"))
        .await
        .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_values_are_validated() {
    let env = Env::start().await;
    let create = endpoints_path(&env);
    let url = "http://127.0.0.1:9/hooks";
    for (body, status, word) in [
        (
            json!({"url": url, "enabledEventTypes": []}),
            422,
            "enabledEventTypes",
        ),
        (
            json!({"url": url, "enabledEventTypes": ["cloud:processing-started"]}),
            422,
            "enabledEventTypes",
        ),
        (
            json!({"url": url, "enabledEventTypes": [ENDED, "nope"]}),
            422,
            "enabledEventTypes",
        ),
        (
            json!({"url": "not a url", "enabledEventTypes": [ENDED]}),
            422,
            "url",
        ),
        (
            json!({"url": "/relative/hooks", "enabledEventTypes": [ENDED]}),
            422,
            "url",
        ),
        (
            json!({"url": "ftp://127.0.0.1/hooks", "enabledEventTypes": [ENDED]}),
            422,
            "url",
        ),
        (
            json!({"url": url, "enabledEventTypes": [ENDED], "metadata": {"k": 1}}),
            422,
            "metadata",
        ),
        (
            json!({"url": url, "enabledEventTypes": [ENDED], "metadata": {"k".repeat(41): "v"}}),
            422,
            "metadata",
        ),
        (json!({"enabledEventTypes": [ENDED]}), 400, "url"),
        (json!({"url": url}), 400, "enabledEventTypes"),
    ] {
        let r = env.npost(&create, &body).await;
        assert_eq!(r.status, status, "{body}: {}", r.text);
        mentions(&r.err(status), word);
    }
    for raw in ["{", "not json", "[1,"] {
        env.call_raw(reqwest::Method::POST, &env.notif(&create), raw)
            .await
            .err(400);
    }
    let list = env.nget(&format!("{create}?page=0&perPage=10")).await;
    assert_eq!(list.ok(), &json!([]), "nothing created");

    let e = env.create_endpoint(url, &[ENDED], json!({"a": "b"})).await;
    let path = format!("/api/v2/webhook-endpoints/{}", e["id"].as_str().unwrap());
    for (body, word) in [
        (json!({"enabledEventTypes": []}), "enabledEventTypes"),
        (
            json!({"enabledEventTypes": ["cloud:unknown"]}),
            "enabledEventTypes",
        ),
        (json!({"url": "nope"}), "url"),
        (json!({"metadata": {"k": "v".repeat(501)}}), "metadata"),
    ] {
        mentions(&env.npatch(&path, &body).await.err(422), word);
    }
    let list = env.nget(&format!("{create}?page=0&perPage=10")).await;
    assert_eq!(list.ok()[0], e, "unchanged after refused updates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endpoint_list_pages() {
    let env = Env::start().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let e = env
            .create_endpoint(&format!("http://127.0.0.1:9/h{i}"), &[ENDED], json!({}))
            .await;
        ids.push(e["id"].as_str().unwrap().to_owned());
    }
    let base = endpoints_path(&env);
    let mut seen = Vec::new();
    for (page, expected) in [(0, 2), (1, 1), (2, 0)] {
        let r = env.nget(&format!("{base}?page={page}&perPage=2")).await;
        let items = r
            .ok()
            .as_array()
            .unwrap_or_else(|| panic!("array: {}", r.text))
            .clone();
        assert_eq!(items.len(), expected, "page {page}");
        seen.extend(items.iter().map(|e| e["id"].as_str().unwrap().to_owned()));
    }
    seen.sort();
    ids.sort();
    assert_eq!(seen, ids);
    for (query, code) in [
        ("page=0", 400),
        ("perPage=2", 400),
        ("page=0&perPage=abc", 400),
        ("page=0&perPage=0", 422),
        ("page=0&perPage=101", 422),
        ("page=-1&perPage=2", 422),
    ] {
        env.nget(&format!("{base}?{query}")).await.err(code);
        env.nget(&format!(
            "/api/v2/webhook-endpoints/{}/missed-webhooks?{query}",
            ids[0]
        ))
        .await
        .err(code);
    }
    let missed = env
        .nget(&format!(
            "/api/v2/webhook-endpoints/{}/missed-webhooks?page=0&perPage=10",
            ids[0]
        ))
        .await;
    assert_eq!(missed.ok(), &json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deliveries_are_signed_and_follow_the_processing() {
    let env = Env::start().await;
    let since = now_secs();
    let receiver = WebhookReceiver::start(0).await.unwrap();
    let metadata = json!({"route": "all", "env": "test"});
    let e = env
        .create_endpoint(&receiver.url, &ALL, metadata.clone())
        .await;
    let secret = assert_secret(&e);
    let end = env.run_nmea_processing().await;
    let pid = end["id"].as_str().unwrap();
    let deliveries = receiver
        .wait_until(Duration::from_secs(10), has_ended)
        .await;
    assert!(
        has_ended(&deliveries),
        "no cloud:processing-ended within 10 s: {} deliveries",
        deliveries.len()
    );
    let mut progress = Vec::new();
    for d in &deliveries {
        let event = check_delivery(d, &secret, since, &metadata);
        assert_eq!(event["payload"]["id"], pid, "{event}");
        assert_eq!(event["payload"]["organizationId"], env.org());
        crate::common::assert_processing_shape(&event["payload"]);
        if event["eventType"] == "cloud:processing-progress" {
            progress.push(event["payload"].clone());
        }
    }
    assert_eq!(with_type(&deliveries, ENDED).len(), 1, "one ended event");
    assert!(
        with_type(&deliveries, "cloud:processing-error").is_empty(),
        "no error event for a clean run"
    );
    let ended: Value = serde_json::from_slice(&with_type(&deliveries, ENDED)[0].body).unwrap();
    assert_eq!(ended["payload"]["status"], "processed");
    assert_eq!(ended["payload"]["processingResult"], "succeeded");
    // Progress events: one per change of status, step or progress. Each
    // delivery is sent on its own, so the progress event of the change to
    // `processed` may arrive after the ended event: wait for it too.
    assert!(!progress.is_empty());
    let deliveries = receiver
        .wait_until(Duration::from_secs(5), |all| {
            let progress: Vec<Value> = all
                .iter()
                .filter_map(|d| serde_json::from_slice::<Value>(&d.body).ok())
                .filter(|e| e["eventType"] == "cloud:processing-progress")
                .map(|e| e["payload"].clone())
                .collect();
            let step_seen = |s: &str| {
                progress
                    .iter()
                    .any(|p| p["status"] == "processing" && p["processingStep"] == s)
            };
            STEPS.iter().all(|s| step_seen(s))
                && progress.iter().any(|p| p["status"] == "processed")
        })
        .await;
    let mut running: Vec<Value> = deliveries
        .iter()
        .filter_map(|d| serde_json::from_slice::<Value>(&d.body).ok())
        .filter(|e| e["eventType"] == "cloud:processing-progress")
        .map(|e| e["payload"].clone())
        .collect();
    for step in STEPS {
        assert!(
            running
                .iter()
                .any(|p| p["status"] == "processing" && p["processingStep"] == step),
            "no progress event for step {step}"
        );
    }
    assert!(
        running.iter().any(|p| p["status"] == "processed"),
        "a progress event for the status change to processed"
    );
    running.retain(|p| p["status"] == "processing");
    running.sort_by(|a, b| {
        a["processingProgress"]
            .as_f64()
            .partial_cmp(&b["processingProgress"].as_f64())
            .unwrap()
    });
    let order: Vec<usize> = running
        .iter()
        .map(|p| {
            STEPS
                .iter()
                .position(|s| p["processingStep"] == *s)
                .unwrap()
        })
        .collect();
    assert!(
        order.windows(2).all(|w| w[0] <= w[1]),
        "steps in order of rising progress: {order:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscriptions_and_disabled_or_deleted_endpoints() {
    let env = Env::start().await;
    let all = WebhookReceiver::start(0).await.unwrap();
    let ended_only = WebhookReceiver::start(0).await.unwrap();
    let disabled = WebhookReceiver::start(0).await.unwrap();
    let deleted = WebhookReceiver::start(0).await.unwrap();
    let since = now_secs();
    env.create_endpoint(&all.url, &ALL, json!({})).await;
    let e_ended = env
        .create_endpoint(&ended_only.url, &[ENDED], json!({"only": "ended"}))
        .await;
    let e_disabled = env.create_endpoint(&disabled.url, &ALL, json!({})).await;
    let r = env
        .npatch(
            &format!(
                "/api/v2/webhook-endpoints/{}",
                e_disabled["id"].as_str().unwrap()
            ),
            &json!({"enabled": false}),
        )
        .await;
    assert_eq!(r.ok()[0]["enabled"], false);
    let e_deleted = env.create_endpoint(&deleted.url, &ALL, json!({})).await;
    let r = env
        .ndelete(&format!(
            "/api/v2/webhook-endpoints/{}",
            e_deleted["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);

    let end = env.run_nmea_processing().await;
    all.wait_until(Duration::from_secs(10), has_ended).await;
    let got = ended_only
        .wait_until(Duration::from_secs(10), has_ended)
        .await;
    assert_eq!(
        got.len(),
        1,
        "only the ended event: {:?}",
        got.iter().map(event_type).collect::<Vec<_>>()
    );
    let event = check_delivery(
        &got[0],
        e_ended["secret"].as_str().unwrap(),
        since,
        &json!({"only": "ended"}),
    );
    assert_eq!(event["eventType"], ENDED);
    assert_eq!(event["payload"]["id"], end["id"]);
    // A disabled or deleted endpoint receives nothing.
    let nothing = disabled
        .wait_until(Duration::from_millis(500), |d| !d.is_empty())
        .await;
    assert!(
        nothing.is_empty(),
        "disabled endpoint got {} deliveries",
        nothing.len()
    );
    assert!(
        deleted.deliveries().is_empty(),
        "deleted endpoint got deliveries"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_processing_raises_processing_error() {
    let env = Env::start().await;
    let receiver = WebhookReceiver::start(0).await.unwrap();
    let since = now_secs();
    let e = env.create_endpoint(&receiver.url, &ALL, json!({})).await;
    let container = env.uploaded_container("imu.csv", b"t,ax\n0,1\n").await;
    let p = env.start_processing(&container).await;
    let end = env.wait_end(p["id"].as_str().unwrap()).await;
    assert_eq!(end["processingResult"], "failed");
    let got = receiver
        .wait_until(Duration::from_secs(10), |d| {
            has_ended(d) && d.iter().any(|x| event_type(x) == "cloud:processing-error")
        })
        .await;
    let errors = with_type(&got, "cloud:processing-error");
    assert!(
        !errors.is_empty(),
        "no cloud:processing-error: {:?}",
        got.iter().map(event_type).collect::<Vec<_>>()
    );
    for d in errors {
        let event = check_delivery(d, e["secret"].as_str().unwrap(), since, &json!({}));
        assert_eq!(event["payload"]["id"], p["id"]);
    }
    let ended: Value = serde_json::from_slice(&with_type(&got, ENDED)[0].body).unwrap();
    assert_eq!(ended["payload"]["processingResult"], "failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_and_archive_raise_progress_and_cancel_raises_ended() {
    let env = Env::start().await;
    let receiver = WebhookReceiver::start(0).await.unwrap();
    let since = now_secs();
    let e = env.create_endpoint(&receiver.url, &ALL, json!({})).await;
    let secret = e["secret"].as_str().unwrap().to_owned();
    let container = env.nmea_container().await;
    let p = env.start_processing(&container).await;
    let pid = p["id"].as_str().unwrap().to_owned();
    let r = env.post_empty(&format!("/api/v2/processings/{pid}")).await;
    assert!(r.status.is_success(), "{}", r.text);
    let got = receiver
        .wait_until(Duration::from_secs(10), has_ended)
        .await;
    let events: Vec<Value> = got
        .iter()
        .map(|d| check_delivery(d, &secret, since, &json!({})))
        .collect();
    let ended: Vec<&Value> = events.iter().filter(|e| e["eventType"] == ENDED).collect();
    assert_eq!(ended.len(), 1, "{events:?}");
    assert_eq!(ended[0]["payload"]["status"], "canceled");
    assert_eq!(ended[0]["payload"]["id"], pid.as_str());
    let canceled_progress = |d: &[ReceivedDelivery]| {
        d.iter()
            .filter_map(|x| serde_json::from_slice::<Value>(&x.body).ok())
            .any(|e| {
                e["eventType"] == "cloud:processing-progress"
                    && e["payload"]["status"] == "canceled"
            })
    };
    let got = receiver
        .wait_until(Duration::from_secs(5), canceled_progress)
        .await;
    assert!(
        canceled_progress(&got),
        "a progress event for the status change to canceled"
    );

    // Archive is a status change too: a progress event, and no ended event.
    let r = env
        .post_empty(&format!("/api/v2/processings/{pid}/archive"))
        .await;
    assert_eq!(r.ok()["status"], "archived");
    let archived_progress = |d: &[ReceivedDelivery]| {
        d.iter()
            .filter_map(|x| serde_json::from_slice::<Value>(&x.body).ok())
            .any(|e| {
                e["eventType"] == "cloud:processing-progress"
                    && e["payload"]["status"] == "archived"
            })
    };
    let got = receiver
        .wait_until(Duration::from_secs(5), archived_progress)
        .await;
    assert!(
        archived_progress(&got),
        "a progress event for the status change to archived"
    );
    for d in &got {
        check_delivery(d, &secret, since, &json!({}));
    }
    assert_eq!(
        with_type(&got, ENDED).len(),
        1,
        "archive does not raise processing-ended"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_receiver_gets_retries_of_the_same_event() {
    let env = Env::start().await;
    let receiver = WebhookReceiver::start(3).await.unwrap();
    let since = now_secs();
    let metadata = json!({"retry": "3"});
    let e = env
        .create_endpoint(&receiver.url, &[ENDED], metadata.clone())
        .await;
    let end = env.run_nmea_processing().await;
    let got = receiver
        .wait_until(Duration::from_secs(10), has_ended)
        .await;
    let answered: Vec<u16> = got.iter().map(|d| d.answered).collect();
    assert_eq!(answered, [500, 500, 500, 200], "3 failures then a success");
    for d in &got {
        let event = check_delivery(d, e["secret"].as_str().unwrap(), since, &metadata);
        assert_eq!(event["payload"]["id"], end["id"]);
        assert_eq!(d.body, got[0].body, "every retry carries the same body");
    }
    let missed = env
        .nget(&format!(
            "/api/v2/webhook-endpoints/{}/missed-webhooks?page=0&perPage=10",
            e["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(missed.ok(), &json!([]), "a delivered event is not missed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_always_failing_receiver_gets_11_attempts_then_a_missed_webhook() {
    let env = Env::start().await;
    let receiver = WebhookReceiver::start(u32::MAX).await.unwrap();
    let since = now_secs();
    let metadata = json!({"receiver": "down"});
    let e = env
        .create_endpoint(&receiver.url, &[ENDED], metadata.clone())
        .await;
    let eid = e["id"].as_str().unwrap().to_owned();
    let end = env.run_nmea_processing().await;
    let missed = crate::common::poll("a missed webhook", Duration::from_secs(10), || async {
        let r = env
            .nget(&format!(
                "/api/v2/webhook-endpoints/{eid}/missed-webhooks?page=0&perPage=10"
            ))
            .await;
        let list = r
            .ok()
            .as_array()
            .unwrap_or_else(|| panic!("array: {}", r.text))
            .clone();
        (!list.is_empty()).then_some(list)
    })
    .await;
    let got = receiver.deliveries();
    assert_eq!(
        got.len(),
        11,
        "1 delivery + 10 retries, then a missed webhook"
    );
    for d in &got {
        assert_eq!(d.answered, 500);
        check_delivery(d, e["secret"].as_str().unwrap(), since, &metadata);
        assert_eq!(d.body, got[0].body);
    }
    assert_eq!(missed.len(), 1, "{missed:?}");
    let m = &missed[0];
    assert_uuid(&m["id"]);
    assert_eq!(m["eventType"], ENDED);
    assert_eq!(m["payload"]["id"], end["id"]);
    assert_eq!(m["payload"]["status"], "processed");
    assert_timestamp(&m["createdAt"]);
    assert_eq!(m["endpointMetadata"], metadata);
    let delivered: Value = serde_json::from_slice(&got[0].body).unwrap();
    assert_eq!(
        m["payload"], delivered["payload"],
        "the payload that could not be delivered"
    );
    assert_eq!(m["eventType"], delivered["eventType"]);
    let page1 = env
        .nget(&format!(
            "/api/v2/webhook-endpoints/{eid}/missed-webhooks?page=1&perPage=1"
        ))
        .await;
    assert_eq!(page1.ok(), &json!([]));
    // notification.yaml, MissedWebhook.createdAt: "When the missed event was recorded",
    // i.e. after the 11th failed attempt, at least the sum of the retry delays
    // (5 + 10 + 8 × 20 ms = 175 ms here) after the event was raised.
    let raised = assert_timestamp(&delivered["createdAt"]);
    let recorded = assert_timestamp(&m["createdAt"]);
    assert!(
        recorded - raised >= chrono::TimeDelta::milliseconds(150),
        "MissedWebhook.createdAt {recorded} is not when it was recorded (the event was raised at {raised})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deleting_an_endpoint_stops_its_retries() {
    let env = Env::with(svc_emulator::EmulatorConfig {
        webhook_retry_base: Duration::from_millis(100),
        webhook_retry_cap: Duration::from_millis(100),
        ..crate::common::config()
    })
    .await;
    let receiver = WebhookReceiver::start(u32::MAX).await.unwrap();
    let e = env
        .create_endpoint(&receiver.url, &[ENDED], json!({}))
        .await;
    env.run_nmea_processing().await;
    let first = receiver
        .wait_until(Duration::from_secs(10), |d| !d.is_empty())
        .await;
    assert!(!first.is_empty(), "no first delivery");
    let r = env
        .ndelete(&format!(
            "/api/v2/webhook-endpoints/{}",
            e["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let at_delete = receiver.deliveries().len();
    // With 100 ms between retries, 11 attempts would take a second; at most the one in
    // flight at the deletion may still arrive.
    let later = receiver
        .wait_until(Duration::from_millis(800), |d| d.len() > at_delete + 1)
        .await;
    assert!(
        later.len() <= at_delete + 1,
        "{} deliveries after the deletion (had {at_delete})",
        later.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reenabled_or_moved_endpoint_gets_later_events_at_its_new_url() {
    let env = Env::start().await;
    let old = WebhookReceiver::start(0).await.unwrap();
    let new = WebhookReceiver::start(0).await.unwrap();
    let witness = WebhookReceiver::start(0).await.unwrap();
    env.create_endpoint(&witness.url, &[ENDED], json!({})).await;
    let e = env.create_endpoint(&old.url, &[ENDED], json!({})).await;
    let path = format!("/api/v2/webhook-endpoints/{}", e["id"].as_str().unwrap());
    env.npatch(&path, &json!({"enabled": false})).await.ok();
    let first = env.run_nmea_processing().await;
    witness.wait_until(Duration::from_secs(10), has_ended).await;
    // Enabled again, at a new address: later events only, to the new address.
    let r = env
        .npatch(&path, &json!({"enabled": true, "url": new.url}))
        .await;
    assert_eq!(r.ok()[0]["enabled"], true);
    assert_eq!(r.json[0]["url"], new.url.as_str());
    let second = env.run_nmea_processing().await;
    let got = new.wait_until(Duration::from_secs(10), has_ended).await;
    let ids: Vec<Value> = got
        .iter()
        .map(|d| serde_json::from_slice::<Value>(&d.body).unwrap()["payload"]["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [second["id"].clone()],
        "only the later processing (not {})",
        first["id"]
    );
    assert!(old.deliveries().is_empty(), "nothing to the old address");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_go_only_to_the_organizations_endpoints() {
    let env = Env::start().await;
    let mine = WebhookReceiver::start(0).await.unwrap();
    let theirs = WebhookReceiver::start(0).await.unwrap();
    env.create_endpoint(&mine.url, &ALL, json!({})).await;
    let (other_token, other_org) = env.other_org().await;
    let created = env
        .call_as(
            Some(&other_token),
            reqwest::Method::POST,
            &env.notif(&format!(
                "/api/v2/organizations/{other_org}/webhook-endpoints"
            )),
            Some(&json!({"url": theirs.url, "enabledEventTypes": ALL})),
        )
        .await;
    created.ok();
    // A processing of the other organization.
    let track = crate::common::nmea_track(5);
    let c = env
        .call_as(
            Some(&other_token),
            reqwest::Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/containers")),
            Some(&json!({"region": "eu-west-3", "files": [{"path": "t.nmea", "type": "input", "size": track.len()}]})),
        )
        .await;
    let c = c.ok().clone();
    let (status, body) = crate::common::upload(&env.http, &c["files"][0], track.into_bytes()).await;
    assert_eq!(status, 204, "{body}");
    let p = env
        .call_as(
            Some(&other_token),
            reqwest::Method::POST,
            &env.cloud(&format!("/api/v2/organizations/{other_org}/processings")),
            Some(&json!({"containerId": c["id"], "processingJson": {}})),
        )
        .await;
    let their_id = p.ok()["id"].clone();
    let got = theirs.wait_until(Duration::from_secs(10), has_ended).await;
    assert!(
        got.iter().all(
            |d| serde_json::from_slice::<Value>(&d.body).unwrap()["payload"]["id"] == their_id
        )
    );
    // A processing of this organization: its own receiver gets it, the other does not.
    let own = env.run_nmea_processing().await;
    let got = mine.wait_until(Duration::from_secs(10), has_ended).await;
    assert!(
        got.iter().all(
            |d| serde_json::from_slice::<Value>(&d.body).unwrap()["payload"]["id"] == own["id"]
        ),
        "only this organization's processings reach its endpoints"
    );
    assert!(
        theirs.deliveries().iter().all(
            |d| serde_json::from_slice::<Value>(&d.body).unwrap()["payload"]["id"] == their_id
        ),
        "the other organization's endpoint got this organization's events"
    );
}
