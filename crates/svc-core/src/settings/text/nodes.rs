//! The general path of [`diff_json`](super::diff_json): each document read once into
//! a flat list of its nodes in document order (each object or array followed by its
//! items, with the index where they end): keys and strings borrowed from the text
//! (copied only when they hold escapes), no map per object. The two lists are then
//! walked as the settings semantics walks any two trees ([`walk`]: this file gives it
//! the nodes, in step while the key orders agree, looked up once they do not), and
//! only the changed nodes become `Value`s, for the patch.
//!
//! A document with a key twice in one object (which `serde_json` reads as the last
//! value at the place of the first) is not handled here: [`diff`] answers `None` and
//! the caller compares through `Value`s.

use std::borrow::Cow;
use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};

use super::{Key, NotJson, Which};
use crate::settings::Patch;
use crate::settings::diff::PatchBuilder;
use crate::settings::walk::{self, Kind};

/// The patch from the JSON text `old` to the JSON text `new`; `None` when a document
/// has a key twice in one object.
pub(super) fn diff(old: &str, new: &str) -> Result<Option<Patch>, NotJson> {
    let old_doc = Doc::parse(old).map_err(|error| NotJson::new(Which::Old, &error))?;
    let new_doc = Doc::parse(new).map_err(|error| NotJson::new(Which::New, &error))?;
    if old_doc.duplicates || new_doc.duplicates {
        return Ok(None);
    }
    let mut docs = Docs {
        patch: PatchBuilder::default(),
        nodes: PhantomData,
    };
    let (old_root, new_root) = (At::root(&old_doc.nodes), At::root(&new_doc.nodes));
    let Ok(root) = walk::diff(&mut docs, &old_root, &new_root);
    Ok(Some(docs.patch.finish(root, || new_root.value())))
}

/// A document as a flat list of nodes in document order.
struct Doc<'a> {
    nodes: Vec<Node<'a>>,
    /// Whether an object has a key twice.
    duplicates: bool,
    /// The keys of the object being checked for duplicates (kept for the next one).
    keys: Vec<&'a str>,
}

/// A node: its key in its parent (empty for the root and for an array's items), where
/// its items end (one past its last node; the next node for a scalar), and what it is.
struct Node<'a> {
    key: Cow<'a, str>,
    end: usize,
    token: Token<'a>,
}

/// What a node is; the items of an object or an array follow it.
enum Token<'a> {
    Object,
    Array,
    Null,
    Bool(bool),
    Number(Number),
    String(Cow<'a, str>),
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
    let mut keys: Vec<&str> = Children::of(nodes, index)
        .map(|child| &*nodes[child].key)
        .collect();
    keys.sort_unstable();
    keys.windows(2).any(|pair| pair[0] == pair[1])
}

/// A node of a document: the document's nodes and the node's index.
#[derive(Clone, Copy)]
struct At<'n, 'a> {
    nodes: &'n [Node<'a>],
    index: usize,
}

impl<'n, 'a> At<'n, 'a> {
    fn root(nodes: &'n [Node<'a>]) -> Self {
        Self { nodes, index: 0 }
    }

    fn token(&self) -> Option<&'n Token<'a>> {
        self.nodes.get(self.index).map(|node| &node.token)
    }

    /// The node and its items as a `Value`.
    fn value(&self) -> Value {
        let Some(node) = self.nodes.get(self.index) else {
            return Value::Null;
        };
        let items = || Children::of(self.nodes, self.index).map(|index| At { index, ..*self });
        match &node.token {
            Token::Object => Value::Object(
                items()
                    .map(|child| (child.key().to_owned(), child.value()))
                    .collect(),
            ),
            Token::Array => Value::Array(items().map(|item| item.value()).collect()),
            Token::Null => Value::Null,
            Token::Bool(flag) => Value::Bool(*flag),
            Token::Number(number) => Value::Number(number.clone()),
            Token::String(text) => Value::String(text.to_string()),
        }
    }

    fn key(&self) -> &'n str {
        self.nodes.get(self.index).map_or("", |node| &node.key)
    }
}

/// The items of the object or array at `index` (their node indices), in order.
struct Children<'n, 'a> {
    nodes: &'n [Node<'a>],
    next: usize,
    end: usize,
}

