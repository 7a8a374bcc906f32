//! Minimal diff between two trees, and applying a partial tree (the unit's write).

use std::fmt;

use serde_json::{Map, Value};

use super::path::NodePath;
use super::{SettingsError, redacted};

/// What turns one settings tree into another: the partial tree to write, and the
/// nodes it changes. Made by [`diff`]; written with [`apply`] (or sent to the unit as
/// the body of `POST /settings`, see [`Patch::into_write`]).
///
/// The patch follows the unit's write semantics: objects are merged key by key,
/// everything else (arrays, scalars, null) replaces the node whole. Under those
/// semantics a write can add or change a node but never remove one, so keys of the
/// old tree that the new one lacks are not in `tree`: they are listed in
/// [`removed`](Patch::removed), never dropped silently.
///
/// `Debug` shows `[redacted]` in place of the value of any key whose name contains
/// `password` (the NTRIP caster's password is a secret).
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Patch {
    /// The partial tree: only the changed nodes and the objects on their paths
    /// (`{"aiding":{"gnss1":{"leverArmPrimary":[0.5,0.0,-1.2]}}}`). An empty object when
    /// nothing changed (when the new tree is an object; otherwise the new tree itself,
    /// whose write changes nothing).
    pub tree: Value,
    /// The changed nodes, in the new tree's document order: every leaf (scalar, null or
    /// array: an array is compared whole and is one node) whose value changed, and the
    /// top of every sub-tree that was added or whose type changed (an object replaced by
    /// a scalar or the reverse is one whole replacement at that node).
    pub changed: Vec<NodePath>,
    /// The nodes of the old tree that the new one lacks (the top of each removed
    /// sub-tree), depth first: each object's removed keys in the old tree's order,
    /// after those found deeper in its kept children. A partial write cannot express
    /// them (the unit has no delete): `apply(old, &patch.tree)` keeps them. Settings
    /// trees have a fixed key set, so this is normally empty.
    pub removed: Vec<NodePath>,
}

impl Patch {
    /// Whether the two trees were equal: nothing changed and nothing was removed.
    pub fn is_empty(&self) -> bool {
        self.changed.is_empty() && self.removed.is_empty()
    }

    /// Whether the old tree had nodes that the new one lacks (see
    /// [`removed`](Patch::removed)).
    pub fn has_removals(&self) -> bool {
        !self.removed.is_empty()
    }

    /// The body of the write (`POST /settings`) that turns the old tree into the new one.
    ///
    /// # Errors
    ///
    /// [`SettingsError::RemovalNotExpressible`] when the patch has removals: writing
    /// `tree` would leave the removed nodes in place. Export, edit and import the whole
    /// tree instead, or drop the removals knowingly and use [`tree`](Patch::tree).
    pub fn into_write(self) -> Result<Value, SettingsError> {
        if self.removed.is_empty() {
            Ok(self.tree)
        } else {
            Err(SettingsError::RemovalNotExpressible {
                removed: self.removed,
            })
        }
    }
}

impl fmt::Debug for Patch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Patch")
            .field("tree", &redacted(&self.tree))
            .field("changed", &self.changed)
            .field("removed", &self.removed)
            .finish()
    }
}

/// The minimal patch from `old` to `new`: only the changed nodes, each written once,
/// with the objects on their paths (see [`Patch`]). `apply(old, &diff(old, new).tree)`
/// equals `new` whenever the patch has no removals.
///
/// Equal sub-trees are skipped without allocating: keys are compared in order (the
/// usual case of two trees of one schema) and looked up by hash only where the orders
/// differ; the partial tree and the paths are built only along changed nodes; nothing
/// unchanged is cloned. Numbers compare as `serde_json` does: `1` and `1.0` differ.
///
/// ```
/// use serde_json::json;
/// use svc_core::settings::{apply, diff};
///
/// let old = json!({"aiding": {"gnss1": {"model": "internal", "leverArmPrimary": [0.0, 0.0, 0.0]}}});
/// let new = json!({"aiding": {"gnss1": {"model": "internal", "leverArmPrimary": [0.5, 0.0, -1.2]}}});
/// let patch = diff(&old, &new);
/// assert_eq!(patch.tree, json!({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}}));
/// assert_eq!(patch.changed[0].to_string(), "aiding/gnss1/leverArmPrimary");
/// assert_eq!(apply(&old, &patch.tree), new);
/// ```
pub fn diff(old: &Value, new: &Value) -> Patch {
    let mut differ = Differ::default();
    let tree = match (old, new) {
        (Value::Object(old), Value::Object(new)) => {
            Value::Object(differ.objects(old, new).unwrap_or_default())
        }
        _ => {
            if !values_equal(old, new) {
                differ.changed.push(NodePath::root());
            }
            new.clone()
        }
    };
    Patch {
        tree,
        changed: differ.changed,
        removed: differ.removed,
    }
}

