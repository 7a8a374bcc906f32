//! The hand-written facade of the SDK for the cloud GNSS/INS post-processing service.
//!
//! - [`error`]: [`ErrorKind`], the one classification of every error type below.
//! - [`cloud`]: the cloud service: credentials, tokens, every operation, typed errors.
//! - [`transfer`]: uploads to pre-signed forms and downloads of outputs, streamed, in
//!   parallel, with progress and cancellation.
//! - [`workflow`]: one call from local files to downloaded outputs.
//! - [`trajectory`]: a processing's trajectory read back (SBET, `trajectory.csv`, the
//!   ASCII export) and two trajectories compared along and across the track.
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
//! - [`live`]: the output logs a unit streams (on its serial link, as UDP datagrams,
//!   into a file being written) as subscriptions of typed records.
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
#![cfg_attr(docsrs, feature(doc_cfg))]
#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::expect_used))]

pub mod cloud;
pub mod error;
pub mod fleet;
pub mod http;
pub mod live;
mod observe;
pub mod retry;
pub mod settings;
mod task;
pub mod trajectory;
pub mod transfer;
pub mod unit;
pub mod webhook;
pub mod workflow;

pub use error::{ErrorKind, Side};
/// The SDK's `tracing` events forwarded to an application's logger.
pub use observe::forward as logs;

/// `address` as it may be shown or logged: without user information, query or fragment
/// (a pre-signed address carries its signature in the query; credentials may be written
/// into any address). What the SDK's `Debug` outputs and `tracing` events write.
///
/// ```
/// assert_eq!(
///     svc_core::shown_address("https://me:pw@cloud.example.com/x?X-Amz-Signature=abc"),
///     "https://cloud.example.com/x",
/// );
/// assert_eq!(svc_core::shown_address("http://unit:8080"), "http://unit:8080");
/// assert_eq!(svc_core::shown_address("http://unit/"), "http://unit/");
/// assert_eq!(svc_core::shown_address("http://unit?token=t"), "http://unit");
/// assert_eq!(svc_core::shown_address("http://unit/a/?token=t"), "http://unit/a/");
/// ```
pub fn shown_address(address: &str) -> String {
    let shown = observe::url(address);
    // The parser writes an empty path as `/`: not added to an address without one.
    let after_scheme = address.split_once("://").map_or(address, |(_, rest)| rest);
    let has_path = after_scheme
        .find(['/', '?', '#'])
        .is_some_and(|at| after_scheme[at..].starts_with('/'));
    match shown.strip_suffix('/') {
        Some(trimmed) if !has_path => trimmed.to_owned(),
        _ => shown,
    }
}
pub use svc_cloud_api::notification::types::WebhookEvent;
pub use svc_cloud_api::{Metadata, WebhookSecret};
pub use svc_protocol::{limits, processing_config, serial};
