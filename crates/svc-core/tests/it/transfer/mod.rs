//! End to end: `svc_core::transfer` against the in-process emulator's real object
//! storage (which checks every form field, their order, the signature, the expiry, the
//! exact length, `file` last and `Content-Length`).
//!
//! Files are registered with plain reqwest calls to the emulator's cloud API (this
//! module does not depend on `svc_core::cloud`). Deterministic failures come from a
//! small TCP proxy (`proxy.rs`), which the client uses as its HTTP proxy (so the `Host`
//! of signed addresses is unchanged) and which answers, cuts or stalls connection
//! number N as planned; each request opens its own connection (no idle pool). The
//! emulator's own fault injection (`FaultConfig`) gives a random soak on top.

mod downloads;
mod proxy;
mod soak;
mod upload_fields;
mod uploads;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use svc_cloud_api::cloud::types::{OutputFile, UploadInfo};
use svc_core::retry::RetryPolicy;
use svc_core::transfer::{Progress, TransferOptions, Transfers, UploadJob};
use svc_emulator::{Emulator, EmulatorConfig, EmulatorInfo, FaultConfig};
use svc_test_support::nmea::nmea_track;

/// How long any wait in these tests may last before the test fails.
const DEADLINE: Duration = Duration::from_secs(30);
const MIB: u64 = 1024 * 1024;

/// Quick retries for tests.
fn quick_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(40),
        max_elapsed: Duration::from_secs(60),
    }
}

fn options(max_attempts: u32) -> TransferOptions {
    TransferOptions {
        retry: quick_retry(max_attempts),
        ..TransferOptions::default()
    }
}

fn emulator_config(faults: FaultConfig) -> EmulatorConfig {
    EmulatorConfig {
        processing_time: Duration::from_millis(300),
        device: None,
        faults,
        ..EmulatorConfig::default()
    }
}

/// A started emulator, a token, and cloud calls that ride out injected faults.
struct Rig {
    emu: Emulator,
    info: EmulatorInfo,
    http: Client,
    token: String,
}

impl Rig {
    async fn start() -> Self {
        Self::with(emulator_config(FaultConfig::default())).await
    }

    async fn with(config: EmulatorConfig) -> Self {
        let emu = Emulator::start(config).await.expect("the emulator starts");
        let info = emu.info().clone();
        let http = Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .expect("http client");
        let mut rig = Self {
            emu,
            info,
            http,
            token: String::new(),
        };
        rig.token = rig.fetch_token().await;
        rig
    }

