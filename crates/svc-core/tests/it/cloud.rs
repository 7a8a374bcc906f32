//! End to end: the cloud client (`svc_core::cloud`) against the in-process emulator
//! (`svc_emulator`), started on port 0 for each test.
//!
//! A small recording proxy (written here) sits in front of the emulator's identity
//! provider or cloud service where a test must count requests (one token request for
//! many tasks, nothing sent for a refused argument, no repeated creation) or inject an
//! answer the emulator would not give (a 401 to a valid token, a 400, a 503, an answer
//! lost after the request was applied). Waits for a processing poll with a deadline;
//! no test sleeps a fixed time to wait for a state.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::common::{client_for, emulator, fast_config};
use axum::body::Body;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures::{StreamExt, TryStreamExt};
use serde_json::json;
use svc_core::ErrorKind;
use svc_core::cloud::{
    ApiSecret, CloudClient, CloudConfig, CloudError, ContainerFileType, ContainerRegion,
    CreateContainerFile, CreateContainerRequest, CreateWebhookEndpointRequest, EventType, Metadata,
    ProcessingStatus, RetryHint, StartProcessingRequest, TransportKind, UpdateContainerFileRequest,
    UpdateContainerRequest, UpdateWebhookEndpointRequest,
};
use svc_core::limits::LimitError;
use svc_emulator::{Emulator, EmulatorConfig, EmulatorInfo, FaultConfig};
use uuid::Uuid;

// ------------------------------------------------------------------------------ rig

async fn default_emulator() -> Emulator {
    emulator(EmulatorConfig::default()).await
}

fn metadata(pairs: &[(&str, &str)]) -> Metadata {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

fn container_request(metadata: Option<Metadata>) -> CreateContainerRequest {
    CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata,
        files: Vec::new(),
    }
}

fn file(path: &str, size: i64) -> CreateContainerFile {
    CreateContainerFile {
        metadata: None,
        path: path.to_owned(),
        size,
        type_: ContainerFileType::Input,
    }
}

fn processing_request(container_id: Uuid) -> StartProcessingRequest {
    let json = json!({"type": "gnss", "mode": "auto"});
    StartProcessingRequest {
        container_id,
        metadata: Some(metadata(&[("run", "1")])),
        name: Some("survey run".to_owned()),
        processing_json: json.as_object().cloned().unwrap_or_default(),
    }
}

fn endpoint_request(url: &str) -> CreateWebhookEndpointRequest {
    CreateWebhookEndpointRequest {
        enabled_event_types: vec![EventType::CloudProcessingEnded],
        metadata: Some(metadata(&[("team", "field-ops")])),
        url: url.to_owned(),
    }
}

/// The status of an [`CloudError::Api`], failing the test for any other error.
#[track_caller]
fn api_status(e: &CloudError) -> u16 {
    match e {
        CloudError::Api { status, .. } => *status,
        other => panic!("expected an answer from the service, got {other:?}"),
    }
}

