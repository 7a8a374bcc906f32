//! POST uploads: accepted forms, and every refusal with nothing stored.

use super::*;

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
        signing_keys: Arc::default(),
        gate: None,
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

/// The forms of an object the gate no longer wants answer as an expired policy does,
/// whether it stopped wanting it before the file arrived or while it was being stored.
#[tokio::test]
async fn an_object_no_longer_wanted_is_refused_with_403_and_not_kept() {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let wants = Arc::new(Mutex::new(vec![false]));
    let (log, answers) = (asked.clone(), wants.clone());
    let h = Harness::start_with_gate(Some(Arc::new(move |bucket: &str, key: &str| {
        log.lock().unwrap().push(format!("{bucket}/{key}"));
        let mut answers = answers.lock().unwrap();
        if answers.len() > 1 {
            answers.remove(0)
        } else {
            answers[0]
        }
    })))
    .await;
    let (url, fields) = h.presign("gone", 10);
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_error(&answer, 403, "AccessDenied", "was deleted");
    h.assert_nothing_stored();
    // A field after the file still answers 400: the file is read through.
    let late = form(&fields, Some(content(10))).text("x-ignore-late", "1");
    let answer = h.post(&url, late).await;
    assert_error(&answer, 400, "InvalidArgument", "must be the last");
    h.assert_nothing_stored();

    // Wanted when the file arrives, deleted while it is stored: refused, and removed.
    *wants.lock().unwrap() = vec![true, false];
    asked.lock().unwrap().clear();
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_error(&answer, 403, "AccessDenied", "was deleted");
    h.assert_nothing_stored();
    assert_eq!(
        *asked.lock().unwrap(),
        [format!("{BUCKET}/gone"), format!("{BUCKET}/gone")]
    );

    // Wanted: stored, as without a gate.
    *wants.lock().unwrap() = vec![true];
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_eq!(answer.status.as_u16(), 204, "{}", answer.body);
    assert_eq!(h.bucket_files(BUCKET), ["k.gone"]);
    assert_eq!(h.events().len(), 1);
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

/// The forms of temporary credentials: the session token goes with the access key. A
/// form without it, with it empty or with another value is refused, and so is a policy
/// signed without a condition on it (the field would not be covered), even when the
/// token sent is the right one.
#[tokio::test]
async fn the_security_token_is_required_and_checked() {
    let h = Harness::start().await;
    let (url, fields) = h.presign("k", 10);
    let token = "X-Amz-Security-Token";

    let answer = h
        .post(&url, form(&without(&fields, token), Some(content(10))))
        .await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field X-Amz-Security-Token missing",
    );
    let other_session = SESSION_TOKEN.replace("emu", "other");
    for value in ["", other_session.as_str(), &SESSION_TOKEN[1..]] {
        let answer = h
            .post(
                &url,
                form(&with_value(&fields, token, value), Some(content(10))),
            )
            .await;
        assert_error(
            &answer,
            403,
            "AccessDenied",
            "not the session token of the access key",
        );
        assert!(!answer.body.contains(SESSION_TOKEN), "{}", answer.body);
        assert!(
            value.is_empty() || !answer.body.contains(value),
            "{}",
            answer.body
        );
    }

    // Signed by the same keys for another session: its token is refused.
    let stranger = Storage {
        config: Arc::new(StorageConfig {
            session_token: other_session.clone(),
            ..(*h.storage.config).clone()
        }),
        clock: h.storage.clock.clone(),
        signing_keys: Arc::default(),
        gate: None,
    };
    let (_, forged) = stranger.presign_upload(BUCKET, "k", 10);
    let forged: Vec<_> = forged.into_iter().collect();
    let answer = h.post(&url, form(&forged, Some(content(10)))).await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "not the session token of the access key",
    );

    // A policy without the token's condition, validly signed: the field is not covered.
    let value = |name: &str| fields.iter().find(|(n, _)| n == name).unwrap().1.clone();
    let amz_date = value("X-Amz-Date");
    let policy = serde_json::json!({
        "expiration": (Utc::now() + TimeDelta::seconds(600))
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string(),
        "conditions": [
            {"bucket": BUCKET},
            {"x-amz-algorithm": "AWS4-HMAC-SHA256"},
            {"x-amz-credential": value("X-Amz-Credential")},
            {"x-amz-date": amz_date},
            {"key": "k"},
            ["content-length-range", 10, 10],
        ],
    });
    let policy = base64::engine::general_purpose::STANDARD.encode(policy.to_string());
    let key = signing_key(SECRET_KEY, &amz_date[..8], "eu-west-3");
    let signature = hex::encode(hmac_sha256(&key, policy.as_bytes()));
    let uncovered = with_value(
        &with_value(&fields, "Policy", &policy),
        "X-Amz-Signature",
        &signature,
    );
    let answer = h.post(&url, form(&uncovered, Some(content(10)))).await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field X-Amz-Security-Token is not allowed by the policy",
    );
    h.assert_nothing_stored();

    // The form as handed out.
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_eq!(answer.status.as_u16(), 204, "{}", answer.body);
}

