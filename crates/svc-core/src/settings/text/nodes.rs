//! The general path of [`diff_json`](super::diff_json): each document read once into
//! a flat list of its nodes in document order (each object followed by its sub-tree,
//! with the index where the sub-tree ends): keys and strings borrowed from the text
//! (copied only when they hold escapes), no map per object. The two lists are then
//! compared as [`diff`](crate::settings::diff) compares two values (objects key by key,
//! in step while the key orders agree, looked up once they do not; everything else
//! whole, with `serde_json`'s equality: `1` is not `1.0`), and only the changed nodes
//! become `Value`s, for the patch.
//!
//! A document with a key twice in one object (which `serde_json` reads as the last
//! value at the place of the first) is not handled here: [`diff`] answers `None` and
//! the caller compares through `Value`s.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::{NotJson, Which};
use crate::settings::{NodePath, Patch};

/// The patch from the JSON text `old` to the JSON text `new`; `None` when a document
/// has a key twice in one object.
pub(super) fn diff(old: &str, new: &str) -> Result<Option<Patch>, NotJson> {
    let old_doc = Doc::parse(old).map_err(|error| NotJson::new(Which::Old, &error))?;
    let new_doc = Doc::parse(new).map_err(|error| NotJson::new(Which::New, &error))?;
    if old_doc.duplicates || new_doc.duplicates {
        return Ok(None);
    }
    let mut differ = Differ {
        old: &old_doc.nodes,
        new: &new_doc.nodes,
        stack: Vec::new(),
        changed: Vec::new(),
        removed: Vec::new(),
    };
    let tree = match (old_doc.nodes.first(), new_doc.nodes.first()) {
        (Some(old_root), Some(new_root))
            if matches!(old_root.value, Leaf::Object) && matches!(new_root.value, Leaf::Object) =>
        {
            Value::Object(differ.objects(0, 0).unwrap_or_default())
        }
        _ => {
            let (old, new) = (old_doc.value(0), new_doc.value(0));
            if old != new {
                differ.changed.push(NodePath::root());
            }
            new
        }
    };
    Ok(Some(Patch {
        tree,
        changed: differ.changed,
        removed: differ.removed,
    }))
}

/// A document as a flat list of nodes in document order.
struct Doc<'a> {
    nodes: Vec<Node<'a>>,
    /// Whether an object has a key twice.
    duplicates: bool,
    /// The keys of the object being checked for duplicates (kept for the next one).
    keys: Vec<&'a str>,
}

/// A node: its key in its parent (empty for the root), where its sub-tree ends (one past
/// its last node; the next node for a leaf), and its value.
struct Node<'a> {
    key: Cow<'a, str>,
    end: usize,
    value: Leaf<'a>,
}

/// A node's value; an object's children follow it.
enum Leaf<'a> {
    Object,
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
    /// An array is one leaf (compared and written whole).
    Array(Vec<Value>),
}

impl<'a> Doc<'a> {
    fn parse(text: &'a str) -> Result<Self, serde_json::Error> {
        let mut doc = Doc {
            // About one node per 25 bytes in settings trees: few reallocations.
            nodes: Vec::with_capacity(text.len() / 24 + 1),
            duplicates: false,
            keys: Vec::new(),
        };
        let mut deserializer = serde_json::Deserializer::from_str(text);
        NodeSeed {
            doc: &mut doc,
            key: Cow::Borrowed(""),
        }
        .deserialize(&mut deserializer)?;
        deserializer.end()?;
        Ok(doc)
    }

    /// Node `index` (and its sub-tree) as a `Value`.
    fn value(&self, index: usize) -> Value {
        let Some(node) = self.nodes.get(index) else {
            return Value::Null;
        };
        leaf_value(&self.nodes, index, node)
    }

