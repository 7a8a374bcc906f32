//! Every 2xx is a success: each creation (a container, files added to it, a processing
//! started, a webhook endpoint) reads the same whether the service answers 200 (the
//! specification's status) or 201 (what the service answers when files are added, and
//! may answer on other creations). A small proxy in front of the cloud and notification
//! services answers every successful POST with the status under test, whatever the
//! emulator answered.

use std::sync::{Arc, Mutex};

use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use svc_core::cloud::{CloudClient, CreateContainerRequest};

use super::{
    container_request, default_emulator, endpoint_request, file, metadata, processing_request,
};
use crate::common::fast_config;

/// One POST the proxy passed on: its path, the emulator's status, the status answered.
#[derive(Clone, Debug)]
struct Passed {
    path: String,
    upstream: u16,
    answered: u16,
}

struct StatusProxy {
    url: String,
    passed: Arc<Mutex<Vec<Passed>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for StatusProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

struct ProxyState {
    upstream: String,
    status: StatusCode,
    http: reqwest::Client,
    passed: Arc<Mutex<Vec<Passed>>>,
}

impl StatusProxy {
    /// A proxy in front of `upstream` that answers every successful POST with `status`.
    async fn start(upstream: &str, status: u16) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let passed = Arc::new(Mutex::new(Vec::new()));
        let state = Arc::new(ProxyState {
            upstream: upstream.to_owned(),
            status: StatusCode::from_u16(status).unwrap(),
            http: reqwest::Client::new(),
            passed: passed.clone(),
        });
        let app = axum::Router::new().fallback(forward).with_state(state);
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { url, passed, task }
    }

    fn passed(&self) -> Vec<Passed> {
        self.passed.lock().unwrap().clone()
    }
}

async fn forward(State(s): State<Arc<ProxyState>>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let target = parts
        .uri
        .path_and_query()
        .map_or_else(|| parts.uri.path().to_owned(), |p| p.as_str().to_owned());
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let mut upstream = s
        .http
        .request(parts.method.clone(), format!("{}{target}", s.upstream));
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            upstream = upstream.header(name, value);
        }
    }
    let answer = match upstream.body(body).send().await {
        Ok(answer) => answer,
        Err(e) => return (StatusCode::BAD_GATEWAY, e.to_string()).into_response(),
    };
    let mut status = answer.status();
    if parts.method == axum::http::Method::POST && status.is_success() {
        s.passed.lock().unwrap().push(Passed {
            path: parts.uri.path().to_owned(),
            upstream: status.as_u16(),
            answered: s.status.as_u16(),
        });
        status = s.status;
    }
    let content_type = answer.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = answer.bytes().await.unwrap_or_default();
    let mut response = Response::builder().status(status);
    if let Some(ct) = content_type {
        response = response.header(header::CONTENT_TYPE, ct);
    }
    response.body(Body::from(bytes)).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_creation_succeeds_on_200_and_201_alike() {
    for status in [200, 201] {
        let emu = default_emulator().await;
        let info = emu.info();
        let cloud = StatusProxy::start(&info.base_url, status).await;
        let notification = StatusProxy::start(&info.notification_url, status).await;
        let mut config = fast_config(info);
        config.base_url = cloud.url.clone();
        config.notification_url = notification.url.clone();
        let client = CloudClient::new(config).unwrap();

        let container = client
            .create_container(CreateContainerRequest {
                files: vec![file("rover/day1.nmea", 3)],
                ..container_request(Some(metadata(&[("run", "statuses")])))
            })
            .await
            .unwrap_or_else(|e| panic!("create a container on {status}: {e}"));
        assert_eq!(container.files.len(), 1);
        assert!(container.files[0].upload_info.is_some());
        assert_eq!(container.metadata, Some(metadata(&[("run", "statuses")])));

        let added = client
            .add_container_files(container.id, vec![file("rover/day2.nmea", 4)])
            .await
            .unwrap_or_else(|e| panic!("add files on {status}: {e}"));
        assert_eq!(added.len(), 1);
        assert_eq!(added[0].path, "rover/day2.nmea");
        assert!(added[0].upload_info.is_some());

        // A container without files: a processing starts on it at once.
        let empty = client
            .create_container(container_request(None))
            .await
            .unwrap();
        let started = client
            .start_processing(processing_request(empty.id))
            .await
            .unwrap_or_else(|e| panic!("start a processing on {status}: {e}"));
        assert_eq!(started.container_id, Some(empty.id));
        assert_eq!(started.name.as_deref(), Some("survey run"));

        let endpoint = client
            .create_webhook_endpoint(endpoint_request("http://127.0.0.1:9/hook"))
            .await
            .unwrap_or_else(|e| panic!("create a webhook endpoint on {status}: {e}"));
        assert_eq!(endpoint.url.as_deref(), Some("http://127.0.0.1:9/hook"));

        // Each creation was answered with the status under test, whatever the emulator
        // answered (201 when files are added, 200 otherwise).
        let passed: Vec<(String, u16, u16)> = cloud
            .passed()
            .into_iter()
            .chain(notification.passed())
            .map(|p| {
                let kind = p.path.rsplit('/').next().unwrap_or_default().to_owned();
                (kind, p.upstream, p.answered)
            })
            .collect();
        assert_eq!(
            passed,
            [
                ("containers".to_owned(), 200, status),
                ("files".to_owned(), 201, status),
                ("containers".to_owned(), 200, status),
                ("processings".to_owned(), 200, status),
                ("webhook-endpoints".to_owned(), 200, status),
            ],
            "on {status}"
        );
    }
}
