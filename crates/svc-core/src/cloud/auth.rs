//! Access tokens: OpenID Connect discovery, the password grant, a cache refreshed ahead
//! of expiry by one request at a time, and invalidation after a 401.
//!
//! The cache is the [`TokenSource`] of the generated clients' [`CloudState`], so every
//! generated call carries `Authorization: Bearer <token>`.
//!
//! While the identity provider fails, it is asked by one task at a time, with the
//! client's retry policy; tasks that waited for that attempt get its error at once
//! instead of asking again each in turn (a hundred workflows would otherwise send a
//! hundred rounds of retries to a provider that is down).
//!
//! [`CloudState`]: svc_cloud_api::CloudState

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use svc_cloud_api::hooks::TokenFuture;
use svc_cloud_api::{AccessToken, TokenError, TokenSource};

use tracing::Instrument as _;

use super::error::{classify, shorten, transport_reason};
use super::token_provider::{TokenProvider, TokenProviderError};
use super::{ApiSecret, CloudError, TransportKind};
use crate::retry::RetryPolicy;

/// The pseudo-operation of the discovery request, in errors.
pub(crate) const DISCOVERY: &str = "openidConfiguration";
/// The pseudo-operation of the token request, in errors.
pub(crate) const TOKEN: &str = "requestToken";

/// The longest time before expiry at which a token is renewed.
const MAX_REFRESH_MARGIN: Duration = Duration::from_secs(30);

/// How long before its expiry a token of `lifetime` is renewed: a tenth of its lifetime,
/// at most 30 s (30 s for the service's 300 s tokens, 200 ms for 2 s tokens).
pub(crate) fn refresh_margin(lifetime: Duration) -> Duration {
    (lifetime / 10).min(MAX_REFRESH_MARGIN)
}

#[derive(Clone)]
struct Cached {
    token: AccessToken,
    /// When to ask for a new one (ahead of the expiry).
    refresh_at: Instant,
    /// Tells tokens apart, so a 401 only discards the token it was answered to.
    generation: u64,
}

/// The token cache of one client.
pub(crate) struct TokenCache {
    http: reqwest::Client,
    discovery_url: String,
    api_key: String,
    api_secret: ApiSecret,
    retry: RetryPolicy,
    /// Where tokens come from instead of the password grant, when the client has one.
    provider: Option<Arc<dyn TokenProvider>>,
    current: Mutex<Option<Cached>>,
    /// Held while a token is being obtained (single flight); holds the discovered
    /// token endpoint.
    refresh: tokio::sync::Mutex<Option<String>>,
    /// How many attempts to obtain a token (each with its retries) failed so far.
    failures: AtomicU64,
    /// The error of the last failed attempt, shared with the tasks that waited for it.
    last_failure: Mutex<Option<CloudError>>,
}

#[derive(Deserialize)]
struct Discovery {
    token_endpoint: String,
}

#[derive(Deserialize)]
struct TokenAnswer {
    access_token: String,
    #[serde(default)]
    token_type: Option<String>,
    #[serde(default)]
    expires_in: Option<u64>,
}

#[derive(Deserialize)]
struct OAuthError {
    error: String,
    #[serde(default)]
    error_description: Option<String>,
}

/// `expires_in` when the identity provider does not say (the service's lifetime).
const DEFAULT_LIFETIME: Duration = Duration::from_secs(300);

impl TokenCache {
    pub(crate) fn new(
        http: reqwest::Client,
        auth_url: &str,
        api_key: String,
        api_secret: ApiSecret,
        retry: RetryPolicy,
    ) -> Self {
        Self {
            http,
            discovery_url: format!("{auth_url}/.well-known/openid-configuration"),
            api_key,
            api_secret,
            retry,
            provider: None,
            current: Mutex::new(None),
            refresh: tokio::sync::Mutex::new(None),
            failures: AtomicU64::new(0),
            last_failure: Mutex::new(None),
        }
    }

    /// A cache whose tokens come from `provider` (no identity provider, key or secret).
    pub(crate) fn with_provider(
        http: reqwest::Client,
        provider: Arc<dyn TokenProvider>,
        retry: RetryPolicy,
    ) -> Self {
        Self {
            provider: Some(provider),
            ..Self::new(http, "", String::new(), ApiSecret::new(""), retry)
        }
    }

