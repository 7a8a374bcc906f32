//! [`Reference`]: one JSON text compared with many (a fleet's exports against a
//! reference file), its structure read once.
//!
//! [`diff_json`](super::diff_json) reads the old text's structure on every call, most
//! of its time when two texts differ in a few values. A `Reference` reads it once
//! into an index (each value's span in the text, its parent and key); a text is then
//! compared with it byte by byte, and at each difference the index names the value
//! there (or the array around it, compared whole), which is parsed in both texts and
//! compared as `diff_json` compares it. Anything else (a difference in a key, the
//! white space or the punctuation of an object; a reference with a key twice or a key
//! with an escape) goes to `diff_json`, with the same result.

use super::diff_json;
use super::scan::{
    MAX_DEPTH, common_prefix, depth, has_duplicates, number_end, skip_space, string_end, value_at,
};
use crate::settings::diff::{ChangeList, values_equal};
use crate::settings::strict::first_duplicate_key;
use crate::settings::{Patch, SettingsError};

/// A value of the reference text.
struct Node {
    start: usize,
    end: usize,
    /// The index of the object or array it is in (`usize::MAX` for the root).
    parent: usize,
    /// Its key in its parent object (empty in an array).
    key_start: usize,
    key_end: usize,
    kind: Kind,
    depth: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    /// A string: its closing quote ends it.
    String,
    /// A number or literal: the byte after it must be the same too.
    Bare,
}

/// A reference text with the index of its values (`None` when the fast comparison
/// cannot be used for it: every comparison goes to `diff_json`).
pub(crate) struct Reference {
    text: String,
    nodes: Option<Vec<Node>>,
}

impl Reference {
    /// The reference `text`, checked to be JSON.
    pub(crate) fn new(text: String) -> Result<Self, SettingsError> {
        // Checked whole (the comparisons read only where the texts differ).
        diff_json(&text, &text)?;
        let nodes = index(text.as_bytes());
        Ok(Self { text, nodes })
    }

    /// The patch from the reference to `new`: [`diff_json`]`(reference, new)`.
    #[cfg(test)]
    pub(crate) fn diff(&self, new: &str) -> Result<Patch, SettingsError> {
        match self.same_layout(new) {
            Some(patch) => Ok(patch),
            None => diff_json(&self.text, new),
        }
    }

    /// [`diff_json`]`(reference, new)` without trying [`Reference::same_layout`] first.
    pub(crate) fn diff_other_layout(&self, new: &str) -> Result<Patch, SettingsError> {
        diff_json(&self.text, new)
    }

    /// The patch when `new` is laid out as the reference (the same keys in the same
    /// order, the same white space): compared byte by byte. `None` otherwise.
    pub(crate) fn same_layout(&self, new: &str) -> Option<Patch> {
        self.fast(self.nodes.as_deref()?, new)
    }

    fn fast(&self, nodes: &[Node], new: &str) -> Option<Patch> {
        let (old, new) = (self.text.as_bytes(), new.as_bytes());
        let (mut o, mut n) = (0, 0);
        let mut changes = ChangeList::default();
        loop {
            let same = common_prefix(&old[o..], &new[n..]);
            if o + same == old.len() {
                // The reference ended: the rest of the new text is white space only.
                let rest = new.get(n + same..)?;
                if skip_space(rest, 0) != rest.len() {
                    return None;
                }
                break;
            }
            let at = o + same;
            let node = self.changed_node(nodes, at)?;
            let value = nodes.get(node)?;
            if value.start < o {
                return None;
            }
            let new_start = value.start - o + n;
            let (old_value, old_end) = value_at(old, value.start)?;
            let (new_value, new_end) = value_at(new, new_start)?;
            if value.depth + depth(&new_value) > MAX_DEPTH {
                return None;
            }
            // The reference's keys are unique, and so are the same keys in the new text;
            // a new array holding objects may write one twice (which the parse above
            // hid): the slower path refuses it.
            if holds_object(&new_value) {
                let written = std::str::from_utf8(new.get(new_start..new_end)?).ok()?;
                if !matches!(first_duplicate_key(written), Ok(None)) {
                    return None;
                }
            }
            if !values_equal(&old_value, &new_value) {
                let keys = self.keys(nodes, node)?;
                changes.add(&keys, new_value)?;
            }
            (o, n) = (old_end, new_end);
        }
        Some(changes.finish())
    }

