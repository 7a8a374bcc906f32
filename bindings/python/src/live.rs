//! `svc_sdk.live`: a unit's output logs as they stream (`svc_core::live`), one record at
//! a time (a dict keyed as the tables' columns) or in batches of Arrow tables. Every
//! wait is a [`Call`], so the synchronous and asyncio facades share it and a cancelled
//! wait takes nothing from the stream.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use svc_core::live::{Closer, LiveError, LiveStats, LogStream, Subscribe};
use svc_logs::tables::Tables;

use crate::call::{Call, Output};
use crate::cloud::positive_seconds;
use crate::errors::SvcErr;
use crate::failures;
use crate::recordings::Recording;
use crate::runtime::block_on;

/// The stream and the tables its batches are built in (they keep the unit's clock and
/// UTC from one batch to the next).
struct Live {
    stream: LogStream,
    tables: Tables,
}

/// A subscription to a unit's output logs. See the [module documentation](self).
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct LiveStream {
    live: Arc<tokio::sync::Mutex<Live>>,
    closer: Closer,
    /// The counters after the last operation (readable while one waits).
    stats: Arc<Mutex<LiveStats>>,
    source: String,
    messages: Vec<String>,
    local_address: Option<String>,
}

impl LiveStream {
    pub(crate) fn new(stream: LogStream) -> Self {
        Self {
            closer: stream.closer(),
            stats: Arc::new(Mutex::new(stream.stats())),
            source: stream.source().to_owned(),
            messages: stream
                .messages()
                .iter()
                .map(|k| k.name().to_owned())
                .collect(),
            local_address: stream.local_addr().map(|a| a.to_string()),
            live: Arc::new(tokio::sync::Mutex::new(Live {
                stream,
                tables: Tables::new(),
            })),
        }
    }
}

/// The subscription `messages` (names as the unit's settings have them; `None`: all)
/// with a buffer of `capacity` frames.
pub(crate) fn subscribe_of(
    py: Python<'_>,
    messages: Option<Vec<String>>,
    capacity: usize,
) -> PyResult<Subscribe> {
    let messages = Subscribe::named(messages.unwrap_or_default())
        .map_err(|reason| SvcErr::new("invalid_input", reason).into_pyerr(py))?;
    if capacity == 0 {
        return Err(SvcErr::new("invalid_input", "capacity must be at least 1").into_pyerr(py));
    }
    Ok(Subscribe { messages, capacity })
}

fn stats_dict<'py>(py: Python<'py>, stats: &LiveStats) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item("frames", stats.frames)?;
    dict.set_item("records", stats.records)?;
    dict.set_item("dropped", stats.dropped)?;
    dict.set_item("unknown", stats.unknown)?;
    dict.set_item("undecodable", stats.undecodable)?;
    Ok(dict)
}

/// What one [`LiveStream::next`] gives, before it crosses into Python.
enum Next {
    Record(String),
    Dropped(u64),
    Timeout,
    End,
}

#[pymethods]
impl LiveStream {
    /// Where the records come from (a serial link, `udp 127.0.0.1:5600`, a file).
    #[getter]
    fn source(&self) -> &str {
        &self.source
    }

    /// For a UDP stream, the address it listens on (`host:port`).
    #[getter]
    fn local_address(&self) -> Option<String> {
        self.local_address.clone()
    }

    /// The messages subscribed to (empty: all).
    #[getter]
    fn messages(&self) -> Vec<String> {
        self.messages.clone()
    }

