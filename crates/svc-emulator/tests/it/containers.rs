//! Containers (`openapi/cloud.yaml`, `Container`, the container operations and "Limits":
//! paths and value sets).

use std::collections::BTreeSet;

use reqwest::Method;
use serde_json::{Value, json};

use crate::common::{
    Env, REGIONS, UPLOAD_FIELDS, assert_storage_error, assert_timestamp, assert_uuid,
    decode_policy, metadata, post_form, upload, upload_fields, upload_url,
};

fn create_path(env: &Env) -> String {
    format!("/api/v2/organizations/{}/containers", env.org())
}

#[track_caller]
fn mentions(details: &str, word: &str) {
    assert!(
        details.to_lowercase().contains(&word.to_lowercase()),
        "details {details:?} should mention `{word}`"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_requires_a_known_region() {
    let env = Env::start().await;
    let path = create_path(&env);
    let details = env
        .post(&path, &json!({"metadata": {"a": "b"}}))
        .await
        .err(400);
    mentions(&details, "region");
    let details = env
        .post(&path, &json!({"region": "mars-north-1"}))
        .await
        .err(422);
    mentions(&details, "region");
    let details = env
        .post(&path, &json!({"region": "EU-WEST-3"}))
        .await
        .err(422);
    mentions(&details, "region");
    for region in REGIONS {
        let c = env.post(&path, &json!({"region": region})).await;
        assert_eq!(c.ok()["region"], region);
    }
    // Nothing was created by the refused requests.
    let list = env.get(&format!("{path}?page=0&perPage=100")).await;
    assert_eq!(list.ok()["numItems"], REGIONS.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_answers_the_container() {
    let env = Env::start().await;
    let before = chrono::Utc::now() - chrono::TimeDelta::seconds(2);
    let c = env
        .post(
            &create_path(&env),
            &json!({"region": "ap-southeast-2", "metadata": {"project": "p1"}}),
        )
        .await;
    let c = c.ok().clone();
    assert_uuid(&c["id"]);
    assert_uuid(&c["creatorId"]);
    assert_eq!(c["organizationId"], env.org());
    assert_eq!(
        c["status"], "empty",
        "a container without files is empty: {c}"
    );
    assert_eq!(c["region"], "ap-southeast-2");
    assert_eq!(c["metadata"], json!({"project": "p1"}));
    assert_eq!(c["files"], json!([]), "{c}");
    let created = assert_timestamp(&c["createdAt"]);
    let updated = assert_timestamp(&c["updatedAt"]);
    let expires = assert_timestamp(&c["expirationDate"]);
    assert!(
        created >= before && created <= chrono::Utc::now() + chrono::TimeDelta::seconds(2),
        "{c}"
    );
    assert!(updated >= created, "{c}");
    assert_eq!(
        expires - created,
        chrono::TimeDelta::days(30),
        "expirationDate = createdAt + 30 days: {c}"
    );
    // GET answers the same container.
    let got = env.container(c["id"].as_str().unwrap()).await;
    assert_eq!(got, c);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metadata_over_the_limits_is_422() {
    let env = Env::start().await;
    let path = create_path(&env);
    let bad = [
        ("51 keys", metadata(51, 5, 5)),
        ("41-character key", json!({"k".repeat(41): "v"})),
        ("41-character multibyte key", json!({"é".repeat(41): "v"})),
        ("501-character value", json!({"k": "v".repeat(501)})),
        ("number value", json!({"k": 1})),
        ("boolean value", json!({"k": true})),
        ("null value", json!({"k": null})),
        ("object value", json!({"k": {"a": "b"}})),
        ("array value", json!({"k": ["a"]})),
    ];
    for (what, m) in bad {
        let r = env
            .post(&path, &json!({"region": "eu-west-3", "metadata": m}))
            .await;
        assert_eq!(r.status, 422, "{what}: {}", r.text);
        mentions(&r.err(422), "metadata");
    }
    let list = env.get(&format!("{path}?page=0&perPage=10")).await;
    assert_eq!(
        list.ok()["numItems"],
        0,
        "refused creations leave nothing: {}",
        list.text
    );

    // Exactly at the limits: accepted and returned unchanged.
    for (what, m) in [
        (
            "50 keys of 40 characters with 500-character values",
            metadata(50, 40, 500),
        ),
        (
            "40-character multibyte key, 500-character multibyte value",
            json!({"é".repeat(40): "ü".repeat(500)}),
        ),
        ("empty", json!({})),
    ] {
        let r = env
            .post(&path, &json!({"region": "eu-west-3", "metadata": m}))
            .await;
        assert_eq!(r.status, 200, "{what}: {}", r.text);
        assert_eq!(r.json["metadata"], m, "{what}");
    }
    let limit = metadata(50, 40, 500);
    assert_eq!(limit.as_object().unwrap().len(), 50);
    assert!(
        limit
            .as_object()
            .unwrap()
            .keys()
            .all(|k| k.chars().count() == 40)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_with_files_registers_them_pending_with_upload_info() {
    let env = Env::start().await;
    let files = json!([
        {"path": "rover/day1/gnss.nmea", "type": "input", "size": 1234, "metadata": {"sensor": "gnss"}},
        {"path": "profiles/export.json", "type": "resources", "size": 0},
    ]);
    let c = env
        .post(
            &create_path(&env),
            &json!({"region": "us-west-1", "files": files}),
        )
        .await;
    let c = c.ok().clone();
    assert_eq!(c["status"], "valid", "a container with files is valid: {c}");
    let list = c["files"].as_array().expect("files array");
    assert_eq!(list.len(), 2);
    for (file, asked) in list.iter().zip(files.as_array().unwrap()) {
        assert_uuid(&file["id"]);
        assert_uuid(&file["creatorId"]);
        assert_eq!(file["status"], "pending", "{file}");
        assert_eq!(file["path"], asked["path"]);
        assert_eq!(file["type"], asked["type"]);
        assert_eq!(file["size"], asked["size"]);
        assert_timestamp(&file["createdAt"]);
        assert_timestamp(&file["updatedAt"]);
        let info = &file["uploadInfo"];
        let url = info["url"].as_str().expect("uploadInfo.url");
        assert!(
            url.starts_with(&env.info.storage_url),
            "upload goes to object storage: {url}"
        );
        let keys: Vec<&str> = info["fields"]
            .as_object()
            .expect("fields object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, UPLOAD_FIELDS, "upload fields, in order");
        assert!(
            info["fields"]
                .as_object()
                .unwrap()
                .values()
                .all(Value::is_string)
        );
        assert_eq!(info["fields"]["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
        let policy = decode_policy(file);
        assert_timestamp(&policy["expiration"]);
        let conditions = policy["conditions"].as_array().expect("conditions");
        assert!(
            conditions.contains(&json!([
                "content-length-range",
                asked["size"],
                asked["size"]
            ])),
            "content-length-range equals the registered size: {policy}"
        );
        // One condition per signed form field, each matching the field exactly.
        for (name, value) in info["fields"].as_object().unwrap() {
            if name == "Policy" || name == "X-Amz-Signature" {
                continue;
            }
            let covered = conditions.iter().any(|c| {
                c.as_object().is_some_and(|o| {
                    o.iter()
                        .any(|(k, v)| k.eq_ignore_ascii_case(name) && v == value)
                }) || (c.get(0).and_then(Value::as_str) == Some("eq")
                    && c.get(1)
                        .and_then(Value::as_str)
                        .is_some_and(|k| k.trim_start_matches('$').eq_ignore_ascii_case(name))
                    && c.get(2) == Some(value))
            });
            assert!(covered, "no policy condition for field {name}: {policy}");
        }
        // Credential scope `<access key>/<date>/<region>/s3/aws4_request`.
        let credential = info["fields"]["X-Amz-Credential"].as_str().unwrap();
        let scope: Vec<&str> = credential.split('/').collect();
        assert_eq!(scope.len(), 5, "{credential}");
        assert_eq!(
            scope[2], "us-west-1",
            "credential region is the container's: {credential}"
        );
        assert_eq!(&scope[3..], ["s3", "aws4_request"], "{credential}");
        let amz_date = info["fields"]["X-Amz-Date"].as_str().unwrap();
        assert!(
            amz_date.len() == 16 && amz_date.starts_with(scope[1]) && amz_date.ends_with('Z'),
            "X-Amz-Date in ISO 8601 basic format, same day as the credential: {amz_date}"
        );
        assert_eq!(
            file["creatorId"], c["creatorId"],
            "registered by the same key owner"
        );
    }
    assert_eq!(list[0]["metadata"], json!({"sensor": "gnss"}));
    // Two distinct upload keys.
    assert_ne!(
        list[0]["uploadInfo"]["fields"]["key"],
        list[1]["uploadInfo"]["fields"]["key"]
    );
    // GET and the list still show the upload information of pending files.
    let got = env.container(c["id"].as_str().unwrap()).await;
    for file in got["files"].as_array().unwrap() {
        assert_eq!(file["status"], "pending");
        assert!(file["uploadInfo"]["url"].is_string(), "{file}");
    }
    let listed = env
        .get(&format!("{}?page=0&perPage=10", create_path(&env)))
        .await;
    let listed = listed.ok()["containers"][0]["files"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(listed.len(), 2);
    for file in &listed {
        let keys: Vec<&str> = file["uploadInfo"]["fields"]
            .as_object()
            .unwrap_or_else(|| panic!("listing without uploadInfo: {file}"))
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, UPLOAD_FIELDS);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_with_bad_files_creates_nothing() {
    let env = Env::start().await;
    let path = create_path(&env);
    let dup = json!([{"path": "dup/x.nmea", "type": "input", "size": 1}, {"path": "dup/x.nmea", "type": "input", "size": 2}]);
    let details = env
        .post(&path, &json!({"region": "eu-west-3", "files": dup}))
        .await
        .err(409);
    mentions(&details, "dup/x.nmea");
    let bad_path = json!([{"path": "/abs", "type": "input", "size": 1}]);
    mentions(
        &env.post(&path, &json!({"region": "eu-west-3", "files": bad_path}))
            .await
            .err(422),
        "path",
    );
    let bad_type = json!([{"path": "x", "type": "video", "size": 1}]);
    mentions(
        &env.post(&path, &json!({"region": "eu-west-3", "files": bad_type}))
            .await
            .err(422),
        "type",
    );
    let list = env.get(&format!("{path}?page=0&perPage=10")).await;
    assert_eq!(list.ok()["numItems"], 0, "{}", list.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_replaces_the_whole_metadata() {
    let env = Env::start().await;
    let c = env
        .post(
            &create_path(&env),
            &json!({"region": "eu-west-3", "metadata": {"a": "1", "b": "2"}}),
        )
        .await;
    let id = c.ok()["id"].as_str().unwrap().to_owned();
    let path = format!("/api/v2/containers/{id}");

    let r = env.patch(&path, &json!({"metadata": {"c": "3"}})).await;
    assert_eq!(
        r.ok()["metadata"],
        json!({"c": "3"}),
        "full replacement, no merge"
    );
    assert_eq!(r.json["id"], id);
    assert_eq!(env.container(&id).await["metadata"], json!({"c": "3"}));

    // A body without metadata changes nothing; so does no body at all.
    let r = env.patch(&path, &json!({})).await;
    assert_eq!(r.ok()["metadata"], json!({"c": "3"}));
    let r = env
        .call_as(Some(&env.token), Method::PATCH, &env.cloud(&path), None)
        .await;
    assert_eq!(r.ok()["metadata"], json!({"c": "3"}));

    // Over the limits: 422 and unchanged.
    let details = env
        .patch(&path, &json!({"metadata": {"k": "v".repeat(501)}}))
        .await
        .err(422);
    mentions(&details, "metadata");
    assert_eq!(env.container(&id).await["metadata"], json!({"c": "3"}));

    // {} clears it.
    let r = env.patch(&path, &json!({"metadata": {}})).await;
    let m = &r.ok()["metadata"];
    assert!(m.is_null() || *m == json!({}), "{m}");

    // Unknown container: 404.
    env.patch(
        &format!("/api/v2/containers/{}", uuid::Uuid::new_v4()),
        &json!({"metadata": {}}),
    )
    .await
    .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_removes_the_container() {
    let env = Env::start().await;
    let c = env
        .create_container(json!([{"path": "f.nmea", "type": "input", "size": 5}]))
        .await;
    let id = c["id"].as_str().unwrap();
    let r = env.delete(&format!("/api/v2/containers/{id}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    env.get(&format!("/api/v2/containers/{id}")).await.err(404);
    env.delete(&format!("/api/v2/containers/{id}"))
        .await
        .err(404);
    env.delete(&format!(
        "/api/v2/container-files/{}",
        c["files"][0]["id"].as_str().unwrap()
    ))
    .await
    .err(404);
    let list = env
        .get(&format!("{}?page=0&perPage=10", create_path(&env)))
        .await;
    assert_eq!(list.ok()["numItems"], 0);
    // Unknown and malformed ids: 404.
    env.get(&format!("/api/v2/containers/{}", uuid::Uuid::new_v4()))
        .await
        .err(404);
}

/// A deleted container's upload forms are refused as an expired or tampered form is (403
/// `AccessDenied`, S3's error body): its file is gone, the object would be an orphan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_forms_of_a_deleted_container_are_refused_with_403() {
    let env = Env::start().await;
    let c = env
        .create_container(json!([
            {"path": "a.nmea", "type": "input", "size": 5},
            {"path": "b.nmea", "type": "input", "size": 5},
        ]))
        .await;
    let id = c["id"].as_str().unwrap();
    let (first, second) = (&c["files"][0], &c["files"][1]);
    // The first file uploaded: a second upload to its form would replace it.
    let (status, body) = upload(&env.http, first, b"12345".to_vec()).await;
    assert_eq!(status, 204, "{body}");
    // A tampered form: the 403 whose shape the refusals must have.
    let tampered: Vec<(String, String)> = upload_fields(second)
        .into_iter()
        .map(|(k, v)| match k.as_str() {
            "X-Amz-Signature" => (k, "0".repeat(v.len())),
            _ => (k, v),
        })
        .collect();
    let (status, denied) = post_form(
        &env.http,
        &upload_url(second),
        &tampered,
        Some(b"12345".to_vec()),
        &[],
    )
    .await;
    assert_eq!(status, 403, "{denied}");

    let r = env.delete(&format!("/api/v2/containers/{id}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    for file in [first, second] {
        let (status, body) = upload(&env.http, file, b"12345".to_vec()).await;
        assert_eq!(status, 403, "{body}");
        assert_storage_error(&body);
        let shape = |body: &str| {
            body.split("<Message>")
                .next()
                .unwrap_or_default()
                .to_owned()
        };
        assert_eq!(shape(&body), shape(&denied), "{body}");
        assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
        mentions(&body, "deleted");
    }
    env.get(&format!("/api/v2/containers/{id}")).await.err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_pages_with_total_count() {
    let env = Env::start().await;
    let mut created = BTreeSet::new();
    for i in 0..5 {
        let c = env
            .post(
                &create_path(&env),
                &json!({"region": "eu-west-3", "metadata": {"i": i.to_string()}}),
            )
            .await;
        created.insert(c.ok()["id"].as_str().unwrap().to_owned());
    }
    let mut seen = Vec::new();
    for (page, expected) in [(0, 2), (1, 2), (2, 1), (3, 0)] {
        let r = env
            .get(&format!("{}?page={page}&perPage=2", create_path(&env)))
            .await;
        let body = r.ok();
        assert_eq!(body["numItems"], 5, "numItems is the total: {}", r.text);
        let items = body["containers"].as_array().expect("containers array");
        assert_eq!(items.len(), expected, "page {page}: {}", r.text);
        seen.extend(items.iter().map(|c| c["id"].as_str().unwrap().to_owned()));
    }
    assert_eq!(seen.len(), 5, "no container on two pages");
    assert_eq!(seen.into_iter().collect::<BTreeSet<_>>(), created);
    let all = env
        .get(&format!("{}?page=0&perPage=100", create_path(&env)))
        .await;
    assert_eq!(all.ok()["containers"].as_array().unwrap().len(), 5);
    let one = env
        .get(&format!("{}?page=4&perPage=1", create_path(&env)))
        .await;
    assert_eq!(one.ok()["containers"].as_array().unwrap().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_paging_parameters_are_checked() {
    let env = Env::start().await;
    let base = create_path(&env);
    for (query, status, word) in [
        ("perPage=10", 400, "page"),
        ("page=0", 400, "perPage"),
        ("", 400, "page"),
        ("page=0&perPage=abc", 400, "perPage"),
        ("page=x&perPage=10", 400, "page"),
        ("page=0&perPage=0", 422, "perPage"),
        ("page=0&perPage=101", 422, "perPage"),
        ("page=-1&perPage=10", 422, "page"),
    ] {
        let r = env.get(&format!("{base}?{query}")).await;
        assert_eq!(r.status, status, "?{query}: {}", r.text);
        mentions(&r.err(status), word);
    }
    let r = env.get(&format!("{base}?page=0&perPage=1")).await;
    assert_eq!(r.ok()["numItems"], 0);
    assert_eq!(r.json["containers"], json!([]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_json_is_400() {
    let env = Env::start().await;
    let c = env.create_container(json!([])).await;
    let id = c["id"].as_str().unwrap();
    for (method, path) in [
        (Method::POST, create_path(&env)),
        (Method::PATCH, format!("/api/v2/containers/{id}")),
        (Method::POST, format!("/api/v2/containers/{id}/files")),
    ] {
        for body in ["{\"region\": ", "not json", "[1, 2"] {
            let r = env.call_raw(method.clone(), &env.cloud(&path), body).await;
            r.err(400);
        }
    }
    // A JSON value of the wrong shape: 400 as well.
    env.call_raw(
        Method::POST,
        &env.cloud(&create_path(&env)),
        "[\"eu-west-3\"]",
    )
    .await
    .err(400);
    let list = env
        .get(&format!("{}?page=0&perPage=10", create_path(&env)))
        .await;
    assert_eq!(list.ok()["numItems"], 1);
}
