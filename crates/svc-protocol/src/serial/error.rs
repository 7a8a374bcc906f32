//! The error type of the serial framing.

use super::{MAX_PAYLOAD, SYNC1, SYNC2};

/// Why a frame, a message or a REST exchange over the serial link could not be encoded
/// or decoded.
///
/// Messages never quote message data (a query can hold an `auth` token, a body a
/// password): only field names, lengths, ids and codes.
///
/// Errors about what the caller asked to *send* ([`TooLong`](Self::TooLong),
/// [`ClassOutOfRange`](Self::ClassOutOfRange), [`NulInField`](Self::NulInField),
/// [`BodyNotAllowed`](Self::BodyNotAllowed), [`BadPage`](Self::BadPage) from
/// [`Frame::large_page`](super::Frame::large_page), [`UnexpectedMessage`](Self::UnexpectedMessage)
/// from [`RestReply::to_message`](super::RestReply::to_message)) come back the same on
/// every retry.
/// The others are about *received* bytes: the link or the peer sent something else
/// than expected, and a retry of the request may help. [`Ack`](Self::Ack) is the unit
/// refusing a command; its code says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SerialError {
    /// The bytes do not start with the sync bytes `0xFF 0x5A`.
    #[error(
        "not an sbgECom frame: it does not start with the sync bytes {SYNC1:#04x} {SYNC2:#04x}"
    )]
    BadSync,
    /// Fewer bytes than the frame, page header or message layout needs.
    #[error("truncated: {needed} bytes needed, {found} present")]
    Truncated {
        /// How many bytes are needed (at least).
        needed: usize,
        /// How many are present.
        found: usize,
    },
    /// The length field of a frame is over [`MAX_PAYLOAD`].
    #[error("bad frame length {len}: a frame holds at most {MAX_PAYLOAD} data bytes")]
    BadLength {
        /// The length field.
        len: usize,
    },
    /// The CRC carried by a frame does not match its content.
    #[error("bad frame CRC: the frame carries {received:#06x}, its content gives {computed:#06x}")]
    BadCrc {
        /// The CRC computed over id, class, length and data.
        computed: u16,
        /// The CRC the frame carries.
        received: u16,
    },
    /// The byte after the CRC is not the end-of-frame byte `0x33`.
    #[error("bad end of frame: {found:#04x} in place of 0x33")]
    BadEtx {
        /// The byte found.
        found: u8,
    },
    /// A page header was asked of a standard frame (class without bit 0x80).
    #[error("not a large frame: class {class:#04x} lacks bit 0x80")]
    NotLargeFrame {
        /// The frame's class.
        class: u8,
    },
    /// A large-frame page whose index is not below its page count.
    #[error("bad large-frame page: index {index} of {count} pages")]
    BadPage {
        /// The page index.
        index: u16,
        /// The page count.
        count: u16,
    },
    /// Data too long for a frame ([`MAX_PAYLOAD`]), a page
    /// ([`MAX_PAGE_DATA`](super::MAX_PAGE_DATA)) or a message
    /// ([`MAX_MESSAGE_LEN`](super::MAX_MESSAGE_LEN)).
    #[error("too long: {len} bytes, at most {max}")]
    TooLong {
        /// The length.
        len: usize,
        /// The most allowed.
        max: usize,
    },
    /// A message class with bit 0x80 set: on the wire that bit marks a large frame.
    #[error("message class {class:#04x} out of range: a message class is below 0x80")]
    ClassOutOfRange {
        /// The class.
        class: u8,
    },
    /// The path or query of a request to send contains a NUL byte, which the
    /// NUL-separated layout cannot carry.
    #[error("the {field} contains a NUL byte")]
    NulInField {
        /// `"path"` or `"query"`.
        field: &'static str,
    },
    /// A received request or reply lacks the NUL that ends one of its fields.
    #[error("missing NUL after the {field}")]
    MissingNul {
        /// `"path"`, `"query"` or `"body"`.
        field: &'static str,
    },
    /// The path or query of a received request is not UTF-8.
    #[error("the {field} is not UTF-8")]
    NotUtf8 {
        /// `"path"` or `"query"`.
        field: &'static str,
    },
    /// Bytes after the last field of a received request or ACK.
    #[error("{len} unexpected bytes after the {field}")]
    TrailingData {
        /// The last field (`"query"` for a GET request, `"ack"` for an ACK).
        field: &'static str,
        /// How many bytes follow it.
        len: usize,
    },
    /// A GET request to send has a body; only POST carries one.
    #[error("a GET request carries no body")]
    BodyNotAllowed,
    /// A message of another id or class than expected (not a REST request or reply,
    /// a reply to another request, an ACK of another command).
    #[error("unexpected message: id {id} class {class:#04x}")]
    UnexpectedMessage {
        /// Its message id.
        id: u8,
        /// Its class.
        class: u8,
    },
    /// The unit answered a REST request with an ACK instead of a reply.
    #[error("the unit answered with an ACK (error code {error}) in place of a reply")]
    Ack {
        /// The ACK's error code (sbgECom error codes; 0 is "no error", still not a reply).
        error: u16,
    },
}

impl SerialError {
    /// [`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput) for a message
    /// this side cannot send (too long, a class out of range, a NUL in a field, a GET
    /// with a body); [`ErrorKind::InvalidResponse`](crate::error::ErrorKind::InvalidResponse)
    /// for bytes received that cannot be read.
    #[must_use]
    pub fn kind(&self) -> crate::error::ErrorKind {
        use crate::error::ErrorKind;
        match self {
            Self::TooLong { .. }
            | Self::ClassOutOfRange { .. }
            | Self::NulInField { .. }
            | Self::BodyNotAllowed => ErrorKind::InvalidInput,
            _ => ErrorKind::InvalidResponse,
        }
    }
}
