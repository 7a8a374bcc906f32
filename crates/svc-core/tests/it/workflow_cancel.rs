//! A workflow canceled while the answer to its container creation or processing start
//! is awaited: what the service made is looked up and reported, never taken for not
//! made (a processing reported as not started while it runs, a credit spent twice by a
//! user who starts it again, a container left behind by the cleanup).
//!
//! A reverse proxy in front of the cloud service forwards every request, and for the
//! chosen one holds the service's answer forever once the service has applied it: the
//! answer is "in flight" when the workflow is canceled.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::response::Response;
use svc_core::cloud::{CloudClient, CloudConfig};
use svc_core::workflow::{Cleanup, ProcessingJob, Workflow, WorkflowError, WorkflowOptions};
use svc_emulator::{Emulator, EmulatorConfig};
use tokio::sync::Notify;

use crate::common::{client_for, emulator, fast_config};

struct Held {
    upstream: String,
    http: reqwest::Client,
    /// The path suffix of the POST whose answer is held.
    hold: &'static str,
    applied: Notify,
}

async fn forward(State(held): State<Arc<Held>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let target = format!(
        "{}{}",
        held.upstream,
        parts.uri.path_and_query().map_or("", |p| p.as_str())
    );
    let mut outgoing = held.http.request(parts.method.clone(), target).body(body);
    for (name, value) in &parts.headers {
        if name != "host" && name != "content-length" {
            outgoing = outgoing.header(name, value);
        }
    }
    let answer = outgoing.send().await.expect("the service answers");
    if parts.method == "POST" && parts.uri.path().ends_with(held.hold) {
        // Applied by the service; the answer never reaches the client.
        held.applied.notify_one();
        std::future::pending::<()>().await;
    }
    let mut response = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers() {
        response = response.header(name, value);
    }
    response
        .body(Body::from(answer.bytes().await.unwrap_or_default()))
        .expect("a response")
}

/// The emulator, and a client whose cloud requests go through a proxy that holds the
/// answer of the POST ending in `hold`.
async fn rig(hold: &'static str) -> (Emulator, CloudClient, Arc<Held>) {
    let emulator = emulator(EmulatorConfig {
        processing_time: std::time::Duration::from_secs(30),
        ..EmulatorConfig::default()
    })
    .await;
    let held = Arc::new(Held {
        upstream: emulator.info().base_url.clone(),
        http: reqwest::Client::new(),
        hold,
        applied: Notify::new(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let proxy = format!("http://{}", listener.local_addr().unwrap());
    let app = axum::Router::new()
        .fallback(forward)
        .with_state(held.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let config = CloudConfig {
        base_url: proxy,
        ..fast_config(emulator.info())
    };
    (emulator, CloudClient::new(config).unwrap(), held)
}

fn job() -> ProcessingJob {
    let samples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let config = serde_json::json!({"processing": {"type": "insSingle"}});
    ProcessingJob::new(
        vec![samples.join("rover.nmea")],
        config.as_object().cloned().unwrap(),
    )
}

fn cleanup() -> WorkflowOptions {
    WorkflowOptions {
        cleanup_on_failure: true,
        ..WorkflowOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_the_start_is_answered_reports_the_processing_and_keeps_its_container() {
    let (emulator, client, held) = rig("/processings").await;
    let handle = Workflow::new(client).start(job(), cleanup());
    held.applied.notified().await;
    handle.cancel();
    let e = handle.wait().await.unwrap_err();
    let WorkflowError::Canceled {
        container_id: Some(container),
        processing_id: Some(processing),
        ref cleanup,
    } = e
    else {
        panic!("not the canceled workflow with its processing: {e:?}");
    };
    assert_eq!(cleanup, &Cleanup::NotAttempted, "{e}");
    assert!(e.to_string().contains(&processing.to_string()), "{e}");
    // The processing runs in the cloud, in its container, which was not deleted.
    let direct = client_for(emulator.info());
    let p = direct.get_processing(processing).await.unwrap();
    assert_eq!(p.container_id, Some(container));
    direct.get_container(container).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_while_the_container_is_answered_finds_it_and_cleans_it_up() {
    let (emulator, client, held) = rig("/containers").await;
    let handle = Workflow::new(client).start(job(), cleanup());
    held.applied.notified().await;
    handle.cancel();
    let e = handle.wait().await.unwrap_err();
    let WorkflowError::Canceled {
        container_id: Some(container),
        processing_id: None,
        ref cleanup,
    } = e
    else {
        panic!("not the canceled workflow with its container: {e:?}");
    };
    assert_eq!(cleanup, &Cleanup::Deleted, "{e}");
    let direct = client_for(emulator.info());
    let gone = direct.get_container(container).await.unwrap_err();
    assert_eq!(gone.status(), Some(404), "{gone}");
    assert!(direct.list_containers_all().await.unwrap().is_empty());

    // Without the cleanup, the container is reported, and stays.
    let (emulator, client, held) = rig("/containers").await;
    let handle = Workflow::new(client).start(job(), WorkflowOptions::default());
    held.applied.notified().await;
    handle.cancel();
    let e = handle.wait().await.unwrap_err();
    let Some(container) = e.container_id() else {
        panic!("the container is not reported: {e:?}");
    };
    assert!(e.to_string().contains(&container.to_string()), "{e}");
    client_for(emulator.info())
        .get_container(container)
        .await
        .unwrap();
}
