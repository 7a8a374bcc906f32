//! [`SettingsTree`]: a settings tree laid out for comparison — its shape (the keys and
//! how they nest) kept apart from its leaf values and shared by every tree of that
//! shape, so that two trees of one schema diff by comparing two flat arrays.

//!
//! Its parts, each in its own file under `tree/`:
//! - [`leaves`]: the leaf values, encoded in four words each so that two trees of one
//!   shape compare as two flat arrays;
//! - [`shape`]: the keys and nesting, and the process-wide interner (`SHAPES`) that
//!   makes every tree of one shape share it;
//! - [`patch`]: [`TreePatch`], the diff of two trees, read from the new tree's leaves;
//! - [`apply`] and [`text`]: a partial tree written into a tree, and a tree read
//!   straight from its JSON text.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, OnceLock, PoisonError};

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use super::diff::{diff, values_equal};
use super::path::NodePath;
use super::redacted;
use super::text::Reference;

mod apply;
mod leaves;
mod patch;
mod shape;
mod text;

use leaves::{HEAP, Leaves};
use patch::PatchInner;
pub use patch::{ChangedPaths, TreePatch};
use shape::{Builder, HASH_KEYS, NO_PARENT, OBJECT, SHAPES, Shape, matches_shape};

/// A settings tree (any JSON value, normally the unit's object of modules) held in a
/// layout made for comparing many trees of one schema: a fleet's units against a
/// reference configuration, successive reads of one unit, backups against each other.
///
/// The tree is split into its *shape* (the keys, how they nest and where the leaves
/// are) and its *leaves* (the values, in document order: scalars, null and arrays —
/// an array is one leaf, as in [`diff`]). Shapes are shared: a `SettingsTree` built
/// while another of the same shape is alive (the same keys in the same order, objects
/// and leaves at the same places) holds the same shape as that one (checked key by key
/// when the tree is built, never assumed from a hash), so that
/// [`SettingsTree::diff`] between two trees of one shape compares two arrays of leaves
/// and reads keys only along the changed nodes. Trees of different shapes (a key added,
/// removed or reordered, an object replaced by a leaf) diff through their JSON values,
/// with the same result.
///
/// Building a tree of the shape of one of the last few trees built (a fleet's trees,
/// successive reads of a unit) checks its keys against that shape and encodes its
/// leaves, a fraction of the cost of cloning its JSON value; otherwise its shape is
/// built and looked up among the live ones, about two clones. Diffing two trees of one shape costs a fraction of
/// diffing their values (see `docs/performance.md`). For a single diff of two
/// JSON values you already hold, call [`diff`](super::diff) directly. Cloning a tree
/// costs two reference counts.
///
/// The shape holds only keys; values (the NTRIP password among them) stay in the tree
/// and go when it is dropped. `Debug` shows `[redacted]` in place of the value of any
/// key whose name contains `password`.
///
/// ```
/// use serde_json::json;
/// use svc_core::settings::{SettingsTree, diff};
///
/// let reference: SettingsTree = serde_json::from_value(json!(
///     {"output": {"comA": {"messages": {"imuShort": "off", "ekfNav": "10ms"}}}}
/// ))?;
/// let unit: SettingsTree = serde_json::from_str(
///     r#"{"output": {"comA": {"messages": {"imuShort": "off", "ekfNav": "off"}}}}"#,
/// )?;
/// assert!(unit.same_shape(&reference));
/// let patch = unit.diff(&reference);
/// assert_eq!(patch.changed().map(ToString::to_string).collect::<Vec<_>>(), ["output/comA/messages/ekfNav"]);
/// // The body of the write, serialized straight from the reference's leaves:
/// assert_eq!(serde_json::to_string(&patch)?, r#"{"output":{"comA":{"messages":{"ekfNav":"10ms"}}}}"#);
/// // The same patch as the diff of the two JSON values:
/// assert_eq!(patch.to_patch(), diff(&unit.to_value(), &reference.to_value()));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct SettingsTree {
    shape: Arc<Shape>,
    /// One per leaf of the shape, in document order. Shared: a tree is immutable, and
    /// a clone or a [`TreePatch`] costs two reference counts.
    leaves: Arc<Leaves>,
    /// The tree's compact JSON text and the index of its values, built by the first
    /// [`diff_json`](Self::diff_json) (a fleet's reference) and shared by the clones
    /// made after it; `None` for a tree nested deeper than a JSON parser reads.
    reference: OnceLock<Option<Arc<Reference>>>,
}

impl SettingsTree {
    /// The tree of a JSON value (any value; a settings tree is an object). Its shape is
    /// shared with the trees of the same shape already built.
    pub fn from_value(value: &Value) -> Self {
        // Most trees have the shape of one built just before: check the keys against
        // those and encode the leaves, without building a shape.
        let recent = SHAPES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recent();
        for shape in recent {
            let mut leaves = Leaves {
                words: Vec::with_capacity(shape.leaf_nodes.len()),
                heap: Vec::new(),
            };
            let mut next = 0;
            if matches_shape(&shape, "", NO_PARENT, value, &mut next, &mut leaves)
                && next == shape.nodes.len()
            {
                SHAPES
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .used(&shape);
                return Self {
                    shape,
                    leaves: Arc::new(leaves),
                    reference: OnceLock::new(),
                };
            }
        }
        let mut builder = Builder {
            nodes: Vec::new(),
            leaf_nodes: Vec::new(),
            leaf_paths: Vec::new(),
            leaves: Leaves {
                words: Vec::new(),
                heap: Vec::new(),
            },
            keys: Vec::new(),
            hasher: HASH_KEYS.build_hasher(),
        };
        builder.node("", NO_PARENT, value);
        let shape = Shape {
            hash: builder.hasher.finish(),
            nodes: builder.nodes,
            leaf_nodes: builder.leaf_nodes,
            leaf_paths: builder.leaf_paths,
        };
        let shape = SHAPES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .intern(shape);
        Self {
            shape,
            leaves: Arc::new(builder.leaves),
            reference: OnceLock::new(),
        }
    }