/// Polls a processing until `done` holds for it, within `timeout`.
async fn wait_for_processing(
    client: &CloudClient,
    id: Uuid,
    timeout: Duration,
    done: impl Fn(&ProcessingStatus) -> bool,
) -> svc_core::cloud::Processing {
    let deadline = Instant::now() + timeout;
    loop {
        let p = client.get_processing(id).await.expect("get processing");
        if done(&p.status) {
            return p;
        }
        assert!(
            Instant::now() < deadline,
            "processing {id} still {}",
            p.status
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

// ------------------------------------------------------------------------------ proxy

/// One request the proxy saw.
#[derive(Clone, Debug)]
struct Hit {
    method: String,
    path: String,
    body: String,
    status: u16,
}

/// What the proxy does instead of (or after) forwarding a matching request, once.
#[derive(Clone, Debug)]
enum Action {
    /// Answer this status and JSON body without forwarding.
    Answer(u16, String),
    /// Forward (the service applies it), then hold the answer this long (the client's
    /// request timeout is shorter: its answer is lost).
    LoseAnswer(Duration),
}

struct ProxyState {
    upstream: String,
    own_url: String,
    http: reqwest::Client,
    hits: Mutex<Vec<Hit>>,
    rules: Mutex<Vec<(String, String, Action)>>,
}

/// A recording HTTP proxy in front of one emulator server. Answers that name the
/// upstream address (the discovery document's `token_endpoint`) name the proxy instead.
struct Proxy {
    url: String,
    state: Arc<ProxyState>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Proxy {
    async fn start(upstream: &str) -> Proxy {
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
    fn on(&self, method: &str, path: &str, times: usize, action: Action) {
        let mut rules = self.state.rules.lock().unwrap();
        for _ in 0..times {
            rules.push((method.to_owned(), path.to_owned(), action.clone()));
        }
    }

    fn hits(&self) -> Vec<Hit> {
        self.state.hits.lock().unwrap().clone()
    }

    /// How many requests `method` to a path starting with `path` it saw.
    fn count(&self, method: &str, path: &str) -> usize {
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
struct Proxied {
    auth: Proxy,
    cloud: Proxy,
    client: CloudClient,
}

async fn proxied(info: &EmulatorInfo, adjust: impl FnOnce(&mut CloudConfig)) -> Proxied {
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

const DISCOVERY: &str = "/.well-known/openid-configuration";
const TOKEN: &str = "/oauth/token";

// ------------------------------------------------------------------------------ settings

fn vars() -> HashMap<&'static str, String> {
    HashMap::from([
        ("SVC_BASE_URL", "https://cloud.example.com/".to_owned()),
        ("SVC_AUTH_URL", "https://auth.example.com".to_owned()),
        (
            "SVC_NOTIFICATION_URL",
            "https://notify.example.com".to_owned(),
        ),
        ("SVC_API_KEY", "svc_key_0123".to_owned()),
        ("SVC_API_SECRET", "top-secret-value-42".to_owned()),
        (
            "SVC_ORGANIZATION_ID",
            "3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f".to_owned(),
        ),
    ])
}

fn from(map: &HashMap<&'static str, String>) -> Result<CloudConfig, CloudError> {
    CloudConfig::from_vars(|name| map.get(name).cloned())
}

#[track_caller]
fn config_error(result: Result<CloudConfig, CloudError>) -> (String, String) {
    match result {
        Err(CloudError::Config {
            setting, reason, ..
        }) => (setting, reason),
        other => panic!("expected a configuration error, got {other:?}"),
    }
}

#[test]
fn settings_come_from_variables_and_name_the_bad_one() {
    let config = from(&vars()).unwrap();
    assert_eq!(config.base_url, "https://cloud.example.com");
    assert_eq!(config.auth_url, "https://auth.example.com");
    assert_eq!(config.api_key, "svc_key_0123");
    assert_eq!(config.api_secret.expose_secret(), "top-secret-value-42");
    assert_eq!(
        config.organization_id.to_string(),
        "3c9d5e7f-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
    );
    assert_eq!(config.page_size, 100);

    let mut missing = vars();
    missing.remove("SVC_API_SECRET");
    let (setting, reason) = config_error(from(&missing));
    assert_eq!(setting, "SVC_API_SECRET");
    assert_eq!(reason, "is not set");

    let mut several = vars();
    several.remove("SVC_AUTH_URL");
    several.remove("SVC_ORGANIZATION_ID");
    let error = from(&several).unwrap_err();
    assert_eq!(
        error.to_string(),
        "invalid configuration: SVC_AUTH_URL is not set (also missing: SVC_ORGANIZATION_ID)"
    );

    let mut empty = vars();
    empty.insert("SVC_API_KEY", "  ".to_owned());
    assert_eq!(
        config_error(from(&empty)),
        ("SVC_API_KEY".to_owned(), "is set but empty".to_owned())
    );

    for (name, value) in [
        ("SVC_BASE_URL", "ftp://cloud.example.com"),
        ("SVC_BASE_URL", "cloud.example.com"),
        ("SVC_NOTIFICATION_URL", "https://notify.example.com/api/v2"),
        ("SVC_AUTH_URL", "https://auth.example.com/?x=1"),
        ("SVC_ORGANIZATION_ID", "not-a-uuid"),
    ] {
        let mut bad = vars();
        bad.insert(name, value.to_owned());
        let (setting, reason) = config_error(from(&bad));
        assert_eq!(setting, name, "{value}: {reason}");
    }
}

#[test]
fn secrets_are_redacted_in_debug_output() {
    let config = from(&vars()).unwrap();
    let shown = format!("{config:?}");
    assert!(!shown.contains("top-secret-value-42"), "{shown}");
    assert!(shown.contains("ApiSecret([redacted])"), "{shown}");
    assert!(shown.contains("svc_key_0123"), "{shown}");
    assert_eq!(
        format!("{:?}", ApiSecret::new("abc")),
        "ApiSecret([redacted])"
    );
    let client = CloudClient::new(config).unwrap();
    let shown = format!("{client:?}");
    assert!(!shown.contains("top-secret-value-42"), "{shown}");
    assert!(shown.contains("cloud.example.com"), "{shown}");
}

#[test]
fn explicit_settings_are_checked() {
    let base = from(&vars()).unwrap();
    let setting_of = |config: CloudConfig| match CloudClient::new(config) {
        Err(CloudError::Config { setting, .. }) => setting,
        other => panic!("expected a configuration error, got {other:?}"),
    };
    let mut c = base.clone();
    c.page_size = 0;
    assert_eq!(setting_of(c), "page_size");
    let mut c = base.clone();
    c.api_secret = ApiSecret::new("");
    assert_eq!(setting_of(c), "api_secret");
    let mut c = base.clone();
    c.base_url = "https://cloud.example.com/api/v2/".to_owned();
    assert_eq!(setting_of(c), "base_url");
    let mut c = base;
    c.request_timeout = Duration::ZERO;
    assert_eq!(setting_of(c), "request_timeout");
}

// ------------------------------------------------------------------------------ tokens

#[tokio::test]
async fn many_tasks_share_one_token_request() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let tasks: Vec<_> = (0..24)
        .map(|i| {
            let client = p.client.clone();
            tokio::spawn(async move {
                if i % 2 == 0 {
                    client.server_info().await.map(|_| ())
                } else {
                    client.list_containers_page(0, 10).await.map(|_| ())
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    assert_eq!(p.auth.count("GET", DISCOVERY), 1);
    assert_eq!(p.auth.count("POST", TOKEN), 1, "{:?}", p.auth.hits());
    assert_eq!(p.cloud.hits().len(), 24);

    // The password grant of the `oidc` security scheme, form-encoded.
    let grant = p.auth.hits().into_iter().find(|h| h.path == TOKEN).unwrap();
    let form: HashMap<String, String> = url_pairs(&grant.body);
    assert_eq!(form["grant_type"], "password");
    assert_eq!(form["client_id"], "api-key");
    assert_eq!(form["username"], emu.info().api_key);
    assert_eq!(form["password"], emu.info().api_secret);
    assert_eq!(form["scope"], "openid");

    // Later calls use the cached token.
    p.client.server_info().await.unwrap();
    p.client.list_webhook_endpoints_all().await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), 1);
}

fn url_pairs(body: &str) -> HashMap<String, String> {
    body.split('&')
        .filter_map(|pair| pair.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.replace("%3A", ":")))
        .collect()
}

#[tokio::test]
async fn work_goes_on_across_token_expiry() {
    let emu = emulator(EmulatorConfig {
        token_lifetime: Duration::from_secs(2),
        ..EmulatorConfig::default()
    })
    .await;
    let p = proxied(emu.info(), |_| {}).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut calls = 0;
    // Work until the third token: two renewals happened in the middle of it.
    while p.auth.count("POST", TOKEN) < 3 {
        assert!(Instant::now() < deadline, "no renewal");
        if calls % 2 == 0 {
            p.client.server_info().await.unwrap();
        } else {
            p.client.list_containers_page(0, 5).await.unwrap();
        }
        calls += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let unauthorized = p.cloud.hits().iter().filter(|h| h.status == 401).count();
    println!("{calls} calls, 3 tokens, {unauthorized} answers 401");
    // Renewal comes ahead of expiry; a 401 only when a request crossed the expiry in
    // flight (a loaded machine), and then at most for one of the two renewals.
    assert!(unauthorized < 2, "{unauthorized} answers 401");
}

#[tokio::test]
async fn a_401_gets_a_new_token_and_one_repeat() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    p.client.server_info().await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), 1);

    // The service no longer accepts the token (as after expiry or a revocation).
    let refused =
        r#"{"title":"Unauthorized","details":"The access token is invalid or has expired"}"#;
    p.cloud.on(
        "GET",
        "/api/v1/info",
        1,
        Action::Answer(401, refused.to_owned()),
    );
    p.client.server_info().await.unwrap();
    assert_eq!(p.auth.count("POST", TOKEN), 2, "a new token");
    assert_eq!(
        p.cloud.count("GET", "/api/v1/info"),
        3,
        "the request repeated once"
    );

    // Still 401 with the new token: one repeat only, then the error.
    p.cloud.on(
        "GET",
        "/api/v1/info",
        5,
        Action::Answer(401, refused.to_owned()),
    );
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(api_status(&e), 401);
    assert_eq!(e.operation(), Some("getServerInfo"));
    assert_eq!(
        e.details(),
        Some("The access token is invalid or has expired")
    );
    assert_eq!(e.retry_hint(), RetryHint::Never);
    assert_eq!(p.cloud.count("GET", "/api/v1/info"), 5);
    assert_eq!(p.auth.count("POST", TOKEN), 3);
}

#[tokio::test]
async fn a_wrong_secret_is_an_authentication_error_without_the_secret() {
    let emu = default_emulator().await;
    let wrong = "wrong-secret-Zq81x";
    let p = proxied(emu.info(), |c| c.api_secret = ApiSecret::new(wrong)).await;
    let e = p.client.server_info().await.unwrap_err();
    match &e {
        CloudError::Authentication {
            status,
            error,
            description,
        } => {
            assert_eq!(*status, Some(401));
            assert_eq!(error, "invalid_grant");
            assert_eq!(description, "invalid API key or secret");
        }
        other => panic!("expected an authentication error, got {other:?}"),
    }
    assert!(!e.is_retryable());
    for text in [e.to_string(), format!("{e:?}")] {
        assert!(!text.contains(wrong), "{text}");
    }
    assert_eq!(p.auth.count("POST", TOKEN), 1, "a refusal is not retried");
    assert!(p.cloud.hits().is_empty(), "nothing sent without a token");

    // An identity provider that cannot be reached: transient, retried, then reported.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let mut config = fast_config(emu.info());
    config.auth_url = dead;
    let e = CloudClient::new(config)
        .unwrap()
        .server_info()
        .await
        .unwrap_err();
    // Not an authentication failure: nothing refused the credentials.
    assert!(
        matches!(
            e,
            CloudError::Transport {
                operation: "openidConfiguration",
                kind: TransportKind::Connect,
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(e.kind(), ErrorKind::Unreachable);
    assert!(e.to_string().contains("identity provider"), "{e}");
    assert!(e.is_retryable());
}

#[tokio::test]
async fn a_failing_identity_provider_is_transient_not_an_authentication_error() {
    let emu = default_emulator().await;
    let mut config_change = |c: &mut CloudConfig| {
        c.retry.max_attempts = 2;
        c.retry.base_delay = Duration::from_millis(1);
    };
    // The token endpoint answers 503 to every attempt: two attempts of the operation,
    // each asking twice for a token.
    let p = proxied(emu.info(), &mut config_change).await;
    p.auth.on(
        "POST",
        TOKEN,
        4,
        Action::Answer(503, "upstream down".to_owned()),
    );
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transient, "{e:?}");
    assert_eq!(e.status(), Some(503));
    assert_eq!(e.operation(), Some("requestToken"));
    assert!(e.is_retryable());
    assert!(p.cloud.hits().is_empty(), "nothing sent without a token");
    assert_eq!(p.auth.count("POST", TOKEN), 4, "retried as transient");
    // Once it is back, the same client works.
    p.client.server_info().await.unwrap();

    // Discovery failing with 502: transient too.
    let p = proxied(emu.info(), &mut config_change).await;
    p.auth.on(
        "GET",
        DISCOVERY,
        4,
        Action::Answer(502, "bad gateway".to_owned()),
    );
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Transient, "{e:?}");
    assert_eq!(e.operation(), Some("openidConfiguration"));

    // A refusal stays an authentication error.
    let p = proxied(emu.info(), |c| c.api_secret = ApiSecret::new("nope")).await;
    let e = p.client.server_info().await.unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Authentication);
}

#[tokio::test]
async fn a_member_key_and_another_organization_are_refused_with_403() {
    let emu = default_emulator().await;
    let info = emu.info();
    let mut config = fast_config(info);
    config.api_key = info.member_api_key.clone();
    config.api_secret = ApiSecret::new(info.member_api_secret.clone());
    let member = CloudClient::new(config).unwrap();
    let e = member.server_info().await.unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert_eq!(e.title(), Some("Forbidden"));
    assert!(!e.is_retryable());
    let e = member.list_webhook_endpoints_page(0, 10).await.unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert_eq!(e.operation(), Some("listWebhookEndpoints"));

    let other = info
        .organizations
        .iter()
        .find(|o| o.organization_id != info.organization_id)
        .unwrap();
    let mut config = fast_config(info);
    config.organization_id = other.organization_id;
    let e = CloudClient::new(config)
        .unwrap()
        .create_container(container_request(None))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert_eq!(e.operation(), Some("createContainer"));
}

// ------------------------------------------------------------------------------ operations

#[tokio::test]
async fn server_info_and_containers_round_trip() {
    let emu = default_emulator().await;
    let client = client_for(emu.info());

    let info = client.server_info().await.unwrap();
    assert!(info.version.is_some_and(|v| !v.is_empty()));
    assert!(info.regions_status.contains_key("eu-west-3"));

    let created = client
        .create_container(CreateContainerRequest {
            region: ContainerRegion::UsWest1,
            metadata: Some(metadata(&[("project", "survey-2024-07")])),
            files: vec![
                file("rover/gnss.ubx", 10),
                CreateContainerFile {
                    metadata: Some(metadata(&[("kind", "profile")])),
                    type_: ContainerFileType::Resources,
                    ..file("profiles/export.json", 3)
                },
            ],
        })
        .await
        .unwrap();
    assert_eq!(created.region, Some(ContainerRegion::UsWest1));
    assert_eq!(created.organization_id, Some(emu.info().organization_id));
    assert_eq!(created.files.len(), 2);
    assert!(created.files.iter().all(|f| f.upload_info.is_some()));

    let got = client.get_container(created.id).await.unwrap();
    assert_eq!(got.id, created.id);
    assert_eq!(
        got.metadata,
        Some(metadata(&[("project", "survey-2024-07")]))
    );

    let updated = client
        .update_container(
            created.id,
            UpdateContainerRequest {
                metadata: Some(metadata(&[("stage", "two")])),
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.metadata, Some(metadata(&[("stage", "two")])));

    let added = client
        .add_container_files(created.id, vec![file("base/obs.rnx", 5)])
        .await
        .unwrap();
    assert_eq!(added.len(), 1);
    assert_eq!(added[0].path, "base/obs.rnx");

    let renamed = client
        .update_container_file(
            added[0].id,
            UpdateContainerFileRequest {
                metadata: Some(metadata(&[("station", "B1")])),
                path: Some("base/renamed.rnx".to_owned()),
                type_: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(renamed.path, "base/renamed.rnx");
    assert_eq!(renamed.metadata, Some(metadata(&[("station", "B1")])));

    client.delete_container_file(added[0].id).await.unwrap();
    let got = client.get_container(created.id).await.unwrap();
    assert_eq!(got.files.len(), 2);
    let e = client.delete_container_file(added[0].id).await.unwrap_err();
    assert_eq!(api_status(&e), 404);

    let listed = client.list_containers_all().await.unwrap();
    assert_eq!(
        listed.iter().map(|c| c.id).collect::<Vec<_>>(),
        vec![created.id]
    );

    client.delete_container(created.id).await.unwrap();
    let e = client.get_container(created.id).await.unwrap_err();
    assert_eq!(api_status(&e), 404);
    assert_eq!(e.operation(), Some("getContainer"));
    assert_eq!(e.retry_hint(), RetryHint::Allowed, "404: may exist later");
    assert!(e.is_retryable());
    let e = client.delete_container(created.id).await.unwrap_err();
    assert_eq!(api_status(&e), 404);
    assert!(client.list_containers_all().await.unwrap().is_empty());
}

#[tokio::test]
async fn processings_round_trip() {
    let emu = emulator(EmulatorConfig {
        processing_time: Duration::from_millis(300),
        webhook_retry_base: Duration::from_millis(1),
        webhook_retry_cap: Duration::from_millis(4),
        webhook_timeout: Duration::from_secs(1),
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());

    // An endpoint nobody listens on: its deliveries end up as missed webhooks.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = format!("http://{}/hook", closed.local_addr().unwrap());
    drop(closed);
    let endpoint = client
        .create_webhook_endpoint(endpoint_request(&dead))
        .await
        .unwrap();

    let container = client
        .create_container(container_request(None))
        .await
        .unwrap();
    let started = client
        .start_processing(processing_request(container.id))
        .await
        .unwrap();
    assert_eq!(started.container_id, Some(container.id));
    assert_eq!(started.name.as_deref(), Some("survey run"));
    assert_eq!(started.processing_json["mode"], json!("auto"));
    assert!(matches!(
        started.status,
        ProcessingStatus::Pending | ProcessingStatus::Processing
    ));

    let listed = client.list_processings_all().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].id, started.id);
    let page = client.list_processings_page(0, 10).await.unwrap();
    assert_eq!(page.num_items, 1);

    let done = wait_for_processing(&client, started.id, Duration::from_secs(30), |s| {
        *s == ProcessingStatus::Processed
    })
    .await;
    assert!(done.processing_result.is_some());
    client.list_processing_outputs(started.id).await.unwrap();
    let errors = client.list_processing_errors(started.id).await.unwrap();
    assert_eq!(
        errors
            .iter()
            .filter(|e| e.level == Some(svc_core::cloud::ProcessingErrorLevel::Error))
            .count() as u64,
        done.error_count.as_ref().map_or(0, |c| c.errors)
    );

    let archived = client.archive_processing(started.id).await.unwrap();
    assert_eq!(archived.status, ProcessingStatus::Archived);
    let e = client
        .list_processing_outputs(started.id)
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409, "outputs only while processed");
    assert_eq!(e.operation(), Some("listProcessingOutputs"));

    let deadline = Instant::now() + Duration::from_secs(30);
    let missed = loop {
        let missed = client.list_missed_webhooks_all(endpoint.id).await.unwrap();
        if !missed.is_empty() {
            break missed;
        }
        assert!(Instant::now() < deadline, "no missed webhook recorded");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(missed[0].event_type, EventType::CloudProcessingEnded);
    assert_eq!(
        missed[0].endpoint_metadata,
        Some(metadata(&[("team", "field-ops")]))
    );
    let page = client
        .list_missed_webhooks_page(endpoint.id, 0, 1)
        .await
        .unwrap();
    assert_eq!(page.len(), 1);

    let e = client.get_processing(Uuid::new_v4()).await.unwrap_err();
    assert_eq!(api_status(&e), 404);
}

#[tokio::test]
async fn webhook_endpoints_round_trip() {
    let emu = default_emulator().await;
    let client = client_for(emu.info());
    let created = client
        .create_webhook_endpoint(endpoint_request("https://hooks.example.com/svc"))
        .await
        .unwrap();
    assert_eq!(created.enabled, Some(true));
    let secret = created.secret.as_ref().unwrap().expose_secret();
    assert!(secret.starts_with("whsec_"));
    assert!(!format!("{created:?}").contains(secret));

    let updated = client
        .update_webhook_endpoint(
            created.id,
            UpdateWebhookEndpointRequest {
                enabled: Some(false),
                enabled_event_types: vec![
                    EventType::CloudProcessingProgress,
                    EventType::CloudProcessingError,
                ],
                metadata: Some(metadata(&[("team", "office")])),
                url: None,
            },
        )
        .await
        .unwrap();
    assert_eq!(updated.id, created.id);
    assert_eq!(updated.enabled, Some(false));
    assert_eq!(updated.enabled_event_types.len(), 2);
    assert_eq!(
        updated.url.as_deref(),
        Some("https://hooks.example.com/svc")
    );

    let all = client.list_webhook_endpoints_all().await.unwrap();
    assert_eq!(all, vec![updated]);

    client.delete_webhook_endpoint(created.id).await.unwrap();
    assert!(
        client
            .list_webhook_endpoints_all()
            .await
            .unwrap()
            .is_empty()
    );
    let e = client
        .delete_webhook_endpoint(created.id)
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 404);
    assert_eq!(e.operation(), Some("deleteWebhookEndpoint"));
    let e = client
        .list_missed_webhooks_all(created.id)
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 404);
}

// ------------------------------------------------------------------------------ error rules

#[tokio::test]
async fn conflicts_answer_409() {
    let emu = emulator(EmulatorConfig {
        processing_time: Duration::from_secs(120),
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());
    let container = client
        .create_container(container_request(None))
        .await
        .unwrap();
    let running = client
        .start_processing(processing_request(container.id))
        .await
        .unwrap();

    // One ongoing processing per organization.
    let e = client
        .start_processing(processing_request(container.id))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("startProcessing"));
    assert_eq!(e.title(), Some("Conflict"));
    assert!(e.details().unwrap().contains("ongoing"), "{e}");
    assert_eq!(e.retry_hint(), RetryHint::AfterChange);
    assert!(!e.is_retryable());

    // A container with a running processing cannot be deleted.
    let e = client.delete_container(container.id).await.unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("deleteContainer"));

    // Paths are unique within a container.
    let e = client
        .create_container(CreateContainerRequest {
            files: vec![file("a/x.ubx", 1), file("a/x.ubx", 2)],
            ..container_request(None)
        })
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    let other = client
        .create_container(CreateContainerRequest {
            files: vec![file("a/x.ubx", 1), file("a/y.ubx", 2)],
            ..container_request(None)
        })
        .await
        .unwrap();
    let e = client
        .add_container_files(other.id, vec![file("a/x.ubx", 3)])
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("addContainerFiles"));
    let y = other.files.iter().find(|f| f.path == "a/y.ubx").unwrap();
    let e = client
        .update_container_file(
            y.id,
            UpdateContainerFileRequest {
                path: Some("a/x.ubx".to_owned()),
                ..UpdateContainerFileRequest::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("updateContainerFile"));

    // A registered file that is not uploaded: 409 as well.
    client.cancel_processing(running.id).await.unwrap();
    let e = client
        .start_processing(processing_request(other.id))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert!(e.details().unwrap().contains("a/x.ubx"), "{e}");

    // Canceled: no longer running.
    let e = client.cancel_processing(running.id).await.unwrap_err();
    assert_eq!(api_status(&e), 409);
    assert_eq!(e.operation(), Some("cancelProcessing"));
    client.delete_container(container.id).await.unwrap();
    let p = client.get_processing(running.id).await.unwrap();
    assert_eq!(p.status, ProcessingStatus::Canceled);
    assert_eq!(p.container_id, None);

    // No processing credit left: 403.
    emu.set_credits(emu.info().organization_id, 0);
    let empty = client
        .create_container(container_request(None))
        .await
        .unwrap();
    let e = client
        .start_processing(processing_request(empty.id))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 403);
    assert!(!e.is_retryable());
}

#[tokio::test]
async fn limits_are_checked_before_anything_is_sent() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let client = &p.client;

    let too_many: Metadata = (0..51).map(|i| (format!("k{i}"), "v".to_owned())).collect();
    let long_key = "k".repeat(41);
    let cases: Vec<(CloudError, &str)> = vec![
        (
            client
                .create_container(container_request(Some(too_many.clone())))
                .await
                .unwrap_err(),
            "metadata has 51 keys",
        ),
        (
            client
                .update_container(
                    Uuid::new_v4(),
                    UpdateContainerRequest {
                        metadata: Some(metadata(&[(long_key.as_str(), "v")])),
                    },
                )
                .await
                .unwrap_err(),
            long_key.as_str(),
        ),
        (
            client
                .create_container(CreateContainerRequest {
                    files: vec![file("ok.ubx", 1), file("../outside.ubx", 1)],
                    ..container_request(None)
                })
                .await
                .unwrap_err(),
            r#"files[1].path: invalid container file path "../outside.ubx""#,
        ),
        (
            client
                .add_container_files(
                    Uuid::new_v4(),
                    vec![CreateContainerFile {
                        metadata: Some(metadata(&[("note", &"x".repeat(501))])),
                        ..file("a.ubx", 1)
                    }],
                )
                .await
                .unwrap_err(),
            r#"files[0].metadata: the value of metadata key "note""#,
        ),
        (
            client
                .add_container_files(Uuid::new_v4(), vec![file("a.ubx", -1)])
                .await
                .unwrap_err(),
            "files[0].size must not be negative",
        ),
        (
            client
                .update_container_file(
                    Uuid::new_v4(),
                    UpdateContainerFileRequest {
                        path: Some("/abs.ubx".to_owned()),
                        ..UpdateContainerFileRequest::default()
                    },
                )
                .await
                .unwrap_err(),
            r#""/abs.ubx""#,
        ),
        (
            client
                .start_processing(StartProcessingRequest {
                    metadata: Some(too_many.clone()),
                    ..processing_request(Uuid::new_v4())
                })
                .await
                .unwrap_err(),
            "51 keys",
        ),
        (
            client
                .create_webhook_endpoint(CreateWebhookEndpointRequest {
                    metadata: Some(too_many),
                    ..endpoint_request("https://hooks.example.com")
                })
                .await
                .unwrap_err(),
            "51 keys",
        ),
        (
            client.list_containers_page(-1, 10).await.unwrap_err(),
            "page -1 does not exist",
        ),
        (
            client.list_processings_page(0, 0).await.unwrap_err(),
            "perPage 0 is out of range",
        ),
        (
            client
                .list_webhook_endpoints_page(0, 101)
                .await
                .unwrap_err(),
            "perPage 101",
        ),
        (
            client
                .list_missed_webhooks_page(Uuid::new_v4(), -3, 10)
                .await
                .unwrap_err(),
            "page -3",
        ),
    ];
    for (e, needle) in &cases {
        match e {
            CloudError::InvalidInput { reason, .. } => {
                assert!(reason.contains(needle), "{reason:?} lacks {needle:?}");
            }
            other => panic!("expected InvalidInput, got {other:?}"),
        }
        assert_eq!(e.retry_hint(), RetryHint::AfterChange);
        assert!(e.to_string().contains("invalid input"), "{e}");
    }
    assert!(matches!(
        &cases[1].0,
        CloudError::InvalidInput {
            operation: "updateContainer",
            limit: Some(LimitError::MetadataKeyTooLong { length: 41, .. }),
            ..
        }
    ));
    assert!(p.auth.hits().is_empty(), "{:?}", p.auth.hits());
    assert!(p.cloud.hits().is_empty(), "{:?}", p.cloud.hits());
}

#[tokio::test]
async fn what_only_the_server_can_check_answers_422() {
    let emu = default_emulator().await;
    let client = client_for(emu.info());
    // A region this SDK does not know is sent as is (the value set may grow); this
    // server does not know it either.
    let e = client
        .create_container(CreateContainerRequest {
            region: ContainerRegion::Unknown("mars-north-1".to_owned()),
            ..container_request(None)
        })
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 422);
    assert_eq!(e.operation(), Some("createContainer"));
    assert!(e.details().unwrap().contains("mars-north-1"), "{e}");
    assert!(!e.is_retryable());
    assert!(client.list_containers_all().await.unwrap().is_empty());

    let e = client
        .create_webhook_endpoint(endpoint_request("not a url"))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 422);
    let e = client
        .create_webhook_endpoint(CreateWebhookEndpointRequest {
            enabled_event_types: Vec::new(),
            ..endpoint_request("https://hooks.example.com")
        })
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 422);
    assert_eq!(e.retry_hint(), RetryHint::AfterChange);
}