    /// The next item, waiting at most `timeout` seconds (`None`: until one comes), as
    /// `(kind, value)`: `("record", dict)`, `("dropped", frames)`, `("timeout", None)`
    /// or `("end", None)`; a failed source raises.
    #[pyo3(signature = (timeout=None))]
    fn next(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Call> {
        let wait = timeout
            .map(|t| positive_seconds(py, "timeout", t))
            .transpose()?;
        let live = Arc::clone(&self.live);
        let stats = Arc::clone(&self.stats);
        Call::spawn(async move {
            let mut live = live.lock().await;
            let next = live.stream.next_record();
            let item = match wait {
                Some(wait) => tokio::time::timeout(wait, next).await.ok(),
                None => Some(next.await),
            };
            let next = match item {
                None => Ok(Next::Timeout),
                Some(None) => Ok(Next::End),
                Some(Some(Ok(record))) => Ok(Next::Record(svc_logs::json::record_json(&record))),
                Some(Some(Err(LiveError::Dropped { frames }))) => Ok(Next::Dropped(frames)),
                Some(Some(Err(e))) => Err(e),
            };
            *stats.lock().unwrap_or_else(PoisonError::into_inner) = live.stream.stats();
            drop(live);
            let output: Output = Box::new(move |py| match next {
                Ok(Next::Record(json)) => {
                    let value: serde_json::Value = serde_json::from_str(&json).map_err(|e| {
                        SvcErr::new("internal", format!("a record as JSON: {e}")).into_pyerr(py)
                    })?;
                    let dict = crate::cloud::json(py, value)?;
                    Ok(("record", dict).into_pyobject(py)?.into_any().unbind())
                }
                Ok(Next::Dropped(frames)) => {
                    Ok(("dropped", frames).into_pyobject(py)?.into_any().unbind())
                }
                Ok(Next::Timeout) => Ok(("timeout", py.None())
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()),
                Ok(Next::End) => Ok(("end", py.None()).into_pyobject(py)?.into_any().unbind()),
                Err(e) => Err(failures::live(py, e)),
            });
            output
        })
    }

    /// Waits at most `timeout` seconds for the first frame, then takes up to
    /// `max_records` waiting frames as rows of Arrow tables: a `Recording` whose
    /// `stats` are `records`, `frames`, `dropped` and `ended` (1 when the source ended
    /// cleanly). A failed source raises (after the batches before it).
    #[pyo3(signature = (max_records=65_536, timeout=1.0))]
    fn batch(&self, py: Python<'_>, max_records: usize, timeout: f64) -> PyResult<Call> {
        let wait = positive_seconds(py, "timeout", timeout)?;
        let live = Arc::clone(&self.live);
        let stats = Arc::clone(&self.stats);
        Call::spawn(async move {
            let mut guard = live.lock().await;
            let Live { stream, tables } = &mut *guard;
            let filled = stream.fill(tables, max_records.max(1), wait).await;
            let result = filled.map_err(|e| e.to_string()).and_then(|filled| {
                let counters = BTreeMap::from([
                    ("records", filled.records),
                    ("frames", filled.frames),
                    ("dropped", filled.dropped),
                    ("ended", u64::from(filled.ended)),
                ]);
                Recording::take_from(tables, counters)
            });
            *stats.lock().unwrap_or_else(PoisonError::into_inner) = stream.stats();
            drop(guard);
            let output: Output = Box::new(move |py| match result {
                Ok(recording) => Ok(Py::new(py, recording)?.into_any()),
                Err(reason) => Err(SvcErr::new("unreachable", reason).into_pyerr(py)),
            });
            output
        })
    }

    /// The counters: `frames`, `records`, `dropped`, `unknown`, `undecodable`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = *self.stats.lock().unwrap_or_else(PoisonError::into_inner);
        stats_dict(py, &stats)
    }

    /// Ends the subscription (a wait under way returns `("end", None)`).
    fn close(&self) {
        self.closer.close();
    }

    fn __repr__(&self) -> String {
        format!(
            "LiveStream(source={:?}, messages={:?})",
            self.source, self.messages
        )
    }
}

/// Listens on a UDP address for a unit's Ethernet output.
#[pyfunction]
#[pyo3(signature = (address, messages=None, capacity=8192))]
fn live_udp(
    py: Python<'_>,
    address: String,
    messages: Option<Vec<String>>,
    capacity: usize,
) -> PyResult<LiveStream> {
    let subscribe = subscribe_of(py, messages, capacity)?;
    let stream =
        block_on(py, LogStream::udp(&address, subscribe))?.map_err(|e| failures::live(py, e))?;
    Ok(LiveStream::new(stream))
}

/// Reads a log file from its start, then as it grows.
#[pyfunction]
#[pyo3(signature = (path, messages=None, capacity=8192, idle_end=None))]
fn live_follow(
    py: Python<'_>,
    path: std::path::PathBuf,
    messages: Option<Vec<String>>,
    capacity: usize,
    idle_end: Option<f64>,
) -> PyResult<LiveStream> {
    let subscribe = subscribe_of(py, messages, capacity)?;
    let idle_end: Option<Duration> = idle_end
        .map(|s| positive_seconds(py, "idle_end", s))
        .transpose()?;
    let stream =
        block_on(py, LogStream::follow(&path, subscribe, idle_end))?.map_err(|e| match &e {
            LiveError::Closed { reason } if !path.exists() => {
                SvcErr::new("not_found", reason.clone()).into_pyerr(py)
            }
            _ => failures::live(py, e),
        })?;
    Ok(LiveStream::new(stream))
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<LiveStream>()?;
    module.add_function(wrap_pyfunction!(live_udp, module)?)?;
    module.add_function(wrap_pyfunction!(live_follow, module)?)?;
    // The signatures above write it as a literal (for their text signatures).
    const _: () = assert!(svc_core::live::DEFAULT_CAPACITY == 8192);
    module.add("DEFAULT_LIVE_CAPACITY", svc_core::live::DEFAULT_CAPACITY)?;
    Ok(())
}

/// What the output logs said of the unit's readiness, for Python.
pub(crate) fn readiness_dict(
    py: Python<'_>,
    readiness: &svc_core::live::Readiness,
) -> PyResult<Py<PyAny>> {
    let dict = PyDict::new(py);
    match readiness.fix {
        None => dict.set_item("fix", py.None())?,
        Some(None) => dict.set_item("fix", "none")?,
        Some(Some(fix)) => dict.set_item("fix", fix.name())?,
    }
    dict.set_item("filter", readiness.filter.map(|mode| format!("{mode:?}")))?;
    dict.set_item("utc_valid", readiness.utc_valid)?;
    Ok(dict.into_any().unbind())
}
