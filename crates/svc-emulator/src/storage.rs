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
//! # Upload checks (`POST /{bucket}`)
//!
//! In this order: unknown bucket → 404 `NoSuchBucket`; no `Content-Length` → 411
//! `MissingContentLength`; not `multipart/form-data` → 400. When the `file` part
//! arrives, the fields sent before it are checked (403 `AccessDenied`): each of the 7
//! fields present once, every field but `x-ignore-*` valid UTF-8 (a value that is not
//! cannot match its signature), bucket field equal to the bucket in the address,
//! algorithm, credential (known access key), signature of the `Policy` string (lower-case
//! hex, as SigV4 writes it: an upper-case signature does not match), expiration, every
//! policy condition, every form field covered by a condition (S3's exemptions:
//! `X-Amz-Signature`, `Policy`, `file`, `x-ignore-*`). The file is then streamed to
//! disk; a field after `file` → 400 `InvalidArgument`; a length outside
//! `content-length-range` → 400 `EntityTooSmall`/`EntityTooLarge`; a form without
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

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path as UrlPath, RawQuery, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine as _;
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use futures::StreamExt as _;
use hmac::{Hmac, KeyInit as _, Mac as _};
use indexmap::IndexMap;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use sha2::{Digest as _, Sha256};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

/// Called once an upload has been accepted, before the 204 is answered.
pub type OnUpload = Arc<dyn Fn(&UploadEvent) + Send + Sync>;

/// The storage's notion of "now" (injectable for tests, see [`Storage::with_clock`]).
pub type Clock = Arc<dyn Fn() -> DateTime<Utc> + Send + Sync>;

/// Regions whose buckets (`svc-<region>`) are created by [`Storage::new`].
pub const REGIONS: [&str; 4] = ["eu-west-3", "us-west-1", "ap-northeast-1", "ap-southeast-2"];

/// The only signing algorithm accepted.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";

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
    pub access_key: String,
    pub secret_key: String,
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
}

/// Longest accepted value of a non-file form field.
const MAX_FIELD_LEN: usize = 64 * 1024;
/// Most non-file form fields accepted.
const MAX_FIELDS: usize = 100;
/// Longest percent-encoded file name before falling back to a hash.
const MAX_ENCODED_NAME: usize = 200;
/// Read size when streaming an object out.
const READ_CHUNK: usize = 64 * 1024;
/// Write buffer when streaming an upload to disk.
const WRITE_BUFFER: usize = 256 * 1024;
/// Tolerated clock skew for a download address dated in the future.
const MAX_SKEW_SECS: i64 = 15 * 60;

/// The 7 upload fields, in the order they are handed out.
const UPLOAD_FIELDS: [&str; 7] = [
    "key",
    "bucket",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "Policy",
    "X-Amz-Signature",
];

/// Characters encoded in file names (everything except letters, digits, `-`, `_`).
const FILE_NAME_SET: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_');
/// SigV4 `UriEncode`: everything except the unreserved characters.
const URI_SET: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

type HmacSha256 = Hmac<Sha256>;