#[tokio::test]
async fn error_answers_reach_the_caller_typed_and_only_transient_ones_are_retried() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let container = p
        .client
        .create_container(container_request(None))
        .await
        .unwrap();
    let path = format!("/api/v2/containers/{}", container.id);

    // 400: typed, not retried.
    let bad = r#"{"title":"Bad Request","details":"malformed JSON body"}"#;
    p.cloud
        .on("GET", &path, 1, Action::Answer(400, bad.to_owned()));
    let e = p.client.get_container(container.id).await.unwrap_err();
    assert_eq!(api_status(&e), 400);
    assert_eq!(e.title(), Some("Bad Request"));
    assert_eq!(e.details(), Some("malformed JSON body"));
    assert_eq!(e.retry_hint(), RetryHint::AfterChange);
    assert_eq!(p.cloud.count("GET", &path), 1);

    // 500 twice, then the real answer: a read is retried.
    let failed = r#"{"title":"Internal Server Error","details":"boom"}"#;
    p.cloud
        .on("GET", &path, 2, Action::Answer(500, failed.to_owned()));
    p.client.get_container(container.id).await.unwrap();
    assert_eq!(p.cloud.count("GET", &path), 4);

    // A status the document does not list (a gateway's 503, not JSON): typed and retried.
    p.cloud.on(
        "GET",
        &path,
        1,
        Action::Answer(503, "upstream down".to_owned()),
    );
    p.client.get_container(container.id).await.unwrap();
    assert_eq!(p.cloud.count("GET", &path), 6);
    p.cloud.on(
        "GET",
        &path,
        100,
        Action::Answer(503, "upstream down".to_owned()),
    );
    let e = p.client.get_container(container.id).await.unwrap_err();
    assert_eq!(api_status(&e), 503);
    assert_eq!(e.title(), Some("Service Unavailable"));
    assert_eq!(e.details(), Some("upstream down"));
    assert!(e.is_retryable());
    assert_eq!(
        p.cloud.count("GET", &path),
        6 + 8,
        "bounded by max_attempts"
    );
    p.cloud.state.rules.lock().unwrap().clear();

    // A 500 to a creation is not retried: it does not say what was applied.
    let create = format!(
        "/api/v2/organizations/{}/containers",
        emu.info().organization_id
    );
    p.cloud
        .on("POST", &create, 1, Action::Answer(500, failed.to_owned()));
    let e = p
        .client
        .create_container(container_request(None))
        .await
        .unwrap_err();
    assert_eq!(api_status(&e), 500);
    assert_eq!(e.retry_hint(), RetryHint::Transient);
    assert_eq!(
        p.cloud.count("POST", &create),
        2,
        "the first creation and this one"
    );
}

