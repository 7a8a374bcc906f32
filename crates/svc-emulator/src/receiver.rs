//! A webhook receiver for tests: records every delivery (headers and raw body) and can be
//! told to fail, so that retries and missed webhooks can be exercised.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use tokio::sync::Notify;

/// One delivery as received.
#[derive(Clone, Debug)]
pub struct ReceivedDelivery {
    pub timestamp: Option<String>,
    pub signature: Option<String>,
    pub body: Bytes,
    /// The status the receiver answered.
    pub answered: u16,
}

#[derive(Default)]
struct Inner {
    deliveries: Mutex<Vec<ReceivedDelivery>>,
    failures_left: AtomicU32,
    arrived: Notify,
}

/// A running receiver on 127.0.0.1; stops when dropped.
pub struct WebhookReceiver {
    pub url: String,
    inner: Arc<Inner>,
    server: tokio::task::JoinHandle<()>,
}

impl WebhookReceiver {
    /// Starts a receiver that answers 500 to its first `failures` deliveries, then 200.
    pub async fn start(failures: u32) -> std::io::Result<Self> {
        let inner = Arc::new(Inner {
            failures_left: AtomicU32::new(failures),
            ..Inner::default()
        });
        let app = Router::new().fallback(receive).with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let url = format!("http://{}/hooks", listener.local_addr()?);
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Self { url, inner, server })
    }

    /// Every delivery so far, in arrival order.
    pub fn deliveries(&self) -> Vec<ReceivedDelivery> {
        self.inner
            .deliveries
            .lock()
            .map(|d| d.clone())
            .unwrap_or_default()
    }

    /// Waits until `done` holds for the deliveries so far, or the timeout passes.
    pub async fn wait_until(
        &self,
        timeout: Duration,
        done: impl Fn(&[ReceivedDelivery]) -> bool,
    ) -> Vec<ReceivedDelivery> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let arrived = self.inner.arrived.notified();
            let now = self.deliveries();
            if done(&now) {
                return now;
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                return self.deliveries();
            }
        }
    }
}

impl Drop for WebhookReceiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn receive(State(inner): State<Arc<Inner>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let fail = inner
        .failures_left
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    let status = if fail {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    if let Ok(mut d) = inner.deliveries.lock() {
        d.push(ReceivedDelivery {
            timestamp: header("svc-timestamp"),
            signature: header("svc-signature"),
            body,
            answered: status.as_u16(),
        });
    }
    inner.arrived.notify_waiters();
    status
}