impl Storage {
    pub fn new(config: StorageConfig) -> std::io::Result<Self> {
        std::fs::create_dir_all(&config.root)?;
        for region in REGIONS {
            std::fs::create_dir_all(config.root.join(Self::bucket_for_region(region)))?;
        }
        Ok(Self {
            config: Arc::new(config),
            clock: Arc::new(Utc::now),
        })
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

    /// `uploadInfo` for one registered file: the form's address and its fields, in order.
    pub fn presign_upload(
        &self,
        bucket: &str,
        key: &str,
        size: u64,
    ) -> (String, IndexMap<String, String>) {
        let now = self.now();
        let date = now.format("%Y%m%d").to_string();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let region = Self::region_of_bucket(bucket);
        let credential = format!("{}/{date}/{region}/s3/aws4_request", self.config.access_key);
        let expiration = add_duration(now, self.config.upload_ttl)
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let policy = serde_json::json!({
            "expiration": expiration,
            "conditions": [
                {"key": key},
                {"bucket": bucket},
                {"x-amz-algorithm": ALGORITHM},
                {"x-amz-credential": credential},
                {"x-amz-date": amz_date},
                ["content-length-range", size, size],
            ],
        });
        let policy = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
        let signature = hex::encode(hmac_sha256(
            &signing_key(&self.config.secret_key, &date, region),
            policy.as_bytes(),
        ));
        let fields = IndexMap::from([
            ("key".to_owned(), key.to_owned()),
            ("bucket".to_owned(), bucket.to_owned()),
            ("X-Amz-Algorithm".to_owned(), ALGORITHM.to_owned()),
            ("X-Amz-Credential".to_owned(), credential),
            ("X-Amz-Date".to_owned(), amz_date),
            ("Policy".to_owned(), policy),
            ("X-Amz-Signature".to_owned(), signature),
        ]);
        (format!("{}/{bucket}", self.config.public_url), fields)
    }

    /// A pre-signed GET address for an object, valid for `download_ttl`.
    pub fn presign_download(&self, bucket: &str, key: &str) -> String {
        let now = self.now();
        let date = now.format("%Y%m%d").to_string();
        let amz_date = now.format("%Y%m%dT%H%M%SZ").to_string();
        let region = Self::region_of_bucket(bucket);
        let credential = format!("{}/{date}/{region}/s3/aws4_request", self.config.access_key);
        let expires = self.config.download_ttl.as_secs().to_string();
        let params = [
            ("X-Amz-Algorithm", ALGORITHM),
            ("X-Amz-Credential", credential.as_str()),
            ("X-Amz-Date", amz_date.as_str()),
            ("X-Amz-Expires", expires.as_str()),
            ("X-Amz-SignedHeaders", "host"),
        ];
        let query = canonical_query(
            params
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned())),
        );
        let (origin, prefix) = split_public_url(&self.config.public_url);
        let uri = canonical_uri(prefix, bucket, key);
        let host = origin
            .split_once("://")
            .map_or(origin, |(_, authority)| authority);
        let request = canonical_request("GET", &uri, &query, &[("host", host)]);
        let signature = hex::encode(hmac_sha256(
            &signing_key(&self.config.secret_key, &date, region),
            string_to_sign(&amz_date, &date, region, &request).as_bytes(),
        ));
        format!("{origin}{uri}?{query}&X-Amz-Signature={signature}")
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
        let mut form = multer::Multipart::new(body.into_data_stream(), boundary);
        let result = self.receive_form(bucket, &dir, &mut form).await;
        if result.is_err() {
            drain_form(&mut form).await;
        }
        let event = result?;
        (self.config.on_upload)(&event);
        Ok(())
    }

    async fn receive_form(
        &self,
        bucket: &str,
        dir: &Path,
        form: &mut multer::Multipart<'_>,
    ) -> Result<UploadEvent, S3Error> {
        // Values that are not UTF-8 are kept as `None`: such a field cannot match its
        // signature (403), unless it is ignored (`x-ignore-*`).
        let mut fields: Vec<(String, Option<String>)> = Vec::new();
        while let Some(mut field) = form.next_field().await.map_err(malformed)? {
            let name = field.name().unwrap_or_default().to_owned();
            if name == "file" {
                return match self.check_form(bucket, &fields) {
                    Ok(expected) => self.receive_file(bucket, dir, expected, field, form).await,
                    Err(denied) => {
                        while field.chunk().await.map_err(malformed)?.is_some() {}
                        drop(field);
                        if form.next_field().await.map_err(malformed)?.is_some() {
                            return Err(S3Error::file_not_last());
                        }
                        Err(denied)
                    }
                };
            }
            if fields.len() >= MAX_FIELDS {
                return Err(S3Error::invalid_argument("Too many form fields"));
            }
            let value = read_text_field(&name, &mut field).await?;
            fields.push((name, value));
        }
        self.check_form(bucket, &fields)?;
        Err(S3Error::invalid_argument("Field file missing"))
    }

    /// Streams the `file` part to a temporary file, checks that it is the last part and
    /// its length, then moves it into place.
    async fn receive_file(
        &self,
        bucket: &str,
        dir: &Path,
        expected: Expected,
        mut field: multer::Field<'_>,
        form: &mut multer::Multipart<'_>,
    ) -> Result<UploadEvent, S3Error> {
        let (min, max) = expected.length_range.unwrap_or((0, u64::MAX));
        let mut temp = TempFile::new(dir);
        // Created synchronously (it is quick) so that a cancelled request cannot leave a
        // file created after the guard ran.
        let file = std::fs::File::create(temp.path()).map_err(S3Error::internal)?;
        let file = tokio::fs::File::from_std(file);
        let mut writer = tokio::io::BufWriter::with_capacity(WRITE_BUFFER, file);
        let mut size: u64 = 0;
        while let Some(chunk) = field.chunk().await.map_err(malformed)? {
            size = size.saturating_add(chunk.len() as u64);
            // Past the limit: keep reading (to answer cleanly) but stop writing.
            if size <= max {
                writer.write_all(&chunk).await.map_err(S3Error::internal)?;
            }
        }
        writer.flush().await.map_err(S3Error::internal)?;
        drop(writer);
        drop(field);
        if form.next_field().await.map_err(malformed)?.is_some() {
            return Err(S3Error::file_not_last());
        }
        if size > max {
            return Err(S3Error::new(
                StatusCode::BAD_REQUEST,
                "EntityTooLarge",
                format!(
                    "Your proposed upload exceeds the maximum allowed size: {size} bytes sent, at most {max} allowed"
                ),
            ));
        }
        if size < min {
            return Err(S3Error::new(
                StatusCode::BAD_REQUEST,
                "EntityTooSmall",
                format!(
                    "Your proposed upload is smaller than the minimum allowed size: {size} bytes sent, at least {min} required"
                ),
            ));
        }
        temp.persist(&dir.join(object_file_name(&expected.key)))
            .map_err(S3Error::internal)?;
        Ok(UploadEvent {
            bucket: bucket.to_owned(),
            key: expected.key,
            size,
        })
    }

    /// Checks the form fields received before `file` against the signed policy. A
    /// value that is not UTF-8 (`None`) cannot match its signature: 403, like any
    /// modified field, unless the field is ignored (`x-ignore-*`).
    fn check_form(
        &self,
        bucket: &str,
        fields: &[(String, Option<String>)],
    ) -> Result<Expected, S3Error> {
        for (i, (name, _)) in fields.iter().enumerate() {
            if fields
                .iter()
                .skip(i + 1)
                .any(|(other, _)| other.eq_ignore_ascii_case(name))
            {
                return Err(S3Error::denied(format!(
                    "Field {name} appears more than once"
                )));
            }
        }
        for name in UPLOAD_FIELDS {
            if !fields.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
                return Err(S3Error::denied(format!("Field {name} missing")));
            }
        }
        for (name, value) in fields {
            if value.is_none() && !name.to_ascii_lowercase().starts_with("x-ignore-") {
                return Err(S3Error::denied(format!(
                    "Field {name} is not valid UTF-8: it does not match its signature"
                )));
            }
        }
        let get = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n.eq_ignore_ascii_case(name))
                .and_then(|(_, v)| v.as_deref())
        };
        let field = |name: &str| get(name).unwrap_or_default();
        if field("bucket") != bucket {
            return Err(S3Error::denied(
                "Field bucket does not match the bucket in the address",
            ));
        }
        if field("X-Amz-Algorithm") != ALGORITHM {
            return Err(S3Error::denied(format!(
                "Field X-Amz-Algorithm must be {ALGORITHM}"
            )));
        }
        let credential = Credential::parse(field("X-Amz-Credential"))
            .ok_or_else(|| S3Error::denied("Field X-Amz-Credential is malformed"))?;
        if credential.access_key != self.config.access_key {
            return Err(S3Error::denied(
                "The access key in X-Amz-Credential is unknown",
            ));
        }
        let policy_b64 = field("Policy");
        let signature = signature_bytes(field("X-Amz-Signature"));
        let mac = hmac_for(
            &signing_key(
                &self.config.secret_key,
                &credential.date,
                &credential.region,
            ),
            policy_b64.as_bytes(),
        );
        if mac.verify_slice(&signature).is_err() {
            return Err(S3Error::denied("Signature does not match"));
        }
        let policy =
            Policy::parse(policy_b64).ok_or_else(|| S3Error::denied("Policy is malformed"))?;
        if self.now() >= policy.expiration {
            return Err(S3Error::denied("Policy expired"));
        }
        let mut length_range = None;
        for condition in &policy.conditions {
            match condition {
                Condition::Eq(name, value) => {
                    if get(name) != Some(value.as_str()) {
                        return Err(S3Error::denied(format!(
                            "Field {} does not match the policy",
                            display_name(name)
                        )));
                    }
                }
                Condition::StartsWith(name, prefix) => {
                    if !get(name).is_some_and(|v| v.starts_with(prefix.as_str())) {
                        return Err(S3Error::denied(format!(
                            "Field {} does not match the policy",
                            display_name(name)
                        )));
                    }
                }
                Condition::LengthRange(min, max) => length_range = Some((*min, *max)),
            }
        }
        for (name, _) in fields {
            let lower = name.to_ascii_lowercase();
            let exempt = matches!(lower.as_str(), "x-amz-signature" | "policy" | "file")
                || lower.starts_with("x-ignore-");
            if !exempt && !policy.covers(&lower) {
                return Err(S3Error::denied(format!(
                    "Field {name} is not allowed by the policy"
                )));
            }
        }
        Ok(Expected {
            key: field("key").to_owned(),
            length_range,
        })
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

    /// Verifies a SigV4 query-string signature (S3 flavour, `UNSIGNED-PAYLOAD`).
    fn check_presigned(
        &self,
        bucket: &str,
        key: &str,
        query: &str,
        headers: &HeaderMap,
    ) -> Result<(), S3Error> {
        let mut params: Vec<(String, String)> = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| percent_decode_str(s).decode_utf8().map(|c| c.into_owned());
            let (k, v) = match (decode(k), decode(v)) {
                (Ok(k), Ok(v)) => (k, v),
                _ => return Err(S3Error::denied("Query string is not valid UTF-8")),
            };
            if params.iter().any(|(other, _)| *other == k) {
                return Err(S3Error::denied(format!(
                    "Query parameter {k} appears more than once"
                )));
            }
            params.push((k, v));
        }
        let param = |name: &str| {
            params
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .ok_or_else(|| S3Error::denied(format!("Query parameter {name} missing")))
        };
        if param("X-Amz-Algorithm")? != ALGORITHM {
            return Err(S3Error::denied(format!(
                "X-Amz-Algorithm must be {ALGORITHM}"
            )));
        }
        let credential = Credential::parse(param("X-Amz-Credential")?)
            .ok_or_else(|| S3Error::denied("X-Amz-Credential is malformed"))?;
        if credential.access_key != self.config.access_key {
            return Err(S3Error::denied(
                "The access key in X-Amz-Credential is unknown",
            ));
        }
        let amz_date = param("X-Amz-Date")?;
        let signed_at =
            parse_amz_date(amz_date).ok_or_else(|| S3Error::denied("X-Amz-Date is malformed"))?;
        if !amz_date.starts_with(&credential.date) {
            return Err(S3Error::denied(
                "X-Amz-Date does not match the date of X-Amz-Credential",
            ));
        }
        let expires: u64 = param("X-Amz-Expires")?
            .parse()
            .map_err(|_| S3Error::denied("X-Amz-Expires is malformed"))?;
        let signed_headers = param("X-Amz-SignedHeaders")?;
        let signature = param("X-Amz-Signature")?;
        let names: Vec<&str> = signed_headers.split(';').collect();
        if !names.contains(&"host") {
            return Err(S3Error::denied("X-Amz-SignedHeaders must include host"));
        }
        let mut canonical_headers = Vec::new();
        for name in &names {
            let value = headers
                .get(*name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim);
            let value =
                value.ok_or_else(|| S3Error::denied(format!("Signed header {name} missing")))?;
            canonical_headers.push((*name, value));
        }
        let (_, prefix) = split_public_url(&self.config.public_url);
        let query = canonical_query(
            params
                .iter()
                .filter(|(k, _)| k != "X-Amz-Signature")
                .cloned(),
        );
        let request = canonical_request(
            "GET",
            &canonical_uri(prefix, bucket, key),
            &query,
            &canonical_headers,
        );
        let mac = hmac_for(
            &signing_key(
                &self.config.secret_key,
                &credential.date,
                &credential.region,
            ),
            string_to_sign(amz_date, &credential.date, &credential.region, &request).as_bytes(),
        );
        if mac.verify_slice(&signature_bytes(signature)).is_err() {
            return Err(S3Error::denied("Signature does not match"));
        }
        let now = self.now();
        if signed_at - now > TimeDelta::seconds(MAX_SKEW_SECS) {
            return Err(S3Error::denied("Request is not valid yet"));
        }
        if now > add_duration(signed_at, Duration::from_secs(expires)) {
            return Err(S3Error::denied("Request has expired"));
        }
        Ok(())
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