#[tokio::test]
async fn a_lost_answer_is_never_a_duplicate_creation() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |c| {
        c.request_timeout = Duration::from_secs(1);
    })
    .await;
    p.client.server_info().await.unwrap();
    let create = format!(
        "/api/v2/organizations/{}/containers",
        emu.info().organization_id
    );

    // The service creates the container, but the answer is lost (timeout).
    p.cloud.on(
        "POST",
        &create,
        1,
        Action::LoseAnswer(Duration::from_secs(3)),
    );
    let e = p
        .client
        .create_container(container_request(Some(metadata(&[("n", "1")]))))
        .await
        .unwrap_err();
    match &e {
        CloudError::Transport {
            kind, operation, ..
        } => {
            assert_eq!(*kind, TransportKind::Timeout);
            assert!(kind.may_have_reached_service());
            assert_eq!(*operation, "createContainer");
        }
        other => panic!("expected a transport error, got {other:?}"),
    }
    assert!(e.is_retryable(), "the caller may decide to try again");
    assert_eq!(
        p.cloud.count("POST", &create),
        1,
        "not repeated by the client"
    );
    let all = p.client.list_containers_all().await.unwrap();
    assert_eq!(all.len(), 1, "exactly one container exists");

    // A delete whose answer is lost is repeated; the 404 that follows is its success.
    let path = format!("/api/v2/containers/{}", all[0].id);
    p.cloud.on(
        "DELETE",
        &path,
        1,
        Action::LoseAnswer(Duration::from_secs(3)),
    );
    p.client.delete_container(all[0].id).await.unwrap();
    assert_eq!(p.cloud.count("DELETE", &path), 2);
    assert!(p.client.list_containers_all().await.unwrap().is_empty());
}