#[derive(Default)]
struct Differ<'a> {
    /// Keys from the root to the objects being compared.
    stack: Vec<&'a str>,
    changed: Vec<NodePath>,
    removed: Vec<NodePath>,
}

impl<'a> Differ<'a> {
    /// The partial object turning `old` into `new`, `None` when no node changed.
    fn objects(
        &mut self,
        old: &'a Map<String, Value>,
        new: &'a Map<String, Value>,
    ) -> Option<Map<String, Value>> {
        if std::ptr::eq(old, new) {
            return None; // The same object (e.g. `diff(tree, tree)`).
        }
        let mut out: Option<Map<String, Value>> = None;
        // Walk both in order while their keys match; look keys up once they do not.
        let mut old_entries = old.iter();
        let mut in_step = true;
        let mut found = 0usize;
        for (key, new_value) in new {
            let old_value = if in_step {
                match old_entries.next() {
                    Some((old_key, old_value)) if str_eq(old_key, key) => Some(old_value),
                    _ => {
                        in_step = false;
                        old.get(key)
                    }
                }
            } else {
                old.get(key)
            };
            match old_value {
                Some(old_value) => {
                    found += 1;
                    self.value(key, old_value, new_value, &mut out);
                }
                None => self.change(key, new_value, &mut out),
            }
        }
        // Keys are unique: when every key of `old` was found in `new`, none was removed.
        if found < old.len() {
            for key in old.keys() {
                if !new.contains_key(key) {
                    self.removed
                        .push(NodePath::from_tree_keys(&self.stack, key));
                }
            }
        }
        out
    }

    #[inline]
    fn value(
        &mut self,
        key: &'a str,
        old: &'a Value,
        new: &'a Value,
        out: &mut Option<Map<String, Value>>,
    ) {
        // The common leaves are compared here, without a call: most nodes are equal.
        let equal = match (old, new) {
            (Value::Object(old), Value::Object(new)) => {
                self.stack.push(key);
                let child = self.objects(old, new);
                self.stack.pop();
                if let Some(child) = child {
                    out.get_or_insert_with(new_map)
                        .insert(key.to_owned(), Value::Object(child));
                }
                return;
            }
            _ => quick_equal(old, new),
        };
        if !equal {
            self.change(key, new, out);
        }
    }

    /// Records a changed (or added) node and writes it into the partial object.
    #[cold]
    #[inline(never)]
    fn change(&mut self, key: &str, new: &Value, out: &mut Option<Map<String, Value>>) {
        self.changed
            .push(NodePath::from_tree_keys(&self.stack, key));
        out.get_or_insert_with(new_map)
            .insert(key.to_owned(), new.clone());
    }
}

/// An object of the partial tree: room for a few keys, so that the first changes do
/// not grow it.
fn new_map() -> Map<String, Value> {
    Map::with_capacity(4)
}

/// Deep equality of two values, `serde_json`'s (objects equal whatever their key
/// order; `1` differs from `1.0`), faster on objects of the same key order: keys are
/// compared in order, and looked up by hash only where the orders differ.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    if std::ptr::eq(a, b) {
        return true;
    }
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => objects_equal(a, b),
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(a, b)| quick_equal(a, b))
        }
        (Value::String(a), Value::String(b)) => str_eq(a, b),
        (Value::Number(a), Value::Number(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Null, Value::Null) => true,
        _ => false,
    }
}

/// [`values_equal`] with the common leaves (strings, numbers, booleans) compared
/// inline, without a call.
#[inline]
fn quick_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => str_eq(a, b),
        (Value::Number(a), Value::Number(b)) => a == b,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        _ => values_equal(a, b),
    }
}

/// String equality, inlined: keys and setting strings are short, where a call to the
/// C library's `memcmp` costs more than the comparison.
#[inline]
pub(crate) fn str_eq(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let len = a.len();
    if len != b.len() {
        return false;
    }
    if len >= 8 {
        // Whole 8-byte words, then the last 8 bytes (overlapping the last word).
        let (a_words, _) = a.as_chunks::<8>();
        let (b_words, _) = b.as_chunks::<8>();
        a_words
            .iter()
            .zip(b_words)
            .all(|(a, b)| u64::from_ne_bytes(*a) == u64::from_ne_bytes(*b))
            && a.last_chunk::<8>().map(|a| u64::from_ne_bytes(*a))
                == b.last_chunk::<8>().map(|b| u64::from_ne_bytes(*b))
    } else if len >= 4 {
        a.first_chunk::<4>().map(|a| u32::from_ne_bytes(*a))
            == b.first_chunk::<4>().map(|b| u32::from_ne_bytes(*b))
            && a.last_chunk::<4>().map(|a| u32::from_ne_bytes(*a))
                == b.last_chunk::<4>().map(|b| u32::from_ne_bytes(*b))
    } else {
        a.iter().zip(b).all(|(a, b)| a == b)
    }
}

