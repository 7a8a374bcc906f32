//! [`SettingsTree`]: a settings tree laid out for comparison — its shape (the keys and
//! how they nest) kept apart from its leaf values and shared by every tree of that
//! shape, so that two trees of one schema diff by comparing two flat arrays.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher, RandomState};
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use super::diff::{Patch, diff, values_equal};
use super::path::NodePath;
use super::{SettingsError, redacted};

mod apply;
mod text;

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
/// diffing their values (see the README's performance table). For a single diff of two
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
}

/// Keys and nesting of a tree, nodes in document order (pre-order); node 0 is the root.
struct Shape {
    nodes: Vec<Node>,
    /// The node of each leaf, in document order.
    leaf_nodes: Vec<usize>,
    /// The path of each leaf, as [`diff`] names it.
    leaf_paths: Vec<NodePath>,
    /// Hash of the nodes' keys and structure (the interning key).
    hash: u64,
}

/// One node of a shape.
struct Node {
    /// The key under which the node sits in its parent (empty for the root).
    key: Box<str>,
    /// The parent's index (`usize::MAX` for the root).
    parent: usize,
    /// One past the last node of this node's sub-tree: its children are the nodes
    /// from `index + 1`, each followed by its own sub-tree.
    end: usize,
    /// The leaf's index in the leaves, [`OBJECT`] for an object.
    leaf: usize,
}

const OBJECT: usize = usize::MAX;
const NO_PARENT: usize = usize::MAX;

impl Node {
    fn same_as(&self, other: &Node) -> bool {
        self.parent == other.parent
            && self.end == other.end
            && self.leaf == other.leaf
            && self.key == other.key
    }
}

/// The leaves of a tree, in document order: each leaf encoded in four words, so that
/// two equal leaves of the common kinds (null, booleans, numbers, strings of up to
/// [`SHORT`] bytes, arrays of up to three numbers) have equal words, and unequal
/// words mean unequal leaves — except for a negative zero against a positive one,
/// which `serde_json` calls equal, and which [`Leaves::equal`] checks exactly. The
/// other leaves (longer strings and arrays) are kept as values beside, their words
/// all alike ([`HEAP`]), and compared as values.
struct Leaves {
    words: Vec<Words>,
    /// The values of the [`HEAP`] leaves, by leaf index (ascending); shared between
    /// a tree and the trees made from it ([`SettingsTree::apply`]).
    heap: Vec<(usize, Arc<Value>)>,
}

type Words = [u64; 4];

// The kind of a leaf, in the low byte of its first word.
const NULL: u64 = 1;
/// The value in bit 8.
const BOOL: u64 = 2;
/// `serde_json`'s `PosInt` in the second word.
const POS_INT: u64 = 3;
/// `serde_json`'s `NegInt` in the second word.
const NEG_INT: u64 = 4;
/// `serde_json`'s `Float` (bits) in the second word: `1.0` differs from `1`.
const FLOAT: u64 = 5;
/// A string: length in bits 8..16, the bytes in words 1..4 (zero after the end).
const STRING: u64 = 6;
/// An array of up to three numbers: length in bits 8..16, each item's kind
/// (`POS_INT`, `NEG_INT` or `FLOAT`) in 4 bits from bit 16, items in words 1..4.
const NUMBERS: u64 = 7;
/// Any other leaf: its value is in [`Leaves::heap`].
const HEAP: u64 = 8;

/// Strings up to this length are held in place (setting strings are mostly short
/// enumeration values: `off`, `10ms`, `internal`).
const SHORT: usize = 24;

/// The kind and the payload word of a number, `None` for a number of none of
/// `serde_json`'s three kinds (an arbitrary-precision build).
fn number_word(number: &Number) -> Option<(u64, u64)> {
    if let Some(value) = number.as_u64() {
        Some((POS_INT, value))
    } else if let Some(value) = number.as_i64() {
        Some((NEG_INT, value as u64))
    } else if number.is_f64() {
        number.as_f64().map(|value| (FLOAT, value.to_bits()))
    } else {
        None
    }
}

