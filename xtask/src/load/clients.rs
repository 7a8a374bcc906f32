//! The load clients: the scenarios they run, what they share and what each measured
//! ([`Tally`]), the SDK's login, the containers the listing reads, and each
//! client's loop of requests (listing, uploads with their POST policy forms, unit
//! settings reads).

use std::sync::Arc;
use std::time::Duration;

use super::emulator::Emulator;
use super::{FILES_PER_CONTAINER, KEPT_ERRORS, LISTED_CONTAINERS, LISTED_FILES, UPLOAD_SIZE};
use anyhow::{Context, Result};
use serde_json::{Value, json};
use tokio::time::Instant;

/// What the clients of a scenario share.
#[derive(Clone)]
pub(super) struct Shared {
    pub(super) cloud: String,
    pub(super) organization: String,
    pub(super) token: String,
    pub(super) device: String,
}

/// One kind of request the clients repeat.
#[derive(Clone, Copy, Debug)]
pub(super) enum Scenario {
    ListContainers,
    Upload,
    UnitSettings,
}

impl Scenario {
    pub(super) fn title(self) -> String {
        match self {
            Self::ListContainers => format!(
                "list containers (GET one page of {LISTED_CONTAINERS} containers with {LISTED_FILES} pending files each)"
            ),
            Self::Upload => format!(
                "upload {} KiB (POST policy form to the object storage; {FILES_PER_CONTAINER} per container, then DELETE it)",
                UPLOAD_SIZE / 1024
            ),
            Self::UnitSettings => {
                "unit GET /api/v1/settings (whole tree, after a login)".to_owned()
            }
        }
    }
}

/// What one client measured.
#[derive(Default)]
pub(super) struct Tally {
    /// Latencies of the measured requests, in microseconds.
    pub(super) latencies: Vec<u32>,
    /// Requests that are not measured (registrations, deletions, logins).
    pub(super) other: u64,
    pub(super) errors: u64,
    pub(super) messages: Vec<String>,
}

impl Tally {
    pub(super) fn error(&mut self, message: String) {
        self.errors += 1;
        if self.messages.len() < KEPT_ERRORS {
            self.messages.push(message);
        }
    }
}

/// A plain-HTTP client (the emulator serves no TLS, so no root certificates are loaded).
pub(super) fn client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .http1_only()
        .tls_certs_only([])
        .pool_max_idle_per_host(1)
        .timeout(Duration::from_secs(30))
        .build()
        .context("building an HTTP client")
}

