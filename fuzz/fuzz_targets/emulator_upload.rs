//! The emulator's object storage upload (`POST /{bucket}`): the multipart form streamed
//! by `multer`, then checked against the SigV4 POST policy (svc-emulator
//! `src/storage/form.rs`, `src/storage/policy.rs`), through the storage's own router.
//!
//! Input: `[mode, chunk, ...]`; the body is sent in pieces of `chunk` bytes (0: at once).
//! - mode even, "form": `[mutation, size (u16 LE)] key \n payload \n content`: the form
//!   the storage hands out for `key` and a file of `size` bytes (the content repeated),
//!   changed as `mutation` says (see `Mutation`), which decides the expected answer;
//! - mode odd, "raw": `content-type \n body`, posted as it is.
//!
//! Properties checked:
//! 1. nothing panics; every answer is 204 or an S3 error of a documented status;
//! 2. the form as handed out (its fields in the documented order, the session token and
//!    an extra field of the storage included) uploads the file (stored byte for byte,
//!    reported once); each change answers as documented: a changed, missing, repeated
//!    or uncovered field 403, a field after the file or a wrong size 400, an expired
//!    policy 403, while `x-ignore-*` fields and field names in another case are
//!    accepted;
//! 3. the answer does not depend on how the body is split into pieces.
#![no_main]

use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::body::Body;
use chrono::{DateTime, TimeZone as _, Utc};
use libfuzzer_sys::fuzz_target;
use svc_emulator::fuzzing::{Storage, StorageConfig, UploadEvent};
use tower::ServiceExt as _;

const BUCKET: &str = "svc-eu-west-3";
const BOUNDARY: &str = "svcfuzzBoundary7MA4YWxkTrZu0gW";
const UPLOAD_TTL: Duration = Duration::from_secs(3600);
const MAX_FILE: usize = 2048;
/// The fields of every handed-out form, in the order the service hands them out
/// (`svc_cloud_api::UPLOAD_FIELDS`), then the fixture's extra field.
fn form_fields() -> impl Iterator<Item = &'static str> {
    svc_cloud_api::UPLOAD_FIELDS
        .into_iter()
        .chain([EXTRA_FIELD.0])
}
/// A field the storage adds to its forms, signed into the policy like the others.
const EXTRA_FIELD: (&str, &str) = ("x-amz-meta-origin", "fuzz");

struct Fixture {
    runtime: tokio::runtime::Runtime,
    storage: Storage,
    /// Seconds added to the storage's clock (to expire a policy).
    clock_offset: Arc<AtomicI64>,
    uploads: Arc<Mutex<Vec<UploadEvent>>>,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let root: PathBuf = svc_fuzz::scratch_dir("storage");
        let uploads = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&uploads);
        let config = StorageConfig {
            root,
            public_url: "http://127.0.0.1:4566".to_owned(),
            access_key: "AKIAFUZZ".to_owned(),
            secret_key: "fuzz-secret-key".to_owned(),
            session_token: "IQoJb3JpZ2luX2VjEFUZZ//////////wEaCWV1LXdlc3QtMy+fuzz==".to_owned(),
            extra_fields: vec![(EXTRA_FIELD.0.to_owned(), EXTRA_FIELD.1.to_owned())],
            upload_bytes_per_second: 0,
            upload_ttl: UPLOAD_TTL,
            download_ttl: UPLOAD_TTL,
            on_upload: Arc::new(move |event: &UploadEvent| {
                seen.lock().expect("not poisoned").push(event.clone());
            }),
        };
        let clock_offset = Arc::new(AtomicI64::new(0));
        let offset = Arc::clone(&clock_offset);
        let start: DateTime<Utc> = Utc
            .with_ymd_and_hms(2024, 7, 2, 9, 15, 30)
            .single()
            .expect("a valid date");
        let storage = Storage::new(config)
            .expect("a storage in the temporary folder")
            .with_clock(Arc::new(move || {
                start + chrono::TimeDelta::seconds(offset.load(Ordering::Relaxed))
            }));
        Fixture {
            runtime: tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime"),
            storage,
            clock_offset,
            uploads,
        }
    })
}

/// How the handed-out form is changed, and what the storage must answer.
#[derive(Debug, Clone, Copy)]
enum Mutation {
    None,
    ChangeValue,
    Drop,
    Repeat,
    ExtraField,
    FieldAfterFile,
    WrongSize,
    OtherCase,
    NoFile,
    Expired,
}

const MUTATIONS: [Mutation; 10] = [
    Mutation::None,
    Mutation::ChangeValue,
    Mutation::Drop,
    Mutation::Repeat,
    Mutation::ExtraField,
    Mutation::FieldAfterFile,
    Mutation::WrongSize,
    Mutation::OtherCase,
    Mutation::NoFile,
    Mutation::Expired,
];

/// The storage's answer: status and S3 error code (empty for a success).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    status: u16,
    code: String,
}

