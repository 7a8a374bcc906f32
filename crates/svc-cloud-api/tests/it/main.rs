//! Round trips of the generated cloud and notification clients against an in-test
//! HTTP server: the request as the server sees it, and the answer as the client decodes it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: fixed inputs, a panic is a failure

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use svc_cloud_api::enums::{ContainerRegion, ProcessingStatus, ProcessingStep};
use svc_cloud_api::{AccessToken, CloudState, cloud, notification};

mod tolerant;
use uuid::Uuid;

const TOKEN: &str = "tok-123";
const PROCESSING_ID: &str = "7b0c4f8e-2a59-4c43-9d8e-0a1b2c3d4e5f";
const ORG_ID: &str = "11111111-2222-4333-8444-555555555555";

/// What the server saw of one request.
#[derive(Clone, Debug)]
struct Seen {
    method: String,
    path_and_query: String,
    authorization: Option<String>,
    body: Value,
}

#[derive(Clone, Default)]
struct Server {
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn last(&self) -> Seen {
        self.seen
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("the server saw a request")
    }
}

fn processing_json(status: &str) -> Value {
    json!({
        "id": PROCESSING_ID,
        "name": null,
        "type": "gnss",
        "status": status,
        "region": "eu-west-3",
        "processingResult": null,
        "processingDuration": null,
        "processingStep": "import",
        "processingProgress": 0.25,
        "archiveScheduledAt": null,
        "createdAt": "2026-01-02T03:04:05.678Z",
        "updatedAt": "2026-01-02T03:04:06.000Z",
        "creatorId": ORG_ID,
        "organizationId": ORG_ID,
        "containerId": null,
        "errorCount": {"errors": 0, "warnings": 2},
        "missionLength": null,
        "missionLocationCountry": null,
        "missionLocationRegion": null,
        "missionLocationPlace": null,
        "metadata": {"b": "2", "a": "1"},
        "processingJson": {"mode": "auto"},
        "aFieldFromTheFuture": {"ignored": true}
    })
}

fn error(status: StatusCode, title: &str, details: &str) -> Response {
    (
        status,
        axum::Json(json!({"title": title, "details": details})),
    )
        .into_response()
}

/// A tiny stand-in for the service: checks the bearer token, then answers by route.
async fn handle(State(server): State<Server>, request: Request) -> Response {
    let method = request.method().to_string();
    let path_and_query = request
        .uri()
        .path_and_query()
        .map(|p| p.to_string())
        .unwrap_or_default();
    let authorization = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let bytes = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let body = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    server.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path_and_query: path_and_query.clone(),
        authorization: authorization.clone(),
        body,
    });
    if authorization.is_none() {
        return error(
            StatusCode::UNAUTHORIZED,
            "Unauthorized",
            "No bearer token found in the authorization header",
        );
    }
    let path = path_and_query.split('?').next().unwrap_or_default();
    match (method.as_str(), path) {
        ("GET", p) if p == format!("/api/v2/processings/{PROCESSING_ID}") => {
            (StatusCode::OK, axum::Json(processing_json("paused"))).into_response()
        }
        ("POST", p) if p == format!("/api/v2/organizations/{ORG_ID}/containers") => {
            // 201, as the real service answers on some creations.
            let container = json!({
                "id": Uuid::new_v4(), "status": "valid", "region": "eu-west-3",
                "expirationDate": "2026-02-01T03:04:05.678Z",
                "createdAt": "2026-01-02T03:04:05.678Z", "updatedAt": "2026-01-02T03:04:05.678Z",
                "creatorId": ORG_ID, "organizationId": ORG_ID, "metadata": {},
                "files": [{
                    "id": Uuid::new_v4(), "type": "input", "status": "pending", "size": 42,
                    "path": "rover/gnss.nmea",
                    "createdAt": "2026-01-02T03:04:05.678Z", "updatedAt": "2026-01-02T03:04:05.678Z",
                    "creatorId": ORG_ID, "metadata": {},
                    "uploadInfo": {"url": "http://storage/bucket", "fields": {
                        "key": "k", "bucket": "b", "X-Amz-Algorithm": "AWS4-HMAC-SHA256",
                        "X-Amz-Credential": "c", "X-Amz-Date": "20260102T030405Z",
                        "Policy": "cG9saWN5", "X-Amz-Signature": "abcd"}}
                }]
            });
            (StatusCode::CREATED, axum::Json(container)).into_response()
        }
        ("DELETE", _) => StatusCode::OK.into_response(),
        ("POST", p) if p == format!("/api/v2/processings/{PROCESSING_ID}") => {
            // Cancel: the body is not to be relied on; here it is some JSON.
            (StatusCode::OK, axum::Json(json!({"whatever": 1}))).into_response()
        }
        ("GET", p) if p == format!("/api/v2/organizations/{ORG_ID}/webhook-endpoints") => {
            let endpoints = json!([{
                "id": Uuid::new_v4(), "url": "https://example.com/hook",
                "enabledEventTypes": ["cloud:processing-ended", "cloud:some-new-event"],
                "secret": format!("whsec_{}", "ab".repeat(32)), "enabled": true, "metadata": {}
            }]);
            (StatusCode::OK, axum::Json(endpoints)).into_response()
        }
        _ => error(
            StatusCode::NOT_FOUND,
            "Not Found",
            &format!("no resource at {path}"),
        ),
    }
}