    fn current(&self) -> std::sync::MutexGuard<'_, Option<Cached>> {
        match self.current.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The cached token and its generation, unless it is due for renewal.
    fn fresh(&self) -> Option<(AccessToken, u64)> {
        self.current()
            .as_ref()
            .filter(|c| Instant::now() < c.refresh_at)
            .map(|c| (c.token.clone(), c.generation))
    }

    /// A valid token and its generation: the cached one, or a new one. However many
    /// tasks ask at once, one request is made: the first takes the refresh lock, the
    /// others wait for it and then find the new token in the cache — or, when that
    /// attempt failed, its error (see the module documentation).
    pub(crate) async fn token(&self) -> Result<(AccessToken, u64), CloudError> {
        if let Some(t) = self.fresh() {
            return Ok(t);
        }
        let failures_before = self.failures.load(Ordering::Acquire);
        let mut endpoint = self.refresh.lock().await;
        if let Some(t) = self.fresh() {
            return Ok(t);
        }
        if self.failures.load(Ordering::Acquire) != failures_before
            && let Some(error) = self.shared_failure()
        {
            tracing::debug!(kind = %error.kind(), "no access token: the attempt waited for failed");
            return Err(error);
        }
        let result = self.obtain(&mut endpoint).await;
        if let Err(e) = &result {
            *self
                .last_failure
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = shareable(e);
            self.failures.fetch_add(1, Ordering::Release);
        }
        result
    }

    /// A copy of the last failure's error.
    fn shared_failure(&self) -> Option<CloudError> {
        self.last_failure
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .and_then(shareable)
    }

    /// One attempt to obtain a token (with the retry policy), the refresh lock held:
    /// `endpoint` is the discovered token endpoint, if known.
    async fn obtain(
        &self,
        endpoint: &mut Option<String>,
    ) -> Result<(AccessToken, u64), CloudError> {
        let reason = match self.current().as_ref() {
            None => "no token yet (or the last one was refused)",
            Some(_) => "the token is about to expire",
        };
        let span = tracing::info_span!("token", reason);
        async {
            let requested_at = Instant::now();
            let answer = match &self.provider {
                Some(provider) => self.provided(provider.as_ref()).await,
                None => {
                    let token_endpoint = match endpoint.as_ref() {
                        Some(e) => e.clone(),
                        None => {
                            let e = self.discover().await?;
                            *endpoint = Some(e.clone());
                            e
                        }
                    };
                    self.request_token(&token_endpoint).await
                }
            };
            let (token, lifetime) = match answer {
                Ok(answer) => answer,
                Err(e) => {
                    tracing::debug!(kind = %e.kind(), error = %e, "no access token");
                    return Err(e);
                }
            };
            let mut current = self.current();
            let generation = current.as_ref().map_or(1, |c| c.generation + 1);
            let refresh_in = lifetime.saturating_sub(refresh_margin(lifetime));
            *current = Some(Cached {
                token: token.clone(),
                refresh_at: requested_at + refresh_in,
                generation,
            });
            tracing::info!(
                generation,
                lifetime_s = lifetime.as_secs(),
                renew_in_s = refresh_in.as_secs(),
                elapsed_ms = crate::observe::millis(requested_at.elapsed()),
                "access token obtained"
            );
            Ok((token, generation))
        }
        .instrument(span)
        .await
    }

    /// A token from the application's provider, asked again (with the retry policy)
    /// while it is unavailable.
    async fn provided(
        &self,
        provider: &dyn TokenProvider,
    ) -> Result<(AccessToken, Duration), CloudError> {
        tracing::debug!("asking the token provider");
        self.retry
            .run_explained(
                |_| async {
                    match provider.access_token().await {
                        Ok(t) if t.token.expose_secret().trim().is_empty() => {
                            Err(CloudError::InvalidResponse {
                                operation: TOKEN,
                                reason: "the token provider gave an empty token".to_owned(),
                            })
                        }
                        Ok(t) => Ok((t.token, t.lifetime.unwrap_or(DEFAULT_LIFETIME))),
                        // Refused credentials, as the identity provider's 401 would be.
                        Err(e @ TokenProviderError::Refused(_)) => {
                            Err(CloudError::Authentication {
                                status: Some(401),
                                error: "token_provider_refused".to_owned(),
                                description: e.to_string(),
                            })
                        }
                        Err(e @ TokenProviderError::Unavailable(_)) => Err(CloudError::Transport {
                            operation: TOKEN,
                            kind: TransportKind::Connect,
                            reason: e.to_string(),
                            source: None,
                        }),
                    }
                },
                transient,
                ToString::to_string,
            )
            .await
    }

