//! Storage tests: a real server on 127.0.0.1:0 and real multipart forms sent by reqwest.

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

const ACCESS_KEY: &str = "EMUACCESSKEY";
const SECRET_KEY: &str = "emu/secret+key";
const BUCKET: &str = "svc-eu-west-3";

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
            upload_ttl: Duration::from_secs(600),
            download_ttl: Duration::from_secs(600),
            on_upload: Arc::new(move |e: &UploadEvent| seen.lock().unwrap().push(e.clone())),
        };
        let shift = offset.clone();
        let storage = Storage::new(config)
            .unwrap()
            .with_clock(Arc::new(move || Utc::now() + *shift.lock().unwrap()));
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

// ----- Signing ---------------------------------------------------------------------

/// The pre-signed GET example of the AWS SigV4 documentation ("Authenticating
/// Requests: Using Query Parameters").
#[test]
fn sigv4_query_signature_matches_the_aws_example() {
    let query = canonical_query(
        [
            ("X-Amz-Algorithm", "AWS4-HMAC-SHA256"),
            (
                "X-Amz-Credential",
                "AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request",
            ),
            ("X-Amz-Date", "20130524T000000Z"),
            ("X-Amz-Expires", "86400"),
            ("X-Amz-SignedHeaders", "host"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned())),
    );
    let request = canonical_request(
        "GET",
        "/test.txt",
        &query,
        &[("host", "examplebucket.s3.amazonaws.com")],
    );
    let to_sign = string_to_sign("20130524T000000Z", "20130524", "us-east-1", &request);
    assert!(
        to_sign.ends_with("3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04"),
        "{to_sign}"
    );
    let key = signing_key(
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "20130524",
        "us-east-1",
    );
    assert_eq!(
        hex::encode(hmac_sha256(&key, to_sign.as_bytes())),
        "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
    );
}

#[tokio::test]
async fn presign_upload_gives_the_fields_in_order_with_a_signed_policy() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("c1/raw/base.obs", 1234);
    assert_eq!(url, format!("{}/{BUCKET}", h.base));
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, UPLOAD_FIELDS);
    let value = |name: &str| {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(value("key"), "c1/raw/base.obs");
    assert_eq!(value("bucket"), BUCKET);
    assert_eq!(value("X-Amz-Algorithm"), "AWS4-HMAC-SHA256");
    let amz_date = value("X-Amz-Date");
    let signed_at = parse_amz_date(&amz_date).unwrap();
    assert_eq!(
        value("X-Amz-Credential"),
        format!("{ACCESS_KEY}/{}/eu-west-3/s3/aws4_request", &amz_date[..8])
    );

    let policy_json = base64::engine::general_purpose::STANDARD
        .decode(value("Policy"))
        .unwrap();
    let policy: serde_json::Value = serde_json::from_slice(&policy_json).unwrap();
    let expiration = policy["expiration"].as_str().unwrap();
    assert_eq!(
        expiration.len(),
        "2024-01-01T00:00:00.000Z".len(),
        "{expiration}"
    );
    assert!(expiration.ends_with('Z'));
    let expiration = DateTime::parse_from_rfc3339(expiration)
        .unwrap()
        .with_timezone(&Utc);
    let ttl = expiration - signed_at;
    assert!(
        ttl >= TimeDelta::seconds(600) && ttl < TimeDelta::seconds(601),
        "{ttl}"
    );
    assert_eq!(
        policy["conditions"],
        serde_json::json!([
            {"key": "c1/raw/base.obs"},
            {"bucket": BUCKET},
            {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
            {"x-amz-credential": value("X-Amz-Credential")},
            {"x-amz-date": amz_date},
            ["content-length-range", 1234, 1234],
        ])
    );
    let key = signing_key(SECRET_KEY, &amz_date[..8], "eu-west-3");
    assert_eq!(
        value("X-Amz-Signature"),
        hex::encode(hmac_sha256(&key, value("Policy").as_bytes()))
    );
}

// ----- Upload ----------------------------------------------------------------------

#[tokio::test]
async fn upload_succeeds_and_the_object_downloads_identically() {
    let h = Harness::start().await;
    let key = "container-1/dir with space/rover+1.obs";
    let data = content(100_000);
    let (url, fields) = h.presign(key, data.len() as u64);
    let answer = h.post(&url, form(&fields, Some(data.clone()))).await;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::NO_CONTENT,
        "{}",
        answer.body
    );
    assert_eq!(answer.body, "");
    assert_eq!(
        h.events(),
        vec![UploadEvent {
            bucket: BUCKET.to_owned(),
            key: key.to_owned(),
            size: data.len() as u64
        }]
    );

    let path = h.storage.object_path(BUCKET, key).unwrap();
    assert!(path.starts_with(h.root.join(BUCKET)));
    assert_eq!(std::fs::read(&path).unwrap(), data);
    assert_eq!(h.bucket_files(BUCKET).len(), 1, "no temporary file left");

    let (status, headers, body) = h.get(&h.storage.presign_download(BUCKET, key)).await;
    assert_eq!(status, reqwest::StatusCode::OK);
    assert_eq!(
        headers[reqwest::header::CONTENT_TYPE],
        "application/octet-stream"
    );
    assert_eq!(
        headers[reqwest::header::CONTENT_LENGTH],
        data.len().to_string().as_str()
    );
    assert_eq!(body, data);
}

