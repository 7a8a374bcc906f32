//! [`SettingsTree::apply`]: a write applied to a tree, giving a new tree that shares
//! with the old one everything the write does not change.

use std::sync::Arc;

use serde_json::{Map, Value};

use super::SettingsTree;
use super::leaves::{HEAP, Leaves, encode};
use super::shape::{OBJECT, Shape};
use crate::settings::{apply, walk};

impl SettingsTree {
    /// This tree with the partial tree `patch` written into it, as the unit writes
    /// settings (the semantics of [`apply`](crate::settings::apply): objects merged key
    /// by key, everything else replaced whole; the same walk, writing into the tree's
    /// shape); this tree is not changed.
    ///
    /// A write that changes leaves only (the usual case: new values for existing nodes)
    /// gives a tree of the same shape, sharing the shape and every unchanged long value,
    /// and costs a copy of the leaf array plus the changed leaves — a fraction of
    /// applying the write to a `serde_json::Value` (see `docs/performance.md`). A write that adds keys or replaces an object by a leaf (or the reverse)
    /// goes through the tree's value.
    ///
    /// ```
    /// use serde_json::json;
    /// use svc_core::settings::SettingsTree;
    ///
    /// let tree = SettingsTree::from_value(&json!({"gnss": {"model": "internal", "rate": 5}}));
    /// let written = tree.apply(&json!({"gnss": {"rate": 10}}));
    /// assert_eq!(written.to_value(), json!({"gnss": {"model": "internal", "rate": 10}}));
    /// assert!(written.same_shape(&tree));
    /// assert_eq!(tree.to_value()["gnss"]["rate"], 5);
    /// ```
    #[must_use]
    pub fn apply(&self, patch: &Value) -> SettingsTree {
        let mut writes = LeafWrites {
            shape: &self.shape,
            changes: Vec::new(),
        };
        // Only an object takes a write key by key: an object written over a leaf (the
        // root of a scalar tree) replaces it, even an empty one.
        let root_is_object = self.shape.nodes.first().is_some_and(|n| n.leaf == OBJECT);
        let in_place =
            patch.is_object() && root_is_object && walk::apply(&mut writes, &mut 0, &patch).is_ok();
        if !in_place {
            return SettingsTree::from_value(&apply(&self.to_value(), patch));
        }
        if writes.changes.is_empty() {
            return self.clone();
        }
        let mut leaves = Leaves {
            words: self.leaves.words.clone(),
            heap: self.leaves.heap.clone(),
        };
        for (leaf, value) in writes.changes {
            leaves.set(leaf, value);
        }
        SettingsTree {
            shape: Arc::clone(&self.shape),
            leaves: Arc::new(leaves),
            reference: std::sync::OnceLock::new(),
        }
    }
}

/// A write into a tree's shape that changes leaves only: the leaves it sets, each with
/// its new value. A write that would change the shape (a key the object lacks, an
/// object over a leaf or a leaf over an object) stops with [`ShapeChange`], and goes
/// through the tree's value instead.
struct LeafWrites<'s, 'p> {
    shape: &'s Shape,
    changes: Vec<(usize, &'p Value)>,
}

/// The write changes the tree's shape.
struct ShapeChange;

impl LeafWrites<'_, '_> {
    /// The child of object node `node` under `key`: children follow their parent, each
    /// followed by its own sub-tree.
    fn child(&self, node: usize, key: &str) -> Option<usize> {
        let nodes = &self.shape.nodes;
        let end = nodes.get(node)?.end;
        let mut child = node + 1;
        while let Some(candidate) = nodes.get(child).filter(|_| child < end) {
            if *candidate.key == *key {
                return Some(child);
            }
            child = candidate.end;
        }
        None
    }
}

impl<'p> walk::Write for LeafWrites<'_, 'p> {
    type Node = &'p Value;
    type Key = &'p str;
    type Error = ShapeChange;
    type Entries = serde_json::map::Iter<'p>;
    /// An object node of the shape.
    type Object<'t>
        = usize
    where
        Self: 't;

    fn is_object(&mut self, node: &&'p Value) -> bool {
        node.is_object()
    }

    fn entries(&mut self, object: &&'p Value) -> Result<Self::Entries, ShapeChange> {
        object.as_object().map(Map::iter).ok_or(ShapeChange)
    }

    fn next_entry(
        &mut self,
        entries: &mut Self::Entries,
    ) -> Result<Option<(&'p str, &'p Value)>, ShapeChange> {
        Ok(entries.next().map(|(key, value)| (key.as_str(), value)))
    }

