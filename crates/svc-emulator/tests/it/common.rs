//! Helpers shared by every module: a started emulator with an administrator token, plain
//! HTTP calls with reqwest, error-body checks, uploads to object storage, polling of
//! processings and webhook signature checks (the NMEA track and the field lists come from
//! `svc_test_support`, shared with svc-core's tests).

use std::future::Future;
use std::time::{Duration, Instant};

use base64::Engine as _;
use hmac::{Hmac, KeyInit as _, Mac as _};
use reqwest::multipart::{Form, Part};
use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use sha2::Sha256;
use svc_emulator::receiver::ReceivedDelivery;
use svc_emulator::{Emulator, EmulatorConfig, EmulatorInfo};
use svc_test_support::PROCESSING_FIELDS;
pub use svc_test_support::UPLOAD_FIELDS;
pub use svc_test_support::nmea::{nmea_sentence, nmea_track};

/// The processing steps, in the order of `openapi/cloud.yaml` (`ProcessingStep`).
pub const STEPS: [&str; 6] = [
    "import",
    "base_station",
    "preprocessing",
    "processing",
    "export",
    "report",
];
/// The container regions of the specification.
pub const REGIONS: [&str; 4] = ["eu-west-3", "us-west-1", "ap-northeast-1", "ap-southeast-2"];
/// The exact `details` of a 401 without a bearer token.
pub const NO_BEARER: &str = "No bearer token found in the authorization header";
/// How long any wait for a state may last before the test fails.
pub const DEADLINE: Duration = Duration::from_secs(10);
/// Poll period.
pub const POLL: Duration = Duration::from_millis(20);
/// Fixes in the default NMEA track (1 Hz).
pub const FIXES: usize = 60;

/// The configuration every test starts from: quick processings, millisecond retries.
pub fn config() -> EmulatorConfig {
    EmulatorConfig {
        processing_time: Duration::from_millis(400),
        webhook_retry_base: Duration::from_millis(5),
        webhook_retry_cap: Duration::from_millis(20),
        ..Default::default()
    }
}

pub fn client() -> Client {
    Client::builder()
        .timeout(Duration::from_secs(20))
        .build()
        .expect("http client")
}

/// One HTTP answer, its body read as text and (when it is JSON) parsed.
#[derive(Debug)]
pub struct Resp {
    pub status: StatusCode,
    pub text: String,
    pub json: Value,
    pub content_type: String,
}

impl Resp {
    pub async fn read(response: reqwest::Response) -> Self {
        let status = response.status();
        let content_type = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let text = response.text().await.expect("response body");
        let json = serde_json::from_str(&text).unwrap_or(Value::Null);
        Self {
            status,
            text,
            json,
            content_type,
        }
    }

    /// Asserts a 200 success and returns the JSON body.
    #[track_caller]
    pub fn ok(&self) -> &Value {
        assert_eq!(
            self.status,
            StatusCode::OK,
            "expected 200, got {} with body {}",
            self.status,
            self.text
        );
        &self.json
    }

    /// Asserts a 201 success (adding files to a container answers it, as the service
    /// does) and returns the JSON body.
    #[track_caller]
    pub fn created(&self) -> &Value {
        assert_eq!(
            self.status,
            StatusCode::CREATED,
            "expected 201, got {} with body {}",
            self.status,
            self.text
        );
        &self.json
    }

    /// Asserts an error status with a JSON `{title, details}` body; returns `details`.
    #[track_caller]
    pub fn err(&self, status: u16) -> String {
        assert_eq!(
            self.status.as_u16(),
            status,
            "expected {status}, got {} with body {}",
            self.status,
            self.text
        );
        assert!(
            self.content_type.starts_with("application/json"),
            "error bodies are application/json, got {:?}: {}",
            self.content_type,
            self.text
        );
        assert_error_body(&self.json, &self.text)
    }
}

/// Checks the error body of the specification: `title` and `details`, non-empty strings.
#[track_caller]
pub fn assert_error_body(json: &Value, text: &str) -> String {
    let title = json.get("title").and_then(Value::as_str);
    let details = json.get("details").and_then(Value::as_str);
    assert!(
        title.is_some_and(|t| !t.is_empty()),
        "error body without a `title` string: {text}"
    );
    assert!(
        details.is_some_and(|d| !d.is_empty()),
        "error body without a `details` string: {text}"
    );
    details.unwrap_or_default().to_owned()
}

// ---------------------------------------------------------------------------------------
// Tokens

/// The discovery document of the identity provider.
pub async fn discovery(http: &Client, auth_url: &str) -> Value {
    let r = Resp::read(
        http.get(format!("{auth_url}/.well-known/openid-configuration"))
            .send()
            .await
            .expect("discovery"),
    )
    .await;
    r.ok().clone()
}