/// An extra field handed out is signed into the policy: sent unchanged the upload is
/// stored; without it or with another value it is refused, like any handed-out field.
#[tokio::test]
async fn an_extra_field_handed_out_must_be_sent_unchanged() {
    let h = Harness::start_with_extra_fields(&[("x-amz-meta-origin", "svc tests/1")]).await;
    let (url, fields) = h.presign("k", 10);
    let extra = "x-amz-meta-origin";

    let answer = h
        .post(&url, form(&without(&fields, extra), Some(content(10))))
        .await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field x-amz-meta-origin does not match the policy",
    );
    let answer = h
        .post(
            &url,
            form(
                &with_value(&fields, extra, "svc tests/2"),
                Some(content(10)),
            ),
        )
        .await;
    assert_error(
        &answer,
        403,
        "AccessDenied",
        "Field x-amz-meta-origin does not match the policy",
    );
    h.assert_nothing_stored();

    // In another case, as S3 compares field names.
    let renamed: Vec<(String, String)> = fields
        .iter()
        .map(|(n, v)| {
            if n == extra {
                ("X-Amz-Meta-Origin".to_owned(), v.clone())
            } else {
                (n.clone(), v.clone())
            }
        })
        .collect();
    let answer = h.post(&url, form(&renamed, Some(content(10)))).await;
    assert_eq!(answer.status.as_u16(), 204, "{}", answer.body);
    let answer = h.post(&url, form(&fields, Some(content(10)))).await;
    assert_eq!(answer.status.as_u16(), 204, "{}", answer.body);
    assert_eq!(h.events().len(), 2);
}

/// Extra fields that could not be handed out stop the storage from starting, with the
/// name in the message (never the value).
#[test]
fn extra_fields_that_cannot_be_handed_out_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let config = |session_token: &str, extra: &[(&str, &str)]| StorageConfig {
        root: dir.path().join("objects"),
        public_url: "http://127.0.0.1:9".to_owned(),
        access_key: ACCESS_KEY.to_owned(),
        secret_key: SECRET_KEY.to_owned(),
        session_token: session_token.to_owned(),
        extra_fields: extra
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect(),
        upload_bytes_per_second: 0,
        upload_ttl: Duration::from_secs(600),
        download_ttl: Duration::from_secs(600),
        on_upload: Arc::new(|_: &UploadEvent| {}),
    };
    let long = "v".repeat(64 * 1024 + 1);
    for (extra, named) in [
        (vec![("", "secret-value")], "needs a name"),
        (vec![("x-amz-meta a", "secret-value")], "x-amz-meta a"),
        (vec![("x\"y", "secret-value")], "x\\\"y"),
        (vec![("file", "secret-value")], "file"),
        (vec![("POLICY", "secret-value")], "POLICY"),
        (
            vec![("x-amz-security-token", "secret-value")],
            "x-amz-security-token",
        ),
        (vec![("x-ignore-note", "secret-value")], "x-ignore-note"),
        (
            vec![
                ("x-amz-meta-a", "secret-value"),
                ("X-Amz-Meta-A", "secret-value"),
            ],
            "twice",
        ),
        (vec![("x-amz-meta-a", long.as_str())], "longer than"),
    ] {
        let error = Storage::new(config(SESSION_TOKEN, &extra))
            .err()
            .unwrap_or_else(|| panic!("{extra:?} accepted"));
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
        let message = error.to_string();
        assert!(message.contains(named), "{message}");
        assert!(!message.contains("secret-value"), "{message}");
    }
    let error = Storage::new(config("", &[]))
        .err()
        .expect("no session token");
    assert!(error.to_string().contains("session token"), "{error}");
    assert!(Storage::new(config(SESSION_TOKEN, &[("success_action_status", "204")])).is_ok());
}
