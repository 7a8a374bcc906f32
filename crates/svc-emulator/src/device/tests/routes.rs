//! Every route over every transport, and the rights matrix of every operation.

use super::*;

async fn every_route(via: Via) {
    let unit = start(DeviceConfig {
        #[cfg(unix)]
        pty: matches!(via, Via::Pty),
        ..config()
    })
    .await;
    let mut c = connect(&unit, via).await;

    // Reads.
    let all = c.get("/settings", "").await;
    assert_eq!(all.status, 200);
    assert_eq!(all.body["aiding"]["gnss1"]["model"], "internal");
    let gnss1 = c.get("/settings/aiding/gnss1", "").await;
    assert_eq!(gnss1.body, all.body["aiding"]["gnss1"]);
    let leaf = c.get("/settings/output/comA/messages/ekfNav", "").await;
    assert_eq!(leaf.body, "50ms");
    let vector = c.get("/settings/aiding/gnss1/leverArmPrimary", "").await;
    assert_eq!(vector.body, json!([0.0, 0.0, -1.0]));
    for missing in [
        "/settings/aiding/gnss3",
        "/settings/output/comA/messages/nope",
        "/nothing",
    ] {
        let answer = c.get(missing, "").await;
        assert_eq!(answer.status, 404, "{missing}");
        assert_eq!(answer.body["status"], 404);
        assert!(answer.body["title"].is_string() && answer.body["detail"].is_string());
    }
    // A concrete path wins over `/settings/{path}` for every method, as OpenAPI matches
    // paths: `/settings/default` has only POST.
    for concrete in ["/settings/default", "/settings/lock", "/settings/import"] {
        let answer = c.get(concrete, "").await;
        assert_eq!(answer.status, 405, "{concrete}");
        assert_eq!(answer.body["status"], 405);
    }
    assert_eq!(c.post("/settings/export", "", &json!({})).await.status, 405);

    // Writes.
    let written = c
        .post(
            "/settings/output/comA/messages/imuShort",
            "",
            &json!("10ms"),
        )
        .await;
    assert_eq!(
        written.body,
        json!({ "title": "request successful", "needReboot": false })
    );
    let written = c
        .post(
            "/settings",
            "",
            &json!({ "aiding": { "gnss1": { "leverArmPrimary": [0.5, 0.0, -1.2] } } }),
        )
        .await;
    assert_eq!(written.status, 200);
    let gnss1 = c.get("/settings/aiding/gnss1", "").await;
    assert_eq!(gnss1.body["leverArmPrimary"], json!([0.5, 0.0, -1.2]));
    assert_eq!(
        gnss1.body["model"], "internal",
        "a merge keeps the other keys"
    );
    assert_eq!(
        c.get("/settings/output/comA/messages/imuShort", "")
            .await
            .body,
        "10ms"
    );
    let node = c
        .post(
            "/settings/output/can/messages/ekfPos",
            "",
            &json!({ "trigger": "onChange" }),
        )
        .await;
    assert_eq!(node.status, 200);
    let ekf_pos = c.get("/settings/output/can/messages/ekfPos", "").await;
    assert_eq!(
        ekf_pos.body,
        json!({ "id": 270, "extended": false, "trigger": "onChange" })
    );
    assert_eq!(c.post("/settings/nope", "", &json!(1)).await.status, 404);

    // Export / import / default.
    let export = c.get("/settings/export", "").await;
    assert_eq!(export.status, 200);
    if matches!(via, Via::Http) {
        assert_eq!(
            export.disposition.as_deref(),
            Some("attachment; filename=\"settings.json\"")
        );
    }
    let restored = c.post("/settings/default", "", &json!({})).await;
    assert_eq!(
        restored.body,
        json!({ "title": "request successful", "needReboot": false })
    );
    assert_eq!(
        c.get("/settings/output/comA/messages/imuShort", "")
            .await
            .body,
        "off"
    );
    let imported = c.post("/settings/import", "", &export.body).await;
    assert_eq!(imported.status, 200);
    assert_eq!(c.get("/settings/export", "").await.body, export.body);

    // Device info.
    let info = c.get("/info", "").await;
    let info: ins_device_api::types::DeviceInfo =
        serde_json::from_value(info.body).expect("a DeviceInfo");
    assert!(info.api_version.starts_with("1."));
    assert!(!info.serial_number.is_empty() && !info.mac_address.is_empty());

    // Users.
    let token = c.login("powerUser", "").await;
    assert_eq!(
        c.post("/settings/lock", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post("/settings/unlock", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    let changed = c
        .post(
            "/user/password",
            &auth(&token),
            &json!({ "password": "pw" }),
        )
        .await;
    assert_eq!(changed.body, json!({ "title": "request successful" }));
    let second = c.login("powerUser", "pw").await;
    assert_eq!(
        c.post("/user/logout", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(c.get("/info", &auth(&token)).await.status, 401);
    assert_eq!(c.get("/info", &auth(&second)).await.status, 200);

    // Data logger.
    let status = c.get("/dataLogger", "").await;
    assert_eq!(status.body["state"], "idle");
    assert_eq!(status.body["sessionName"], "session");
    assert!(status.body["totalBytes"].as_i64() > Some(0));
    assert_eq!(c.post("/dataLogger/stop", "", &json!({})).await.status, 409);
    assert_eq!(
        c.post("/dataLogger/start", "", &json!({})).await.status,
        200
    );
    assert_eq!(
        c.post("/dataLogger/start", "", &json!({})).await.status,
        409
    );
    assert_eq!(c.get("/dataLogger", "").await.body["state"], "logging");
    assert_eq!(c.post("/dataLogger/stop", "", &json!({})).await.status, 200);
    assert_eq!(c.get("/dataLogger", "").await.body["state"], "idle");

    // Other methods, a body that is not JSON.
    if let Client::Http { .. } = c {
        let put = c.call("PUT", "/api/v1/settings", "", Some(b"{}")).await;
        assert_eq!(put.status, 405);
    }
    let bad = c
        .call("POST", "/api/v1/settings", "", Some(b"{not json"))
        .await;
    assert_eq!(bad.status, 400);
    let bad = c
        .call("POST", "/api/v1/user/login", "", Some(b"{\"user\":1}"))
        .await;
    assert_eq!(bad.status, 400);

    // Reboot last.
    let rebooted = c.post("/reboot", "", &json!({})).await;
    assert_eq!(rebooted.body, json!({ "title": "request successful" }));
    c.wait_until_up().await;
    assert_eq!(c.get("/info", &auth(&second)).await.status, 401);
    unit.shutdown().await;
}

#[tokio::test]
async fn every_route_over_http() {
    every_route(Via::Http).await;
}

#[tokio::test]
async fn every_route_over_the_serial_tcp_bridge() {
    every_route(Via::SerialTcp).await;
}

#[cfg(unix)]
#[tokio::test]
async fn every_route_over_the_pty() {
    every_route(Via::Pty).await;
}

// ------------------------------------------------------------------ rights matrix

/// The request each operation is tried with (path parameter, body), for a user whose
/// password is `password`.
fn example(op_id: &str, password: &str, export: &Value) -> (&'static str, Value) {
    match op_id {
        "getSettings" | "exportSettings" | "getDeviceInfo" | "getDataLoggerStatus" => {
            ("", Value::Null)
        }
        "getSettingsNode" => ("aiding/gnss1", Value::Null),
        "updateSettings" => ("", json!({ "oem": { "label": "matrix" } })),
        "updateSettingsNode" => ("output/comA/messages/imuShort", json!("10ms")),
        "importSettings" => ("", export.clone()),
        "restoreDefaultSettings"
        | "lockSettings"
        | "unlockSettings"
        | "startDataLogger"
        | "stopDataLogger"
        | "logout"
        | "reboot" => ("", json!({})),
        "changePassword" => ("", json!({ "password": password })),
        other => panic!("operation {other} has no example: add one"),
    }
}

/// Runs every operation of the document (but login) as each user, logged in, and
/// checks the answer against `x-required-right` and the rights matrix: 403 when the
/// user lacks the right, otherwise neither 401, 403, 404, 405 nor 500.
async fn rights_matrix(via: Via) {
    let spec = Spec::load().expect("the document loads");
    let defaults = crate::device::defaults::default_settings(&spec.settings);
    // Disruptive operations last: unlock after lock, stop after start, logout (of a
    // second token) then reboot.
    let last = [
        "lockSettings",
        "unlockSettings",
        "startDataLogger",
        "stopDataLogger",
        "logout",
        "reboot",
    ];
    let mut operations: Vec<_> = spec
        .operations
        .iter()
        .filter(|op| op.id != "login")
        .collect();
    operations.sort_by_key(|op| last.iter().position(|id| *id == op.id));
    assert_eq!(operations.len(), 16);
    for user in &spec.rights.roles {
        let password = if user == "factory" { "factory" } else { "" };
        let unit = start(config()).await;
        let mut c = connect(&unit, via).await;
        let token = c.login(user, password).await;
        let second = c.login(user, password).await;
        for op in &operations {
            let (node, body) = example(&op.id, password, &defaults);
            let path = op.template.replace("{path}", node);
            let token = if op.id == "logout" { &second } else { &token };
            let body =
                (op.method == Method::Post).then(|| serde_json::to_vec(&body).expect("JSON"));
            let answer = c
                .call(op.method.as_str(), &path, &auth(token), body.as_deref())
                .await;
            let right = op.right.as_ref().expect("a right");
            if spec.rights.allows(user, right) {
                assert!(
                    ![401, 403, 404, 405, 500].contains(&answer.status),
                    "{via:?} {user} {}: {} {:?}",
                    op.id,
                    answer.status,
                    answer.body
                );
            } else {
                assert_eq!(
                    answer.status, 403,
                    "{via:?} {user} {}: {:?}",
                    op.id, answer.body
                );
            }
        }
        unit.shutdown().await;
    }
}

#[tokio::test]
async fn rights_matrix_over_http() {
    rights_matrix(Via::Http).await;
}

#[tokio::test]
async fn rights_matrix_over_the_serial_tcp_bridge() {
    rights_matrix(Via::SerialTcp).await;
}