#[tokio::test]
async fn an_empty_file_of_registered_size_zero_is_accepted() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("empty", 0);
    let answer = h.post(&url, form(&fields, Some(Vec::new()))).await;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::NO_CONTENT,
        "{}",
        answer.body
    );
    assert_eq!(
        std::fs::read(h.storage.object_path(BUCKET, "empty").unwrap()).unwrap(),
        Vec::<u8>::new()
    );
}

#[tokio::test]
async fn a_missing_field_is_refused_with_403() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    for name in UPLOAD_FIELDS {
        let answer = h
            .post(&url, form(&without(&fields, name), Some(content(10))))
            .await;
        assert_error(
            &answer,
            403,
            "AccessDenied",
            &format!("Field {name} missing"),
        );
    }
    h.assert_nothing_stored();
}

#[tokio::test]
async fn a_modified_field_is_refused_with_403() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    let (_, other) = h.presign("other-key", 10);
    for (name, original) in &fields {
        let mut modified = original.clone();
        // Same length, different last character (keeps base64 and hex well-formed).
        let last = modified.pop().unwrap();
        modified.push(if last == 'A' || last == 'a' || last == '0' {
            '1'
        } else {
            '0'
        });
        if name == "Policy" {
            // A valid policy of another upload, still signed for the original one.
            modified = other.iter().find(|(n, _)| n == "Policy").unwrap().1.clone();
        }
        let answer = h
            .post(
                &url,
                form(&with_value(&fields, name, &modified), Some(content(10))),
            )
            .await;
        assert_eq!(answer.status.as_u16(), 403, "{name}: {}", answer.body);
        assert!(
            answer.body.contains("<Code>AccessDenied</Code>"),
            "{}",
            answer.body
        );
    }
    // The key is checked against the policy.
    let answer = h
        .post(
            &url,
            form(&with_value(&fields, "key", "k2"), Some(content(10))),
        )
        .await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field key does not match the policy",
    );
    let answer = h
        .post(
            &url,
            form(
                &with_value(&fields, "X-Amz-Date", "20000101T000000Z"),
                Some(content(10)),
            ),
        )
        .await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field X-Amz-Date does not match the policy",
    );
    h.assert_nothing_stored();
}

