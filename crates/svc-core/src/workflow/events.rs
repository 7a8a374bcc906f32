//! Webhook events as a source for following a processing: [`EventSource`], and (with
//! the `axum` feature) [`WebhookListener`], a local receiver that verifies deliveries
//! and forwards their events.

use tokio::sync::{broadcast, mpsc};

use crate::WebhookEvent;

/// Verified webhook events that a workflow reads to follow its processing (see
/// [`WorkflowOptions::events`](super::WorkflowOptions::events)). Events of other
/// processings are skipped. Events can be lost or late: the workflow still polls now
/// and then.
#[derive(Debug)]
pub struct EventSource {
    inner: Inner,
}

#[derive(Debug)]
enum Inner {
    Mpsc(mpsc::Receiver<WebhookEvent>),
    Broadcast(broadcast::Receiver<WebhookEvent>),
}

/// What [`EventSource::recv`] got.
pub(crate) enum Received {
    Event(Box<WebhookEvent>),
    /// Some events were dropped (a slow reader of a broadcast): poll to catch up.
    Lagged,
    /// No sender is left: nothing more will come.
    Closed,
}

impl EventSource {
    /// Events fed by your own receiver (one workflow at a time reads them).
    pub fn from_channel(receiver: mpsc::Receiver<WebhookEvent>) -> Self {
        Self {
            inner: Inner::Mpsc(receiver),
        }
    }

    /// Events of a broadcast channel: every subscriber sees every event, so several
    /// workflows can follow their processings from one receiver.
    pub fn from_broadcast(receiver: broadcast::Receiver<WebhookEvent>) -> Self {
        Self {
            inner: Inner::Broadcast(receiver),
        }
    }

    pub(crate) async fn recv(&mut self) -> Received {
        match &mut self.inner {
            Inner::Mpsc(r) => match r.recv().await {
                Some(e) => Received::Event(Box::new(e)),
                None => Received::Closed,
            },
            Inner::Broadcast(r) => match r.recv().await {
                Ok(e) => Received::Event(Box::new(e)),
                Err(broadcast::error::RecvError::Lagged(_)) => Received::Lagged,
                Err(broadcast::error::RecvError::Closed) => Received::Closed,
            },
        }
    }
}

impl From<mpsc::Receiver<WebhookEvent>> for EventSource {
    fn from(receiver: mpsc::Receiver<WebhookEvent>) -> Self {
        Self::from_channel(receiver)
    }
}

impl From<broadcast::Receiver<WebhookEvent>> for EventSource {
    fn from(receiver: broadcast::Receiver<WebhookEvent>) -> Self {
        Self::from_broadcast(receiver)
    }
}

#[cfg(feature = "webhook-listener")]
pub use listener::WebhookListener;

#[cfg(feature = "webhook-listener")]
mod listener {
    use std::net::{Ipv4Addr, SocketAddr};
    use std::sync::{Arc, RwLock};

    use axum::Router;
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use tokio::sync::broadcast;
    use uuid::Uuid;

    use super::EventSource;
    use crate::WebhookEvent;
    use crate::cloud::{CloudClient, CloudError, CreateWebhookEndpointRequest, EventType};
    use crate::webhook::Webhook;

    /// How many events a slow subscriber may fall behind before it misses some (it
    /// then polls to catch up).
    const CAPACITY: usize = 256;

    #[derive(Clone)]
    struct Shared {
        webhook: Arc<RwLock<Option<Arc<Webhook>>>>,
        events: broadcast::Sender<WebhookEvent>,
    }

    /// A local webhook receiver: an HTTP server that verifies each delivery with a
    /// [`Webhook`] (signature and timestamp) and forwards the event to every
    /// [`EventSource`] taken from [`WebhookListener::events`]. Stops when dropped.
    ///
    /// Register its [`url`](Self::url) as a webhook endpoint of the organization, then
    /// give the endpoint's secret with [`set_webhook`](Self::set_webhook) (until then,
    /// deliveries are answered 503 and the service retries them);
    /// [`register`](Self::register) does all of it. The service must be able to reach
    /// the address: `127.0.0.1` suits the local emulator; behind a real service, bind
    /// a reachable address with [`start_on`](Self::start_on) (or run your own receiver
    /// and feed an [`EventSource::from_channel`]).
    pub struct WebhookListener {
        url: String,
        shared: Shared,
        endpoint_id: Option<Uuid>,
        server: tokio::task::JoinHandle<()>,
    }

