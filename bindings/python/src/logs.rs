//! The SDK's `tracing` events in Python's `logging`, under the loggers `svc_sdk.*`
//! named after the Rust modules (`svc_core::cloud::auth` → `svc_sdk.cloud.auth`,
//! `svc_emulator::…` → `svc_sdk.emulator.…`), levels mapped (`TRACE` is 5, below
//! `DEBUG`).
//!
//! svc-core's forwarder ([`svc_core::logs`]) turns each event into one line (spans,
//! message, fields; addresses without their query; the SDK logs no secret) and hands it
//! to [`Queue`], which only stores it: SDK threads never wait for the GIL. Records
//! reach `logging` on a Python thread, when a blocking call returns or between its
//! waiting slices, and when an asyncio call completes ([`pump`]).
//!
//! The level: before each call into the SDK ([`sync`]), the effective level of the
//! `svc_sdk` logger is read (one method call) and, when it changed, the forwarder is
//! told; events below it are never formatted. With `logging` at its default
//! (`WARNING`), the SDK's info and debug events cost nothing.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use svc_core::logs::{LogRecord, LogSink, forward_globally};
use tracing::Level;

/// Records kept while no Python thread takes them; beyond, the oldest are dropped (and
/// counted in a warning).
const CAPACITY: usize = 10_000;

/// The records waiting for a Python thread.
#[derive(Default)]
struct Queue {
    records: Mutex<VecDeque<LogRecord>>,
    dropped: AtomicU64,
}

impl LogSink for Queue {
    fn log(&self, record: LogRecord) {
        let mut records = self.records.lock().unwrap_or_else(PoisonError::into_inner);
        if records.len() >= CAPACITY {
            records.pop_front();
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
        records.push_back(record);
    }
}

fn queue() -> &'static Arc<Queue> {
    static QUEUE: OnceLock<Arc<Queue>> = OnceLock::new();
    QUEUE.get_or_init(|| Arc::new(Queue::default()))
}

/// The Python level last given to the forwarder (`i64::MIN`: none yet).
static SYNCED: AtomicI64 = AtomicI64::new(i64::MIN);

/// The most verbose tracing level a Python level lets through (`None`: above ERROR).
fn tracing_level(python: i64) -> Option<Level> {
    match python {
        ..=5 => Some(Level::TRACE),
        6..=10 => Some(Level::DEBUG),
        11..=20 => Some(Level::INFO),
        21..=30 => Some(Level::WARN),
        31..=40 => Some(Level::ERROR),
        _ => None,
    }
}

/// The Python level of a record.
fn python_level(level: Level) -> i64 {
    match level {
        Level::TRACE => 5,
        Level::DEBUG => 10,
        Level::INFO => 20,
        Level::WARN => 30,
        Level::ERROR => 40,
    }
}

/// The Python logger of a Rust target: `svc_core::cloud::auth` → `svc_sdk.cloud.auth`,
/// `svc_emulator::device` → `svc_sdk.emulator.device`.
fn logger_name(target: &str) -> String {
    let mut parts = target.split("::");
    let crate_name = parts.next().unwrap_or_default();
    let mut name = match crate_name.strip_prefix("svc_") {
        Some("core") | None => "svc_sdk".to_owned(),
        Some(other) => format!("svc_sdk.{other}"),
    };
    for part in parts {
        name.push('.');
        name.push_str(part);
    }
    name
}

/// `logging.getLogger("svc_sdk")`, looked up once.
fn root_logger(py: Python<'_>) -> PyResult<&Bound<'_, PyAny>> {
    static ROOT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    ROOT.get_or_try_init(py, || {
        Ok::<_, PyErr>(
            py.import("logging")?
                .getattr("getLogger")?
                .call1(("svc_sdk",))?
                .unbind(),
        )
    })
    .map(|logger| logger.bind(py))
}

/// Tells the forwarder the effective level of the `svc_sdk` logger, when it changed
/// (one Python method call otherwise). Errors are ignored: logging is never worth
/// failing a call for.
pub(crate) fn sync(py: Python<'_>) {
    let Ok(level) = root_logger(py)
        .and_then(|logger| logger.call_method0("getEffectiveLevel"))
        .and_then(|level| level.extract::<i64>())
    else {
        return;
    };
    if SYNCED.swap(level, Ordering::AcqRel) == level {
        return;
    }
    let sink = tracing_level(level).map(|_| queue().clone() as Arc<dyn LogSink>);
    let _ = forward_globally(sink, tracing_level(level).unwrap_or(Level::ERROR));
}

/// Hands the waiting records to their Python loggers, on this (Python) thread.
pub(crate) fn pump(py: Python<'_>) {
    let records: Vec<LogRecord> = {
        let mut waiting = queue()
            .records
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if waiting.is_empty() {
            return;
        }
        waiting.drain(..).collect()
    };
    let Ok(get_logger) = py.import("logging").and_then(|m| m.getattr("getLogger")) else {
        return;
    };
    let dropped = queue().dropped.swap(0, Ordering::Relaxed);
    if dropped > 0
        && let Ok(logger) = get_logger.call1(("svc_sdk",))
    {
        let _ = logger.call_method1(
            "warning",
            (format!(
                "{dropped} log records of the SDK were dropped (none was taken for a while)"
            ),),
        );
    }
    for record in records {
        if let Ok(logger) = get_logger.call1((logger_name(&record.target),)) {
            let _ = logger.call_method1("log", (python_level(record.level), record.message));
        }
    }
}

/// [`sync`] then [`pump`], for Python code that waits on the SDK by other means (a
/// test, or a long-running event loop): not API.
#[pyfunction]
fn _pump_logs(py: Python<'_>) {
    sync(py);
    pump(py);
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(_pump_logs, module)?)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_and_levels_map_to_python() {
        assert_eq!(logger_name("svc_core::cloud::auth"), "svc_sdk.cloud.auth");
        assert_eq!(logger_name("svc_core"), "svc_sdk");
        assert_eq!(
            logger_name("svc_emulator::device::unit"),
            "svc_sdk.emulator.device.unit"
        );
        assert_eq!(tracing_level(10), Some(Level::DEBUG));
        assert_eq!(tracing_level(30), Some(Level::WARN));
        assert_eq!(tracing_level(50), None);
        assert_eq!(tracing_level(0), Some(Level::TRACE));
        assert_eq!(python_level(Level::TRACE), 5);
    }
}