// ------------------------------------------------------------------------------ lists

#[tokio::test]
async fn lists_are_streams_over_every_page() {
    let emu = default_emulator().await;
    let p = proxied(emu.info(), |_| {}).await;
    let client = &p.client;
    let created: BTreeSet<Uuid> = futures::stream::iter(0..23)
        .map(|i| {
            let client = client.clone();
            async move {
                client
                    .create_container(container_request(Some(metadata(&[("n", &i.to_string())]))))
                    .await
                    .map(|c| c.id)
            }
        })
        .buffer_unordered(6)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(created.len(), 23);

    // Page by page.
    let mut paged = BTreeSet::new();
    for (page, expected) in [(0, 5), (1, 5), (2, 5), (3, 5), (4, 3), (5, 0)] {
        let list = client.list_containers_page(page, 5).await.unwrap();
        assert_eq!(list.num_items, 23);
        assert_eq!(list.containers.len(), expected, "page {page}");
        paged.extend(list.containers.iter().map(|c| c.id));
    }
    assert_eq!(paged, created);

    // The stream with the default page size: one request.
    let before = p.cloud.count("GET", "/api/v2/organizations");
    let streamed: Vec<Uuid> = client
        .list_containers()
        .map_ok(|c| c.id)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(streamed.len(), 23);
    assert_eq!(streamed.iter().copied().collect::<BTreeSet<_>>(), created);
    assert_eq!(p.cloud.count("GET", "/api/v2/organizations"), before + 1);

    // With pages of 5: 5 requests, stopping at the short one.
    let mut config = client.config();
    config.page_size = 5;
    let small = CloudClient::new(config).unwrap();
    let before = p.cloud.count("GET", "/api/v2/organizations");
    let all = small.list_containers_all().await.unwrap();
    assert_eq!(all.iter().map(|c| c.id).collect::<BTreeSet<_>>(), created);
    assert_eq!(all.len(), 23, "no duplicate across pages");
    assert_eq!(p.cloud.count("GET", "/api/v2/organizations"), before + 5);

    // Webhook endpoints (a bare array, no total): pages until a short one.
    let notification = Proxy::start(&emu.info().notification_url).await;
    let mut config = small.config();
    config.notification_url = notification.url.clone();
    let small = CloudClient::new(config).unwrap();
    for i in 0..12 {
        small
            .create_webhook_endpoint(endpoint_request(&format!("https://hooks.example.com/{i}")))
            .await
            .unwrap();
    }
    let endpoints: Vec<_> = small.list_webhook_endpoints().try_collect().await.unwrap();
    assert_eq!(endpoints.len(), 12);
    assert_eq!(
        notification.count("GET", "/api/v2/organizations"),
        3,
        "5 + 5 + 2"
    );

    // The stream is 'static: it can move to another task.
    let handle = tokio::spawn(small.list_containers().try_collect::<Vec<_>>());
    assert_eq!(handle.await.unwrap().unwrap().len(), 23);
}