fn objects_equal(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut entries = a.iter().zip(b);
    for ((a_key, a_value), (b_key, b_value)) in entries.by_ref() {
        if !str_eq(a_key, b_key) {
            // Orders differ: look the rest up (same lengths, unique keys).
            return a
                .get(b_key)
                .is_some_and(|a_value| values_equal(a_value, b_value))
                && entries.all(|(_, (b_key, b_value))| {
                    a.get(b_key)
                        .is_some_and(|a_value| values_equal(a_value, b_value))
                });
        }
        if !values_equal(a_value, b_value) {
            return false;
        }
    }
    true
}

/// `tree` with the partial tree `patch` written into it, as the unit writes settings:
/// objects merged key by key (keys absent from `patch` are kept, keys absent from
/// `tree` are added), everything else (arrays, scalars, null) replacing the node whole;
/// an object written over a non-object replaces it. `tree` is not modified.
///
/// Unlike a JSON merge patch (RFC 7386), null is a value like any other: it does not
/// remove the key.
///
/// ```
/// use serde_json::json;
/// use svc_core::settings::apply;
///
/// let tree = json!({"output": {"comA": {"messages": {"imuShort": "off", "ekfNav": "off"}}}});
/// let write = json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}});
/// let written = apply(&tree, &write);
/// assert_eq!(written["output"]["comA"]["messages"], json!({"imuShort": "10ms", "ekfNav": "off"}));
/// assert_eq!(tree["output"]["comA"]["messages"]["imuShort"], "off");
/// ```
pub fn apply(tree: &Value, patch: &Value) -> Value {
    let mut out = tree.clone();
    apply_in_place(&mut out, patch);
    out
}

