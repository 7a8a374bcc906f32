//! [`SettingsTree::from_json`]: a tree read straight from its JSON text into the shape
//! of one of the last trees built (a fleet's exports, successive reads of a unit all
//! have one), without building a `serde_json::Value` of the whole tree: the keys are
//! checked against the shape's nodes as the parser reads them and each leaf is encoded
//! as it is read. A text of another shape (or with a key twice in an object) is parsed
//! into a `Value` and built as by [`SettingsTree::from_value`], with the same result.

use std::fmt;
use std::sync::{Arc, OnceLock, PoisonError};

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;

use super::SettingsTree;
use super::leaves::{BOOL, Leaves, NULL, Words, short_string};
use super::shape::{NO_PARENT, OBJECT, SHAPES, Shape};
use crate::settings::SettingsError;
use crate::settings::text::{Key, Reference};

impl SettingsTree {
    /// The tree of a JSON text (any value; a settings tree is an object): the same tree
    /// as [`from_value`](Self::from_value) of the parsed text, read without building
    /// the value when the text has the shape of one of the last trees built.
    ///
    /// ```
    /// use svc_core::settings::SettingsTree;
    ///
    /// let reference = SettingsTree::from_json(r#"{"gnss": {"model": "internal", "rate": 5}}"#)?;
    /// let unit = SettingsTree::from_json(r#"{"gnss": {"model": "external", "rate": 5}}"#)?;
    /// assert!(reference.same_shape(&unit));
    /// let patch = reference.diff(&unit);
    /// let changed: Vec<&str> = patch.changed().map(|p| p.as_str()).collect();
    /// assert_eq!(changed, ["gnss/model"]);
    /// # Ok::<(), svc_core::settings::SettingsError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SettingsError::NotJson`] when the text is not JSON (where, never a value of it).
    pub fn from_json(text: &str) -> Result<Self, SettingsError> {
        let recent = SHAPES
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .recent();
        for shape in recent {
            let mut reader = ShapeReader {
                shape: &shape,
                next: 0,
                leaves: Leaves {
                    words: Vec::with_capacity(shape.leaf_nodes.len()),
                    heap: Vec::new(),
                },
                mismatch: false,
            };
            let mut deserializer = serde_json::Deserializer::from_str(text);
            let read = Node {
                reader: &mut reader,
                key: "",
                parent: NO_PARENT,
            }
            .deserialize(&mut deserializer)
            .and_then(|()| deserializer.end());
            match read {
                Ok(()) if reader.next == shape.nodes.len() => {
                    SHAPES
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .used(&shape);
                    let leaves = Arc::new(reader.leaves);
                    #[cfg(test)]
                    READ_INTO_SHAPE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    return Ok(Self {
                        shape,
                        leaves,
                        reference: OnceLock::new(),
                    });
                }
                // Not this shape: the next one, or the value.
                Ok(()) => {}
                Err(_) if reader.mismatch => {}
                Err(error) => return Err(not_json(&error)),
            }
        }
        let value: Value = serde_json::from_str(text).map_err(|error| not_json(&error))?;
        Ok(Self::from_value(&value))
    }

    /// What turns this tree into the tree of `new` (JSON), in one call: the fleet
    /// case, a reference tree kept and each unit's export arriving as text. The same
    /// patch as [`diff_json`](crate::settings::diff_json) of this tree's text and `new`
    /// (and as `self.diff(&SettingsTree::from_json(new)?).to_patch()`).
    ///
    /// The first call writes this tree's compact text and indexes its values; both are
    /// kept with the tree (about the size of the text again, a copy of every value) and
    /// shared by the clones made after it. A text written the same way (compact, keys
    /// in the same order, as serializers write a tree they read) is then compared byte
    /// by byte, sixteen at a time, and only the values where the texts differ are
    /// parsed; any other text is read as a tree ([`from_json`](Self::from_json)) and
    /// diffed as trees are.
    ///
    /// ```
    /// use svc_core::settings::SettingsTree;
    ///
    /// let reference = SettingsTree::from_json(r#"{"gnss": {"model": "internal", "rate": 5}}"#)?;
    /// let patch = reference.diff_json(r#"{"gnss":{"model":"external","rate":5}}"#)?;
    /// assert_eq!(patch.changed.len(), 1);
    /// assert_eq!(patch.tree.to_string(), r#"{"gnss":{"model":"external"}}"#);
    /// # Ok::<(), svc_core::settings::SettingsError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`SettingsError::NotJson`] naming "the new tree" when `new` is not JSON or not
    /// UTF-8 (where, never a value of it).
    pub fn diff_json(
        &self,
        new: impl AsRef<[u8]>,
    ) -> Result<crate::settings::Patch, SettingsError> {
        let new = new.as_ref();
        let Ok(text) = std::str::from_utf8(new) else {
            // The parser says where a text stops being UTF-8.
            return self.diff_through_values(new);
        };
        if let Some(patch) = self.text_reference().and_then(|r| r.same_layout(text)) {
            return Ok(patch);
        }
        // Another layout (indented, other key order): read into a tree, diffed as
        // trees (of one shape, as two arrays of leaves).
        match Self::from_json(text) {
            Ok(tree) => Ok(self.diff(&tree).into()),
            Err(_) => self.diff_through_values(new),
        }
    }

