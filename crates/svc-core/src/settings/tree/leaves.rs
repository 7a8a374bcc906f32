//! The leaf values of a [`SettingsTree`](super::SettingsTree), in document order, each
//! encoded in four words so that two trees of one shape compare as two flat arrays.

use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::{Number, Value};

use crate::settings::diff::values_equal;

/// The leaves of a tree, in document order: each leaf encoded in four words, so that
/// two equal leaves of the common kinds (null, booleans, numbers, strings of up to
/// [`SHORT`] bytes, arrays of up to three numbers) have equal words. Unequal words
/// are compared as values by [`Leaves::equal`] (a negative zero equals a positive one,
/// though their words differ). The other leaves (longer strings and arrays) are kept
/// as values beside, their words all alike ([`HEAP`]).
pub(super) struct Leaves {
    pub(super) words: Vec<Words>,
    /// The values of the [`HEAP`] leaves, by leaf index (ascending); shared between
    /// a tree and the trees made from it ([`SettingsTree::apply`]).
    pub(super) heap: Vec<(usize, Arc<Value>)>,
}

pub(super) type Words = [u64; 4];

// The kind of a leaf, in the low byte of its first word.
pub(super) const NULL: u64 = 1;
/// The value in bit 8.
pub(super) const BOOL: u64 = 2;
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
pub(super) const HEAP: u64 = 8;

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
pub(super) fn short_string(text: &str) -> Option<Words> {
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
pub(super) fn encode(value: &Value) -> Option<Words> {
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
    pub(super) fn push(&mut self, value: &Value) {
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
    pub(super) fn value(&self, leaf: usize) -> Value {
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

    /// Whether leaf `leaf` of `self` equals leaf `other_leaf` of `other`, as the
    /// settings walk compares values (called when their words differ or are
    /// [`HEAP`]: equal words are equal leaves, the encoding being one to one).
    #[cold]
    #[inline(never)]
    pub(super) fn equal(&self, leaf: usize, other: &Leaves, other_leaf: usize) -> bool {
        match (self.heap_value(leaf), other.heap_value(other_leaf)) {
            (Some(a), Some(b)) => values_equal(a, b),
            _ => values_equal(&self.value(leaf), &other.value(other_leaf)),
        }
    }

    pub(super) fn serialize<S: Serializer>(
        &self,
        leaf: usize,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
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
