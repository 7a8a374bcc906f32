//! A workflow's progress reports as a stream for each subscriber
//! ([`WorkflowReports`]), from any thread, at any time.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::mem::discriminant;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, ready};

use futures::Stream;
use tokio::sync::Notify;

use super::WorkflowProgress;

/// Reports in order, each stage's consecutive reports merged into the latest one.
#[derive(Default)]
struct Merged {
    reports: VecDeque<WorkflowProgress>,
    ended: bool,
}

impl Merged {
    /// Appends `report`, or replaces the last report when it is of the same stage (a
    /// newer snapshot of the same thing): a reader that falls behind gets every change
    /// of stage, in order, and the latest of each.
    fn push(&mut self, report: WorkflowProgress) {
        match self.reports.back_mut() {
            Some(last) if discriminant(last) == discriminant(&report) => *last = report,
            _ => self.reports.push_back(report),
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One subscriber's reports not read yet.
#[derive(Default)]
struct Queue {
    pending: Mutex<Merged>,
    ready: Notify,
}

/// Where a workflow's reports go: what was reported so far (merged: a stage's reports
/// in a row make one) for the subscribers to come, and the queues of the subscribers.
#[derive(Default)]
pub(super) struct Reports {
    published: Mutex<Published>,
}

#[derive(Default)]
struct Published {
    history: Merged,
    subscribers: Vec<Weak<Queue>>,
}

impl Reports {
    /// Hands `report` to every subscriber.
    pub(super) fn publish(&self, report: &WorkflowProgress) {
        let mut published = lock(&self.published);
        published.history.push(report.clone());
        published.subscribers.retain(|queue| {
            let Some(queue) = queue.upgrade() else {
                return false;
            };
            lock(&queue.pending).push(report.clone());
            queue.ready.notify_one();
            true
        });
    }

    /// The workflow has ended: every stream ends once its reports are read.
    pub(super) fn end(&self) {
        let mut published = lock(&self.published);
        published.history.ended = true;
        for queue in published.subscribers.drain(..).filter_map(|q| q.upgrade()) {
            lock(&queue.pending).ended = true;
            queue.ready.notify_one();
        }
    }

    /// A stream of the reports from the start of the workflow.
    pub(super) fn subscribe(&self) -> WorkflowReports {
        let mut published = lock(&self.published);
        let queue = Arc::new(Queue {
            pending: Mutex::new(Merged {
                reports: published.history.reports.clone(),
                ended: published.history.ended,
            }),
            ready: Notify::new(),
        });
        if !published.history.ended {
            published.subscribers.push(Arc::downgrade(&queue));
        }
        WorkflowReports {
            queue,
            waiting: None,
        }
    }
}

/// Ends the reports when dropped: when the workflow's task ends, however it ends.
pub(super) struct EndReports(pub(super) Arc<Reports>);

impl Drop for EndReports {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// The progress reports of a workflow
/// ([`WorkflowHandle::subscribe`](super::WorkflowHandle::subscribe)), as a
/// [`Stream`]: every report from the start of the workflow, whenever the stream was
/// made, then each new one; it ends after the workflow's last report. While the reader
/// is behind, a stage's reports in a row are merged into the latest (every change of
/// stage is kept, in order). Reading is cancel-safe: a report is taken only when given.
pub struct WorkflowReports {
    queue: Arc<Queue>,
    /// Woken by the next report (kept between polls).
    waiting: Option<Pin<Box<dyn Future<Output = ()> + Send>>>,
}

impl WorkflowReports {
    /// The reports there now, without waiting (empty when none is).
    pub fn queued(&mut self) -> Vec<WorkflowProgress> {
        lock(&self.queue.pending).reports.drain(..).collect()
    }

    /// The next report; `Some(None)` once the stream has ended; `None` while none is
    /// there yet.
    fn take(&self) -> Option<Option<WorkflowProgress>> {
        let mut pending = lock(&self.queue.pending);
        match pending.reports.pop_front() {
            Some(report) => Some(Some(report)),
            None if pending.ended => Some(None),
            None => None,
        }
    }
}

impl Stream for WorkflowReports {
    type Item = WorkflowProgress;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<WorkflowProgress>> {
        let this = self.get_mut();
        loop {
            if let Some(next) = this.take() {
                this.waiting = None;
                return Poll::Ready(next);
            }
            let queue = Arc::clone(&this.queue);
            let waiting = this
                .waiting
                .get_or_insert_with(|| Box::pin(async move { queue.ready.notified().await }));
            ready!(waiting.as_mut().poll(cx));
            this.waiting = None;
        }
    }
}

impl fmt::Debug for WorkflowReports {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pending = lock(&self.queue.pending);
        f.debug_struct("WorkflowReports")
            .field("queued", &pending.reports.len())
            .field("ended", &pending.ended)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use futures::StreamExt as _;
    use uuid::Uuid;

    use super::*;
    use crate::transfer::Progress;

    fn uploading(done_bytes: u64) -> WorkflowProgress {
        WorkflowProgress::Uploading(Progress {
            files: Vec::new(),
            done_bytes,
            total_bytes: None,
            finished: false,
        })
    }

    #[tokio::test]
    async fn every_subscriber_gets_every_stage_in_order_the_latest_of_each() {
        let reports = Reports::default();
        let early = reports.subscribe();
        reports.publish(&WorkflowProgress::CreatingContainer);
        reports.publish(&uploading(1));
        reports.publish(&uploading(2));
        let late = reports.subscribe();
        let container_id = Uuid::nil();
        reports.publish(&WorkflowProgress::Starting { container_id });
        reports.end();
        let after_the_end = reports.subscribe();
        let expected = vec![
            WorkflowProgress::CreatingContainer,
            uploading(2),
            WorkflowProgress::Starting { container_id },
        ];
        for stream in [early, late, after_the_end] {
            assert_eq!(stream.collect::<Vec<_>>().await, expected);
        }
    }

    #[tokio::test]
    async fn a_reader_waits_for_the_next_report_and_the_end() {
        let reports = Arc::new(Reports::default());
        let mut stream = reports.subscribe();
        assert!(stream.queued().is_empty());
        let writer = Arc::clone(&reports);
        let wrote = tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            writer.publish(&WorkflowProgress::CreatingContainer);
            drop(EndReports(writer));
        });
        assert_eq!(
            stream.next().await,
            Some(WorkflowProgress::CreatingContainer)
        );
        assert_eq!(stream.next().await, None);
        wrote.await.expect("writer");
    }
}
