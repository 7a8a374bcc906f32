//! Fault injection for reliability tests:
//!
//! - a share of the requests to every server (cloud, identity provider, notification,
//!   storage) is answered 500, delayed, or cut in the middle of the response body. The
//!   choice is a deterministic function of the seed and the request's arrival number,
//!   so a run can be repeated;
//! - outages: a server taken down ([`FaultHandle::set_down`]) answers every request 503
//!   until it is brought back (the notification service also stops delivering: its
//!   deliveries fail, and those whose retries run out are recorded as missed);
//! - serial links that lose and corrupt bytes ([`SerialFaults`]).
//!
//! [`FaultHandle`] counts what was injected, so that a test can say how many faults its
//! run met.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::api_error::ApiError;

/// The servers of the emulator that an outage can take down.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Service {
    /// The cloud service (`base_url`).
    Cloud,
    /// The identity provider (`auth_url`).
    IdentityProvider,
    /// The notification service (`notification_url`) and its webhook deliveries.
    Notification,
    /// Object storage (`storage_url`).
    Storage,
}

impl Service {
    const ALL: [Service; 4] = [
        Service::Cloud,
        Service::IdentityProvider,
        Service::Notification,
        Service::Storage,
    ];

    fn index(self) -> usize {
        match self {
            Service::Cloud => 0,
            Service::IdentityProvider => 1,
            Service::Notification => 2,
            Service::Storage => 3,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Service::Cloud => "the cloud service",
            Service::IdentityProvider => "the identity provider",
            Service::Notification => "the notification service",
            Service::Storage => "object storage",
        }
    }
}

/// How many faults were injected so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultCounts {
    /// Requests that went through the fault injection (every request when `rate` > 0).
    pub requests: u64,
    /// Answered 500 without being served.
    pub errors: u64,
    /// Served late.
    pub delays: u64,
    /// Served, their answer cut in the middle.
    pub cuts: u64,
    /// Answered 503 because their server was down.
    pub refused_while_down: u64,
    /// Webhook deliveries that failed because the notification service was down.
    pub deliveries_failed_while_down: u64,
}

#[derive(Debug, Default)]
struct Live {
    down: [AtomicBool; 4],
    refused: [AtomicU64; 4],
    requests: AtomicU64,
    errors: AtomicU64,
    delays: AtomicU64,
    cuts: AtomicU64,
    deliveries_failed: AtomicU64,
}

/// The live side of a [`FaultConfig`]: take servers down and up while the emulator
/// runs, and read what was injected. Every clone (of the handle, of the configuration
/// holding it, and the emulator started with that configuration) shares the same
/// switches and counters.
#[derive(Clone, Debug, Default)]
pub struct FaultHandle {
    live: Arc<Live>,
}

impl FaultHandle {
    /// Takes `service` down (`true`: every request is answered 503 until it is brought
    /// back) or up again.
    pub fn set_down(&self, service: Service, down: bool) {
        self.live.down[service.index()].store(down, Ordering::SeqCst);
    }

    /// Whether `service` is down.
    pub fn is_down(&self, service: Service) -> bool {
        self.live.down[service.index()].load(Ordering::SeqCst)
    }

    /// How many requests `service` answered 503 while down.
    pub fn refused(&self, service: Service) -> u64 {
        self.live.refused[service.index()].load(Ordering::Relaxed)
    }

    /// What was injected so far.
    pub fn counts(&self) -> FaultCounts {
        let l = &self.live;
        FaultCounts {
            requests: l.requests.load(Ordering::Relaxed),
            errors: l.errors.load(Ordering::Relaxed),
            delays: l.delays.load(Ordering::Relaxed),
            cuts: l.cuts.load(Ordering::Relaxed),
            refused_while_down: Service::ALL.iter().map(|s| self.refused(*s)).sum(),
            deliveries_failed_while_down: l.deliveries_failed.load(Ordering::Relaxed),
        }
    }

    /// Counts a webhook delivery that failed because the notification service is down.
    pub(crate) fn delivery_failed_while_down(&self) {
        self.live.deliveries_failed.fetch_add(1, Ordering::Relaxed);
    }

    /// `router` answering 503 while `service` is down.
    pub(crate) fn wrap(&self, service: Service, router: Router) -> Router {
        router.layer(axum::middleware::from_fn_with_state(
            (self.clone(), service),
            refuse_while_down,
        ))
    }
}