    /// Forgets the token of `generation` (the service answered 401 to it), so the next
    /// [`TokenCache::token`] obtains a new one. A newer token is kept.
    pub(crate) fn invalidate(&self, generation: u64) {
        let mut current = self.current();
        if current.as_ref().is_some_and(|c| c.generation == generation) {
            tracing::debug!(generation, "access token discarded");
            *current = None;
        }
    }

    async fn discover(&self) -> Result<String, CloudError> {
        tracing::debug!(
            url = %crate::observe::url(&self.discovery_url),
            "OpenID Connect discovery"
        );
        let answer = self
            .retry
            .run_explained(
                |_| async {
                    let response = self
                        .http
                        .get(&self.discovery_url)
                        .send()
                        .await
                        .map_err(|e| unreachable(DISCOVERY, e))?;
                    let status = response.status();
                    let bytes = response
                        .bytes()
                        .await
                        .map_err(|e| unreachable(DISCOVERY, e))?;
                    if !status.is_success() {
                        let description = format!(
                            "{}: {}",
                            self.discovery_url,
                            shorten(&String::from_utf8_lossy(&bytes), 300)
                        );
                        return Err(failing(DISCOVERY, status).unwrap_or(
                            CloudError::Authentication {
                                status: Some(status.as_u16()),
                                error: "discovery_failed".to_owned(),
                                description,
                            },
                        ));
                    }
                    Ok(bytes)
                },
                transient,
                ToString::to_string,
            )
            .await?;
        let discovery: Discovery =
            serde_json::from_slice(&answer).map_err(|e| CloudError::InvalidResponse {
                operation: DISCOVERY,
                reason: format!(
                    "{} is not an OpenID configuration with a token_endpoint: {e}",
                    self.discovery_url
                ),
            })?;
        Ok(discovery.token_endpoint)
    }

    /// The password grant (the `oidc` security scheme of `openapi/cloud.yaml`):
    /// `grant_type=password`, `client_id=api-key`, `username=<API_KEY>`,
    /// `password=<API_SECRET>`, `scope=openid`. Repeating it after a failure is harmless
    /// (at worst a token is issued and not used).
    async fn request_token(&self, endpoint: &str) -> Result<(AccessToken, Duration), CloudError> {
        let form = [
            ("grant_type", "password"),
            ("client_id", "api-key"),
            ("username", self.api_key.as_str()),
            ("password", self.api_secret.expose_secret()),
            ("scope", "openid"),
        ];
        tracing::debug!(url = %crate::observe::url(endpoint), "password grant");
        let (status, bytes) = self
            .retry
            .run_explained(
                |_| async {
                    let response = self
                        .http
                        .post(endpoint)
                        .form(&form)
                        .send()
                        .await
                        .map_err(|e| unreachable(TOKEN, e))?;
                    let status = response.status();
                    let bytes = response.bytes().await.map_err(|e| unreachable(TOKEN, e))?;
                    if status.is_success() {
                        return Ok((status, bytes));
                    }
                    Err(self.refused(status, &bytes))
                },
                transient,
                ToString::to_string,
            )
            .await?;
        let answer: TokenAnswer =
            serde_json::from_slice(&bytes).map_err(|e| CloudError::InvalidResponse {
                operation: TOKEN,
                reason: format!(
                    "the identity provider answered {} without a readable access token: {}",
                    status.as_u16(),
                    e.classify_name()
                ),
            })?;
        if let Some(kind) = answer
            .token_type
            .as_deref()
            .filter(|t| !t.eq_ignore_ascii_case("bearer"))
        {
            return Err(CloudError::InvalidResponse {
                operation: TOKEN,
                reason: format!(
                    "the identity provider issued a `{kind}` token, not a bearer token"
                ),
            });
        }
        let lifetime = answer
            .expires_in
            .map_or(DEFAULT_LIFETIME, Duration::from_secs);
        Ok((AccessToken::new(answer.access_token), lifetime))
    }

