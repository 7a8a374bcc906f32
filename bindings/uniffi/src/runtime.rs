//! The crate's own multi-thread Tokio runtime, and the bridge from a foreign `async`
//! call to work spawned on it.
//!
//! uniffi polls a Rust future from the foreign side's executor; running svc-core's
//! work there would tie it to whichever thread polls. Instead each call spawns its
//! work here and awaits the task. Dropping the awaiting future (a cancelled Kotlin
//! coroutine) aborts the task, so cancellation reaches svc-core; a cancelled Swift
//! `Task` does the same through [`crate::cancel`].

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::{Context, Poll};

use tokio::runtime::Runtime;
use tokio::task::{JoinError, JoinHandle};
use tokio::time::Sleep;

use crate::cancel::{self, CHECK_EVERY, TaskCancellation};
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

/// The awaiting side of [`run`]: the task's result, unless the foreign task that awaits
/// it is cancelled first (when a [`TaskCancellation`] is installed).
struct Awaited<T> {
    task: AbortOnDrop<Result<T, SvcError>>,
    probe: Option<Arc<dyn TaskCancellation>>,
    /// Wakes the call to ask the probe again while the work runs.
    tick: Option<Pin<Box<Sleep>>>,
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

impl<T> Future for Awaited<T> {
    type Output = Result<T, SvcError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Poll::Ready(result) = Pin::new(&mut this.task.0).poll(cx) {
            return Poll::Ready(finished(result));
        }
        let Some(probe) = &this.probe else {
            return Poll::Pending;
        };
        // This poll runs inside the foreign task (see `cancel`): ask it.
        if cancel::cancelled(probe.as_ref()) {
            this.task.0.abort();
            return Poll::Ready(Err(SvcError::canceled(
                "the call was cancelled (its task was cancelled)",
            )));
        }
        if this.tick.is_none()
            && let Ok(rt) = runtime()
        {
            // Created inside the runtime (its timer); polled from anywhere.
            let _inside = rt.enter();
            this.tick = Some(Box::pin(tokio::time::sleep(CHECK_EVERY)));
        }
        let Some(tick) = this.tick.as_mut() else {
            return Poll::Pending;
        };
        while tick.as_mut().poll(cx).is_ready() {
            let next = tokio::time::Instant::now() + CHECK_EVERY;
            tick.as_mut().reset(next);
        }
        Poll::Pending
    }
}

/// Runs `work` on the crate's runtime and waits for it; dropping the returned future
/// aborts it, and so does the cancellation of the foreign task awaiting it.
pub(crate) async fn run<T, F>(work: F) -> Result<T, SvcError>
where
    F: Future<Output = Result<T, SvcError>> + Send + 'static,
    T: Send + 'static,
{
    Awaited {
        task: AbortOnDrop(runtime()?.spawn(work)),
        probe: cancel::probe(),
        tick: None,
    }
    .await
}

/// Runs `f` inside the runtime's context (for svc-core calls that spawn tasks
/// themselves and must be made from within a runtime).
pub(crate) fn enter<T>(f: impl FnOnce() -> T) -> Result<T, SvcError> {
    let _guard = runtime()?.enter();
    Ok(f())
}
