//! Three-way merge of settings trees.

use std::fmt;

use serde_json::{Map, Value};

use super::diff::{Values, values_equal};
use super::path::NodePath;
use super::redacted;
use super::walk::{self, Nodes as _};

/// The result of [`merge`]: the merged tree and the nodes both sides changed
/// differently.
///
/// `Debug` shows `[redacted]` in place of the value of any key whose name contains
/// `password`.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Merge {
    /// The merged tree. At a conflict it holds `ours` (the node as ours has it, or no
    /// node when ours removed it).
    pub tree: Value,
    /// The conflicting nodes, in document order (ours' order, then the keys only
    /// theirs has).
    pub conflicts: Vec<Conflict>,
}

impl Merge {
    /// Whether the merge had no conflict.
    pub fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }
}

impl fmt::Debug for Merge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Merge")
            .field("tree", &redacted(&self.tree))
            .field("conflicts", &self.conflicts)
            .finish()
    }
}

/// A node that both sides changed, differently. Each version is `None` where that
/// tree lacks the node (added on the other sides, or removed).
///
/// `Debug` shows `[redacted]` in place of the values when the path names a password.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct Conflict {
    /// Where.
    pub path: NodePath,
    /// The node in the common ancestor.
    pub base: Option<Value>,
    /// The node in our tree (the one the merged tree keeps).
    pub ours: Option<Value>,
    /// The node in their tree.
    pub theirs: Option<Value>,
}

impl fmt::Debug for Conflict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secret = self.path.segments().any(ins_device_api::is_secret_key);
        let show = |value: &Option<Value>| match value {
            Some(_) if secret => Some(Value::String("[redacted]".to_owned())),
            Some(value) => Some(redacted(value)),
            None => None,
        };
        f.debug_struct("Conflict")
            .field("path", &self.path)
            .field("base", &show(&self.base))
            .field("ours", &show(&self.ours))
            .field("theirs", &show(&self.theirs))
            .finish()
    }
}

/// Three-way merge: `ours` and `theirs` both derive from `base`; the result holds
/// the changes of both.
///
/// Node by node (objects are merged key by key, every other value is one node, arrays
/// whole):
/// - changed on one side only (or on neither): that side's version;
/// - changed identically on both sides: that version, no conflict;
/// - changed differently on both sides: a [`Conflict`], and the merged tree keeps
///   `ours` there.
///
/// Adding and removing a key are changes like the others (a key removed on one side
/// and unchanged on the other is removed; removed on one side and changed on the
/// other is a conflict). Where both sides hold an object, they are merged key by key
/// even if `base` held something else there. When the merge is clean, the merged
/// tree does not depend on which side is `ours` (up to key order).
///
/// ```
/// use serde_json::json;
/// use svc_core::settings::merge;
///
/// let base = json!({"clock": {"leapSec": 18}, "oem": {"label": "a"}, "dataLogger": {"mode": "auto"}});
/// let ours = json!({"clock": {"leapSec": 19}, "oem": {"label": "b"}, "dataLogger": {"mode": "auto"}});
/// let theirs = json!({"clock": {"leapSec": 18}, "oem": {"label": "c"}, "dataLogger": {"mode": "manual"}});
/// let merged = merge(&base, &ours, &theirs);
/// assert_eq!(merged.tree, json!({"clock": {"leapSec": 19}, "oem": {"label": "b"}, "dataLogger": {"mode": "manual"}}));
/// assert_eq!(merged.conflicts.len(), 1);
/// assert_eq!(merged.conflicts[0].path.to_string(), "oem/label");
/// assert_eq!(merged.conflicts[0].theirs, Some(json!("c")));
/// ```
pub fn merge(base: &Value, ours: &Value, theirs: &Value) -> Merge {
    let mut merger = Merger::default();
    let tree = merger
        .node(None, Some(base), Some(ours), Some(theirs))
        .unwrap_or(Value::Null); // Both sides are present: the merge yields a node.
    Merge {
        tree,
        conflicts: merger.conflicts,
    }
}

#[derive(Default)]
struct Merger<'a> {
    /// Keys from the root to the nodes being merged.
    stack: Vec<&'a str>,
    conflicts: Vec<Conflict>,
}

impl<'a> Merger<'a> {
    /// The merged node (`None`: no node), `key` being its key in its parent (`None`
    /// for the root).
    fn node(
        &mut self,
        key: Option<&'a str>,
        base: Option<&'a Value>,
        ours: Option<&'a Value>,
        theirs: Option<&'a Value>,
    ) -> Option<Value> {
        if let (Some(ours @ Value::Object(_)), Some(theirs @ Value::Object(_))) = (ours, theirs) {
            let base = base.and_then(Value::as_object);
            let Some(key) = key else {
                return Some(Value::Object(self.objects(base, ours, theirs)));
            };
            self.stack.push(key);
            let merged = self.objects(base, ours, theirs);
            self.stack.pop();
            return Some(Value::Object(merged));
        }
        let same = |a: Option<&Value>, b: Option<&Value>| match (a, b) {
            (Some(a), Some(b)) => values_equal(a, b),
            (None, None) => true,
            _ => false,
        };
        if same(ours, theirs) || same(theirs, base) {
            ours.cloned()
        } else if same(ours, base) {
            theirs.cloned()
        } else {
            let path = match key {
                Some(key) => NodePath::from_tree_keys(&self.stack, key),
                None => NodePath::root(),
            };
            self.conflicts.push(Conflict {
                path,
                base: base.cloned(),
                ours: ours.cloned(),
                theirs: theirs.cloned(),
            });
            ours.cloned()
        }
    }

