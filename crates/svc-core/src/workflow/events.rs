//! Webhook events as a source for following a processing: [`EventSource`], and (with
//! the `axum` feature) [`WebhookListener`], a local receiver that verifies deliveries
//! and forwards their events, and replays the events the notification service could
//! not deliver (its missed webhooks) once it can list them.

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

    /// The next event (of any processing), for a program that watches them itself;
    /// `None` once no sender is left. A reader of a broadcast that fell too far behind
    /// skips the events it missed.
    pub async fn next_event(&mut self) -> Option<WebhookEvent> {
        loop {
            match self.recv().await {
                Received::Event(event) => return Some(*event),
                Received::Lagged => continue,
                Received::Closed => return None,
            }
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
pub use listener::{ListenerOptions, WebhookListener};

#[cfg(feature = "webhook-listener")]
mod listener {
    use std::collections::{HashSet, VecDeque};
    use std::net::{Ipv4Addr, SocketAddr};
    use std::sync::{Arc, Mutex, RwLock};
    use std::time::Duration;

    use axum::Router;
    use axum::body::Bytes;
    use axum::extract::State;
    use axum::http::{HeaderMap, StatusCode};
    use futures::TryStreamExt as _;
    use tokio::sync::broadcast;
    use uuid::Uuid;

    use super::EventSource;
    use crate::WebhookEvent;
    use crate::cloud::{
        CloudClient, CloudError, CreateWebhookEndpointRequest, EventType, MissedWebhook,
    };
    use crate::webhook::Webhook;

    /// How many events a slow subscriber may fall behind before it misses some (it
    /// then polls to catch up).
    const CAPACITY: usize = 256;

    /// How many of the latest event identifiers are remembered, so that an event
    /// delivered twice (a retry of a delivery whose answer the service did not get) or
    /// both delivered and listed as missed is forwarded once.
    const RECENT_IDS: usize = 4096;

    /// How a [`WebhookListener`] made by [`WebhookListener::register_with`] runs.
    /// Build it with `..ListenerOptions::default()`.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct ListenerOptions {
        /// How often the endpoint's missed webhooks are listed, and those not seen yet
        /// replayed to the subscribers ([`WebhookListener::catch_up`]). A listing that
        /// fails (the notification service is out) is tried again at the next tick, so
        /// the events lost during an outage arrive soon after it ends. `None`: only
        /// when [`WebhookListener::catch_up`] is called. Default 30 s.
        pub catch_up_every: Option<Duration>,
    }

    impl Default for ListenerOptions {
        fn default() -> Self {
            Self {
                catch_up_every: Some(Duration::from_secs(30)),
            }
        }
    }

    /// The identifiers of the events already forwarded: the latest [`RECENT_IDS`], and
    /// every missed event replayed (the service keeps listing those).
    #[derive(Default)]
    struct Seen {
        recent: VecDeque<Uuid>,
        recent_set: HashSet<Uuid>,
        replayed: HashSet<Uuid>,
    }

    impl Seen {
        /// Whether `id` is new (then it is remembered).
        fn first_time(&mut self, id: Uuid) -> bool {
            if self.replayed.contains(&id) || !self.recent_set.insert(id) {
                return false;
            }
            self.recent.push_back(id);
            if self.recent.len() > RECENT_IDS
                && let Some(old) = self.recent.pop_front()
            {
                self.recent_set.remove(&old);
            }
            true
        }
    }

    #[derive(Clone)]
    struct Shared {
        webhook: Arc<RwLock<Option<Arc<Webhook>>>>,
        events: broadcast::Sender<WebhookEvent>,
        seen: Arc<Mutex<Seen>>,
    }

    impl Shared {
        /// Forwards `event` to every subscriber unless it was forwarded already;
        /// whether it was.
        fn forward(&self, event: WebhookEvent) -> bool {
            let fresh = match self.seen.lock() {
                Ok(mut seen) => seen.first_time(event.id),
                Err(poisoned) => poisoned.into_inner().first_time(event.id),
            };
            if fresh {
                // No subscriber is not an error: the event was received.
                let _ = self.events.send(event);
            }
            fresh
        }

        /// Replays the missed webhooks not forwarded yet; how many.
        fn replay(&self, missed: Vec<MissedWebhook>) -> usize {
            let mut replayed = 0;
            for m in missed {
                let id = m.id;
                let already = match self.seen.lock() {
                    Ok(seen) => seen.replayed.contains(&id),
                    Err(poisoned) => poisoned.into_inner().replayed.contains(&id),
                };
                if already {
                    continue;
                }
                let event = match missed_event(m) {
                    Ok(event) => Some(event),
                    Err(e) => {
                        // Not typeable (a payload this SDK cannot read): nothing to
                        // forward, and not looked at again.
                        tracing::info!(event_id = %id, reason = %e, "a missed webhook that is not a processing event: skipped");
                        None
                    }
                };
                if let Some(event) = event
                    && self.forward(event)
                {
                    replayed += 1;
                }
                match self.seen.lock() {
                    Ok(mut seen) => seen.replayed.insert(id),
                    Err(poisoned) => poisoned.into_inner().replayed.insert(id),
                };
            }
            replayed
        }
    }

    /// A missed webhook as the event it would have delivered.
    fn missed_event(m: MissedWebhook) -> Result<WebhookEvent, serde_json::Error> {
        Ok(WebhookEvent {
            id: m.id,
            event_type: m.event_type,
            created_at: m.created_at,
            endpoint_metadata: m.endpoint_metadata,
            payload: serde_json::from_value(serde_json::Value::Object(m.payload))?,
        })
    }

    /// What [`WebhookListener::catch_up`] needs: the client and the endpoint.
    #[derive(Clone)]
    struct Registration {
        client: CloudClient,
        endpoint_id: Uuid,
    }

    impl Registration {
        async fn catch_up(&self, shared: &Shared) -> Result<usize, CloudError> {
            let missed: Vec<MissedWebhook> = self
                .client
                .list_missed_webhooks(self.endpoint_id)
                .try_collect()
                .await?;
            Ok(shared.replay(missed))
        }
    }

    /// Lists the missed webhooks every `every`, replaying the new ones.
    async fn catch_up_loop(registration: Registration, shared: Shared, every: Duration) {
        let mut out_since: Option<tokio::time::Instant> = None;
        loop {
            tokio::time::sleep(every).await;
            match registration.catch_up(&shared).await {
                Ok(replayed) => {
                    if let Some(since) = out_since.take() {
                        tracing::info!(
                            replayed,
                            out_ms = crate::observe::millis(since.elapsed()),
                            "the notification service answers again: missed webhooks replayed"
                        );
                    } else if replayed > 0 {
                        tracing::info!(replayed, "missed webhooks replayed");
                    }
                }
                Err(e) => {
                    if out_since.is_none() {
                        tracing::info!(
                            reason = %e,
                            "missed webhooks cannot be listed now: trying again at the next tick"
                        );
                    }
                    out_since.get_or_insert_with(tokio::time::Instant::now);
                }
            }
        }
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
        registration: Option<Registration>,
        server: tokio::task::JoinHandle<()>,
        catch_up: Option<tokio::task::JoinHandle<()>>,
    }

    impl std::fmt::Debug for WebhookListener {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("WebhookListener")
                .field("url", &self.url)
                .field("endpoint_id", &self.endpoint_id())
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
                seen: Arc::new(Mutex::new(Seen::default())),
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
                registration: None,
                server,
                catch_up: None,
            })
        }

        /// Starts a listener on `127.0.0.1` and registers it as a webhook endpoint of
        /// the organization for every processing event, with the endpoint's secret in
        /// use; every 30 s the endpoint's missed webhooks are listed and those not seen
        /// yet replayed ([`ListenerOptions`]). [`unregister`](Self::unregister) deletes
        /// the endpoint.
        ///
        /// # Errors
        /// [`CloudError::Config`] when no port can be bound; the errors of
        /// [`CloudClient::create_webhook_endpoint`].
        pub async fn register(client: &CloudClient) -> Result<Self, CloudError> {
            Self::register_with(client, ListenerOptions::default()).await
        }

        /// As [`register`](Self::register), with `options`.
        ///
        /// # Errors
        /// As [`register`](Self::register).
        pub async fn register_with(
            client: &CloudClient,
            options: ListenerOptions,
        ) -> Result<Self, CloudError> {
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
            let registration = Registration {
                client: client.clone(),
                endpoint_id: endpoint.id,
            };
            if let Some(every) = options.catch_up_every {
                listener.catch_up = Some(tokio::spawn(catch_up_loop(
                    registration.clone(),
                    listener.shared.clone(),
                    every.max(Duration::from_millis(10)),
                )));
            }
            listener.registration = Some(registration);
            Ok(listener)
        }

        /// Lists the endpoint's missed webhooks (the events the notification service
        /// gave up delivering) and forwards to the subscribers those not forwarded yet,
        /// as if they had been delivered; returns how many. Each event is forwarded
        /// once, whether it was delivered, replayed, or both.
        ///
        /// # Errors
        /// [`CloudError::Config`] for a listener not made by
        /// [`register`](Self::register); the errors of
        /// [`CloudClient::list_missed_webhooks`] (the notification service is out:
        /// call again later).
        pub async fn catch_up(&self) -> Result<usize, CloudError> {
            let Some(registration) = &self.registration else {
                return Err(CloudError::Config {
                    setting: "webhook listener".to_owned(),
                    reason: "catching up needs the endpoint: make the listener with register"
                        .to_owned(),
                    missing: true,
                });
            };
            registration.catch_up(&self.shared).await
        }

        /// Deletes the endpoint [`register`](Self::register) created, and stops.
        ///
        /// # Errors
        /// The errors of [`CloudClient::delete_webhook_endpoint`].
        pub async fn unregister(self, client: &CloudClient) -> Result<(), CloudError> {
            match self.endpoint_id() {
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
            self.registration.as_ref().map(|r| r.endpoint_id)
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
            if let Some(task) = &self.catch_up {
                task.abort();
            }
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
                // A repeated delivery is acknowledged and not forwarded again.
                shared.forward(event);
                StatusCode::NO_CONTENT
            }
            Err(_) => StatusCode::BAD_REQUEST,
        }
    }
}
