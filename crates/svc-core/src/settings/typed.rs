//! The generated typed tree ([`Settings`]) to and from the untyped JSON tree.

use ins_device_api::types::Settings;
use serde_json::Value;

use super::SettingsError;
use super::diff::diff;
use super::path::NodePath;

/// The typed tree as a JSON tree (the form the unit reads and writes). Fields that are
/// `None` are absent; keys come in the typed structures' order.
///
/// # Errors
///
/// [`SettingsError::NonFiniteNumber`] when a number is NaN or infinite (JSON has no
/// such numbers; the unit could not take them). [`SettingsError::Schema`] if
/// serialization fails otherwise (not expected for the generated types).
pub fn to_value(settings: &Settings) -> Result<Value, SettingsError> {
    let tree = serde_json::to_value(settings).map_err(schema_error)?;
    // Every optional field of the typed tree is left out when `None`, so a null can only
    // come from a non-finite number (which `serde_json` turns into null).
    if let Some(path) = first_null(&tree) {
        return Err(SettingsError::NonFiniteNumber { path });
    }
    Ok(tree)
}

/// The JSON tree as the typed tree, refusing any node the typed tree cannot hold.
///
/// Message maps (`output/*/messages`, `output/can/messages`) take any message name, and
/// message triggers any string (unknown triggers are kept as
/// [`MessageTrigger::Unknown`](ins_device_api::enums::MessageTrigger::Unknown)).
///
/// # Errors
///
/// [`SettingsError::Schema`] when a node has the wrong type (a string where a number
/// is expected, a vector without 3 numbers, ...) or the root is not an object;
/// [`SettingsError::UnknownNodes`] when nodes would be lost: keys the schema does not
/// define (e.g. a newer firmware's settings) or null values. Use [`from_value_lossy`]
/// to keep going without them.
pub fn from_value(tree: Value) -> Result<Settings, SettingsError> {
    let (settings, dropped) = from_value_lossy(tree)?;
    if dropped.is_empty() {
        Ok(settings)
    } else {
        Err(SettingsError::UnknownNodes { paths: dropped })
    }
}

/// The JSON tree as the typed tree, leaving out the nodes the typed tree cannot hold
/// (forward compatibility: a client ignores keys it does not know), and listing them.
///
/// # Errors
///
/// [`SettingsError::Schema`] when a node has the wrong type or the root is not an
/// object.
pub fn from_value_lossy(tree: Value) -> Result<(Settings, Vec<NodePath>), SettingsError> {
    let settings: Settings =
        deserialize(tree.clone()).map_err(|message| SettingsError::Schema { message })?;
    let back = serde_json::to_value(&settings).map_err(schema_error)?;
    // What the typed tree did not keep: keys of `tree` missing from its round trip.
    // (Numbers may come back in another form, `0` as `0.0`: that is no loss.)
    let dropped = diff(&tree, &back).removed;
    Ok((settings, dropped))
}

/// `tree` as the typed settings tree, or what is wrong: the node and what it takes,
/// never the value (it may be a password), e.g. `network/ntrip/password: invalid
/// type: integer `…`, expected a string`.
pub(crate) fn deserialize(tree: Value) -> Result<Settings, String> {
    deserialize_at(tree).map_err(|(node, message)| {
        if node.is_empty() {
            message
        } else {
            format!("{}: {message}", node.join("/"))
        }
    })
}

/// [`deserialize`], with the refused node's path segments (object keys; an array's
/// element is named by its index) apart from the message.
fn deserialize_at(tree: Value) -> Result<Settings, (Vec<String>, String)> {
    serde_path_to_error::deserialize(tree).map_err(
        |e: serde_path_to_error::Error<serde_json::Error>| {
            let node: Vec<String> = e
                .path()
                .iter()
                .map(|segment| match segment {
                    serde_path_to_error::Segment::Seq { index } => index.to_string(),
                    serde_path_to_error::Segment::Map { key }
                    | serde_path_to_error::Segment::Enum { variant: key } => key.clone(),
                    serde_path_to_error::Segment::Unknown => "?".to_owned(),
                })
                .collect();
            (node, crate::observe::without_values(&e.inner().to_string()))
        },
    )
}

/// How many refused nodes [`refused_nodes`] lists at most.
const MAX_REFUSED: usize = 1000;

/// Every node of a (partial) tree that the typed settings tree refuses, with what it
/// takes (never the value), in document order of discovery: each refused node is left
/// out and the rest read again, so one wrong node does not hide the next. A node
/// inside an array names the array (arrays are written whole). Then every key the
/// typed tree does not define, or whose value is null. Empty when the tree is a valid
/// (partial) settings tree; the typed tree of what was left is returned beside.
pub(crate) fn refused_nodes(tree: &Value) -> (Option<Settings>, Vec<(String, String)>) {
    let mut rest = tree.clone();
    let mut refused: Vec<(String, String)> = Vec::new();
    let typed = loop {
        match deserialize_at(rest.clone()) {
            Ok(typed) => break Some(typed),
            Err((node, message)) => {
                // Keys only: an index names an element of the array before it.
                let keys = leading_keys(&rest, &node);
                if keys.is_empty() || refused.len() >= MAX_REFUSED || !remove(&mut rest, &keys) {
                    refused.push((keys.join("/"), message));
                    break None;
                }
                refused.push((keys.join("/"), message));
            }
        }
    };
    if let Some(typed) = &typed
        && let Ok(back) = serde_json::to_value(typed)
    {
        for path in diff(&rest, &back).removed {
            refused.push((
                path.to_string(),
                "not a node of the settings tree (an unknown key, or a null value)".to_owned(),
            ));
        }
    }
    (typed, refused)
}

