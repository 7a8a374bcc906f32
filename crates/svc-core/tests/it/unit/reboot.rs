//! Scenario 6: reboots — the session's own, one in the middle of a session, and the
//! default user chosen again at reboot.

use std::time::{Duration, Instant};

use super::{FACTORY_PASSWORD, Link, Rig, SERIAL, config, password_of, poll, pw};
use ins_device_api::enums::UserName;
use serde_json::json;
use svc_core::unit::UnitError;
use svc_core::unit::serial_link::SerialOptions;

over_links!(
    reboot_mid_session_logs_in_again,
    own_reboot_then_a_write_without_waiting_runs_as_the_user,
    default_user_is_chosen_again_at_reboot,
);

/// After its own `reboot()`, a session that does not call `wait_until_back` still acts
/// as its user: its next request logs in again first instead of going out without a
/// token (as the default user, here the viewer, who may not write).
async fn own_reboot_then_a_write_without_waiting_runs_as_the_user(link: Link) {
    let passwords: Vec<(String, String)> = ["operator", "powerUser", "setup"]
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let passwords: Vec<(&str, &str)> = passwords
        .iter()
        .map(|(u, p)| (u.as_str(), p.as_str()))
        .collect();
    let serial = SerialOptions {
        answer_timeout: Duration::from_millis(500),
        get_attempts: 1,
        ..SERIAL
    };
    let rig = Rig::start_with(link, config(&passwords), serial).await;
    let a = rig
        .login(UserName::PowerUser, &password_of("powerUser"))
        .await;
    a.reboot().await.unwrap();
    let written = poll(Duration::from_secs(10), "the unit is back", || async {
        match a
            .write_node("oem/label", &json!("after my own reboot"), false)
            .await
        {
            Err(e) if e.status().is_none() => None, // unreachable while it reboots
            other => Some(other),
        }
    })
    .await;
    written.expect("the write runs as powerUser, not as the default viewer");
    assert_eq!(rig.tree()["oem"]["label"], "after my own reboot");
    assert_eq!(a.user(), Some(UserName::PowerUser));
}

