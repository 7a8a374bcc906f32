//! Minimal diff between two trees, and applying a partial tree (the unit's write).

use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;

use serde_json::{Map, Value};

use super::path::NodePath;
use super::walk;
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
/// with the objects on their paths (see [`Patch`], and the semantics in the
/// [module documentation](super)). `apply(old, &diff(old, new).tree)` equals `new` whenever the
/// patch has no removals.
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
    let mut values = Values::default();
    let Ok(root) = walk::diff(&mut values, &old, &new);
    values.patch.finish(root, || new.clone())
}

/// A patch whose tree is a `serde_json::Value`, as a diff finds its changes: the keys
/// to the objects being walked, the changed and removed paths, and the partial objects
/// (for the representations whose patches are [`Patch`]es: values, the nodes of a
/// text).
#[derive(Default)]
pub(super) struct PatchBuilder<'k> {
    /// Keys from the root to the objects being compared.
    stack: Vec<&'k str>,
    changed: Vec<NodePath>,
    removed: Vec<NodePath>,
}

impl<'k> PatchBuilder<'k> {
    #[inline]
    pub(super) fn enter(&mut self, key: &'k str) {
        self.stack.push(key);
    }

    #[inline]
    pub(super) fn leave(&mut self) {
        self.stack.pop();
    }

    /// Records a changed (or added) node and writes its new value into the partial
    /// object.
    #[cold]
    #[inline(never)]
    pub(super) fn changed(
        &mut self,
        key: &str,
        value: Value,
        out: &mut Option<Map<String, Value>>,
    ) {
        self.changed
            .push(NodePath::from_tree_keys(&self.stack, key));
        out.get_or_insert_with(new_map)
            .insert(key.to_owned(), value);
    }

    #[inline]
    pub(super) fn child(
        &mut self,
        key: &str,
        child: Map<String, Value>,
        out: &mut Option<Map<String, Value>>,
    ) {
        out.get_or_insert_with(new_map)
            .insert(key.to_owned(), Value::Object(child));
    }

    #[cold]
    pub(super) fn removed(&mut self, key: &str) {
        self.removed
            .push(NodePath::from_tree_keys(&self.stack, key));
    }

    pub(super) fn changed_root(&mut self) {
        self.changed.push(NodePath::root());
    }

    /// The patch: the partial object of the roots, or `new` itself when the roots are
    /// not both objects.
    pub(super) fn finish(
        self,
        root: walk::Root<Map<String, Value>>,
        new: impl FnOnce() -> Value,
    ) -> Patch {
        let tree = match root {
            walk::Root::Objects(out) => Value::Object(out.unwrap_or_default()),
            walk::Root::Leaves => new(),
        };
        Patch {
            tree,
            changed: self.changed,
            removed: self.removed,
        }
    }
}

/// A [`Patch`] assembled from changed nodes met in the new tree's document order, for
/// the fast paths that find changes without walking both trees (the leaves of two
/// trees of one shape, the values where two texts differ): each changed node and the
/// objects on its path, as the walk's partial tree holds them, and no removal.
#[derive(Default)]
pub(super) struct ChangeList {
    tree: Map<String, Value>,
    changed: Vec<NodePath>,
}

impl ChangeList {
    /// Adds the node under `keys` (from the root; not the root itself), changed to
    /// `value`. `None` when the changes are not one tree in document order: a node met
    /// twice or below another change, or a key met again apart from the changes under
    /// it (a key twice in one object): the caller gives up its fast path.
    pub(super) fn add(&mut self, keys: &[&str], value: Value) -> Option<()> {
        let (last, parents) = keys.split_last()?;
        let mut map = &mut self.tree;
        for &key in parents {
            // The changes under one key follow each other: its object is the last one.
            if map
                .iter()
                .next_back()
                .is_none_or(|(previous, _)| previous != key)
            {
                if map.contains_key(key) {
                    return None;
                }
                map.insert(key.to_owned(), Value::Object(new_map()));
            }
            map = map.get_mut(key)?.as_object_mut()?;
        }
        if map.contains_key(*last) {
            return None;
        }
        map.insert((*last).to_owned(), value);
        self.changed.push(NodePath::from_tree_keys(parents, last));
        Some(())
    }

    pub(super) fn finish(self) -> Patch {
        Patch {
            tree: Value::Object(self.tree),
            changed: self.changed,
            removed: Vec::new(),
        }
    }
}

/// An object of the partial tree: room for a few keys, so that the first changes do
/// not grow it.
fn new_map() -> Map<String, Value> {
    Map::with_capacity(4)
}

/// `serde_json::Value` trees, read by the walk ([`walk::Nodes`]), and the patch of a
/// diff of two of them.
#[derive(Default)]
pub(super) struct Values<'a> {
    patch: PatchBuilder<'a>,
}

/// The object of a node (none for a node that is not one: the walk only asks for the
/// entries of objects).
#[inline]
fn object_of(node: &Value) -> &Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    match node {
        Value::Object(map) => map,
        _ => &EMPTY,
    }
}

