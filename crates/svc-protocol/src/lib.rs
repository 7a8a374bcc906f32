//! What both sides of the wire must agree on, and nothing more.
//!
//! The SDK (`svc-core`) and the local emulator (`svc-emulator`) talk to each other only
//! through the specifications: the OpenAPI documents under `openapi/` (whose generated
//! types live in `svc-cloud-api` and `ins-device-api`) and the few rules that are not
//! expressed there. Those rules live here, once:
//!
//! - [`serial`]: the sbgECom framing that carries the unit's REST API over a serial
//!   link (frames, large frames, CRC, REST requests and replies, ACKs);
//! - [`limits`]: the service's limits (metadata, container file paths, paging): the
//!   SDK checks them before sending, the emulator refuses the same inputs with the same
//!   reasons;
//! - [`webhook`]: how a webhook delivery is signed and the names of its headers: the
//!   emulator's notification service signs, the SDK verifies;
//! - [`processing_config`]: the processing configuration a start submits, typed: the
//!   SDK checks it before uploading, the emulator's engine reads it;
//! - [`error`]: [`ErrorKind`], the classification the errors above report with
//!   `kind()` (the SDK's other errors use it too).
//!
//! The emulator is a second implementation of the specifications, not a copy of the
//! SDK: it depends on this crate and on the generated crates, never on `svc-core`, so
//! that an SDK bug cannot be hidden by the emulator sharing the same logic. Anything
//! added here must be a piece of the wire protocol itself, not client or server
//! behaviour. `svc-core` re-exports every module at its old path (`svc_core::serial`,
//! `svc_core::limits`, `svc_core::webhook::sign`, `svc_core::ErrorKind`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::expect_used))]

pub mod error;
pub mod limits;
pub mod processing_config;
pub mod serial;
pub mod webhook;

pub use error::ErrorKind;
