//! [`TokenProvider`]: access tokens from the app's own backend, so that no organization
//! API secret is shipped inside an app (see svc-core's `cloud::TokenProvider`).

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt as _;
use futures::future::BoxFuture;
use svc_core::cloud as sc;

use crate::types::Secret;

/// An access token and how long it stays valid.
#[derive(Clone, Debug, uniffi::Record)]
pub struct AccessToken {
    /// The bearer token.
    pub token: Arc<Secret>,
    /// How long it stays valid from now (`None`: the service's usual 5 minutes).
    #[uniffi(default = None)]
    pub lifetime: Option<Duration>,
}

/// Why a [`TokenProvider`] gave no token. The reason ends up in errors and logs: no
/// secret in it.
#[derive(Clone, Debug, thiserror::Error, uniffi::Error)]
pub enum TokenProviderError {
    /// No token will be given (the user signed out, lacks the right): the call fails
    /// with `Authentication`, without asking again.
    #[error("{reason}")]
    Refused { reason: String },
    /// No token now (the backend unreachable or failing): asked again with the client's
    /// retries, then the call fails with `Unreachable`.
    #[error("{reason}")]
    Unavailable { reason: String },
}

/// Anything else the provider throws: unavailable.
impl From<uniffi::UnexpectedUniFFICallbackError> for TokenProviderError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Unavailable { reason: e.reason }
    }
}

/// Gives the cloud client its access tokens: the app asks its own backend, which holds
/// the organization's API key and secret (a server using this SDK can mint them with
/// `CloudClient.accessToken()`). Called when a token is first needed, ahead of its
/// expiry and after the service refused one; one call at a time per client.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait TokenProvider: Send + Sync {
    /// A fresh access token.
    async fn access_token(&self) -> Result<AccessToken, TokenProviderError>;
}

/// svc-core's provider over the foreign one.
pub(crate) struct Provided(pub(crate) Arc<dyn TokenProvider>);

impl sc::TokenProvider for Provided {
    fn access_token(&self) -> BoxFuture<'_, Result<sc::ProvidedToken, sc::TokenProviderError>> {
        async move {
            match self.0.access_token().await {
                Ok(token) => Ok(sc::ProvidedToken {
                    token: sc::AccessToken::new(token.token.expose()),
                    lifetime: token.lifetime,
                }),
                Err(TokenProviderError::Refused { reason }) => {
                    Err(sc::TokenProviderError::Refused(reason))
                }
                Err(TokenProviderError::Unavailable { reason }) => {
                    Err(sc::TokenProviderError::Unavailable(reason))
                }
            }
        }
        .boxed()
    }
}

/// A token of svc-core as the foreign side sees it (the lifetime left is not known).
pub(crate) fn token_out(token: sc::AccessToken) -> AccessToken {
    AccessToken {
        token: Secret::wrap(token.expose_secret()),
        lifetime: None,
    }
}
