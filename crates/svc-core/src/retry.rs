//! Retries with exponential backoff and jitter, bounded by a number of attempts and by
//! a total time. What may be retried is the caller's decision (the service's error
//! table: 500, connection errors and timeouts — never 400, 401, 403, 409 or 422).

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

/// How often and how long to retry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in all, the first included (1 = no retry).
    pub max_attempts: u32,
    /// The delay before the first retry; it doubles with each retry.
    pub base_delay: Duration,
    /// The longest delay between two attempts.
    pub max_delay: Duration,
    /// No retry starts once this much time has passed since the first attempt.
    pub max_elapsed: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(200),
            max_delay: Duration::from_secs(5),
            max_elapsed: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retry at all.
    pub const NONE: RetryPolicy = RetryPolicy {
        max_attempts: 1,
        base_delay: Duration::ZERO,
        max_delay: Duration::ZERO,
        max_elapsed: Duration::ZERO,
    };

    /// The delay before retry number `retry` (1 for the first retry): "full jitter",
    /// a random share of `min(max_delay, base_delay · 2^(retry-1))`, so that clients
    /// that failed together do not come back together.
    pub fn delay(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(1u32 << retry.saturating_sub(1).min(20));
        let ceiling = exp.min(self.max_delay);
        ceiling.mul_f64(jitter())
    }

    /// Runs `attempt` until it succeeds, fails with an error `retryable` rejects, or
    /// the policy's attempts or time are used up; the last error is returned.
    ///
    /// Each retry is logged (`tracing`, info) with the attempt number and the delay.
    pub async fn run<T, E, F, Fut>(
        &self,
        attempt: F,
        retryable: impl Fn(&E) -> bool,
    ) -> Result<T, E>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        self.run_explained(attempt, retryable, |_| "a retryable failure".to_owned())
            .await
    }

    /// As [`RetryPolicy::run`]; each retry is logged with `explain(error)` as its
    /// reason (which must hold no secret: the errors of this crate hold none).
    pub(crate) async fn run_explained<T, E, F, Fut>(
        &self,
        mut attempt: F,
        retryable: impl Fn(&E) -> bool,
        explain: impl Fn(&E) -> String,
    ) -> Result<T, E>
    where
        F: FnMut(u32) -> Fut,
        Fut: Future<Output = Result<T, E>>,
    {
        let started = Instant::now();
        let mut number = 1;
        loop {
            match attempt(number).await {
                Ok(value) => return Ok(value),
                Err(e) => {
                    let delay = self.delay(number);
                    let out_of_time = started.elapsed() + delay > self.max_elapsed;
                    if number >= self.max_attempts || out_of_time || !retryable(&e) {
                        if number > 1 {
                            tracing::debug!(
                                attempts = number,
                                out_of_time,
                                reason = %explain(&e),
                                "giving up"
                            );
                        }
                        return Err(e);
                    }
                    tracing::info!(
                        attempt = number,
                        max_attempts = self.max_attempts,
                        delay_ms = crate::observe::millis(delay),
                        reason = %explain(&e),
                        "retrying after a transient failure"
                    );
                    tokio::time::sleep(delay).await;
                    number += 1;
                }
            }
        }
    }
}

/// A factor in [0.5, 1): enough spread to break lockstep, never a zero wait.
pub(crate) fn jitter() -> f64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0.75;
    }
    0.5 + (u64::from_le_bytes(bytes) >> 11) as f64 / (1u64 << 53) as f64 / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    fn quick(max_attempts: u32) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            base_delay: Duration::from_millis(1),
            max_delay: Duration::from_millis(4),
            max_elapsed: Duration::from_secs(5),
        }
    }

    #[test]
    fn delays_double_up_to_the_cap_with_jitter() {
        let p = RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
            max_elapsed: Duration::from_secs(60),
        };
        for (retry, ceiling) in [(1, 100), (2, 200), (3, 400), (4, 800), (5, 1000), (9, 1000)] {
            let d = p.delay(retry);
            assert!(
                d >= Duration::from_millis(ceiling / 2) && d < Duration::from_millis(ceiling),
                "{retry}: {d:?}"
            );
        }
    }

    #[tokio::test]
    async fn retries_only_what_may_be_retried() {
        let calls = AtomicU32::new(0);
        let result: Result<u32, &str> = quick(5)
            .run(
                |n| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async move { if n < 3 { Err("500") } else { Ok(n) } }
                },
                |e| *e == "500",
            )
            .await;
        assert_eq!(result, Ok(3));
        assert_eq!(calls.load(Ordering::SeqCst), 3);

        let calls = AtomicU32::new(0);
        let result: Result<u32, &str> = quick(5)
            .run(
                |_| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async { Err("409") }
                },
                |e| *e == "500",
            )
            .await;
        assert_eq!(result, Err("409"));
        assert_eq!(
            calls.load(Ordering::SeqCst),
            1,
            "a conflict is never retried"
        );

        let calls = AtomicU32::new(0);
        let _ = quick(4)
            .run(
                |_| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async { Err::<(), _>("500") }
                },
                |_| true,
            )
            .await;
        assert_eq!(
            calls.load(Ordering::SeqCst),
            4,
            "bounded by the number of attempts"
        );
    }

    #[tokio::test]
    async fn bounded_by_time() {
        let p = RetryPolicy {
            max_attempts: 1000,
            base_delay: Duration::from_millis(20),
            max_delay: Duration::from_millis(20),
            max_elapsed: Duration::from_millis(100),
        };
        let calls = AtomicU32::new(0);
        let started = std::time::Instant::now();
        let _ = p
            .run(
                |_| {
                    calls.fetch_add(1, Ordering::SeqCst);
                    async { Err::<(), _>(()) }
                },
                |_| true,
            )
            .await;
        assert!(calls.load(Ordering::SeqCst) < 20);
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