async fn refuse_while_down(
    State((handle, service)): State<(FaultHandle, Service)>,
    request: Request,
    next: Next,
) -> Response {
    if !handle.is_down(service) {
        return next.run(request).await;
    }
    handle.live.refused[service.index()].fetch_add(1, Ordering::Relaxed);
    // Plain text: the server writes it in its own error format.
    (
        StatusCode::SERVICE_UNAVAILABLE,
        format!("{} is down (injected outage)", service.name()),
    )
        .into_response()
}

/// Which faults, how often. The default injects nothing.
#[derive(Clone, Debug)]
pub struct FaultConfig {
    /// Share of requests that get a fault, from 0 (none) to 1 (all).
    pub rate: f64,
    /// Kinds to draw from (each equally likely among those enabled).
    pub errors: bool,
    pub delays: bool,
    pub cuts: bool,
    /// How long a delayed request waits before it is served.
    pub delay: Duration,
    pub seed: u64,
    /// Outage switches and counters, shared with every clone (see [`FaultHandle`]).
    pub handle: FaultHandle,
}

impl Default for FaultConfig {
    fn default() -> Self {
        Self {
            rate: 0.0,
            errors: true,
            delays: true,
            cuts: true,
            delay: Duration::from_millis(200),
            seed: 0x5eed,
            handle: FaultHandle::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    Error,
    Delay,
    Cut,
}

#[derive(Clone)]
pub struct Faults {
    config: Arc<FaultConfig>,
    counter: Arc<AtomicU64>,
}

/// splitmix64: a well-mixed 64-bit value from a counter.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Faults {
    pub fn new(config: FaultConfig) -> Self {
        Self {
            config: Arc::new(config),
            counter: Arc::new(AtomicU64::new(0)),
        }
    }

    fn draw(&self) -> Option<Fault> {
        let c = &self.config;
        if c.rate <= 0.0 {
            return None;
        }
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let roll = mix(c.seed ^ mix(n));
        if (roll >> 11) as f64 / (1u64 << 53) as f64 >= c.rate {
            return None;
        }
        let kinds: Vec<Fault> = [
            (c.errors, Fault::Error),
            (c.delays, Fault::Delay),
            (c.cuts, Fault::Cut),
        ]
        .into_iter()
        .filter_map(|(on, f)| on.then_some(f))
        .collect();
        let pick = usize::try_from(mix(roll) % kinds.len().max(1) as u64).unwrap_or(0);
        kinds.get(pick).copied()
    }

    /// `router` of `service` with the injected faults, and answering 503 while
    /// `service` is down.
    pub fn wrap(&self, service: Service, router: Router) -> Router {
        let router = if self.config.rate <= 0.0 {
            router
        } else {
            router.layer(axum::middleware::from_fn_with_state(self.clone(), inject))
        };
        // Outermost: a server that is down answers before anything else runs.
        self.config.handle.wrap(service, router)
    }
}

async fn inject(State(faults): State<Faults>, request: Request, next: Next) -> Response {
    let live = &faults.config.handle.live;
    live.requests.fetch_add(1, Ordering::Relaxed);
    match faults.draw() {
        None => next.run(request).await,
        Some(Fault::Error) => {
            live.errors.fetch_add(1, Ordering::Relaxed);
            ApiError::internal("injected fault: the server failed").into_response()
        }
        Some(Fault::Delay) => {
            live.delays.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(faults.config.delay).await;
            next.run(request).await
        }
        Some(Fault::Cut) => {
            live.cuts.fetch_add(1, Ordering::Relaxed);
            // The request is served (its effects happen), but the answer breaks off.
            let response = next.run(request).await;
            let (parts, body) = response.into_parts();
            let Ok(bytes) = axum::body::to_bytes(body, 64 << 20).await else {
                return ApiError::internal("injected fault: the answer was too large to cut")
                    .into_response();
            };
            if bytes.is_empty() {
                return ApiError::internal("injected fault: the connection broke").into_response();
            }
            let half = bytes.slice(..bytes.len() / 2);
            let stream = futures::stream::iter([
                Ok::<Bytes, std::io::Error>(half),
                Err(std::io::Error::new(
                    std::io::ErrorKind::ConnectionReset,
                    "injected fault: cut",
                )),
            ]);
            Response::from_parts(parts, Body::from_stream(stream))
        }
    }
}

/// Byte faults of the unit's serial links (the TCP bridge and the pseudo-terminal), as a
/// noisy line makes them: a share `rate` of the chunks crossing the line (each read
/// from the host, each answer written back) loses a run of bytes or has one byte
/// corrupted. The sbgECom CRC rejects a damaged frame, so a damaged request is never
/// applied and a damaged answer is never read: each looks like silence. Which chunks
/// are damaged, and how, is a deterministic function of the seed and the chunk's
/// number on the unit.
#[derive(Clone, Debug)]
pub struct SerialFaultConfig {
    /// Share of the chunks damaged, from 0 (none, the default) to 1 (all).
    pub rate: f64,
    pub seed: u64,
    /// Counters of what was damaged, shared with every clone.
    pub handle: SerialFaultHandle,
}

impl Default for SerialFaultConfig {
    fn default() -> Self {
        Self {
            rate: 0.0,
            seed: 0x5e71_a15e,
            handle: SerialFaultHandle::default(),
        }
    }
}

/// What the serial faults did so far.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SerialFaultCounts {
    /// Chunks that crossed a serial link (both ways).
    pub chunks: u64,
    /// Chunks that lost a run of bytes.
    pub dropped: u64,
    /// Chunks with a corrupted byte.
    pub corrupted: u64,
}

