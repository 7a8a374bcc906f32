//! The shape of a [`SettingsTree`](super::SettingsTree) (its keys and how they nest),
//! and the process-wide interner that makes every tree of one shape share one.

use std::collections::{HashMap, VecDeque};
use std::hash::{Hash, RandomState};
use std::sync::{Arc, LazyLock, Mutex, Weak};

use serde_json::Value;

use super::leaves::Leaves;
use crate::settings::path::NodePath;

/// Keys and nesting of a tree, nodes in document order (pre-order); node 0 is the root.
pub(super) struct Shape {
    pub(super) nodes: Vec<Node>,
    /// The node of each leaf, in document order.
    pub(super) leaf_nodes: Vec<usize>,
    /// The path of each leaf, as [`diff`] names it.
    pub(super) leaf_paths: Vec<NodePath>,
    /// Hash of the nodes' keys and structure (the interning key).
    pub(super) hash: u64,
}

/// One node of a shape.
pub(super) struct Node {
    /// The key under which the node sits in its parent (empty for the root).
    pub(super) key: Box<str>,
    /// The parent's index (`usize::MAX` for the root).
    pub(super) parent: usize,
    /// One past the last node of this node's sub-tree: its children are the nodes
    /// from `index + 1`, each followed by its own sub-tree.
    pub(super) end: usize,
    /// The leaf's index in the leaves, [`OBJECT`] for an object.
    pub(super) leaf: usize,
}

impl Shape {
    /// The keys from the root to `node` (none for the root).
    pub(super) fn keys_of(&self, mut node: usize) -> Vec<&str> {
        let mut keys = Vec::new();
        while let Some(at) = self.nodes.get(node)
            && at.parent != NO_PARENT
        {
            keys.push(&*at.key);
            node = at.parent;
        }
        keys.reverse();
        keys
    }
}

pub(super) const OBJECT: usize = usize::MAX;
pub(super) const NO_PARENT: usize = usize::MAX;

impl Node {
    pub(super) fn same_as(&self, other: &Node) -> bool {
        self.parent == other.parent
            && self.end == other.end
            && self.leaf == other.leaf
            && self.key == other.key
    }
}

/// The shapes of the live trees, by hash (an entry whose last tree is gone is swept
/// away on a later call), and the shapes of the last trees built.
///
/// A deliberate process-wide global: trees built anywhere in the process (a fleet read
/// by several tasks, successive reads of a unit, the bindings' threads) share one
/// [`Shape`] per set of keys, which is what lets two trees of one shape diff by
/// comparing their leaf arrays, whoever built them. It holds only `Weak` references to
/// shapes (keys and paths, no setting value), so it keeps no shape alive, and it stays
/// within about twice the live shapes (see [`Interner`]). The lock is held to look up,
/// compare and insert shapes, never while a tree's leaves are encoded or two trees are
/// diffed. A poisoned lock is taken over: whatever a panic interrupted, an entry missing
/// costs a shape built again, never a wrong result.
pub(super) static SHAPES: LazyLock<Mutex<Interner>> = LazyLock::new(Mutex::default);

/// The keys of the shape hash: random per process, so that nobody can choose keys
/// whose shapes collide (a collision costs time, never a wrong result).
pub(super) static HASH_KEYS: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// How many recently built shapes a new tree is checked against before its shape is
/// built.
pub(super) const RECENT: usize = 4;

#[derive(Default)]
pub(super) struct Interner {
    pub(super) shapes: HashMap<u64, Vec<Weak<Shape>>>,
    /// Entries in `shapes` after the last sweep of dead entries: the next sweep comes
    /// when there are twice as many (amortized, and the map stays within twice the
    /// live shapes, plus a few).
    pub(super) after_sweep: usize,
    /// The shapes of the last trees built, the newest first: a new tree is tried
    /// against them before its own shape is built (a fleet's trees, successive reads
    /// of a unit, all have one shape).
    pub(super) recent: VecDeque<Weak<Shape>>,
}

