//! [`Utf8Bytes`]: bytes from the foreign side taken over without a copy per byte.
//!
//! uniffi lifts a `Vec<u8>` as it lifts any `Vec<T>`: item by item, a bounds check and
//! a call per byte (about 2 µs per kilobyte here, more than the settings diff of the
//! texts). `Utf8Bytes` crosses exactly as `Vec<u8>` does — uniffi's `bytes`, a
//! `RustBuffer` holding a big-endian `i32` length and the bytes, which the foreign
//! `bytes` converters write — and takes the buffer over whole.
//!
//! The only `unsafe` here is the declaration of the impl (`FfiConverter` is an unsafe
//! trait: its metadata and its buffer layout must match what the foreign code
//! generated from that metadata does); its functions are safe code.

#![allow(unsafe_code)]

use uniffi::{FfiConverter, Lift, Lower, MetadataBuffer, RustBuffer, TypeId};

/// Bytes crossing as uniffi's `bytes` (`ByteArray` in Kotlin, `Data` in Swift).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Utf8Bytes(pub Vec<u8>);

fn malformed(what: &str) -> uniffi::deps::anyhow::Error {
    uniffi::deps::anyhow::anyhow!("a bytes buffer from the foreign side is malformed: {what}")
}

// SAFETY: the metadata is `Vec<u8>`'s (uniffi's `bytes`), and every function reads or
// writes the layout `Vec<u8>`'s do: a big-endian `i32` length, then the bytes.
unsafe impl<UT> FfiConverter<UT> for Utf8Bytes {
    type FfiType = RustBuffer;

    fn lower(obj: Self) -> RustBuffer {
        <Vec<u8> as Lower<UT>>::lower(obj.0)
    }

    fn try_lift(buf: RustBuffer) -> uniffi::Result<Self> {
        let mut bytes = buf.destroy_into_vec();
        let len = bytes
            .first_chunk::<4>()
            .map(|prefix| i32::from_be_bytes(*prefix))
            .ok_or_else(|| malformed("no length"))?;
        if usize::try_from(len).ok() != Some(bytes.len() - 4) {
            return Err(malformed("the length does not match"));
        }
        bytes.drain(..4);
        Ok(Self(bytes))
    }

    fn write(obj: Self, buf: &mut Vec<u8>) {
        <Vec<u8> as Lower<UT>>::write(obj.0, buf);
    }

    fn try_read(buf: &mut &[u8]) -> uniffi::Result<Self> {
        <Vec<u8> as Lift<UT>>::try_read(buf).map(Self)
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
        assert_eq!(lifted.ok(), Some(Utf8Bytes(text.clone())));
        let round = <Utf8Bytes as FfiConverter<crate::UniFfiTag>>::lower(Utf8Bytes(text.clone()));
        let back = <Vec<u8> as Lift<crate::UniFfiTag>>::try_lift(round);
        assert_eq!(back.ok(), Some(text));
        for bad in [vec![], vec![0, 0], vec![0, 0, 0, 5, b'x']] {
            let buffer = RustBuffer::from_vec(bad);
            assert!(<Utf8Bytes as FfiConverter<crate::UniFfiTag>>::try_lift(buffer).is_err());
        }
    }
}
