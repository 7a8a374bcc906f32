//! What uploads and downloads share: the retry loop of one file, the idle watchdog,
//! bounded parallelism over the files, and the report.

use std::future::Future;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt as _, StreamExt as _};
use tokio::sync::Notify;
use tokio::time::Instant;

use super::error::{Failure, TransferError};
use super::progress::{FileState, Tracker};
use super::{FileReport, TransferOptions, TransferReport};
use crate::retry::RetryPolicy;

/// One file's whole work (its retries included): the bytes moved, or its error.
pub(crate) type FileWork = BoxFuture<'static, Result<u64, TransferError>>;

/// Runs `attempt` (given the attempt number, from 1) until it succeeds, fails for good,
/// or `policy` allows no more attempts. Each attempt starts from the start of the file
/// (its progress back to 0). The time budget counts from the start of the last attempt
/// that moved data: a long transfer broken near its end deserves its retries.
pub(crate) async fn with_retries<F, Fut>(
    policy: &RetryPolicy,
    tracker: &Tracker,
    index: usize,
    name: &str,
    mut attempt: F,
) -> Result<u64, TransferError>
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<u64, Failure>>,
{
    let mut budget_start = Instant::now();
    let mut number: u32 = 1;
    loop {
        let attempt_start = Instant::now();
        tracker.begin_attempt(index, number);
        tracing::debug!(file = name, attempt = number, "attempt started");
        match attempt(number).await {
            Ok(bytes) => {
                tracing::info!(
                    file = name,
                    bytes,
                    attempts = number,
                    elapsed_ms = crate::observe::millis(attempt_start.elapsed()),
                    "file transferred"
                );
                return Ok(bytes);
            }
            Err(Failure::Fatal(e)) => {
                tracing::debug!(file = name, attempt = number, error = %e, "file failed");
                return Err(e);
            }
            Err(Failure::Transient(transient)) => {
                if tracker.done_bytes(index) > 0 {
                    budget_start = attempt_start;
                }
                let delay = policy.delay(number);
                let out_of_time = budget_start.elapsed() + delay > policy.max_elapsed;
                if number >= policy.max_attempts || out_of_time {
                    let e = transient.into_error(name, number);
                    tracing::debug!(file = name, attempts = number, error = %e, "file failed: no attempt left");
                    return Err(e);
                }
                tracing::info!(
                    file = name,
                    attempt = number,
                    max_attempts = policy.max_attempts,
                    delay_ms = crate::observe::millis(delay),
                    reason = %transient.describe(),
                    "retrying the file from its start after a transient failure"
                );
                tracker.set_state(index, FileState::Retrying);
                tokio::time::sleep(delay).await;
                number += 1;
            }
        }
    }
}

/// Returns once no byte moved (no `activity` notification) for `idle`; never when
/// `idle` is zero.
pub(crate) async fn stalled(activity: &Notify, idle: Duration) {
    if idle.is_zero() {
        return std::future::pending().await;
    }
    while tokio::time::timeout(idle, activity.notified())
        .await
        .is_ok()
    {}
}

/// Runs the files' work, at most `options.parallelism` at a time, and sets each
/// file's final state. Cancellation is the caller's: it drops this future.
pub(crate) async fn run_files(
    tracker: &Tracker,
    options: &TransferOptions,
    files: Vec<FileWork>,
    started: Instant,
) -> Result<TransferReport, TransferError> {
    // Boxed with their index first, so that the stream's item is a plain type.
    let tagged: Vec<BoxFuture<'static, (usize, Result<u64, TransferError>)>> = files
        .into_iter()
        .enumerate()
        .map(|(index, work)| async move { (index, work.await) }.boxed())
        .collect();
    let mut running = futures::stream::iter(tagged).buffer_unordered(options.parallelism.max(1));
    let mut failures: Vec<(usize, TransferError)> = Vec::new();
    while let Some((index, result)) = running.next().await {
        match result {
            Ok(_) => tracker.set_state(index, FileState::Done),
            Err(e) => {
                tracker.set_state(index, FileState::Failed);
                failures.push((index, e));
                if options.fail_fast {
                    break;
                }
            }
        }
    }
    // With `fail_fast`, what still runs is aborted here (dropped) and what waits, skipped.
    drop(running);
    tracker.stop_all(FileState::Canceled, FileState::Skipped);
    let report = report(tracker, started.elapsed());
    tracing::info!(
        files = report.files.len(),
        failed = failures.len(),
        bytes = report.bytes(),
        elapsed_ms = crate::observe::millis(report.elapsed),
        "transfer ended"
    );
    if failures.is_empty() {
        Ok(report)
    } else {
        failures.sort_by_key(|(index, _)| *index);
        Err(TransferError::Failed {
            failures: failures.into_iter().map(|(_, e)| e).collect(),
            report,
        })
    }
}

/// A check that failed before anything was sent: that file failed, the others skipped.
pub(crate) fn refuse_before_start(tracker: &Tracker, index: usize) {
    tracker.set_state(index, FileState::Failed);
    tracker.stop_all(FileState::Skipped, FileState::Skipped);
}

/// The report of the files as they stand.
pub(crate) fn report(tracker: &Tracker, elapsed: Duration) -> TransferReport {
    let progress = tracker.snapshot();
    TransferReport {
        files: progress
            .files
            .into_iter()
            .enumerate()
            .map(|(index, f)| FileReport {
                name: f.name,
                local_path: tracker.local_path(index),
                bytes: f.done_bytes,
                attempts: f.attempts,
                state: f.state,
            })
            .collect(),
        elapsed,
    }
}
