//! Work running in a task of its own, seen from outside through any number of handles
//! ([`Running`]): every waiter gets the outcome (a clone of it), at any time and as often
//! as it asks; the work stops on a cancel, or when the last handle goes unless the
//! handles were detached. The workflow's and the transfers' handles are built on it.

use std::any::Any;
use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use futures::FutureExt as _;
use tokio::sync::watch;
use tokio_util::sync::{CancellationToken, DropGuard};

/// Work under way and its outcome once it has ended. Cheap to clone; the clones share
/// the work.
#[derive(Clone)]
pub(crate) struct Running<T, E> {
    outcome: watch::Receiver<Option<Result<T, E>>>,
    cancel: CancellationToken,
    /// Shared by the clones: dropped with the last one, it cancels the work, unless
    /// [`Running::detach`] took it out.
    guard: Arc<Mutex<Option<DropGuard>>>,
    /// The error of work that ended without an outcome (a panic, its runtime shut
    /// down).
    lost: fn(String) -> E,
}

impl<T, E> Running<T, E>
where
    T: Clone + Send + Sync + 'static,
    E: Clone + Send + Sync + 'static,
{
    /// Spawns `work`, which stops by itself once `cancel` is canceled; `lost` makes the
    /// error waiters get when the work panicked.
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub(crate) fn spawn<F>(cancel: CancellationToken, lost: fn(String) -> E, work: F) -> Self
    where
        F: Future<Output = Result<T, E>> + Send + 'static,
    {
        let (sender, outcome) = watch::channel(None);
        tokio::spawn(async move {
            let ended = AssertUnwindSafe(work)
                .catch_unwind()
                .await
                .unwrap_or_else(|panic| Err(lost(panic_message(panic.as_ref()))));
            sender.send_replace(Some(ended));
        });
        Self {
            outcome,
            guard: Arc::new(Mutex::new(Some(cancel.clone().drop_guard()))),
            cancel,
            lost,
        }
    }

    /// The outcome, once the work has ended.
    pub(crate) fn outcome(&self) -> Option<Result<T, E>> {
        if let Some(ended) = self.outcome.borrow().clone() {
            return Some(ended);
        }
        // The sending side is gone without an outcome: the task was dropped.
        self.outcome.has_changed().is_err().then(|| {
            Err((self.lost)(
                "it ended without an outcome (its runtime shut down)".to_owned(),
            ))
        })
    }

    /// Whether the work has ended ([`Running::wait`] answers at once).
    pub(crate) fn is_finished(&self) -> bool {
        self.outcome.borrow().is_some() || self.outcome.has_changed().is_err()
    }

    /// The outcome, once the work ends. Dropping this future stops only this wait.
    pub(crate) async fn wait(&self) -> Result<T, E> {
        let mut outcome = self.outcome.clone();
        // Ends when the outcome is there, or when the work is gone without one.
        let _ = outcome.wait_for(Option::is_some).await;
        self.outcome()
            .unwrap_or_else(|| Err((self.lost)("it ended without an outcome".to_owned())))
    }

    /// As [`Running::wait`], the caller's wait being the work's scope: dropped before
    /// the end (its caller cancelled: a coroutine, a task, a view going away), it
    /// cancels the work too, unless the handles were detached.
    pub(crate) async fn wait_or_cancel(&self) -> Result<T, E> {
        /// Cancels the work when dropped armed (see [`Running::cancel_unless_detached`]).
        struct Scope<'a, T, E> {
            running: &'a Running<T, E>,
            armed: bool,
        }
        impl<T, E> Drop for Scope<'_, T, E> {
            fn drop(&mut self) {
                if self.armed {
                    let _ = self.running.cancel_unless_detached();
                }
            }
        }
        let mut scope = Scope {
            running: self,
            armed: true,
        };
        let ended = self.wait().await;
        scope.armed = false;
        ended
    }

    /// As [`Running::wait`], for at most `timeout`: `None` when the work still runs
    /// then. Work that has ended by the deadline gives its outcome, even with a zero
    /// `timeout`.
    pub(crate) async fn wait_timeout(&self, timeout: Duration) -> Option<Result<T, E>> {
        match tokio::time::timeout(timeout, self.wait()).await {
            Ok(ended) => Some(ended),
            Err(_) => self.outcome(),
        }
    }
}

impl<T, E> Running<T, E> {
    /// Stops the work.
    pub(crate) fn cancel(&self) {
        self.cancel.cancel();
    }

