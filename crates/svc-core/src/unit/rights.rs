//! The unit's rights matrix as data: may a user run an operation?
//!
//! The tables are generated from `openapi/ins-device.yaml` (`x-access-rights`,
//! `x-role-order`, each operation's `x-required-right` and `x-requires-login`), the same
//! data the emulated unit enforces, so the answer here is the unit's answer.

use ins_device_api::enums::UserName;
use ins_device_api::rights::{ACCESS_RIGHTS, OPERATION_RIGHTS, OperationRight, ROLE_ORDER};

/// How much a level allows, within its category: `NO` < `READ`/`VIEW` < `USE`/`WRITE` < `YES`.
fn rank(level: &str) -> u8 {
    match level {
        "NO" => 0,
        "READ" | "VIEW" => 1,
        "USE" | "WRITE" => 2,
        "YES" => 3,
        _ => 0,
    }
}

/// What an operation needs, by its `operationId` (e.g. `updateSettings`).
pub fn required(operation_id: &str) -> Option<&'static OperationRight> {
    OPERATION_RIGHTS
        .iter()
        .find(|o| o.operation_id == operation_id)
}

/// A user's level in a category of the matrix (`None` for an unknown user or category).
pub fn level(user: &UserName, category: &str) -> Option<&'static str> {
    ACCESS_RIGHTS
        .iter()
        .find(|(u, _)| *u == user.as_str())
        .and_then(|(_, cells)| cells.iter().find(|(c, _)| *c == category))
        .map(|(_, l)| *l)
}

/// Whether `user` may run the operation `operation_id`; `logged_in` tells whether the
/// request carries a token (logout, password changes and the settings lock need one).
/// `None` for an operation or user the matrix does not know.
pub fn may(user: &UserName, operation_id: &str, logged_in: bool) -> Option<bool> {
    let op = required(operation_id)?;
    if op.requires_login && !logged_in {
        return Some(false);
    }
    match op.right {
        None => Some(true),
        Some((category, needed)) => Some(rank(level(user, category)?) >= rank(needed)),
    }
}

/// The operations a user may run, e.g. to grey out actions in an app.
pub fn allowed_operations(user: &UserName, logged_in: bool) -> Vec<&'static str> {
    OPERATION_RIGHTS
        .iter()
        .filter(|o| may(user, o.operation_id, logged_in) == Some(true))
        .map(|o| o.operation_id)
        .collect()
}

/// The default user (the one a request without a token acts as): the highest-role user
/// without a password, as the unit chooses it at power-on and each reboot; `None` when
/// every user has a password (requests without a token then answer 401).
pub fn default_user(has_password: impl Fn(&UserName) -> bool) -> Option<UserName> {
    ROLE_ORDER
        .iter()
        .rev()
        .map(|u| UserName::from(*u))
        .find(|u| !has_password(u))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_matrix_of_the_specification() {
        let v = |s: &str| UserName::from(s);
        assert_eq!(may(&v("viewer"), "getSettings", false), Some(true));
        assert_eq!(may(&v("viewer"), "updateSettings", false), Some(false));
        assert_eq!(may(&v("operator"), "updateSettings", false), Some(false));
        assert_eq!(may(&v("operator"), "reboot", false), Some(true));
        assert_eq!(may(&v("operator"), "startDataLogger", false), Some(true));
        assert_eq!(may(&v("viewer"), "startDataLogger", false), Some(false));
        assert_eq!(may(&v("powerUser"), "updateSettings", false), Some(true));
        assert_eq!(
            may(&v("powerUser"), "lockSettings", false),
            Some(false),
            "a lock needs a token"
        );
        assert_eq!(may(&v("powerUser"), "lockSettings", true), Some(true));
        assert_eq!(may(&v("viewer"), "login", false), Some(true));
        assert_eq!(may(&v("viewer"), "noSuchOperation", false), None);
        assert_eq!(level(&v("setup"), "Firmware"), Some("YES"));
        assert!(allowed_operations(&v("viewer"), false).contains(&"getDeviceInfo"));
    }

    #[test]
    fn the_default_user_rule_with_the_specification_examples() {
        // No passwords (but factory's): setup.
        assert_eq!(
            default_user(|u| u.as_str() == "factory"),
            Some(UserName::Setup)
        );
        // Operator has a password, setup none: setup.
        assert_eq!(
            default_user(|u| matches!(u.as_str(), "operator" | "factory")),
            Some(UserName::Setup)
        );
        // Setup, powerUser and operator have passwords: viewer.
        assert_eq!(
            default_user(|u| matches!(u.as_str(), "operator" | "powerUser" | "setup" | "factory")),
            Some(UserName::Viewer)
        );
        assert_eq!(default_user(|_| true), None);
    }
}