/// The entries of an object, each with the value of the same key in another one:
/// both walked in order while their keys match, the other looked up once they do not.
pub(super) struct InStep<'a> {
    entries: serde_json::map::Iter<'a>,
    other_entries: serde_json::map::Iter<'a>,
    other: &'a Map<String, Value>,
    in_step: bool,
}

/// The keys of an object that another one lacks.
pub(super) struct MissingKeys<'a> {
    keys: serde_json::map::Keys<'a>,
    other: &'a Map<String, Value>,
}

impl<'a> walk::Nodes for Values<'a> {
    type Node = &'a Value;
    type Key = &'a str;
    type Error = Infallible;
    type Entries = InStep<'a>;
    type Items = std::slice::Iter<'a, Value>;
    type Missing = MissingKeys<'a>;

    #[inline(always)]
    fn is_object(&mut self, node: &&'a Value) -> bool {
        node.is_object()
    }

    #[inline(always)]
    fn kind(&mut self, node: &&'a Value) -> Result<walk::Kind, Infallible> {
        Ok(match node {
            Value::Object(_) => walk::Kind::Object,
            Value::Array(_) => walk::Kind::Array,
            _ => walk::Kind::Scalar,
        })
    }

    #[inline(always)]
    fn same(&self, a: &&'a Value, b: &&'a Value) -> bool {
        std::ptr::eq(*a, *b)
    }

    #[inline(always)]
    fn scalars_equal(&mut self, a: &&'a Value, b: &&'a Value) -> Result<bool, Infallible> {
        Ok(scalars_equal(a, b).unwrap_or(matches!((a, b), (Value::Null, Value::Null))))
    }

    #[inline]
    fn len(&mut self, container: &&'a Value) -> Result<usize, Infallible> {
        Ok(match container {
            Value::Object(map) => map.len(),
            Value::Array(items) => items.len(),
            _ => 0,
        })
    }

    #[inline]
    fn items(&mut self, array: &&'a Value) -> Result<Self::Items, Infallible> {
        Ok(match array {
            Value::Array(items) => items.iter(),
            _ => [].iter(),
        })
    }

    #[inline]
    fn next_item(&mut self, items: &mut Self::Items) -> Result<Option<&'a Value>, Infallible> {
        Ok(items.next())
    }

    #[inline]
    fn entries(&mut self, object: &&'a Value, other: &&'a Value) -> Result<InStep<'a>, Infallible> {
        let other = object_of(other);
        Ok(InStep {
            entries: object_of(object).iter(),
            other_entries: other.iter(),
            other,
            in_step: true,
        })
    }

    #[inline(always)]
    fn next_entry(
        &mut self,
        entries: &mut InStep<'a>,
    ) -> Result<Option<(&'a str, &'a Value, Option<&'a Value>)>, Infallible> {
        let Some((key, value)) = entries.entries.next() else {
            return Ok(None);
        };
        let other = if entries.in_step {
            match entries.other_entries.next() {
                Some((other_key, other_value)) if str_eq(other_key, key) => Some(other_value),
                _ => {
                    entries.in_step = false;
                    entries.other.get(key)
                }
            }
        } else {
            entries.other.get(key)
        };
        Ok(Some((key, value, other)))
    }

    fn missing(
        &mut self,
        object: &&'a Value,
        other: &&'a Value,
    ) -> Result<MissingKeys<'a>, Infallible> {
        Ok(MissingKeys {
            keys: object_of(object).keys(),
            other: object_of(other),
        })
    }

    fn next_missing(
        &mut self,
        missing: &mut MissingKeys<'a>,
    ) -> Result<Option<&'a str>, Infallible> {
        let other = missing.other;
        Ok(missing
            .keys
            .find(|key| !other.contains_key(*key))
            .map(String::as_str))
    }
}

impl<'a> walk::Changes for Values<'a> {
    type Object = Map<String, Value>;

    /// Two strings, numbers or booleans compared at once, without asking their kinds:
    /// most leaves are.
    #[inline(always)]
    fn leaves_equal(
        &mut self,
        _key: &&'a str,
        old: &&'a Value,
        new: &&'a Value,
    ) -> Result<bool, Infallible> {
        match scalars_equal(old, new) {
            Some(equal) => Ok(equal),
            None => walk::equal(self, old, new),
        }
    }

    #[inline]
    fn enter(&mut self, key: &&'a str) -> Result<(), Infallible> {
        self.patch.enter(key);
        Ok(())
    }

    #[inline]
    fn leave(&mut self) {
        self.patch.leave();
    }

    #[cold]
    #[inline(never)]
    fn changed(
        &mut self,
        key: &'a str,
        new: &&'a Value,
        out: &mut Option<Map<String, Value>>,
    ) -> Result<(), Infallible> {
        self.patch.changed(key, (*new).clone(), out);
        Ok(())
    }