    /// The tree's compact text and its index, made by the first call (`None` for a
    /// tree nested deeper than a JSON parser reads: one built from a value).
    fn text_reference(&self) -> Option<&Reference> {
        self.reference
            .get_or_init(|| {
                Reference::new(self.to_value().to_string())
                    .ok()
                    .map(Arc::new)
            })
            .as_deref()
    }

    /// The diff to the parsed `new`, through the values.
    fn diff_through_values(&self, new: &[u8]) -> Result<crate::settings::Patch, SettingsError> {
        let new = crate::settings::text::parse_new(new)?;
        Ok(crate::settings::diff(&self.to_value(), &new))
    }

    /// [`from_json`](Self::from_json) of a text given as bytes (as read from a file or
    /// received), which must be UTF-8 as JSON is.
    ///
    /// # Errors
    ///
    /// [`SettingsError::NotJson`] when the text is not JSON (or not UTF-8).
    pub fn from_json_bytes(bytes: &[u8]) -> Result<Self, SettingsError> {
        match std::str::from_utf8(bytes) {
            Ok(text) => Self::from_json(text),
            // The parser names where the text stops being UTF-8.
            Err(_) => serde_json::from_slice::<Value>(bytes)
                .map(|value| Self::from_value(&value))
                .map_err(|error| not_json(&error)),
        }
    }
}

/// How many trees were read straight into a known shape (tests only).
#[cfg(test)]
static READ_INTO_SHAPE: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

fn not_json(error: &serde_json::Error) -> SettingsError {
    SettingsError::NotJson {
        document: "the tree".to_owned(),
        line: error.line(),
        column: error.column(),
    }
}

/// Reads a text against a shape: the nodes in document order, the leaves encoded.
struct ShapeReader<'s> {
    shape: &'s Shape,
    /// The next node of the shape to meet.
    next: usize,
    leaves: Leaves,
    /// Whether the text left the shape (the error that stopped the parser is ours).
    mismatch: bool,
}

/// One node of the text, under `key` in the node `parent`.
struct Node<'r, 's, 'k> {
    reader: &'r mut ShapeReader<'s>,
    key: &'k str,
    parent: usize,
}

impl Node<'_, '_, '_> {
    fn mismatch<E: de::Error>(self) -> E {
        self.reader.mismatch = true;
        E::custom("another shape")
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_, '_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        let index = self.reader.next;
        let Some(node) = self.reader.shape.nodes.get(index) else {
            return Err(self.mismatch());
        };
        if node.parent != self.parent || *node.key != *self.key {
            return Err(self.mismatch());
        }
        self.reader.next += 1;
        if node.leaf == OBJECT {
            return deserializer.deserialize_any(Object {
                reader: self.reader,
                index,
            });
        }
        // A leaf: a value of any kind but an object, encoded as it is read (a long
        // string or an array kept as a value, as `from_value` does).
        if node.leaf != self.reader.leaves.words.len() {
            return Err(self.mismatch());
        }
        deserializer.deserialize_any(Leaf {
            reader: self.reader,
        })
    }
}

/// A leaf of the shape, encoded straight from what the parser reads.
struct Leaf<'r, 's> {
    reader: &'r mut ShapeReader<'s>,
}

impl Leaf<'_, '_> {
    fn words(self, words: Words) {
        self.reader.leaves.words.push(words);
    }

    fn value(self, value: &Value) {
        self.reader.leaves.push(value);
    }
}