    /// The tree as a JSON value, keys in their order.
    pub fn to_value(&self) -> Value {
        node_value(&self.shape, &self.leaves, 0)
    }

    /// Whether both trees have the same shape (the same keys, nested and ordered
    /// alike): then [`diff`](Self::diff) compares their leaves directly.
    pub fn same_shape(&self, other: &SettingsTree) -> bool {
        Arc::ptr_eq(&self.shape, &other.shape)
    }

    /// Number of leaves (scalars, nulls and arrays).
    pub fn leaf_count(&self) -> usize {
        self.leaves.words.len()
    }

    /// The node at `path` as a JSON value (a copy), `None` when there is none.
    pub fn get(&self, path: &NodePath) -> Option<Value> {
        let nodes = &self.shape.nodes;
        let mut index = 0;
        for segment in path.segments() {
            let node = nodes.get(index)?;
            if node.leaf != OBJECT {
                return None;
            }
            let mut child = index + 1;
            loop {
                if child >= node.end {
                    return None;
                }
                if &*nodes[child].key == segment {
                    break;
                }
                child = nodes[child].end;
            }
            index = child;
        }
        Some(node_value(&self.shape, &self.leaves, index))
    }

    /// The minimal patch from this tree to `new`: the same as [`diff`](super::diff) of
    /// the two trees' values ([`TreePatch::to_patch`] gives that [`Patch`](super::Patch)).
    ///
    /// When both trees have one shape, only their leaves are compared, as two flat
    /// arrays of words (see [`SettingsTree`]); the patch keeps the indices of the
    /// changed leaves and shares `new`'s leaves and the shape's paths, so that nothing
    /// is copied until the patch is read. Otherwise the trees diff through their values.
    pub fn diff(&self, new: &SettingsTree) -> TreePatch {
        let root_is_object = self
            .shape
            .nodes
            .first()
            .is_some_and(|root| root.leaf == OBJECT);
        if !self.same_shape(new) || !root_is_object {
            return TreePatch {
                inner: PatchInner::Values(diff(&self.to_value(), &new.to_value())),
            };
        }
        let (old_leaves, new_leaves) = (&*self.leaves, &*new.leaves);
        let mut changed = Vec::new();
        if !Arc::ptr_eq(&self.leaves, &new.leaves) {
            for (leaf, (a, b)) in old_leaves.words.iter().zip(&new_leaves.words).enumerate() {
                if (a != b || a[0] == HEAP) && !old_leaves.equal(leaf, new_leaves, leaf) {
                    changed.push(leaf);
                }
            }
        }
        TreePatch {
            inner: PatchInner::Leaves {
                shape: Arc::clone(&new.shape),
                leaves: Arc::clone(&new.leaves),
                changed,
            },
        }
    }
}

/// Node `index` of a tree as a JSON value.
fn node_value(shape: &Shape, leaves: &Leaves, index: usize) -> Value {
    let nodes = &shape.nodes;
    let Some(node) = nodes.get(index) else {
        return Value::Null;
    };
    if node.leaf != OBJECT {
        return leaves.value(node.leaf);
    }
    let mut map = Map::new();
    let mut child = index + 1;
    while child < node.end {
        map.insert(
            nodes[child].key.to_string(),
            node_value(shape, leaves, child),
        );
        child = nodes[child].end;
    }
    Value::Object(map)
}

impl From<&Value> for SettingsTree {
    fn from(value: &Value) -> Self {
        Self::from_value(value)
    }
}

impl From<Value> for SettingsTree {
    fn from(value: Value) -> Self {
        Self::from_value(&value)
    }
}

impl From<&SettingsTree> for Value {
    fn from(tree: &SettingsTree) -> Self {
        tree.to_value()
    }
}

/// Equal as their JSON values are (objects whatever their key order; `1` differs
/// from `1.0`).
impl PartialEq for SettingsTree {
    fn eq(&self, other: &Self) -> bool {
        if self.same_shape(other) {
            let (a, b) = (&*self.leaves, &*other.leaves);
            Arc::ptr_eq(&self.leaves, &other.leaves)
                || a.words
                    .iter()
                    .zip(&b.words)
                    .enumerate()
                    .all(|(leaf, (x, y))| (x == y && x[0] != HEAP) || a.equal(leaf, b, leaf))
        } else {
            values_equal(&self.to_value(), &other.to_value())
        }
    }
}

impl fmt::Debug for SettingsTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("SettingsTree")
            .field(&redacted(&self.to_value()))
            .finish()
    }
}

/// Serializes as the JSON value, without building it.
impl Serialize for SettingsTree {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        NodeRef {
            tree: self,
            index: 0,
        }
        .serialize(serializer)
    }
}

struct NodeRef<'a> {
    tree: &'a SettingsTree,
    index: usize,
}

impl Serialize for NodeRef<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let nodes = &self.tree.shape.nodes;
        let Some(node) = nodes.get(self.index) else {
            return serializer.serialize_unit();
        };
        if node.leaf != OBJECT {
            return self.tree.leaves.serialize(node.leaf, serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        let mut child = self.index + 1;
        while child < node.end {
            map.serialize_entry(
                &*nodes[child].key,
                &NodeRef {
                    tree: self.tree,
                    index: child,
                },
            )?;
            child = nodes[child].end;
        }
        map.end()
    }
}

/// Any JSON value.
impl<'de> Deserialize<'de> for SettingsTree {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(|value| Self::from_value(&value))
    }
}

#[cfg(test)]
mod tests;