async fn reboot_mid_session_logs_in_again(link: Link) {
    // Only viewer has no password: a write succeeds only as a logged-in user.
    let passwords: Vec<(String, String)> = ["operator", "powerUser", "setup"]
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let passwords: Vec<(&str, &str)> = passwords
        .iter()
        .map(|(u, p)| (u.as_str(), p.as_str()))
        .collect();
    let serial = SerialOptions {
        answer_timeout: Duration::from_secs(1),
        get_attempts: 2,
        ..SERIAL
    };
    let rig = Rig::start_with(link, config(&passwords), serial).await;
    let a = rig.login(UserName::Setup, &password_of("setup")).await;
    let b = rig
        .login(UserName::PowerUser, &password_of("powerUser"))
        .await;
    a.write_node("oem/label", &json!("before"), false)
        .await
        .unwrap();
    a.logger_start().await.unwrap();
    a.lock().await.unwrap();

    let token = rig.raw_token();
    assert_eq!(rig.raw_as(&token, "GET", "/api/v1/info").0, 200);

    // A reboots and waits: back within 5 s, logged in again by itself.
    let started = Instant::now();
    a.reboot().await.unwrap();
    let info = a.wait_until_back(Duration::from_secs(5)).await.unwrap();
    assert!(!info.product_code.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(!rig.dev.is_rebooting());
    assert_eq!(a.user(), Some(UserName::Setup));
    let (status, body) = rig.raw_as(&token, "GET", "/api/v1/info");
    assert_eq!(status, 401, "a token of before the reboot is dead: {body}");
    a.write_node("oem/label", &json!("after A's reboot"), false)
        .await
        .expect("A writes without calling login again");
    assert_eq!(rig.tree()["oem"]["label"], "after A's reboot");
    // The reboot ended the lock and stopped the data logger.
    b.write_node("oem/label", &json!("B after the reboot"), false)
        .await
        .expect("the lock ended with the reboot (B logs in again by itself)");
    let status = a.logger_status().await.unwrap();
    assert_eq!(
        serde_json::to_value(&status.state).unwrap(),
        json!("idle"),
        "{status:?}"
    );

    // B reboots; A does not know: its token is dead, its next write logs in again.
    b.reboot().await.unwrap();
    b.wait_until_back(Duration::from_secs(5)).await.unwrap();
    a.write_node("oem/label", &json!("after B's reboot"), false)
        .await
        .expect("A's dead token is replaced by a new login");
    assert_eq!(rig.tree()["oem"]["label"], "after B's reboot");

    // A session without a login: the unit acts as the default user again after the
    // reboot (viewer), wait_until_back works without credentials.
    let anonymous = rig.session().await;
    anonymous.reboot().await.expect_err("viewer may not reboot");
    a.reboot().await.unwrap();
    // Too short a wait: a timeout with the last failure, and a longer wait still works.
    // (Over HTTP the rebooting unit refuses connections; a serial link holds the request
    // until the unit answers, within its answer timeout.)
    if link == Link::Http {
        let e = anonymous
            .wait_until_back(Duration::from_millis(50))
            .await
            .unwrap_err();
        assert!(matches!(e, UnitError::NotBack { .. }), "{e:?}");
        assert_eq!(e.kind(), svc_core::ErrorKind::Timeout);
        assert!(e.is_retryable());
        let UnitError::NotBack { last, .. } = &e else {
            unreachable!()
        };
        assert_eq!(last.kind(), svc_core::ErrorKind::Unreachable, "{e}");
    }
    anonymous
        .wait_until_back(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(anonymous.user(), None);
}

async fn default_user_is_chosen_again_at_reboot(link: Link) {
    let serial = SerialOptions {
        answer_timeout: Duration::from_secs(1),
        get_attempts: 2,
        ..SERIAL
    };
    let power = password_of("powerUser");
    let rig = Rig::start_with(link, config(&[("powerUser", &power)]), serial).await;
    assert_eq!(rig.dev.default_user().as_deref(), Some("setup"));
    let a = rig.login(UserName::Setup, "").await;
    let anonymous = rig.session().await;
    anonymous
        .write_node("oem/label", &json!("as setup"), false)
        .await
        .unwrap();

    // setup and powerUser now have passwords; the default user stays setup until the
    // next reboot.
    a.change_password(None, pw("pw-setup-new-31"))
        .await
        .unwrap();
    assert_eq!(rig.dev.default_user().as_deref(), Some("setup"));
    anonymous
        .write_node("oem/label", &json!("still setup"), false)
        .await
        .expect("the default user changes at the next reboot only");

    // After the reboot: operator. A logs in again with its new password by itself.
    a.reboot().await.unwrap();
    a.wait_until_back(Duration::from_secs(5)).await.unwrap();
    assert_eq!(rig.dev.default_user().as_deref(), Some("operator"));
    a.write_node("oem/label", &json!("A with the new password"), false)
        .await
        .unwrap();
    let e = anonymous
        .write_node("oem/label", &json!("as operator"), false)
        .await
        .unwrap_err();
    assert_eq!(
        e.status(),
        Some(403),
        "operator may not write settings: {e}"
    );
    anonymous
        .logger_start()
        .await
        .expect("operator uses the logger");
    anonymous.logger_stop().await.unwrap();

    // Only setup changes other users' passwords: not factory.
    let factory = rig.login(UserName::Factory, FACTORY_PASSWORD).await;
    let e = factory
        .change_password(Some(UserName::Operator), pw("pw-by-factory"))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");

    // An empty password clears it: setup logs in without one, and after a reboot it is
    // the default user again.
    a.change_password(None, pw("")).await.unwrap();
    rig.login(UserName::Setup, "").await;
    a.reboot().await.unwrap();
    a.wait_until_back(Duration::from_secs(5)).await.unwrap();
    assert_eq!(rig.dev.default_user().as_deref(), Some("setup"));
    anonymous
        .write_node("oem/label", &json!("setup again"), false)
        .await
        .unwrap();
}
