//! Kotlin and Swift bindings of the SDK, through uniffi (proc-macros, library mode).
//!
//! Every exported method is a thin call into `svc-core`: arguments and results are
//! converted, nothing else. The rules of the boundary:
//!
//! - **No panic crosses it.** Constructors and methods return [`SvcError`]; inputs from
//!   the foreign side (identifiers, JSON, URLs) are parsed here and refused with an
//!   error, never unwrapped.
//! - **One multi-thread Tokio runtime** owned by this crate (module `runtime`) runs the
//!   work of every `async` method and everything svc-core spawns; the foreign side's
//!   future only awaits its result. Dropping that future (cancelling the Kotlin
//!   coroutine) aborts the work; uniffi's Swift futures are never dropped early, so the
//!   Swift package adds waits that cancel (`bindings/swift/Sources/SvcSdk`).
//! - **Types**: identifiers (`Uuid`) cross as strings, timestamps as `SystemTime`
//!   (Kotlin `Instant`, Swift `Date`), free-form JSON (processing configurations,
//!   settings trees) as JSON strings, open enumerations as enums with an
//!   `Unknown(String)` case. Secrets (API secret, webhook signing secret, pre-signed
//!   addresses) are [`Secret`] objects, so that a record printed by the foreign side
//!   (Kotlin `data class`, Swift `struct`) does not show them.
//! - **TLS**: [`TlsRoots`] chooses the bundled Mozilla roots (the default: works on a
//!   phone and on a system without CA certificates) or the platform verifier.

// `unsafe` only where a trait of uniffi demands it (`bytes`) and in the JNI entry
// point of the settings diff (`jni`).
#![deny(unsafe_code)]
// `SvcError` carries its fields inline: that is the shape the foreign side sees
// (`e.status`, `e.nodeErrors`), and errors are rare next to the requests they end.
#![allow(clippy::result_large_err)]

uniffi::setup_scaffolding!("svc_ffi");

mod bytes;
mod cloud;
mod error;
#[cfg(not(target_os = "ios"))]
mod jni;
mod runtime;
mod settings;
mod tls;
mod transfer;
mod types;
mod unit;
mod webhook;
mod workflow;

pub use cloud::{
    CloudClient, CloudConfig, ContainerPager, MissedWebhookPager, ProcessingPager,
    WebhookEndpointPager,
};
pub use error::{ListenerError, NodeError, SvcError};
pub use settings::{
    SettingsConflict, SettingsMerge, SettingsPatch, SettingsTree, TreePatch, settings_apply,
    settings_diff, settings_merge,
};
pub use tls::TlsRoots;
pub use transfer::{
    FileProgress, FileReport, FileState, TransferListener, TransferOptions, TransferProgress,
    TransferReport, TransferTask, Transfers, UploadJob,
};
pub use types::*;
pub use unit::{ByteLink, InsUnit, LinkError, SerialOptions};
pub use webhook::Webhook;
pub use workflow::{
    ProcessingJob, Workflow, WorkflowListener, WorkflowOptions, WorkflowOutcome, WorkflowProgress,
    WorkflowTask,
};
