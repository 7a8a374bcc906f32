//! Users and passwords, the settings lock, a reboot in the middle of a session.

use super::*;

#[tokio::test]
async fn default_user_follows_the_specification_examples() {
    // Nobody but factory has a password: setup.
    let unit = start(config()).await;
    assert_eq!(unit.default_user().as_deref(), Some("setup"));
    unit.shutdown().await;

    // Operator has a password, setup none: setup.
    let unit = start(DeviceConfig {
        passwords: passwords(&[("operator", "op")]),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user().as_deref(), Some("setup"));
    unit.shutdown().await;

    // Operator, powerUser and setup have passwords: viewer, who reads but cannot act.
    let unit = start(DeviceConfig {
        passwords: passwords(&[("operator", "a"), ("powerUser", "b"), ("setup", "c")]),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user().as_deref(), Some("viewer"));
    let mut c = connect(&unit, Via::Http).await;
    assert_eq!(c.get("/info", "").await.status, 200);
    assert_eq!(
        c.post("/dataLogger/start", "", &json!({})).await.status,
        403
    );
    assert_eq!(c.post("/settings", "", &json!({})).await.status, 403);
    unit.shutdown().await;

    // Every user has a password: no default user, 401 without auth.
    let unit = start(DeviceConfig {
        passwords: passwords(&[
            ("viewer", "v"),
            ("operator", "a"),
            ("powerUser", "b"),
            ("setup", "c"),
        ]),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user(), None);
    let mut c = connect(&unit, Via::Http).await;
    let answer = c.get("/info", "").await;
    assert_eq!(answer.status, 401);
    assert_eq!(answer.body["status"], 401);
    let token = c.login("viewer", "v").await;
    assert_eq!(c.get("/info", &auth(&token)).await.status, 200);
    unit.shutdown().await;

    // An empty factory password makes factory the default user.
    let unit = start(DeviceConfig {
        factory_password: String::new(),
        ..config()
    })
    .await;
    assert_eq!(unit.default_user().as_deref(), Some("factory"));
    unit.shutdown().await;

    // An unknown user in the configuration fails the start.
    assert!(
        DeviceEmulator::start(DeviceConfig {
            passwords: passwords(&[("root", "x")]),
            ..config()
        })
        .await
        .is_err()
    );
}

#[tokio::test]
async fn login_with_a_wrong_user_or_password_answers_401() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    for body in [
        json!({ "user": "factory", "password": "wrong" }),
        json!({ "user": "factory", "password": "" }),
        json!({ "user": "root", "password": "" }),
        json!({ "user": "viewer", "password": "x" }),
    ] {
        let answer = c.post("/user/login", "", &body).await;
        assert_eq!(answer.status, 401, "{body}");
        assert_eq!(answer.body["title"], "Unauthorized");
    }
    c.login("factory", "factory").await;
    assert_eq!(c.get("/info", "auth=not-a-token").await.status, 401);
    unit.shutdown().await;
}

#[tokio::test]
async fn password_change_rules() {
    let unit = start(config()).await;
    let mut c = connect(&unit, Via::Http).await;
    // Without auth: 401, even though a default user exists.
    let answer = c
        .post("/user/password", "", &json!({ "password": "x" }))
        .await;
    assert_eq!(answer.status, 401);
    assert_eq!(c.post("/settings/lock", "", &json!({})).await.status, 401);
    assert_eq!(c.post("/user/logout", "", &json!({})).await.status, 401);

    let operator = c.login("operator", "").await;
    let setup = c.login("setup", "").await;
    let factory = c.login("factory", "factory").await;
    // Own password: anyone.
    let own = c
        .post(
            "/user/password",
            &auth(&operator),
            &json!({ "user": "operator", "password": "op" }),
        )
        .await;
    assert_eq!(own.status, 200);
    c.login("operator", "op").await;
    // Someone else's: only setup.
    let other = c
        .post(
            "/user/password",
            &auth(&operator),
            &json!({ "user": "viewer", "password": "v" }),
        )
        .await;
    assert_eq!(other.status, 403);
    let other = c
        .post(
            "/user/password",
            &auth(&factory),
            &json!({ "user": "viewer", "password": "v" }),
        )
        .await;
    assert_eq!(other.status, 403);
    let other = c
        .post(
            "/user/password",
            &auth(&setup),
            &json!({ "user": "operator", "password": "" }),
        )
        .await;
    assert_eq!(other.status, 200);
    // An empty password clears it.
    c.login("operator", "").await;
    let unknown = c
        .post(
            "/user/password",
            &auth(&setup),
            &json!({ "user": "root", "password": "" }),
        )
        .await;
    assert_eq!(unknown.status, 422);
    let bad = c
        .post(
            "/user/password",
            &auth(&setup),
            &json!({ "user": "viewer" }),
        )
        .await;
    assert_eq!(bad.status, 400);
    unit.shutdown().await;
}

// ------------------------------------------------------------------ lock

async fn lock_contention(via: Via) {
    let unit = start(DeviceConfig {
        lock_idle: REBOOT,
        ..config()
    })
    .await;
    let mut c = connect(&unit, via).await;
    let a = c.login("setup", "").await;
    let b = c.login("powerUser", "").await;
    let write = json!({ "oem": { "label": "b" } });

    assert_eq!(
        c.post("/settings/unlock", &auth(&a), &json!({}))
            .await
            .status,
        200,
        "unlock with no lock"
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    let conflict = c.post("/settings", &auth(&b), &write).await;
    assert_eq!(conflict.status, 409);
    assert_eq!(conflict.body["detail"], LOCK_CONFLICT);
    assert_eq!(
        c.post("/settings", "", &write).await.status,
        409,
        "the default user too"
    );
    assert_eq!(
        c.post("/settings/oem/label", &auth(&b), &json!("b"))
            .await
            .status,
        409
    );
    assert_eq!(
        c.post("/settings/default", &auth(&b), &json!({}))
            .await
            .status,
        409
    );
    assert_eq!(
        c.post("/settings/import", &auth(&b), &write).await.status,
        409
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&b), &json!({})).await.status,
        409
    );
    assert_eq!(
        c.post("/settings/unlock", &auth(&b), &json!({}))
            .await
            .status,
        409
    );
    // Reads stay open to everyone.
    assert_eq!(c.get("/settings/oem", &auth(&b)).await.status, 200);
    // The holder writes, renews, unlocks.
    assert_eq!(
        c.post("/settings", &auth(&a), &json!({ "oem": { "label": "a" } }))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    assert_eq!(
        c.post("/settings/unlock", &auth(&a), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 200);

    // Any request of the holder keeps the lock alive past `lock_idle`.
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    let locked_at = Instant::now();
    while locked_at.elapsed() < REBOOT * 2 {
        tokio::time::sleep(REBOOT / 3).await;
        assert_eq!(c.get("/info", &auth(&a)).await.status, 200);
    }
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 409);
    // Without requests from its holder it ends after `lock_idle`.
    let idle_from = Instant::now();
    let deadline = idle_from + ANSWER_WAIT;
    loop {
        let status = c.post("/settings", &auth(&b), &write).await.status;
        if status == 200 {
            break;
        }
        assert_eq!(status, 409);
        assert!(Instant::now() < deadline, "the lock never expired");
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(idle_from.elapsed() >= REBOOT / 2);

    // Logout ends the lock.
    assert_eq!(
        c.post("/settings/lock", &auth(&a), &json!({})).await.status,
        200
    );
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 409);
    assert_eq!(
        c.post("/user/logout", &auth(&a), &json!({})).await.status,
        200
    );
    assert_eq!(c.post("/settings", &auth(&b), &write).await.status, 200);
    unit.shutdown().await;
}

#[tokio::test]
async fn lock_contention_and_idle_expiry_over_http() {
    lock_contention(Via::Http).await;
}

#[tokio::test]
async fn lock_contention_and_idle_expiry_over_the_serial_tcp_bridge() {
    lock_contention(Via::SerialTcp).await;
}

// ------------------------------------------------------------------ reboot

async fn reboot_mid_session(via: Via) {
    let unit = start(config()).await;
    let mut c = connect(&unit, via).await;
    let setup = c.login("setup", "").await;
    // Setup gives itself and powerUser a password: the default user stays setup
    // until the reboot.
    for user in ["setup", "powerUser"] {
        let body = json!({ "user": user, "password": "pw" });
        assert_eq!(
            c.post("/user/password", &auth(&setup), &body).await.status,
            200
        );
    }
    let check = json!({ "oem": { "label": "x" } });
    assert_eq!(
        c.post("/settings", "checkOnly=true", &check).await.status,
        200
    );
    assert_eq!(
        c.post("/settings/lock", &auth(&setup), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        c.post("/dataLogger/start", &auth(&setup), &json!({}))
            .await
            .status,
        200
    );

    // A client with a kept-alive connection from before the reboot.
    let pooled = reqwest::Client::new();
    let info = format!("{}/api/v1/info", unit.url());
    if let Via::Http = via {
        let before = pooled.get(&info).send().await.expect("an answer");
        assert_eq!(before.status(), 200);
    }

    let sent = Instant::now();
    assert_eq!(
        c.post("/reboot", &auth(&setup), &json!({})).await.status,
        200
    );
    assert!(unit.is_rebooting());
    if let Via::Http = via {
        assert!(
            pooled.get(&info).send().await.is_err(),
            "a kept-alive connection was answered during the reboot"
        );
    }
    // Silent meanwhile.
    assert!(
        c.try_call("GET", "/api/v1/info", "", None, SILENCE)
            .await
            .is_none(),
        "the unit answered during its reboot"
    );
    let up = c.wait_until_up().await;
    assert!(
        up.duration_since(sent) >= REBOOT,
        "back after {:?}",
        up.duration_since(sent)
    );

    // Tokens and lock are gone, the logger stopped, the default user re-chosen.
    assert_eq!(c.get("/info", &auth(&setup)).await.status, 401);
    assert_eq!(unit.default_user().as_deref(), Some("operator"));
    assert_eq!(
        c.post("/settings", "checkOnly=true", &check).await.status,
        403
    );
    let power_user = c.login("powerUser", "pw").await;
    assert_eq!(
        c.post("/settings", &auth(&power_user), &check).await.status,
        200,
        "no lock left"
    );
    assert_eq!(c.get("/dataLogger", "").await.body["state"], "idle");
    unit.shutdown().await;
}

#[tokio::test]
async fn reboot_mid_session_over_http() {
    reboot_mid_session(Via::Http).await;
}

#[tokio::test]
async fn reboot_mid_session_over_the_serial_tcp_bridge() {
    reboot_mid_session(Via::SerialTcp).await;
}
