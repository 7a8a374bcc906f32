//! The fast path of [`diff_json`](super::diff_json): two texts that differ in values
//! only.
//!
//! Both texts are compared byte by byte (a word at a time) from the start; up to the
//! first byte where they differ, they are the same text, so only the old one is read —
//! just enough to know where each value starts and ends and under which keys it is —
//! and checked to be JSON as it is read. Where they differ, the value there (or the
//! whole array the difference is in: arrays are compared whole) is parsed in both
//! texts and compared with `serde_json`'s equality (`1` is not `1.0`, `1.0` is
//! `1.00`); then both texts go on from the ends of these values, compared again.
//!
//! White space is skipped in each text on its own where the texts differ in it (one
//! written compact, the other indented): both go on from their next tokens.
//!
//! Anything else gives up (`None`), and the general path runs from the start:
//! a difference in a key or between the entries of an object (a key added, removed or
//! moved: not two trees of one schema); a key with an escape; a
//! key twice in an object on the way to a change (`serde_json` keeps the last value);
//! deep nesting; a root that is not an object; and a text that is not JSON, so the
//! general path gives the parser's error. Nothing this path builds is then used.

use serde_json::{Map, Value};

use crate::settings::{NodePath, Patch};

/// Deeper than any settings tree; the general path handles (or refuses, as
/// `serde_json` does) deeper documents.
pub(super) const MAX_DEPTH: usize = 64;

/// Where a container starts in each text, and for an object, the key of the entry
/// being read.
struct Frame<'a> {
    object: bool,
    old_start: usize,
    new_start: usize,
    /// The key of the current entry (objects).
    key: &'a str,
    /// Where the keys of this container start in [`Walk::keys`].
    keys_from: usize,
    /// Whether a change was found under this object: its keys are checked to be unique
    /// when it ends (a key twice in it would make the change a different one).
    changed: bool,
}

/// What the reader expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expect {
    Value,
    /// A key or `}` (just after `{`).
    KeyOrEnd,
    /// A key (after `,`).
    Key,
    Colon,
    /// A value or `]` (just after `[`).
    ValueOrEnd,
    /// `,` or the end of the container.
    Next,
    /// Only white space, after the root.
    Done,
}

struct Walk<'a> {
    old_text: &'a str,
    old: &'a [u8],
    new: &'a [u8],
    /// The position in the old text.
    at: usize,
    /// The position in the new text that corresponds to `at`: since the last
    /// difference both texts are the same, shifted by `new_sync - old_sync`.
    old_sync: usize,
    new_sync: usize,
    /// The first position (in the old text) where the texts differ from `at` on
    /// (`usize::MAX` when they are the same to their ends).
    differs_at: usize,
    frames: Vec<Frame<'a>>,
    /// The keys of the objects being read, each object's after its parent's.
    keys: Vec<&'a str>,
    changed: Vec<NodePath>,
    tree: Map<String, Value>,
}

/// The patch, when the texts differ in values only (see the module documentation).
pub(super) fn diff(old: &str, new: &str) -> Option<Patch> {
    let mut walk = Walk {
        old_text: old,
        old: old.as_bytes(),
        new: new.as_bytes(),
        at: 0,
        old_sync: 0,
        new_sync: 0,
        differs_at: 0,
        frames: Vec::with_capacity(16),
        keys: Vec::with_capacity(64),
        changed: Vec::new(),
        tree: Map::new(),
    };
    walk.sync(0, 0);
    walk.run()?;
    Some(Patch {
        tree: Value::Object(walk.tree),
        changed: walk.changed,
        removed: Vec::new(),
    })
}

impl<'a> Walk<'a> {
    /// Goes on from `old_at` in the old text and `new_at` in the new one.
    fn sync(&mut self, old_at: usize, new_at: usize) {
        self.at = old_at;
        self.old_sync = old_at;
        self.new_sync = new_at;
        let (old, new) = (&self.old[old_at..], &self.new[new_at..]);
        let same = common_prefix(old, new);
        self.differs_at = if same == old.len() && same == new.len() {
            usize::MAX
        } else {
            old_at + same
        };
    }