fn number_value(kind: u64, word: u64) -> Value {
    match kind {
        POS_INT => Value::Number(Number::from(word)),
        NEG_INT => Value::Number(Number::from(word as i64)),
        _ => Number::from_f64(f64::from_bits(word)).map_or(Value::Null, Value::Number),
    }
}

/// The words of a string leaf held in place, `None` for a string longer than
/// [`SHORT`] (it goes to the heap).
fn short_string(text: &str) -> Option<Words> {
    if text.len() > SHORT {
        return None;
    }
    let mut words = [0u64; 4];
    words[0] = STRING | (text.len() as u64) << 8;
    let mut bytes = [0u8; SHORT];
    bytes[..text.len()].copy_from_slice(text.as_bytes());
    for (word, chunk) in words[1..].iter_mut().zip(bytes.as_chunks::<8>().0) {
        *word = u64::from_le_bytes(*chunk);
    }
    Some(words)
}

/// The words of a leaf, `None` when it goes to the heap.
fn encode(value: &Value) -> Option<Words> {
    let mut words = [0u64; 4];
    match value {
        Value::Null => words[0] = NULL,
        Value::Bool(value) => words[0] = BOOL | u64::from(*value) << 8,
        Value::Number(number) => {
            let (kind, word) = number_word(number)?;
            words[0] = kind;
            words[1] = word;
        }
        Value::String(text) => return short_string(text),
        Value::Array(items) if items.len() <= 3 => {
            words[0] = NUMBERS | (items.len() as u64) << 8;
            for (index, item) in items.iter().enumerate() {
                let (kind, word) = number_word(item.as_number()?)?;
                words[0] |= kind << (16 + 4 * index);
                words[index + 1] = word;
            }
        }
        _ => return None,
    }
    Some(words)
}

impl Leaves {
    fn push(&mut self, value: &Value) {
        match encode(value) {
            Some(words) => self.words.push(words),
            None => {
                self.heap.push((self.words.len(), Arc::new(value.clone())));
                self.words.push([HEAP, 0, 0, 0]);
            }
        }
    }

    fn heap_value(&self, leaf: usize) -> Option<&Value> {
        self.heap
            .binary_search_by_key(&leaf, |&(index, _)| index)
            .ok()
            .and_then(|found| self.heap.get(found))
            .map(|(_, value)| &**value)
    }

    /// Leaf `leaf` as a JSON value.
    fn value(&self, leaf: usize) -> Value {
        let Some(words) = self.words.get(leaf) else {
            return Value::Null;
        };
        let len = ((words[0] >> 8) & 0xff) as usize;
        match words[0] & 0xff {
            NULL => Value::Null,
            BOOL => Value::Bool(words[0] >> 8 & 1 == 1),
            kind @ (POS_INT | NEG_INT | FLOAT) => number_value(kind, words[1]),
            STRING => Value::String(Text::of(words).as_str().to_owned()),
            NUMBERS => Value::Array(
                (0..len.min(3))
                    .map(|index| number_value(words[0] >> (16 + 4 * index) & 0xf, words[index + 1]))
                    .collect(),
            ),
            _ => self.heap_value(leaf).cloned().unwrap_or(Value::Null),
        }
    }

