//! Free-form settings JSON (`SettingsFile`, `SettingsNode` of `openapi/ins-device.yaml`):
//! newtypes over `serde_json` values, the same on the wire, whose `Debug` shows
//! `[redacted]` for the value of every key naming a password (the NTRIP caster's, or
//! any a newer firmware adds), at any depth.

use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Whether a settings key names a secret: its name contains `password`, in any case.
pub fn is_secret_key(key: &str) -> bool {
    key.as_bytes()
        .windows(b"password".len())
        .any(|window| window.eq_ignore_ascii_case(b"password"))
}

/// A `Debug` view of settings JSON with every secret value replaced by `[redacted]`.
pub struct Redacted<'a>(pub &'a Value);

impl fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Value::Object(map) => RedactedMap(map).fmt(f),
            Value::Array(items) => f.debug_list().entries(items.iter().map(Redacted)).finish(),
            other => fmt::Debug::fmt(other, f),
        }
    }
}

/// [`Redacted`] for an object.
struct RedactedMap<'a>(&'a Map<String, Value>);

impl fmt::Debug for RedactedMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut map = f.debug_map();
        for (key, value) in self.0 {
            if is_secret_key(key) {
                map.entry(key, &format_args!("[redacted]"));
            } else {
                map.entry(key, &Redacted(value));
            }
        }
        map.finish()
    }
}

/// The whole settings tree as exported to a file (`GET /api/v1/settings/export`,
/// `POST /api/v1/settings/import`): every node the unit holds, kept as it came.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SettingsFile(pub Map<String, Value>);

impl fmt::Debug for SettingsFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SettingsFile")
            .field(&RedactedMap(&self.0))
            .finish()
    }
}

impl Deref for SettingsFile {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for SettingsFile {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<Map<String, Value>> for SettingsFile {
    fn from(value: Map<String, Value>) -> Self {
        Self(value)
    }
}

impl From<SettingsFile> for Map<String, Value> {
    fn from(value: SettingsFile) -> Self {
        value.0
    }
}

/// The value of one node of the settings tree (`GET`/`PUT /api/v1/settings/{path}`):
/// any JSON value.
#[derive(Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SettingsNode(pub Value);

impl fmt::Debug for SettingsNode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SettingsNode")
            .field(&Redacted(&self.0))
            .finish()
    }
}

impl Deref for SettingsNode {
    type Target = Value;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for SettingsNode {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl From<Value> for SettingsNode {
    fn from(value: Value) -> Self {
        Self(value)
    }
}

impl From<SettingsNode> for Value {
    fn from(value: SettingsNode) -> Self {
        value.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tree() -> Value {
        json!({
            "network": {"ntrip": {"hostname": "caster.example", "password": "hunter2-ntrip",
                                  "port": 2101}},
            "vendor": [{"ftpPassword": {"nested": "s3cret-ftp"}}, "kept"],
            "PASSWORD": "upper-case-secret"
        })
    }

    #[test]
    fn debug_redacts_every_password_key_at_any_depth() {
        let Value::Object(map) = tree() else {
            unreachable!("an object literal")
        };
        let shown = format!(
            "{:?} {:#?}",
            SettingsFile(map.clone()),
            SettingsNode(tree())
        );
        for secret in ["hunter2-ntrip", "s3cret-ftp", "upper-case-secret"] {
            assert!(!shown.contains(secret), "{secret} shown in {shown}");
        }
        assert!(shown.contains("caster.example"), "{shown}");
        assert!(
            shown.contains("2101") && shown.contains("\"kept\""),
            "{shown}"
        );
        assert_eq!(shown.matches("[redacted]").count(), 6, "{shown}");
    }

    #[test]
    fn the_wire_is_the_plain_json() {
        let node = SettingsNode(tree());
        let text = serde_json::to_string(&node).expect("serializable");
        assert_eq!(text, tree().to_string());
        let back: SettingsNode = serde_json::from_str(&text).expect("readable");
        assert_eq!(back, node);
        let file: SettingsFile = serde_json::from_str(&text).expect("an object");
        assert_eq!(Value::Object(file.into()), tree());
        assert!(serde_json::from_str::<SettingsFile>("[1]").is_err());
    }

    #[test]
    fn secret_keys() {
        for key in ["password", "Password", "ntripPASSWORD", "passwordHash"] {
            assert!(is_secret_key(key), "{key}");
        }
        for key in ["pass", "username", "passwor", ""] {
            assert!(!is_secret_key(key), "{key}");
        }
    }
}