    /// The position in the new text of the position `at` of the old one (both before
    /// the next difference).
    fn in_new(&self, at: usize) -> usize {
        at - self.old_sync + self.new_sync
    }

    fn run(&mut self) -> Option<()> {
        let mut expect = Expect::Value;
        loop {
            let start = skip_space(self.old, self.at);
            let Some(&byte) = self.old.get(start) else {
                // The end of the old text: the root was read, and the new text has
                // only white space left.
                let rest = self.new.get(self.in_new(self.at.min(self.differs_at))..)?;
                let spaces = skip_space(rest, 0) == rest.len();
                return (expect == Expect::Done && spaces).then_some(());
            };
            if expect == Expect::Done {
                return None; // Something after the root.
            }
            // The texts differ in the white space before `start`, or from its first byte.
            let mut differs = start >= self.differs_at;
            if differs {
                // White space means nothing: go on from the next token of each text.
                let new_start = skip_space(self.new, self.in_new(self.at));
                if self.differs_at < start || new_start != self.in_new(start) {
                    self.sync(start, new_start);
                    differs = start >= self.differs_at;
                }
            }
            if differs && !matches!(expect, Expect::Value | Expect::ValueOrEnd) {
                expect = self.differ_in_array()?;
                continue;
            }
            expect = match (expect, byte) {
                (Expect::Value | Expect::ValueOrEnd, _) if differs => self.differ_at_value()?,
                (Expect::Value | Expect::ValueOrEnd, b'{') => {
                    self.open(true, start)?;
                    Expect::KeyOrEnd
                }
                (Expect::Value | Expect::ValueOrEnd, b'[') => {
                    self.open(false, start)?;
                    Expect::ValueOrEnd
                }
                (Expect::ValueOrEnd, b']') | (Expect::Next, b']' | b'}') => {
                    self.close(start, byte)?
                }
                (Expect::Value | Expect::ValueOrEnd, _) => {
                    let (end, delimited) = self.scalar(start, byte)?;
                    // A number or a literal is the same only if what follows it is.
                    let same = if delimited {
                        end <= self.differs_at
                    } else {
                        end < self.differs_at
                    };
                    if same {
                        self.at = end;
                        Expect::Next
                    } else {
                        self.differ_at_value()?
                    }
                }
                (Expect::KeyOrEnd, b'}') => self.close(start, byte)?,
                (Expect::KeyOrEnd | Expect::Key, b'"') => {
                    let (end, escaped) = string_end(self.old, start)?;
                    if escaped || end > self.differs_at {
                        // Only inside an array (compared whole) can this be a change
                        // of values.
                        self.differ_in_array()?
                    } else {
                        let key = self.old_text.get(start + 1..end - 1)?;
                        let frame = self.frames.last_mut()?;
                        frame.key = key;
                        self.keys.push(key);
                        self.at = end;
                        Expect::Colon
                    }
                }
                (Expect::Colon, b':') => {
                    self.at = start + 1;
                    Expect::Value
                }
                (Expect::Next, b',') => {
                    self.at = start + 1;
                    if self.frames.last()?.object {
                        Expect::Key
                    } else {
                        Expect::Value
                    }
                }
                _ => return None,
            };
        }
    }

    fn open(&mut self, object: bool, start: usize) -> Option<()> {
        if self.frames.len() >= MAX_DEPTH || (self.frames.is_empty() && !object) {
            return None;
        }
        self.frames.push(Frame {
            object,
            old_start: start,
            new_start: self.in_new(start),
            key: "",
            keys_from: self.keys.len(),
            changed: false,
        });
        self.at = start + 1;
        Some(())
    }

    /// The end of the innermost container (`}` or `]` at `start`, the same in both).
    fn close(&mut self, start: usize, byte: u8) -> Option<Expect> {
        let frame = self.frames.pop()?;
        if frame.object != (byte == b'}') {
            return None;
        }
        if frame.changed && has_duplicates(&mut self.keys[frame.keys_from..]) {
            return None;
        }
        self.keys.truncate(frame.keys_from);
        self.at = start + 1;
        Some(if self.frames.is_empty() {
            Expect::Done
        } else {
            Expect::Next
        })
    }

