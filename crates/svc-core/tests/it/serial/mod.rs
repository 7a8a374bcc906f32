//! `svc_core::serial`: the sbgECom framing of the unit's REST API over a serial link;
//! one file per subject, the deterministic PRNG and the decoding helpers here.

mod errors;
mod large_frames;
mod resync;
mod round_trips;
mod vectors;

use svc_core::serial::{Decoder, Message};

/// A deterministic PRNG (xorshift64*), so failures replay.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| (self.next() >> 32) as u8).collect()
    }

    /// Printable JSON-ish text without NUL.
    fn text(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| b' ' + (self.next() % 95) as u8).collect()
    }
}

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// Feeds `bytes` to `decoder` in random chunks of 1..=`max_chunk` bytes.
fn feed(decoder: &mut Decoder, bytes: &[u8], rng: &mut Rng, max_chunk: usize) {
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = rng.range(1, max_chunk).min(rest.len());
        decoder.push(&rest[..n]);
        rest = &rest[n..];
    }
}

/// Every byte pushed is in a valid frame, skipped, or held.
fn assert_accounted(decoder: &Decoder, pushed: usize) {
    let s = decoder.stats();
    assert_eq!(
        s.frame_bytes + s.skipped_bytes + decoder.buffered_len() as u64,
        pushed as u64,
        "{s:?}"
    );
}

fn one_message(bytes: &[u8]) -> Message {
    let mut decoder = Decoder::new();
    decoder.push(bytes);
    let message = decoder.next_message().expect("one whole message");
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.buffered_len(), 0);
    assert_eq!(decoder.stats().bad_frames(), 0);
    message
}