    /// Whether the object at `index` has a key twice (its keys sorted: no hashing of
    /// keys that come from the text).
    fn has_duplicate_keys(&mut self, index: usize) -> bool {
        let (nodes, keys) = (&self.nodes, &mut self.keys);
        keys.clear();
        let end = nodes[index].end;
        let mut child = index + 1;
        while child < end {
            // A key borrowed from the text lives as long as the text; an unescaped copy
            // is compared in place below instead.
            match &nodes[child].key {
                Cow::Borrowed(key) => keys.push(key),
                Cow::Owned(_) => return has_duplicates_slow(nodes, index),
            }
            child = nodes[child].end;
        }
        if keys.len() <= 8 {
            return keys
                .iter()
                .enumerate()
                .any(|(at, key)| keys[..at].contains(key));
        }
        keys.sort_unstable();
        keys.windows(2).any(|pair| pair[0] == pair[1])
    }
}

/// [`Doc::has_duplicate_keys`] for an object with an escaped key.
#[cold]
fn has_duplicates_slow(nodes: &[Node<'_>], index: usize) -> bool {
    let mut keys: Vec<&str> = children(nodes, index).map(|(key, _)| key).collect();
    keys.sort_unstable();
    keys.windows(2).any(|pair| pair[0] == pair[1])
}

fn leaf_value(nodes: &[Node<'_>], index: usize, node: &Node<'_>) -> Value {
    match &node.value {
        Leaf::Object => {
            let mut map = Map::new();
            let mut child = index + 1;
            while let Some(next) = nodes.get(child).filter(|_| child < node.end) {
                map.insert(next.key.to_string(), leaf_value(nodes, child, next));
                child = next.end;
            }
            Value::Object(map)
        }
        Leaf::Null => Value::Null,
        Leaf::Bool(flag) => Value::Bool(*flag),
        Leaf::Number(number) => Value::Number(number.clone()),
        Leaf::String(text) => Value::String(text.to_string()),
        Leaf::Array(items) => Value::Array(items.clone()),
    }
}

/// Reads one value into the document, under `key`.
struct NodeSeed<'d, 'a> {
    doc: &'d mut Doc<'a>,
    key: Cow<'a, str>,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> NodeSeed<'_, 'de> {
    fn leaf(self, value: Leaf<'de>) {
        let end = self.doc.nodes.len() + 1;
        self.doc.nodes.push(Node {
            key: self.key,
            end,
            value,
        });
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf(Leaf::Null);
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<(), E> {
        self.leaf(Leaf::Bool(flag));
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<(), E> {
        self.leaf(Leaf::Number(number.into()));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<(), E> {
        self.leaf(Leaf::Number(number.into()));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<(), E> {
        // JSON text has no NaN or infinity: always a number.
        let number = Number::from_f64(number).ok_or_else(|| E::custom("a number is not finite"))?;
        self.leaf(Leaf::Number(number));
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<(), E> {
        self.leaf(Leaf::String(Cow::Borrowed(text)));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        self.leaf(Leaf::String(Cow::Owned(text.to_owned())));
        Ok(())
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<(), E> {
        self.leaf(Leaf::String(Cow::Owned(text)));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        self.leaf(Leaf::Array(items));
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let doc = self.doc;
        let index = doc.nodes.len();
        doc.nodes.push(Node {
            key: self.key,
            end: index + 1,
            value: Leaf::Object,
        });
        while let Some(Key(key)) = map.next_key()? {
            map.next_value_seed(NodeSeed {
                doc: &mut *doc,
                key,
            })?;
        }
        doc.nodes[index].end = doc.nodes.len();
        if !doc.duplicates && doc.has_duplicate_keys(index) {
            doc.duplicates = true;
        }
        Ok(())
    }
}

/// A key, borrowed from the text unless it has escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }

            fn visit_string<E: de::Error>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The children of the object at `index`: (key, node index), in order.
fn children<'n, 'a>(
    nodes: &'n [Node<'a>],
    index: usize,
) -> impl Iterator<Item = (&'n str, usize)> + 'n {
    let end = nodes.get(index).map_or(index, |node| node.end);
    let mut child = index + 1;
    std::iter::from_fn(move || {
        let node = nodes.get(child).filter(|_| child < end)?;
        let at = child;
        child = node.end;
        Some((&*node.key, at))
    })
}

/// Where each key of an object is, for the objects whose keys are looked up (when the
/// key orders of the two trees differ).
struct Lookup<'n> {
    index: usize,
    small: bool,
    keys: HashMap<&'n str, usize>,
}

impl<'n> Lookup<'n> {
    fn new(nodes: &'n [Node<'_>], index: usize) -> Self {
        let small = children(nodes, index).nth(12).is_none();
        let keys = if small {
            HashMap::new()
        } else {
            children(nodes, index).collect()
        };
        Self { index, small, keys }
    }

    fn get(&self, nodes: &[Node<'_>], key: &str) -> Option<usize> {
        if self.small {
            children(nodes, self.index).find_map(|(name, at)| (name == key).then_some(at))
        } else {
            self.keys.get(key).copied()
        }
    }
}

struct Differ<'n, 'a> {
    old: &'n [Node<'a>],
    new: &'n [Node<'a>],
    /// Keys from the root to the objects being compared.
    stack: Vec<&'n str>,
    changed: Vec<NodePath>,
    removed: Vec<NodePath>,
}

impl<'n> Differ<'n, '_> {
    fn path(&self, key: &str) -> NodePath {
        NodePath::from_tree_keys(&self.stack, key)
    }

    /// The partial object turning old object `old` into new object `new`, `None` when
    /// no node changed (the walk of `svc_core::settings::diff`: keys in step while the
    /// orders agree, looked up once they do not).
    fn objects(&mut self, old: usize, new: usize) -> Option<Map<String, Value>> {
        let mut out: Option<Map<String, Value>> = None;
        let mut old_children = children(self.old, old);
        let mut lookup: Option<Lookup<'n>> = None;
        let mut found = 0usize;
        for (key, new_child) in children(self.new, new) {
            let old_child = match &lookup {
                None => match old_children.next() {
                    Some((old_key, old_child)) if old_key == key => Some(old_child),
                    _ => {
                        let made = Lookup::new(self.old, old);
                        let at = made.get(self.old, key);
                        lookup = Some(made);
                        at
                    }
                },
                Some(lookup) => lookup.get(self.old, key),
            };
            let Some(old_child) = old_child else {
                self.change(key, new_child, &mut out);
                continue;
            };
            found += 1;
            let (old_node, new_node) = (&self.old[old_child], &self.new[new_child]);
            match (&old_node.value, &new_node.value) {
                (Leaf::Object, Leaf::Object) => {
                    self.stack.push(key);
                    let child = self.objects(old_child, new_child);
                    self.stack.pop();
                    if let Some(child) = child {
                        out.get_or_insert_with(Map::new)
                            .insert(key.to_owned(), Value::Object(child));
                    }
                }
                (old_leaf, new_leaf) => {
                    if !leaves_equal(old_leaf, new_leaf) {
                        self.change(key, new_child, &mut out);
                    }
                }
            }
        }
        let old_count = children(self.old, old).count();
        if found < old_count {
            let new_lookup = Lookup::new(self.new, new);
            for (key, _) in children(self.old, old) {
                if new_lookup.get(self.new, key).is_none() {
                    self.removed.push(self.path(key));
                }
            }
        }
        out
    }

    /// Records a changed (or added) node and writes it into the partial object.
    fn change(&mut self, key: &str, new: usize, out: &mut Option<Map<String, Value>>) {
        self.changed.push(self.path(key));
        let value = self
            .new
            .get(new)
            .map_or(Value::Null, |node| leaf_value(self.new, new, node));
        out.get_or_insert_with(Map::new)
            .insert(key.to_owned(), value);
    }
}

/// Equality of two nodes that are not both objects, as `serde_json` values.
fn leaves_equal(a: &Leaf<'_>, b: &Leaf<'_>) -> bool {
    match (a, b) {
        (Leaf::Null, Leaf::Null) => true,
        (Leaf::Bool(a), Leaf::Bool(b)) => a == b,
        (Leaf::Number(a), Leaf::Number(b)) => a == b,
        (Leaf::String(a), Leaf::String(b)) => a == b,
        (Leaf::Array(a), Leaf::Array(b)) => a == b,
        _ => false,
    }
}
