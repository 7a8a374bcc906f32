//! Hand-written request hooks for the generated cloud and notification clients:
//! every request carries `Authorization: Bearer <access token>`, obtained from a
//! [`TokenSource`] (svc-core supplies one that caches and refreshes the token).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use progenitor_client::{ClientHooks, ClientInfo, Error, OperationInfo};
use reqwest::header::{AUTHORIZATION, HeaderValue};

svc_secret::secret_string!(
    /// An OAuth 2 access token, sent as `Authorization: Bearer`. `Debug` prints `[redacted]`.
    AccessToken
);

/// Why no access token could be had; the text never contains a secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenError(pub String);

impl fmt::Display for TokenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "no access token: {}", self.0)
    }
}

impl std::error::Error for TokenError {}

/// The future a [`TokenSource`] returns.
pub type TokenFuture<'a> =
    Pin<Box<dyn Future<Output = Result<AccessToken, TokenError>> + Send + 'a>>;

/// Supplies the access token for each request.
pub trait TokenSource: Send + Sync + 'static {
    fn access_token(&self) -> TokenFuture<'_>;
}

/// A token that never changes (tests, or a token obtained elsewhere).
struct StaticToken(AccessToken);

impl TokenSource for StaticToken {
    fn access_token(&self) -> TokenFuture<'_> {
        let token = self.0.clone();
        Box::pin(async move { Ok(token) })
    }
}

/// The state the generated cloud and notification clients carry.
#[derive(Clone, Default)]
pub struct CloudState {
    tokens: Option<Arc<dyn TokenSource>>,
}

impl CloudState {
    /// Requests go out without an `Authorization` header (the service answers 401).
    pub fn anonymous() -> Self {
        Self { tokens: None }
    }

    pub fn with_token_source(tokens: Arc<dyn TokenSource>) -> Self {
        Self {
            tokens: Some(tokens),
        }
    }

    pub fn with_static_token(token: AccessToken) -> Self {
        Self::with_token_source(Arc::new(StaticToken(token)))
    }
}

impl fmt::Debug for CloudState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CloudState")
            .field("token_source", &self.tokens.is_some())
            .finish()
    }
}

async fn add_bearer<E>(state: &CloudState, request: &mut reqwest::Request) -> Result<(), Error<E>> {
    let Some(tokens) = &state.tokens else {
        return Ok(());
    };
    let token = tokens
        .access_token()
        .await
        .map_err(|e| Error::Custom(e.to_string()))?;
    let mut value = HeaderValue::try_from(format!("Bearer {}", token.expose_secret()))
        .map_err(|_| Error::Custom("the access token is not a valid header value".to_owned()))?;
    value.set_sensitive(true);
    request.headers_mut().insert(AUTHORIZATION, value);
    Ok(())
}

impl ClientHooks<CloudState> for crate::cloud::Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        _info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        add_bearer(self.inner(), request).await
    }
}

impl ClientHooks<CloudState> for crate::notification::Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        _info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        add_bearer(self.inner(), request).await
    }
}
