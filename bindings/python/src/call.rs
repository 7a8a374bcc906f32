//! [`Call`]: one operation of the SDK running on the module's runtime, awaited from
//! synchronous Python ([`Call::result`]) or from asyncio ([`Call::add_done_callback`]
//! and [`Call::cancel`], used by `svc_sdk.aio`).
//!
//! Every networked method of the native classes returns a `Call`, so each operation is
//! written once: the synchronous facade calls `.result()`, the asyncio facade awaits a
//! future completed by the callback and cancels the call when its task is cancelled
//! (the Rust future is dropped: requests in flight are abandoned, transfers stopped).

use std::future::Future;
use std::sync::Mutex;

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use tokio::task::{AbortHandle, JoinError, JoinHandle};

use crate::errors::SvcErr;
use crate::runtime::{block_on, runtime};

/// What a finished operation gives: turned into a Python object (or exception) with
/// the GIL held, by whichever thread collects it.
pub(crate) type Output = Box<dyn FnOnce(Python<'_>) -> PyResult<Py<PyAny>> + Send>;

/// Where a call stands.
enum State {
    /// Under way; nobody waits for it yet.
    Running(JoinHandle<Output>),
    /// A done-callback waits for it.
    Watched,
    /// Ended; its output not yet collected.
    Ended(Result<Output, JoinError>),
    /// Its output was collected.
    Collected,
}

/// An operation under way. See the [module documentation](self).
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct Call {
    state: Mutex<State>,
    abort: AbortHandle,
}

impl Call {
    /// Runs `future` on the module's runtime; its output is converted to Python when
    /// collected.
    pub(crate) fn spawn<F>(future: F) -> PyResult<Self>
    where
        F: Future<Output = Output> + Send + 'static,
    {
        // The level of `logging` first: the task may log at once.
        Python::attach(crate::logs::sync);
        let task = runtime()?.spawn(future);
        Ok(Self {
            abort: task.abort_handle(),
            state: Mutex::new(State::Running(task)),
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The output of a finished task, or why there is none.
fn collect(py: Python<'_>, joined: Result<Output, JoinError>) -> PyResult<Py<PyAny>> {
    match joined {
        Ok(output) => output(py),
        Err(e) if e.is_cancelled() => {
            Err(SvcErr::new("canceled", "the operation was canceled").into_pyerr(py))
        }
        Err(e) => Err(
            SvcErr::new("internal", format!("the operation ended abnormally: {e}")).into_pyerr(py),
        ),
    }
}

#[pymethods]
impl Call {
    /// Waits for the operation (the GIL released; Ctrl-C cancels it and raises
    /// KeyboardInterrupt) and returns its result or raises its error.
    fn result(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let taken = std::mem::replace(&mut *self.state(), State::Collected);
        let mut task = match taken {
            State::Running(task) => task,
            State::Ended(joined) => {
                crate::logs::pump(py);
                return collect(py, joined);
            }
            State::Watched => {
                *self.state() = State::Watched;
                return Err(PyRuntimeError::new_err(
                    "this call is awaited by a done-callback; its result goes there",
                ));
            }
            State::Collected => {
                return Err(PyRuntimeError::new_err(
                    "this call's result was already taken",
                ));
            }
        };
        match block_on(py, &mut task) {
            Ok(joined) => collect(py, joined),
            Err(interrupt) => {
                task.abort();
                Err(interrupt)
            }
        }
    }

    /// Calls `callback(call)` from a thread of the runtime once the operation has
    /// ended; [`Call::result`] then returns at once. For asyncio: the callback hands the
    /// call to the event loop with `call_soon_threadsafe`.
    fn add_done_callback(slf: Py<Self>, py: Python<'_>, callback: Py<PyAny>) -> PyResult<()> {
        let taken = std::mem::replace(&mut *slf.get().state(), State::Watched);
        let State::Running(task) = taken else {
            *slf.get().state() = taken;
            return Err(PyRuntimeError::new_err(
                "a call takes one done-callback, before its result is taken",
            ));
        };
        let call = slf.clone_ref(py);
        runtime()?.spawn(async move {
            let joined = task.await;
            Python::attach(|py| {
                crate::logs::pump(py);
                *call.get().state() = State::Ended(joined);
                if let Err(e) = callback.call1(py, (call.clone_ref(py),)) {
                    e.write_unraisable(py, Some(callback.bind(py)));
                }
            });
        });
        Ok(())
    }

    /// Cancels the operation: its future is dropped at its next await point (requests
    /// in flight abandoned, transfers stopped, partial downloads removed).
    fn cancel(&self) {
        self.abort.abort();
    }

    /// Whether the operation has ended.
    fn done(&self) -> bool {
        self.abort.is_finished()
    }
}

/// An output that is a plain value converted with `convert`.
pub(crate) fn output<T, E>(
    result: Result<T, E>,
    convert: impl FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
    error: impl FnOnce(Python<'_>, E) -> PyErr + Send + 'static,
) -> Output
where
    T: Send + 'static,
    E: Send + 'static,
{
    Box::new(move |py| match result {
        Ok(value) => convert(py, value),
        Err(e) => Err(error(py, e)),
    })
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Call>()?;
    Ok(())
}