    /// The texts differ somewhere other than at the start of a value: only an array
    /// around the difference (compared whole) makes it a change of values.
    fn differ_in_array(&mut self) -> Option<Expect> {
        let outermost = self.frames.iter().position(|frame| !frame.object)?;
        let frame = self.frames.get(outermost)?;
        let (old_start, new_start, keys_from) = (frame.old_start, frame.new_start, frame.keys_from);
        self.frames.truncate(outermost);
        self.keys.truncate(keys_from);
        self.compare(old_start, new_start)
    }

    /// The texts differ from the value expected at `self.at` (or in the white space
    /// before it): that value, or the outermost array around it, is compared whole.
    fn differ_at_value(&mut self) -> Option<Expect> {
        if self.frames.iter().any(|frame| !frame.object) {
            return self.differ_in_array();
        }
        // Both texts are the same up to `self.at` (the end of the previous token).
        self.compare(self.at, self.in_new(self.at))
    }

    /// Compares whole the values that start at `old_start` and `new_start` (white space
    /// first allowed), the value of the current entry of the innermost object; records
    /// it if it changed; goes on after it in both texts.
    fn compare(&mut self, old_start: usize, new_start: usize) -> Option<Expect> {
        // The root itself differs: the general path.
        if self.frames.is_empty() {
            return None;
        }
        let (old_value, old_end) = value_at(self.old, old_start)?;
        let (new_value, new_end) = value_at(self.new, new_start)?;
        if depth(&old_value).max(depth(&new_value)) + self.frames.len() > MAX_DEPTH {
            return None;
        }
        if old_value != new_value {
            let keys: Vec<&'a str> = self.frames.iter().map(|frame| frame.key).collect();
            let (last, parents) = keys.split_last()?;
            self.changed.push(NodePath::from_tree_keys(parents, last));
            let mut map = &mut self.tree;
            for key in parents {
                map = map
                    .entry(*key)
                    .or_insert_with(|| Value::Object(Map::with_capacity(4)))
                    .as_object_mut()?;
            }
            map.insert((*last).to_owned(), new_value);
            for frame in &mut self.frames {
                frame.changed = true;
            }
        }
        self.sync(old_end, new_end);
        Some(Expect::Next)
    }

    /// The end of the string, number or literal at `start` (old text), checked to be
    /// JSON, and whether it ends with its own delimiter (a string's closing quote).
    fn scalar(&self, start: usize, byte: u8) -> Option<(usize, bool)> {
        let old = self.old;
        match byte {
            b'"' => {
                let (end, escaped) = string_end(old, start)?;
                if escaped {
                    // Rare in settings: let the parser check the escapes.
                    serde_json::from_slice::<Value>(old.get(start..end)?).ok()?;
                }
                Some((end, true))
            }
            b'-' | b'0'..=b'9' => {
                let (end, unusual) = number_end(old, start)?;
                if unusual {
                    // An exponent or a very long number could be out of range: the
                    // parser says.
                    serde_json::from_slice::<Value>(old.get(start..end)?).ok()?;
                }
                Some((end, false))
            }
            b't' | b'f' | b'n' => {
                let literal: &[u8] = match byte {
                    b't' => b"true",
                    b'f' => b"false",
                    _ => b"null",
                };
                old.get(start..)?
                    .starts_with(literal)
                    .then_some((start + literal.len(), false))
            }
            _ => None,
        }
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

/// The length of the common prefix of `a` and `b`, a word at a time.
pub(super) fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    let len = a.len().min(b.len());
    let (a, b) = (&a[..len], &b[..len]);
    let mut at = 0;
    let (a_words, _) = a.as_chunks::<16>();
    let (b_words, _) = b.as_chunks::<16>();
    for (x, y) in a_words.iter().zip(b_words) {
        let diff = u128::from_le_bytes(*x) ^ u128::from_le_bytes(*y);
        if diff != 0 {
            return at + (diff.trailing_zeros() / 8) as usize;
        }
        at += 16;
    }
    at + a[at..]
        .iter()
        .zip(&b[at..])
        .take_while(|(x, y)| x == y)
        .count()
}

/// The first position from `at` that is not JSON white space; indentation eight
/// spaces at a time.
#[inline]
pub(super) fn skip_space(text: &[u8], mut at: usize) -> usize {
    loop {
        if let Some(word) = text.get(at..).and_then(<[u8]>::first_chunk::<8>)
            && *word == [b' '; 8]
        {
            at += 8;
            continue;
        }
        match text.get(at) {
            Some(b' ' | b'\n' | b'\r' | b'\t') => at += 1,
            _ => return at,
        }
    }
}

/// Each byte of a word repeated.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The high bit of the bytes of `word` equal to `byte` (exact for the lowest one).
#[inline]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The high bit of the bytes of `word` below `bound` (≤ 128; exact for the lowest one).
#[inline]
fn bytes_below(word: u64, bound: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(bound)) & !word & HIGHS
}

