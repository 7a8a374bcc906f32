//! Following a processing to its end: webhook events with an occasional poll, or
//! polling with backoff.
//!
//! With events, a read after a silence that shows a change no event reported means
//! events are being lost (the notification service is out, deliveries fail): the
//! processing is then polled at the polling pace until an event of it arrives again.
//! Reads that fail in a row are waited out for the outage tolerance (a 404 of a
//! processing just started, at most [`MAX_FAILED_READS`] times).

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tracing::Instrument as _;

use super::events::{EventSource, Received};
use super::outage::Patience;
use super::{PollSettings, Run, WorkflowError};
use crate::cloud::{CloudError, Processing, ProcessingStatus, RetryHint};

/// Failed status reads in a row (after the client's own retries) before giving up,
/// unless the failures are an outage (see
/// [`WorkflowOptions::outage_tolerance`](super::WorkflowOptions::outage_tolerance)).
const MAX_FAILED_READS: u32 = 5;

/// How long after the end its progress announces a processing is read again.
const END_MARGIN: Duration = Duration::from_millis(50);

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
    events: Option<EventSource>,
    reads: &mut u32,
) -> Result<Processing, WorkflowError> {
    let span = tracing::debug_span!(
        "follow",
        processing_id = %started.id,
        by = if events.is_some() { "events" } else { "polling" }
    );
    follow_in_span(run, started, poll, timeout, events, reads)
        .instrument(span)
        .await
}

async fn follow_in_span(
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
    let mut outage = Patience::new(run.outage_tolerance);
    // Events are being lost: poll at the polling pace until one arrives.
    let mut stalled = false;
    let mut pace = Pace::default();
    run.report_processing(&current);
    while !has_ended(&current.status) {
        if let Some(deadline) = deadline
            && Instant::now() >= deadline
        {
            tracing::info!(
                waited_s = began.elapsed().as_secs(),
                status = %current.status,
                "gave up following: the follow timeout passed"
            );
            return Err(WorkflowError::FollowTimeout {
                processing_id: id,
                status: current.status.to_string(),
                waited: began.elapsed(),
            });
        }
        let poll_now = match events.as_mut() {
            Some(source) => {
                let mut wait = if stalled || failed_reads > 0 {
                    poll.delay(polls)
                } else {
                    poll.event_fallback
                };
                if let Some(deadline) = deadline {
                    wait = wait.min(deadline.saturating_duration_since(Instant::now()));
                }
                tokio::select! {
                    received = source.recv() => match received {
                        Received::Event(event) if event.payload.id == id => {
                            tracing::debug!(
                                event_id = %event.id,
                                event_type = %event.event_type,
                                status = %event.payload.status,
                                "webhook event of the processing"
                            );
                            if stalled {
                                tracing::info!("events arrive again: following them");
                                stalled = false;
                            }
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
                        Received::Lagged => {
                            tracing::debug!("events were missed: reading the processing");
                            true
                        }
                        Received::Closed => {
                            tracing::info!("the event source closed: polling from now on");
                            events = None;
                            true
                        }
                    },
                    () = tokio::time::sleep(wait) => {
                        tracing::debug!(
                            after_ms = crate::observe::millis(wait),
                            "no event for a while: reading the processing"
                        );
                        if stalled || failed_reads > 0 {
                            polls += 1;
                        }
                        true
                    }
                }
            }
            None => {
                let mut wait = poll.delay(polls);
                // Not much later than the progress says it ends: a batch's next
                // mission waits for this end.
                if let Some(end) = pace.expected_end {
                    // Just after the expected end; once it has passed, at the first pace.
                    let until = end.saturating_duration_since(Instant::now());
                    let after = if until.is_zero() {
                        poll.initial
                    } else {
                        until + END_MARGIN
                    };
                    wait = wait.min(after);
                }
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
                outage.reset();
                run.reached.mark();
                if events.is_some() && !stalled && p.updated_at > current.updated_at {
                    tracing::info!(
                        status = %p.status,
                        "the processing changed without an event: events are being lost, \
                         polling until they come back"
                    );
                    stalled = true;
                    polls = 0;
                }
                current = p;
                pace.observe(&current, Instant::now());
                tracing::debug!(
                    status = %current.status,
                    step = current.processing_step.as_ref().map(tracing::field::display),
                    progress = current.processing_progress,
                    "processing status"
                );
                run.report_processing(&current);
            }
            // The service or its identity provider is out: waited out (at the poll
            // pace) for the outage tolerance.
            Err(e) if run.reached.is_outage(&e) && outage.endure() => {
                failed_reads += 1;
                tracing::info!(
                    failed_reads,
                    lasted_ms = crate::observe::millis(outage.lasted()),
                    reason = %e,
                    "a status read failed: reading again at the next poll"
                );
            }
            // A 404 of a processing just started (it may exist later).
            Err(e) if retryable(&e) && failed_reads + 1 < MAX_FAILED_READS => {
                failed_reads += 1;
                tracing::info!(
                    failed_reads,
                    max_failed_reads = MAX_FAILED_READS,
                    reason = %e,
                    "a status read failed: reading again at the next poll"
                );
            }
            Err(source) => {
                return Err(WorkflowError::Cloud {
                    stage: "following the processing",
                    container_id: current.container_id,
                    processing_id: Some(id),
                    source: Arc::new(source),
                    cleanup: super::Cleanup::NotAttempted,
                });
            }
        }
    }
    Ok(current)
}

/// When a running processing should end, from the pace of its progress between the
/// first reading that showed some and the last one.
#[derive(Debug, Default)]
struct Pace {
    first: Option<(Instant, f64)>,
    expected_end: Option<Instant>,
}

impl Pace {
    fn observe(&mut self, p: &Processing, now: Instant) {
        self.expected_end = None;
        let Some(progress) = p
            .processing_progress
            .filter(|x| x.is_finite() && (0.0..1.0).contains(x))
        else {
            return;
        };
        if p.status != ProcessingStatus::Processing {
            return;
        }
        match self.first {
            None => self.first = Some((now, progress)),
            Some((t0, p0)) if progress > p0 => {
                let rate = (progress - p0) / now.saturating_duration_since(t0).as_secs_f64();
                let left = (1.0 - progress) / rate;
                if left.is_finite() && left >= 0.0 {
                    self.expected_end = Some(now + Duration::from_secs_f64(left.min(86_400.0)));
                }
            }
            Some(_) => {}
        }
    }
}

fn retryable(e: &CloudError) -> bool {
    matches!(e.retry_hint(), RetryHint::Transient | RetryHint::Allowed)
}