    /// Whether leaf `leaf` of `self` equals leaf `other_leaf` of `other`, as
    /// `serde_json` compares values. Called when their words differ or are [`HEAP`].
    #[cold]
    #[inline(never)]
    fn equal(&self, leaf: usize, other: &Leaves, other_leaf: usize) -> bool {
        let (Some(a), Some(b)) = (self.words.get(leaf), other.words.get(other_leaf)) else {
            return false;
        };
        if a[0] != b[0] {
            return false; // Another kind, length or item kinds (or a heap leaf against a word leaf).
        }
        let floats_equal = |a: u64, b: u64| f64::from_bits(a) == f64::from_bits(b);
        match a[0] & 0xff {
            FLOAT => floats_equal(a[1], b[1]),
            NUMBERS => (0..3).all(|index| {
                if a[0] >> (16 + 4 * index) & 0xf == FLOAT {
                    floats_equal(a[index + 1], b[index + 1])
                } else {
                    a[index + 1] == b[index + 1]
                }
            }),
            HEAP => match (self.heap_value(leaf), other.heap_value(other_leaf)) {
                (Some(a), Some(b)) => values_equal(a, b),
                _ => false,
            },
            _ => a == b,
        }
    }

    fn serialize<S: Serializer>(&self, leaf: usize, serializer: S) -> Result<S::Ok, S::Error> {
        match self.words.get(leaf) {
            Some(words) if words[0] & 0xff == STRING => {
                serializer.serialize_str(Text::of(words).as_str())
            }
            Some(words) if words[0] & 0xff == HEAP => match self.heap_value(leaf) {
                Some(value) => value.serialize(serializer),
                None => serializer.serialize_unit(),
            },
            _ => self.value(leaf).serialize(serializer),
        }
    }
}

/// The text of a [`STRING`] leaf, copied out of its words.
struct Text {
    bytes: [u8; SHORT],
    len: usize,
}

impl Text {
    fn of(words: &Words) -> Self {
        let mut bytes = [0u8; SHORT];
        for (chunk, word) in bytes.as_chunks_mut::<8>().0.iter_mut().zip(&words[1..]) {
            *chunk = word.to_le_bytes();
        }
        Self {
            bytes,
            len: (((words[0] >> 8) & 0xff) as usize).min(SHORT),
        }
    }