pub async fn token_endpoint(http: &Client, auth_url: &str) -> String {
    discovery(http, auth_url).await["token_endpoint"]
        .as_str()
        .expect("token_endpoint")
        .to_owned()
}

/// The raw answer of a `password` grant (the real service's flow).
pub async fn password_grant(http: &Client, auth_url: &str, key: &str, secret: &str) -> Resp {
    let endpoint = token_endpoint(http, auth_url).await;
    let form = [
        ("grant_type", "password"),
        ("client_id", "api-key"),
        ("username", key),
        ("password", secret),
        ("scope", "openid"),
    ];
    Resp::read(
        http.post(endpoint)
            .form(&form)
            .send()
            .await
            .expect("token request"),
    )
    .await
}

/// The raw answer of a `password` grant posted as the vendor's samples post it: to the
/// token endpoint of a Keycloak realm, without a scope, with the administrator's key
/// and `secret`.
pub async fn realm_token(env: &Env, secret: &str) -> Resp {
    let form = [
        ("username", env.info.api_key.as_str()),
        ("password", secret),
        ("grant_type", "password"),
        ("client_id", "api-key"),
    ];
    let url = format!(
        "{}/realms/sbg/protocol/openid-connect/token",
        env.info.auth_url
    );
    Resp::read(
        env.http
            .post(url)
            .form(&form)
            .send()
            .await
            .expect("token request"),
    )
    .await
}

/// The raw answer of a `client_credentials` grant.
pub async fn client_credentials_grant(
    http: &Client,
    auth_url: &str,
    key: &str,
    secret: &str,
) -> Resp {
    let endpoint = token_endpoint(http, auth_url).await;
    let form = [
        ("grant_type", "client_credentials"),
        ("client_id", key),
        ("client_secret", secret),
    ];
    Resp::read(
        http.post(endpoint)
            .form(&form)
            .send()
            .await
            .expect("token request"),
    )
    .await
}

/// An access token for a key (password grant), asserting the grant succeeds.
pub async fn token(http: &Client, auth_url: &str, key: &str, secret: &str) -> String {
    let r = password_grant(http, auth_url, key, secret).await;
    r.ok()["access_token"]
        .as_str()
        .expect("access_token")
        .to_owned()
}

// ---------------------------------------------------------------------------------------
// The emulator under test

pub struct Env {
    pub emu: Emulator,
    pub info: EmulatorInfo,
    pub http: Client,
    pub token: String,
}

impl Env {
    pub async fn start() -> Self {
        Self::with(config()).await
    }

    pub async fn with(config: EmulatorConfig) -> Self {
        let emu = Emulator::start(config).await.expect("the emulator starts");
        let info = emu.info().clone();
        let http = client();
        let token = token(&http, &info.auth_url, &info.api_key, &info.api_secret).await;
        Self {
            emu,
            info,
            http,
            token,
        }
    }

    pub fn org(&self) -> String {
        self.info.organization_id.to_string()
    }

    /// A token of the other organization's administrator, and that organization's id.
    pub async fn other_org(&self) -> (String, String) {
        let other = self
            .info
            .organizations
            .iter()
            .find(|o| o.organization_id != self.info.organization_id)
            .expect("a second organization");
        let token = token(
            &self.http,
            &self.info.auth_url,
            &other.api_key,
            &other.api_secret,
        )
        .await;
        (token, other.organization_id.to_string())
    }

    pub fn cloud(&self, path: &str) -> String {
        format!("{}{path}", self.info.base_url)
    }

    pub fn notif(&self, path: &str) -> String {
        format!("{}{path}", self.info.notification_url)
    }

    /// A request with an optional bearer token and an optional JSON body.
    pub async fn call_as(
        &self,
        token: Option<&str>,
        method: Method,
        url: &str,
        body: Option<&Value>,
    ) -> Resp {
        let mut request = self.http.request(method, url);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(body) = body {
            request = request.json(body);
        }
        Resp::read(request.send().await.expect("request sent")).await
    }

    /// A request with the administrator token and a raw body.
    pub async fn call_raw(&self, method: Method, url: &str, body: &str) -> Resp {
        let request = self
            .http
            .request(method, url)
            .bearer_auth(&self.token)
            .header("content-type", "application/json")
            .body(body.to_owned());
        Resp::read(request.send().await.expect("request sent")).await
    }

