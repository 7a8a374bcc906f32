//! One queue per organization in a process: the workflows that wait for a free
//! organization ([`WorkflowOptions::wait_for_free_organization`]) start their
//! processings one at a time, first come first served.
//!
//! The service runs one processing at a time per organization and answers 409 to a
//! second start. Waiters that each poll with a 409 between them race for the moment
//! the organization frees, and the last to come often wins. Here, a workflow takes
//! its turn after its uploads (so the uploads of the next missions overlap the running
//! processing), holds it until its processing has ended, and only the one whose turn
//! it is asks the service, still waiting out (with jittered polls) a processing
//! started elsewhere (another process, another user of the organization).
//!
//! The line knows who holds the turn and who waits, so that a waiting workflow can say
//! what it waits behind ([`Place`]).
//!
//! [`WorkflowOptions::wait_for_free_organization`]: super::WorkflowOptions::wait_for_free_organization

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, watch};
use uuid::Uuid;

use crate::cloud::CloudClient;

/// The queues, by service address and organization.
type Queues = Mutex<HashMap<(String, Uuid), Arc<Queue>>>;

static QUEUES: OnceLock<Queues> = OnceLock::new();

/// One organization's line: a fair semaphore of one permit, whose waiters are served
/// in the order they asked, and who holds it and waits for it.
#[derive(Debug)]
struct Queue {
    semaphore: Arc<Semaphore>,
    line: Mutex<Line>,
    /// Bumped whenever the holder or the waiters change.
    changed: watch::Sender<u64>,
}

#[derive(Debug, Default)]
struct Line {
    /// The label of the workflow holding the turn.
    holder: Option<String>,
    next_ticket: u64,
    /// The tickets of the workflows waiting, in the order they asked.
    waiting: BTreeSet<u64>,
}

impl Queue {
    fn line(&self) -> MutexGuard<'_, Line> {
        self.line.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn bump(&self) {
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
    }

    fn place(&self, ticket: u64) -> Place {
        let line = self.line();
        Place {
            behind: line.holder.clone(),
            ahead: line.waiting.range(..ticket).count() + usize::from(line.holder.is_some()),
        }
    }

    /// The turn, for `label`, taken with `permit`; its ticket (when it waited) leaves the
    /// line at the same moment, so that the others see one change.
    fn hold(
        self: &Arc<Self>,
        permit: Option<OwnedSemaphorePermit>,
        label: String,
        ticket: Option<u64>,
    ) -> Turn {
        {
            let mut line = self.line();
            line.holder = Some(label);
            if let Some(ticket) = ticket {
                line.waiting.remove(&ticket);
            }
        }
        self.bump();
        Turn {
            queue: Arc::clone(self),
            _permit: permit,
        }
    }
}

/// Where a waiting workflow stands in its organization's line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Place {
    /// The label of the workflow of this process whose processing holds the turn.
    pub behind: Option<String>,
    /// The workflows of this process before this one, the holder included.
    pub ahead: usize,
}

/// The right to start a processing of the organization; the next in line gets it
/// when this is dropped.
#[derive(Debug)]
pub(super) struct Turn {
    queue: Arc<Queue>,
    /// `None` only if the queue were closed, which it never is.
    _permit: Option<OwnedSemaphorePermit>,
}

impl Drop for Turn {
    fn drop(&mut self) {
        // Before the permit (a field) is released. Nobody is told: the next holder's
        // taking the turn is the change the others see.
        self.queue.line().holder = None;
    }
}

/// A ticket in the line, given back if the wait ends without the turn (a cancel).
struct Waiting<'a> {
    queue: &'a Queue,
    ticket: Option<u64>,
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket {
            self.queue.line().waiting.remove(&ticket);
            self.queue.bump();
        }
    }
}

/// The queue of `client`'s organization.
fn queue(client: &CloudClient) -> Arc<Queue> {
    let key = (client.base_url().to_owned(), client.organization_id());
    let mut queues = QUEUES
        .get_or_init(Queues::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    queues
        .entry(key)
        .or_insert_with(|| {
            Arc::new(Queue {
                semaphore: Arc::new(Semaphore::new(1)),
                line: Mutex::new(Line::default()),
                changed: watch::Sender::new(0),
            })
        })
        .clone()
}

/// The organization's turn for the workflow `label` if nobody in this process holds it
/// or waits for it.
pub(super) fn try_turn(client: &CloudClient, label: &str) -> Option<Turn> {
    let queue = queue(client);
    let permit = Arc::clone(&queue.semaphore).try_acquire_owned().ok()?;
    Some(queue.hold(Some(permit), label.to_owned(), None))
}

/// Waits for the organization's turn in this process, after those who asked before;
/// `on_place` hears where the workflow stands at first and each time that changes.
pub(super) async fn turn(
    client: &CloudClient,
    label: &str,
    mut on_place: impl FnMut(Place),
) -> Turn {
    let queue = queue(client);
    let ticket = {
        let mut line = queue.line();
        let ticket = line.next_ticket;
        line.next_ticket += 1;
        line.waiting.insert(ticket);
        ticket
    };
    let mut waiting = Waiting {
        queue: &queue,
        ticket: Some(ticket),
    };
    let mut changes = queue.changed.subscribe();
    let acquire = Arc::clone(&queue.semaphore).acquire_owned();
    tokio::pin!(acquire);
    let mut told: Option<Place> = None;
    let permit = loop {
        let place = queue.place(ticket);
        if told.as_ref() != Some(&place) {
            on_place(place.clone());
            told = Some(place);
        }
        tokio::select! {
            permit = &mut acquire => break permit,
            changed = changes.changed() => {
                if changed.is_err() {
                    // Never: the queue (and its sender) lives as long as the process.
                    break (&mut acquire).await;
                }
            }
        }
    };
    waiting.ticket = None;
    queue.hold(permit.ok(), label.to_owned(), Some(ticket))
}