    /// The value whose text differs at `at`: the innermost value holding `at` (a
    /// number or literal also holds the byte after it), or the outermost array around
    /// it; `None` when that is an object or the root (its keys or punctuation differ).
    fn changed_node(&self, nodes: &[Node], at: usize) -> Option<usize> {
        let mut node = nodes.partition_point(|n| n.start <= at).checked_sub(1)?;
        loop {
            let n = nodes.get(node)?;
            let holds = n.start <= at && (at < n.end || (n.kind == Kind::Bare && at == n.end));
            if holds {
                break;
            }
            node = n.parent;
        }
        // The outermost array around it (arrays are compared whole).
        let mut outermost = None;
        let mut up = node;
        while let Some(n) = nodes.get(up) {
            if n.kind == Kind::Array {
                outermost = Some(up);
            }
            up = n.parent;
        }
        let node = outermost.unwrap_or(node);
        let n = nodes.get(node)?;
        (n.kind != Kind::Object && n.parent != usize::MAX).then_some(node)
    }

    /// The keys from the root to `node` (all in objects: arrays are compared whole).
    fn keys<'t>(&'t self, nodes: &[Node], mut node: usize) -> Option<Vec<&'t str>> {
        let mut keys = Vec::new();
        while let Some(n) = nodes.get(node) {
            if n.parent == usize::MAX {
                break;
            }
            keys.push(self.text.get(n.key_start..n.key_end)?);
            node = n.parent;
        }
        keys.reverse();
        Some(keys)
    }
}

/// Whether `value` is or holds an object.
fn holds_object(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::Object(_) => true,
        serde_json::Value::Array(items) => items.iter().any(holds_object),
        _ => false,
    }
}

/// The index of a JSON text whose root is an object: every value in document order;
/// `None` for anything the fast comparison does not handle (a key with an escape, a
/// key twice in an object, deep nesting).
fn index(text: &[u8]) -> Option<Vec<Node>> {
    let mut nodes: Vec<Node> = Vec::with_capacity(text.len() / 16);
    // The containers being read, and where their keys start in `keys`.
    let mut open: Vec<(usize, usize)> = Vec::new();
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut at = skip_space(text, 0);
    if text.get(at) != Some(&b'{') {
        return None;
    }
    let mut key = (0, 0);
    loop {
        at = skip_space(text, at);
        let byte = *text.get(at)?;
        let parent = open.last().map_or(usize::MAX, |&(node, _)| node);
        let in_object = nodes.get(parent).is_some_and(|n| n.kind == Kind::Object);
        match byte {
            b'}' | b']' => {
                let (node, keys_from) = open.pop()?;
                if nodes[node].kind == Kind::Object {
                    if has_duplicates(&mut keys[keys_from..]) {
                        return None;
                    }
                    keys.truncate(keys_from);
                }
                nodes[node].end = at + 1;
                at += 1;
                if open.is_empty() {
                    return Some(nodes);
                }
            }
            b',' => at += 1,
            b'"' if in_object => {
                // A key, then its value.
                let (end, escaped) = string_end(text, at)?;
                if escaped {
                    return None;
                }
                key = (at + 1, end - 1);
                keys.push(text.get(at + 1..end - 1)?);
                at = skip_space(text, end);
                if text.get(at) != Some(&b':') {
                    return None;
                }
                at = skip_space(text, at + 1);
                at = value(
                    text,
                    at,
                    parent,
                    key,
                    open.len(),
                    &mut nodes,
                    &mut open,
                    &keys,
                )?;
            }
            _ if !in_object && parent != usize::MAX => {
                at = value(
                    text,
                    at,
                    parent,
                    (0, 0),
                    open.len(),
                    &mut nodes,
                    &mut open,
                    &keys,
                )?;
            }
            _ if parent == usize::MAX => {
                at = value(text, at, parent, key, 0, &mut nodes, &mut open, &keys)?;
            }
            _ => return None,
        }
    }
}