    pub async fn get(&self, path: &str) -> Resp {
        self.call_as(Some(&self.token), Method::GET, &self.cloud(path), None)
            .await
    }
    pub async fn post(&self, path: &str, body: &Value) -> Resp {
        self.call_as(
            Some(&self.token),
            Method::POST,
            &self.cloud(path),
            Some(body),
        )
        .await
    }
    pub async fn post_empty(&self, path: &str) -> Resp {
        self.call_as(Some(&self.token), Method::POST, &self.cloud(path), None)
            .await
    }
    pub async fn patch(&self, path: &str, body: &Value) -> Resp {
        self.call_as(
            Some(&self.token),
            Method::PATCH,
            &self.cloud(path),
            Some(body),
        )
        .await
    }
    pub async fn delete(&self, path: &str) -> Resp {
        self.call_as(Some(&self.token), Method::DELETE, &self.cloud(path), None)
            .await
    }
    pub async fn nget(&self, path: &str) -> Resp {
        self.call_as(Some(&self.token), Method::GET, &self.notif(path), None)
            .await
    }
    pub async fn npost(&self, path: &str, body: &Value) -> Resp {
        self.call_as(
            Some(&self.token),
            Method::POST,
            &self.notif(path),
            Some(body),
        )
        .await
    }
    pub async fn npatch(&self, path: &str, body: &Value) -> Resp {
        self.call_as(
            Some(&self.token),
            Method::PATCH,
            &self.notif(path),
            Some(body),
        )
        .await
    }
    pub async fn ndelete(&self, path: &str) -> Resp {
        self.call_as(Some(&self.token), Method::DELETE, &self.notif(path), None)
            .await
    }

    // ----- containers and files -------------------------------------------------------

    /// Creates a container (region `eu-west-3`) with the given `files`; asserts 200.
    pub async fn create_container(&self, files: Value) -> Value {
        let body = json!({"region": "eu-west-3", "files": files});
        self.post(
            &format!("/api/v2/organizations/{}/containers", self.org()),
            &body,
        )
        .await
        .ok()
        .clone()
    }

    pub async fn container(&self, id: &str) -> Value {
        self.get(&format!("/api/v2/containers/{id}"))
            .await
            .ok()
            .clone()
    }

    /// Creates a container holding one input file with these bytes, uploads it and
    /// checks it is `ready`. Returns the container id.
    pub async fn uploaded_container(&self, path: &str, bytes: &[u8]) -> String {
        let container = self
            .create_container(json!([{"path": path, "type": "input", "size": bytes.len()}]))
            .await;
        let id = container["id"].as_str().expect("container id").to_owned();
        let (status, body) = upload(&self.http, &container["files"][0], bytes.to_vec()).await;
        assert_eq!(status, 204, "upload answered {status}: {body}");
        let container = self.container(&id).await;
        assert_eq!(container["files"][0]["status"], "ready", "{container}");
        id
    }

    /// A container with the default NMEA track uploaded.
    pub async fn nmea_container(&self) -> String {
        self.uploaded_container("rover/track.nmea", nmea_track(FIXES).as_bytes())
            .await
    }

    // ----- processings ----------------------------------------------------------------

    pub async fn start_processing_raw(&self, body: &Value) -> Resp {
        self.post(
            &format!("/api/v2/organizations/{}/processings", self.org()),
            body,
        )
        .await
    }

    /// Starts a processing of a container; asserts 200 and returns the processing.
    pub async fn start_processing(&self, container_id: &str) -> Value {
        let body = json!({"containerId": container_id, "processingJson": {"mode": "auto"}});
        self.start_processing_raw(&body).await.ok().clone()
    }

    pub async fn processing(&self, id: &str) -> Value {
        self.get(&format!("/api/v2/processings/{id}"))
            .await
            .ok()
            .clone()
    }

    /// Polls a processing every 20 ms until `done` holds (fails after 10 s).
    pub async fn wait_processing(
        &self,
        id: &str,
        what: &str,
        done: impl Fn(&Value) -> bool,
    ) -> Value {
        let deadline = Instant::now() + DEADLINE;
        loop {
            let p = self.processing(id).await;
            if done(&p) {
                return p;
            }
            assert!(
                Instant::now() < deadline,
                "processing {id} not {what} after {DEADLINE:?}: {p}"
            );
            tokio::time::sleep(POLL).await;
        }
    }

    /// Polls a processing until it is no longer `pending` or `processing`.
    pub async fn wait_end(&self, id: &str) -> Value {
        self.wait_processing(id, "ended", |p| {
            !matches!(p["status"].as_str(), Some("pending" | "processing"))
        })
        .await
    }