    /// Sends a request until it gets an answer that is not a 5xx, a broken connection
    /// or a cut body (the emulator may inject those); returns the attempt number too.
    async fn send(
        &self,
        what: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> (StatusCode, Value, u32) {
        for attempt in 1..=40 {
            let response = match build().send().await {
                Ok(r) => r,
                Err(_) => continue,
            };
            let status = response.status();
            let Ok(text) = response.text().await else {
                continue;
            };
            if status.is_server_error() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            return (
                status,
                serde_json::from_str(&text).unwrap_or(Value::Null),
                attempt,
            );
        }
        panic!("{what}: no answer after 40 attempts");
    }

    async fn fetch_token(&self) -> String {
        let auth = &self.info.auth_url;
        let (_, discovery, _) = self
            .send("discovery", || {
                self.http
                    .get(format!("{auth}/.well-known/openid-configuration"))
            })
            .await;
        let endpoint = discovery["token_endpoint"]
            .as_str()
            .expect("token_endpoint")
            .to_owned();
        let form = [
            ("grant_type", "password"),
            ("client_id", "api-key"),
            ("username", self.info.api_key.as_str()),
            ("password", self.info.api_secret.as_str()),
            ("scope", "openid"),
        ];
        let (status, token, _) = self
            .send("token", || self.http.post(&endpoint).form(&form))
            .await;
        assert_eq!(status, StatusCode::OK, "{token}");
        token["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    async fn api(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value, u32) {
        let url = format!("{}{path}", self.info.base_url);
        self.send(path, || {
            let request = self
                .http
                .request(method.clone(), &url)
                .bearer_auth(&self.token);
            match body {
                Some(b) => request.json(b),
                None => request,
            }
        })
        .await
    }

    async fn ok(&self, method: Method, path: &str, body: Option<&Value>) -> Value {
        let (status, json, _) = self.api(method, path, body).await;
        assert!(status.is_success(), "{path}: {status} {json}");
        json
    }

    /// Registers `files` (path, size) in a new container: its id and each file's form.
    async fn register(&self, files: &[(&str, u64)]) -> (String, Vec<UploadInfo>) {
        let body = json!({
            "region": "eu-west-3",
            "files": files.iter().map(|(path, size)| json!({"path": path, "type": "input", "size": size})).collect::<Vec<_>>(),
        });
        let org = self.info.organization_id;
        let container = self
            .ok(
                Method::POST,
                &format!("/api/v2/organizations/{org}/containers"),
                Some(&body),
            )
            .await;
        let id = container["id"].as_str().expect("container id").to_owned();
        let mut forms = Vec::new();
        for (path, _) in files {
            let file = container["files"]
                .as_array()
                .expect("files")
                .iter()
                .find(|f| f["path"] == *path)
                .expect("registered file");
            forms.push(serde_json::from_value(file["uploadInfo"].clone()).expect("uploadInfo"));
        }
        (id, forms)
    }

    /// Each file's status in the container, by path.
    async fn statuses(&self, container: &str) -> Vec<(String, String)> {
        let c = self
            .ok(
                Method::GET,
                &format!("/api/v2/containers/{container}"),
                None,
            )
            .await;
        c["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap_or_default().to_owned(),
                    f["status"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    async fn assert_all(&self, container: &str, status: &str) {
        for (path, s) in self.statuses(container).await {
            assert_eq!(s, status, "{path}");
        }
    }

    /// Registers and uploads an NMEA track, runs a processing to its end: its id and
    /// its outputs.
    async fn processed(&self, fixes: usize) -> (uuid::Uuid, Vec<OutputFile>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let track = nmea_track(fixes);
        let local = dir.path().join("track.nmea");
        std::fs::write(&local, &track).expect("write track");
        let (container, forms) = self
            .register(&[("rover/track.nmea", track.len() as u64)])
            .await;
        let jobs = vec![UploadJob {
            local_path: local,
            container_path: "rover/track.nmea".into(),
            size: track.len() as u64,
            upload_info: forms[0].clone(),
        }];
        Transfers::new(Client::new(), options(20))
            .upload(jobs)
            .wait()
            .await
            .expect("the track uploads");
        self.assert_all(&container, "ready").await;

        let org = self.info.organization_id;
        let body = json!({"containerId": container, "processingJson": {}});
        let path = format!("/api/v2/organizations/{org}/processings");
        let (status, started, attempt) = self.api(Method::POST, &path, Some(&body)).await;
        let id = if status.is_success() {
            started["id"].as_str().expect("id").to_owned()
        } else {
            // An answer lost to an injected cut: the processing started all the same.
            assert!(
                status == StatusCode::CONFLICT && attempt > 1,
                "{status} {started}"
            );
            let list = self
                .ok(Method::GET, &format!("{path}?page=0&perPage=100"), None)
                .await;
            list["processings"]
                .as_array()
                .expect("a processing list")
                .iter()
                .find(|p| p["containerId"] == container.as_str())
                .and_then(|p| p["id"].as_str())
                .expect("the started processing")
                .to_owned()
        };
        let deadline = Instant::now() + DEADLINE;
        loop {
            let p = self
                .ok(Method::GET, &format!("/api/v2/processings/{id}"), None)
                .await;
            if p["status"] == "processed" {
                assert_eq!(p["processingResult"], "succeeded", "{p}");
                break;
            }
            assert!(Instant::now() < deadline, "processing not done: {p}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let outputs = self
            .ok(
                Method::GET,
                &format!("/api/v2/processings/{id}/output"),
                None,
            )
            .await;
        let outputs: Vec<OutputFile> = serde_json::from_value(outputs).expect("outputs");
        assert!(!outputs.is_empty());
        (id.parse().expect("uuid"), outputs)
    }

    fn storage_addr(&self) -> SocketAddr {
        self.info
            .storage_url
            .trim_start_matches("http://")
            .parse()
            .expect("storage address")
    }
}

/// Writes `size` pseudo-random bytes, 1 MiB at a time (never the whole file in memory).
fn write_file(path: &Path, size: u64) {
    use std::io::Write as _;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ size;
    let mut chunk = vec![0_u8; MIB as usize];
    let mut left = size;
    while left > 0 {
        for b in chunk.iter_mut() {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            *b = (state >> 56) as u8;
        }
        let n = left.min(MIB) as usize;
        file.write_all(&chunk[..n]).expect("write");
        left -= n as u64;
    }
    file.flush().expect("flush");
}

/// Local files of the given sizes, registered in one container: (container, jobs).
async fn registered(rig: &Rig, dir: &Path, sizes: &[(&str, u64)]) -> (String, Vec<UploadJob>) {
    let (container, forms) = rig.register(sizes).await;
    let jobs = sizes
        .iter()
        .zip(forms)
        .map(|((name, size), upload_info)| {
            let local_path = dir.join(name.replace('/', "_"));
            write_file(&local_path, *size);
            UploadJob {
                local_path,
                container_path: (*name).to_owned(),
                size: *size,
                upload_info,
            }
        })
        .collect();
    (container, jobs)
}

/// Every snapshot seen by a subscriber, until the transfer finished.
fn record(handle: &svc_core::transfer::TransferHandle) -> tokio::task::JoinHandle<Vec<Progress>> {
    let mut receiver = handle.subscribe();
    tokio::spawn(async move {
        let mut seen = vec![receiver.borrow_and_update().clone()];
        while receiver.changed().await.is_ok() {
            let p = receiver.borrow_and_update().clone();
            let finished = p.finished;
            seen.push(p);
            if finished {
                break;
            }
        }
        seen
    })
}

/// Whether file `index` went back to 0 bytes after having moved some (a retry from the
/// start of the file).
fn restarted(seen: &[Progress], index: usize) -> bool {
    let mut moved = false;
    for p in seen {
        let f = &p.files[index];
        if f.done_bytes > 0 {
            moved = true;
        } else if moved && f.attempts > 1 {
            return true;
        }
    }
    false
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap_or(&p).display().to_string())
        .collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(read) = std::fs::read_dir(dir) {
        for entry in read.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}