    /// The caller's wait was cancelled: stops the work unless the handles were
    /// detached (what a dropped [`Running::wait_or_cancel`] does, for a wait made of
    /// several calls). Whether it stopped it.
    pub(crate) fn cancel_unless_detached(&self) -> bool {
        let attached = self
            .guard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some();
        if attached {
            self.cancel.cancel();
        }
        attached
    }

    /// The token that stops the work, for cancelers that do not keep it alive.
    pub(crate) fn token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// From now on, dropping the handles leaves the work running to its end (a cancel
    /// still stops it).
    pub(crate) fn detach(&self) {
        let guard = self
            .guard
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(guard) = guard {
            guard.disarm();
        }
    }
}

impl<T, E> fmt::Debug for Running<T, E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Running")
            .field("finished", &self.outcome.borrow().is_some())
            .field("canceled", &self.cancel.is_cancelled())
            .finish_non_exhaustive()
    }
}

/// What a panic said, for the error of the work it ended.
fn panic_message(panic: &(dyn Any + Send)) -> String {
    let said = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("no message");
    format!("it panicked: {said}")
}

#[cfg(test)]
mod tests {
    use super::*;

    type Work = Running<u32, String>;

    fn lost(reason: String) -> String {
        reason
    }

    #[tokio::test]
    async fn every_waiter_gets_the_outcome_and_later_waits_too() {
        let (go, gate) = tokio::sync::oneshot::channel::<()>();
        let work = Work::spawn(CancellationToken::new(), lost, async move {
            let _ = gate.await;
            Ok(7)
        });
        let other = work.clone();
        assert!(work.wait_timeout(Duration::ZERO).await.is_none());
        assert!(!work.is_finished());
        let waiters = tokio::spawn(async move { other.wait().await });
        let _ = go.send(());
        assert_eq!(work.wait().await, Ok(7));
        assert_eq!(waiters.await.ok(), Some(Ok(7)));
        assert!(work.is_finished());
        assert_eq!(work.wait_timeout(Duration::ZERO).await, Some(Ok(7)));
        assert_eq!(work.outcome(), Some(Ok(7)));
    }

    #[tokio::test]
    async fn a_cancelled_wait_of_several_calls_cancels_unless_detached() {
        for detached in [false, true] {
            let token = CancellationToken::new();
            let running: Running<u8, String> = Running::spawn(token, |m| m, async {
                std::future::pending::<()>().await;
                Ok(1)
            });
            if detached {
                running.detach();
            }
            assert_eq!(running.cancel_unless_detached(), !detached);
            assert_eq!(running.cancel.is_cancelled(), !detached);
            running.cancel();
        }
    }

    #[tokio::test]
    async fn a_scoped_wait_dropped_cancels_unless_detached() {
        for detached in [false, true] {
            let token = CancellationToken::new();
            let watched = token.clone();
            let running: Running<u8, String> = Running::spawn(token, |m| m, async move {
                watched.cancelled().await;
                Err("canceled".to_owned())
            });
            if detached {
                running.detach();
            }
            let waited =
                tokio::time::timeout(Duration::from_millis(20), running.wait_or_cancel()).await;
            assert!(waited.is_err(), "the work runs until canceled");
            assert_eq!(running.cancel.is_cancelled(), !detached);
            // A plain wait dropped leaves it as it is.
            let plain = tokio::time::timeout(Duration::from_millis(20), running.wait()).await;
            assert_eq!(plain.is_ok(), !detached, "{plain:?}");
        }
        // A scoped wait that sees the end cancels nothing.
        let token = CancellationToken::new();
        let running: Running<u8, String> = Running::spawn(token, |m| m, async { Ok(7) });
        assert_eq!(running.wait_or_cancel().await, Ok(7));
        assert!(!running.cancel.is_cancelled());
    }

    #[tokio::test]
    async fn the_last_handle_dropped_cancels_unless_detached() {
        for detached in [false, true] {
            let cancel = CancellationToken::new();
            let token = cancel.clone();
            let work = Work::spawn(cancel, lost, async move {
                token.cancelled().await;
                Err("canceled".to_owned())
            });
            let watched = work.token();
            let clone = work.clone();
            drop(work);
            assert!(!watched.is_cancelled(), "a clone remains");
            if detached {
                clone.detach();
            }
            drop(clone);
            assert_eq!(watched.is_cancelled(), !detached);
        }
    }

    #[tokio::test]
    async fn a_panic_is_the_waiters_error() {
        let work = Work::spawn(CancellationToken::new(), lost, async {
            if true {
                panic!("a callback failed");
            }
            Ok(0)
        });
        assert_eq!(
            work.wait().await,
            Err("it panicked: a callback failed".to_owned())
        );
    }
}