    #[inline]
    fn child(
        &mut self,
        key: &'a str,
        child: Map<String, Value>,
        out: &mut Option<Map<String, Value>>,
    ) -> Result<(), Infallible> {
        self.patch.child(key, child, out);
        Ok(())
    }

    fn removed(&mut self, key: &'a str) -> Result<(), Infallible> {
        self.patch.removed(key);
        Ok(())
    }

    fn changed_root(&mut self, _new: &&'a Value) -> Result<(), Infallible> {
        self.patch.changed_root();
        Ok(())
    }
}

/// Whether two strings, two numbers or two booleans are equal (`None` for other
/// values): [`walk::Nodes::scalars_equal`] of values.
#[inline(always)]
fn scalars_equal(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::String(a), Value::String(b)) => Some(str_eq(a, b)),
        (Value::Number(a), Value::Number(b)) => Some(a == b),
        (Value::Bool(a), Value::Bool(b)) => Some(a == b),
        _ => None,
    }
}

/// Deep equality of two values, as the walk defines it ([`walk::equal`]): the same as
/// `serde_json`'s (objects equal whatever their key order; `1` differs from `1.0`), but
/// faster on objects of the same key order: keys are compared in order, and looked up
/// by hash only where the orders differ.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    let Ok(equal) = walk::equal(&mut Values::default(), &a, &b);
    equal
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

/// `tree` with the partial tree `patch` written into it, as the unit writes settings
/// (see the [module documentation](super)): objects merged key by key (keys absent from `patch` are
/// kept, keys absent from `tree` are added), everything else (arrays, scalars, null)
/// replacing the node whole; an object written over a non-object replaces it. `tree`
/// is not modified.
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
        (Value::Object(object), Value::Object(_)) => {
            let Ok(()) = walk::apply(&mut ValueWrite(PhantomData), &mut &mut *object, &patch);
        }
        (tree, patch) => *tree = patch.clone(),
    }
}

/// A `serde_json::Value` tree being written with a `Value` write ([`walk::Write`]).
struct ValueWrite<'p>(PhantomData<&'p Value>);

impl<'p> walk::Write for ValueWrite<'p> {
    type Node = &'p Value;
    type Key = &'p str;
    type Error = Infallible;
    type Entries = serde_json::map::Iter<'p>;
    type Object<'t>
        = &'t mut Map<String, Value>
    where
        Self: 't;

    #[inline]
    fn is_object(&mut self, node: &&'p Value) -> bool {
        node.is_object()
    }

    #[inline]
    fn entries(&mut self, object: &&'p Value) -> Result<Self::Entries, Infallible> {
        Ok(object_of(object).iter())
    }

    #[inline]
    fn next_entry(
        &mut self,
        entries: &mut Self::Entries,
    ) -> Result<Option<(&'p str, &'p Value)>, Infallible> {
        Ok(entries.next().map(|(key, value)| (key.as_str(), value)))
    }

    #[inline]
    fn object<'t>(
        &mut self,
        object: &'t mut &mut Map<String, Value>,
        key: &&'p str,
    ) -> Result<Option<&'t mut Map<String, Value>>, Infallible> {
        Ok(object.get_mut(*key).and_then(Value::as_object_mut))
    }

    #[inline]
    fn set(
        &mut self,
        object: &mut &mut Map<String, Value>,
        key: &'p str,
        node: &&'p Value,
    ) -> Result<(), Infallible> {
        match object.get_mut(key) {
            Some(slot) => *slot = (*node).clone(),
            None => {
                object.insert(key.to_owned(), (*node).clone());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_change_list_is_one_tree_in_document_order() {
        let list = |changes: &[&[&str]]| {
            let mut list = ChangeList::default();
            for (at, keys) in changes.iter().enumerate() {
                list.add(keys, Value::from(at))?;
            }
            Some(list.finish())
        };
        let Some(patch) = list(&[&["a", "b", "x"], &["a", "c", "y"], &["z"], &["q\"", "t"]]) else {
            panic!("one tree")
        };
        assert_eq!(
            patch.tree.to_string(),
            r#"{"a":{"b":{"x":0},"c":{"y":1}},"z":2,"q\"":{"t":3}}"#
        );
        assert_eq!(patch.changed[3].as_str(), "q\"/t");
        assert_eq!(list(&[]).map(|patch| patch.tree), Some(json!({})));
        assert_eq!(list(&[&[""]]).map(|patch| patch.tree), Some(json!({"": 0})));
        for changes in [
            // A change above another, either way round.
            &[&["a", "b"][..], &["a", "b", "c"]][..],
            &[&["a", "b", "c"], &["a", "b"]],
            // One node twice.
            &[&["a", "b"], &["a", "b"]],
            // A key twice in one object, not together: a/x, b/y, a/z.
            &[&["a", "x"], &["b", "y"], &["a", "z"]],
            // The root.
            &[&[]],
        ] {
            assert!(list(changes).is_none(), "{changes:?}");
        }
    }

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