#[tokio::test]
async fn a_bad_signature_or_unknown_access_key_is_refused_with_403() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    let answer = h
        .post(
            &url,
            form(
                &with_value(&fields, "X-Amz-Signature", &"0".repeat(64)),
                Some(content(10)),
            ),
        )
        .await;
    assert_error(&answer, 403, "AccessDenied", "Signature does not match");
    let answer = h
        .post(
            &url,
            form(
                &with_value(&fields, "X-Amz-Signature", "not hex"),
                Some(content(10)),
            ),
        )
        .await;
    assert_error(&answer, 403, "AccessDenied", "Signature does not match");

    // Signed with the right secret but another access key.
    let stranger = Storage {
        config: Arc::new(StorageConfig {
            access_key: "SOMEONEELSE".to_owned(),
            ..(*h.storage.config).clone()
        }),
        clock: h.storage.clock.clone(),
    };
    let (_, fields) = stranger.presign_upload(BUCKET, "k", 10);
    let fields: Vec<_> = fields.into_iter().collect();
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_error(&answer, 403, "AccessDenied", "access key");
    h.assert_nothing_stored();
}

/// SigV4 signatures are lower-case hex: an upper-case one does not match (as on S3),
/// for uploads and for downloads.
#[tokio::test]
async fn an_upper_case_signature_is_refused_with_403() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    let signature = fields
        .iter()
        .find(|(n, _)| n == "X-Amz-Signature")
        .map(|(_, v)| v.to_ascii_uppercase())
        .unwrap();
    assert!(signature.bytes().any(|b| b.is_ascii_uppercase()));
    let answer = h
        .post(
            &url,
            form(
                &with_value(&fields, "X-Amz-Signature", &signature),
                Some(content(10)),
            ),
        )
        .await;
    assert_error(&answer, 403, "AccessDenied", "Signature does not match");
    h.assert_nothing_stored();

    h.storage
        .put_object(BUCKET, "out/a.txt", b"aaa")
        .await
        .unwrap();
    let url = h.storage.presign_download(BUCKET, "out/a.txt");
    let at = url.find("X-Amz-Signature=").unwrap() + "X-Amz-Signature=".len();
    let upper = format!("{}{}", &url[..at], url[at..].to_ascii_uppercase());
    let (status, _, body) = h.get(&upper).await;
    let body = String::from_utf8(body).unwrap();
    assert_eq!(status.as_u16(), 403, "{body}");
    assert!(body.contains("Signature does not match"), "{body}");
    assert_eq!(h.get(&url).await.0.as_u16(), 200);
}

/// A signed field whose value is not UTF-8 cannot match its signature: 403, like any
/// other modified field (it was 400). An ignored field (`x-ignore-*`) may hold any bytes.
#[tokio::test]
async fn a_signed_field_that_is_not_utf8_is_refused_with_403() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    for name in ["key", "X-Amz-Credential", "X-Amz-Signature", "Policy"] {
        let mut form = Form::new();
        for (n, v) in &fields {
            form = if n == name {
                let mut bytes = v.as_bytes().to_vec();
                bytes.push(0xff);
                form.part(n.clone(), Part::bytes(bytes))
            } else {
                form.text(n.clone(), v.clone())
            };
        }
        form = form.part("file", Part::bytes(content(10)).file_name("data.bin"));
        let answer = h.post(&url, form).await;
        assert_eq!(answer.status.as_u16(), 403, "{name}: {}", answer.body);
        assert!(
            answer.body.contains("<Code>AccessDenied</Code>"),
            "{name}: {}",
            answer.body
        );
    }
    h.assert_nothing_stored();

    let mut form = Form::new();
    for (n, v) in &fields {
        form = form.text(n.clone(), v.clone());
    }
    form = form
        .part("x-ignore-note", Part::bytes(vec![0xff, 0xfe]))
        .part("file", Part::bytes(content(10)).file_name("data.bin"));
    let answer = h.post(&url, form).await;
    assert_eq!(answer.status.as_u16(), 204, "{}", answer.body);
}

#[tokio::test]
async fn an_expired_policy_is_refused_with_403() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    h.shift_clock(599);
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::NO_CONTENT,
        "still valid: {}",
        answer.body
    );
    h.shift_clock(601);
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_error(&answer, 403, "AccessDenied", "Policy expired");
}

