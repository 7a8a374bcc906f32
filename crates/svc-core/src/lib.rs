//! The hand-written facade of the SDK for the cloud GNSS/INS post-processing service.
//!
//! - [`error`]: [`ErrorKind`], the one classification of every error type below.
//! - [`cloud`]: the cloud service: credentials, tokens, every operation, typed errors.
//! - [`transfer`]: uploads to pre-signed forms and downloads of outputs, streamed, in
//!   parallel, with progress and cancellation.
//! - [`workflow`]: one call from local files to downloaded outputs.
//! - [`webhook`]: verify the signature and timestamp of a webhook delivery, then decode
//!   it into a typed [`WebhookEvent`]; sign deliveries (tests, emulator); with the
//!   `axum` feature (on by default), an extractor for Rust services.
//! - [`limits`]: the service's limits (metadata, container file paths, paging),
//!   checked before a request is sent. The emulator uses the same checks (both take
//!   them from the `svc-protocol` crate), so the SDK and the emulator refuse the same
//!   inputs with the same reasons.
//! - [`retry`]: retries with exponential backoff and jitter, bounded in count and time.
//! - [`serial`]: the sbgECom framing that carries the unit's REST API over a serial link
//!   (from `svc-protocol`, shared with the emulator).
//! - [`settings`]: settings trees as JSON with node paths; minimal diff, apply, 3-way merge.
//! - [`unit`](mod@unit): a session with a unit over HTTP or the serial link: login (and re-login
//!   after a reboot), settings read/write, apply a wanted tree, the rights matrix.
//!
//! Every module is instrumented with [`tracing`] (spans per operation and request,
//! retries, token requests, transfer progress, workflow steps, unit and serial link
//! events); no secret, token, password, signature or settings value is ever written.
//! Install a subscriber (e.g. `tracing-subscriber`) to see them.
//!
//! The wire types come from the generated crate `svc-cloud-api`; the ones these
//! modules take or return are re-exported here.
#![forbid(unsafe_code)]
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::expect_used))]

pub mod cloud;
pub mod error;
pub mod fleet;
mod observe;
pub mod retry;
pub mod settings;
pub mod transfer;
pub mod unit;
pub mod webhook;
pub mod workflow;

pub use error::ErrorKind;
pub use svc_cloud_api::notification::types::WebhookEvent;
pub use svc_cloud_api::{Metadata, WebhookSecret};
pub use svc_protocol::{limits, serial};