/// Writes the partial tree `patch` into `tree`, in place, with the semantics of
/// [`apply`].
pub fn apply_in_place(tree: &mut Value, patch: &Value) {
    match (tree, patch) {
        (Value::Object(tree), Value::Object(patch)) => {
            for (key, value) in patch {
                match tree.get_mut(key) {
                    Some(node) => apply_in_place(node, value),
                    None => {
                        tree.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (tree, patch) => *tree = patch.clone(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn paths(list: &[NodePath]) -> Vec<String> {
        list.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn lever_arm_change() {
        let old = json!({
            "aiding": {"gnss1": {"model": "internal", "leverArmPrimary": [0.0, 0.0, 0.0], "leverArmSecondary": [0.0, 0.0, 0.0]},
                       "gnss2": {"model": "none", "leverArmPrimary": [0.0, 0.0, 0.0]}},
            "clock": {"leapSec": 18}
        });
        let mut new = old.clone();
        new["aiding"]["gnss1"]["leverArmPrimary"] = json!([0.5, 0.0, -1.2]);
        let patch = diff(&old, &new);
        assert_eq!(
            patch.tree,
            json!({"aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}}})
        );
        assert_eq!(paths(&patch.changed), ["aiding/gnss1/leverArmPrimary"]);
        assert!(patch.removed.is_empty());
        assert_eq!(apply(&old, &patch.tree), new);
    }

    #[test]
    fn no_change_is_empty() {
        let tree = json!({"a": {"b": 1, "c": [1, 2]}});
        let patch = diff(&tree, &tree.clone());
        assert!(patch.is_empty());
        assert_eq!(patch.tree, json!({}));
        // Same keys in another order: equal.
        let reordered = json!({"a": {"c": [1, 2], "b": 1}});
        assert!(diff(&tree, &reordered).is_empty());
        // Non-object roots: the patch is the new tree, whose write changes nothing.
        let patch = diff(&json!(3), &json!(3));
        assert!(patch.is_empty());
        assert_eq!(apply(&json!(3), &patch.tree), json!(3));
    }

    #[test]
    fn reordered_keys_still_diff() {
        let old = json!({"a": 1, "b": 2, "c": 3, "d": 4});
        let new = json!({"b": 2, "a": 1, "d": 5, "c": 3, "e": 6});
        let patch = diff(&old, &new);
        assert_eq!(patch.tree, json!({"d": 5, "e": 6}));
        assert_eq!(paths(&patch.changed), ["d", "e"]);
    }

    #[test]
    fn type_changes_are_whole_replacements() {
        let old = json!({"a": {"x": 1, "y": 2}, "b": 3, "c": [1], "d": {"z": 1}});
        let new = json!({"a": 5, "b": {"p": true}, "c": {"q": 1}, "d": {"z": 1.0}});
        let patch = diff(&old, &new);
        assert_eq!(paths(&patch.changed), ["a", "b", "c", "d/z"]);
        assert!(patch.removed.is_empty(), "a replaced object is no removal");
        assert_eq!(
            patch.tree,
            json!({"a": 5, "b": {"p": true}, "c": {"q": 1}, "d": {"z": 1.0}})
        );
        assert_eq!(apply(&old, &patch.tree), new);
        // Root type change.
        let patch = diff(&json!({"a": 1}), &json!([1]));
        assert_eq!(patch.changed, [NodePath::root()]);
        assert_eq!(patch.tree, json!([1]));
    }

    #[test]
    fn removals_are_reported() {
        let old = json!({"a": {"x": 1, "y": {"deep": 2}, "z": 3}, "b": 1});
        let new = json!({"a": {"x": 2}, "b": 1});
        let patch = diff(&old, &new);
        assert_eq!(paths(&patch.changed), ["a/x"]);
        assert_eq!(paths(&patch.removed), ["a/y", "a/z"]);
        assert!(patch.has_removals());
        assert!(!patch.is_empty());
        let error = patch.clone().into_write().unwrap_err();
        assert!(
            matches!(error, SettingsError::RemovalNotExpressible { ref removed } if removed.len() == 2)
        );
        assert_eq!(
            error.to_string(),
            "the write cannot remove nodes a/y, a/z (a settings write only adds and changes)"
        );
        // Only removals: the tree is empty but the patch is not.
        let patch = diff(&json!({"a": 1, "b": 2}), &json!({"a": 1}));
        assert_eq!(patch.tree, json!({}));
        assert!(!patch.is_empty());
    }

    #[test]
    fn nulls_are_values() {
        let old = json!({"a": 1, "b": null});
        let new = json!({"a": null, "b": null});
        let patch = diff(&old, &new);
        assert_eq!(patch.tree, json!({"a": null}));
        assert_eq!(apply(&old, &patch.tree), new);
    }

    #[test]
    fn apply_does_not_mutate_and_adds_keys() {
        let tree = json!({"a": {"b": 1}, "c": "x"});
        let before = tree.clone();
        let out = apply(&tree, &json!({"a": {"n": [1, 2]}, "c": {"o": 1}, "d": 4}));
        assert_eq!(tree, before);
        assert_eq!(
            out,
            json!({"a": {"b": 1, "n": [1, 2]}, "c": {"o": 1}, "d": 4})
        );
        let mut in_place = tree.clone();
        apply_in_place(&mut in_place, &json!({"a": {"b": 2}}));
        assert_eq!(in_place, json!({"a": {"b": 2}, "c": "x"}));
    }

    #[test]
    fn equality_matches_serde_json() {
        let cases = [
            (
                json!({"a": 1, "b": [1, {"c": 2}]}),
                json!({"b": [1, {"c": 2}], "a": 1}),
            ),
            (json!({"a": 1, "b": 2}), json!({"b": 2, "c": 1})),
            (json!({"a": 1}), json!({"a": 1.0})),
            (json!([1, 2]), json!([1, 2, 3])),
            (json!(null), json!(false)),
            (json!("x"), json!("x")),
        ];
        for (a, b) in cases {
            assert_eq!(values_equal(&a, &b), a == b, "{a} vs {b}");
        }
    }

    #[test]
    fn string_equality() {
        let texts: Vec<String> = (0..20)
            .flat_map(|len| {
                let base: String = "abcdefghijklmnopqrstuvwxyz".chars().take(len).collect();
                let mut first = base.clone().into_bytes();
                let mut last = base.clone().into_bytes();
                if len > 0 {
                    first[0] = b'X';
                    last[len - 1] = b'X';
                }
                let mut middle = base.clone().into_bytes();
                middle[len / 2..]
                    .iter_mut()
                    .take(1)
                    .for_each(|byte| *byte = b'X');
                [
                    base,
                    String::from_utf8(first).unwrap(),
                    String::from_utf8(last).unwrap(),
                    String::from_utf8(middle).unwrap(),
                ]
            })
            .collect();
        for a in &texts {
            for b in &texts {
                assert_eq!(str_eq(a, b), a == b, "{a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn debug_redacts_passwords() {
        let patch = diff(
            &json!({"network": {"ntrip": {"password": "old-secret"}}}),
            &json!({"network": {"ntrip": {"password": "new-secret"}}}),
        );
        let shown = format!("{patch:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("network/ntrip/password"), "{shown}");
    }
}