/// Indexes the value at `at`; gives where it ends (for a container: just after its
/// opening, the container is then open).
#[allow(clippy::too_many_arguments)]
fn value(
    text: &[u8],
    at: usize,
    parent: usize,
    key: (usize, usize),
    depth: usize,
    nodes: &mut Vec<Node>,
    open: &mut Vec<(usize, usize)>,
    keys: &[&[u8]],
) -> Option<usize> {
    if depth >= MAX_DEPTH {
        return None;
    }
    let (kind, end) = match *text.get(at)? {
        b'{' => (Kind::Object, at + 1),
        b'[' => (Kind::Array, at + 1),
        b'"' => (Kind::String, string_end(text, at)?.0),
        b'-' | b'0'..=b'9' => (Kind::Bare, number_end(text, at)?.0),
        b't' => (Kind::Bare, at + 4),
        b'f' => (Kind::Bare, at + 5),
        b'n' => (Kind::Bare, at + 4),
        _ => return None,
    };
    let node = nodes.len();
    nodes.push(Node {
        start: at,
        end,
        parent,
        key_start: key.0,
        key_end: key.1,
        kind,
        depth,
    });
    if matches!(kind, Kind::Object | Kind::Array) {
        open.push((node, keys.len()));
    }
    Some(end)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{Map, Value, json};

    use super::*;
    use svc_test_support::settings as testing;

    fn check(old: &str, new: &str) {
        let reference = Reference::new(old.to_owned()).expect("a JSON reference");
        assert_eq!(reference.diff(new), diff_json(old, new), "{old} -> {new}");
    }

    #[test]
    fn a_fleet_of_exports_is_compared_through_the_index() {
        let unit = testing::unit_default_tree();
        let old = serde_json::to_string_pretty(&unit).unwrap_or_default();
        let reference = Reference::new(old.clone()).expect("the unit's tree");
        let nodes = reference.nodes.as_ref().expect("an index");
        for seed in 0..8 {
            let changed = testing::change_leaves(&unit, 0.02, seed);
            let new = serde_json::to_string_pretty(&changed).unwrap_or_default();
            assert!(reference.fast(nodes, &new).is_some(), "seed {seed}");
            assert_eq!(reference.diff(&new), diff_json(&old, &new));
        }
        assert!(reference.fast(nodes, &old).is_some_and(|p| p.is_empty()));
    }

    #[test]
    fn a_new_array_that_writes_a_key_twice_leaves_the_fast_comparison() {
        let old = r#"{"a": [{"b": 1}], "c": 1}"#;
        let reference = Reference::new(old.to_owned()).expect("a JSON reference");
        assert!(
            reference
                .same_layout(r#"{"a": [{"b": 2}], "c": 1}"#)
                .is_some()
        );
        assert!(
            reference
                .same_layout(r#"{"a": [{"b": 1, "b": 2}], "c": 1}"#)
                .is_none()
        );
    }

    #[test]
    fn agrees_with_diff_json_at_the_edges() {
        for (old, new) in [
            (r#"{"a": 12, "b": 1}"#, r#"{"a": 123, "b": 1}"#),
            (r#"{"a": 123}"#, r#"{"a": 12}"#),
            (
                r#"{"a": [1, [2, {"b": 3}]], "c": true}"#,
                r#"{"a": [1, [2, {"b": 4}]], "c": true}"#,
            ),
            (
                r#"{"a": [1, [2, {"b": 3}]]}"#,
                r#"{"a": [1, [2, {"x": 3}]]}"#,
            ),
            (r#"{"a": {"b": 1}}"#, r#"{"a": 7}"#),
            (r#"{"a": 7, "z": 0}"#, r#"{"a": {"b": 1}, "z": 0}"#),
            (r#"{"a": 1}"#, r#"{"a": 1, "b": 2}"#),
            (r#"{"a": 1, "b": 2}"#, r#"{"b": 2, "a": 1}"#),
            (r#"{"a": 1}"#, r#"{"a":1}"#),
            (r#"{"a": 1}"#, "{\"a\": 1}   \n"),
            (r#"{"a": 1} "#, r#"{"a": 1}"#),
            (r#"{"a": "x", "a": "y"}"#, r#"{"a": "z", "a": "y"}"#),
            (r#"{"k\"": 1}"#, r#"{"k\"": 2}"#),
            (r#"{"a": 1.0}"#, r#"{"a": 1.00}"#),
            (r#"{"a": null}"#, r#"{"a": nul}"#),
            (r#"{"a": 1}"#, r#"{"a": 1} x"#),
            (r#"{"a": 1}"#, r#"{"a": 1"#),
            (r#"{"a": [1]}"#, r#"{"a": [1,]}"#),
        ] {
            check(old, new);
        }
    }

    proptest! {
        #[test]
        fn agrees_with_diff_json_on_random_edits(
            values in prop::collection::vec(prop_oneof![
                Just(json!(null)), Just(json!(true)), Just(json!(-7)), Just(json!(2.5)),
                Just(json!("s")), Just(json!([1, [2.0]])), Just(json!({"x": 1, "y": [true]})),
            ], 6),
            picks in prop::collection::vec(0usize..6, 0..4),
            pretty in any::<bool>(),
        ) {
            let keys = ["a", "b", "c", "d", "e", "f"];
            let old: Map<String, Value> =
                keys.iter().zip(&values).map(|(k, v)| ((*k).to_owned(), v.clone())).collect();
            let mut new = old.clone();
            for &i in &picks {
                new.insert(keys[i].to_owned(), values[(i + 2) % values.len()].clone());
            }
            let write = |v: Map<String, Value>| {
                let v = Value::Object(v);
                if pretty { serde_json::to_string_pretty(&v).unwrap_or_default() } else { v.to_string() }
            };
            check(&write(old), &write(new));
        }
    }
}
