//! Frames (one on the wire) and messages (one id, class and data, in one standard frame
//! or in the pages of large frames).

use std::fmt;

use super::{
    ETX, FRAME_OVERHEAD, HEADER_LEN, LARGE_FRAME_BIT, MAX_MESSAGE_LEN, MAX_PAGE_DATA, MAX_PAYLOAD,
    PAGE_HEADER_LEN, SYNC1, SYNC2, SerialError, TRANSFER_ID_MASK, crc16_kermit,
};

/// One sbgECom frame as it is on the wire: `0xFF 0x5A`, id, class, length (u16 LE),
/// data, CRC (u16 LE), `0x33`.
///
/// `class` is the class byte as sent, bit 0x80 included for a page of a large frame,
/// and `data` is everything between the length and the CRC (for a large frame, the
/// 5-byte page header then the page's data; see [`Frame::page`]).
///
/// `Debug` shows the data's length, not the data (they may hold a token or a password).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Frame {
    /// Message id.
    pub id: u8,
    /// Class byte as on the wire.
    pub class: u8,
    /// The frame's data, at most [`MAX_PAYLOAD`] bytes.
    pub data: Vec<u8>,
}

/// The page header and data of a large frame (see [`Frame::page`]).
///
/// `Debug` shows the data's length, not the data.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Page<'a> {
    /// Transfer id (the low 4 bits of its byte; the others are ignored).
    pub transfer_id: u8,
    /// Page index, from 0.
    pub index: u16,
    /// Number of pages of the message.
    pub count: u16,
    /// This page's data, at most [`MAX_PAGE_DATA`] bytes.
    pub data: &'a [u8],
}

/// A whole message: its id, its class (below 0x80) and its data, whether it came in
/// one standard frame or in the pages of large frames.
///
/// `Debug` shows the data's length, not the data (they may hold a token or a password).
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Message {
    /// Message id.
    pub id: u8,
    /// Message class (bit 0x80 clear).
    pub class: u8,
    /// The message's data.
    pub data: Vec<u8>,
}

/// A whole message lent by [`Decoder::push_with`](super::Decoder::push_with): its id,
/// its class (below 0x80) and its data, borrowed from the decoder's input.
///
/// `Debug` shows the data's length, not the data.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MessageRef<'a> {
    /// Message id.
    pub id: u8,
    /// Message class (bit 0x80 clear).
    pub class: u8,
    /// The message's data.
    pub data: &'a [u8],
}

impl MessageRef<'_> {
    /// The message, its data copied.
    #[must_use]
    pub fn to_message(&self) -> Message {
        Message {
            id: self.id,
            class: self.class,
            data: self.data.to_vec(),
        }
    }
}

impl fmt::Debug for MessageRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MessageRef")
            .field("id", &self.id)
            .field("class", &format_args!("{:#04x}", self.class))
            .field("data", &format_args!("<{} bytes>", self.data.len()))
            .finish()
    }
}

impl fmt::Debug for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Frame")
            .field("id", &self.id)
            .field("class", &format_args!("{:#04x}", self.class))
            .field("data", &format_args!("<{} bytes>", self.data.len()))
            .finish()
    }
}

impl fmt::Debug for Page<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Page")
            .field("transfer_id", &self.transfer_id)
            .field("index", &self.index)
            .field("count", &self.count)
            .field("data", &format_args!("<{} bytes>", self.data.len()))
            .finish()
    }
}

impl fmt::Debug for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Message")
            .field("id", &self.id)
            .field("class", &format_args!("{:#04x}", self.class))
            .field("data", &format_args!("<{} bytes>", self.data.len()))
            .finish()
    }
}

impl Frame {
    /// A frame of this id, class (as on the wire) and data. Nothing is checked until it
    /// is encoded.
    #[must_use]
    pub fn new(id: u8, class: u8, data: impl Into<Vec<u8>>) -> Frame {
        Frame {
            id,
            class,
            data: data.into(),
        }
    }