async fn start() -> (String, Server) {
    let server = Server::default();
    let app = Router::new().fallback(handle).with_state(server.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, server)
}

fn authed() -> CloudState {
    CloudState::with_static_token(AccessToken::new(TOKEN))
}

#[tokio::test]
async fn get_processing_sends_bearer_and_keeps_unknown_status() {
    let (url, server) = start().await;
    let client = cloud::Client::new(&url, authed());
    let id: Uuid = PROCESSING_ID.parse().unwrap();
    let processing = client
        .get_processing()
        .processing_id(id)
        .send()
        .await
        .unwrap()
        .into_inner();

    let seen = server.last();
    assert_eq!(seen.method, "GET");
    assert_eq!(
        seen.path_and_query,
        format!("/api/v2/processings/{PROCESSING_ID}")
    );
    assert_eq!(seen.authorization.as_deref(), Some("Bearer tok-123"));

    // An unknown status is kept, not a decoding failure; known values decode as such.
    assert_eq!(
        processing.status,
        ProcessingStatus::Unknown("paused".into())
    );
    assert!(!processing.status.is_known());
    assert_eq!(processing.processing_step, Some(ProcessingStep::Import));
    assert_eq!(processing.processing_result, None);
    assert_eq!(processing.container_id, None);
    assert_eq!(processing.processing_progress, Some(0.25));
    assert_eq!(processing.error_count.as_ref().map(|c| c.warnings), Some(2));
    // Metadata keeps the order it was sent in.
    let keys: Vec<_> = processing
        .metadata
        .as_ref()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys, ["b", "a"]);
    assert_eq!(processing.processing_json.get("mode"), Some(&json!("auto")));
    // Serializing back writes the wire value of the unknown status.
    assert_eq!(
        serde_json::to_value(&processing).unwrap()["status"],
        json!("paused")
    );
}

#[tokio::test]
async fn error_body_is_decoded() {
    let (url, _server) = start().await;
    let client = cloud::Client::new(&url, authed());
    let err = client
        .get_container()
        .container_id(Uuid::new_v4())
        .send()
        .await
        .unwrap_err();
    assert_eq!(err.status(), Some(reqwest::StatusCode::NOT_FOUND));
    let cloud::Error::ErrorResponse(body) = err else {
        panic!("expected a documented error, got {err:?}")
    };
    assert_eq!(body.title, "Not Found");
    assert!(
        body.details
            .starts_with("no resource at /api/v2/containers/"),
        "{}",
        body.details
    );
}

#[tokio::test]
async fn missing_token_gives_the_401_details() {
    let (url, _server) = start().await;
    let client = cloud::Client::new(&url, CloudState::anonymous());
    let err = client
        .get_processing()
        .processing_id(Uuid::new_v4())
        .send()
        .await
        .unwrap_err();
    let cloud::Error::ErrorResponse(body) = err else {
        panic!("expected a documented error, got {err:?}")
    };
    assert_eq!(body.status(), reqwest::StatusCode::UNAUTHORIZED);
    assert_eq!(
        body.details,
        "No bearer token found in the authorization header"
    );
}