fuzz_target!(|data: &[u8]| {
    let [mode, chunk, rest @ ..] = data else {
        return;
    };
    let fixture = fixture();
    fixture.clock_offset.store(0, Ordering::Relaxed);
    fixture.uploads.lock().expect("not poisoned").clear();
    if mode % 2 == 0 {
        form(fixture, usize::from(*chunk), rest);
    } else {
        raw(fixture, usize::from(*chunk), rest);
    }
});

/// 1 and 3 on arbitrary bodies.
fn raw(fixture: &Fixture, chunk: usize, data: &[u8]) {
    let (content_type, body) = match data.iter().position(|&b| b == b'\n') {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (&b"multipart/form-data; boundary=x"[..], data),
    };
    let Ok(content_type) = std::str::from_utf8(content_type) else {
        return;
    };
    if http::HeaderValue::from_str(content_type).is_err() {
        return;
    }
    let whole = post(fixture, content_type, body, 0);
    check_documented(&whole);
    let uploaded = fixture.uploads.lock().expect("not poisoned").clone();
    if whole.status == 204 {
        let [event] = uploaded.as_slice() else {
            panic!("a 204 without exactly one upload event: {uploaded:?}");
        };
        delete(fixture, &event.key);
    } else {
        assert!(uploaded.is_empty(), "an upload event for a {whole:?}");
    }
    fixture.uploads.lock().expect("not poisoned").clear();
    let pieces = post(fixture, content_type, body, chunk.max(1));
    assert_eq!(pieces, whole, "the answer depends on how the body is split");
    if pieces.status == 204 {
        let key = fixture.uploads.lock().expect("not poisoned")[0].key.clone();
        delete(fixture, &key);
    }
}

/// 2 and 3: the handed-out form, changed.
fn form(fixture: &Fixture, chunk: usize, data: &[u8]) {
    let [mutation, s0, s1, rest @ ..] = data else {
        return;
    };
    let mutation = MUTATIONS[usize::from(*mutation) % MUTATIONS.len()];
    let size = usize::from(u16::from_le_bytes([*s0, *s1])) % (MAX_FILE + 1);
    let mut parts = rest.splitn(3, |&b| b == b'\n');
    let key = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let payload = String::from_utf8_lossy(parts.next().unwrap_or_default()).into_owned();
    let content = parts.next().unwrap_or_default();
    if key.is_empty() {
        return;
    }
    let file: Vec<u8> = if content.is_empty() {
        vec![b'x'; size]
    } else {
        content.iter().copied().cycle().take(size).collect()
    };
    let (_url, handed_out) = fixture.storage.presign_upload(BUCKET, &key, size as u64);
    assert!(
        handed_out.keys().map(String::as_str).eq(form_fields()),
        "the form's fields are not in the order {:?}: {:?}",
        form_fields().collect::<Vec<_>>(),
        handed_out.keys().collect::<Vec<_>>()
    );
    let mut fields: Vec<(String, Vec<u8>)> = handed_out
        .into_iter()
        .map(|(name, value)| (name, value.into_bytes()))
        .collect();
    let pick = payload.len() % fields.len();
    let mut file_part = Some(file.clone());
    let mut after_file = Vec::new();
    let expected = match mutation {
        Mutation::None => Answer::ok(),
        Mutation::ChangeValue => {
            let value = payload.clone().into_bytes();
            if fields[pick].1 == value {
                return;
            }
            fields[pick].1 = value;
            Answer::error(403, "AccessDenied")
        }
        Mutation::Drop => {
            fields.remove(pick);
            Answer::error(403, "AccessDenied")
        }
        Mutation::Repeat => {
            let again = fields[pick].clone();
            fields.push(again);
            Answer::error(403, "AccessDenied")
        }
        Mutation::ExtraField => {
            let name = field_name(&payload);
            if name.is_empty()
                || name.eq_ignore_ascii_case("file")
                || fields.iter().any(|(n, _)| n.eq_ignore_ascii_case(&name))
            {
                return;
            }
            let ignored = name.to_ascii_lowercase().starts_with("x-ignore-");
            fields.push((name, b"extra".to_vec()));
            if ignored {
                Answer::ok()
            } else {
                Answer::error(403, "AccessDenied")
            }
        }
        Mutation::FieldAfterFile => {
            after_file.push(("x-after".to_owned(), b"late".to_vec()));
            Answer::error(400, "InvalidArgument")
        }
        Mutation::WrongSize => {
            if size == 0 || payload.len() % 2 == 0 {
                file_part = Some(vec![b'y'; size + 1]);
                Answer::error(400, "EntityTooLarge")
            } else {
                file_part = Some(vec![b'y'; size - 1]);
                Answer::error(400, "EntityTooSmall")
            }
        }
        Mutation::OtherCase => {
            for (name, _) in &mut fields {
                *name = if payload.len() % 2 == 0 {
                    name.to_ascii_uppercase()
                } else {
                    name.to_ascii_lowercase()
                };
            }
            Answer::ok()
        }
        Mutation::NoFile => {
            file_part = None;
            Answer::error(400, "InvalidArgument")
        }
        Mutation::Expired => {
            let past = UPLOAD_TTL.as_secs() as i64 + (payload.len() as i64);
            fixture.clock_offset.store(past, Ordering::Relaxed);
            Answer::error(403, "AccessDenied")
        }
    };
    let Some(body) = multipart(&fields, file_part.as_deref(), &after_file) else {
        return;
    };
    let content_type = format!("multipart/form-data; boundary={BOUNDARY}");
    let answer = post(fixture, &content_type, &body, 0);
    assert_eq!(
        answer, expected,
        "{mutation:?} of the form for {key:?} ({size} bytes)"
    );
    let uploads = fixture.uploads.lock().expect("not poisoned").clone();
    if answer.status == 204 {
        assert_eq!(
            uploads,
            [UploadEvent {
                bucket: BUCKET.to_owned(),
                key: key.clone(),
                size: size as u64
            }]
        );
        let stored = fixture
            .storage
            .object_path(BUCKET, &key)
            .and_then(|path| std::fs::read(path).ok());
        assert_eq!(
            stored.as_deref(),
            Some(file.as_slice()),
            "the stored file differs"
        );
        delete(fixture, &key);
    } else {
        assert!(uploads.is_empty());
        assert!(
            fixture.storage.object_path(BUCKET, &key).is_none(),
            "a refused upload was stored"
        );
    }
    // 3: in pieces, the same answer.
    fixture.uploads.lock().expect("not poisoned").clear();
    let pieces = post(fixture, &content_type, &body, chunk.max(1));
    assert_eq!(
        pieces, answer,
        "the answer depends on how the body is split"
    );
    if pieces.status == 204 {
        delete(fixture, &key);
    }
}