    /// One page of a large frame: class `class | 0x80`, data = transfer id (its low 4
    /// bits), `index` (u16 LE), `count` (u16 LE), then `page_data`.
    ///
    /// # Errors
    ///
    /// - [`SerialError::ClassOutOfRange`] if `class` has bit 0x80 set;
    /// - [`SerialError::TooLong`] if `page_data` is over [`MAX_PAGE_DATA`] bytes;
    /// - [`SerialError::BadPage`] if `index` is not below `count`.
    pub fn large_page(
        id: u8,
        class: u8,
        transfer_id: u8,
        index: u16,
        count: u16,
        page_data: &[u8],
    ) -> Result<Frame, SerialError> {
        check_class(class)?;
        if page_data.len() > MAX_PAGE_DATA {
            return Err(SerialError::TooLong {
                len: page_data.len(),
                max: MAX_PAGE_DATA,
            });
        }
        if index >= count {
            return Err(SerialError::BadPage { index, count });
        }
        let mut data = Vec::with_capacity(PAGE_HEADER_LEN + page_data.len());
        data.extend_from_slice(&page_header(transfer_id, index, count));
        data.extend_from_slice(page_data);
        Ok(Frame {
            id,
            class: class | LARGE_FRAME_BIT,
            data,
        })
    }

    /// Whether this is a page of a large frame (class bit 0x80 set).
    #[must_use]
    pub fn is_large(&self) -> bool {
        self.class & LARGE_FRAME_BIT != 0
    }

    /// The class of the message this frame carries (bit 0x80 cleared).
    #[must_use]
    pub fn message_class(&self) -> u8 {
        self.class & !LARGE_FRAME_BIT
    }

    /// The page header and data of a large frame.
    ///
    /// # Errors
    ///
    /// - [`SerialError::NotLargeFrame`] for a standard frame;
    /// - [`SerialError::Truncated`] if the data are shorter than the 5-byte page header.
    pub fn page(&self) -> Result<Page<'_>, SerialError> {
        if !self.is_large() {
            return Err(SerialError::NotLargeFrame { class: self.class });
        }
        parse_page(&self.data).ok_or(SerialError::Truncated {
            needed: PAGE_HEADER_LEN,
            found: self.data.len(),
        })
    }

    /// Length of the encoded frame: the data plus 9 bytes.
    #[must_use]
    pub fn encoded_len(&self) -> usize {
        self.data.len() + FRAME_OVERHEAD
    }

    /// The frame's bytes on the wire.
    ///
    /// # Errors
    ///
    /// [`SerialError::TooLong`] if the data are over [`MAX_PAYLOAD`] bytes.
    pub fn encode(&self) -> Result<Vec<u8>, SerialError> {
        let mut out = Vec::with_capacity(self.encoded_len());
        self.encode_into(&mut out)?;
        Ok(out)
    }

    /// Appends the frame's bytes to `out` (nothing is appended on error).
    ///
    /// # Errors
    ///
    /// [`SerialError::TooLong`] if the data are over [`MAX_PAYLOAD`] bytes.
    pub fn encode_into(&self, out: &mut Vec<u8>) -> Result<(), SerialError> {
        if self.data.len() > MAX_PAYLOAD {
            return Err(SerialError::TooLong {
                len: self.data.len(),
                max: MAX_PAYLOAD,
            });
        }
        write_frame(out, self.id, self.class, &[], &self.data);
        Ok(())
    }

    /// Decodes the frame at the start of `bytes`; returns it and its encoded length
    /// (bytes after it are left alone). For a stream, use [`Decoder`](super::Decoder),
    /// which also resynchronises and reassembles large frames.
    ///
    /// # Errors
    ///
    /// - [`SerialError::BadSync`] if `bytes` do not start with `0xFF 0x5A`;
    /// - [`SerialError::BadLength`] if the length field is over [`MAX_PAYLOAD`];
    /// - [`SerialError::Truncated`] if `bytes` end before the frame does;
    /// - [`SerialError::BadEtx`] if the byte after the CRC is not `0x33`;
    /// - [`SerialError::BadCrc`] if the CRC does not match.
    pub fn decode(bytes: &[u8]) -> Result<(Frame, usize), SerialError> {
        match parse(bytes) {
            Parsed::Frame { id, class, len } => Ok((
                Frame {
                    id,
                    class,
                    data: bytes[HEADER_LEN..len - 3].to_vec(),
                },
                len,
            )),
            Parsed::Incomplete { needed } => Err(SerialError::Truncated {
                needed,
                found: bytes.len(),
            }),
            Parsed::Invalid(error) => Err(error),
        }
    }
}

impl Message {
    /// A message of this id, class and data. Nothing is checked until it is encoded.
    #[must_use]
    pub fn new(id: u8, class: u8, data: impl Into<Vec<u8>>) -> Message {
        Message {
            id,
            class,
            data: data.into(),
        }
    }

