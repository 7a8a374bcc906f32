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
