//! One shared tokio runtime for the whole module, and [`block_on`]: run a future from a
//! Python call, the GIL released, Ctrl-C honoured.
//!
//! The runtime is a multi-thread runtime made on first use. A forked child (Python's
//! `os.fork`, `multiprocessing` with the fork start method) inherits the runtime's
//! memory but not its threads: the first use in the child sees another process id and
//! makes a new runtime, leaking the parent's (dropping it would wait for threads that
//! do not exist in the child).

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use tokio::runtime::Runtime;

/// How long [`block_on`] waits with the GIL released before it checks for signals
/// (Ctrl-C): a KeyboardInterrupt is raised within about this long.
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// The runtime and the process that made it.
struct Shared {
    pid: u32,
    runtime: Arc<Runtime>,
}

static RUNTIME: Mutex<Option<Shared>> = Mutex::new(None);

/// The module's runtime, made on first use and again in a forked child.
pub(crate) fn runtime() -> PyResult<Arc<Runtime>> {
    let pid = std::process::id();
    let mut shared = RUNTIME.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(current) = shared.as_ref()
        && current.pid == pid
    {
        return Ok(Arc::clone(&current.runtime));
    }
    let runtime = Arc::new(
        tokio::runtime::Builder::new_multi_thread()
            .thread_name("svc-sdk")
            .enable_all()
            .build()
            .map_err(|e| {
                PyRuntimeError::new_err(format!("could not start the async runtime: {e}"))
            })?,
    );
    if let Some(inherited) = shared.replace(Shared {
        pid,
        runtime: Arc::clone(&runtime),
    }) {
        // Made by the parent before a fork: its threads are not in this process.
        std::mem::forget(inherited);
    }
    Ok(runtime)
}

/// Runs `future` to completion on the module's runtime and returns its output, the GIL
/// released meanwhile (other Python threads run), checking for signals every
/// [`SIGNAL_SLICE`]: when a signal handler raises (Ctrl-C: `KeyboardInterrupt`), the
/// future is dropped (canceled) and the exception returned.
///
/// The future is polled on the calling thread, inside the runtime (its timers, sockets
/// and spawned tasks work), so it may borrow from the caller. Make it lazily (an `async`
/// block, an `async fn` call): a timer or socket made before this call, outside the
/// runtime, panics.
pub(crate) fn block_on<F>(py: Python<'_>, future: F) -> PyResult<F::Output>
where
    F: Future + Send,
    F::Output: Send,
{
    if tokio::runtime::Handle::try_current().is_ok() {
        // Called back from a task of the runtime itself: blocking here would stall it.
        return Err(PyRuntimeError::new_err(
            "svc_sdk: a blocking call was made from inside the SDK's own async runtime",
        ));
    }
    let runtime = runtime()?;
    crate::logs::sync(py);
    let mut future = std::pin::pin!(future);
    loop {
        let output = py.detach(|| {
            runtime.block_on(async {
                tokio::time::timeout(SIGNAL_SLICE, future.as_mut())
                    .await
                    .ok()
            })
        });
        // What the SDK logged meanwhile reaches `logging` on this thread.
        crate::logs::pump(py);
        if let Some(output) = output {
            return Ok(output);
        }
        // Runs the Python signal handlers (main thread only); Ctrl-C raises here and the
        // future is dropped on return.
        py.check_signals()?;
    }
}

/// Sleeps `seconds` on the runtime through [`block_on`] (a test of the GIL release,
/// Ctrl-C and fork handling; not API).
#[pyfunction]
fn _sleep(py: Python<'_>, seconds: f64) -> PyResult<()> {
    if !seconds.is_finite() || seconds < 0.0 {
        return Err(PyValueError::new_err(
            "seconds must be a finite number >= 0",
        ));
    }
    let duration = Duration::try_from_secs_f64(seconds)
        .map_err(|_| PyValueError::new_err("seconds is too large"))?;
    // An `async` block: the timer is made when first polled, inside the runtime.
    block_on(py, async move { tokio::time::sleep(duration).await })
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(_sleep, module)?)?;
    Ok(())
}
