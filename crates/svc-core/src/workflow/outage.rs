//! Waiting out an outage: the service, its identity provider or its notification service
//! failing for a while (a restart, a failover) should not throw away a workflow that
//! has come far. See [`WorkflowOptions::outage_tolerance`](super::WorkflowOptions).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::cloud::{CloudError, RetryHint, TransportKind};
use crate::retry::RetryPolicy;

/// The pseudo-operations of obtaining an access token (see `cloud::auth`): when one of
/// them fails, the request it was for was never sent.
const TOKEN_OPERATIONS: [&str; 2] = ["requestToken", "openidConfiguration"];

/// Whether the request that failed with `e` certainly did not reach the service: no
/// connection could be made, or no access token could be had (the identity provider
/// failed or could not be reached), so the request itself was never sent.
pub(super) fn never_sent(e: &CloudError) -> bool {
    match e {
        CloudError::Transport {
            operation, kind, ..
        } => *kind == TransportKind::Connect || TOKEN_OPERATIONS.contains(operation),
        CloudError::Api { operation, .. } => TOKEN_OPERATIONS.contains(operation),
        // The request hook could not get a token: nothing was sent.
        CloudError::Authentication { status: None, .. } => true,
        _ => false,
    }
}

/// Whether the service (or its identity provider) has answered at least once in this
/// workflow. Before that, an address that refuses connections is most likely a wrong
/// setting, not an outage.
#[derive(Debug, Default)]
pub(super) struct Reached(AtomicBool);

impl Reached {
    pub(super) fn mark(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether `e` is an outage to wait out: a transient failure, and not a refused
    /// connection to a service that never answered this workflow.
    pub(super) fn is_outage(&self, e: &CloudError) -> bool {
        if e.retry_hint() != RetryHint::Transient {
            return false;
        }
        let refused = matches!(
            e,
            CloudError::Transport {
                kind: TransportKind::Connect,
                ..
            }
        );
        !refused || self.0.load(Ordering::Relaxed)
    }
}

/// One streak of failures, waited out with backoff for up to the tolerance.
#[derive(Debug)]
pub(super) struct Patience {
    tolerance: Duration,
    since: Option<Instant>,
    waits: u32,
}

/// Backoff between two tries during an outage.
const BACKOFF: RetryPolicy = RetryPolicy {
    max_attempts: u32::MAX,
    base_delay: Duration::from_millis(250),
    max_delay: Duration::from_secs(5),
    max_elapsed: Duration::MAX,
};

impl Patience {
    pub(super) fn new(tolerance: Duration) -> Self {
        Self {
            tolerance,
            since: None,
            waits: 0,
        }
    }

    /// The streak is over (something succeeded).
    pub(super) fn reset(&mut self) {
        self.since = None;
        self.waits = 0;
    }

    /// How long the current streak has lasted.
    pub(super) fn lasted(&self) -> Duration {
        self.since.map_or(Duration::ZERO, |s| s.elapsed())
    }

    /// Counts a failure; whether the streak is still within the tolerance.
    pub(super) fn endure(&mut self) -> bool {
        let since = *self.since.get_or_insert_with(Instant::now);
        since.elapsed() < self.tolerance
    }

    /// After the failure `e` of `what`: when the streak is still within the tolerance,
    /// waits the backoff (never past the tolerance) and returns `true` (try again);
    /// otherwise `false` (give up with `e`).
    pub(super) async fn wait_out(&mut self, what: &'static str, e: &CloudError) -> bool {
        if !self.endure() {
            tracing::info!(
                what,
                lasted_s = self.lasted().as_secs(),
                tolerance_s = self.tolerance.as_secs(),
                reason = %e,
                "the outage outlasted the tolerance: giving up"
            );
            return false;
        }
        self.waits += 1;
        let left = self.tolerance.saturating_sub(self.lasted());
        let delay = BACKOFF.delay(self.waits).min(left);
        tracing::info!(
            what,
            waits = self.waits,
            lasted_ms = crate::observe::millis(self.lasted()),
            delay_ms = crate::observe::millis(delay),
            reason = %e,
            "waiting out an outage"
        );
        tokio::time::sleep(delay).await;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport(operation: &'static str, kind: TransportKind) -> CloudError {
        CloudError::Transport {
            operation,
            kind,
            reason: String::new(),
            source: None,
        }
    }

    fn api(operation: &'static str, status: u16) -> CloudError {
        CloudError::Api {
            operation,
            status,
            title: String::new(),
            details: String::new(),
        }
    }

    #[test]
    fn a_request_without_a_token_was_never_sent() {
        assert!(never_sent(&api("requestToken", 503)));
        assert!(never_sent(&transport(
            "openidConfiguration",
            TransportKind::Timeout
        )));
        assert!(never_sent(&transport(
            "createContainer",
            TransportKind::Connect
        )));
        assert!(!never_sent(&api("createContainer", 500)));
        assert!(!never_sent(&transport(
            "startProcessing",
            TransportKind::Interrupted
        )));
    }

    #[test]
    fn a_refused_connection_is_an_outage_only_once_the_service_answered() {
        let reached = Reached::default();
        let refused = transport("createContainer", TransportKind::Connect);
        assert!(!reached.is_outage(&refused), "a wrong address fails fast");
        assert!(reached.is_outage(&api("requestToken", 503)));
        assert!(!reached.is_outage(&api("startProcessing", 409)));
        reached.mark();
        assert!(reached.is_outage(&refused));
    }

    #[tokio::test]
    async fn patience_ends_with_the_tolerance() {
        let mut patience = Patience::new(Duration::from_millis(300));
        let e = api("getProcessing", 503);
        let started = Instant::now();
        let mut tries = 0;
        while patience.wait_out("reading", &e).await {
            tries += 1;
        }
        assert!(tries >= 2, "{tries}");
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(2),
            "{took:?}"
        );
        patience.reset();
        assert_eq!(patience.lasted(), Duration::ZERO);
        assert!(patience.endure(), "a new streak starts after a success");
    }
}