    /// The message, lent (as [`Decoder::push_with`](super::Decoder::push_with) hands
    /// it).
    #[must_use]
    pub fn as_message_ref(&self) -> MessageRef<'_> {
        MessageRef {
            id: self.id,
            class: self.class,
            data: &self.data,
        }
    }

    /// The message's bytes on the wire: one standard frame if its data are at most
    /// [`MAX_PAYLOAD`] bytes, else pages of large frames (see [`try_encode_message`]).
    ///
    /// # Errors
    ///
    /// As [`try_encode_message`]: [`SerialError::ClassOutOfRange`],
    /// [`SerialError::TooLong`].
    pub fn try_encode(&self, transfer_id: u8) -> Result<Vec<u8>, SerialError> {
        try_encode_message(self.id, self.class, &self.data, transfer_id)
    }

    /// The message's bytes on the wire, as [`try_encode`](Self::try_encode).
    ///
    /// # Panics
    ///
    /// Where [`try_encode`](Self::try_encode) returns an error: a class with bit 0x80
    /// set, data over [`MAX_MESSAGE_LEN`] bytes.
    #[must_use]
    pub fn encode(&self, transfer_id: u8) -> Vec<u8> {
        encode_message(self.id, self.class, &self.data, transfer_id)
    }
}

/// The bytes on the wire of a message of this id, class and data.
///
/// Data of at most [`MAX_PAYLOAD`] (4086) bytes, none included, go in one standard
/// frame. Longer data go in large frames: class `class | 0x80`, each page's data
/// preceded by the transfer id (only its low 4 bits are sent), the page index and the
/// page count (u16 LE); every page but the last holds [`MAX_PAGE_DATA`] (4081) bytes.
///
/// # Errors
///
/// - [`SerialError::ClassOutOfRange`] if `class` has bit 0x80 set;
/// - [`SerialError::TooLong`] if `data` are over [`MAX_MESSAGE_LEN`] bytes (65535 full
///   pages).
pub fn try_encode_message(
    id: u8,
    class: u8,
    data: &[u8],
    transfer_id: u8,
) -> Result<Vec<u8>, SerialError> {
    check_class(class)?;
    if data.len() > MAX_MESSAGE_LEN {
        return Err(SerialError::TooLong {
            len: data.len(),
            max: MAX_MESSAGE_LEN,
        });
    }
    if data.len() <= MAX_PAYLOAD {
        let mut out = Vec::with_capacity(data.len() + FRAME_OVERHEAD);
        write_frame(&mut out, id, class, &[], data);
        return Ok(out);
    }
    let pages = data.len().div_ceil(MAX_PAGE_DATA);
    // At most 65535 pages, checked above.
    let count = u16::try_from(pages).unwrap_or(u16::MAX);
    let mut out = Vec::with_capacity(data.len() + pages * (FRAME_OVERHEAD + PAGE_HEADER_LEN));
    for (index, chunk) in (0..=u16::MAX).zip(data.chunks(MAX_PAGE_DATA)) {
        let header = page_header(transfer_id, index, count);
        write_frame(&mut out, id, class | LARGE_FRAME_BIT, &header, chunk);
    }
    Ok(out)
}

/// The bytes on the wire of a message, as [`try_encode_message`]: a message of at most
/// [`MAX_PAYLOAD`] (4086) bytes is one standard frame, a longer one pages of large
/// frames (transfer id: the low 4 bits of `transfer_id`).
///
/// # Panics
///
/// Where [`try_encode_message`] returns an error: a `class` with bit 0x80 set, `data`
/// over [`MAX_MESSAGE_LEN`] bytes.
///
/// ```
/// use svc_protocol::serial::{encode_message, CLASS_REST, ID_GET};
///
/// let bytes = encode_message(ID_GET, CLASS_REST, b"/api/v1/info\0\0", 0);
/// assert_eq!(bytes.len(), 14 + 9);
/// assert_eq!(encode_message(ID_GET, CLASS_REST, &[0; 4087], 0).len(), 4087 + 2 * 14);
/// ```
#[must_use]
pub fn encode_message(id: u8, class: u8, data: &[u8], transfer_id: u8) -> Vec<u8> {
    match try_encode_message(id, class, data, transfer_id) {
        Ok(bytes) => bytes,
        Err(error) => panic!("cannot encode an sbgECom message: {error}"),
    }
}

fn check_class(class: u8) -> Result<(), SerialError> {
    if class & LARGE_FRAME_BIT != 0 {
        Err(SerialError::ClassOutOfRange { class })
    } else {
        Ok(())
    }
}

