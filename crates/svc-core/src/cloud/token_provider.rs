//! Access tokens from the application instead of the API key and secret.
//!
//! A client built with [`CloudClient::with_token_provider`](super::CloudClient::with_token_provider)
//! never holds an API secret: when it needs a token (the first request, a token about to
//! expire, a 401), it asks the [`TokenProvider`], typically the application's own
//! backend, which holds the organization's key and secret and gives its users
//! short-lived access tokens. This is the way for applications distributed to users (a
//! phone app): a secret embedded in an app can be extracted from it. The key and secret
//! remain for managed internal tools and servers.
//!
//! The token cache is the same as with the key and secret: one request to the provider
//! at a time however many tasks need a token, renewal ahead of expiry, a new token
//! after a 401. A provider that is [`TokenProviderError::Unavailable`] is asked again
//! with the client's retry policy; one that [`TokenProviderError::Refused`] is not.

use std::time::Duration;

use futures::future::BoxFuture;

use super::AccessToken;

/// An access token the provider obtained, and how long it stays valid.
#[derive(Clone, Debug)]
pub struct ProvidedToken {
    /// The bearer token (`Debug` prints `[redacted]`).
    pub token: AccessToken,
    /// How long it stays valid from now; `None`: the service's usual 300 s.
    pub lifetime: Option<Duration>,
}

/// Why a [`TokenProvider`] gave no token. The text is the application's; it must not
/// hold a secret (it ends up in errors and logs).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TokenProviderError {
    /// No token will be given (the user signed out, lacks the right): an
    /// authentication error, not retried.
    #[error("the token provider refused: {0}")]
    Refused(String),
    /// The provider could not get one now (its backend unreachable or failing): retried
    /// with the client's retry policy, then a transient error.
    #[error("the token provider failed: {0}")]
    Unavailable(String),
}

