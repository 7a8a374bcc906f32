//! The crate's own multi-thread Tokio runtime, and the bridge from a foreign `async`
//! call to work spawned on it.
//!
//! uniffi polls a Rust future from the foreign side's executor; running svc-core's
//! work there would tie it to whichever thread polls. Instead each call spawns its
//! work here and awaits the task. Dropping the awaiting future (a cancelled Kotlin
//! coroutine, or a cancelled Swift `Task`: uniffi cancels then frees it) aborts the
//! task, so cancellation reaches svc-core.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::Runtime;
use tokio::task::{JoinError, JoinHandle};

use crate::error::SvcError;

static RUNTIME: OnceLock<Result<Runtime, String>> = OnceLock::new();

/// The runtime, built on first use (two worker threads at least).
pub(crate) fn runtime() -> Result<&'static Runtime, SvcError> {
    RUNTIME
        .get_or_init(|| {
            let workers = std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(2)
                .max(2);
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .thread_name("svc-ffi")
                .enable_all()
                .build()
                .map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|reason| SvcError::internal(format!("cannot start the async runtime: {reason}")))
}

/// Aborts the task when dropped before it finished.
struct AbortOnDrop<T>(JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn finished<T>(result: Result<Result<T, SvcError>, JoinError>) -> Result<T, SvcError> {
    match result {
        Ok(result) => result,
        Err(e) if e.is_cancelled() => Err(SvcError::canceled("the call was cancelled")),
        Err(e) => Err(SvcError::internal(format!(
            "the call's task ended abnormally: {e}"
        ))),
    }
}

/// Runs `work` on the crate's runtime and waits for it; dropping the returned future
/// (what the foreign side does with a cancelled coroutine or `Task`) aborts it.
pub(crate) async fn run<T, F>(work: F) -> Result<T, SvcError>
where
    F: Future<Output = Result<T, SvcError>> + Send + 'static,
    T: Send + 'static,
{
    let mut task = AbortOnDrop(runtime()?.spawn(work));
    finished((&mut task.0).await)
}

/// Runs `f` inside the runtime's context (for svc-core calls that spawn tasks
/// themselves and must be made from within a runtime).
pub(crate) fn enter<T>(f: impl FnOnce() -> T) -> Result<T, SvcError> {
    let _guard = runtime()?.enter();
    Ok(f())
}