// ----- Errors ------------------------------------------------------------------------

/// An S3-style error answer.
#[derive(Debug)]
struct S3Error {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl S3Error {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    fn denied(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "AccessDenied", message)
    }

    fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "InvalidArgument", message)
    }

    fn file_not_last() -> Self {
        Self::invalid_argument("Field file must be the last form field")
    }

    fn no_such_bucket(bucket: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NoSuchBucket",
            format!("The specified bucket does not exist: {bucket}"),
        )
    }

    fn internal(e: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            e.to_string(),
        )
    }
}

impl IntoResponse for S3Error {
    fn into_response(self) -> Response {
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{}</Code><Message>{}</Message></Error>",
            self.code,
            xml_escape(&self.message)
        );
        (
            self.status,
            [(header::CONTENT_TYPE, "application/xml")],
            body,
        )
            .into_response()
    }
}

/// An S3-style XML error answer (for errors raised outside the storage's routes).
pub(crate) fn s3_error(status: StatusCode, code: &'static str, message: &str) -> Response {
    S3Error::new(status, code, message).into_response()
}

fn malformed(e: multer::Error) -> S3Error {
    S3Error::new(
        StatusCode::BAD_REQUEST,
        "MalformedPOSTRequest",
        format!("The body is not well-formed multipart/form-data: {e}"),
    )
}