/// The segments of `node` down to the first that is not an object key of `tree` (an
/// array index, or a key past a leaf).
fn leading_keys(tree: &Value, node: &[String]) -> Vec<String> {
    let mut keys = Vec::new();
    let mut at = tree;
    for segment in node {
        match at {
            Value::Object(map) if map.contains_key(segment) => {
                keys.push(segment.clone());
                at = &map[segment];
            }
            _ => break,
        }
    }
    keys
}

/// Removes the node at `keys` (object keys from the root); whether it was there.
fn remove(tree: &mut Value, keys: &[String]) -> bool {
    let Some((last, parents)) = keys.split_last() else {
        return false;
    };
    let mut at = tree;
    for key in parents {
        match at.get_mut(key) {
            Some(next) => at = next,
            None => return false,
        }
    }
    at.as_object_mut()
        .is_some_and(|map| map.remove(last).is_some())
}

fn schema_error(error: serde_json::Error) -> SettingsError {
    SettingsError::Schema {
        message: error.to_string(),
    }
}

/// The path of the first null node (or of the array holding it), in document order.
fn first_null(tree: &Value) -> Option<NodePath> {
    fn walk<'a>(node: &'a Value, stack: &mut Vec<&'a str>) -> bool {
        match node {
            Value::Null => true,
            Value::Array(items) => items.iter().any(|item| walk(item, stack)),
            Value::Object(map) => map.iter().any(|(key, child)| {
                stack.push(key);
                let found = walk(child, stack);
                if !found {
                    stack.pop();
                }
                found
            }),
            _ => false,
        }
    }
    let mut stack = Vec::new();
    walk(tree, &mut stack).then(|| NodePath::from_tree_stack(&stack))
}

#[cfg(test)]
mod tests {
    use ins_device_api::types::{AidingSettings, GnssAidingSettings, Vector3};
    use serde_json::json;

    use super::*;
    use svc_test_support::settings::unit_default_tree;

    #[test]
    fn round_trip_of_the_default_tree() {
        let tree = unit_default_tree();
        let settings = from_value(tree.clone()).unwrap();
        let back = to_value(&settings).unwrap();
        // Same nodes; the typed tree orders keys its own way.
        let patch = diff(&tree, &back);
        assert!(patch.is_empty(), "{patch:?}");
    }

    #[test]
    fn unknown_nodes_are_reported() {
        let tree = json!({"clock": {"leapSec": 18, "future": 1}, "newModule": {"a": 1}, "oem": {"label": null}});
        let error = from_value(tree.clone()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the typed settings tree cannot hold clock/future, oem/label, newModule (unknown keys or null values)"
        );
        let (settings, dropped) = from_value_lossy(tree).unwrap();
        assert_eq!(dropped.len(), 3);
        assert_eq!(settings.clock.unwrap().leap_sec, Some(18));
    }

    #[test]
    fn wrong_types_are_refused() {
        let error =
            from_value(json!({"aiding": {"gnss1": {"leverArmPrimary": [1.0, 2.0]}}})).unwrap_err();
        assert!(matches!(error, SettingsError::Schema { .. }), "{error}");
        assert!(from_value(json!([1])).is_err());
        // The node is named, the value never is (it may be a password).
        let error = from_value(json!({"network": {"ntrip": {"password": 987_654_321}}}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("network/ntrip/password"), "{error}");
        assert!(!error.contains("987654321"), "{error}");
    }

    #[test]
    fn non_finite_numbers_are_refused() {
        let settings = Settings {
            aiding: Some(AidingSettings {
                gnss1: Some(GnssAidingSettings {
                    lever_arm_primary: Some(Vector3([0.0, f64::NAN, 0.0])),
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert_eq!(
            to_value(&settings).unwrap_err(),
            SettingsError::NonFiniteNumber {
                path: NodePath::parse("aiding/gnss1/leverArmPrimary").unwrap()
            }
        );
    }

    #[test]
    fn typed_diff() {
        let old = from_value(unit_default_tree()).unwrap();
        let mut new = old.clone();
        let gnss1 = new
            .aiding
            .as_mut()
            .and_then(|aiding| aiding.gnss1.as_mut())
            .unwrap();
        gnss1.lever_arm_primary = Some(Vector3([0.5, 0.0, -1.2]));
        // Typed trees are compared through their JSON forms.
        let patch = diff(&to_value(&old).unwrap(), &to_value(&new).unwrap());
        assert_eq!(
            patch.tree,
            json!({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}})
        );
        assert_eq!(
            patch.changed,
            [NodePath::parse("aiding/gnss1/leverArmPrimary").unwrap()]
        );
    }
}
