//! Kotlin and Swift bindings of the SDK, through uniffi (proc-macros, library mode).
//!
//! Every exported method is a thin call into `svc-core`: arguments and results are
//! converted, nothing else. The rules of the boundary:
//!
//! - **No panic crosses it.** Constructors and methods return [`SvcError`]; inputs from
//!   the foreign side (identifiers, JSON, URLs) are parsed here and refused with an
//!   error, never unwrapped. Foreign callbacks (listeners, links, sinks, providers)
//!   return errors too, so that an exception thrown in one is a value here.
//! - **One multi-thread Tokio runtime** owned by this crate (module `runtime`) runs the
//!   work of every `async` method and everything svc-core spawns; the foreign side's
//!   future only awaits its result. A cancelled Kotlin coroutine or Swift `Task`
//!   frees that future, which aborts the work (Swift's generated code is made to
//!   cancel it by `bindings/uniffi/bindgen`).
//! - **Lifetimes**: the work of a `WorkflowTask` or `TransferTask` runs until it ends or
//!   `cancel()` is called, whatever happens to the object (a garbage collection) or to
//!   a `wait()`.
//! - **Types**: identifiers (`Uuid`) cross as strings, timestamps as `SystemTime`
//!   (Kotlin `Instant`, Swift `Date`), durations as `Duration` (Kotlin
//!   `java.time.Duration`, Swift `TimeInterval`), counts and sizes as signed integers,
//!   processing configurations as records (module `config`), settings trees as JSON
//!   strings, open enumerations as enums with an `Unknown(String)` case. Secrets (API secret, access
//!   tokens, webhook signing secrets, pre-signed addresses) are [`Secret`] objects, so
//!   that a record printed by the foreign side (Kotlin `data class`, Swift `struct`)
//!   does not show them.
//! - **Credentials**: a [`TokenProvider`] (the app's backend gives access tokens) or
//!   the API key and secret.
//! - **Logs**: svc-core's `tracing` events reach the app's [`LogSink`].
//! - **TLS**: [`TlsRoots`] chooses the bundled Mozilla roots (the default: works on a
//!   phone and on a system without CA certificates) or the platform verifier (on
//!   Android after `AndroidPlatform.init(context)`, a JNI call: module `android`).

// `unsafe` only where a trait of uniffi demands it (`bytes`) and for the one JNI entry
// point (`android`).
#![deny(unsafe_code)]
// `SvcError` carries its fields inline: that is the shape the foreign side sees
// (`e.status`, `e.nodeErrors`), and errors are rare next to the requests they end.
#![allow(clippy::result_large_err)]

uniffi::setup_scaffolding!("svc_ffi");

mod android;
mod bytes;
mod cloud;
mod config;
mod error;
mod live;
mod logs;
mod runtime;
mod settings;
mod token;
mod transfer;
mod types;
mod unit;
mod webhook;
mod workflow;

pub use cloud::{
    CloudClient, CloudConfig, ContainerPager, MissedWebhookPager, ProcessingPager, TlsRoots,
    WebhookEndpointPager,
};
pub use config::{
    ConfigBase, ConfigExport, ConfigProcessing, ConfigProject, ConfigReport, LeverArm,
    ProcessingConfig, ProjectConfig, ShorthandConfig, ShorthandGnss, ShorthandImu,
    ShorthandOutputs, processing_config_from_json, processing_config_to_json,
};
pub use error::{ErrorKind, ListenerError, NodeError, SvcError};
pub use live::{
    FixLevel, LiveItem, LiveRecord, LiveStats, LiveStream, LiveValue, Readiness, ReadyCriteria,
};
pub use logs::{LogLevel, LogRecord, LogSink, set_log_sink};
pub use settings::{
    SettingsConflict, SettingsMerge, SettingsPatch, SettingsTree, TreePatch, settings_apply,
    settings_diff, settings_merge,
};
pub use token::{AccessToken, TokenProvider, TokenProviderError};
pub use transfer::{
    FileProgress, FileReport, FileState, TransferListener, TransferOptions, TransferProgress,
    TransferReport, TransferTask, Transfers, UploadJob,
};
pub use types::*;
pub use unit::{ByteLink, InsUnit, LinkError, SerialOptions};
pub use webhook::Webhook;
pub use workflow::{
    ProcessingJob, Workflow, WorkflowListener, WorkflowOptions, WorkflowOutcome, WorkflowProgress,
    WorkflowProgressStream, WorkflowTask,
};