    /// The merge of two objects, their keys paired as the settings walk pairs them
    /// (ours' keys in ours' order, each with theirs' node, then the keys only theirs
    /// has), each with the base's node under the same key.
    fn objects(
        &mut self,
        base: Option<&'a Map<String, Value>>,
        ours: &'a Value,
        theirs: &'a Value,
    ) -> Map<String, Value> {
        let mut nodes = Values::default();
        let lookup = |key: &str| base.and_then(|base| base.get(key));
        let mut out = Map::new();
        let Ok(mut entries) = walk::Nodes::entries(&mut nodes, &ours, &theirs);
        while let Ok(Some((key, our_value, their_value))) = nodes.next_entry(&mut entries) {
            if let Some(value) = self.node(Some(key), lookup(key), Some(our_value), their_value) {
                out.insert(key.to_owned(), value);
            }
        }
        let Ok(mut theirs_only) = walk::Nodes::missing(&mut nodes, &theirs, &ours);
        while let Ok(Some(key)) = nodes.next_missing(&mut theirs_only) {
            let their_value = theirs.get(key);
            if let Some(value) = self.node(Some(key), lookup(key), None, their_value) {
                out.insert(key.to_owned(), value);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn one_sided_changes_merge() {
        let base = json!({"aiding": {"gnss1": {"leverArmPrimary": [0.0, 0.0, 0.0], "model": "internal"}},
                          "output": {"comA": {"messages": {"imuShort": "off", "ekfNav": "off"}}}});
        let mut ours = base.clone();
        ours["aiding"]["gnss1"]["leverArmPrimary"] = json!([0.5, 0.0, -1.2]);
        let mut theirs = base.clone();
        theirs["output"]["comA"]["messages"]["imuShort"] = json!("10ms");
        let merged = merge(&base, &ours, &theirs);
        assert!(merged.is_clean(), "{merged:?}");
        let mut expected = ours.clone();
        expected["output"]["comA"]["messages"]["imuShort"] = json!("10ms");
        assert_eq!(merged.tree, expected);
    }

    #[test]
    fn same_change_on_both_sides_is_no_conflict() {
        let base = json!({"clock": {"leapSec": 18}});
        let both = json!({"clock": {"leapSec": 19}});
        let merged = merge(&base, &both, &both);
        assert!(merged.is_clean());
        assert_eq!(merged.tree, both);
    }

    #[test]
    fn different_changes_conflict_and_keep_ours() {
        let base = json!({"clock": {"leapSec": 18, "source": "internal"}, "oem": {"label": "x"}});
        let ours = json!({"clock": {"leapSec": 19, "source": "internal"}, "oem": {"label": "x"}});
        let theirs = json!({"clock": {"leapSec": 17, "source": "gnss"}, "oem": 3});
        let merged = merge(&base, &ours, &theirs);
        assert_eq!(
            merged.tree,
            json!({"clock": {"leapSec": 19, "source": "gnss"}, "oem": 3})
        );
        assert_eq!(
            merged.conflicts,
            [Conflict {
                path: NodePath::parse("clock/leapSec").unwrap(),
                base: Some(json!(18)),
                ours: Some(json!(19)),
                theirs: Some(json!(17)),
            }]
        );
    }

    #[test]
    fn removals_and_additions() {
        let base = json!({"a": 1, "b": 2, "c": 3});
        let ours = json!({"a": 1, "c": 4, "d": 5});
        let theirs = json!({"a": 1, "b": 2, "e": 6});
        let merged = merge(&base, &ours, &theirs);
        // b removed by ours (theirs unchanged): removed. c changed by ours, removed by
        // theirs: conflict, keep ours. d and e added on one side each.
        assert_eq!(merged.tree, json!({"a": 1, "c": 4, "d": 5, "e": 6}));
        assert_eq!(merged.conflicts.len(), 1);
        assert_eq!(merged.conflicts[0].path.to_string(), "c");
        assert_eq!(merged.conflicts[0].theirs, None);
        // Same key added differently: conflict with no base.
        let merged = merge(&json!({}), &json!({"k": 1}), &json!({"k": 2}));
        assert_eq!(merged.conflicts[0].base, None);
        assert_eq!(merged.tree, json!({"k": 1}));
        // Removed on ours, changed on theirs: conflict, the merged tree lacks it.
        let merged = merge(&json!({"k": 1}), &json!({}), &json!({"k": 2}));
        assert_eq!(merged.tree, json!({}));
        assert_eq!(merged.conflicts[0].ours, None);
    }

    #[test]
    fn root_conflict() {
        let merged = merge(&json!(1), &json!(2), &json!(3));
        assert_eq!(merged.tree, json!(2));
        assert_eq!(merged.conflicts[0].path, NodePath::root());
    }

    #[test]
    fn reordered_trees_merge() {
        let base = json!({"a": 1, "b": 2, "c": 3});
        let ours = json!({"c": 3, "a": 10, "b": 2});
        let theirs = json!({"b": 20, "c": 3, "a": 1});
        let merged = merge(&base, &ours, &theirs);
        assert!(merged.is_clean());
        assert_eq!(merged.tree, json!({"a": 10, "b": 20, "c": 3}));
    }

    #[test]
    fn debug_redacts_passwords() {
        let merged = merge(
            &json!({"network": {"ntrip": {"password": "base-secret"}}}),
            &json!({"network": {"ntrip": {"password": "our-secret"}}}),
            &json!({"network": {"ntrip": {"password": "their-secret"}}}),
        );
        let shown = format!("{merged:?}");
        assert!(!shown.contains("secret"), "{shown}");
        let merged = merge(
            &json!({"network": {"ntrip": {"password": "base-secret"}}}),
            &json!({"network": {"ntrip": {"password": "our-secret"}}}),
            &json!({"network": 1}),
        );
        let shown = format!("{:?}", merged.conflicts);
        assert!(!shown.contains("secret"), "{shown}");
    }
}