impl<'n, 'a> Children<'n, 'a> {
    fn of(nodes: &'n [Node<'a>], index: usize) -> Self {
        Self {
            nodes,
            next: index + 1,
            end: nodes.get(index).map_or(index, |node| node.end),
        }
    }
}

impl Iterator for Children<'_, '_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let node = self.nodes.get(self.next).filter(|_| self.next < self.end)?;
        let at = self.next;
        self.next = node.end;
        Some(at)
    }
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
        let small = Children::of(nodes, index).nth(12).is_none();
        let keys = if small {
            HashMap::new()
        } else {
            Children::of(nodes, index)
                .map(|child| (&*nodes[child].key, child))
                .collect()
        };
        Self { index, small, keys }
    }

    fn get(&self, nodes: &[Node<'_>], key: &str) -> Option<usize> {
        if self.small {
            Children::of(nodes, self.index).find(|&child| nodes[child].key == key)
        } else {
            self.keys.get(key).copied()
        }
    }
}

/// The entries of an object, each with the node of the same key in another one: in
/// step while the keys agree, looked up once they do not.
struct Entries<'n, 'a> {
    children: Children<'n, 'a>,
    other_children: Children<'n, 'a>,
    other: At<'n, 'a>,
    lookup: Option<Lookup<'n>>,
}

/// The keys of an object that another one lacks.
struct Missing<'n, 'a> {
    children: Children<'n, 'a>,
    other: At<'n, 'a>,
    lookup: Lookup<'n>,
}

/// Two documents' nodes, read by the walk, and the patch of their diff.
struct Docs<'n, 'a> {
    patch: PatchBuilder<'n>,
    nodes: PhantomData<&'n [Node<'a>]>,
}

impl<'n, 'a> walk::Nodes for Docs<'n, 'a> {
    type Node = At<'n, 'a>;
    type Key = &'n str;
    type Error = Infallible;
    type Entries = Entries<'n, 'a>;
    type Items = Children<'n, 'a>;
    type Missing = Missing<'n, 'a>;

    fn is_object(&mut self, node: &At<'n, 'a>) -> bool {
        matches!(node.token(), Some(Token::Object))
    }

    fn kind(&mut self, node: &At<'n, 'a>) -> Result<Kind, Infallible> {
        Ok(match node.token() {
            Some(Token::Object) => Kind::Object,
            Some(Token::Array) => Kind::Array,
            _ => Kind::Scalar,
        })
    }

    fn same(&self, a: &At<'n, 'a>, b: &At<'n, 'a>) -> bool {
        std::ptr::eq(a.nodes, b.nodes) && a.index == b.index
    }

    fn scalars_equal(&mut self, a: &At<'n, 'a>, b: &At<'n, 'a>) -> Result<bool, Infallible> {
        Ok(match (a.token(), b.token()) {
            (Some(Token::Null), Some(Token::Null)) => true,
            (Some(Token::Bool(a)), Some(Token::Bool(b))) => a == b,
            (Some(Token::Number(a)), Some(Token::Number(b))) => a == b,
            (Some(Token::String(a)), Some(Token::String(b))) => a == b,
            _ => false,
        })
    }

    fn len(&mut self, container: &At<'n, 'a>) -> Result<usize, Infallible> {
        Ok(Children::of(container.nodes, container.index).count())
    }

    fn items(&mut self, array: &At<'n, 'a>) -> Result<Children<'n, 'a>, Infallible> {
        Ok(Children::of(array.nodes, array.index))
    }

    fn next_item(
        &mut self,
        items: &mut Children<'n, 'a>,
    ) -> Result<Option<At<'n, 'a>>, Infallible> {
        let nodes = items.nodes;
        Ok(items.next().map(|index| At { nodes, index }))
    }

    fn entries(
        &mut self,
        object: &At<'n, 'a>,
        other: &At<'n, 'a>,
    ) -> Result<Entries<'n, 'a>, Infallible> {
        Ok(Entries {
            children: Children::of(object.nodes, object.index),
            other_children: Children::of(other.nodes, other.index),
            other: *other,
            lookup: None,
        })
    }

