//! The fast path of [`diff_json`](super::diff_json): two texts that differ in values
//! only.
//!
//! Both texts are read together, a token at a time: white space is skipped in each on
//! its own (one may be written compact, the other indented), then the token of the old
//! text is compared with the bytes at the same place of the new one. Only the old text
//! is read for its structure — just enough to know where each value starts and ends
//! and under which keys it is — and checked to be JSON as it is read; a token of the
//! new text that is the same bytes as the old one is the same token. Where a value
//! differs (or, in an array, anything: arrays are compared whole), the value (the whole
//! outermost array around it) is parsed in both texts and compared with the settings
//! equality ([`walk::equal`](crate::settings::walk::equal): `1` is not `1.0`, `1.0` is
//! `1.00`); then both texts go on from the ends of these values. A fast path of the
//! one semantics: where it decides, it decides what the walk of the parsed trees would
//! (the tests and the fuzz target check it).
//!
//! Anything else gives up (`None`), and the general path runs from the start:
//! a difference in a key or between the entries of an object (a key added, removed or
//! moved: not two trees of one schema); a key with an escape; a
//! key twice in an object on the way to a change (`serde_json` keeps the last value);
//! deep nesting; a root that is not an object; and a text that is not JSON, so the
//! general path gives the parser's error. Nothing this path builds is then used.
//!
//! The cost is one pass over each text, per token rather than per byte: an indented
//! text against a compact one costs about what two compact texts do.

use serde_json::Value;

use super::scan::{SameString, ends_bare_value, same_span, same_string};
pub(super) use super::scan::{common_prefix, number_end, skip_space, string_end};
use crate::settings::Patch;
use crate::settings::diff::{ChangeList, values_equal};

/// Deeper than any settings tree; the general path handles (or refuses, as
/// `serde_json` does) deeper documents.
pub(super) const MAX_DEPTH: usize = 64;

/// Where a container starts in each text, and for an object, the key of the entry
/// being read.
struct Frame<'a> {
    object: bool,
    old_start: usize,
    new_start: usize,
    /// The key of the current entry (objects), as written in the old text (no
    /// escapes: a key with one gives up).
    key: &'a [u8],
    /// Where the keys of this container start in [`Walk::keys`].
    keys_from: usize,
    /// Whether `key` is in [`Walk::watched`]: a change was found under it.
    key_watched: bool,
}

struct Walk<'a> {
    old: &'a [u8],
    new: &'a [u8],
    frames: Vec<Frame<'a>>,
    /// How many of `frames` are arrays (a difference under one compares the outermost
    /// whole).
    arrays: usize,
    /// The keys of the objects being read, each object's after its parent's.
    keys: Vec<&'a [u8]>,
    /// The keys on the way to a change (with the depth of their object): each must be
    /// once in its object, checked when the object ends (a key twice makes the change
    /// another one: `serde_json` keeps the last value). Those of an object are after
    /// its parent's.
    watched: Vec<(usize, &'a [u8])>,
    /// The changes, in the order of the texts: where their keys are in `change_keys`,
    /// and the new value.
    changes: Vec<(usize, usize, Value)>,
    change_keys: Vec<&'a str>,
}

/// The changes the walk found, in the order of the texts, when the texts differ in
/// values only (see the module documentation): finished as a [`Patch`].
pub(super) struct Changes<'a> {
    keys: Vec<&'a str>,
    /// Where the keys of each change are in `keys`, and its new value.
    changes: Vec<(usize, usize, Value)>,
}

/// The changes from `old` to `new`, when the texts differ in values only.
pub(super) fn changes<'a>(old: &'a str, new: &'a str) -> Option<Changes<'a>> {
    let mut walk = Walk {
        old: old.as_bytes(),
        new: new.as_bytes(),
        frames: Vec::with_capacity(16),
        arrays: 0,
        // Enough for the objects of a settings tree on the way down, not to grow.
        keys: Vec::with_capacity(256),
        watched: Vec::new(),
        changes: Vec::new(),
        change_keys: Vec::new(),
    };
    walk.run()?;
    Some(Changes {
        keys: walk.change_keys,
        changes: walk.changes,
    })
}

/// The patch, when the texts differ in values only.
#[cfg(test)]
pub(super) fn diff(old: &str, new: &str) -> Option<Patch> {
    changes(old, new)?.into_patch()
}

impl<'a> Changes<'a> {
    /// The [`Patch`]; `None` when the changes do not make one tree (a key twice in
    /// the texts: the caller gives up).
    pub(super) fn into_patch(self) -> Option<Patch> {
        let Self { keys, changes } = self;
        let mut list = ChangeList::default();
        for (from, len, value) in changes {
            list.add(keys.get(from..from + len)?, value)?;
        }
        Some(list.finish())
    }
}

