//! Object storage emulator: per-region buckets on local disk, browser-style POST
//! uploads authorised by an AWS SigV4 POST policy, and SigV4 query-string pre-signed
//! GET downloads.
//!
//! # Layout on disk
//!
//! `root/<bucket>/<file name>` where the file name is `k.` followed by the key
//! percent-encoded (everything but ASCII letters, digits, `-` and `_` is encoded, so
//! `/`, `.` and `..` can never form a path), or `h.` followed by the SHA-256 of the key
//! when the encoded form would be longer than 200 bytes. Uploads are written to a
//! `.tmp-<uuid>` file in the bucket folder first and renamed into place once
//! complete and checked; the temporary file is removed on any failure (a guard also
//! removes it when the request is abandoned mid-way).
//!
//! # Upload forms
//!
//! [`Storage::presign_upload`] hands out, in this order, `bucket`, `X-Amz-Algorithm`,
//! `X-Amz-Credential`, `X-Amz-Date`, `key`, `Policy`, `X-Amz-Signature` and
//! `X-Amz-Security-Token` (the forms of temporary credentials, as the service's own
//! clients send them), then the extra fields of [`StorageConfig::extra_fields`]. The
//! policy holds one condition per handed-out field but `Policy` and `X-Amz-Signature`,
//! and `content-length-range` equal to the registered size.
//!
//! # Upload checks (`POST /{bucket}`)
//!
//! In this order: unknown bucket → 404 `NoSuchBucket`; no `Content-Length` → 411
//! `MissingContentLength`; not `multipart/form-data` → 400. When the `file` part
//! arrives, the fields sent before it are checked (403 `AccessDenied`): each of the 8
//! standard fields present once, every field but `x-ignore-*` valid UTF-8 (a value that
//! is not cannot match its signature), bucket field equal to the bucket in the address,
//! algorithm, credential (known access key), security token (the session token of that
//! temporary access key), signature of the `Policy` string (lower-case hex, as SigV4
//! writes it: an upper-case signature does not match), expiration, every policy
//! condition (one per handed-out field, the security token's and any extra field's
//! included), every form field covered by a condition (S3's exemptions:
//! `X-Amz-Signature`, `Policy`, `file`, `x-ignore-*`), and, with an upload gate
//! ([`Storage::with_upload_gate`]), that the object is still wanted (the emulator's: its
//! file was not deleted, alone or with its container). The file is then streamed to
//! disk; a field after `file` → 400 `InvalidArgument`; a length outside
//! `content-length-range` → 400 `EntityTooSmall`/`EntityTooLarge`; an object no longer
//! wanted once in place → 403 `AccessDenied` (it is removed); a form without
//! `file` → 400 `InvalidArgument` (after the 403 checks). When the fields before
//! `file` are rejected, the file is still read through (not stored) so that a field
//! after it answers the 400 `file`-not-last, as documented. On error the rest of the
//! body is read and discarded so clients see the answer instead of a reset connection.
//!
//! # Why not `s3s`
//!
//! s3s 0.14.1 was evaluated: its POST-policy validator
//! (`PostPolicy::validate_conditions_only`) is crate-private, its multipart parser
//! (`s3s::http`) is private too, the service aggregates the whole uploaded file in
//! memory before checking the policy (`aggregate_file_stream_limited`: 256 MiB uploads
//! with small memory would fail), and its parser treats the `file` part as the end of
//! the form, ignoring anything after it (so the `file`-not-last 400 cannot be
//! produced). Only `PostPolicy::from_base64` is public, which is not worth the
//! dependency for a policy that is signed here and checked for its signature before
//! being parsed. The checks are therefore written here, with `multer` (the parser
//! under axum's `Multipart`) for streaming the form.
//!
//! # Layout
//!
//! This file has the storage, its addresses and the HTTP handlers; [`sigv4`] signs and
//! verifies the pre-signed GET addresses, [`policy`] hands out and checks the POST
//! policy, [`form`] streams the multipart form, [`files`] names the objects on disk and
//! [`error`] writes S3's XML errors.

mod error;
mod files;
mod form;
mod policy;
mod sigv4;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use chrono::{DateTime, Utc};
use futures::StreamExt as _;

use tokio::io::AsyncReadExt as _;

use error::S3Error;
pub(crate) use error::s3_error;
use files::{TempFile, invalid_bucket, object_file_name, valid_bucket_name};
use form::{drain_body, drain_form};
pub(crate) use policy::extra_field_problem;