#[tokio::test]
async fn create_container_accepts_201_and_keeps_upload_field_order() {
    let (url, server) = start().await;
    let client = cloud::Client::new(&url, authed());
    let request = cloud::types::CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata: None,
        files: vec![cloud::types::CreateContainerFile {
            path: "rover/gnss.nmea".into(),
            type_: svc_cloud_api::enums::ContainerFileType::Input,
            size: 42,
            metadata: None,
        }],
    };
    let org: Uuid = ORG_ID.parse().unwrap();
    let response = client
        .create_container()
        .organization_id(org)
        .body(request)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::CREATED);

    let seen = server.last();
    assert_eq!(seen.method, "POST");
    assert_eq!(
        seen.body,
        json!({"region": "eu-west-3", "files": [{"path": "rover/gnss.nmea", "type": "input", "size": 42}]}),
        "optional fields left out are not sent"
    );

    let container = response.into_inner();
    let info = container.files[0]
        .upload_info
        .as_ref()
        .expect("a pending file has upload info");
    let order: Vec<_> = info.fields.keys().map(String::as_str).collect();
    assert_eq!(
        order,
        [
            "key",
            "bucket",
            "X-Amz-Algorithm",
            "X-Amz-Credential",
            "X-Amz-Date",
            "Policy",
            "X-Amz-Signature"
        ]
    );
}

#[tokio::test]
async fn delete_and_cancel_accept_any_body() {
    let (url, _server) = start().await;
    let client = cloud::Client::new(&url, authed());
    client
        .delete_container()
        .container_id(Uuid::new_v4())
        .send()
        .await
        .unwrap();
    let id: Uuid = PROCESSING_ID.parse().unwrap();
    client
        .cancel_processing()
        .processing_id(id)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn notification_list_sends_paging_and_redacts_the_secret() {
    let (url, server) = start().await;
    let client = notification::Client::new(&url, authed());
    let org: Uuid = ORG_ID.parse().unwrap();
    let endpoints = client
        .list_webhook_endpoints()
        .organization_id(org)
        .page(0)
        .per_page(10)
        .send()
        .await
        .unwrap()
        .into_inner();

    let seen = server.last();
    assert_eq!(
        seen.path_and_query,
        format!("/api/v2/organizations/{ORG_ID}/webhook-endpoints?page=0&perPage=10")
    );
    assert_eq!(seen.authorization.as_deref(), Some("Bearer tok-123"));

    let endpoint = &endpoints[0];
    assert_eq!(
        endpoint
            .secret
            .as_ref()
            .map(|s| s.expose_secret().to_owned()),
        Some(format!("whsec_{}", "ab".repeat(32)))
    );
    assert!(
        !format!("{endpoint:?}").contains("whsec_"),
        "the secret never shows in Debug"
    );
    assert_eq!(
        endpoint.enabled_event_types[1],
        svc_cloud_api::enums::EventType::Unknown("cloud:some-new-event".into())
    );
}

#[tokio::test]
async fn per_page_zero_is_refused_before_sending() {
    let (url, server) = start().await;
    let client = notification::Client::new(&url, authed());
    let err = client
        .list_webhook_endpoints()
        .organization_id(Uuid::nil())
        .page(0)
        .per_page(0)
        .send()
        .await
        .unwrap_err();
    assert!(
        matches!(err, notification::Error::InvalidRequest(_)),
        "{err:?}"
    );
    assert!(server.seen.lock().unwrap().is_empty(), "nothing was sent");
}

#[test]
fn open_enums_round_trip_every_known_value() {
    for value in ProcessingStatus::KNOWN {
        let parsed: ProcessingStatus = serde_json::from_value(json!(value)).unwrap();
        assert!(parsed.is_known(), "{value}");
        assert_eq!(parsed.as_str(), *value);
        assert_eq!(parsed.to_string(), *value);
    }
    assert_eq!(
        ProcessingStatus::from("canceled"),
        ProcessingStatus::Canceled
    );
}