#[derive(Debug, Default)]
struct SerialLive {
    chunks: AtomicU64,
    dropped: AtomicU64,
    corrupted: AtomicU64,
}

/// The counters of a [`SerialFaultConfig`], shared by its clones and the unit started
/// with it.
#[derive(Clone, Debug, Default)]
pub struct SerialFaultHandle {
    live: Arc<SerialLive>,
}

impl SerialFaultHandle {
    /// What was damaged so far.
    pub fn counts(&self) -> SerialFaultCounts {
        SerialFaultCounts {
            chunks: self.live.chunks.load(Ordering::Relaxed),
            dropped: self.live.dropped.load(Ordering::Relaxed),
            corrupted: self.live.corrupted.load(Ordering::Relaxed),
        }
    }
}

/// The longest run of bytes a dropped chunk loses.
const MAX_DROPPED_RUN: usize = 16;

/// Damages chunks of a serial link as [`SerialFaultConfig`] says. Cheap to clone;
/// clones count chunks together.
#[derive(Clone, Debug)]
pub struct SerialFaults {
    config: Arc<SerialFaultConfig>,
    counter: Arc<AtomicU64>,
}

impl SerialFaults {
    pub fn new(config: SerialFaultConfig) -> Self {
        Self {
            config: Arc::new(config),
            counter: Arc::new(AtomicU64::new(0)),
        }
    }