impl Interner {
    /// The shared shape equal to `shape` (compared node by node), or `shape` itself,
    /// now shared.
    pub(super) fn intern(&mut self, shape: Shape) -> Arc<Shape> {
        if self.shapes.len() >= 2 * self.after_sweep.max(32) {
            self.shapes.retain(|_, list| {
                list.retain(|weak| weak.strong_count() > 0);
                !list.is_empty()
            });
            self.after_sweep = self.shapes.len();
        }
        let list = self.shapes.entry(shape.hash).or_default();
        list.retain(|weak| weak.strong_count() > 0);
        let known = list.iter().filter_map(Weak::upgrade).find(|known| {
            known.nodes.len() == shape.nodes.len()
                && known
                    .nodes
                    .iter()
                    .zip(&shape.nodes)
                    .all(|(a, b)| a.same_as(b))
        });
        let shape = match known {
            Some(known) => known,
            None => {
                let shape = Arc::new(shape);
                list.push(Arc::downgrade(&shape));
                shape
            }
        };
        self.used(&shape);
        shape
    }

    /// Puts `shape` first among the recent shapes.
    pub(super) fn used(&mut self, shape: &Arc<Shape>) {
        let weak = Arc::downgrade(shape);
        self.recent
            .retain(|other| other.strong_count() > 0 && !other.ptr_eq(&weak));
        self.recent.push_front(weak);
        self.recent.truncate(RECENT);
    }

    /// The live recent shapes, the newest first.
    pub(super) fn recent(&self) -> Vec<Arc<Shape>> {
        self.recent.iter().filter_map(Weak::upgrade).collect()
    }
}

/// Builds the shape and the leaves of a tree, depth first.
pub(super) struct Builder<'a> {
    pub(super) nodes: Vec<Node>,
    pub(super) leaf_nodes: Vec<usize>,
    pub(super) leaf_paths: Vec<NodePath>,
    pub(super) leaves: Leaves,
    /// Keys from the root's children down to the node being built.
    pub(super) keys: Vec<&'a str>,
    pub(super) hasher: std::hash::DefaultHasher,
}

impl<'a> Builder<'a> {
    pub(super) fn node(&mut self, key: &'a str, parent: usize, value: &'a Value) {
        let index = self.nodes.len();
        self.nodes.push(Node {
            key: key.into(),
            parent,
            end: index + 1,
            leaf: OBJECT,
        });
        key.hash(&mut self.hasher);
        match value {
            Value::Object(map) => {
                map.len().hash(&mut self.hasher);
                if parent != NO_PARENT {
                    self.keys.push(key);
                }
                for (key, child) in map {
                    self.node(key, index, child);
                }
                if parent != NO_PARENT {
                    self.keys.pop();
                }
            }
            leaf => {
                usize::MAX.hash(&mut self.hasher);
                self.nodes[index].leaf = self.leaves.words.len();
                self.leaf_nodes.push(index);
                self.leaf_paths.push(if parent == NO_PARENT {
                    NodePath::root()
                } else {
                    NodePath::from_tree_keys(&self.keys, key)
                });
                self.leaves.push(leaf);
            }
        }
        let end = self.nodes.len();
        self.nodes[index].end = end;
    }
}

/// Whether `value`, under `key` in node `parent`, matches the shape from node `*next`
/// on (the same keys, nesting and order, node for node), encoding its leaves into
/// `leaves` on the way. `*next` ends one past the value's last node.
pub(super) fn matches_shape(
    shape: &Shape,
    key: &str,
    parent: usize,
    value: &Value,
    next: &mut usize,
    leaves: &mut Leaves,
) -> bool {
    let index = *next;
    let Some(node) = shape.nodes.get(index) else {
        return false;
    };
    if node.parent != parent || *node.key != *key {
        return false;
    }
    *next += 1;
    match value {
        Value::Object(map) => {
            node.leaf == OBJECT
                && map
                    .iter()
                    .all(|(key, child)| matches_shape(shape, key, index, child, next, leaves))
                && *next == node.end
        }
        leaf => {
            if node.leaf != leaves.words.len() {
                return false;
            }
            leaves.push(leaf);
            true
        }
    }
}