    /// Runs a whole processing of the default NMEA track; returns the ended processing.
    pub async fn run_nmea_processing(&self) -> Value {
        let container = self.nmea_container().await;
        let started = self.start_processing(&container).await;
        self.wait_end(started["id"].as_str().expect("id")).await
    }

    /// The output list of a processing; asserts 200.
    pub async fn outputs(&self, id: &str) -> Vec<Value> {
        let r = self.get(&format!("/api/v2/processings/{id}/output")).await;
        r.ok()
            .as_array()
            .unwrap_or_else(|| panic!("outputs must be a bare JSON array: {}", r.text))
            .clone()
    }

    // ----- webhook endpoints ----------------------------------------------------------

    /// Creates a webhook endpoint; asserts 200 and an array of one; returns the endpoint.
    pub async fn create_endpoint(&self, url: &str, types: &[&str], metadata: Value) -> Value {
        let body = json!({"url": url, "enabledEventTypes": types, "metadata": metadata});
        let r = self
            .npost(
                &format!("/api/v2/organizations/{}/webhook-endpoints", self.org()),
                &body,
            )
            .await;
        let list = r
            .ok()
            .as_array()
            .unwrap_or_else(|| panic!("create endpoint must answer an array: {}", r.text));
        assert_eq!(list.len(), 1, "{}", r.text);
        list[0].clone()
    }
}

/// Polls `probe` every 20 ms until it yields a value (fails after `limit`).
pub async fn poll<T, F, Fut>(what: &str, limit: Duration, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: not reached within {limit:?}"
        );
        tokio::time::sleep(POLL).await;
    }
}

// ---------------------------------------------------------------------------------------
// Uploads

/// The `uploadInfo.fields` of a file, as ordered pairs.
pub fn upload_fields(file: &Value) -> Vec<(String, String)> {
    file["uploadInfo"]["fields"]
        .as_object()
        .unwrap_or_else(|| panic!("file without uploadInfo.fields: {file}"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().expect("string field").to_owned()))
        .collect()
}

pub fn upload_url(file: &Value) -> String {
    file["uploadInfo"]["url"]
        .as_str()
        .unwrap_or_else(|| panic!("file without uploadInfo.url: {file}"))
        .to_owned()
}

/// A multipart POST: `fields` in order, then `file` (if any), then `after`. Every part has a
/// known length, so reqwest sends a Content-Length.
pub async fn post_form(
    http: &Client,
    url: &str,
    fields: &[(String, String)],
    file: Option<Vec<u8>>,
    after: &[(String, String)],
) -> (u16, String) {
    let mut form = Form::new();
    for (k, v) in fields {
        form = form.text(k.clone(), v.clone());
    }
    if let Some(bytes) = file {
        form = form.part("file", Part::bytes(bytes).file_name("upload.bin"));
    }
    for (k, v) in after {
        form = form.text(k.clone(), v.clone());
    }
    let response = http
        .post(url)
        .multipart(form)
        .send()
        .await
        .expect("upload sent");
    let status = response.status().as_u16();
    (status, response.text().await.unwrap_or_default())
}

/// The upload protocol: every field in order, then `file` last.
pub async fn upload(http: &Client, file: &Value, bytes: Vec<u8>) -> (u16, String) {
    post_form(
        http,
        &upload_url(file),
        &upload_fields(file),
        Some(bytes),
        &[],
    )
    .await
}

/// Storage error bodies are storage-defined: they must explain the error (an S3-style
/// `<Error><Code>..</Code><Message>..</Message></Error>` or a JSON `{title, details}`).
#[track_caller]
pub fn assert_storage_error(body: &str) {
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let xml = body.contains("<Error>") && body.contains("<Code>") && body.contains("<Message>");
    let is_json = json.get("title").and_then(Value::as_str).is_some()
        && json.get("details").and_then(Value::as_str).is_some();
    assert!(
        xml || is_json,
        "storage error without an explanation: {body:?}"
    );
}

/// The decoded `Policy` of an upload form.
pub fn decode_policy(file: &Value) -> Value {
    let fields = upload_fields(file);
    let policy = &fields
        .iter()
        .find(|(k, _)| k == "Policy")
        .expect("Policy field")
        .1;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(policy)
        .expect("Policy is base64");
    serde_json::from_slice(&bytes).expect("Policy is JSON")
}

// ---------------------------------------------------------------------------------------
// Webhooks