/// Gives access tokens to a [`CloudClient`](super::CloudClient).
pub trait TokenProvider: Send + Sync + 'static {
    /// A new access token (the client caches it and asks again ahead of its expiry, or
    /// after the service refused it).
    fn access_token(&self) -> BoxFuture<'_, Result<ProvidedToken, TokenProviderError>>;
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::FutureExt as _;
    use svc_emulator::{Emulator, EmulatorConfig};

    use super::*;
    use crate::cloud::{ApiSecret, CloudClient, CloudConfig, CloudError};
    use crate::retry::RetryPolicy;

    /// What the application's backend would do: mint a token with the organization's
    /// key and secret (here, through a key-and-secret client of the emulator), after
    /// answering as `script` says for each call (then always with a token).
    struct Backend {
        minting: CloudClient,
        calls: AtomicUsize,
        script: Vec<Option<TokenProviderError>>,
        /// A token the service will refuse, given once at `stale_at`.
        stale_at: Option<usize>,
    }

    impl TokenProvider for Backend {
        fn access_token(&self) -> BoxFuture<'_, Result<ProvidedToken, TokenProviderError>> {
            async move {
                let call = self.calls.fetch_add(1, Ordering::SeqCst);
                if let Some(Some(e)) = self.script.get(call) {
                    return Err(e.clone());
                }
                if self.stale_at == Some(call) {
                    return Ok(ProvidedToken {
                        token: AccessToken::new("not-a-token-the-service-issued"),
                        lifetime: Some(Duration::from_secs(300)),
                    });
                }
                let token = self
                    .minting
                    .access_token()
                    .await
                    .map_err(|e| TokenProviderError::Unavailable(e.to_string()))?;
                Ok(ProvidedToken {
                    token,
                    lifetime: None,
                })
            }
            .boxed()
        }
    }

    fn retry() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 4,
            base_delay: Duration::from_millis(2),
            max_delay: Duration::from_millis(10),
            max_elapsed: Duration::from_secs(10),
        }
    }

    async fn rig(
        script: Vec<Option<TokenProviderError>>,
        stale_at: Option<usize>,
    ) -> (Emulator, Arc<Backend>, CloudClient) {
        let emulator = Emulator::start(EmulatorConfig {
            device: None,
            ..EmulatorConfig::default()
        })
        .await
        .expect("emulator starts");
        let info = emulator.info().clone();
        let minting = CloudClient::new(
            CloudConfig::from_vars(|name| info.var(name)).expect("the emulator's settings"),
        )
        .expect("minting client");
        let backend = Arc::new(Backend {
            minting,
            calls: AtomicUsize::new(0),
            script,
            stale_at,
        });
        // No identity provider address, key or secret on the app's side.
        let mut config = CloudConfig::new(
            info.base_url.clone(),
            String::new(),
            info.notification_url.clone(),
            String::new(),
            ApiSecret::new(""),
            info.organization_id,
        );
        config.retry = retry();
        let client =
            CloudClient::with_token_provider(config, reqwest::Client::new(), backend.clone())
                .expect("a client without key or secret");
        (emulator, backend, client)
    }

    #[tokio::test]
    async fn the_provider_is_asked_once_however_many_requests_need_a_token() {
        let (_emulator, backend, client) = rig(vec![], None).await;
        let calls = (0..8).map(|_| client.server_info());
        for result in futures::future::join_all(calls).await {
            result.expect("server info with a provided token");
        }
        assert_eq!(backend.calls.load(Ordering::SeqCst), 1);
        assert!(!format!("{client:?}").contains("not-a-token"));
    }

    #[tokio::test]
    async fn an_unavailable_provider_is_asked_again_a_refusing_one_is_not() {
        let unavailable = || Some(TokenProviderError::Unavailable("backend down".into()));
        let (_emulator, backend, client) = rig(vec![unavailable(), unavailable()], None).await;
        client
            .server_info()
            .await
            .expect("the third answer is a token");
        assert_eq!(backend.calls.load(Ordering::SeqCst), 3);

        let refused = Some(TokenProviderError::Refused("signed out".into()));
        let (_emulator, backend, client) = rig(vec![refused], None).await;
        let e = client.server_info().await.expect_err("refused");
        assert!(matches!(e, CloudError::Authentication { .. }), "{e:?}");
        assert!(e.to_string().contains("signed out"), "{e}");
        assert!(!e.is_retryable());
        assert_eq!(backend.calls.load(Ordering::SeqCst), 1);

        // Always unavailable: the retry policy's attempts, then a transient error.
        let (_emulator, backend, client) = rig(vec![unavailable(); 10], None).await;
        let e = client.server_info().await.expect_err("unavailable");
        assert!(e.is_retryable(), "{e:?}");
        assert!(e.to_string().contains("backend down"), "{e}");
        assert_eq!(backend.calls.load(Ordering::SeqCst), 4);
    }

    #[tokio::test]
    async fn a_token_the_service_refuses_makes_the_client_ask_for_another() {
        let (_emulator, backend, client) = rig(vec![], Some(0)).await;
        client.server_info().await.expect("the second token works");
        assert_eq!(backend.calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn the_settings_are_checked_without_credentials() {
        let provider: Arc<dyn TokenProvider> = Arc::new(Backend {
            minting: CloudClient::new(CloudConfig::new(
                "http://127.0.0.1:1".into(),
                "http://127.0.0.1:1".into(),
                "http://127.0.0.1:1".into(),
                "k".into(),
                ApiSecret::new("s"),
                uuid::Uuid::nil(),
            ))
            .expect("client"),
            calls: AtomicUsize::new(0),
            script: vec![],
            stale_at: None,
        });
        let config = |base: &str| {
            CloudConfig::new(
                base.into(),
                String::new(),
                "https://notify.example.com".into(),
                String::new(),
                ApiSecret::new(""),
                uuid::Uuid::nil(),
            )
        };
        let http = reqwest::Client::new();
        assert!(
            CloudClient::with_token_provider(
                config("https://cloud.example.com"),
                http.clone(),
                provider.clone()
            )
            .is_ok()
        );
        let e = CloudClient::with_token_provider(config("ftp://x"), http, provider)
            .expect_err("a bad address");
        assert!(e.to_string().contains("base_url"), "{e}");
    }
}
