//! Byte scans of JSON text, eight bytes at a time (SWAR: plain `u64` arithmetic, the
//! same code on x86_64 and on the phones' aarch64; the crate has no `unsafe`, so no
//! `std::arch` intrinsics). Each word scan has a byte-at-a-time twin in the tests that
//! it must agree with on random bytes.

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

/// [`bytes_equal`] of sixteen bytes.
#[inline(always)]
fn bytes_equal_128(word: u128, byte: u8) -> u128 {
    const ONES: u128 = u128::MAX / 0xff;
    let x = word ^ (ONES * u128::from(byte));
    x.wrapping_sub(ONES) & !x & (ONES << 7)
}

/// [`bytes_below`] of sixteen bytes.
#[inline(always)]
fn bytes_below_128(word: u128, bound: u8) -> u128 {
    const ONES: u128 = u128::MAX / 0xff;
    word.wrapping_sub(ONES * u128::from(bound)) & !word & (ONES << 7)
}

/// The high bit of the lowest byte of `word` that is a quote, a backslash or a control
/// character (where a string's plain run stops), and maybe of some above it.
#[inline(always)]
fn string_stops(word: u64) -> u64 {
    bytes_equal(word, b'"') | bytes_equal(word, b'\\') | bytes_below(word, 0x20)
}

/// The mask of the lowest `len` bytes of a word (`len` ≤ 8).
#[inline(always)]
fn low_bytes(len: usize) -> u64 {
    if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (len * 8)) - 1
    }
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

/// The string at `old_at` in the old text compared with the text at `new_at` in the
/// new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SameString {
    /// The same bytes, up to the closing quote (at `end - 1` in the old text): the
    /// same string.
    Same { end: usize },
    /// The texts differ before the end of the old string (which may not be JSON: it is
    /// not read past the difference).
    Differs,
    /// The old string has an escape before any difference: read it otherwise.
    Escaped,
    /// The old string has a control character or no end before any difference: not
    /// JSON.
    NotJson,
}

/// Whether the new text from `new_at` is the same string as the old one from `old_at`
/// (the old text at a quote): the two texts compared and the old string scanned in one
/// pass. Most keys and values are shorter than sixteen bytes: sixteen at once, then
/// eight at a time.
///
/// Where the string ends is what the next token waits for: it is found from the
/// closing quote alone, and the rest (a backslash or a control character before it, a
/// difference) is checked beside it, by branches that are not taken.
#[inline(always)]
pub(super) fn same_string(old: &[u8], old_at: usize, new: &[u8], new_at: usize) -> SameString {
    let (Some(a), Some(b)) = (
        old.get(old_at + 1..).and_then(<[u8]>::first_chunk::<16>),
        new.get(new_at + 1..).and_then(<[u8]>::first_chunk::<16>),
    ) else {
        return same_string_slowly(old, old_at, new, new_at);
    };
    if new[new_at] != b'"' {
        return SameString::Differs;
    }
    let (a, b) = (u128::from_le_bytes(*a), u128::from_le_bytes(*b));
    let quotes = bytes_equal_128(a, b'"');
    // The bits up to the closing quote's high bit (so its byte and those before it);
    // all of them without a quote. No branch: the string's end is what the next token
    // waits for.
    let upto = quotes ^ quotes.wrapping_sub(1);
    let others = bytes_equal_128(a, b'\\') | bytes_below_128(a, 0x20);
    if others & upto != 0 {
        // An escape or a control character (the lowest byte marked is one: a borrow
        // marks only bytes above one).
        return same_string_slowly(old, old_at, new, new_at);
    }
    if (a ^ b) & upto != 0 {
        return SameString::Differs;
    }
    if quotes == 0 {
        return same_string_from(old, old_at + 17, new, new_at + 17);
    }
    SameString::Same {
        end: old_at + 2 + (quotes.trailing_zeros() / 8) as usize,
    }
}

