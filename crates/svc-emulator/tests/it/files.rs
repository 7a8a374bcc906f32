//! Container files (`openapi/cloud.yaml`, `ContainerFile` and the file operations: paths,
//! collisions).

use serde_json::{Value, json};

use crate::common::{Env, UPLOAD_FIELDS, assert_storage_error, assert_uuid, upload};

#[track_caller]
fn mentions(details: &str, word: &str) {
    assert!(
        details.to_lowercase().contains(&word.to_lowercase()),
        "details {details:?} should mention `{word}`"
    );
}

fn paths(container: &Value) -> Vec<String> {
    container["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

async fn empty_container(env: &Env) -> String {
    env.create_container(json!([])).await["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_files_answers_201_with_a_bare_array_in_request_order() {
    let env = Env::start().await;
    let id = empty_container(&env).await;
    assert_eq!(env.container(&id).await["status"], "empty");
    let files = json!([
        {"path": "rover/b.nmea", "type": "input", "size": 10, "metadata": {"k": "v"}},
        {"path": "rover/a.nmea", "type": "input", "size": 20},
        {"path": "res/profile.json", "type": "resources", "size": 30},
    ]);
    let r = env
        .post(
            &format!("/api/v2/containers/{id}/files"),
            &json!({"files": files}),
        )
        .await;
    let list = r
        .created()
        .as_array()
        .unwrap_or_else(|| panic!("add files answers a bare array: {}", r.text))
        .clone();
    assert_eq!(list.len(), 3);
    for (file, asked) in list.iter().zip(files.as_array().unwrap()) {
        assert_uuid(&file["id"]);
        assert_eq!(file["path"], asked["path"]);
        assert_eq!(file["type"], asked["type"]);
        assert_eq!(file["size"], asked["size"]);
        assert_eq!(file["status"], "pending");
        let keys: Vec<&str> = file["uploadInfo"]["fields"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, UPLOAD_FIELDS);
    }
    assert_eq!(list[0]["metadata"], json!({"k": "v"}));
    let c = env.container(&id).await;
    assert_eq!(c["status"], "valid", "{c}");
    let mut got = paths(&c);
    got.sort();
    assert_eq!(got, ["res/profile.json", "rover/a.nmea", "rover/b.nmea"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_held_by_another_file_is_409_and_nothing_registered() {
    let env = Env::start().await;
    let id = empty_container(&env).await;
    let path = format!("/api/v2/containers/{id}/files");
    env.post(
        &path,
        &json!({"files": [{"path": "day1/rover.nmea", "type": "input", "size": 1}]}),
    )
    .await
    .created();
    let r = env
        .post(
            &path,
            &json!({"files": [
                {"path": "day1/new.nmea", "type": "input", "size": 1},
                {"path": "day1/rover.nmea", "type": "resources", "size": 2},
            ]}),
        )
        .await;
    mentions(&r.err(409), "day1/rover.nmea");
    assert_eq!(
        paths(&env.container(&id).await),
        ["day1/rover.nmea"],
        "all or nothing"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_path_in_one_request_is_409_and_nothing_registered() {
    let env = Env::start().await;
    let id = empty_container(&env).await;
    let r = env
        .post(
            &format!("/api/v2/containers/{id}/files"),
            &json!({"files": [
                {"path": "x/one.nmea", "type": "input", "size": 1},
                {"path": "x/two.nmea", "type": "input", "size": 1},
                {"path": "x/one.nmea", "type": "input", "size": 1},
            ]}),
        )
        .await;
    mentions(&r.err(409), "x/one.nmea");
    let c = env.container(&id).await;
    assert_eq!(c["files"], json!([]), "{c}");
    assert_eq!(c["status"], "empty");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_paths_are_422() {
    let env = Env::start().await;
    let id = empty_container(&env).await;
    let path = format!("/api/v2/containers/{id}/files");
    let invalid = [
        ("empty", String::new()),
        ("absolute", "/abs/file.nmea".to_owned()),
        ("root", "/".to_owned()),
        ("parent component", "a/../b".to_owned()),
        ("leading parent", "../b".to_owned()),
        ("trailing parent", "a/..".to_owned()),
        ("NUL", "a\u{0}b".to_owned()),
        ("1025 bytes", "a".repeat(1025)),
        ("1026 bytes in 513 characters", "é".repeat(513)),
    ];
    for (what, p) in &invalid {
        let r = env
            .post(
                &path,
                &json!({"files": [{"path": p, "type": "input", "size": 1}]}),
            )
            .await;
        assert_eq!(r.status, 422, "{what}: {}", r.text);
        mentions(&r.err(422), "path");
    }
    // One bad path among good ones: nothing registered.
    let r = env
        .post(&path, &json!({"files": [{"path": "good", "type": "input", "size": 1}, {"path": "/bad", "type": "input", "size": 1}]}))
        .await;
    r.err(422);
    assert_eq!(env.container(&id).await["files"], json!([]));
    // Exactly 1024 bytes is fine, in ASCII and in two-byte characters.
    for p in [
        "a".repeat(1024),
        "é".repeat(512),
        format!("{}/{}", "d".repeat(500), "f".repeat(523)),
    ] {
        assert_eq!(p.len(), 1024);
        let r = env
            .post(
                &path,
                &json!({"files": [{"path": p, "type": "input", "size": 1}]}),
            )
            .await;
        assert_eq!(r.created()[0]["path"], p);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_file_descriptions_are_refused() {
    let env = Env::start().await;
    let id = empty_container(&env).await;
    let path = format!("/api/v2/containers/{id}/files");
    mentions(
        &env.post(
            &path,
            &json!({"files": [{"path": "a", "type": "video", "size": 1}]}),
        )
        .await
        .err(422),
        "type",
    );
    env.post(
        &path,
        &json!({"files": [{"path": "a", "type": "input", "size": -1}]}),
    )
    .await
    .err(422);
    mentions(
        &env.post(
            &path,
            &json!({"files": [{"path": "a", "type": "input", "size": 1, "metadata": {"k": 5}}]}),
        )
        .await
        .err(422),
        "metadata",
    );
    // Missing required fields: 400.
    env.post(&path, &json!({"files": [{"path": "a", "type": "input"}]}))
        .await
        .err(400);
    env.post(&path, &json!({"files": [{"type": "input", "size": 1}]}))
        .await
        .err(400);
    env.post(&path, &json!({})).await.err(400);
    assert_eq!(env.container(&id).await["files"], json!([]));
    // Unknown container: 404.
    let unknown = format!("/api/v2/containers/{}/files", uuid::Uuid::new_v4());
    env.post(
        &unknown,
        &json!({"files": [{"path": "a", "type": "input", "size": 1}]}),
    )
    .await
    .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_onto_another_files_path_is_409() {
    let env = Env::start().await;
    let c = env
        .create_container(json!([
            {"path": "one.nmea", "type": "input", "size": 1},
            {"path": "two.nmea", "type": "input", "size": 1},
        ]))
        .await;
    let id = c["id"].as_str().unwrap();
    let one = c["files"][0]["id"].as_str().unwrap();
    let url = format!("/api/v2/container-files/{one}");
    mentions(
        &env.patch(&url, &json!({"path": "two.nmea"})).await.err(409),
        "two.nmea",
    );
    mentions(
        &env.patch(&url, &json!({"path": "/two.nmea"}))
            .await
            .err(422),
        "path",
    );
    mentions(
        &env.patch(&url, &json!({"path": "a/../two.nmea"}))
            .await
            .err(422),
        "path",
    );
    let mut names = paths(&env.container(id).await);
    names.sort();
    assert_eq!(names, ["one.nmea", "two.nmea"], "unchanged");
    // Renaming onto its own path, and onto a free path, works.
    assert_eq!(
        env.patch(&url, &json!({"path": "one.nmea"})).await.ok()["path"],
        "one.nmea"
    );
    let r = env.patch(&url, &json!({"path": "renamed/one.nmea"})).await;
    assert_eq!(r.ok()["path"], "renamed/one.nmea");
    assert_eq!(r.json["id"], one);
    let mut names = paths(&env.container(id).await);
    names.sort();
    assert_eq!(names, ["renamed/one.nmea", "two.nmea"]);
    // The freed path can be registered again.
    env.post(
        &format!("/api/v2/containers/{id}/files"),
        &json!({"files": [{"path": "one.nmea", "type": "input", "size": 1}]}),
    )
    .await
    .created();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_file_type_and_metadata() {
    let env = Env::start().await;
    let c = env.create_container(json!([{"path": "p.json", "type": "input", "size": 3, "metadata": {"a": "1", "b": "2"}}])).await;
    let file = &c["files"][0];
    let url = format!("/api/v2/container-files/{}", file["id"].as_str().unwrap());
    let r = env
        .patch(&url, &json!({"type": "resources", "metadata": {"c": "3"}}))
        .await;
    let updated = r.ok().clone();
    assert_eq!(updated["type"], "resources");
    assert_eq!(
        updated["metadata"],
        json!({"c": "3"}),
        "metadata replaced whole"
    );
    assert_eq!(updated["path"], "p.json", "absent path unchanged");
    assert_eq!(updated["status"], "pending", "status unchanged");
    assert_eq!(updated["size"], 3);
    // Absent fields are left unchanged.
    let r = env.patch(&url, &json!({})).await;
    assert_eq!(r.ok()["type"], "resources");
    assert_eq!(r.json["metadata"], json!({"c": "3"}));
    mentions(
        &env.patch(&url, &json!({"type": "video"})).await.err(422),
        "type",
    );
    mentions(
        &env.patch(&url, &json!({"metadata": {"k".repeat(41): "v"}}))
            .await
            .err(422),
        "metadata",
    );
    let stored = env.container(c["id"].as_str().unwrap()).await;
    assert_eq!(stored["files"][0]["type"], "resources");
    assert_eq!(stored["files"][0]["metadata"], json!({"c": "3"}));
    env.patch(
        &format!("/api/v2/container-files/{}", uuid::Uuid::new_v4()),
        &json!({}),
    )
    .await
    .err(404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_file_removes_it() {
    let env = Env::start().await;
    let c = env
        .create_container(json!([
            {"path": "keep.nmea", "type": "input", "size": 1},
            {"path": "drop.nmea", "type": "input", "size": 1},
        ]))
        .await;
    let id = c["id"].as_str().unwrap();
    let keep = c["files"][0]["id"].as_str().unwrap();
    let drop = c["files"][1]["id"].as_str().unwrap();
    let r = env.delete(&format!("/api/v2/container-files/{drop}")).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let after = env.container(id).await;
    let visible: Vec<&Value> = after["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !matches!(f["status"].as_str(), Some("deleting" | "deleted")))
        .collect();
    assert_eq!(visible.len(), 1, "{after}");
    assert_eq!(visible[0]["id"], keep);
    env.delete(&format!("/api/v2/container-files/{drop}"))
        .await
        .err(404);
    env.patch(
        &format!("/api/v2/container-files/{drop}"),
        &json!({"path": "x"}),
    )
    .await
    .err(404);
    // Its path is free again.
    env.post(
        &format!("/api/v2/containers/{id}/files"),
        &json!({"files": [{"path": "drop.nmea", "type": "input", "size": 1}]}),
    )
    .await
    .created();
    // A container whose files are all deleted is empty again.
    for f in env.container(id).await["files"].as_array().unwrap() {
        let r = env
            .delete(&format!(
                "/api/v2/container-files/{}",
                f["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(r.status, 200, "{}", r.text);
    }
    assert_eq!(env.container(id).await["status"], "empty");
}

/// A deleted file's upload form is refused (403 `AccessDenied`, S3's error body); the
/// other files of its container still upload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_form_of_a_deleted_file_is_refused_with_403() {
    let env = Env::start().await;
    let c = env
        .create_container(json!([
            {"path": "keep.nmea", "type": "input", "size": 3},
            {"path": "drop.nmea", "type": "input", "size": 3},
        ]))
        .await;
    let (keep, drop) = (&c["files"][0], &c["files"][1]);
    let r = env
        .delete(&format!(
            "/api/v2/container-files/{}",
            drop["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    let (status, body) = upload(&env.http, drop, b"abc".to_vec()).await;
    assert_eq!(status, 403, "{body}");
    assert_storage_error(&body);
    assert!(body.contains("<Code>AccessDenied</Code>"), "{body}");
    mentions(&body, "deleted");
    let (status, body) = upload(&env.http, keep, b"abc".to_vec()).await;
    assert_eq!(status, 204, "{body}");
    let container = env.container(c["id"].as_str().unwrap()).await;
    assert_eq!(
        container["files"].as_array().unwrap().len(),
        1,
        "{container}"
    );
    assert_eq!(container["files"][0]["status"], "ready", "{container}");
}
