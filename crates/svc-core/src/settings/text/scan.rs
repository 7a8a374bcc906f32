//! Byte scans of JSON text, eight bytes at a time (SWAR: plain `u64` arithmetic, the
//! same code on x86_64 and on the phones' aarch64; the crate has no `unsafe`, so no
//! `std::arch` intrinsics). Each word scan has a byte-at-a-time twin in the tests that
//! it must agree with on random bytes.

use serde_json::Value;

/// Each byte of a word repeated.
const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const SPACES: u64 = ONES * b' ' as u64;

/// The first eight bytes of `text` from `at`, as a little-endian word (the first
/// byte lowest), when there are eight.
#[inline(always)]
fn word_at(text: &[u8], at: usize) -> Option<u64> {
    text.get(at..)
        .and_then(<[u8]>::first_chunk::<8>)
        .map(|word| u64::from_le_bytes(*word))
}

/// The high bit of the bytes of `word` equal to `byte` (exact for the lowest one:
/// above it, a borrow can mark a byte one more than `byte`).
#[inline(always)]
fn bytes_equal(word: u64, byte: u8) -> u64 {
    let x = word ^ (ONES * u64::from(byte));
    x.wrapping_sub(ONES) & !x & HIGHS
}

/// The high bit of the bytes of `word` below `bound` (≤ 128; exact for the lowest one).
#[inline(always)]
fn bytes_below(word: u64, bound: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(bound)) & !word & HIGHS
}

/// The high bit of the lowest byte of `word` that is a quote, a backslash or a control
/// character (where a string's plain run stops), and maybe of some above it.
#[inline(always)]
fn string_stops(word: u64) -> u64 {
    bytes_equal(word, b'"') | bytes_equal(word, b'\\') | bytes_below(word, 0x20)
}

/// The length of the common prefix of `a` and `b`, sixteen bytes at a time.
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

/// The first position from `at` that is not JSON white space. Inlined for the usual
/// case (no white space: a compact text, or between a key and its colon).
#[inline(always)]
pub(super) fn skip_space(text: &[u8], at: usize) -> usize {
    match text.get(at) {
        Some(&byte) if byte > b' ' => at,
        None => at,
        // One space (after a colon in an indented text).
        Some(b' ') if text.get(at + 1).is_some_and(|&next| next > b' ') => at + 1,
        Some(_) => skip_space_run(text, at),
    }
}

/// [`skip_space`] of a run of white space: spaces (indentation) eight at a time.
#[inline(never)]
fn skip_space_run(text: &[u8], mut at: usize) -> usize {
    loop {
        match text.get(at) {
            Some(b' ') => match word_at(text, at) {
                // The first byte that is not a space is the lowest non-zero one.
                Some(word) => {
                    let other = word ^ SPACES;
                    if other == 0 {
                        at += 8;
                    } else {
                        at += (other.trailing_zeros() / 8) as usize;
                    }
                }
                None => at += 1,
            },
            Some(b'\n' | b'\r' | b'\t') => at += 1,
            _ => return at,
        }
    }
}

/// The end (past the closing quote) of the string that starts at `start`, and whether
/// it has escapes; `None` when it does not end or holds a control character. Eight
/// bytes at a time up to the first quote, backslash or control character.
#[inline]
pub(super) fn string_end(text: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut at = start + 1;
    let mut escaped = false;
    loop {
        if let Some(word) = word_at(text, at) {
            let found = string_stops(word);
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

/// Deeper than any settings tree; the general path handles (or refuses, as
/// `serde_json` does) deeper documents.
pub(super) const MAX_DEPTH: usize = 64;

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

    fn skip_space_slowly(text: &[u8], at: usize) -> usize {
        at + text
            .get(at..)
            .unwrap_or_default()
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
            .count()
    }

    /// Bytes around the ones the scans look for (a borrow in the word arithmetic
    /// marks a byte one above the one looked for: `!`, `#`, `]`, 0x21).
    fn bytes() -> impl Strategy<Value = u8> {
        prop_oneof![
            Just(b'"'),
            Just(b'\\'),
            Just(b' '),
            Just(b'!'),
            Just(b'#'),
            Just(b']'),
            Just(b'\n'),
            Just(b'\r'),
            Just(b'\t'),
            Just(0x0b_u8),
            Just(0x0e_u8),
            Just(0x1f_u8),
            Just(0_u8),
            Just(0xc3_u8),
            Just(0xa9_u8),
            Just(0x7f_u8),
            Just(0xff_u8),
            b'a'..=b'z',
            any::<u8>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn word_scans_agree_with_byte_scans(
            body in prop::collection::vec(bytes(), 0..48),
            // Mostly the same text, with a few bytes changed.
            changes in prop::collection::vec((any::<prop::sample::Index>(), bytes()), 0..3),
            from in 0usize..48,
        ) {
            let mut old = vec![b'"'];
            old.extend_from_slice(&body);
            prop_assert_eq!(string_end(&old, 0), string_end_slowly(&old, 0));
            let mut new = old.clone();
            for (at, byte) in &changes {
                let at = at.index(new.len());
                new[at] = *byte;
            }
            let from = from.min(body.len());
            prop_assert_eq!(skip_space(&body, from), skip_space_slowly(&body, from));
            let same = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
            prop_assert_eq!(common_prefix(&old, &new), same);
        }

        #[test]
        fn space_runs_are_skipped_exactly(
            run in prop::collection::vec(prop_oneof![Just(b' '), Just(b'\n'), Just(b'\r'), Just(b'\t')], 0..40),
            after in bytes(),
        ) {
            let mut text = run.clone();
            text.push(after);
            prop_assert_eq!(skip_space(&text, 0), skip_space_slowly(&text, 0));
        }
    }
}