/// The end (past the closing quote) of the string that starts at `start`, and whether
/// it has escapes; `None` when it does not end or holds a control character. Eight
/// bytes at a time up to the first quote, backslash or control character.
#[inline]
pub(super) fn string_end(text: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut at = start + 1;
    let mut escaped = false;
    loop {
        if let Some(word) = text.get(at..).and_then(<[u8]>::first_chunk::<8>) {
            let word = u64::from_le_bytes(*word);
            let found =
                bytes_equal(word, b'"') | bytes_equal(word, b'\\') | bytes_below(word, 0x20);
            if found == 0 {
                at += 8;
                continue;
            }
            at += (found.trailing_zeros() / 8) as usize;
        }
        match *text.get(at)? {
            b'"' => return Some((at + 1, escaped)),
            b'\\' => {
                escaped = true;
                at += 2;
            }
            0..0x20 => return None,
            _ => at += 1,
        }
    }
}

/// The end of the number that starts at `start`, and whether it is unusual (an
/// exponent, or long); `None` when it is not a JSON number.
#[inline]
pub(super) fn number_end(text: &[u8], start: usize) -> Option<(usize, bool)> {
    let digits = |mut at: usize| {
        while let Some(b'0'..=b'9') = text.get(at) {
            at += 1;
        }
        at
    };
    let mut at = start;
    if text.get(at) == Some(&b'-') {
        at += 1;
    }
    at = match text.get(at)? {
        b'0' => at + 1,
        b'1'..=b'9' => digits(at + 1),
        _ => return None,
    };
    if text.get(at) == Some(&b'.') {
        let end = digits(at + 1);
        if end == at + 1 {
            return None;
        }
        at = end;
    }
    let mut unusual = at - start > 300;
    if let Some(b'e' | b'E') = text.get(at) {
        unusual = true;
        at += 1;
        if let Some(b'+' | b'-') = text.get(at) {
            at += 1;
        }
        let end = digits(at);
        if end == at {
            return None;
        }
        at = end;
    }
    Some((at, unusual))
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `string_end` a byte at a time.
    fn string_end_slowly(text: &[u8], start: usize) -> Option<(usize, bool)> {
        let mut at = start + 1;
        let mut escaped = false;
        loop {
            match *text.get(at)? {
                b'"' => return Some((at + 1, escaped)),
                b'\\' => {
                    escaped = true;
                    at += 2;
                }
                0..0x20 => return None,
                _ => at += 1,
            }
        }
    }

    proptest! {
        #[test]
        fn word_scans_agree_with_byte_scans(
            body in prop::collection::vec(
                prop_oneof![Just(b'"'), Just(b'\\'), Just(b' '), Just(0x1f_u8), Just(0xc3_u8),
                            Just(0xa9_u8), Just(0x7f_u8), Just(0x20_u8), b'a'..=b'z'],
                0..40,
            ),
        ) {
            let mut text = vec![b'"'];
            text.extend_from_slice(&body);
            prop_assert_eq!(string_end(&text, 0), string_end_slowly(&text, 0));
            let spaces = body.iter().take_while(|b| matches!(b, b' ')).count();
            prop_assert_eq!(skip_space(&body, 0), spaces);
            let other = body.iter().rev().copied().collect::<Vec<_>>();
            let same = body.iter().zip(&other).take_while(|(a, b)| a == b).count();
            prop_assert_eq!(common_prefix(&body, &other), same);
        }
    }
}
