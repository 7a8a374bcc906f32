//! Cancellation of `async` calls by the foreign task that awaits them, where uniffi's
//! generated code does not forward it.
//!
//! Kotlin: uniffi's generated code frees the Rust future when the coroutine awaiting it
//! is cancelled; dropping it aborts the work ([`crate::runtime::run`]). Nothing to do.
//!
//! Swift: uniffi 0.32's generated code never cancels a Rust future: a cancelled `Task`
//! keeps awaiting it until the work ends. It does poll the future from inside that
//! `Task`, though, synchronously (`pollFunc` runs in `withUnsafeContinuation`'s body):
//! so a call made during a poll can read the task's state. The Swift package installs a
//! [`TaskCancellation`] answering `Task.isCancelled` (`SvcSdk.enableTaskCancellation()`,
//! in `bindings/swift/Sources/SvcSdk/Cancellation.swift`); while it is installed, every
//! `async` call asks it at each poll and, while the work runs, wakes itself every
//! [`CHECK_EVERY`] to ask again. A cancelled task ends the call with `Canceled` and
//! aborts its work, as a dropped future does.

use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use crate::error::{ListenerError, SvcError};

/// How often a call in progress asks whether its foreign task was cancelled: a cancel
/// takes effect within this much time (a wake-up and a foreign call each time, a few
/// microseconds).
pub(crate) const CHECK_EVERY: Duration = Duration::from_millis(100);

/// Tells whether the foreign task making the current call was cancelled. Swift's is
/// `Task.isCancelled`; it is asked from the thread running the task, during a call into
/// the library.
#[uniffi::export(with_foreign)]
pub trait TaskCancellation: Send + Sync {
    /// Whether the task running on this thread was cancelled. What it throws counts as
    /// "not cancelled".
    fn is_cancelled(&self) -> Result<bool, ListenerError>;
}

static PROBE: RwLock<Option<Arc<dyn TaskCancellation>>> = RwLock::new(None);

/// Installs `probe` (or removes it, with `None`): from then on, every `async` call of
/// the library ends with `Canceled` when the probe says its task was cancelled. Swift's
/// `SvcSdk.enableTaskCancellation()` installs `Task.isCancelled`; Kotlin needs none.
#[uniffi::export]
pub fn set_task_cancellation(probe: Option<Arc<dyn TaskCancellation>>) {
    *PROBE.write().unwrap_or_else(PoisonError::into_inner) = probe;
}

/// The installed probe.
pub(crate) fn probe() -> Option<Arc<dyn TaskCancellation>> {
    PROBE.read().unwrap_or_else(PoisonError::into_inner).clone()
}

/// Whether `probe` says the current task was cancelled.
pub(crate) fn cancelled(probe: &dyn TaskCancellation) -> bool {
    probe.is_cancelled().unwrap_or(false)
}

/// Ends one wait early when fired: what Swift's `WorkflowTask.outcome()` and
/// `TransferTask.report()` fire from `withTaskCancellationHandler`, so that cancelling
/// the awaiting `Task` ends the wait at once, without polling. The wait then cancels the
/// work unless it was detached (the handle rule), and ends with `Canceled`.
#[derive(uniffi::Object)]
pub struct WaitSignal {
    fired: tokio::sync::watch::Sender<bool>,
}

#[uniffi::export]
impl WaitSignal {
    #[uniffi::constructor]
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            fired: tokio::sync::watch::Sender::new(false),
        })
    }

    /// Ends the wait given this signal (now, or at its start if it has not begun).
    pub fn fire(&self) {
        self.fired.send_replace(true);
    }
}

impl WaitSignal {
    /// `wait` (a handle's `wait_or_cancel`), ended with `Canceled` once fired: the
    /// wait is then dropped, which cancels the work unless it was detached.
    pub(crate) fn end<T, E>(
        &self,
        wait: impl std::future::Future<Output = Result<T, E>> + Send + 'static,
    ) -> impl std::future::Future<Output = Result<T, SvcError>> + Send + 'static
    where
        T: Send + 'static,
        E: Send + 'static,
        SvcError: From<E>,
    {
        let mut fired = self.fired.subscribe();
        let fired = async move {
            // An error: the sender is gone, so nothing will fire: wait forever.
            if fired.wait_for(|fired| *fired).await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        async move {
            tokio::select! {
                biased;
                ended = wait => Ok(ended?),
                () = fired => Err(SvcError::canceled("the wait was cancelled")),
            }
        }
    }
}