fn invalid_bucket(bucket: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("invalid bucket name {bucket:?}"),
    )
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

// ----- Form helpers ------------------------------------------------------------------

/// What an accepted form allows.
struct Expected {
    key: String,
    length_range: Option<(u64, u64)>,
}

/// The bytes of a SigV4 signature: exactly lower-case hex, as SigV4 writes it (an
/// upper-case or malformed one gives no bytes, so it matches nothing).
fn signature_bytes(text: &str) -> Vec<u8> {
    if text
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        hex::decode(text).unwrap_or_default()
    } else {
        Vec::new()
    }
}

/// A text field's value; `None` when it is not UTF-8.
async fn read_text_field(
    name: &str,
    field: &mut multer::Field<'_>,
) -> Result<Option<String>, S3Error> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(malformed)? {
        if buf.len().saturating_add(chunk.len()) > MAX_FIELD_LEN {
            return Err(S3Error::invalid_argument(format!(
                "Field {name} is too long"
            )));
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8(buf).ok())
}

/// Reads and discards what is left of a form (so the client reads the answer).
async fn drain_form(form: &mut multer::Multipart<'_>) {
    while let Ok(Some(mut field)) = form.next_field().await {
        while let Ok(Some(_)) = field.chunk().await {}
    }
}

async fn drain_body(body: Body) {
    let mut stream = body.into_data_stream();
    while let Some(Ok(_)) = stream.next().await {}
}