// ------------------------------------------------------------------------------ faults

#[tokio::test]
async fn injected_faults_are_retried_where_safe() {
    let emu = emulator(EmulatorConfig {
        faults: FaultConfig {
            rate: 0.2,
            delay: Duration::from_millis(20),
            ..FaultConfig::default()
        },
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());

    // Creations: a 500 before the handler creates nothing; a cut answer comes after it.
    // Neither is repeated by the client; both are reported as retryable.
    let (mut created, mut cut, mut failed) = (BTreeSet::new(), BTreeSet::new(), 0);
    let mut n = 0;
    while (n < 30 || cut.is_empty()) && n < 300 {
        n += 1;
        let request = container_request(Some(metadata(&[("n", &n.to_string())])));
        match client.create_container(request).await {
            Ok(_) => {
                created.insert(n);
            }
            Err(e) => {
                assert_eq!(e.retry_hint(), RetryHint::Transient, "{e:?}");
                match &e {
                    CloudError::Transport { kind, .. } => {
                        assert!(kind.may_have_reached_service(), "{e:?}");
                        cut.insert(n);
                    }
                    CloudError::Api { status: 500, .. } => failed += 1,
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
    }
    assert!(!cut.is_empty(), "no cut answer in {n} creations");

    // Reads are retried: every one succeeds.
    let all = client.list_containers_all().await.unwrap();
    let mut seen: Vec<usize> = all
        .iter()
        .map(|c| c.metadata.as_ref().unwrap()["n"].parse().unwrap())
        .collect();
    seen.sort_unstable();
    let expected: Vec<usize> = created.union(&cut).copied().collect();
    assert_eq!(
        seen, expected,
        "each creation made at most one container: the answered ones and the cut ones"
    );
    println!(
        "{n} creations: {} answered, {} cut, {failed} failed",
        created.len(),
        cut.len()
    );

    let ids: Vec<Uuid> = all.iter().map(|c| c.id).collect();
    let results: Vec<_> = futures::stream::iter(ids.iter().copied().cycle().take(60))
        .map(|id| {
            let client = client.clone();
            async move { client.get_container(id).await }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert!(results.iter().all(Result::is_ok), "{results:?}");
    for _ in 0..10 {
        client.server_info().await.unwrap();
        client.list_processings_page(0, 10).await.unwrap();
    }
}