#[tokio::test]
async fn a_wrong_length_is_refused_with_400_and_nothing_is_stored() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 1000);
    let answer = h.post(&url, form(&fields, Some(content(999)))).await;
    assert_error(&answer, 400, "EntityTooSmall", "999");
    let answer = h.post(&url, form(&fields, Some(content(1001)))).await;
    assert_error(&answer, 400, "EntityTooLarge", "1001");
    let answer = h
        .post(&url, form(&fields, Some(content(3 * 1024 * 1024))))
        .await;
    assert_error(&answer, 400, "EntityTooLarge", "1000");
    assert!(h.storage.object_path(BUCKET, "k").is_none());
    h.assert_nothing_stored();
}

#[tokio::test]
async fn file_must_be_present_and_last() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);

    let answer = h.post(&url, form(&fields, None)).await;
    assert_error(&answer, 400, "InvalidArgument", "Field file missing");

    let after = form(&fields, Some(content(10))).text("x-ignore-after", "1");
    let answer = h.post(&url, after).await;
    assert_error(&answer, 400, "InvalidArgument", "file must be the last");

    // The signature after the file: the file is not last (400), not a missing field (403).
    let before = without(&fields, "X-Amz-Signature");
    let signature = fields
        .iter()
        .find(|(n, _)| n == "X-Amz-Signature")
        .unwrap()
        .1
        .clone();
    let answer = h
        .post(
            &url,
            form(&before, Some(content(10))).text("X-Amz-Signature", signature),
        )
        .await;
    assert_error(&answer, 400, "InvalidArgument", "file must be the last");

    // A form without file and with a missing field: the field is reported first.
    let answer = h.post(&url, form(&without(&fields, "Policy"), None)).await;
    assert_error(&answer, 403, "AccessDenied", "Field Policy missing");
    h.assert_nothing_stored();
}

#[tokio::test]
async fn fields_outside_the_policy_are_refused_except_x_ignore() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    let mut extra = fields.clone();
    extra.push(("Content-Type".to_owned(), "text/plain".to_owned()));
    let answer = h.post(&url, form(&extra, Some(content(10)))).await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field Content-Type is not allowed by the policy",
    );

    let mut twice = fields.clone();
    twice.push(("key".to_owned(), "k".to_owned()));
    let answer = h.post(&url, form(&twice, Some(content(10)))).await;
    assert_error(&answer, 403, "AccessDenied", "more than once");
    h.assert_nothing_stored();

    let mut ignored = fields.clone();
    ignored.push(("x-ignore-note".to_owned(), "anything".to_owned()));
    let answer = h.post(&url, form(&ignored, Some(content(10)))).await;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::NO_CONTENT,
        "{}",
        answer.body
    );
}

#[tokio::test]
async fn the_bucket_of_the_address_must_exist_and_match() {
    let h = Harness::start().await;
    let (_, fields) = h.presign("k", 10);
    let answer = h
        .post(
            &format!("{}/svc-us-west-1", h.base),
            form(&fields, Some(content(10))),
        )
        .await;
    assert_error(&answer, 403, "AccessDenied", "bucket");
    let answer = h
        .post(
            &format!("{}/no-such-bucket", h.base),
            form(&fields, Some(content(10))),
        )
        .await;
    assert_error(&answer, 404, "NoSuchBucket", "no-such-bucket");
    assert_eq!(h.bucket_files("svc-us-west-1"), Vec::<String>::new());
    h.assert_nothing_stored();
}

#[tokio::test]
async fn a_chunked_upload_without_content_length_is_refused_with_411() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    let chunks = futures::stream::iter([Ok::<_, std::io::Error>(Bytes::from(content(10)))]);
    let form = form(&fields, None).part(
        "file",
        Part::stream(reqwest::Body::wrap_stream(chunks)).file_name("f"),
    );
    let answer = h.post(&url, form).await;
    assert_error(&answer, 411, "MissingContentLength", "Content-Length");
    h.assert_nothing_stored();
}

#[tokio::test]
async fn a_not_multipart_body_is_refused_with_400() {
    let h = Harness::start().await;
    let response = h
        .client
        .post(format!("{}/{BUCKET}", h.base))
        .body("hello")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
}