    fn as_str(&self) -> &str {
        // A `STRING` leaf is only made from a whole `str` of at most `SHORT` bytes
        // (longer ones go to the heap), copied byte for byte: its bytes are UTF-8.
        #[allow(clippy::expect_used)]
        std::str::from_utf8(&self.bytes[..self.len])
            .expect("a short string leaf holds the bytes of a whole `str`")
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
static SHAPES: LazyLock<Mutex<Interner>> = LazyLock::new(Mutex::default);

/// The keys of the shape hash: random per process, so that nobody can choose keys
/// whose shapes collide (a collision costs time, never a wrong result).
static HASH_KEYS: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// How many recently built shapes a new tree is checked against before its shape is
/// built.
const RECENT: usize = 4;

#[derive(Default)]
struct Interner {
    shapes: HashMap<u64, Vec<Weak<Shape>>>,
    /// Entries in `shapes` after the last sweep of dead entries: the next sweep comes
    /// when there are twice as many (amortized, and the map stays within twice the
    /// live shapes, plus a few).
    after_sweep: usize,
    /// The shapes of the last trees built, the newest first: a new tree is tried
    /// against them before its own shape is built (a fleet's trees, successive reads
    /// of a unit, all have one shape).
    recent: VecDeque<Weak<Shape>>,
}

impl Interner {
    /// The shared shape equal to `shape` (compared node by node), or `shape` itself,
    /// now shared.
    fn intern(&mut self, shape: Shape) -> Arc<Shape> {
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
    fn used(&mut self, shape: &Arc<Shape>) {
        let weak = Arc::downgrade(shape);
        self.recent
            .retain(|other| other.strong_count() > 0 && !other.ptr_eq(&weak));
        self.recent.push_front(weak);
        self.recent.truncate(RECENT);
    }

    /// The live recent shapes, the newest first.
    fn recent(&self) -> Vec<Arc<Shape>> {
        self.recent.iter().filter_map(Weak::upgrade).collect()
    }
}

/// Builds the shape and the leaves of a tree, depth first.
struct Builder<'a> {
    nodes: Vec<Node>,
    leaf_nodes: Vec<usize>,
    leaf_paths: Vec<NodePath>,
    leaves: Leaves,
    /// Keys from the root's children down to the node being built.
    keys: Vec<&'a str>,
    hasher: std::hash::DefaultHasher,
}

impl<'a> Builder<'a> {
    fn node(&mut self, key: &'a str, parent: usize, value: &'a Value) {
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
    /// the two trees' values ([`TreePatch::to_patch`] gives that [`Patch`]).
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

/// Whether `value`, under `key` in node `parent`, matches the shape from node `*next`
/// on (the same keys, nesting and order, node for node), encoding its leaves into
/// `leaves` on the way. `*next` ends one past the value's last node.
fn matches_shape(
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

/// What turns one [`SettingsTree`] into another ([`SettingsTree::diff`]): the changed
/// nodes, and the partial tree to write, read from the new tree's leaves when asked
/// for. It serializes as that partial tree (the body of `POST /settings`, without
/// building it as a JSON value); [`to_patch`](Self::to_patch) gives the [`Patch`] that
/// [`diff`](super::diff) gives for the two trees' values.
///
/// `Debug` shows the changed and removed paths, not the values.
#[derive(Clone)]
pub struct TreePatch {
    inner: PatchInner,
}

#[derive(Clone)]
enum PatchInner {
    /// Trees of one shape: the new tree's leaves and which of them changed (ascending).
    Leaves {
        shape: Arc<Shape>,
        leaves: Arc<Leaves>,
        changed: Vec<usize>,
    },
    /// Trees of different shapes: the patch of their values.
    Values(Patch),
}

impl TreePatch {
    /// Whether the two trees were equal: nothing changed and nothing was removed.
    pub fn is_empty(&self) -> bool {
        match &self.inner {
            PatchInner::Leaves { changed, .. } => changed.is_empty(),
            PatchInner::Values(patch) => patch.is_empty(),
        }
    }

    /// The changed nodes, in document order (see [`Patch::changed`]).
    pub fn changed(&self) -> ChangedPaths<'_> {
        ChangedPaths {
            inner: match &self.inner {
                PatchInner::Leaves { shape, changed, .. } => ChangedInner::Leaves {
                    shape,
                    leaves: changed.iter(),
                },
                PatchInner::Values(patch) => ChangedInner::Paths(patch.changed.iter()),
            },
        }
    }

    /// The nodes of the old tree that the new one lacks (see [`Patch::removed`]);
    /// always empty for trees of one shape.
    pub fn removed(&self) -> &[NodePath] {
        match &self.inner {
            PatchInner::Leaves { .. } => &[],
            PatchInner::Values(patch) => &patch.removed,
        }
    }

    /// Whether the old tree had nodes that the new one lacks.
    pub fn has_removals(&self) -> bool {
        !self.removed().is_empty()
    }

    /// The patch as [`diff`](super::diff) gives it for the two trees' values: the
    /// partial tree as a JSON value, the changed and the removed paths.
    pub fn to_patch(&self) -> Patch {
        match &self.inner {
            // The partial tree as its serialization builds it (one walk for both).
            PatchInner::Leaves { .. } => {
                // Serializing fails only on a shape inconsistent with its leaves, and
                // `diff` makes this patch from the new tree's own shape and leaves (into
                // a `Value`, nothing else can fail): an error here is a bug of `diff`.
                #[allow(clippy::expect_used)]
                let tree = serde_json::to_value(self)
                    .expect("a patch of one shape serializes from that shape's own leaves");
                Patch {
                    tree,
                    changed: self.changed().cloned().collect(),
                    removed: Vec::new(),
                }
            }
            PatchInner::Values(patch) => patch.clone(),
        }
    }

    /// The body of the write (`POST /settings`) that turns the old tree into the new
    /// one, as [`Patch::into_write`].
    ///
    /// # Errors
    ///
    /// [`SettingsError::RemovalNotExpressible`] when the patch has removals.
    pub fn into_write(self) -> Result<Value, SettingsError> {
        Patch::from(self).into_write()
    }
}

impl From<TreePatch> for Patch {
    fn from(patch: TreePatch) -> Self {
        match patch.inner {
            PatchInner::Values(patch) => patch,
            PatchInner::Leaves { .. } => patch.to_patch(),
        }
    }
}

impl fmt::Debug for TreePatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TreePatch")
            .field("changed", &self.changed().collect::<Vec<_>>())
            .field("removed", &self.removed())
            .finish()
    }
}

/// Serializes as the partial tree (see [`Patch::tree`]), read from the new tree's
/// leaves.
impl Serialize for TreePatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.inner {
            PatchInner::Leaves {
                shape,
                leaves,
                changed,
            } => PartialNode {
                shape,
                leaves,
                node: 0,
                changed,
            }
            .serialize(serializer),
            PatchInner::Values(patch) => patch.tree.serialize(serializer),
        }
    }
}