    /// `chunk` as the line delivers it: most often unchanged; a share `rate` loses a
    /// run of 1 to 16 bytes or has one byte corrupted (never left unchanged by it).
    pub fn apply(&self, chunk: &mut Vec<u8>) {
        let c = &self.config;
        if c.rate <= 0.0 || chunk.is_empty() {
            return;
        }
        let live = &c.handle.live;
        live.chunks.fetch_add(1, Ordering::Relaxed);
        let n = self.counter.fetch_add(1, Ordering::Relaxed);
        let roll = mix(c.seed ^ mix(n));
        if (roll >> 11) as f64 / (1u64 << 53) as f64 >= c.rate {
            return;
        }
        let pick = mix(roll);
        let len = chunk.len() as u64;
        let at = usize::try_from((pick >> 8) % len).unwrap_or(0);
        if pick & 1 == 0 {
            let run = 1 + usize::try_from((pick >> 40) % MAX_DROPPED_RUN as u64).unwrap_or(0);
            let end = (at + run).min(chunk.len());
            chunk.drain(at..end);
            live.dropped.fetch_add(1, Ordering::Relaxed);
        } else {
            // A nonzero mask: the byte always changes.
            let mask = ((pick >> 48) as u8) | 1;
            chunk[at] ^= mask;
            live.corrupted.fetch_add(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_share_of_faults_follows_the_rate_and_the_seed() {
        let faults = Faults::new(FaultConfig {
            rate: 0.2,
            ..FaultConfig::default()
        });
        let drawn: Vec<_> = (0..10_000).map(|_| faults.draw()).collect();
        let hit = drawn.iter().filter(|f| f.is_some()).count();
        assert!((1_800..2_200).contains(&hit), "{hit} of 10000");
        for kind in [Fault::Error, Fault::Delay, Fault::Cut] {
            assert!(
                drawn.iter().filter(|f| **f == Some(kind)).count() > 500,
                "{kind:?}"
            );
        }
        let again = Faults::new(FaultConfig {
            rate: 0.2,
            ..FaultConfig::default()
        });
        assert_eq!(
            drawn,
            (0..10_000).map(|_| again.draw()).collect::<Vec<_>>(),
            "same seed, same faults"
        );
        let none = Faults::new(FaultConfig::default());
        assert!((0..1000).all(|_| none.draw().is_none()));
    }

    #[test]
    fn serial_faults_damage_the_share_of_chunks_asked_and_always_change_them() {
        let config = SerialFaultConfig {
            rate: 0.2,
            ..SerialFaultConfig::default()
        };
        let handle = config.handle.clone();
        let faults = SerialFaults::new(config);
        let original: Vec<u8> = (0..64).collect();
        let mut damaged = 0;
        for _ in 0..5_000 {
            let mut chunk = original.clone();
            faults.apply(&mut chunk);
            if chunk != original {
                damaged += 1;
                assert!(chunk.len() >= original.len() - MAX_DROPPED_RUN);
            }
        }
        let counts = handle.counts();
        assert_eq!(counts.chunks, 5_000);
        assert_eq!(counts.dropped + counts.corrupted, damaged);
        assert!((850..1_150).contains(&damaged), "{damaged} of 5000");
        assert!(counts.dropped > 300 && counts.corrupted > 300, "{counts:?}");

        let none = SerialFaults::new(SerialFaultConfig::default());
        let mut chunk = original.clone();
        none.apply(&mut chunk);
        assert_eq!(chunk, original);
    }

    #[tokio::test]
    async fn a_server_that_is_down_answers_503_until_it_is_back() {
        use tower::ServiceExt as _;
        let handle = FaultHandle::default();
        let router = handle.wrap(
            Service::IdentityProvider,
            Router::new().route("/", axum::routing::get(|| async { "up" })),
        );
        let status = |router: Router| async move {
            let request = Request::builder().uri("/").body(Body::empty()).unwrap();
            router.oneshot(request).await.unwrap().status()
        };
        assert_eq!(status(router.clone()).await, StatusCode::OK);
        handle.set_down(Service::IdentityProvider, true);
        assert_eq!(
            status(router.clone()).await,
            StatusCode::SERVICE_UNAVAILABLE
        );
        assert_eq!(handle.refused(Service::IdentityProvider), 1);
        assert_eq!(handle.refused(Service::Cloud), 0);
        handle.set_down(Service::IdentityProvider, false);
        assert_eq!(status(router).await, StatusCode::OK);
        assert_eq!(handle.counts().refused_while_down, 1);
    }
}

/// An exchange with the emulated unit that is lost on the way, for tests of what a
/// client does when it cannot know whether a request was applied: the `count` first
/// requests of `operation` (an `operationId` of `openapi/ins-device.yaml`) get no
/// answer, over every link (HTTP closes the connection, serial sends no reply frame).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LostExchange {
    /// The operation, e.g. `saveSettings`, `reboot`, `unlockSettings`.
    pub operation: String,
    /// Whether the request is lost (never applied) or only its answer (applied).
    pub lost: Lost,
    /// How many requests of the operation are lost, the first ones.
    pub count: u32,
}

/// What a [`LostExchange`] loses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lost {
    /// The request never reaches the unit: nothing is applied, nothing answered.
    Request,
    /// The unit applies the request; its answer never reaches the client.
    Answer,
}

impl std::str::FromStr for LostExchange {
    type Err = String;

    /// `OPERATION[:request|answer][:COUNT]`, e.g. `reboot:answer`, `saveSettings:request:2`
    /// (the answer, once, by default).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let mut parts = text.split(':');
        let operation = parts.next().unwrap_or_default();
        if operation.is_empty() {
            return Err(format!("`{text}`: name an operation, e.g. reboot:answer"));
        }
        let mut lost = Lost::Answer;
        let mut count = 1;
        for part in parts {
            match part {
                "request" => lost = Lost::Request,
                "answer" => lost = Lost::Answer,
                number => {
                    count = number.parse().map_err(|_| {
                        format!("`{text}`: `{number}` is neither request, answer nor a count")
                    })?;
                }
            }
        }
        Ok(Self {
            operation: operation.to_owned(),
            lost,
            count,
        })
    }
}