#[tokio::test]
async fn a_20_mib_upload_is_streamed_to_disk() {
    let h = Harness::start().await;
    const CHUNK: usize = 1024 * 1024;
    const CHUNKS: usize = 20;
    let size = (CHUNK * CHUNKS) as u64;
    let (url, fields) = h.presign("big/file.bin", size);
    let chunk = Bytes::from(content(CHUNK));
    let expected = {
        let mut hasher = Sha256::new();
        for _ in 0..CHUNKS {
            hasher.update(&chunk);
        }
        hex::encode(hasher.finalize().as_slice())
    };
    let stream =
        futures::stream::iter((0..CHUNKS).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
    let part =
        Part::stream_with_length(reqwest::Body::wrap_stream(stream), size).file_name("big.bin");
    let answer = h.post(&url, form(&fields, None).part("file", part)).await;
    assert_eq!(
        answer.status,
        reqwest::StatusCode::NO_CONTENT,
        "{}",
        answer.body
    );
    let path = h.storage.object_path(BUCKET, "big/file.bin").unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), size);
    let stored = hex::encode(Sha256::digest(std::fs::read(&path).unwrap()).as_slice());
    assert_eq!(stored, expected);
    assert_eq!(h.events()[0].size, size);
}

// ----- Download --------------------------------------------------------------------

#[tokio::test]
async fn a_presigned_download_is_refused_when_tampered_or_expired() {
    let h = Harness::start().await;
    h.storage
        .put_object(BUCKET, "out/a.txt", b"aaa")
        .await
        .unwrap();
    h.storage
        .put_object(BUCKET, "out/b.txt", b"bbb")
        .await
        .unwrap();
    let url = h.storage.presign_download(BUCKET, "out/a.txt");
    let (status, _, body) = h.get(&url).await;
    assert_eq!((status.as_u16(), body.as_slice()), (200, b"aaa".as_slice()));

    let denied = |url: String| {
        let h = &h;
        async move {
            let (status, _, body) = h.get(&url).await;
            let body = String::from_utf8(body).unwrap();
            assert_eq!(status.as_u16(), 403, "{url}: {body}");
            assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
            body
        }
    };
    let (address, query) = url.split_once('?').unwrap();
    denied(address.to_owned()).await;
    denied(url.replace("out/a.txt", "out/b.txt")).await;
    denied(url.replace("X-Amz-Expires=600", "X-Amz-Expires=6000")).await;
    let signature_at = url.find("X-Amz-Signature=").unwrap() + "X-Amz-Signature=".len();
    let flipped = if url.as_bytes()[signature_at] == b'0' {
        "1"
    } else {
        "0"
    };
    let tampered = format!(
        "{}{flipped}{}",
        &url[..signature_at],
        &url[signature_at + 1..]
    );
    assert!(denied(tampered).await.contains("Signature does not match"));
    let without_date: Vec<&str> = query
        .split('&')
        .filter(|p| !p.starts_with("X-Amz-Date="))
        .collect();
    denied(format!("{address}?{}", without_date.join("&"))).await;

    h.shift_clock(601);
    assert!(denied(url.clone()).await.contains("expired"));
    h.shift_clock(599);
    assert_eq!(h.get(&url).await.0.as_u16(), 200);
}

#[tokio::test]
async fn a_presigned_download_of_a_missing_object_answers_404() {
    let h = Harness::start().await;
    let (status, _, body) = h
        .get(&h.storage.presign_download(BUCKET, "nothing/here"))
        .await;
    assert_eq!(status.as_u16(), 404);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("<Code>NoSuchKey</Code>")
    );
    let (status, _, body) = h
        .get(&h.storage.presign_download("svc-mars-1", "nothing"))
        .await;
    assert_eq!(status.as_u16(), 404);
    assert!(
        String::from_utf8(body)
            .unwrap()
            .contains("<Code>NoSuchBucket</Code>")
    );
}

// ----- Direct access ---------------------------------------------------------------