/// The changed paths of a [`TreePatch`], in document order.
pub struct ChangedPaths<'a> {
    inner: ChangedInner<'a>,
}

enum ChangedInner<'a> {
    Leaves {
        shape: &'a Shape,
        leaves: std::slice::Iter<'a, usize>,
    },
    Paths(std::slice::Iter<'a, NodePath>),
}

impl<'a> Iterator for ChangedPaths<'a> {
    type Item = &'a NodePath;

    fn next(&mut self) -> Option<&'a NodePath> {
        match &mut self.inner {
            ChangedInner::Leaves { shape, leaves } => {
                let &leaf = leaves.next()?;
                shape.leaf_paths.get(leaf)
            }
            ChangedInner::Paths(paths) => paths.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            ChangedInner::Leaves { leaves, .. } => leaves.size_hint(),
            ChangedInner::Paths(paths) => paths.size_hint(),
        }
    }
}

impl ExactSizeIterator for ChangedPaths<'_> {}

impl fmt::Debug for ChangedPaths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangedPaths")
            .field("remaining", &self.len())
            .finish()
    }
}

/// A node of a partial tree, with the changed leaves of its sub-tree.
struct PartialNode<'a> {
    shape: &'a Shape,
    leaves: &'a Leaves,
    node: usize,
    /// The changed leaves under `node` (ascending).
    changed: &'a [usize],
}

