//! Little-endian reading and writing of payload fields.

/// A value with a fixed little-endian layout in a payload.
pub(crate) trait Wire: Sized {
    /// Its size in bytes.
    const SIZE: usize;
    /// Reads it from exactly [`Self::SIZE`] bytes.
    fn read(bytes: &[u8]) -> Self;
    /// Appends it.
    fn write(&self, out: &mut Vec<u8>);
}

macro_rules! wire_number {
    ($($t:ty),*) => {$(
        impl Wire for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline(always)]
            fn read(bytes: &[u8]) -> Self {
                let mut buf = [0u8; std::mem::size_of::<$t>()];
                buf.copy_from_slice(&bytes[..Self::SIZE]);
                <$t>::from_le_bytes(buf)
            }
            fn write(&self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
        }
    )*};
}

wire_number!(u8, i8, u16, i16, u32, i32, u64, f32, f64);

impl<T: Wire + Copy + Default, const N: usize> Wire for [T; N] {
    const SIZE: usize = T::SIZE * N;
    #[inline(always)]
    fn read(bytes: &[u8]) -> Self {
        let mut values = [T::default(); N];
        for (value, bytes) in values.iter_mut().zip(bytes.chunks_exact(T::SIZE)) {
            *value = T::read(bytes);
        }
        values
    }
    fn write(&self, out: &mut Vec<u8>) {
        for value in self {
            value.write(out);
        }
    }
}

/// A cursor over a payload. Reading past its end is an error the caller turns into
/// [`DecodeError::TooShort`](crate::DecodeError::TooShort).
pub(crate) struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// Reading past the end of a payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Short;

impl<'a> Cursor<'a> {
    #[inline(always)]
    pub(crate) fn new(bytes: &'a [u8]) -> Cursor<'a> {
        Cursor { bytes, pos: 0 }
    }

    /// Bytes left.
    #[inline(always)]
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// The next value.
    #[inline(always)]
    pub(crate) fn get<T: Wire>(&mut self) -> Result<T, Short> {
        let bytes = self.take(T::SIZE)?;
        Ok(T::read(bytes))
    }

    /// The next value if the payload holds it whole, else `None` (an optional trailing
    /// field of a newer protocol version).
    #[inline(always)]
    pub(crate) fn opt<T: Wire>(&mut self) -> Option<T> {
        if self.remaining() >= T::SIZE {
            self.get().ok()
        } else {
            None
        }
    }

    /// The next `n` bytes.
    #[inline(always)]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Short> {
        if self.remaining() < n {
            return Err(Short);
        }
        let bytes = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(bytes)
    }

    /// The rest of the payload.
    pub(crate) fn rest(&mut self) -> &'a [u8] {
        let bytes = &self.bytes[self.pos..];
        self.pos = self.bytes.len();
        bytes
    }
}

/// Appends a value.
pub(crate) fn put<T: Wire>(out: &mut Vec<u8>, value: &T) {
    value.write(out);
}
