//! Uploads to object storage (`openapi/cloud.yaml`, the `UploadInfo` schema).

use std::time::Duration;

use serde_json::{Value, json};
use svc_emulator::EmulatorConfig;

use crate::common::{
    Env, UPLOAD_FIELDS, assert_storage_error, assert_timestamp, config, decode_policy, poll,
    post_form, upload, upload_fields, upload_url,
};

const CONTENT: &[u8] =
    b"$GPGGA,103000.00,4851.000000,N,00221.000000,E,1,12,0.8,35.000,M,47.000,M,,*00\r\n";

async fn pending_file(env: &Env) -> (String, Value) {
    let c = env
        .create_container(json!([{"path": "rover.nmea", "type": "input", "size": CONTENT.len()}]))
        .await;
    (c["id"].as_str().unwrap().to_owned(), c["files"][0].clone())
}

async fn file_status(env: &Env, container: &str) -> String {
    env.container(container).await["files"][0]["status"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_succeeds_with_204_and_the_file_becomes_ready() {
    let env = Env::start().await;
    let (container, file) = pending_file(&env).await;
    assert_eq!(file_status(&env, &container).await, "pending");
    let (status, body) = upload(&env.http, &file, CONTENT.to_vec()).await;
    assert_eq!(status, 204, "{body}");
    let c = env.container(&container).await;
    let stored = &c["files"][0];
    assert_eq!(stored["status"], "ready", "{c}");
    assert_eq!(stored["size"], CONTENT.len());
    assert!(
        stored["uploadInfo"].is_null(),
        "no uploadInfo once ready: {stored}"
    );
    // Renaming and retyping a ready file leave it ready.
    let url = format!("/api/v2/container-files/{}", stored["id"].as_str().unwrap());
    let r = env
        .patch(
            &url,
            &json!({"path": "renamed/rover.nmea", "type": "resources"}),
        )
        .await;
    assert_eq!(r.ok()["status"], "ready", "{}", r.text);
    assert_eq!(file_status(&env, &container).await, "ready");
    // An empty file registered with size 0 uploads too.
    let c = env
        .create_container(json!([{"path": "empty.txt", "type": "resources", "size": 0}]))
        .await;
    let (status, body) = upload(&env.http, &c["files"][0], Vec::new()).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(file_status(&env, c["id"].as_str().unwrap()).await, "ready");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modified_field_is_403() {
    let env = Env::start().await;
    let (container, file) = pending_file(&env).await;
    let fields = upload_fields(&file);
    for name in UPLOAD_FIELDS {
        let changed: Vec<(String, String)> = fields
            .iter()
            .map(|(k, v)| {
                let v = if k == name {
                    match name {
                        // Keep the shape of each value, change its content.
                        "X-Amz-Signature" => {
                            format!("{}{}", if v.starts_with('0') { "1" } else { "0" }, &v[1..])
                        }
                        "Policy" => {
                            let mut p = decode_policy(&file);
                            p["expiration"] = json!("2099-01-01T00:00:00.000Z");
                            base64::Engine::encode(
                                &base64::engine::general_purpose::STANDARD,
                                p.to_string(),
                            )
                        }
                        _ => format!("{v}x"),
                    }
                } else {
                    v.clone()
                };
                (k.clone(), v)
            })
            .collect();
        let (status, body) = post_form(
            &env.http,
            &upload_url(&file),
            &changed,
            Some(CONTENT.to_vec()),
            &[],
        )
        .await;
        assert_eq!(status, 403, "modified {name}: {body}");
        assert_storage_error(&body);
        assert_eq!(
            file_status(&env, &container).await,
            "pending",
            "after modified {name}"
        );
    }
    // The untouched form still works.
    let (status, body) = upload(&env.http, &file, CONTENT.to_vec()).await;
    assert_eq!(status, 204, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_missing_field_is_403() {
    let env = Env::start().await;
    let (container, file) = pending_file(&env).await;
    let fields = upload_fields(&file);
    for name in UPLOAD_FIELDS {
        let without: Vec<(String, String)> =
            fields.iter().filter(|(k, _)| k != name).cloned().collect();
        let (status, body) = post_form(
            &env.http,
            &upload_url(&file),
            &without,
            Some(CONTENT.to_vec()),
            &[],
        )
        .await;
        assert_eq!(status, 403, "without {name}: {body}");
        assert_storage_error(&body);
    }
    assert_eq!(file_status(&env, &container).await, "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_length_is_400_and_the_file_stays_pending() {
    let env = Env::start().await;
    let (container, file) = pending_file(&env).await;
    for bytes in [
        CONTENT[..CONTENT.len() - 1].to_vec(),
        [CONTENT, b"x"].concat(),
        Vec::new(),
    ] {
        let (status, body) = upload(&env.http, &file, bytes.clone()).await;
        assert_eq!(
            status,
            400,
            "{} bytes for {} registered: {body}",
            bytes.len(),
            CONTENT.len()
        );
        assert_storage_error(&body);
        assert_eq!(file_status(&env, &container).await, "pending");
    }
    let (status, body) = upload(&env.http, &file, CONTENT.to_vec()).await;
    assert_eq!(status, 204, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_not_last_is_400() {
    let env = Env::start().await;
    let (container, file) = pending_file(&env).await;
    let fields = upload_fields(&file);
    // The last signed field after the file.
    let (before, after) = fields.split_at(fields.len() - 1);
    let (status, body) = post_form(
        &env.http,
        &upload_url(&file),
        before,
        Some(CONTENT.to_vec()),
        after,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_storage_error(&body);
    // Every field, then the file, then an extra field.
    let extra = [("x-ignore-note".to_owned(), "after the file".to_owned())];
    let (status, body) = post_form(
        &env.http,
        &upload_url(&file),
        &fields,
        Some(CONTENT.to_vec()),
        &extra,
    )
    .await;
    assert_eq!(status, 400, "{body}");
    assert_storage_error(&body);
    assert_eq!(file_status(&env, &container).await, "pending");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_policy_is_403_and_a_fresh_one_works() {
    let env = Env::with(EmulatorConfig {
        upload_ttl: Duration::from_secs(1),
        ..config()
    })
    .await;
    let (container, file) = pending_file(&env).await;
    let expiration = assert_timestamp(&decode_policy(&file)["expiration"]);
    // Wait (bounded) until the policy's expiration has passed.
    poll("policy expiration", Duration::from_secs(5), || async {
        (chrono::Utc::now() > expiration + chrono::TimeDelta::milliseconds(50)).then_some(())
    })
    .await;
    let (status, body) = upload(&env.http, &file, CONTENT.to_vec()).await;
    assert_eq!(status, 403, "{body}");
    assert_storage_error(&body);
    assert_eq!(file_status(&env, &container).await, "pending");
    // Reading the container again gives a fresh form.
    let fresh = env.container(&container).await["files"][0].clone();
    let (status, body) = upload(&env.http, &fresh, CONTENT.to_vec()).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(file_status(&env, &container).await, "ready");
}

/// The forms of temporary credentials: the session token is handed out with the
/// container's forms and is required: without it, empty (the form the service's own
/// clients once sent) or with another value, 403.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_security_token_is_handed_out_and_required() {
    let env = Env::start().await;
    let (container, file) = pending_file(&env).await;
    let fields = upload_fields(&file);
    let token = fields
        .iter()
        .find(|(k, _)| k == "X-Amz-Security-Token")
        .map(|(_, v)| v.clone())
        .expect("a security token field");
    assert!(!token.is_empty());
    assert_eq!(
        fields.last().map(|(k, _)| k.as_str()),
        Some("X-Amz-Security-Token"),
        "the token is the last field handed out"
    );
    assert!(
        decode_policy(&file)["conditions"]
            .as_array()
            .unwrap()
            .contains(&json!({"x-amz-security-token": token})),
        "the policy holds the token"
    );
    let other = env
        .create_container(json!([{"path": "other.nmea", "type": "input", "size": 1}]))
        .await;
    assert_eq!(
        upload_fields(&other["files"][0])
            .iter()
            .find(|(k, _)| k == "X-Amz-Security-Token")
            .map(|(_, v)| v.as_str()),
        Some(token.as_str()),
        "one session for every form of the emulator"
    );
    for value in [None, Some(""), Some("IQoJb3JpZ2luX2VjEOther==")] {
        let sent: Vec<(String, String)> = fields
            .iter()
            .filter_map(|(k, v)| match (k.as_str(), value) {
                ("X-Amz-Security-Token", None) => None,
                ("X-Amz-Security-Token", Some(other)) => Some((k.clone(), other.to_owned())),
                _ => Some((k.clone(), v.clone())),
            })
            .collect();
        let (status, body) = post_form(
            &env.http,
            &upload_url(&file),
            &sent,
            Some(CONTENT.to_vec()),
            &[],
        )
        .await;
        assert_eq!(status, 403, "token {value:?}: {body}");
        assert_storage_error(&body);
        assert!(!body.contains(&token), "the token is not echoed: {body}");
    }
    assert_eq!(file_status(&env, &container).await, "pending");
    let (status, body) = upload(&env.http, &file, CONTENT.to_vec()).await;
    assert_eq!(status, 204, "{body}");
}

/// `upload_extra_fields`: every form the service hands out (at creation, when files are
/// added, read or listed) carries the extra fields after the standard ones, signed into
/// its policy; the upload needs them unchanged.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extra_upload_fields_are_handed_out_signed_and_required() {
    let env = Env::with(EmulatorConfig {
        upload_extra_fields: vec![
            (
                "x-amz-meta-origin".to_owned(),
                "emulator tests/1".to_owned(),
            ),
            ("success_action_status".to_owned(), "204".to_owned()),
        ],
        ..config()
    })
    .await;
    let (container, file) = pending_file(&env).await;
    let added = env
        .post(
            &format!("/api/v2/containers/{container}/files"),
            &json!({"files": [{"path": "more.nmea", "type": "input", "size": 3}]}),
        )
        .await;
    let mut expected: Vec<&str> = UPLOAD_FIELDS.to_vec();
    expected.extend(["x-amz-meta-origin", "success_action_status"]);
    let listed = env
        .get(&format!(
            "/api/v2/organizations/{}/containers?page=0&perPage=10",
            env.org()
        ))
        .await;
    for form in [
        &file,
        &added.created()[0],
        &env.container(&container).await["files"][1],
        &listed.ok()["containers"][0]["files"][0],
    ] {
        let names: Vec<String> = upload_fields(form).into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, expected, "{form}");
    }
    let fields = upload_fields(&file);
    assert_eq!(fields[8].1, "emulator tests/1");
    let conditions = decode_policy(&file)["conditions"].clone();
    assert!(
        conditions
            .as_array()
            .unwrap()
            .contains(&json!({"x-amz-meta-origin": "emulator tests/1"})),
        "{conditions}"
    );
    for name in ["x-amz-meta-origin", "success_action_status"] {
        let without: Vec<(String, String)> =
            fields.iter().filter(|(k, _)| k != name).cloned().collect();
        let (status, body) = post_form(
            &env.http,
            &upload_url(&file),
            &without,
            Some(CONTENT.to_vec()),
            &[],
        )
        .await;
        assert_eq!(status, 403, "without {name}: {body}");
        assert_storage_error(&body);
    }
    assert_eq!(file_status(&env, &container).await, "pending");
    let (status, body) = upload(&env.http, &file, CONTENT.to_vec()).await;
    assert_eq!(status, 204, "{body}");
    assert_eq!(file_status(&env, &container).await, "ready");
}