impl<'a> Walk<'a> {
    /// Reads both texts to their ends; `o` is the position in the old text, `n` in the
    /// new one, at the same token of each. A value at a time: the loop starts at a value
    /// (white space skipped), reads it (or opens it, up to its first entry), then reads
    /// what follows it up to the next value: `,` and a key, or the ends of containers.
    fn run(&mut self) -> Option<()> {
        let (old, new) = (self.old, self.new);
        let (mut o, mut n) = (skip_space(old, 0), skip_space(new, 0));
        // The root is an object (or the general path says what it is).
        if old.get(o) != Some(&b'{') {
            return None;
        }
        'value: loop {
            let byte = *old.get(o)?;
            (o, n) = match byte {
                b'"' => match same_string(old, o, new, n) {
                    SameString::Same { end } => (end, n + (end - o)),
                    SameString::Differs => self.differ_at_value(o, n)?,
                    SameString::Escaped => {
                        let (end, _) = string_end(old, o)?;
                        // Rare in settings: let the parser check the escapes.
                        serde_json::from_slice::<Value>(old.get(o..end)?).ok()?;
                        if same_span(old, o, new, n, end - o) {
                            (end, n + (end - o))
                        } else {
                            self.differ_at_value(o, n)?
                        }
                    }
                    SameString::NotJson => return None,
                },
                b'{' | b'[' if new.get(n) == Some(&byte) => {
                    let object = byte == b'{';
                    self.open(object, o, n)?;
                    (o, n) = (skip_space(old, o + 1), skip_space(new, n + 1));
                    let end = if object { b'}' } else { b']' };
                    if old.get(o) == Some(&end) {
                        // Empty in the old text.
                        if new.get(n) == Some(&end) {
                            if self.close(end)? {
                                return self.end(o + 1, n + 1);
                            }
                            (o + 1, n + 1)
                        } else {
                            self.differ_in_array()?
                        }
                    } else if object {
                        match self.key(o, n)? {
                            Some(at) => {
                                (o, n) = at;
                                continue 'value;
                            }
                            None => self.differ_in_array()?,
                        }
                    } else {
                        continue 'value;
                    }
                }
                b'{' | b'[' => self.differ_at_value(o, n)?,
                b'-' | b'0'..=b'9' => {
                    let (end, unusual) = number_end(old, o)?;
                    if unusual {
                        // An exponent or a very long number could be out of range:
                        // the parser says.
                        serde_json::from_slice::<Value>(old.get(o..end)?).ok()?;
                    }
                    self.bare_value(o, n, end)?
                }
                b't' | b'f' | b'n' => {
                    let literal: &[u8] = match byte {
                        b't' => b"true",
                        b'f' => b"false",
                        _ => b"null",
                    };
                    if !old.get(o..)?.starts_with(literal) {
                        return None;
                    }
                    self.bare_value(o, n, o + literal.len())?
                }
                _ => return None,
            };
            // After a value: `,` and the next value (after its key in an object), or
            // the ends of containers.
            loop {
                (o, n) = (skip_space(old, o), skip_space(new, n));
                let byte = *old.get(o)?;
                if new.get(n) != Some(&byte) {
                    (o, n) = self.differ_in_array()?;
                    continue;
                }
                match byte {
                    b',' => {
                        (o, n) = (skip_space(old, o + 1), skip_space(new, n + 1));
                        if self.frames.last()?.object {
                            match self.key(o, n)? {
                                Some(at) => (o, n) = at,
                                None => {
                                    (o, n) = self.differ_in_array()?;
                                    continue;
                                }
                            }
                        }
                        continue 'value;
                    }
                    b'}' | b']' => {
                        if self.close(byte)? {
                            return self.end(o + 1, n + 1);
                        }
                        (o, n) = (o + 1, n + 1);
                    }
                    _ => return None,
                }
            }
        }
    }

    /// After the root: only white space in both texts.
    fn end(&self, o: usize, n: usize) -> Option<()> {
        (skip_space(self.old, o) == self.old.len() && skip_space(self.new, n) == self.new.len())
            .then_some(())
    }

    /// The key at `o` (and `n`) and the colon after it: where the value starts in each
    /// text; `Some(None)` when the new text has something else there (another key: only
    /// inside an array, compared whole, is it a change of values); `None` when the old
    /// text is not JSON there.
    #[inline(always)]
    fn key(&mut self, o: usize, n: usize) -> Option<Option<(usize, usize)>> {
        let (old, new) = (self.old, self.new);
        if old.get(o) != Some(&b'"') {
            return None;
        }
        match same_string(old, o, new, n) {
            SameString::Same { end } => {
                let key = old.get(o + 1..end - 1)?;
                let frame = self.frames.last_mut()?;
                frame.key = key;
                frame.key_watched = false;
                self.keys.push(key);
                let (o, n) = (skip_space(old, end), skip_space(new, n + (end - o)));
                if old.get(o) != Some(&b':') {
                    return None;
                }
                if new.get(n) != Some(&b':') {
                    return Some(None);
                }
                Some(Some((skip_space(old, o + 1), skip_space(new, n + 1))))
            }
            SameString::Differs | SameString::Escaped => Some(None),
            SameString::NotJson => None,
        }
    }

    /// A number or a literal of the old text, from `o` to `end` (checked to be JSON):
    /// the same in the new text if the same bytes are there, and the number or literal
    /// ends there too.
    #[inline(always)]
    fn bare_value(&mut self, o: usize, n: usize, end: usize) -> Option<(usize, usize)> {
        let len = end - o;
        if same_span(self.old, o, self.new, n, len) && ends_bare_value(self.new.get(n + len)) {
            Some((end, n + len))
        } else {
            self.differ_at_value(o, n)
        }
    }

    fn open(&mut self, object: bool, o: usize, n: usize) -> Option<()> {
        if self.frames.len() >= MAX_DEPTH || (self.frames.is_empty() && !object) {
            return None;
        }
        self.arrays += usize::from(!object);
        self.frames.push(Frame {
            object,
            old_start: o,
            new_start: n,
            key: b"",
            keys_from: self.keys.len(),
            key_watched: false,
        });
        Some(())
    }

    /// The end of the innermost container (`}` or `]`, the same in both texts); whether
    /// it is the root.
    fn close(&mut self, byte: u8) -> Option<bool> {
        let frame = self.frames.pop()?;
        if frame.object != (byte == b'}') {
            return None;
        }
        self.arrays -= usize::from(!frame.object);
        let depth = self.frames.len();
        while let Some(&(at, key)) = self.watched.last()
            && at == depth
        {
            let keys = self.keys.get(frame.keys_from..)?;
            // The same length and last byte first: most keys differ there.
            let same = |other: &&[u8]| {
                other.len() == key.len() && other.last() == key.last() && *other == key
            };
            if keys.iter().filter(|other| same(other)).nth(1).is_some() {
                return None;
            }
            self.watched.pop();
        }
        self.keys.truncate(frame.keys_from);
        Some(self.frames.is_empty())
    }

    /// The texts differ somewhere other than at the start of a value: only an array
    /// around the difference (compared whole) makes it a change of values.
    #[cold]
    fn differ_in_array(&mut self) -> Option<(usize, usize)> {
        let outermost = self.frames.iter().position(|frame| !frame.object)?;
        let frame = self.frames.get(outermost)?;
        let (old_start, new_start, keys_from) = (frame.old_start, frame.new_start, frame.keys_from);
        self.frames.truncate(outermost);
        self.keys.truncate(keys_from);
        // (No key inside an array is watched: a change under one compares the array.)
        while self.watched.last().is_some_and(|&(at, _)| at >= outermost) {
            self.watched.pop();
        }
        self.arrays = 0;
        self.compare(old_start, new_start)
    }

    /// The texts differ from the value expected at `o` and `n`: that value, or the
    /// outermost array around it, is compared whole.
    #[cold]
    fn differ_at_value(&mut self, o: usize, n: usize) -> Option<(usize, usize)> {
        if self.arrays > 0 {
            return self.differ_in_array();
        }
        self.compare(o, n)
    }

    /// Compares whole the values that start at `old_start` and `new_start`, the value
    /// of the current entry of the innermost object; records it if it changed; goes on
    /// after it in both texts.
    fn compare(&mut self, old_start: usize, new_start: usize) -> Option<(usize, usize)> {
        // The root itself differs: the general path.
        if self.frames.is_empty() {
            return None;
        }
        let (old_value, old_end) = value_at(self.old, old_start)?;
        let (new_value, new_end) = value_at(self.new, new_start)?;
        if depth(&old_value).max(depth(&new_value)) + self.frames.len() > MAX_DEPTH {
            return None;
        }
        if !values_equal(&old_value, &new_value) {
            // Every frame is an object here (arrays are compared whole). The keys have
            // no escapes and lie between the quotes of a `str`.
            let from = self.change_keys.len();
            for (depth, frame) in self.frames.iter_mut().enumerate() {
                self.change_keys.push(std::str::from_utf8(frame.key).ok()?);
                if !frame.key_watched {
                    frame.key_watched = true;
                    self.watched.push((depth, frame.key));
                }
            }
            self.changes.push((from, self.frames.len(), new_value));
        }
        Some((old_end, new_end))
    }
}