    impl std::fmt::Debug for WebhookListener {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("WebhookListener")
                .field("url", &self.url)
                .field("endpoint_id", &self.endpoint_id)
                .finish_non_exhaustive()
        }
    }

    impl WebhookListener {
        /// Listens on `127.0.0.1`, on any free port; deliveries are taken at `/webhooks`.
        ///
        /// # Errors
        /// When no port can be bound.
        pub async fn start() -> std::io::Result<Self> {
            Self::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
        }

        /// Listens on `address` (port 0: any free port).
        ///
        /// # Errors
        /// When the address cannot be bound.
        pub async fn start_on(address: SocketAddr) -> std::io::Result<Self> {
            let listener = tokio::net::TcpListener::bind(address).await?;
            let url = format!("http://{}/webhooks", listener.local_addr()?);
            let (events, _) = broadcast::channel(CAPACITY);
            let shared = Shared {
                webhook: Arc::new(RwLock::new(None)),
                events,
            };
            let app = Router::new()
                .route("/webhooks", axum::routing::post(receive))
                .with_state(shared.clone());
            let server = tokio::spawn(async move {
                let _ = axum::serve(listener, app).await;
            });
            Ok(Self {
                url,
                shared,
                endpoint_id: None,
                server,
            })
        }

        /// Starts a listener on `127.0.0.1` and registers it as a webhook endpoint of
        /// the organization for every processing event, with the endpoint's secret in
        /// use. [`unregister`](Self::unregister) deletes the endpoint.
        ///
        /// # Errors
        /// [`CloudError::Config`] when no port can be bound; the errors of
        /// [`CloudClient::create_webhook_endpoint`].
        pub async fn register(client: &CloudClient) -> Result<Self, CloudError> {
            let mut listener = Self::start().await.map_err(|e| CloudError::Config {
                setting: "webhook listener".to_owned(),
                reason: format!("cannot listen on 127.0.0.1: {e}"),
                missing: false,
            })?;
            let endpoint = client
                .create_webhook_endpoint(CreateWebhookEndpointRequest {
                    url: listener.url.clone(),
                    enabled_event_types: vec![
                        EventType::CloudProcessingProgress,
                        EventType::CloudProcessingEnded,
                        EventType::CloudProcessingError,
                    ],
                    metadata: None,
                })
                .await?;
            let secret = endpoint.secret.clone().ok_or(CloudError::InvalidResponse {
                operation: "createWebhookEndpoint",
                reason: "the new endpoint came without its signing secret".to_owned(),
            })?;
            listener.set_webhook(Webhook::new(secret));
            listener.endpoint_id = Some(endpoint.id);
            Ok(listener)
        }

        /// Deletes the endpoint [`register`](Self::register) created, and stops.
        ///
        /// # Errors
        /// The errors of [`CloudClient::delete_webhook_endpoint`].
        pub async fn unregister(self, client: &CloudClient) -> Result<(), CloudError> {
            match self.endpoint_id {
                Some(id) => client.delete_webhook_endpoint(id).await,
                None => Ok(()),
            }
        }

        /// Where deliveries are taken (`http://127.0.0.1:<port>/webhooks`).
        pub fn url(&self) -> &str {
            &self.url
        }

        /// The endpoint registered by [`register`](Self::register).
        pub fn endpoint_id(&self) -> Option<Uuid> {
            self.endpoint_id
        }

        /// Verifies deliveries with `webhook` from now on (e.g. `Webhook::new(secret)`
        /// with the endpoint's secret).
        pub fn set_webhook(&self, webhook: Webhook) {
            if let Ok(mut w) = self.shared.webhook.write() {
                *w = Some(Arc::new(webhook));
            }
        }

        /// A new subscription: every event verified from now on.
        pub fn events(&self) -> EventSource {
            EventSource::from_broadcast(self.shared.events.subscribe())
        }
    }

    impl Drop for WebhookListener {
        fn drop(&mut self) {
            self.server.abort();
        }
    }

    async fn receive(State(shared): State<Shared>, headers: HeaderMap, body: Bytes) -> StatusCode {
        let webhook = shared.webhook.read().ok().and_then(|w| w.clone());
        let Some(webhook) = webhook else {
            tracing::debug!("webhook delivery before the endpoint's secret is known: answered 503");
            return StatusCode::SERVICE_UNAVAILABLE;
        };
        let span = tracing::debug_span!("webhook_listener");
        let _entered = span.enter();
        match webhook.verify(&headers, &body) {
            Ok(event) => {
                // No subscriber is not an error: the delivery was received.
                let _ = shared.events.send(event);
                StatusCode::NO_CONTENT
            }
            Err(_) => StatusCode::BAD_REQUEST,
        }
    }
}