impl Serialize for PartialNode<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let nodes = &self.shape.nodes;
        let inconsistent = || S::Error::custom("inconsistent settings tree");
        let node = nodes.get(self.node).ok_or_else(inconsistent)?;
        if node.leaf != OBJECT {
            return self.leaves.serialize(node.leaf, serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        let mut rest = self.changed;
        while let Some(&first) = rest.first() {
            // The child of this node holding the first changed leaf, and the changed
            // leaves under that child (they follow each other in document order).
            let mut child = *self.shape.leaf_nodes.get(first).ok_or_else(inconsistent)?;
            while nodes.get(child).ok_or_else(inconsistent)?.parent != self.node {
                child = nodes[child].parent;
            }
            let end = nodes[child].end;
            let count = rest
                .iter()
                .take_while(|&&leaf| self.shape.leaf_nodes.get(leaf).is_some_and(|&n| n < end))
                .count()
                .max(1);
            let (under, after) = rest.split_at(count);
            map.serialize_entry(
                &*nodes[child].key,
                &PartialNode {
                    shape: self.shape,
                    leaves: self.leaves,
                    node: child,
                    changed: under,
                },
            )?;
            rest = after;
        }
        map.end()
    }
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
mod tests {
    use serde_json::json;

    use super::*;
    use svc_test_support::settings as testing;

    fn tree(value: &Value) -> SettingsTree {
        SettingsTree::from_value(value)
    }

    /// The tree patch agrees with the diff of the values, in every form.
    fn check_against_values(a: &Value, b: &Value) -> TreePatch {
        let patch = tree(a).diff(&tree(b));
        let expected = diff(a, b);
        assert_eq!(patch.to_patch(), expected);
        assert_eq!(
            serde_json::to_string(&patch).unwrap(),
            serde_json::to_string(&expected.tree).unwrap(),
            "same key order"
        );
        assert_eq!(
            patch.changed().cloned().collect::<Vec<_>>(),
            expected.changed
        );
        assert_eq!(patch.removed(), expected.removed);
        assert_eq!(patch.is_empty(), expected.is_empty());
        patch
    }

    #[test]
    fn round_trips_and_shares_shapes() {
        let unit = testing::unit_default_tree();
        let settings = tree(&unit);
        assert_eq!(settings.to_value(), unit);
        assert_eq!(
            serde_json::to_string(&settings).unwrap(),
            serde_json::to_string(&unit).unwrap()
        );
        let changed = testing::change_leaves(&unit, 0.01, 7);
        let other = tree(&changed);
        assert!(settings.same_shape(&other), "same keys: one shape");
        assert_ne!(settings, other);
        assert_eq!(settings, tree(&unit));
        let patch = check_against_values(&unit, &changed);
        assert_eq!(patch.changed().len(), 11);
        // Another key order is another shape, but an equal tree.
        let (x, y) = (
            tree(&json!({"a": 2, "b": 1})),
            tree(&json!({"b": 1, "a": 2})),
        );
        assert!(!x.same_shape(&y));
        assert_eq!(x, y);
        assert!(x.diff(&y).is_empty());
    }

    #[test]
    fn leaves_compare_as_serde_json_does() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(1),
            json!(1.0),
            json!(-0.0),
            json!(0.0),
            json!(-1),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(""),
            json!("off"),
            json!("exactly-twenty-three-by"),
            json!("exactly-twenty-four-byte"),
            json!("twenty-five-bytes-long..."),
            json!("a string far longer than twenty-four bytes"),
            json!("é"),
            json!("ééééééééééééé"),
            json!([]),
            json!([1, 2]),
            json!([1, 2.0]),
            json!([0.0, -0.0, 1.5]),
            json!([-0.0, 0.0, 1.5]),
            json!([1, 2, 3, 4]),
            json!(["a", "b"]),
            json!([{"a": 1, "b": 2}]),
            json!([{"b": 2, "a": 1}]),
        ];
        for a in &values {
            for b in &values {
                let (x, y) = (tree(&json!({"k": a})), tree(&json!({"k": b})));
                assert!(x.same_shape(&y));
                assert_eq!(x == y, a == b, "{a} vs {b}");
                check_against_values(&json!({"k": a}), &json!({"k": b}));
            }
            let single = tree(a);
            assert_eq!(&single.to_value(), a);
            assert_eq!(
                serde_json::to_string(&single).unwrap(),
                serde_json::to_string(a).unwrap()
            );
        }
    }

    #[test]
    fn partial_trees_nest_like_the_values_diff() {
        let old = json!({
            "a": {"x": {"p": 1, "q": 2}, "y": 3, "z": {"r": {"s": 4}}},
            "b": 5,
            "c": {},
            "d": {"t": [1, 2, 3, 4, 5]}
        });
        let mut new = old.clone();
        new["a"]["x"]["q"] = json!(20);
        new["a"]["z"]["r"]["s"] = json!("four");
        new["b"] = json!(null);
        new["d"]["t"] = json!([1]);
        let patch = check_against_values(&old, &new);
        assert_eq!(
            serde_json::to_value(&patch).unwrap(),
            json!({"a": {"x": {"q": 20}, "z": {"r": {"s": "four"}}}, "b": null, "d": {"t": [1]}})
        );
        assert_eq!(
            patch.clone().into_write().unwrap(),
            serde_json::to_value(&patch).unwrap()
        );
        // Different shapes diff through the values, removals included.
        let patch = check_against_values(&old, &json!({"a": 1}));
        assert!(patch.has_removals());
        assert!(patch.into_write().is_err());
    }

    #[test]
    fn trees_and_patches_cross_threads() {
        fn send_sync<T: Send + Sync + Clone + 'static>() {}
        send_sync::<SettingsTree>();
        send_sync::<TreePatch>();
    }

    #[test]
    fn get_finds_nodes() {
        let settings = tree(&json!({"a": {"b": [1], "c": {"d": "x"}}, "e": 2}));
        let path = |text: &str| NodePath::parse(text).unwrap();
        assert_eq!(settings.get(&path("a/c/d")), Some(json!("x")));
        assert_eq!(settings.get(&path("a/c")), Some(json!({"d": "x"})));
        assert_eq!(settings.get(&path("e")), Some(json!(2)));
        assert_eq!(settings.get(&NodePath::root()), Some(settings.to_value()));
        assert_eq!(settings.get(&path("a/b/0")), None, "arrays are leaves");
        assert_eq!(settings.get(&path("a/x")), None);
        assert_eq!(settings.get(&path("e/f")), None);
        assert_eq!(settings.leaf_count(), 3);
    }

    #[test]
    fn leaf_roots_diff_like_values() {
        for (a, b) in [
            (json!(3), json!(3)),
            (json!(3), json!(4)),
            (json!("x"), json!([1])),
        ] {
            check_against_values(&a, &b);
        }
    }

    #[test]
    fn secrets_stay_out_of_debug() {
        let old = tree(&json!({"network": {"ntrip": {"password": "hunter1"}}}));
        let new = tree(&json!({"network": {"ntrip": {"password": "hunter2"}}}));
        let shown = format!("{new:?} {:?}", old.diff(&new));
        assert!(!shown.contains("hunter"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
        assert!(shown.contains("network/ntrip/password"), "{shown}");
    }

    #[test]
    fn dead_shapes_are_swept_away() {
        let unique = json!({"dead_shapes_are_swept_away": {"k": 1}});
        let hash = tree(&unique).shape.hash;
        let alive = |hash| {
            SHAPES.lock().unwrap().shapes.get(&hash).map_or(0, |list| {
                list.iter().filter(|w| w.strong_count() > 0).count()
            })
        };
        // Another test's tree being built holds the recent shapes for a moment.
        let settles_at = |hash, count| {
            (0..200).any(|_| {
                let now = alive(hash);
                if now != count {
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
                now == count
            })
        };
        // The first tree is gone: its shape too.
        assert!(settles_at(hash, 0));
        let kept = tree(&unique);
        let again = tree(&unique);
        assert!(kept.same_shape(&again));
        assert!(settles_at(hash, 1));
        // Many shapes, each dropped at once: their entries do not pile up.
        for index in 0..20_000 {
            drop(tree(&json!({ format!("dead_shape_{index}"): index })));
        }
        let entries = SHAPES.lock().unwrap().shapes.len();
        assert!(entries < 1_000, "{entries} entries for a few live shapes");
        assert!(settles_at(hash, 1), "a live shape stays");
        assert!(kept.same_shape(&tree(&unique)));
        drop((kept, again));
        assert!(settles_at(hash, 0));
    }

    #[test]
    fn recent_shapes_are_reused_without_building() {
        let (a, b) = (
            json!({"recent_a": {"x": 1, "y": "off"}}),
            json!({"recent_b": [1, 2, 3]}),
        );
        let (first_a, first_b) = (tree(&a), tree(&b));
        // Alternating shapes: both stay among the recent ones, and each new tree takes
        // the shape of its live twin.
        for _ in 0..3 {
            assert!(tree(&a).same_shape(&first_a));
            assert!(tree(&b).same_shape(&first_b));
        }
        assert!(!first_a.same_shape(&first_b));
        let recent = SHAPES.lock().unwrap().recent.len();
        assert!(recent <= RECENT);
    }
}