    fn next_entry(
        &mut self,
        entries: &mut Entries<'n, 'a>,
    ) -> Result<Option<(&'n str, At<'n, 'a>, Option<At<'n, 'a>>)>, Infallible> {
        let Some(index) = entries.children.next() else {
            return Ok(None);
        };
        let child = At {
            nodes: entries.children.nodes,
            index,
        };
        let key = child.key();
        let other = entries.other.nodes;
        let found = match &entries.lookup {
            None => match entries.other_children.next() {
                Some(at) if other[at].key == key => Some(at),
                _ => {
                    let lookup = Lookup::new(other, entries.other.index);
                    let found = lookup.get(other, key);
                    entries.lookup = Some(lookup);
                    found
                }
            },
            Some(lookup) => lookup.get(other, key),
        };
        let other = found.map(|index| At {
            nodes: other,
            index,
        });
        Ok(Some((key, child, other)))
    }

    fn missing(
        &mut self,
        object: &At<'n, 'a>,
        other: &At<'n, 'a>,
    ) -> Result<Missing<'n, 'a>, Infallible> {
        Ok(Missing {
            children: Children::of(object.nodes, object.index),
            other: *other,
            lookup: Lookup::new(other.nodes, other.index),
        })
    }

    fn next_missing(
        &mut self,
        missing: &mut Missing<'n, 'a>,
    ) -> Result<Option<&'n str>, Infallible> {
        let nodes = missing.children.nodes;
        let (lookup, other) = (&missing.lookup, missing.other.nodes);
        Ok(missing
            .children
            .find(|&child| lookup.get(other, &nodes[child].key).is_none())
            .map(|child| &*nodes[child].key))
    }
}

impl<'n, 'a> walk::Changes for Docs<'n, 'a> {
    type Object = Map<String, Value>;

    fn enter(&mut self, key: &&'n str) -> Result<(), Infallible> {
        self.patch.enter(key);
        Ok(())
    }

    fn leave(&mut self) {
        self.patch.leave();
    }

    fn changed(
        &mut self,
        key: &'n str,
        new: &At<'n, 'a>,
        out: &mut Option<Map<String, Value>>,
    ) -> Result<(), Infallible> {
        self.patch.changed(key, new.value(), out);
        Ok(())
    }

    fn child(
        &mut self,
        key: &'n str,
        child: Map<String, Value>,
        out: &mut Option<Map<String, Value>>,
    ) -> Result<(), Infallible> {
        self.patch.child(key, child, out);
        Ok(())
    }

    fn removed(&mut self, key: &'n str) -> Result<(), Infallible> {
        self.patch.removed(key);
        Ok(())
    }

    fn changed_root(&mut self, _new: &At<'n, 'a>) -> Result<(), Infallible> {
        self.patch.changed_root();
        Ok(())
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
    fn leaf(self, token: Token<'de>) {
        let end = self.doc.nodes.len() + 1;
        self.doc.nodes.push(Node {
            key: self.key,
            end,
            token,
        });
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_, 'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.leaf(Token::Null);
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, flag: bool) -> Result<(), E> {
        self.leaf(Token::Bool(flag));
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<(), E> {
        self.leaf(Token::Number(number.into()));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<(), E> {
        self.leaf(Token::Number(number.into()));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<(), E> {
        // JSON text has no NaN or infinity: always a number.
        let number = Number::from_f64(number).ok_or_else(|| E::custom("a number is not finite"))?;
        self.leaf(Token::Number(number));
        Ok(())
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<(), E> {
        self.leaf(Token::String(Cow::Borrowed(text)));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        self.leaf(Token::String(Cow::Owned(text.to_owned())));
        Ok(())
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<(), E> {
        self.leaf(Token::String(Cow::Owned(text)));
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let doc = self.doc;
        let index = doc.nodes.len();
        doc.nodes.push(Node {
            key: self.key,
            end: index + 1,
            token: Token::Array,
        });
        while seq
            .next_element_seed(NodeSeed {
                doc: &mut *doc,
                key: Cow::Borrowed(""),
            })?
            .is_some()
        {}
        doc.nodes[index].end = doc.nodes.len();
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let doc = self.doc;
        let index = doc.nodes.len();
        doc.nodes.push(Node {
            key: self.key,
            end: index + 1,
            token: Token::Object,
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