/// [`same_string`] from `old_at` and `new_at` inside the strings, where the texts are
/// the same up to, eight bytes at a time.
#[inline(never)]
fn same_string_from(old: &[u8], old_at: usize, new: &[u8], new_at: usize) -> SameString {
    let mut offset = 0;
    loop {
        let (Some(a), Some(b)) = (word_at(old, old_at + offset), word_at(new, new_at + offset))
        else {
            return same_string_tail(old, old_at + offset, new, new_at + offset);
        };
        let stops = string_stops(a);
        let diff = a ^ b;
        if stops == 0 {
            if diff != 0 {
                return SameString::Differs;
            }
            offset += 8;
            continue;
        }
        let stop = (stops.trailing_zeros() / 8) as usize;
        // The bytes up to the stop (included) must be the same.
        if diff & low_bytes(stop + 1) != 0 {
            return SameString::Differs;
        }
        let at = old_at + offset + stop;
        return match (a >> (stop * 8)) as u8 {
            b'"' => SameString::Same { end: at + 1 },
            b'\\' => SameString::Escaped,
            _ => SameString::NotJson,
        };
    }
}

/// [`same_string`] a byte at a time (near the end of a text).
#[cold]
pub(super) fn same_string_slowly(
    old: &[u8],
    old_at: usize,
    new: &[u8],
    new_at: usize,
) -> SameString {
    if new.get(new_at) != Some(&b'"') {
        return SameString::Differs;
    }
    same_string_tail(old, old_at + 1, new, new_at + 1)
}

/// [`same_string`] a byte at a time, from `old_at` and `new_at` (inside the strings),
/// near the end of a text.
#[cold]
fn same_string_tail(old: &[u8], mut old_at: usize, new: &[u8], mut new_at: usize) -> SameString {
    loop {
        let Some(&byte) = old.get(old_at) else {
            return SameString::NotJson;
        };
        if new.get(new_at) != Some(&byte) {
            return SameString::Differs;
        }
        match byte {
            b'"' => return SameString::Same { end: old_at + 1 },
            b'\\' => return SameString::Escaped,
            0..0x20 => return SameString::NotJson,
            _ => {}
        }
        old_at += 1;
        new_at += 1;
    }
}

/// Whether `len` bytes of `old` from `old_at` are the same as those of `new` from
/// `new_at` (a word compare for short spans: numbers, literals).
#[inline(always)]
pub(super) fn same_span(old: &[u8], old_at: usize, new: &[u8], new_at: usize, len: usize) -> bool {
    if len <= 8
        && let (Some(a), Some(b)) = (word_at(old, old_at), word_at(new, new_at))
    {
        return (a ^ b) & low_bytes(len) == 0;
    }
    match (old.get(old_at..old_at + len), new.get(new_at..new_at + len)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// Whether `byte` (or the end of the text) ends a number or a literal that it follows
/// in valid JSON: white space or what ends a value in a container.
#[inline(always)]
pub(super) fn ends_bare_value(byte: Option<&u8>) -> bool {
    matches!(
        byte,
        Some(b' ' | b'\n' | b'\r' | b'\t' | b',' | b']' | b'}')
    )
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
            prop_assert_eq!(same_string(&old, 0, &new, 0), same_string_slowly(&old, 0, &new, 0));
            // Shifted by a few bytes: another alignment of the words in each text.
            let shifted: Vec<u8> = b"  ".iter().chain(&new).copied().collect();
            prop_assert_eq!(
                same_string(&old, 0, &shifted, 2),
                same_string_slowly(&old, 0, &shifted, 2)
            );
            let from = from.min(body.len());
            prop_assert_eq!(skip_space(&body, from), skip_space_slowly(&body, from));
            for len in 0..12 {
                prop_assert_eq!(
                    same_span(&old, from, &new, from, len),
                    old.get(from..from + len).is_some() && old.get(from..from + len) == new.get(from..from + len)
                );
            }
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
