//! Scenario 3: the rights of each user, logged in and as the default user, against
//! `rights::may`.

use super::{Link, Rig, USERS, config, password_of, pw};
use ins_device_api::enums::UserName;
use serde_json::json;
use svc_core::unit::{Unit, UnitError, rights};

over_links!(
    rights_of_each_user_logged_in,
    rights_of_each_user_as_the_default_user,
);

/// Runs a representative set of operations through `Unit` and checks each answer
/// (success, or the refusal) against `rights::may`. Reboot comes last.
async fn check_rights(
    rig: &Rig,
    unit: &Unit,
    user: &UserName,
    own_password: &str,
    logged_in: bool,
) {
    let tree = rig.tree();
    let mut mismatches = Vec::new();
    let mut check = |op: &str, result: Result<(), UnitError>| {
        let right = rights::required(op).unwrap_or_else(|| panic!("{op} is in the matrix"));
        let may = rights::may(user, op, logged_in).expect("a known user and operation");
        let refusal = if right.requires_login && !logged_in {
            401
        } else {
            403
        };
        let ok = match (&result, may) {
            (Ok(()), true) => true,
            (Err(e), false) => e.status() == Some(refusal),
            _ => false,
        };
        if !ok {
            mismatches.push(format!(
                "{op}: rights::may = {may}, the unit: {}",
                match &result {
                    Ok(()) => "ok".to_owned(),
                    Err(e) => e.to_string(),
                }
            ));
        }
    };
    check("getDeviceInfo", unit.info().await.map(drop));
    check("getSettings", unit.settings().await.map(drop));
    check("getSettingsNode", unit.node("aiding/gnss1").await.map(drop));
    check("exportSettings", unit.export().await.map(drop));
    check(
        "updateSettingsNode",
        unit.write_node("output/comA/messages/imuShort", &json!("10ms"), false)
            .await
            .map(drop),
    );
    check(
        "updateSettings",
        unit.write(&json!({"oem": {"label": "rights"}}), false)
            .await
            .map(drop),
    );
    check("importSettings", unit.import(&tree, false).await.map(drop));
    check(
        "restoreDefaultSettings",
        unit.restore_defaults(false).await.map(drop),
    );
    check("lockSettings", unit.lock().await);
    // The unit's own answer to an unlock, whether or not the lock was taken (the
    // session refuses to give back a lock it does not hold before sending anything).
    let unlocked = match unit.client().unlock_settings().send().await {
        Ok(_) => Ok(()),
        Err(e) => Err(UnitError::Api {
            operation: "unlockSettings",
            status: e.status().map_or(0, |s| s.as_u16()),
            title: String::new(),
            detail: e.to_string(),
            errors: Vec::new(),
        }),
    };
    check("unlockSettings", unlocked);
    check("getDataLoggerStatus", unit.logger_status().await.map(drop));
    check("startDataLogger", unit.logger_start().await);
    check("stopDataLogger", unit.logger_stop().await);
    check(
        "changePassword",
        unit.change_password(None, pw(own_password)).await,
    );
    check("reboot", unit.reboot().await);
    assert!(
        mismatches.is_empty(),
        "{:?} as {user} ({}): {mismatches:#?}",
        rig.link,
        if logged_in {
            "logged in"
        } else {
            "default user"
        }
    );
}

async fn rights_of_each_user_logged_in(link: Link) {
    let all: Vec<(String, String)> = USERS
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let all: Vec<(&str, &str)> = all.iter().map(|(u, p)| (u.as_str(), p.as_str())).collect();
    for user in USERS {
        // A fresh unit per user: the last operation reboots it.
        let rig = Rig::start(link, config(&all)).await;
        let unit = rig.login(UserName::from(user), &password_of(user)).await;
        check_rights(&rig, &unit, &UserName::from(user), &password_of(user), true).await;
    }
}

async fn rights_of_each_user_as_the_default_user(link: Link) {
    for (rank, user) in USERS.iter().enumerate() {
        // Every user above `user` has a password, `user` and those below have none:
        // `user` is the default user.
        let above: Vec<(String, String)> = USERS[rank + 1..]
            .iter()
            .map(|u| ((*u).to_owned(), password_of(u)))
            .chain((*user == "factory").then(|| ("factory".to_owned(), String::new())))
            .collect();
        let above: Vec<(&str, &str)> = above
            .iter()
            .map(|(u, p)| (u.as_str(), p.as_str()))
            .collect();
        let rig = Rig::start(link, config(&above)).await;
        assert_eq!(rig.dev.default_user().as_deref(), Some(*user));
        let unit = rig.session().await;
        check_rights(&rig, &unit, &UserName::from(*user), "", false).await;
    }
}