impl<'de> Visitor<'de> for Leaf<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a leaf")
    }

    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.words([NULL, 0, 0, 0]);
        Ok(())
    }

    fn visit_bool<E: de::Error>(self, value: bool) -> Result<(), E> {
        self.words([BOOL | u64::from(value) << 8, 0, 0, 0]);
        Ok(())
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<(), E> {
        self.value(&Value::from(value));
        Ok(())
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<(), E> {
        self.value(&Value::from(value));
        Ok(())
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<(), E> {
        // JSON text has no NaN or infinity; `Value`'s reader refuses them likewise.
        let number = serde_json::Number::from_f64(value)
            .ok_or_else(|| E::custom("a number is not finite"))?;
        self.value(&Value::Number(number));
        Ok(())
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<(), E> {
        match short_string(text) {
            Some(words) => self.words(words),
            None => self.value(&Value::String(text.to_owned())),
        }
        Ok(())
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        self.value(&Value::Array(items));
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        // An object where the shape has a leaf: another shape (read through, so that
        // a text that is not JSON is reported as such).
        while map
            .next_entry::<de::IgnoredAny, de::IgnoredAny>()?
            .is_some()
        {}
        self.reader.mismatch = true;
        Err(de::Error::custom("another shape"))
    }
}

/// The object at node `index`: its entries, each the next node of the shape.
struct Object<'r, 's> {
    reader: &'r mut ShapeReader<'s>,
    index: usize,
}

impl<'de> Visitor<'de> for Object<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Object { reader, index } = self;
        while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
            map.next_value_seed(Node {
                reader: &mut *reader,
                key: &key,
                parent: index,
            })?;
        }
        // Every child met, none missing.
        let end = reader.shape.nodes.get(index).map(|node| node.end);
        if end != Some(reader.next) {
            reader.mismatch = true;
            return Err(de::Error::custom("another shape"));
        }
        Ok(())
    }

    // Anything but an object where the shape has one: another shape (the value is
    // still read through, so a text that is not JSON is reported as such).
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.other()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.other()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.other()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.other()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.other()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.other()
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element::<de::IgnoredAny>()?.is_some() {}
        self.other()
    }
}

