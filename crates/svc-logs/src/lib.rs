//! Decoder (and encoder) of the sbgECom binary output logs of an SBG Systems inertial
//! navigation unit: what its data logger records in a session's files and what it
//! streams on its ports.
//!
//! - [`MessageKind`]: every binary output message, named as the unit's settings name
//!   them (`imuShort`, `ekfNav`, `gps1Pos`, ... the keys of `output.*.messages`), with
//!   its class and id;
//! - [`Record`]: the decoded payload, a typed struct per message (module
//!   [`records`]): every field the vendor documents, timestamps in µs since power-up,
//!   status words kept raw with accessors and constants for their bits and enums, the
//!   optional fields of newer protocol versions as `Option`;
//! - [`decode`] and its inverse [`encode`] (and [`encode_frame`] for the bytes on the
//!   wire, which the emulator uses to produce logs);
//! - [`LogReader`] (pull, from any `std::io::Read`, in bounded chunks) and
//!   [`LogDecoder`] (push, for a live stream): garbage, refused frames, unknown
//!   messages and a truncated end are skipped, counted ([`Stats`]) and located
//!   ([`Fault`]), never a panic, never a good frame lost after them;
//! - [`columns`]: the column titles and units the vendor's `sbgBasicLogger` writes for
//!   each message, for tables built from the records;
//! - [`json`]: a record as one line of JSON, keyed as its table's columns;
//! - [`tables`]: the records as Arrow tables, a batch per message every 65 536 rows,
//!   and [`files`]: those tables as CSV or (feature `parquet`) Parquet files.
//!
//! The framing (sync, CRC, large frames) is [`svc_protocol::serial`]'s. The layouts
//! follow the vendor's MIT-licensed `SBG-Systems/sbgECom` (release 5.2):
//! `doc/binaryMessages.md`, `src/logs/*.c` and `src/sbgEComIds.h`; where the prose
//! and the C code disagree (the ship motion status is a u16, the GNSS position payload
//! is 62 bytes long), the C code, which the units' own tools use, is followed.
//!
//! ```
//! use svc_logs::{LogReader, MessageKind, Record, encode_frame, records::EkfNav};
//!
//! let nav = EkfNav { timestamp: 1_000, position: [48.8, 2.3, 35.0], ..EkfNav::default() };
//! let mut log = b"garbage".to_vec();
//! log.extend(encode_frame(&Record::EkfNav(nav.clone()), 0)?);
//! let mut reader = LogReader::new(log.as_slice());
//! let record = reader.next_record()?.expect("one record");
//! assert_eq!(record.kind(), MessageKind::from_name("ekfNav").expect("known"));
//! assert_eq!(record, Record::EkfNav(nav));
//! assert_eq!(reader.stats().skipped_bytes, 7);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::expect_used))]

pub mod columns;
pub mod files;
pub mod json;
mod kind;
mod reader;
pub mod records;
pub mod tables;
mod wire;

pub use kind::{
    CLASS_LOG_ECOM_0, DecodeError, MessageKind, Record, UnknownMessageName, decode, decode_kind,
    encode, encode_frame,
};
pub use reader::{
    DEFAULT_CHUNK_LEN, Fault, Located, LogDecoder, LogReader, MAX_FAULTS, SessionInfoAssembler,
    Stats,
};