/// Lowercase hex HMAC-SHA256 keyed with the secret, over `timestamp.body`.
pub fn sign(secret: &str, timestamp: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("any key length");
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// Checks one delivery: signature recomputed with the secret, timestamp in whole seconds
/// near now (not before `since`), a WebhookEvent body. Returns the parsed body.
#[track_caller]
pub fn check_delivery(
    d: &ReceivedDelivery,
    secret: &str,
    since: i64,
    endpoint_metadata: &Value,
) -> Value {
    let body_text = String::from_utf8_lossy(&d.body);
    let timestamp = d
        .timestamp
        .as_deref()
        .unwrap_or_else(|| panic!("no Svc-Timestamp: {body_text}"));
    assert!(
        !timestamp.is_empty() && timestamp.bytes().all(|b| b.is_ascii_digit()),
        "Svc-Timestamp must be whole seconds in decimal, got {timestamp:?}"
    );
    let seconds: i64 = timestamp.parse().expect("timestamp fits i64");
    let now = chrono::Utc::now().timestamp();
    assert!(
        seconds >= since - 2 && seconds <= now + 2,
        "Svc-Timestamp {seconds} not near now ({since}..{now})"
    );
    let signature = d
        .signature
        .as_deref()
        .unwrap_or_else(|| panic!("no Svc-Signature: {body_text}"));
    assert!(
        signature.len() == 64
            && signature
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "Svc-Signature must be 64 lowercase hex characters, got {signature:?}"
    );
    assert_eq!(
        signature,
        sign(secret, timestamp, &d.body),
        "signature mismatch for body {body_text}"
    );
    let event: Value = serde_json::from_slice(&d.body)
        .unwrap_or_else(|e| panic!("body is not JSON ({e}): {body_text}"));
    assert!(
        event["id"]
            .as_str()
            .and_then(|s| s.parse::<uuid::Uuid>().ok())
            .is_some(),
        "event id: {event}"
    );
    assert!(
        matches!(
            event["eventType"].as_str(),
            Some("cloud:processing-ended" | "cloud:processing-progress" | "cloud:processing-error")
        ),
        "eventType: {event}"
    );
    assert_timestamp(&event["createdAt"]);
    assert!(event["payload"]["id"].is_string(), "payload.id: {event}");
    assert_eq!(
        &event["endpointMetadata"], endpoint_metadata,
        "endpointMetadata: {event}"
    );
    event
}

pub fn event_type(d: &ReceivedDelivery) -> String {
    serde_json::from_slice::<Value>(&d.body)
        .ok()
        .and_then(|v| v["eventType"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------
// Values

/// An ISO 8601 UTC timestamp (RFC 3339 with `Z`), at most millisecond precision.
#[track_caller]
pub fn assert_timestamp(value: &Value) -> chrono::DateTime<chrono::Utc> {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("timestamp must be a string, got {value}"));
    assert!(s.ends_with('Z'), "timestamp must be UTC with `Z`: {s}");
    if let Some((_, fraction)) = s.trim_end_matches('Z').split_once('.') {
        assert_eq!(
            fraction.len(),
            3,
            "timestamp must have millisecond precision: {s}"
        );
    }
    chrono::DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("timestamp {s}: {e}"))
        .to_utc()
}

#[track_caller]
pub fn assert_uuid(value: &Value) {
    let s = value
        .as_str()
        .unwrap_or_else(|| panic!("uuid must be a string, got {value}"));
    assert!(s.parse::<uuid::Uuid>().is_ok(), "not a uuid: {s}");
}

/// Metadata with `n` keys of the given key and value lengths.
pub fn metadata(n: usize, key_len: usize, value_len: usize) -> Value {
    let mut map = serde_json::Map::new();
    for i in 0..n {
        let prefix = format!("k{i}-");
        let key = format!(
            "{prefix}{}",
            "x".repeat(key_len.saturating_sub(prefix.len()))
        );
        map.insert(key, Value::String("v".repeat(value_len)));
    }
    Value::Object(map)
}

// ---------------------------------------------------------------------------------------
// Processings

#[track_caller]
pub fn assert_processing_shape(p: &Value) {
    for field in PROCESSING_FIELDS {
        assert!(p.get(field).is_some(), "Processing without `{field}`: {p}");
    }
    assert_uuid(&p["id"]);
    assert_uuid(&p["creatorId"]);
    assert_uuid(&p["organizationId"]);
    assert!(
        matches!(p["type"].as_str(), Some("gnss" | "ins")),
        "type: {p}"
    );
    assert!(
        REGIONS.contains(&p["region"].as_str().unwrap_or_default()),
        "region: {p}"
    );
    assert!(
        p["errorCount"]["errors"].is_u64() && p["errorCount"]["warnings"].is_u64(),
        "errorCount: {p}"
    );
    assert!(p["processingJson"].is_object(), "{p}");
    let created = assert_timestamp(&p["createdAt"]);
    assert!(assert_timestamp(&p["updatedAt"]) >= created, "{p}");
}
