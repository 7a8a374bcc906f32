//! A recording HTTP proxy in front of one emulator server: it counts the requests it
//! sees and answers, once, what a rule tells it to instead of the emulator.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::fast_config;
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use svc_core::cloud::{CloudClient, CloudConfig};
use svc_emulator::EmulatorInfo;

/// One request the proxy saw.
#[derive(Clone, Debug)]
pub(super) struct Hit {
    pub(super) method: String,
    pub(super) path: String,
    pub(super) body: String,
    pub(super) status: u16,
}

/// What the proxy does instead of (or after) forwarding a matching request, once.
#[derive(Clone, Debug)]
pub(super) enum Action {
    /// Answer this status and JSON body without forwarding.
    Answer(u16, String),
    /// Forward (the service applies it), then hold the answer this long (the client's
    /// request timeout is shorter: its answer is lost).
    LoseAnswer(Duration),
}

pub(super) struct ProxyState {
    upstream: String,
    own_url: String,
    http: reqwest::Client,
    hits: Mutex<Vec<Hit>>,
    pub(super) rules: Mutex<Vec<(String, String, Action)>>,
}

/// A recording HTTP proxy in front of one emulator server. Answers that name the
/// upstream address (the discovery document's `token_endpoint`) name the proxy instead.
pub(super) struct Proxy {
    pub(super) url: String,
    pub(super) state: Arc<ProxyState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    pub(super) async fn start(upstream: &str) -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let state = Arc::new(ProxyState {
            upstream: upstream.to_owned(),
            own_url: url.clone(),
            http: reqwest::Client::new(),
            hits: Mutex::new(Vec::new()),
            rules: Mutex::new(Vec::new()),
        });
        let app = axum::Router::new()
            .fallback(forward)
            .with_state(state.clone());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Proxy { url, state, task }
    }

    /// The next `times` requests `method` whose path starts with `path` get `action`.
    pub(super) fn on(&self, method: &str, path: &str, times: usize, action: Action) {
        let mut rules = self.state.rules.lock().unwrap();
        for _ in 0..times {
            rules.push((method.to_owned(), path.to_owned(), action.clone()));
        }
    }

    /// Forgets the rules not used yet: everything is forwarded again.
    pub(super) fn clear(&self) {
        self.state.rules.lock().unwrap().clear();
    }

    pub(super) fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    /// How many requests `method` to a path starting with `path` it saw.
    pub(super) fn count(&self, method: &str, path: &str) -> usize {
        self.hits()
            .iter()
            .filter(|h| h.method == method && h.path.starts_with(path))
            .count()
    }
}

async fn forward(State(s): State<Arc<ProxyState>>, request: axum::extract::Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_owned();
    let target = parts
        .uri
        .path_and_query()
        .map_or(path.clone(), |p| p.as_str().to_owned());
    let body = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    let method = parts.method.as_str().to_owned();
    let action = {
        let mut rules = s.rules.lock().unwrap();
        let found = rules
            .iter()
            .position(|(m, p, _)| *m == method && path.starts_with(p.as_str()));
        found.map(|i| rules.remove(i).2)
    };
    let record = |status: u16| {
        s.hits.lock().unwrap().push(Hit {
            method: method.clone(),
            path: path.clone(),
            body: String::from_utf8_lossy(&body).into_owned(),
            status,
        });
    };
    if let Some(Action::Answer(status, text)) = &action {
        record(*status);
        return Response::builder()
            .status(*status)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(text.clone()))
            .unwrap();
    }
    let mut upstream = s
        .http
        .request(parts.method.clone(), format!("{}{}", s.upstream, target));
    for (name, value) in &parts.headers {
        if name != header::HOST && name != header::CONTENT_LENGTH {
            upstream = upstream.header(name, value);
        }
    }
    let answer = match upstream.body(body.clone()).send().await {
        Ok(answer) => answer,
        Err(e) => {
            record(502);
            return (StatusCode::BAD_GATEWAY, e.to_string()).into_response();
        }
    };
    let status = answer.status();
    let content_type = answer.headers().get(header::CONTENT_TYPE).cloned();
    let bytes = answer.bytes().await.unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).replace(&s.upstream, &s.own_url);
    record(status.as_u16());
    if let Some(Action::LoseAnswer(hold)) = action {
        tokio::time::sleep(hold).await;
    }
    let mut response = Response::builder().status(status.as_u16());
    if let Some(ct) = content_type {
        response = response.header(header::CONTENT_TYPE, ct);
    }
    response.body(Body::from(text)).unwrap()
}

/// The emulator's identity provider and cloud service behind proxies, and a client
/// going through both.
pub(super) struct Proxied {
    pub(super) auth: Proxy,
    pub(super) cloud: Proxy,
    pub(super) client: CloudClient,
}

pub(super) async fn proxied(info: &EmulatorInfo, adjust: impl FnOnce(&mut CloudConfig)) -> Proxied {
    let auth = Proxy::start(&info.auth_url).await;
    let cloud = Proxy::start(&info.base_url).await;
    let mut config = fast_config(info);
    config.auth_url = auth.url.clone();
    config.base_url = cloud.url.clone();
    adjust(&mut config);
    let client = CloudClient::new(config).unwrap();
    Proxied {
        auth,
        cloud,
        client,
    }
}

pub(super) const DISCOVERY: &str = "/.well-known/openid-configuration";
pub(super) const TOKEN: &str = "/oauth/token";
