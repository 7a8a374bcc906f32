//! The sbgECom framing that carries the unit's REST API over a serial (UART) link.
//!
//! Pure and synchronous: bytes in, bytes out. The transports (a serial port, a pty, a
//! TCP bridge) and the emulated unit are built on top of it.
//!
//! - **Frame**: `0xFF 0x5A`, message id (u8), class (u8), length (u16 LE, 0..=4086),
//!   data, CRC (u16 LE), `0x33`. The CRC is [`crc16_kermit`] over id, class, length
//!   and data. See [`Frame`].
//! - **Large frames**: a message of more than 4086 data bytes goes in pages: class bit
//!   0x80 set, data = transfer id (u8, low 4 bits), page index (u16 LE), page count
//!   (u16 LE), then at most 4081 data bytes; pages in order, every page but the last
//!   full. [`encode_message`] picks standard or large frames; the [`Decoder`]
//!   reassembles whole [`Message`]s and skips what is not a valid frame.
//! - **REST over serial**: class 0x10; GET is id 48 (older firmware: 46), POST id 47.
//!   [`RestRequest`] data are `path NUL query NUL` (GET) or `path NUL query NUL body
//!   NUL` (POST), the path with `/api/v1`, the query without `?`. The [`RestReply`]
//!   has the request's class and id, data = status (u16 LE), body, NUL. An [`Ack`]
//!   (id 0) in place of a reply is an error: [`decode_reply`] returns
//!   [`SerialError::Ack`].
//!
//! A request/reply exchange, the unit's side played by hand:
//!
//! ```
//! use svc_protocol::serial::{decode_reply, Decoder, RestReply, RestRequest};
//!
//! // The SDK sends a request.
//! let request = RestRequest::get("/api/v1/info", "");
//! let on_the_wire = request.encode(0);
//!
//! // The unit decodes it and answers.
//! let mut unit = Decoder::new();
//! unit.push(&on_the_wire);
//! let received = unit.next_message().expect("a whole message");
//! assert_eq!(RestRequest::decode(&received)?, request);
//! let answer = RestReply::new(200, br#"{"apiVersion":"1.3"}"#.to_vec()).encode(received.id, 0);
//!
//! // The SDK reads the reply, in whatever chunks the link gives.
//! let mut sdk = Decoder::new();
//! for chunk in answer.chunks(7) {
//!     sdk.push(chunk);
//! }
//! let reply = decode_reply(&sdk.next_message().expect("a whole message"), request.id())?;
//! assert_eq!((reply.status, reply.body.as_slice()), (200, &br#"{"apiVersion":"1.3"}"#[..]));
//! # Ok::<(), svc_protocol::serial::SerialError>(())
//! ```

mod crc;
mod decoder;
mod error;
mod frame;
mod rest;

pub use crc::crc16_kermit;
pub use decoder::{Decoder, DecoderStats, Messages};
pub use error::SerialError;
pub use frame::{Frame, Message, MessageRef, Page, encode_message, try_encode_message};
pub use rest::{Ack, Method, RestReply, RestRequest, decode_reply};

/// First sync byte of every frame.
pub const SYNC1: u8 = 0xFF;

/// Second sync byte of every frame.
pub const SYNC2: u8 = 0x5A;

/// The two sync bytes that start every frame.
pub const SYNC: [u8; 2] = [SYNC1, SYNC2];

/// The byte that ends every frame (ETX).
pub const ETX: u8 = 0x33;

/// Most data bytes in one frame (its length field): 4086.
pub const MAX_PAYLOAD: usize = 4086;

/// Size of the page header of a large frame: transfer id (u8), page index (u16),
/// page count (u16).
pub const PAGE_HEADER_LEN: usize = 5;

/// Most message data bytes in one page of a large frame: 4081 (4086 minus the page
/// header).
pub const MAX_PAGE_DATA: usize = MAX_PAYLOAD - PAGE_HEADER_LEN;

/// Bytes of a frame besides its data: sync (2), id, class, length (2), CRC (2), ETX.
pub const FRAME_OVERHEAD: usize = 9;

/// Longest frame on the wire: 4095 bytes.
pub const MAX_FRAME_LEN: usize = MAX_PAYLOAD + FRAME_OVERHEAD;

/// Longest message: 65535 pages of 4081 bytes.
pub const MAX_MESSAGE_LEN: usize = u16::MAX as usize * MAX_PAGE_DATA;

/// Class bit marking a page of a large frame.
pub const LARGE_FRAME_BIT: u8 = 0x80;

/// The bits of the transfer id byte that are used.
pub const TRANSFER_ID_MASK: u8 = 0x0F;

/// Class of the REST-over-serial messages (and of ACKs).
pub const CLASS_REST: u8 = 0x10;

/// Message id of a POST request (and of its reply).
pub const ID_POST: u8 = 47;

/// Message id of a GET request (and of its reply).
pub const ID_GET: u8 = 48;

/// Message id of a GET request on older firmware; still accepted as GET.
pub const ID_GET_LEGACY: u8 = 46;

/// Message id of an ACK.
pub const ID_ACK: u8 = 0;

/// Bytes before a frame's data: sync (2), id, class, length (2).
const HEADER_LEN: usize = 6;