fn page_header(transfer_id: u8, index: u16, count: u16) -> [u8; PAGE_HEADER_LEN] {
    let [i0, i1] = index.to_le_bytes();
    let [c0, c1] = count.to_le_bytes();
    [transfer_id & TRANSFER_ID_MASK, i0, i1, c0, c1]
}

/// The page header and data of a large frame's data; `None` if shorter than a header.
pub(crate) fn parse_page(data: &[u8]) -> Option<Page<'_>> {
    match data {
        [transfer, i0, i1, c0, c1, rest @ ..] => Some(Page {
            transfer_id: transfer & TRANSFER_ID_MASK,
            index: u16::from_le_bytes([*i0, *i1]),
            count: u16::from_le_bytes([*c0, *c1]),
            data: rest,
        }),
        _ => None,
    }
}

/// Appends one frame whose data are `header` then `data` (together at most
/// [`MAX_PAYLOAD`] bytes: the callers check).
fn write_frame(out: &mut Vec<u8>, id: u8, class: u8, header: &[u8], data: &[u8]) {
    let len = header.len() + data.len();
    debug_assert!(len <= MAX_PAYLOAD);
    let [l0, l1] = u16::try_from(len).unwrap_or(u16::MAX).to_le_bytes();
    out.reserve(len + FRAME_OVERHEAD);
    out.extend_from_slice(&[SYNC1, SYNC2, id, class, l0, l1]);
    let crc_start = out.len() - 4;
    out.extend_from_slice(header);
    out.extend_from_slice(data);
    let crc = crc16_kermit(&out[crc_start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    out.push(ETX);
}

/// What the bytes at a frame candidate hold.
pub(crate) enum Parsed {
    /// A valid frame of `len` bytes in all (its data are `[HEADER_LEN..len - 3]`).
    Frame { id: u8, class: u8, len: usize },
    /// A frame may start here, but at least `needed` bytes are needed to tell.
    Incomplete { needed: usize },
    /// No valid frame starts here.
    Invalid(SerialError),
}

/// Parses the frame candidate at the start of `bytes`. Checks, in order: sync, length
/// (as soon as the header is there, so a bogus length is refused at once), ETX, CRC.
pub(crate) fn parse(bytes: &[u8]) -> Parsed {
    match bytes {
        [] | [SYNC1] | [SYNC1, SYNC2, ..] => {}
        _ => return Parsed::Invalid(SerialError::BadSync),
    }
    let &[_, _, id, class, l0, l1, ..] = bytes else {
        return Parsed::Incomplete { needed: HEADER_LEN };
    };
    let len = usize::from(u16::from_le_bytes([l0, l1]));
    if len > MAX_PAYLOAD {
        return Parsed::Invalid(SerialError::BadLength { len });
    }
    let total = len + FRAME_OVERHEAD;
    let Some(frame) = bytes.get(..total) else {
        return Parsed::Incomplete { needed: total };
    };
    let end = HEADER_LEN + len;
    let etx = frame[end + 2];
    if etx != ETX {
        return Parsed::Invalid(SerialError::BadEtx { found: etx });
    }
    let received = u16::from_le_bytes([frame[end], frame[end + 1]]);
    let computed = crc16_kermit(&frame[2..end]);
    if computed != received {
        return Parsed::Invalid(SerialError::BadCrc { computed, received });
    }
    Parsed::Frame {
        id,
        class,
        len: total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_round_trip_and_errors() {
        let frame = Frame::new(7, 0x10, b"hello".to_vec());
        let bytes = frame.encode().unwrap();
        assert_eq!(bytes.len(), frame.encoded_len());
        let mut stream = bytes.clone();
        stream.extend_from_slice(b"tail");
        assert_eq!(Frame::decode(&stream), Ok((frame.clone(), bytes.len())));

        assert_eq!(Frame::decode(b"\x00\xff\x5a"), Err(SerialError::BadSync));
        assert_eq!(Frame::decode(b"\xff\x00"), Err(SerialError::BadSync));
        assert_eq!(
            Frame::decode(&bytes[..1]),
            Err(SerialError::Truncated {
                needed: HEADER_LEN,
                found: 1
            })
        );
        assert_eq!(
            Frame::decode(&bytes[..bytes.len() - 1]),
            Err(SerialError::Truncated {
                needed: bytes.len(),
                found: bytes.len() - 1
            })
        );
        let mut bad = bytes.clone();
        *bad.last_mut().unwrap() = 0x34;
        assert_eq!(
            Frame::decode(&bad),
            Err(SerialError::BadEtx { found: 0x34 })
        );
        let mut bad = bytes.clone();
        bad[7] ^= 1;
        assert!(matches!(
            Frame::decode(&bad),
            Err(SerialError::BadCrc { .. })
        ));
        let mut bad = bytes;
        bad[4] = 0xF7; // 4087
        bad[5] = 0x0F;
        assert_eq!(
            Frame::decode(&bad),
            Err(SerialError::BadLength { len: 4087 })
        );
    }

    #[test]
    fn frame_length_limits() {
        assert!(Frame::new(1, 2, vec![0; MAX_PAYLOAD]).encode().is_ok());
        assert_eq!(
            Frame::new(1, 2, vec![0; MAX_PAYLOAD + 1]).encode(),
            Err(SerialError::TooLong {
                len: 4087,
                max: 4086
            })
        );
        let mut out = vec![1];
        assert!(
            Frame::new(1, 2, vec![0; MAX_PAYLOAD + 1])
                .encode_into(&mut out)
                .is_err()
        );
        assert_eq!(out, [1], "nothing appended on error");
    }

    #[test]
    fn large_page_constructor() {
        let frame = Frame::large_page(48, 0x10, 0x13, 1, 3, b"xy").unwrap();
        assert!(frame.is_large());
        assert_eq!(frame.class, 0x90);
        assert_eq!(frame.message_class(), 0x10);
        assert_eq!(frame.data, [0x03, 1, 0, 3, 0, b'x', b'y']);
        assert_eq!(
            frame.page(),
            Ok(Page {
                transfer_id: 3,
                index: 1,
                count: 3,
                data: b"xy"
            })
        );
        assert_eq!(
            Frame::large_page(48, 0x90, 0, 0, 1, b""),
            Err(SerialError::ClassOutOfRange { class: 0x90 })
        );
        assert_eq!(
            Frame::large_page(48, 0x10, 0, 2, 2, b""),
            Err(SerialError::BadPage { index: 2, count: 2 })
        );
        assert!(Frame::large_page(48, 0x10, 0, 0, 2, &[0; MAX_PAGE_DATA]).is_ok());
        assert_eq!(
            Frame::large_page(48, 0x10, 0, 0, 2, &[0; MAX_PAGE_DATA + 1]),
            Err(SerialError::TooLong {
                len: 4082,
                max: 4081
            })
        );
        assert_eq!(
            Frame::new(48, 0x10, vec![]).page(),
            Err(SerialError::NotLargeFrame { class: 0x10 })
        );
        assert_eq!(
            Frame::new(48, 0x90, vec![0, 0, 0, 1]).page(),
            Err(SerialError::Truncated {
                needed: 5,
                found: 4
            })
        );
    }

    #[test]
    fn message_encoding_picks_standard_or_large() {
        assert_eq!(
            try_encode_message(1, 0x80, b"", 0),
            Err(SerialError::ClassOutOfRange { class: 0x80 })
        );
        let standard = encode_message(1, 2, &[9; MAX_PAYLOAD], 0);
        assert_eq!(standard.len(), MAX_PAYLOAD + FRAME_OVERHEAD);
        assert_eq!(standard[3], 2);

        let data: Vec<u8> = (0..MAX_PAGE_DATA * 2 + 10).map(|i| i as u8).collect();
        let large = encode_message(1, 2, &data, 0x1F);
        let mut rest = &large[..];
        let mut joined = Vec::new();
        for index in 0..3u16 {
            let (frame, len) = Frame::decode(rest).unwrap();
            rest = &rest[len..];
            assert_eq!(frame.class, 0x82);
            let page = frame.page().unwrap();
            assert_eq!((page.transfer_id, page.index, page.count), (0xF, index, 3));
            let expected = if index < 2 { MAX_PAGE_DATA } else { 10 };
            assert_eq!(page.data.len(), expected);
            joined.extend_from_slice(page.data);
        }
        assert!(rest.is_empty());
        assert_eq!(joined, data);
    }

    #[test]
    fn message_debug_hides_the_data() {
        let message = Message::new(48, 0x10, b"/api/v1/info\0auth=secret\0".to_vec());
        let shown = format!("{message:?}");
        assert_eq!(shown, "Message { id: 48, class: 0x10, data: <25 bytes> }");
        let frame = Frame::new(48, 0x90, b"secret".to_vec());
        assert_eq!(
            format!("{frame:?}"),
            "Frame { id: 48, class: 0x90, data: <6 bytes> }"
        );
    }
}
