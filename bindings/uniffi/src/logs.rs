//! The SDK's logs in the app's logger (Logcat, `os_log`): a [`LogSink`] the app
//! installs, fed by svc-core's `tracing` events through svc-core's forwarder
//! (`svc_core::logs`), which writes what svc-core's own instrumentation writes — never
//! a secret, token, password, signature, pre-signed query or settings value — and
//! nothing of the HTTP and TLS libraries.

use std::sync::Arc;

use svc_core::logs as sl;

use crate::error::{ListenerError, SvcError};

/// A log record's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, uniffi::Enum)]
pub enum LogLevel {
    Error,
    Warn,
    Info,
    Debug,
    Trace,
}

impl From<LogLevel> for tracing::Level {
    fn from(level: LogLevel) -> Self {
        match level {
            LogLevel::Error => Self::ERROR,
            LogLevel::Warn => Self::WARN,
            LogLevel::Info => Self::INFO,
            LogLevel::Debug => Self::DEBUG,
            LogLevel::Trace => Self::TRACE,
        }
    }
}

impl From<tracing::Level> for LogLevel {
    fn from(level: tracing::Level) -> Self {
        match level {
            tracing::Level::ERROR => Self::Error,
            tracing::Level::WARN => Self::Warn,
            tracing::Level::INFO => Self::Info,
            tracing::Level::DEBUG => Self::Debug,
            _ => Self::Trace,
        }
    }
}

/// One log record of the SDK.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct LogRecord {
    pub level: LogLevel,
    /// The SDK module that wrote it, e.g. `svc_core::cloud::auth` (a Logcat tag, an
    /// `os_log` category).
    pub target: String,
    /// `span{field=value}: message field=value …`.
    pub message: String,
}

/// Receives the SDK's log records, on the thread that logs (an SDK worker thread, or
/// the caller's): keep it quick (hand the record to Logcat or `os_log`, or queue it).
/// Whatever it throws is ignored; what it logs through the SDK while it runs is dropped.
#[uniffi::export(with_foreign)]
pub trait LogSink: Send + Sync {
    fn log(&self, record: LogRecord) -> Result<(), ListenerError>;
}

struct Sink(Arc<dyn LogSink>);

impl sl::LogSink for Sink {
    fn log(&self, record: sl::LogRecord) {
        let _ = self.0.log(LogRecord {
            level: record.level.into(),
            target: record.target,
            message: record.message,
        });
    }
}

/// Sends the SDK's records at `level` and above to `sink` from now on; `None` stops
/// sending them. Call it again to change the sink or the level.
///
/// Errors: `Internal` when another `tracing` subscriber was made the process's default
/// before (only possible if the app links other Rust code sharing this library's copy
/// of `tracing`).
#[uniffi::export]
pub fn set_log_sink(sink: Option<Arc<dyn LogSink>>, level: LogLevel) -> Result<(), SvcError> {
    let sink = sink.map(|s| Arc::new(Sink(s)) as Arc<dyn sl::LogSink>);
    sl::forward_globally(sink, level.into()).map_err(|e| SvcError::internal(e.to_string()))
}