/// The name a policy condition's field has in the handed-out form.
fn display_name(lower: &str) -> &str {
    UPLOAD_FIELDS
        .iter()
        .find(|f| f.eq_ignore_ascii_case(lower))
        .copied()
        .unwrap_or(lower)
}

/// `<access key>/<yyyymmdd>/<region>/s3/aws4_request`.
struct Credential {
    access_key: String,
    date: String,
    region: String,
}

impl Credential {
    fn parse(s: &str) -> Option<Self> {
        let mut parts = s.split('/');
        let (access_key, date, region) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next()? != "s3" || parts.next()? != "aws4_request" || parts.next().is_some() {
            return None;
        }
        if date.len() != 8 || !date.bytes().all(|b| b.is_ascii_digit()) || region.is_empty() {
            return None;
        }
        Some(Self {
            access_key: access_key.to_owned(),
            date: date.to_owned(),
            region: region.to_owned(),
        })
    }
}

/// A parsed POST policy (field names lower-cased, without `$`).
struct Policy {
    expiration: DateTime<Utc>,
    conditions: Vec<Condition>,
}

enum Condition {
    Eq(String, String),
    StartsWith(String, String),
    LengthRange(u64, u64),
}

impl Policy {
    fn parse(b64: &str) -> Option<Self> {
        let json = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
        let value: serde_json::Value = serde_json::from_slice(&json).ok()?;
        let expiration = DateTime::parse_from_rfc3339(value.get("expiration")?.as_str()?)
            .ok()?
            .with_timezone(&Utc);
        let mut conditions = Vec::new();
        for condition in value.get("conditions")?.as_array()? {
            if let Some(object) = condition.as_object() {
                for (name, value) in object {
                    conditions.push(Condition::Eq(
                        name.to_ascii_lowercase(),
                        value.as_str()?.to_owned(),
                    ));
                }
                continue;
            }
            let items = condition.as_array()?;
            let op = items.first()?.as_str()?.to_ascii_lowercase();
            let field = |i: usize| -> Option<String> {
                Some(
                    items
                        .get(i)?
                        .as_str()?
                        .strip_prefix('$')?
                        .to_ascii_lowercase(),
                )
            };
            let text = |i: usize| -> Option<String> { Some(items.get(i)?.as_str()?.to_owned()) };
            let number = |i: usize| -> Option<u64> {
                let v = items.get(i)?;
                v.as_u64().or_else(|| v.as_str()?.parse().ok())
            };
            conditions.push(match (op.as_str(), items.len()) {
                ("eq", 3) => Condition::Eq(field(1)?, text(2)?),
                ("starts-with", 3) => Condition::StartsWith(field(1)?, text(2)?),
                ("content-length-range", 3) => Condition::LengthRange(number(1)?, number(2)?),
                _ => return None,
            });
        }
        Some(Self {
            expiration,
            conditions,
        })
    }