    /// The identity provider refused: its RFC 6749 error, the secret scrubbed from it.
    /// A failing identity provider (5xx, 408, 429) did not refuse anything: that is a
    /// transient [`CloudError::Api`] of the token request, not an authentication error.
    fn refused(&self, status: reqwest::StatusCode, body: &[u8]) -> CloudError {
        if let Some(e) = failing(TOKEN, status) {
            return e;
        }
        let (error, description) = match serde_json::from_slice::<OAuthError>(body) {
            Ok(e) => (e.error, e.error_description.unwrap_or_default()),
            Err(_) => (
                status.canonical_reason().unwrap_or("error").to_owned(),
                shorten(&String::from_utf8_lossy(body), 300),
            ),
        };
        CloudError::Authentication {
            status: Some(status.as_u16()),
            error: self.scrub(&error),
            description: self.scrub(&description),
        }
    }

    fn scrub(&self, text: &str) -> String {
        let secret = self.api_secret.expose_secret();
        if secret.is_empty() {
            text.to_owned()
        } else {
            text.replace(secret, "[redacted]")
        }
    }
}

/// A copy of a token error for the tasks that waited for the attempt (the transport
/// error's source, which cannot be copied, is left out: its text is in `reason`);
/// `None` for an error a token attempt does not give.
fn shareable(e: &CloudError) -> Option<CloudError> {
    Some(match e {
        CloudError::Api {
            operation,
            status,
            title,
            details,
        } => CloudError::Api {
            operation,
            status: *status,
            title: title.clone(),
            details: details.clone(),
        },
        CloudError::Transport {
            operation,
            kind,
            reason,
            ..
        } => CloudError::Transport {
            operation,
            kind: *kind,
            reason: reason.clone(),
            source: None,
        },
        CloudError::Authentication {
            status,
            error,
            description,
        } => CloudError::Authentication {
            status: *status,
            error: error.clone(),
            description: description.clone(),
        },
        CloudError::InvalidResponse { operation, reason } => CloudError::InvalidResponse {
            operation,
            reason: reason.clone(),
        },
        _ => return None,
    })
}

/// Retry only what may pass on its own (an unreachable or failing identity provider).
fn transient(e: &CloudError) -> bool {
    e.retry_hint() == super::RetryHint::Transient
}

/// The identity provider could not be reached: a [`CloudError::Transport`] of the
/// discovery or token request (not an authentication failure: nothing was refused).
fn unreachable(operation: &'static str, e: reqwest::Error) -> CloudError {
    let kind = classify(&e);
    let what = match kind {
        TransportKind::Connect => "could not connect to the identity provider",
        TransportKind::Timeout => "the identity provider did not answer in time",
        _ => "the connection to the identity provider failed",
    };
    CloudError::Transport {
        operation,
        kind,
        reason: format!("{what}: {}", transport_reason(&e)),
        source: Some(e.without_url()),
    }
}

/// A status of a failing (not refusing) identity provider, as the transient error of
/// `operation`; `None` for any other status.
fn failing(operation: &'static str, status: reqwest::StatusCode) -> Option<CloudError> {
    let code = status.as_u16();
    (status.is_server_error() || code == 408 || code == 429).then(|| CloudError::Api {
        operation,
        status: code,
        title: status.canonical_reason().unwrap_or("Error").to_owned(),
        details: "the identity provider failed; try again later".to_owned(),
    })
}

trait ClassifyName {
    fn classify_name(&self) -> &'static str;
}

impl ClassifyName for serde_json::Error {
    /// The kind of a decoding error, without its text (which could quote the token).
    fn classify_name(&self) -> &'static str {
        match self.classify() {
            serde_json::error::Category::Io => "read error",
            serde_json::error::Category::Syntax => "not JSON",
            serde_json::error::Category::Data => "missing or mistyped fields",
            serde_json::error::Category::Eof => "truncated JSON",
        }
    }
}

impl TokenSource for TokenCache {
    fn access_token(&self) -> TokenFuture<'_> {
        Box::pin(async move {
            self.token()
                .await
                .map(|(token, _)| token)
                .map_err(|e| TokenError(e.to_string()))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_renewed_ahead_of_expiry() {
        assert_eq!(
            refresh_margin(Duration::from_secs(300)),
            Duration::from_secs(30)
        );
        assert_eq!(
            refresh_margin(Duration::from_secs(3600)),
            Duration::from_secs(30)
        );
        assert_eq!(
            refresh_margin(Duration::from_secs(2)),
            Duration::from_millis(200)
        );
        assert_eq!(refresh_margin(Duration::ZERO), Duration::ZERO);
    }
}
