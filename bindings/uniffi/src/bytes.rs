//! [`Utf8Bytes`]: bytes from the foreign side taken over without a copy per byte.
//!
//! uniffi lifts a `Vec<u8>` as it lifts any `Vec<T>`: item by item, a bounds check and
//! a call per byte (about 2 µs per kilobyte here, more than the settings diff of the
//! texts). `Utf8Bytes` crosses exactly as `Vec<u8>` does — uniffi's `bytes`, a
//! `RustBuffer` holding a big-endian `i32` length and the bytes, which the foreign
//! `bytes` converters write — and takes the buffer over whole, the length prefix left in
//! place (moving tens of kilobytes four bytes down would cost more than reading them).
//!
//! The only `unsafe` here is the declaration of the impl (`FfiConverter` is an unsafe
//! trait: its metadata and its buffer layout must match what the foreign code
//! generated from that metadata does); its functions are safe code.

#![allow(unsafe_code)]

use uniffi::{FfiConverter, Lift, Lower, MetadataBuffer, RustBuffer, TypeId};

/// Bytes crossing as uniffi's `bytes` (`ByteArray` in Kotlin, `Data` in Swift): the
/// bytes of `buffer` from `start` (past the length prefix of a lifted buffer).
#[derive(Clone)]
pub struct Utf8Bytes {
    buffer: Vec<u8>,
    start: usize,
}

impl Utf8Bytes {
    pub fn new(bytes: Vec<u8>) -> Self {
        Self {
            buffer: bytes,
            start: 0,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        self.buffer.get(self.start..).unwrap_or_default()
    }

    pub fn into_vec(mut self) -> Vec<u8> {
        self.buffer.drain(..self.start.min(self.buffer.len()));
        self.buffer
    }
}

impl PartialEq for Utf8Bytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for Utf8Bytes {}

impl std::fmt::Debug for Utf8Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Utf8Bytes({} bytes)", self.as_slice().len())
    }
}

fn malformed(what: &str) -> uniffi::deps::anyhow::Error {
    uniffi::deps::anyhow::anyhow!("a bytes buffer from the foreign side is malformed: {what}")
}

// SAFETY: the metadata is `Vec<u8>`'s (uniffi's `bytes`), and every function reads or
// writes the layout `Vec<u8>`'s do: a big-endian `i32` length, then the bytes.
unsafe impl<UT> FfiConverter<UT> for Utf8Bytes {
    type FfiType = RustBuffer;

    fn lower(obj: Self) -> RustBuffer {
        <Vec<u8> as Lower<UT>>::lower(obj.into_vec())
    }

    fn try_lift(buf: RustBuffer) -> uniffi::Result<Self> {
        let bytes = buf.destroy_into_vec();
        let len = bytes
            .first_chunk::<4>()
            .map(|prefix| i32::from_be_bytes(*prefix))
            .ok_or_else(|| malformed("no length"))?;
        if usize::try_from(len).ok() != Some(bytes.len() - 4) {
            return Err(malformed("the length does not match"));
        }
        Ok(Self {
            buffer: bytes,
            start: 4,
        })
    }

    fn write(obj: Self, buf: &mut Vec<u8>) {
        <Vec<u8> as Lower<UT>>::write(obj.into_vec(), buf);
    }

    fn try_read(buf: &mut &[u8]) -> uniffi::Result<Self> {
        <Vec<u8> as Lift<UT>>::try_read(buf).map(Self::new)
    }

    const TYPE_ID_META: MetadataBuffer = <Vec<u8> as TypeId<UT>>::TYPE_ID_META;
}

uniffi::derive_ffi_traits!(blanket Utf8Bytes);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_over_the_buffer_vec_u8_writes() {
        let text = b"{\"a\": 1}".to_vec();
        let lowered = <Vec<u8> as Lower<crate::UniFfiTag>>::lower(text.clone());
        let lifted = <Utf8Bytes as FfiConverter<crate::UniFfiTag>>::try_lift(lowered);
        let Ok(lifted) = lifted else {
            panic!("a buffer Vec<u8> wrote lifts")
        };
        assert_eq!(lifted.as_slice(), text.as_slice());
        assert_eq!(lifted, Utf8Bytes::new(text.clone()));
        // Lowered again (as a return value would be): the bytes without the old prefix.
        let round = <Utf8Bytes as FfiConverter<crate::UniFfiTag>>::lower(lifted);
        let back = <Vec<u8> as Lift<crate::UniFfiTag>>::try_lift(round);
        assert_eq!(back.ok(), Some(text.clone()));
        let round =
            <Utf8Bytes as FfiConverter<crate::UniFfiTag>>::lower(Utf8Bytes::new(text.clone()));
        let back = <Vec<u8> as Lift<crate::UniFfiTag>>::try_lift(round);
        assert_eq!(back.ok(), Some(text));
        for bad in [vec![], vec![0, 0], vec![0, 0, 0, 5, b'x']] {
            let buffer = RustBuffer::from_vec(bad);
            assert!(<Utf8Bytes as FfiConverter<crate::UniFfiTag>>::try_lift(buffer).is_err());
        }
    }
}
