//! Storage tests: a real server on 127.0.0.1:0 and real multipart forms sent by reqwest.
//!
//! This file has the harness; the tests are grouped by subject: [`signing`], [`upload`],
//! [`download`] and [`direct`] access.

use std::sync::Mutex;

use reqwest::multipart::{Form, Part};

use base64::Engine as _;
use chrono::TimeDelta;
use sha2::{Digest as _, Sha256};

use super::policy::UPLOAD_FIELDS;
use super::sigv4::{
    canonical_query, canonical_request, hmac_sha256, parse_amz_date, signing_key, split_public_url,
    string_to_sign,
};
use super::*;

mod direct;
mod download;
mod signing;
mod upload;

const ACCESS_KEY: &str = "EMUACCESSKEY";
const SECRET_KEY: &str = "emu/secret+key";
const BUCKET: &str = "svc-eu-west-3";
/// The session token of the temporary credentials (base64, as STS writes them).
const SESSION_TOKEN: &str = "IQoJb3JpZ2luX2VjEMz//////////wEaCWV1LXdlc3QtMyJHMEUCIQ+emu/session==";

struct Harness {
    storage: Storage,
    base: String,
    root: PathBuf,
    events: Arc<Mutex<Vec<UploadEvent>>>,
    offset: Arc<Mutex<TimeDelta>>,
    client: reqwest::Client,
    _dir: tempfile::TempDir,
}

struct Answer {
    status: reqwest::StatusCode,
    body: String,
}

impl Harness {
    async fn start() -> Self {
        Self::start_with(None, Vec::new()).await
    }

    /// A storage with an upload gate ([`Storage::with_upload_gate`]).
    async fn start_with_gate(gate: Option<UploadGate>) -> Self {
        Self::start_with(gate, Vec::new()).await
    }

    /// A storage whose forms carry extra fields ([`StorageConfig::extra_fields`]).
    async fn start_with_extra_fields(extra: &[(&str, &str)]) -> Self {
        let extra = extra
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect();
        Self::start_with(None, extra).await
    }

    async fn start_with(gate: Option<UploadGate>, extra_fields: Vec<(String, String)>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let events = Arc::new(Mutex::new(Vec::new()));
        let offset = Arc::new(Mutex::new(TimeDelta::zero()));
        let root = dir.path().join("objects");
        let seen = events.clone();
        let config = StorageConfig {
            root: root.clone(),
            public_url: base.clone(),
            access_key: ACCESS_KEY.to_owned(),
            secret_key: SECRET_KEY.to_owned(),
            session_token: SESSION_TOKEN.to_owned(),
            extra_fields,
            upload_bytes_per_second: 0,
            upload_ttl: Duration::from_secs(600),
            download_ttl: Duration::from_secs(600),
            on_upload: Arc::new(move |e: &UploadEvent| seen.lock().unwrap().push(e.clone())),
        };
        let shift = offset.clone();
        let mut storage = Storage::new(config)
            .unwrap()
            .with_clock(Arc::new(move || Utc::now() + *shift.lock().unwrap()));
        if let Some(gate) = gate {
            storage = storage.with_upload_gate(gate);
        }
        let router = storage.router();
        tokio::spawn(async move { axum::serve(listener, router).await });
        Self {
            storage,
            base,
            root,
            events,
            offset,
            client: reqwest::Client::new(),
            _dir: dir,
        }
    }

    fn shift_clock(&self, seconds: i64) {
        *self.offset.lock().unwrap() = TimeDelta::seconds(seconds);
    }

    fn presign(&self, key: &str, size: u64) -> (String, Vec<(String, String)>) {
        let (url, fields) = self.storage.presign_upload(BUCKET, key, size);
        (url, fields.into_iter().collect())
    }

    async fn post(&self, url: &str, form: Form) -> Answer {
        let response = self.client.post(url).multipart(form).send().await.unwrap();
        let status = response.status();
        Answer {
            status,
            body: response.text().await.unwrap(),
        }
    }

    async fn get(&self, url: &str) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
        let response = self.client.get(url).send().await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        (status, headers, response.bytes().await.unwrap().to_vec())
    }

    fn events(&self) -> Vec<UploadEvent> {
        self.events.lock().unwrap().clone()
    }

    /// Every file in a bucket folder (objects and leftovers).
    fn bucket_files(&self, bucket: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.join(bucket))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Asserts that a rejected upload left nothing behind.
    fn assert_nothing_stored(&self) {
        assert_eq!(self.bucket_files(BUCKET), Vec::<String>::new());
        assert_eq!(self.events(), Vec::new());
    }
}

fn form(fields: &[(String, String)], file: Option<Vec<u8>>) -> Form {
    let mut form = Form::new();
    for (name, value) in fields {
        form = form.text(name.clone(), value.clone());
    }
    if let Some(bytes) = file {
        form = form.part("file", Part::bytes(bytes).file_name("data.bin"));
    }
    form
}

fn content(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i * 31 % 251) as u8).collect()
}

fn assert_error(answer: &Answer, status: u16, code: &str, message_part: &str) {
    assert_eq!(answer.status.as_u16(), status, "{}", answer.body);
    assert!(
        answer.body.contains(&format!("<Code>{code}</Code>")),
        "{}",
        answer.body
    );
    assert!(
        answer.body.contains(message_part),
        "expected {message_part:?} in {}",
        answer.body
    );
}

fn without(fields: &[(String, String)], name: &str) -> Vec<(String, String)> {
    fields.iter().filter(|(n, _)| n != name).cloned().collect()
}

fn with_value(fields: &[(String, String)], name: &str, value: &str) -> Vec<(String, String)> {
    fields
        .iter()
        .map(|(n, v)| {
            if n == name {
                (n.clone(), value.to_owned())
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect()
}