    fn covers(&self, lower: &str) -> bool {
        self.conditions.iter().any(|c| match c {
            Condition::Eq(name, _) | Condition::StartsWith(name, _) => name == lower,
            Condition::LengthRange(..) => false,
        })
    }
}

// ----- Files -------------------------------------------------------------------------

/// A temporary file in a bucket folder, removed when dropped unless persisted.
struct TempFile {
    path: PathBuf,
    keep: bool,
}

impl TempFile {
    fn new(dir: &Path) -> Self {
        Self {
            path: dir.join(format!(".tmp-{}", uuid::Uuid::new_v4())),
            keep: false,
        }
    }

    fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the file into place (a synchronous rename: quick, and never left half-done
    /// by a cancelled request).
    fn persist(&mut self, to: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, to)?;
        self.keep = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The file name an object key is stored under (never a path: see the module docs).
fn object_file_name(key: &str) -> String {
    let encoded = utf8_percent_encode(key, FILE_NAME_SET).to_string();
    if encoded.len() <= MAX_ENCODED_NAME {
        format!("k.{encoded}")
    } else {
        format!(
            "h.{}",
            hex::encode(Sha256::digest(key.as_bytes()).as_slice())
        )
    }
}

fn valid_bucket_name(bucket: &str) -> bool {
    (1..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !bucket.starts_with('.')
        && !bucket.contains("..")
}

// ----- SigV4 -------------------------------------------------------------------------

fn hmac_for(key: &[u8], data: &[u8]) -> HmacSha256 {
    // HMAC accepts keys of any length.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    mac.update(data);
    mac
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    hmac_for(key, data).finalize().into_bytes().to_vec()
}

/// `AWS4`+secret → date → region → `s3` → `aws4_request`.
fn signing_key(secret: &str, date: &str, region: &str) -> Vec<u8> {
    let k = hmac_sha256(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k = hmac_sha256(&k, region.as_bytes());
    let k = hmac_sha256(&k, b"s3");
    hmac_sha256(&k, b"aws4_request")
}

fn string_to_sign(amz_date: &str, date: &str, region: &str, canonical_request: &str) -> String {
    let hash = hex::encode(Sha256::digest(canonical_request.as_bytes()).as_slice());
    format!("{ALGORITHM}\n{amz_date}\n{date}/{region}/s3/aws4_request\n{hash}")
}

fn canonical_request(method: &str, uri: &str, query: &str, headers: &[(&str, &str)]) -> String {
    let mut headers: Vec<(String, &str)> = headers
        .iter()
        .map(|(k, v)| (k.to_ascii_lowercase(), *v))
        .collect();
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let signed_headers = headers
        .iter()
        .map(|(k, _)| k.as_str())
        .collect::<Vec<_>>()
        .join(";");
    format!("{method}\n{uri}\n{query}\n{canonical_headers}\n{signed_headers}\nUNSIGNED-PAYLOAD")
}

fn uri_encode(s: &str) -> String {
    utf8_percent_encode(s, URI_SET).to_string()
}

/// Sorted, encoded `k=v&…` (SigV4 canonical query string).
fn canonical_query(params: impl Iterator<Item = (String, String)>) -> String {
    let mut encoded: Vec<(String, String)> = params
        .map(|(k, v)| (uri_encode(&k), uri_encode(&v)))
        .collect();
    encoded.sort();
    encoded
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// `<prefix>/<bucket>/<key>` with each key segment encoded and `/` kept (S3 style).
fn canonical_uri(prefix: &str, bucket: &str, key: &str) -> String {
    let key = key.split('/').map(uri_encode).collect::<Vec<_>>().join("/");
    format!("{prefix}/{}/{key}", uri_encode(bucket))
}

/// `http://host:port/prefix` → (`http://host:port`, `/prefix`).
fn split_public_url(url: &str) -> (&str, &str) {
    let url = url.trim_end_matches('/');
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url.get(after_scheme..).and_then(|rest| rest.find('/')) {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

fn parse_amz_date(s: &str) -> Option<DateTime<Utc>> {
    NaiveDateTime::parse_from_str(s, "%Y%m%dT%H%M%SZ")
        .ok()
        .map(|d| d.and_utc())
}

fn add_duration(t: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    TimeDelta::from_std(d)
        .ok()
        .and_then(|d| t.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests;
