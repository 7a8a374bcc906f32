//! The minimal patch between two JSON texts, without building either tree as
//! `serde_json::Value`s: `svc_core::settings::diff` of the two parsed values.
//!
//! Each document is read once into a flat list of its nodes in document order (each
//! object followed by its sub-tree, with the index where the sub-tree ends): keys and
//! strings borrowed from the text (copied only when they hold escapes), no map per
//! object. The two lists are then compared as `svc_core::settings::diff` compares two
//! values (objects key by key, in step while the key orders agree; everything else
//! whole, with `serde_json`'s equality: `1` is not `1.0`), and only the changed nodes
//! become `Value`s, for the patch. The tests check the result against
//! `svc_core::settings::diff` on random trees.
//!
//! A document with a key twice in one object (which `serde_json` reads as the last
//! value at the place of the first) is compared through `Value`s instead.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

/// The patch: the partial tree, the changed and the removed paths.
pub(crate) struct JsonPatch {
    pub(crate) tree: Value,
    pub(crate) changed: Vec<String>,
    pub(crate) removed: Vec<String>,
}

/// Why a text is not JSON: which document, and the parser's error.
pub(crate) struct NotJson {
    pub(crate) which: &'static str,
    pub(crate) error: serde_json::Error,
}

/// The patch from the JSON text `old` to the JSON text `new`.
pub(crate) fn diff(old: &[u8], new: &[u8]) -> Result<JsonPatch, NotJson> {
    // Checked as UTF-8 once, whole: the parser then borrows strings without checking
    // each. Text that is not UTF-8 is not JSON: the value path names the error.
    let (Ok(old_text), Ok(new_text)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return through_values(old, new);
    };
    let old_doc = Doc::parse(old_text).map_err(|error| NotJson {
        which: "the old tree",
        error,
    })?;
    let new_doc = Doc::parse(new_text).map_err(|error| NotJson {
        which: "the new tree",
        error,
    })?;
    if old_doc.duplicates || new_doc.duplicates {
        return through_values(old, new);
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
                differ.changed.push(String::new());
            }
            new
        }
    };
    Ok(JsonPatch {
        tree,
        changed: differ.changed,
        removed: differ.removed,
    })
}

/// The patch through `serde_json::Value`s and `svc_core::settings::diff`.
fn through_values(old: &[u8], new: &[u8]) -> Result<JsonPatch, NotJson> {
    let old: Value = serde_json::from_slice(old).map_err(|error| NotJson {
        which: "the old tree",
        error,
    })?;
    let new: Value = serde_json::from_slice(new).map_err(|error| NotJson {
        which: "the new tree",
        error,
    })?;
    let patch = svc_core::settings::diff(&old, &new);
    Ok(JsonPatch {
        tree: patch.tree,
        changed: patch.changed.iter().map(ToString::to_string).collect(),
        removed: patch.removed.iter().map(ToString::to_string).collect(),
    })
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
    changed: Vec<String>,
    removed: Vec<String>,
}

impl<'n> Differ<'n, '_> {
    fn path(&self, key: &str) -> String {
        let mut path = String::new();
        for parent in &self.stack {
            path.push_str(parent);
            path.push('/');
        }
        path.push_str(key);
        path
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The lazy diff agrees with `svc_core::settings::diff` of the parsed values.
    fn check(old: &Value, new: &Value) {
        for (old_text, new_text) in [
            (old.to_string(), new.to_string()),
            (
                serde_json::to_string_pretty(old).unwrap_or_default(),
                new.to_string(),
            ),
        ] {
            let Ok(patch) = diff(old_text.as_bytes(), new_text.as_bytes()) else {
                panic!("not JSON")
            };
            let expected = svc_core::settings::diff(old, new);
            assert_eq!(patch.tree, expected.tree, "{old} -> {new}");
            let changed: Vec<String> = expected.changed.iter().map(ToString::to_string).collect();
            let removed: Vec<String> = expected.removed.iter().map(ToString::to_string).collect();
            assert_eq!(patch.changed, changed);
            assert_eq!(patch.removed, removed);
        }
    }

    #[test]
    fn agrees_with_the_value_diff() {
        check(
            &json!({"a": {"b": 1, "c": [1, 2]}, "d": true, "e": "x"}),
            &json!({"a": {"b": 1.0, "c": [1, 2]}, "d": 1, "e": "x", "f": null}),
        );
        check(
            &json!({"a": 1, "b": 2, "c": 3}),
            &json!({"b": 2, "a": 1, "d": 4}),
        );
        check(
            &json!({"a": {"x": 1, "y": {"z": 2}}}),
            &json!({"a": {"x": 2}}),
        );
        check(&json!({"a": {"x": 1}}), &json!({"a": 5}));
        check(&json!([1, 2]), &json!({"a": 1}));
        check(&json!(3), &json!(3));
        let many: Map<String, Value> = (0..40).map(|i| (format!("k{i}"), json!(i))).collect();
        let mut changed = many.clone();
        changed.insert("k7".into(), json!("seven"));
        changed.remove("k30");
        check(&Value::Object(many), &Value::Object(changed));
    }

    #[test]
    fn same_value_in_other_text_is_equal() {
        let Ok(patch) = diff(
            br#"{"a": {"x": 1, "y": [1.0, "\u0061"]}, "b": 1e2}"#,
            br#"{"a":{"y":[1.00,"a"],"x":1},"b":100.0}"#,
        ) else {
            panic!("not JSON")
        };
        assert!(patch.changed.is_empty() && patch.removed.is_empty());
        assert_eq!(patch.tree, json!({}));
    }

    #[test]
    fn duplicated_keys_read_as_serde_json_reads_them() {
        let old = br#"{"a": 1, "b": 2, "a": 3}"#;
        let new = br#"{"b": 2, "a": 3}"#;
        let Ok(patch) = diff(old, new) else {
            panic!("not JSON")
        };
        assert!(patch.changed.is_empty(), "{:?}", patch.changed);
        let keys = (0..20)
            .map(|i| format!("\"k{i}\": {i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let old = format!("{{{keys}, \"k3\": \"again\"}}");
        let Ok(patch) = diff(old.as_bytes(), format!("{{{keys}}}").as_bytes()) else {
            panic!("not JSON")
        };
        assert_eq!(patch.changed, ["k3"]);
        assert_eq!(patch.tree, json!({"k3": 3}));
    }

    #[test]
    fn not_json_names_the_document() {
        assert!(matches!(
            diff(b"{", b"{}"),
            Err(NotJson {
                which: "the old tree",
                ..
            })
        ));
        assert!(matches!(
            diff(b"{}", b"{\"a\": tru}"),
            Err(NotJson {
                which: "the new tree",
                ..
            })
        ));
    }
}
