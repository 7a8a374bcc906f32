//! Scenario 2: login, logout and the default user; a write's delta compares numbers by
//! value.

use super::{Link, Rig, USERS, config, password_of, pw};
use ins_device_api::enums::UserName;
use serde_json::json;
use svc_core::unit::{UnitError, rights};

over_links!(
    login_logout_and_the_default_user,
    delta_compares_numbers_by_value
);

async fn login_logout_and_the_default_user(link: Link) {
    let setup_pw = password_of("setup");
    let rig = Rig::start(link, config(&[("setup", &setup_pw)])).await;
    // The highest role without a password: powerUser (setup and factory have one).
    let expected = rights::default_user(|u| matches!(u.as_str(), "setup" | "factory"));
    assert_eq!(expected, Some(UserName::PowerUser));
    assert_eq!(rig.dev.default_user().as_deref(), Some("powerUser"));

    let unit = rig.session().await;
    assert_eq!(unit.user(), None);
    // Without a login the default user acts: powerUser may write settings...
    unit.info().await.unwrap();
    unit.write_node("oem/label", &json!("default user"), false)
        .await
        .unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "default user");
    // ...but the lock and password changes need a token.
    assert_eq!(unit.lock().await.unwrap_err().status(), Some(401));
    let e = unit
        .change_password(None, pw("whatever-1"))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");

    // A wrong password: 401, the session stays as it was, the password is not quoted.
    let wrong = "wrong-pw-Zz81";
    let e = unit
        .login(UserName::Setup, pw(wrong))
        .await
        .expect_err("a wrong password is refused");
    assert!(
        matches!(e, UnitError::Api { status: 401, .. }),
        "{link:?}: {e:?}"
    );
    assert!(!e.is_retryable());
    assert!(!format!("{e} {e:?}").contains(wrong));
    assert_eq!(unit.user(), None);
    let e = unit
        .login(UserName::from("nobody"), pw(""))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401), "an unknown user: {e}");

    // The right password: logged in; the lock works with the token.
    unit.login(UserName::Setup, pw(&setup_pw)).await.unwrap();
    assert_eq!(unit.user(), Some(UserName::Setup));
    unit.lock().await.unwrap();
    unit.unlock().await.unwrap();
    assert!(!format!("{unit:?}").contains(&setup_pw));

    // setup changes operator's password; powerUser may not change another's.
    unit.change_password(Some(UserName::Operator), pw("pw-op-new-55"))
        .await
        .unwrap();
    let power = rig.login(UserName::PowerUser, "").await;
    let e = power
        .change_password(Some(UserName::Operator), pw("pw-op-evil"))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
    let operator = rig.login(UserName::Operator, "pw-op-new-55").await;
    assert_eq!(operator.user(), Some(UserName::Operator));
    let e = rig
        .session()
        .await
        .login(UserName::Operator, pw(""))
        .await
        .unwrap_err();
    assert_eq!(
        e.status(),
        Some(401),
        "operator's old (empty) password: {e}"
    );

    // Changing one's own password: the old one stops working, the new one works.
    unit.change_password(None, pw("pw-setup-new-77"))
        .await
        .unwrap();
    let e = rig
        .session()
        .await
        .login(UserName::Setup, pw(&setup_pw))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401));
    rig.login(UserName::Setup, "pw-setup-new-77").await;

    // Logout: back to the default user (the lock needs a token again).
    unit.logout().await.unwrap();
    assert_eq!(unit.user(), None);
    assert_eq!(unit.lock().await.unwrap_err().status(), Some(401));
    unit.info().await.unwrap();

    // Every user has a password: no default user, a request without a token is 401.
    let all: Vec<(String, String)> = USERS
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let all: Vec<(&str, &str)> = all.iter().map(|(u, p)| (u.as_str(), p.as_str())).collect();
    let locked = Rig::start(link, config(&all)).await;
    assert_eq!(rights::default_user(|_| true), None);
    assert_eq!(locked.dev.default_user(), None);
    let anonymous = locked.session().await;
    let e = anonymous.info().await.unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");
    let viewer = locked.login(UserName::Viewer, &password_of("viewer")).await;
    viewer.info().await.unwrap();

    // Only viewer without a password: viewer is the default user and may not write.
    let some: Vec<(&str, &str)> = all
        .iter()
        .copied()
        .filter(|(u, _)| *u != "viewer")
        .collect();
    let viewing = Rig::start(link, config(&some)).await;
    assert_eq!(viewing.dev.default_user().as_deref(), Some("viewer"));
    let anonymous = viewing.session().await;
    anonymous.settings().await.unwrap();
    let e = anonymous
        .write_node("oem/label", &json!("x"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
}

/// `delta=true` lists "only settings changed from default": a number written as `1`
/// where the default is `1.0` is the same setting value, not a change.
async fn delta_compares_numbers_by_value(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;
    assert_eq!(
        rig.tree()["insFilter"]["validityThresholds"]["heading"],
        json!(1.0)
    );
    unit.write_node("insFilter/validityThresholds/heading", &json!(1), false)
        .await
        .unwrap();
    unit.write_node("aiding/gnss1/leverArmPrimary", &json!([0, 0, -1]), false)
        .await
        .unwrap();
    assert_eq!(
        unit.settings_delta().await.unwrap(),
        json!({}),
        "{link:?}: values equal to the defaults are not changes"
    );
}
