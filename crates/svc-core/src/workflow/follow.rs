//! Following a processing to its end: webhook events with an occasional poll, or
//! polling with backoff.

use std::time::Duration;

use tokio::time::Instant;

use super::events::{EventSource, Received};
use super::{PollSettings, Run, WorkflowError};
use crate::cloud::{CloudError, Processing, ProcessingStatus, RetryHint};

/// Failed status reads in a row (after the client's own retries) before giving up.
const MAX_FAILED_READS: u32 = 5;

/// Whether a processing has reached its end.
pub(crate) fn has_ended(status: &ProcessingStatus) -> bool {
    matches!(
        status,
        ProcessingStatus::Processed | ProcessingStatus::Canceled | ProcessingStatus::Archived
    )
}

/// Follows `started` until it ends; returns it as last known. `reads` counts the
/// `getProcessing` calls.
pub(super) async fn follow(
    run: &Run,
    started: Processing,
    poll: &PollSettings,
    timeout: Option<Duration>,
    mut events: Option<EventSource>,
    reads: &mut u32,
) -> Result<Processing, WorkflowError> {
    let id = started.id;
    let began = Instant::now();
    let deadline = timeout.map(|t| began + t);
    let mut current = started;
    let mut polls: u32 = 0;
    let mut failed_reads: u32 = 0;
    run.report_processing(&current);
    while !has_ended(&current.status) {
        if let Some(deadline) = deadline
            && Instant::now() >= deadline
        {
            return Err(WorkflowError::FollowTimeout {
                processing_id: id,
                status: current.status.to_string(),
                waited: began.elapsed(),
            });
        }
        let poll_now = match events.as_mut() {
            Some(source) => {
                let mut wait = poll.event_fallback;
                if let Some(deadline) = deadline {
                    wait = wait.min(deadline.saturating_duration_since(Instant::now()));
                }
                tokio::select! {
                    received = source.recv() => match received {
                        Received::Event(event) if event.payload.id == id => {
                            // Deliveries can arrive out of order: keep the latest state.
                            if event.payload.updated_at >= current.updated_at
                                || has_ended(&event.payload.status)
                            {
                                current = event.payload;
                                run.report_processing(&current);
                            }
                            false
                        }
                        Received::Event(_) => false,
                        Received::Lagged => true,
                        Received::Closed => {
                            events = None;
                            true
                        }
                    },
                    () = tokio::time::sleep(wait) => true,
                }
            }
            None => {
                let mut wait = poll.delay(polls);
                if let Some(deadline) = deadline {
                    wait = wait.min(deadline.saturating_duration_since(Instant::now()));
                }
                tokio::time::sleep(wait).await;
                polls += 1;
                true
            }
        };
        if !poll_now {
            continue;
        }
        *reads += 1;
        match run.client.get_processing(id).await {
            Ok(p) => {
                failed_reads = 0;
                current = p;
                run.report_processing(&current);
            }
            // A blip, or a 404 of a processing just started (it may exist later).
            Err(e) if retryable(&e) && failed_reads + 1 < MAX_FAILED_READS => failed_reads += 1,
            Err(source) => {
                return Err(WorkflowError::Cloud {
                    stage: "following the processing",
                    container_id: current.container_id,
                    processing_id: Some(id),
                    source: Box::new(source),
                    cleanup: super::Cleanup::NotAttempted,
                });
            }
        }
    }
    Ok(current)
}

fn retryable(e: &CloudError) -> bool {
    matches!(e.retry_hint(), RetryHint::Transient | RetryHint::Allowed)
}