/// The value that starts at `start`, parsed, and where it ends.
pub(super) fn value_at(text: &[u8], start: usize) -> Option<(Value, usize)> {
    let mut values = serde_json::Deserializer::from_slice(text.get(start..)?).into_iter::<Value>();
    let value = values.next()?.ok()?;
    Some((value, start + values.byte_offset()))
}

/// How deeply containers nest in `value` (0 for a scalar).
pub(super) fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(map) => 1 + map.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

pub(super) fn has_duplicates<T: Ord + Clone>(keys: &mut [T]) -> bool {
    if keys.len() <= 8 {
        return keys
            .iter()
            .enumerate()
            .any(|(at, key)| keys[..at].contains(key));
    }
    let mut sorted = keys.to_vec();
    sorted.sort_unstable();
    sorted.windows(2).any(|pair| pair[0] == pair[1])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Changes made by hand (the walk never finds these: a changed value is compared
    /// whole, a key on the way to a change is checked to be once in its object).
    fn changes<'a>(keys: &[&'a str], changes: &[(usize, usize)]) -> Changes<'a> {
        Changes {
            keys: keys.to_vec(),
            changes: changes
                .iter()
                .enumerate()
                .map(|(at, &(from, len))| (from, len, Value::from(at)))
                .collect(),
        }
    }

    #[test]
    fn the_tree_is_built_as_the_changes_nest() {
        let keys = ["a", "b", "x", "a", "c", "y", "z", "q\"u\"o", "t"];
        // a/b/x, a/c/y, z, "q\"u\"o"/t: objects opened, closed, a key to escape.
        let spans = [(0, 3), (3, 3), (6, 1), (7, 2)];
        let Some(patch) = changes(&keys, &spans).into_patch() else {
            panic!("one tree")
        };
        assert_eq!(
            patch.tree.to_string(),
            r#"{"a":{"b":{"x":0},"c":{"y":1}},"z":2,"q\"u\"o":{"t":3}}"#
        );
        assert_eq!(
            changes(&keys, &[]).into_patch().map(|patch| patch.tree),
            Some(serde_json::json!({}))
        );
    }

    #[test]
    fn changes_that_are_not_one_tree_make_no_patch() {
        let keys = ["a", "b", "c", "a", "x", "b", "y", "a", "z"];
        for spans in [
            // A change above another, either way round.
            vec![(0, 2), (0, 3)],
            vec![(0, 3), (0, 2)],
            // One node twice.
            vec![(0, 2), (0, 2)],
            // A key twice in one object, not together: a/x, b/y, a/z.
            vec![(3, 2), (5, 2), (7, 2)],
        ] {
            assert!(changes(&keys, &spans).into_patch().is_none(), "{spans:?}");
        }
    }

    #[test]
    fn a_bare_value_ends_where_the_new_text_ends_it() {
        // The same bytes, but the new number or literal goes on: not the same value.
        for (old, new) in [
            (r#"{"a": 1}"#, r#"{"a": 1.5}"#),
            (r#"{"a": 1, "b": 2}"#, r#"{"a": 10, "b": 2}"#),
            (r#"{"a": 1}"#, r#"{"a": 1e3}"#),
            (r#"{"a": [1]}"#, r#"{"a": [12]}"#),
        ] {
            let patch = diff(old, new).expect("values only");
            assert_eq!(patch.changed.len(), 1, "{old} -> {new}");
        }
        // Ended by anything else: the new text is not JSON there, for the general path.
        assert!(diff(r#"{"a": true}"#, r#"{"a": truex}"#).is_none());
        assert!(diff(r#"{"a": [null]}"#, r#"{"a": [nullx]}"#).is_none());
        assert!(diff(r#"{"a": 1}"#, r#"{"a": 1"#).is_none());
    }

    #[test]
    fn white_space_is_skipped_in_each_text_on_its_own() {
        let old = "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {\n    \"c\": \"x\"\n  }\n}\n";
        let patch = diff(old, r#"{"a":[1,2],"b":{"c":"y"}}"#).expect("values only");
        assert_eq!(patch.tree.to_string(), r#"{"b":{"c":"y"}}"#);
        let patch = diff(r#"{"a":[1,2],"b":{"c":"y"}}"#, old).expect("values only");
        assert_eq!(patch.tree.to_string(), r#"{"b":{"c":"x"}}"#);
        // White space inside a token is not skipped.
        assert!(diff(old, r#"{"a":[1,2],"b":{"c":"y"}} x"#).is_none());
        assert!(diff(r#"{"a": tr ue}"#, r#"{"a": true}"#).is_none());
    }
}
