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
//! [`WorkflowOptions::wait_for_free_organization`]: super::WorkflowOptions::wait_for_free_organization

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use uuid::Uuid;

use crate::cloud::CloudClient;

/// The queues, by service address and organization.
type Queues = Mutex<HashMap<(String, Uuid), Arc<Semaphore>>>;

static QUEUES: OnceLock<Queues> = OnceLock::new();

/// The right to start a processing of the organization; the next in line gets it
/// when this is dropped.
#[derive(Debug)]
pub(super) struct Turn {
    /// `None` only if the queue were closed, which it never is.
    _permit: Option<OwnedSemaphorePermit>,
}

/// The queue of `client`'s organization: a fair semaphore of one permit, whose
/// waiters are served in the order they asked.
fn queue(client: &CloudClient) -> Arc<Semaphore> {
    let key = (client.base_url().to_owned(), client.organization_id());
    let mut queues = QUEUES
        .get_or_init(Queues::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    queues
        .entry(key)
        .or_insert_with(|| Arc::new(Semaphore::new(1)))
        .clone()
}

/// The organization's turn if nobody in this process holds it or waits for it.
pub(super) fn try_turn(client: &CloudClient) -> Option<Turn> {
    let permit = queue(client).try_acquire_owned().ok()?;
    Some(Turn {
        _permit: Some(permit),
    })
}

/// Waits for the organization's turn in this process, after those who asked before.
pub(super) async fn turn(client: &CloudClient) -> Turn {
    Turn {
        _permit: queue(client).acquire_owned().await.ok(),
    }
}