/// The SDK's login: OpenID discovery, then the password grant with the API key.
pub(super) async fn access_token(http: &reqwest::Client, emulator: &Emulator) -> Result<String> {
    let auth = emulator.field("auth_url")?;
    let discovery: Value = http
        .get(format!("{auth}/.well-known/openid-configuration"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .context("OpenID discovery")?
        .json()
        .await
        .context("OpenID discovery answer")?;
    let endpoint = discovery
        .get("token_endpoint")
        .and_then(Value::as_str)
        .context("the OpenID configuration has no token_endpoint")?;
    let (key, secret) = (emulator.field("api_key")?, emulator.field("api_secret")?);
    let answer: Value = http
        .post(endpoint)
        .form(&[
            ("grant_type", "password"),
            ("client_id", "api-key"),
            ("username", key.as_str()),
            ("password", secret.as_str()),
            ("scope", "openid"),
        ])
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .context("token request")?
        .json()
        .await
        .context("token answer")?;
    answer
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .context("the token answer has no access_token")
}

/// The containers the listing scenario reads.
pub(super) async fn prepare_listing(http: &reqwest::Client, shared: &Shared) -> Result<()> {
    for i in 0..LISTED_CONTAINERS {
        let files: Vec<Value> = (0..LISTED_FILES)
            .map(|f| json!({"path": format!("listed/{i}/{f}.bin"), "type": "input", "size": UPLOAD_SIZE}))
            .collect();
        create_container(http, shared, files)
            .await
            .map_err(anyhow::Error::msg)
            .context("creating the listed containers")?;
    }
    Ok(())
}

/// Creates a container with `files`; answers it as JSON, or what went wrong.
async fn create_container(
    http: &reqwest::Client,
    shared: &Shared,
    files: Vec<Value>,
) -> Result<Value, String> {
    let answer = http
        .post(format!(
            "{}/api/v2/organizations/{}/containers",
            shared.cloud, shared.organization
        ))
        .bearer_auth(&shared.token)
        .json(&json!({"region": "eu-west-3", "files": files}))
        .send()
        .await
        .map_err(|e| format!("create container: {e}"))?;
    let status = answer.status();
    if !status.is_success() {
        return Err(format!("create container answered {status}"));
    }
    answer
        .json()
        .await
        .map_err(|e| format!("create container answer: {e}"))
}

/// One client: its own connection, repeating the scenario's requests until `until`;
/// only the requests started after `measured_from` count.
pub(super) async fn client_loop(
    scenario: Scenario,
    index: usize,
    http: &reqwest::Client,
    shared: &Shared,
    measured_from: Instant,
    until: Instant,
) -> Tally {
    let mut tally = Tally::default();
    match scenario {
        Scenario::ListContainers => {
            let url = format!(
                "{}/api/v2/organizations/{}/containers?page=0&perPage={LISTED_CONTAINERS}",
                shared.cloud, shared.organization
            );
            while Instant::now() < until {
                let request = http.get(&url).bearer_auth(&shared.token);
                timed(&mut tally, measured_from, 200, request).await;
            }
        }
        Scenario::Upload => {
            upload_loop(http, &mut tally, index, shared, measured_from, until).await
        }
        Scenario::UnitSettings => {
            let login = http
                .post(format!("{}/api/v1/user/login", shared.device))
                .json(&json!({"user": "viewer", "password": ""}))
                .send()
                .await;
            tally.other += 1;
            let token = match login {
                Ok(answer) if answer.status() == 200 => answer
                    .json::<Value>()
                    .await
                    .ok()
                    .and_then(|v| v.get("token").and_then(Value::as_str).map(str::to_owned)),
                Ok(answer) => {
                    tally.error(format!("unit login answered {}", answer.status()));
                    return tally;
                }
                Err(e) => {
                    tally.error(format!("unit login: {e}"));
                    return tally;
                }
            };
            let Some(token) = token else {
                tally.error("the unit's login answer has no token".to_owned());
                return tally;
            };
            let url = format!("{}/api/v1/settings", shared.device);
            while Instant::now() < until {
                let request = http.get(&url).query(&[("auth", token.as_str())]);
                timed(&mut tally, measured_from, 200, request).await;
            }
        }
    }
    tally
}

/// Sends `request`, reads the whole answer, and counts it (latency when measured, or an
/// error when the status is not `expect`).
async fn timed(
    tally: &mut Tally,
    measured_from: Instant,
    expect: u16,
    request: reqwest::RequestBuilder,
) {
    let started = Instant::now();
    let outcome = match request.send().await {
        Ok(answer) => {
            let status = answer.status();
            match answer.bytes().await {
                Ok(_) if status == expect => Ok(()),
                Ok(body) => Err(format!(
                    "answered {status}: {}",
                    String::from_utf8_lossy(&body[..body.len().min(300)])
                )),
                Err(e) => Err(format!("reading the answer: {e}")),
            }
        }
        Err(e) => Err(e.to_string()),
    };
    match outcome {
        Ok(()) if started >= measured_from => {
            let micros = started.elapsed().as_micros();
            tally
                .latencies
                .push(u32::try_from(micros).unwrap_or(u32::MAX));
        }
        Ok(()) => tally.other += 1,
        Err(message) => tally.error(message),
    }
}

async fn upload_loop(
    http: &reqwest::Client,
    tally: &mut Tally,
    index: usize,
    shared: &Shared,
    measured_from: Instant,
    until: Instant,
) {
    let content = Arc::new(vec![0x5a_u8; UPLOAD_SIZE]);
    let mut round = 0_u64;
    while Instant::now() < until {
        round += 1;
        let files: Vec<Value> = (0..FILES_PER_CONTAINER)
            .map(|f| json!({"path": format!("load/{index}/{round}/{f}.bin"), "type": "input", "size": UPLOAD_SIZE}))
            .collect();
        tally.other += 1;
        let container = match create_container(http, shared, files).await {
            Ok(container) => container,
            Err(message) => {
                tally.error(message);
                continue;
            }
        };
        let empty = Vec::new();
        let files = container
            .get("files")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        if files.len() != FILES_PER_CONTAINER {
            tally.error(format!(
                "the new container has {} files, not {FILES_PER_CONTAINER}",
                files.len()
            ));
        }
        for file in files {
            match upload_form(http, file, &content) {
                Ok(request) => timed(tally, measured_from, 204, request).await,
                Err(message) => tally.error(message),
            }
        }
        let Some(id) = container.get("id").and_then(Value::as_str) else {
            tally.error("the new container has no id".to_owned());
            continue;
        };
        tally.other += 1;
        let deleted = http
            .delete(format!("{}/api/v2/containers/{id}", shared.cloud))
            .bearer_auth(&shared.token)
            .send()
            .await;
        match deleted {
            Ok(answer) if answer.status().is_success() => {}
            Ok(answer) => tally.error(format!("delete container answered {}", answer.status())),
            Err(e) => tally.error(format!("delete container: {e}")),
        }
    }
}

/// The upload of one registered file: its form's fields in their order, then the file.
fn upload_form(
    http: &reqwest::Client,
    file: &Value,
    content: &Arc<Vec<u8>>,
) -> Result<reqwest::RequestBuilder, String> {
    let info = file
        .get("uploadInfo")
        .context("a registered file has no uploadInfo")
        .map_err(|e| e.to_string())?;
    let url = info
        .get("url")
        .and_then(Value::as_str)
        .ok_or("an uploadInfo has no url")?;
    let fields = info
        .get("fields")
        .and_then(Value::as_object)
        .ok_or("an uploadInfo has no fields")?;
    let mut form = reqwest::multipart::Form::new();
    for (name, value) in fields {
        let value = value
            .as_str()
            .ok_or("an upload form field is not a string")?;
        form = form.text(name.clone(), value.to_owned());
    }
    let part = reqwest::multipart::Part::bytes(content.as_ref().clone()).file_name("data.bin");
    Ok(http.post(url).multipart(form.part("file", part)))
}