#[tokio::test]
async fn keys_never_escape_the_bucket_folder() {
    let h = Harness::start().await;
    let long = "x/".repeat(300);
    let keys = [
        "../../escape",
        "/etc/passwd",
        "a/b/../../../c",
        "..",
        ".",
        "",
        "a%2Fb",
        long.as_str(),
    ];
    for (i, key) in keys.iter().enumerate() {
        h.storage
            .put_object(BUCKET, key, format!("object {i}").as_bytes())
            .await
            .unwrap();
    }
    for (i, key) in keys.iter().enumerate() {
        let path = h.storage.object_path(BUCKET, key).unwrap();
        assert_eq!(
            path.parent().unwrap(),
            h.root.join(BUCKET),
            "{key:?} → {path:?}"
        );
        assert!(path.file_name().unwrap().len() <= 202);
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            format!("object {i}")
        );
    }
    assert_eq!(h.bucket_files(BUCKET).len(), keys.len());
    assert_eq!(
        std::fs::read_dir(&h.root).unwrap().count(),
        REGIONS.len(),
        "only the bucket folders at the root"
    );

    for key in keys {
        h.storage.delete_object(BUCKET, key).await.unwrap();
        assert!(h.storage.object_path(BUCKET, key).is_none());
    }
    h.storage
        .delete_object(BUCKET, "never-existed")
        .await
        .unwrap();
    assert!(h.storage.put_object("../outside", "k", b"x").await.is_err());
    assert!(h.storage.object_path("../outside", "k").is_none());
    assert!(h.bucket_files(BUCKET).is_empty());
}

#[tokio::test]
async fn put_object_replaces_and_is_downloadable() {
    let h = Harness::start().await;
    h.storage
        .put_object("svc-ap-southeast-2", "p/out.kml", b"first")
        .await
        .unwrap();
    h.storage
        .put_object("svc-ap-southeast-2", "p/out.kml", b"second")
        .await
        .unwrap();
    let url = h
        .storage
        .presign_download("svc-ap-southeast-2", "p/out.kml");
    assert!(
        url.contains("%2Fap-southeast-2%2Fs3%2Faws4_request"),
        "{url}"
    );
    let (status, _, body) = h.get(&url).await;
    assert_eq!(
        (status.as_u16(), body.as_slice()),
        (200, b"second".as_slice())
    );
}

#[test]
fn public_url_splits_into_origin_and_prefix() {
    assert_eq!(
        split_public_url("http://127.0.0.1:4566"),
        ("http://127.0.0.1:4566", "")
    );
    assert_eq!(
        split_public_url("http://127.0.0.1:4566/"),
        ("http://127.0.0.1:4566", "")
    );
    assert_eq!(
        split_public_url("https://h/storage/"),
        ("https://h", "/storage")
    );
}

#[tokio::test]
async fn an_abandoned_upload_leaves_no_partial_file() {
    use tokio::io::AsyncWriteExt as _;
    let h = Harness::start().await;
    let size: usize = 8 * 1024 * 1024;
    let (_, fields) = h.presign("abandoned", size as u64);
    let boundary = "XBOUNDARYX";
    let mut head = String::new();
    for (name, value) in &fields {
        head.push_str(&format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n"
        ));
    }
    head.push_str(&format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    ));
    let total = head.len() + size + format!("\r\n--{boundary}--\r\n").len();
    let address = h.base.trim_start_matches("http://");
    let mut socket = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!(
        "POST /{BUCKET} HTTP/1.1\r\nHost: {address}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\n\
         Content-Length: {total}\r\n\r\n{head}"
    );
    socket.write_all(request.as_bytes()).await.unwrap();
    socket.write_all(&content(size / 2)).await.unwrap();
    socket.flush().await.unwrap();
    // Wait until the partial file shows up, then hang up.
    for _ in 0..200 {
        if !h.bucket_files(BUCKET).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        h.bucket_files(BUCKET).len(),
        1,
        "a temporary file while the upload runs"
    );
    drop(socket);
    for _ in 0..200 {
        if h.bucket_files(BUCKET).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    h.assert_nothing_stored();
}