/// Called once an upload has been accepted, before the 204 is answered.
pub type OnUpload = Arc<dyn Fn(&UploadEvent) + Send + Sync>;

/// Whether an object (bucket, key) may still be uploaded ([`Storage::with_upload_gate`]).
pub type UploadGate = Arc<dyn Fn(&str, &str) -> bool + Send + Sync>;

/// The storage's notion of "now" (injectable for tests, see [`Storage::with_clock`]).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// Regions whose buckets (`svc-<region>`) are created by [`Storage::new`].
pub const REGIONS: [&str; 4] = ["eu-west-3", "us-west-1", "ap-northeast-1", "ap-southeast-2"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UploadEvent {
    pub bucket: String,
    pub key: String,
    pub size: u64,
}

#[derive(Clone)]
pub struct StorageConfig {
    /// Folder for the objects (a temporary folder the emulator owns).
    pub root: PathBuf,
    /// The address clients reach the storage at, e.g. `http://127.0.0.1:4566` (no trailing slash).
    pub public_url: String,
    /// The access key and secret of the signatures: temporary (STS-like) credentials,
    /// which go with `session_token`.
    pub access_key: String,
    pub secret_key: String,
    /// The session token of the temporary credentials: every upload form carries it as
    /// `X-Amz-Security-Token`, with a policy condition on it, and a form without it or
    /// with another value is refused ([`new_session_token`] makes one).
    pub session_token: String,
    /// Fields every upload form carries after the standard ones, in this order, each
    /// with a policy condition on its value (a form without one, or with another value,
    /// is refused): tests use them to check that a client sends fields it does not
    /// know. Empty for the service's forms. Names are checked by [`Storage::new`].
    pub extra_fields: Vec<(String, String)>,
    /// The speed at which upload bodies are read, in bytes per second (0: as fast as
    /// they come): a slow uplink, under which an upload stays in flight long enough
    /// for a client to be seen cancelling it.
    pub upload_bytes_per_second: u64,
    /// How long a pre-signed upload form is valid.
    pub upload_ttl: Duration,
    /// How long a pre-signed download address is valid.
    pub download_ttl: Duration,
    pub on_upload: OnUpload,
}

#[derive(Clone)]
pub struct Storage {
    config: Arc<StorageConfig>,
    clock: Clock,
    /// SigV4 signing keys by (date, region): four HMACs each, the same all day, and
    /// needed for every form handed out (a page of containers lists up to a hundred).
    signing_keys: Arc<std::sync::Mutex<SigningKeys>>,
    /// Which objects may still be uploaded; every one without it.
    gate: Option<UploadGate>,
}

/// SigV4 signing keys by (date `YYYYMMDD`, region).
type SigningKeys = HashMap<(String, String), Vec<u8>>;

/// Signing keys kept at most (dates and regions come from requests too: bounded).
const SIGNING_KEYS_KEPT: usize = 64;

/// Read size when streaming an object out.
const READ_CHUNK: usize = 64 * 1024;
/// Write buffer of an object the emulator writes itself.
const WRITE_BUFFER: usize = 64 * 1024;

/// A new session token of temporary credentials, in base64 as STS hands them out: 100
/// random bytes, so it ends with `==` (and `+`, `/` and `=` must reach the storage
/// unchanged).
pub fn new_session_token() -> String {
    let mut bytes = [0_u8; 100];
    if getrandom::fill(&mut bytes).is_err() {
        // No system randomness: UUIDs (still unpredictable enough for an emulator).
        let random = std::iter::repeat_with(|| *uuid::Uuid::new_v4().as_bytes()).flatten();
        for (byte, from) in bytes.iter_mut().zip(random) {
            *byte = from;
        }
    }
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

impl Storage {
    /// A storage with its bucket folders created.
    ///
    /// # Errors
    ///
    /// An empty session token, an extra field that cannot be handed out (a standard
    /// field's name, `file`, `x-ignore-*`, a name repeated or not made of ASCII letters,
    /// digits, `-`, `_` and `.`, a value over 64 KiB), a folder that cannot be created.
    pub fn new(config: StorageConfig) -> std::io::Result<Self> {
        let invalid =
            |reason: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, reason);
        if config.session_token.is_empty() {
            return Err(invalid("the storage needs a session token".to_owned()));
        }
        for (i, (name, value)) in config.extra_fields.iter().enumerate() {
            let before = config.extra_fields.get(..i).unwrap_or_default();
            if let Some(problem) = policy::extra_field_problem(name, value, before) {
                return Err(invalid(problem));
            }
        }
        std::fs::create_dir_all(&config.root)?;
        for region in REGIONS {
            std::fs::create_dir_all(config.root.join(Self::bucket_for_region(region)))?;
        }
        Ok(Self {
            config: Arc::new(config),
            clock: Arc::new(Utc::now),
            signing_keys: Arc::default(),
            gate: None,
        })
    }

    /// Refuses, with 403 `AccessDenied` as for an expired policy, the uploads of the
    /// objects `gate` no longer wants (the emulator's: a file deleted, alone or with its
    /// container). It is asked when a form's `file` arrives, and again once the object
    /// is in place, which it then leaves: an object wanted until then and deleted after
    /// goes with its file, so no upload leaves an object without a file.
    #[must_use]
    pub fn with_upload_gate(mut self, gate: UploadGate) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Whether `gate` still wants uploads of the object.
    fn wanted(&self, bucket: &str, key: &str) -> bool {
        self.gate.as_ref().is_none_or(|gate| gate(bucket, key))
    }

    /// The SigV4 signing key of this storage's secret for `date` (`YYYYMMDD`) and
    /// `region`, computed once and kept.
    fn signing_key(&self, date: &str, region: &str) -> Vec<u8> {
        let mut keys = self
            .signing_keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let wanted = (date.to_owned(), region.to_owned());
        if let Some(key) = keys.get(&wanted) {
            return key.clone();
        }
        if keys.len() >= SIGNING_KEYS_KEPT {
            keys.clear();
        }
        let key = sigv4::signing_key(&self.config.secret_key, date, region);
        keys.insert(wanted, key.clone());
        key
    }

    /// Replaces the clock used for signing dates and expiry checks.
    #[must_use]
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// The bucket that holds a region's files.
    pub fn bucket_for_region(region: &str) -> String {
        format!("svc-{region}")
    }

    /// The region of a bucket named by [`Storage::bucket_for_region`] (`us-east-1` otherwise).
    pub fn region_of_bucket(bucket: &str) -> &str {
        bucket
            .strip_prefix("svc-")
            .filter(|r| !r.is_empty())
            .unwrap_or("us-east-1")
    }

    pub fn router(&self) -> axum::Router {
        axum::Router::new()
            .route("/{bucket}", post(post_object))
            .route("/{bucket}/{*key}", get(get_object))
            .with_state(self.clone())
    }

    pub async fn put_object(&self, bucket: &str, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        let dir = self
            .bucket_dir(bucket)
            .ok_or_else(|| invalid_bucket(bucket))?;
        tokio::fs::create_dir_all(&dir).await?;
        let mut temp = TempFile::new(&dir);
        tokio::fs::write(temp.path(), bytes).await?;
        temp.persist(&dir.join(object_file_name(key)))
    }

    /// A new object written by the emulator itself (the engine's outputs), streamed to a
    /// temporary file of its bucket: [`NewObject::commit`] moves it into place, dropping
    /// it first removes it.
    pub fn create_object(&self, bucket: &str, key: &str) -> std::io::Result<NewObject> {
        let dir = self
            .bucket_dir(bucket)
            .ok_or_else(|| invalid_bucket(bucket))?;
        std::fs::create_dir_all(&dir)?;
        let temp = TempFile::new(&dir);
        let file = std::fs::File::create(temp.path())?;
        Ok(NewObject {
            file: std::io::BufWriter::with_capacity(WRITE_BUFFER, file),
            temp,
            target: dir.join(object_file_name(key)),
        })
    }

    /// Where an uploaded object lies on disk, if it exists (the engine streams inputs from it).
    pub fn object_path(&self, bucket: &str, key: &str) -> Option<PathBuf> {
        let path = self.bucket_dir(bucket)?.join(object_file_name(key));
        path.is_file().then_some(path)
    }

    pub async fn delete_object(&self, bucket: &str, key: &str) -> std::io::Result<()> {
        let dir = self
            .bucket_dir(bucket)
            .ok_or_else(|| invalid_bucket(bucket))?;
        match tokio::fs::remove_file(dir.join(object_file_name(key))).await {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }

    fn now(&self) -> DateTime<Utc> {
        (self.clock)()
    }

    /// The folder of a bucket, if its name is a safe folder name (it may not exist).
    fn bucket_dir(&self, bucket: &str) -> Option<PathBuf> {
        valid_bucket_name(bucket).then(|| self.config.root.join(bucket))
    }

    /// The folder of an existing bucket.
    fn existing_bucket_dir(&self, bucket: &str) -> Option<PathBuf> {
        self.bucket_dir(bucket).filter(|d| d.is_dir())
    }

    // ----- POST upload -------------------------------------------------------------

    async fn handle_post(
        &self,
        bucket: &str,
        headers: &HeaderMap,
        body: Body,
    ) -> Result<(), S3Error> {
        let Some(dir) = self.existing_bucket_dir(bucket) else {
            drain_body(body).await;
            return Err(S3Error::no_such_bucket(bucket));
        };
        if !headers.contains_key(header::CONTENT_LENGTH) {
            drain_body(body).await;
            return Err(S3Error::new(
                StatusCode::LENGTH_REQUIRED,
                "MissingContentLength",
                "You must provide the Content-Length HTTP header (chunked transfer encoding is not accepted)",
            ));
        }
        let content_type = headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        let boundary = match multer::parse_boundary(content_type) {
            Ok(b) => b,
            Err(_) => {
                drain_body(body).await;
                return Err(S3Error::invalid_argument(
                    "The body must be multipart/form-data with a boundary",
                ));
            }
        };
        let rate = self.config.upload_bytes_per_second;
        let data = body.into_data_stream();
        let data = if rate == 0 {
            data.boxed()
        } else {
            // Each chunk is taken, then as much time as it takes at `rate` passes
            // before the next is read: the client's sending is held back by TCP.
            data.then(move |chunk| async move {
                if let Ok(bytes) = &chunk {
                    let seconds = bytes.len() as f64 / rate as f64;
                    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                }
                chunk
            })
            .boxed()
        };
        let mut form = multer::Multipart::new(data, boundary);
        let result = self.receive_form(bucket, &dir, &mut form).await;
        if result.is_err() {
            drain_form(&mut form).await;
        }
        let event = result?;
        (self.config.on_upload)(&event);
        Ok(())
    }

    // ----- GET download ------------------------------------------------------------

    async fn handle_get(
        &self,
        bucket: &str,
        key: &str,
        query: Option<&str>,
        headers: &HeaderMap,
    ) -> Result<Response, S3Error> {
        self.check_presigned(bucket, key, query.unwrap_or_default(), headers)?;
        let dir = self
            .existing_bucket_dir(bucket)
            .ok_or_else(|| S3Error::no_such_bucket(bucket))?;
        let no_such_key = || {
            S3Error::new(
                StatusCode::NOT_FOUND,
                "NoSuchKey",
                "The specified key does not exist.",
            )
        };
        let file = match tokio::fs::File::open(dir.join(object_file_name(key))).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(no_such_key()),
            Err(e) => return Err(S3Error::internal(e)),
        };
        let meta = file.metadata().await.map_err(S3Error::internal)?;
        if !meta.is_file() {
            return Err(no_such_key());
        }
        let stream = futures::stream::unfold(Some(file), |state| async move {
            let mut file = state?;
            let mut buf = vec![0_u8; READ_CHUNK];
            match file.read(&mut buf).await {
                Ok(0) => None,
                Ok(n) => {
                    buf.truncate(n);
                    Some((Ok(Bytes::from(buf)), Some(file)))
                }
                Err(e) => Some((Err(e), None)),
            }
        });
        Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "application/octet-stream")
            .header(header::CONTENT_LENGTH, meta.len())
            .body(Body::from_stream(stream))
            .map_err(S3Error::internal)
    }
}

/// An object being written ([`Storage::create_object`]); not visible until committed.
pub struct NewObject {
    file: std::io::BufWriter<std::fs::File>,
    temp: TempFile,
    target: PathBuf,
}

impl NewObject {
    /// Writes what is buffered and moves the object into place (replacing any object of
    /// its key).
    pub fn commit(mut self) -> std::io::Result<()> {
        self.file.flush()?;
        self.temp.persist(&self.target)
    }
}

impl std::io::Write for NewObject {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.file.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.file.write_all(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

async fn post_object(
    State(storage): State<Storage>,
    UrlPath(bucket): UrlPath<String>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    match storage.handle_post(&bucket, &headers, body).await {
        Ok(()) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => e.into_response(),
    }
}

async fn get_object(
    State(storage): State<Storage>,
    UrlPath((bucket, key)): UrlPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    match storage
        .handle_get(&bucket, &key, query.as_deref(), &headers)
        .await
    {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}