    fn object<'t>(
        &mut self,
        object: &'t mut usize,
        key: &&'p str,
    ) -> Result<Option<usize>, ShapeChange> {
        let child = self.child(*object, key).ok_or(ShapeChange)?;
        Ok((self.shape.nodes[child].leaf == OBJECT).then_some(child))
    }

    fn set(
        &mut self,
        object: &mut usize,
        key: &'p str,
        node: &&'p Value,
    ) -> Result<(), ShapeChange> {
        let child = self.child(*object, key).ok_or(ShapeChange)?;
        let leaf = self.shape.nodes[child].leaf;
        if leaf == OBJECT || node.is_object() {
            return Err(ShapeChange);
        }
        self.changes.push((leaf, node));
        Ok(())
    }
}

impl Leaves {
    /// Leaf `leaf` set to `value` (not an object).
    fn set(&mut self, leaf: usize, value: &Value) {
        let at = self.heap.binary_search_by_key(&leaf, |&(index, _)| index);
        let Some(slot) = self.words.get_mut(leaf) else {
            return;
        };
        match (encode(value), at) {
            (Some(words), Ok(found)) => {
                *slot = words;
                self.heap.remove(found);
            }
            (Some(words), Err(_)) => *slot = words,
            (None, Ok(found)) => self.heap[found].1 = Arc::new(value.clone()),
            (None, Err(place)) => {
                *slot = [HEAP, 0, 0, 0];
                self.heap.insert(place, (leaf, Arc::new(value.clone())));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use crate::settings::diff;
    use svc_test_support::settings as testing;

    fn check(tree: &Value, patch: &Value) -> SettingsTree {
        let before = SettingsTree::from_value(tree);
        let written = before.apply(patch);
        let expected = apply(tree, patch);
        assert_eq!(written.to_value(), expected, "{tree} + {patch}");
        assert_eq!(before.to_value(), *tree, "the tree is not changed");
        assert!(
            written
                .diff(&SettingsTree::from_value(&expected))
                .is_empty()
        );
        written
    }

    #[test]
    fn leaf_writes_keep_the_shape_and_the_rest() {
        let unit = testing::unit_default_tree();
        let changed = testing::change_leaves(&unit, 0.05, 3);
        let write = diff(&unit, &changed).tree;
        let written = check(&unit, &write);
        assert!(written.same_shape(&SettingsTree::from_value(&unit)));
        // Long values in and out of the heap.
        let tree = json!({"a": "short", "b": "a string longer than twenty-four bytes", "c": [1, 2, 3, 4], "d": {"e": 1}});
        for patch in [
            json!({"a": "a string longer than twenty-four bytes, now"}),
            json!({"b": "short"}),
            json!({"c": [1]}),
            json!({"c": ["x", "y", "z", "w", "v"], "a": null}),
            json!({"d": {"e": "another string longer than twenty-four"}}),
            json!({}),
        ] {
            let written = check(&tree, &patch);
            assert!(
                written.same_shape(&SettingsTree::from_value(&tree)),
                "{patch}"
            );
        }
    }

    #[test]
    fn shape_changes_go_through_the_value() {
        let tree = json!({"a": 1, "d": {"e": 1}});
        for patch in [
            json!({"z": 1}),
            json!({"d": {"f": 1}}),
            json!({"d": 5}),
            json!({"a": {"x": 1}}),
            json!([1, 2]),
            json!(3),
        ] {
            check(&tree, &patch);
        }
    }

    #[test]
    fn an_empty_object_written_over_a_leaf_root_replaces_it() {
        // Found by fuzzing: the empty write changed no leaf, so the scalar tree was
        // kept instead of being replaced by the object.
        for tree in [json!(8), json!(null), json!("s"), json!([1])] {
            let written = check(&tree, &json!({}));
            assert_eq!(written.to_value(), json!({}));
            check(&tree, &json!({"a": 1}));
        }
    }

    proptest! {
        #[test]
        fn applies_as_the_value_write_does(
            values in prop::collection::vec(prop_oneof![
                Just(json!(null)), Just(json!(true)), Just(json!(-7)), Just(json!(2.5)),
                Just(json!("s")), Just(json!("a string longer than twenty-four bytes")),
                Just(json!([1, 2.0])), Just(json!(["p", "q"])), Just(json!({"x": 1})),
            ], 6),
            picks in prop::collection::vec(0usize..6, 0..4),
        ) {
            let keys = ["a", "b", "c", "d", "e", "f"];
            let tree: Map<String, Value> = keys
                .iter()
                .zip(&values)
                .map(|(k, v)| ((*k).to_owned(), v.clone()))
                .collect();
            let patch: Map<String, Value> = picks
                .iter()
                .map(|&i| (keys[i].to_owned(), values[(i + 1) % values.len()].clone()))
                .collect();
            check(&Value::Object(tree), &Value::Object(patch));
        }
    }
}
