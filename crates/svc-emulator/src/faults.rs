//! Fault injection for reliability tests: a share of the requests to every server (cloud,
//! identity provider, notification, storage) is answered 500, delayed, or cut in the
//! middle of the response body. The choice is a deterministic function of the seed and
//! the request's arrival number, so a run can be repeated.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;

use crate::http::ApiError;

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

    pub fn wrap(&self, router: Router) -> Router {
        if self.config.rate <= 0.0 {
            return router;
        }
        router.layer(axum::middleware::from_fn_with_state(self.clone(), inject))
    }
}

async fn inject(State(faults): State<Faults>, request: Request, next: Next) -> Response {
    match faults.draw() {
        None => next.run(request).await,
        Some(Fault::Error) => {
            ApiError::internal("injected fault: the server failed").into_response()
        }
        Some(Fault::Delay) => {
            tokio::time::sleep(faults.config.delay).await;
            next.run(request).await
        }
        Some(Fault::Cut) => {
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
}