impl Object<'_, '_> {
    fn other<E: de::Error>(self) -> Result<(), E> {
        self.reader.mismatch = true;
        Err(E::custom("another shape"))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;
    use svc_test_support::settings as testing;

    /// `from_json` gives the tree `from_value` gives for the parsed text.
    fn check(text: &str) -> SettingsTree {
        let Ok(value) = serde_json::from_str::<Value>(text) else {
            panic!("test texts are JSON: {text}")
        };
        let tree = match SettingsTree::from_json(text) {
            Ok(tree) => tree,
            Err(e) => panic!("{e}: {text}"),
        };
        assert_eq!(tree.to_value(), value, "{text}");
        assert!(tree.same_shape(&SettingsTree::from_value(&value)), "{text}");
        assert!(tree.diff(&SettingsTree::from_value(&value)).is_empty());
        tree
    }

    #[test]
    fn a_fleet_of_one_shape_reads_into_that_shape() {
        let unit = testing::unit_default_tree();
        let reference = SettingsTree::from_value(&unit);
        let before = READ_INTO_SHAPE.load(std::sync::atomic::Ordering::Relaxed);
        for seed in 0..5 {
            let changed = testing::change_leaves(&unit, 0.05, seed);
            let tree = check(&serde_json::to_string_pretty(&changed).unwrap_or_default());
            assert!(Arc::ptr_eq(&tree.shape, &reference.shape));
            assert_eq!(
                reference.diff(&tree).to_patch(),
                crate::settings::diff(&unit, &changed)
            );
        }
        // Each read straight into the shape (other tests may add to the count).
        let after = READ_INTO_SHAPE.load(std::sync::atomic::Ordering::Relaxed);
        assert!(after >= before + 5, "{before} -> {after}");
    }

    #[test]
    fn other_shapes_and_odd_texts_read_as_values() {
        let base = r#"{"a": {"b": 1, "c": [1, 2]}, "d": "x"}"#;
        check(base);
        for text in [
            base,
            r#"{"a": {"b": 1, "c": [1, 2]}, "d": "x", "e": 1}"#,
            r#"{"a": {"b": 1}, "d": "x"}"#,
            r#"{"a": {"c": [1, 2], "b": 1}, "d": "x"}"#,
            r#"{"a": 5, "d": "x"}"#,
            r#"{"a": {"b": {"z": 1}, "c": [1, 2]}, "d": "x"}"#,
            r#"{"a": {"b": 1, "c": [1, 2]}, "d": "x", "d": "y"}"#,
            r#"{"a": {"b": 1, "c": [1, 2], "b": 2}, "d": "x"}"#,
            r#"{"a": {"b": 1, "c": {"k": 2}}, "d": "x"}"#,
            r#"{"a": {"b": 1, "c": [1, 2]}, "d": "a long string of more than twenty-four bytes"}"#,
            r#"{"\u0061": {"b": 1, "c": [1, 2]}, "d": "x"}"#,
            r#"[1, 2]"#,
            "3",
            "{}",
        ] {
            check(base);
            check(text);
        }
    }

    #[test]
    fn diff_json_is_the_diff_of_the_tree_of_the_text() {
        let unit = testing::unit_default_tree();
        let reference = SettingsTree::from_value(&unit);
        for seed in 0..3 {
            let changed = testing::change_leaves(&unit, 0.05, seed);
            for text in [
                serde_json::to_string_pretty(&changed).unwrap_or_default(),
                changed.to_string(),
            ] {
                let patch = match reference.diff_json(&text) {
                    Ok(patch) => patch,
                    Err(e) => panic!("{e}"),
                };
                assert_eq!(patch, crate::settings::diff(&unit, &changed));
            }
        }
        // A text of another shape, and one that is not JSON.
        let mut other = unit.clone();
        if let Some(tree) = other.as_object_mut() {
            tree.insert("added".into(), json!({"x": 1}));
            tree.remove("clock");
        }
        let patch = reference.diff_json(other.to_string()).expect("JSON");
        assert_eq!(patch, crate::settings::diff(&unit, &other));
        assert!(!patch.removed.is_empty());
        // A clone shares the reference's text and index; a tree of it diffs the same.
        let clone = reference.clone();
        assert!(clone.reference.get().is_some_and(Option::is_some));
        assert_eq!(clone.diff_json(other.to_string()).expect("JSON"), patch);
        for bad in [
            &br#"{"clock": {"password": "hunter2"#[..],
            b"{\"a\": \"\xff\"}",
        ] {
            match reference.diff_json(bad) {
                Err(SettingsError::NotJson { document, .. }) => {
                    assert_eq!(document, "the new tree")
                }
                other => panic!("{other:?}"),
            }
        }

        // A tree nested deeper than a JSON parser reads (built from a value) has no
        // text to compare with: it is compared as values.
        let mut deep = json!(1);
        for _ in 0..130 {
            deep = json!({ "k": deep });
        }
        let old = json!({"x": 1, "k": deep});
        let tree = SettingsTree::from_value(&old);
        for _ in 0..2 {
            let patch = tree.diff_json(r#"{"x": 2}"#).expect("JSON");
            assert_eq!(patch, crate::settings::diff(&old, &json!({"x": 2})));
        }
        assert!(tree.reference.get().is_some_and(Option::is_none));
    }

    #[test]
    fn text_that_is_not_json_is_refused_whatever_the_shape() {
        check(r#"{"a": 1, "b": 2}"#);
        for text in [
            r#"{"a": 1, "b": 2"#,
            r#"{"a": 1, "b": tru}"#,
            r#"{"a": 1, "b": 2} x"#,
            r#"{"a": 1, "c": 2, "password": "hunter2"#,
            "",
        ] {
            match SettingsTree::from_json(text) {
                Err(SettingsError::NotJson { document, .. }) => assert_eq!(document, "the tree"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert!(SettingsTree::from_json_bytes(b"{\"a\": \"\xff\"}").is_err());
        assert!(SettingsTree::from_json_bytes(br#"{"a": 1, "b": 2}"#).is_ok());
        let e = SettingsTree::from_json(r#"{"password": "hunter2"#).expect_err("not JSON");
        assert!(!e.to_string().contains("hunter2"), "{e}");
    }

    proptest! {
        #[test]
        fn reads_as_the_value_reads(
            keys in prop::collection::vec("[a-c]{1,2}", 1..6),
            values in prop::collection::vec(prop_oneof![
                Just(json!(null)), Just(json!(true)), Just(json!(-1)), Just(json!(2.5)),
                Just(json!("s")), Just(json!([1, 2.0])), Just(json!({"x": 1})),
            ], 1..6),
        ) {
            let tree: serde_json::Map<String, Value> =
                keys.iter().cloned().zip(values.iter().cloned()).collect();
            let text = Value::Object(tree).to_string();
            check(&text);
            // Once more, now that its shape is a recent one.
            check(&text);
        }
    }
}
