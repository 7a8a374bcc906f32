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
        | "saveSettings"
        | "reboot"
        | "rebootSystem" => ("", json!({})),
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
        "rebootSystem",
        "reboot",
    ];
    let mut operations: Vec<_> = spec
        .operations
        .iter()
        .filter(|op| op.id != "login")
        .collect();
    operations.sort_by_key(|op| last.iter().position(|id| *id == op.id));
    assert_eq!(operations.len(), 18);
    for user in &spec.rights.roles {
        let password = if user == "factory" { "factory" } else { "" };
        let unit = start(config()).await;
        let mut c = connect(&unit, via).await;
        let mut token = c.login(user, password).await;
        let mut second = c.login(user, password).await;
        for op in &operations {
            let (node, body) = example(&op.id, password, &defaults);
            let path = op.template.replace("{path}", node);
            let sent = if op.id == "logout" { &second } else { &token };
            let body =
                (op.method == Method::Post).then(|| serde_json::to_vec(&body).expect("JSON"));
            let answer = c
                .call(op.method.as_str(), &path, &auth(sent), body.as_deref())
                .await;
            if op.id == "rebootSystem" && answer.status == 200 {
                // The vendor's reboot route rebooted the unit: back, and logged in again,
                // for the documented one.
                c.wait_until_up().await;
                token = c.login(user, password).await;
                second = c.login(user, password).await;
            }
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

// ------------------------------------------------------------------ paths

/// Paths with `.` or `..` segments are refused as they are (400), never resolved into
/// another route: `/settings/../reboot` does not reboot, `/settings/../info` does not
/// read the unit's identity, encoded or not. The serial link carries the path as
/// written (an HTTP client would resolve the dots before sending), so it is the one
/// tried here, as well as the core both transports call.
#[tokio::test]
async fn dot_segments_are_refused_never_resolved() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::SerialTcp).await;
    let before = c.get("/settings", "").await.body;
    for (method, path) in [
        ("POST", "/api/v1/settings/../reboot"),
        ("POST", "/api/v1/settings/%2e%2e/reboot"),
        ("POST", "/api/v1/settings/aiding/../../reboot"),
        ("POST", "/api/v1/settings/./default"),
        ("GET", "/api/v1/settings/../info"),
        ("GET", "/api/v1/settings/aiding/./gnss1"),
    ] {
        let body = (method == "POST").then_some(&b"{}"[..]);
        let answer = c.call(method, path, "", body).await;
        assert_eq!(answer.status, 400, "{method} {path}: {:?}", answer.body);
        assert_eq!(answer.body["status"], 400);
        assert!(!unit.is_rebooting(), "{method} {path} rebooted the unit");
        let core = unit.handle(method, path, "", body.unwrap_or_default());
        assert_eq!(core.map(|(status, _)| status), Some(400), "{method} {path}");
    }
    assert_eq!(unit.applied_writes(), 0, "no write was applied");
    assert_eq!(c.get("/settings", "").await.body, before, "nothing changed");
    unit.shutdown().await;
}

/// The vendor's serial tool writes paths without the leading `/` (`api/v1/settings`):
/// the unit answers them as the same resources.
#[tokio::test]
async fn paths_without_the_leading_slash_name_the_same_resources() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::SerialTcp).await;
    for path in [
        "api/v1/settings",
        "api/v1/info",
        "api/v1/settings/aiding/gnss1",
    ] {
        let without = c.call("GET", path, "", None).await;
        let with = c.call("GET", &format!("/{path}"), "", None).await;
        assert_eq!(without.status, 200, "{path}: {:?}", without.body);
        assert_eq!(without.body, with.body, "{path}");
    }
    let written = c
        .call(
            "POST",
            "api/v1/settings/output/comA/messages/imuShort",
            "",
            Some(br#""10ms""#),
        )
        .await;
    assert_eq!(written.status, 200, "{:?}", written.body);
    assert_eq!(
        c.get("/settings/output/comA/messages/imuShort", "")
            .await
            .body,
        "10ms"
    );
    unit.shutdown().await;
}

// ------------------------------------------------------------------ vendor routes

/// The vendor client's routes: `/settings/save` succeeds (applied settings are kept
/// across reboots: a save changes nothing, and is refused while another token holds
/// the lock), `/system/reboot` reboots as `/reboot` does, and a unit whose firmware
/// lacks a route answers 404 there.
#[tokio::test]
async fn the_vendor_clients_save_and_reboot_routes() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    let written = c
        .post(
            "/settings/output/comA/messages/imuShort",
            "",
            &json!("10ms"),
        )
        .await;
    assert_eq!(written.status, 200);
    let saved = c.post("/settings/save", "", &json!({})).await;
    assert_eq!(saved.status, 200, "{:?}", saved.body);
    assert_eq!(saved.body, json!({"title": "request successful"}));
    assert_eq!(unit.saves(), 1);

    // Another token's lock refuses a save, as it refuses writes.
    let holder = c.login("setup", "").await;
    assert_eq!(
        c.post("/settings/lock", &auth(&holder), &json!({}))
            .await
            .status,
        200
    );
    let refused = c.post("/settings/save", "", &json!({})).await;
    assert_eq!(refused.status, 409, "{:?}", refused.body);
    assert_eq!(unit.saves(), 1);

    let rebooted = c.post("/system/reboot", "", &json!({})).await;
    assert_eq!(rebooted.status, 200, "{:?}", rebooted.body);
    assert!(unit.is_rebooting());
    c.wait_until_up().await;
    assert_eq!(
        c.get("/settings/output/comA/messages/imuShort", "")
            .await
            .body,
        "10ms",
        "applied settings are kept across a reboot"
    );
    unit.shutdown().await;

    let older = start(DeviceConfig {
        missing_operations: vec!["rebootSystem".to_owned(), "saveSettings".to_owned()],
        ..config()
    })
    .await;
    let mut c = connect(&older, Via::Http).await;
    assert_eq!(c.post("/system/reboot", "", &json!({})).await.status, 404);
    assert_eq!(c.post("/settings/save", "", &json!({})).await.status, 404);
    assert!(!older.is_rebooting());
    assert_eq!(c.post("/reboot", "", &json!({})).await.status, 200);
    older.shutdown().await;
}