impl Answer {
    fn ok() -> Self {
        Answer {
            status: 204,
            code: String::new(),
        }
    }

    fn error(status: u16, code: &str) -> Self {
        Answer {
            status,
            code: code.to_owned(),
        }
    }
}

/// Statuses the storage's documentation lists for an upload.
fn check_documented(answer: &Answer) {
    let documented = match answer.status {
        204 => answer.code.is_empty(),
        400 => matches!(
            answer.code.as_str(),
            "InvalidArgument" | "MalformedPOSTRequest" | "EntityTooSmall" | "EntityTooLarge"
        ),
        403 => answer.code == "AccessDenied",
        404 => answer.code == "NoSuchBucket",
        411 => answer.code == "MissingContentLength",
        _ => false,
    };
    assert!(documented, "undocumented answer {answer:?}");
}

/// A form field name made of the payload's letters, digits and `-`.
fn field_name(payload: &str) -> String {
    payload
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect()
}

/// The multipart body: the fields, the file (if any), then the fields after it; `None`
/// when a value holds the boundary (the form would not be the one meant).
fn multipart(
    fields: &[(String, Vec<u8>)],
    file: Option<&[u8]>,
    after: &[(String, Vec<u8>)],
) -> Option<Vec<u8>> {
    let holds_boundary = |value: &[u8]| {
        value
            .windows(BOUNDARY.len())
            .any(|w| w == BOUNDARY.as_bytes())
    };
    if fields.iter().chain(after).any(|(_, v)| holds_boundary(v))
        || file.is_some_and(holds_boundary)
    {
        return None;
    }
    let mut body = Vec::new();
    let mut part = |name: &str, filename: bool, value: &[u8]| {
        body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        let disposition = if filename {
            format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"upload.bin\"\r\n")
        } else {
            format!("Content-Disposition: form-data; name=\"{name}\"\r\n")
        };
        body.extend_from_slice(disposition.as_bytes());
        body.extend_from_slice(b"\r\n");
        body.extend_from_slice(value);
        body.extend_from_slice(b"\r\n");
    };
    for (name, value) in fields {
        part(name, false, value);
    }
    if let Some(file) = file {
        part("file", true, file);
    }
    for (name, value) in after {
        part(name, false, value);
    }
    body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    Some(body)
}

/// POSTs `body` to the bucket, in pieces of `chunk` bytes (0: at once).
fn post(fixture: &Fixture, content_type: &str, body: &[u8], chunk: usize) -> Answer {
    let body_stream = if chunk == 0 {
        Body::from(body.to_vec())
    } else {
        let pieces: Vec<Result<Vec<u8>, std::io::Error>> =
            body.chunks(chunk).map(|piece| Ok(piece.to_vec())).collect();
        Body::from_stream(futures::stream::iter(pieces))
    };
    let request = http::Request::builder()
        .method("POST")
        .uri(format!("/{BUCKET}"))
        .header("content-type", content_type)
        .header("content-length", body.len())
        .body(body_stream)
        .expect("a valid request");
    fixture.runtime.block_on(async {
        let response = fixture
            .storage
            .router()
            .oneshot(request)
            .await
            .expect("the router answers");
        let status = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("an answer under 1 MiB");
        let text = String::from_utf8_lossy(&bytes);
        let code = text
            .split_once("<Code>")
            .and_then(|(_, rest)| rest.split_once("</Code>"))
            .map(|(code, _)| code.to_owned())
            .unwrap_or_default();
        Answer { status, code }
    })
}

fn delete(fixture: &Fixture, key: &str) {
    fixture
        .runtime
        .block_on(fixture.storage.delete_object(BUCKET, key))
        .expect("deleting an uploaded object");
}
