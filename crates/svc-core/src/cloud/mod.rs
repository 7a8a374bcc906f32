//! The cloud service client: credentials, access tokens, every operation of the cloud
//! service (`{base_url}`) and of its notification service (`{notification_url}`),
//! typed errors, retries and lists as streams.
//!
//! A [`CloudClient`] wraps the generated clients of `svc-cloud-api` and adds:
//!
//! - **Settings** from code ([`CloudConfig::new`]) or from the environment
//!   ([`CloudConfig::from_env`]: `SVC_BASE_URL`, `SVC_AUTH_URL`, `SVC_NOTIFICATION_URL`,
//!   `SVC_API_KEY`, `SVC_API_SECRET`, `SVC_ORGANIZATION_ID`). The secret and the tokens
//!   are newtypes whose `Debug` prints `[redacted]`.
//! - **Access tokens**: OpenID Connect discovery at
//!   `{auth_url}/.well-known/openid-configuration`, then the password grant
//!   (`grant_type=password`, `client_id=api-key`, `username`, `password`,
//!   `scope=openid`). The token is cached and renewed *ahead* of its expiry (when less
//!   than a tenth of its lifetime, at most 30 s, remains) by a single request however
//!   many tasks need it at once. The cache is the generated clients' token source, so
//!   every request carries `Authorization: Bearer …`. When the service still answers
//!   401, the token is discarded, a new one obtained, and the request repeated once.
//! - **One error type**, [`CloudError`], carrying the status, `title`, `details` and
//!   operation, and saying whether repeating can help ([`CloudError::retry_hint`]).
//! - **Retries** with exponential backoff and jitter ([`RetryPolicy`](crate::retry::RetryPolicy), bounded in
//!   attempts and time; see below).
//! - **Checks before sending**: metadata, container file paths and paging are checked
//!   with [`crate::limits`]; a refused argument is a [`CloudError::InvalidInput`]
//!   naming the offending key or path, and nothing is sent.
//! - **Lists as streams** over every page (`list_containers()`), one page
//!   (`list_containers_page(page, per_page)`), or everything collected
//!   (`list_containers_all()`).
//!
//! # Which requests are retried
//!
//! Only failures the specification calls transient are retried: 500 (and any 5xx or
//! 429), connection errors, timeouts and answers cut off in transit. 400, 401, 403,
//! 404, 409 and 422 never are (404 "may exist later", but repeating it blindly would
//! only turn a wrong identifier into a slow error).
//!
//! Whether a transient failure is retried depends on the operation:
//!
//! - **Reads and idempotent writes** — every `GET`, the `PATCH` updates (they replace
//!   whole fields), the `DELETE`s and `archiveProcessing` (archiving an archived
//!   processing changes nothing) — are retried on every transient failure. A `DELETE`
//!   whose first answer was lost and whose repetition finds 404 has succeeded: the
//!   resource is gone, and it is reported as success.
//! - **Creations and actions** — `createContainer`, `addContainerFiles`,
//!   `startProcessing`, `cancelProcessing`, `createWebhookEndpoint` (all `POST`) — are
//!   retried *only* when the request provably did not reach the service (no connection
//!   could be made, [`TransportKind::Connect`]) or the service answered 429. After a
//!   timeout, a broken connection or an answer cut off in transit the service may well
//!   have applied the request; repeating it would create a second container or start a
//!   second processing (one that answers 409 or uses another credit). Such a failure is
//!   returned as a [`CloudError::Transport`] that [`CloudError::is_retryable`] accepts:
//!   the caller decides, typically after listing what exists. A 500 answer to a
//!   creation is not retried either, as it does not say what was applied.
//!
//! # Bindings
//!
//! Every entry point takes owned values and returns owned values, without generics or
//! lifetimes (streams are `BoxStream<'static, …>`; the `_all` variants return `Vec`s),
//! so the Python and uniffi bindings wrap each method in a line or two.
//!
//! ```no_run
//! # async fn demo() -> Result<(), svc_core::cloud::CloudError> {
//! use futures::TryStreamExt;
//! use svc_core::cloud::{CloudClient, CloudConfig, ContainerRegion, CreateContainerRequest};
//!
//! let client = CloudClient::new(CloudConfig::from_env()?)?;
//! let container = client
//!     .create_container(CreateContainerRequest {
//!         region: ContainerRegion::EuWest3,
//!         metadata: None,
//!         files: Vec::new(),
//!     })
//!     .await?;
//! let mut containers = client.list_containers();
//! while let Some(c) = containers.try_next().await? {
//!     println!("{} {}", c.id, c.status);
//! }
//! client.delete_container(container.id).await?;
//! # Ok(()) }
//! ```

mod auth;
mod config;
mod containers;
mod error;
mod filter;
mod machinery;
mod processings;
mod token_provider;
mod webhooks;

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::stream::{self, BoxStream, StreamExt, TryStreamExt};
use svc_cloud_api::cloud::ResponseValue;
use svc_cloud_api::{CloudState, cloud, notification};
use tracing::Instrument as _;
use tracing::field::Empty;
use uuid::Uuid;

use crate::http::{HttpClientConfig, HttpClientError, TlsRoots};
use crate::limits;
use auth::TokenCache;
use error::ClientError;
use machinery::GET_SERVER_INFO;

pub use config::{
    ApiSecret, CloudConfig, ENV_API_KEY, ENV_API_SECRET, ENV_AUTH_URL, ENV_BASE_URL,
    ENV_NOTIFICATION_URL, ENV_ORGANIZATION_ID, ENV_VARS,
};
pub(crate) use error::http_client_error;
pub use error::{CloudError, RetryHint, TransportKind};
pub use filter::ListFilter;
pub use token_provider::{ProvidedToken, TokenProvider, TokenProviderError};

pub use svc_cloud_api::cloud::types::{
    Container, ContainerFile, ContainerList, CreateContainerFile, CreateContainerRequest,
    ErrorCount, OutputFile, Processing, ProcessingError, ProcessingList, ServerInfo,
    StartProcessingRequest, UpdateContainerFileRequest, UpdateContainerRequest, UploadInfo,
};
pub use svc_cloud_api::enums::{
    ContainerFileStatus, ContainerFileType, ContainerRegion, ContainerStatus, EventType,
    ProcessingErrorLevel, ProcessingResult, ProcessingStatus, ProcessingStep, ProcessingType,
    RegionStatus,
};
pub use svc_cloud_api::notification::types::{
    CreateWebhookEndpointRequest, MissedWebhook, UpdateWebhookEndpointRequest, WebhookEndpoint,
};
pub use svc_cloud_api::{
    AccessToken, ContainerPath, Metadata, SECRET_UPLOAD_FIELDS, Timestamp, UploadFields,
    is_secret_upload_field,
};

/// How long an idle connection to the service is kept for the next request: less than
/// the 60 s after which common load balancers close an idle connection (reqwest's own
/// default is 90 s), so that a request is not sent on a connection being closed — its
/// failure could not be told apart from a lost answer.
pub const POOL_IDLE: Duration = Duration::from_secs(50);

/// A client of the cloud service and its notification service, for one organization.
/// Cheap to clone; clones share the access token.
///
/// See the [module documentation](self) for authentication, retries and checks.
#[derive(Clone)]
pub struct CloudClient {
    inner: Arc<Inner>,
}

struct Inner {
    config: CloudConfig,
    cloud: cloud::Client,
    notification: notification::Client,
    tokens: Arc<TokenCache>,
    /// Whether the service cancels at the vendor collection's route
    /// (`/processings/{id}/cancel`) rather than the specification's, once learned.
    cancel_at_cancel_path: std::sync::atomic::AtomicBool,
}

impl HttpClientConfig {
    /// The cloud service's client (the service, the notification service, the
    /// identity provider): the settings' request timeout for each request, their
    /// connect timeout (at most the request timeout), and idle connections dropped
    /// before a load balancer closes them ([`POOL_IDLE`]).
    pub fn cloud(config: &CloudConfig) -> Self {
        Self {
            roots: TlsRoots::default(),
            connect_timeout: config.request_timeout.min(config.connect_timeout),
            timeout: Some(config.request_timeout),
            pool_idle_timeout: Some(POOL_IDLE),
            proxy: None,
        }
    }
}

/// A setting of the cloud client ("http client"), as [`CloudClient::new`] reports it.
///
/// [`CloudClient::new`]: crate::cloud::CloudClient::new
impl From<HttpClientError> for CloudError {
    fn from(e: HttpClientError) -> Self {
        match &e {
            HttpClientError::Build { source, .. } => http_client_error(source),
            _ => CloudError::Config {
                setting: "http client".to_owned(),
                reason: e.to_string(),
                missing: false,
            },
        }
    }
}

impl fmt::Debug for CloudClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.inner.config;
        f.debug_struct("CloudClient")
            .field("base_url", &crate::observe::url(&c.base_url))
            .field(
                "notification_url",
                &crate::observe::url(&c.notification_url),
            )
            .field("auth_url", &crate::observe::url(&c.auth_url))
            .field("api_key", &c.api_key)
            .field("organization_id", &c.organization_id)
            .finish_non_exhaustive()
    }
}

impl CloudClient {
    /// A client with the given settings. Nothing is sent yet: the first operation
    /// obtains the access token.
    ///
    /// # Errors
    /// [`CloudError::Config`] naming the setting when a URL is not an `http(s)://`
    /// address (or ends with `/api/v2`), the key or secret is empty, the request timeout
    /// is zero or the page size is not within 1..=100.
    pub fn new(config: CloudConfig) -> Result<Self, CloudError> {
        let config = config.checked()?;
        let http = crate::http::HttpClientConfig::cloud(&config).build()?;
        Ok(Self::build(config, http))
    }

    /// A client with the given settings whose requests (to the service, the
    /// notification service and the identity provider) go through `http`: your own
    /// TLS roots or platform verifier, proxy, connection pool or middleware-free test
    /// client. Its timeouts are yours: [`CloudConfig::request_timeout`] is not applied
    /// to it (give it a total timeout, or requests may wait forever). It must not add
    /// an `Authorization` header of its own.
    ///
    /// # Errors
    /// As [`CloudClient::new`], except for building the HTTP client.
    pub fn with_http_client(
        config: CloudConfig,
        http: reqwest::Client,
    ) -> Result<Self, CloudError> {
        Ok(Self::build(config.checked()?, http))
    }

    /// A client whose access tokens come from `provider` (see [`TokenProvider`]: the
    /// application's backend issues them) instead of the key and secret, with its
    /// requests going through `http` (as [`CloudClient::with_http_client`]). The
    /// settings' `auth_url`, `api_key` and `api_secret` are not used (and may be empty).
    ///
    /// # Errors
    /// As [`CloudClient::with_http_client`], the credentials aside.
    pub fn with_token_provider(
        config: CloudConfig,
        http: reqwest::Client,
        provider: Arc<dyn TokenProvider>,
    ) -> Result<Self, CloudError> {
        let config = config.checked_without_credentials()?;
        let tokens = TokenCache::with_provider(http.clone(), provider, config.retry);
        Ok(Self::with_tokens(config, http, tokens))
    }

    fn build(config: CloudConfig, http: reqwest::Client) -> Self {
        let tokens = TokenCache::new(
            http.clone(),
            &config.auth_url,
            config.api_key.clone(),
            config.api_secret.clone(),
            config.retry,
        );
        Self::with_tokens(config, http, tokens)
    }

    fn with_tokens(config: CloudConfig, http: reqwest::Client, tokens: TokenCache) -> Self {
        let tokens = Arc::new(tokens);
        let state = CloudState::with_token_source(tokens.clone());
        let cloud = cloud::Client::new_with_client(&config.base_url, http.clone(), state.clone());
        let notification =
            notification::Client::new_with_client(&config.notification_url, http, state);
        Self {
            inner: Arc::new(Inner {
                config,
                cloud,
                notification,
                tokens,
                cancel_at_cancel_path: std::sync::atomic::AtomicBool::new(false),
            }),
        }
    }

    /// A client with the settings of the environment ([`CloudConfig::from_env`]).
    ///
    /// # Errors
    /// [`CloudError::Config`] naming the missing or invalid variable.
    pub fn from_env() -> Result<Self, CloudError> {
        Self::new(CloudConfig::from_env()?)
    }

    /// The service's address (`{base_url}`, without a trailing `/`).
    pub fn base_url(&self) -> &str {
        &self.inner.config.base_url
    }

    /// The organization this client works for.
    pub fn organization_id(&self) -> Uuid {
        self.inner.config.organization_id
    }

    /// The client's settings (normalized: URLs without a trailing `/`).
    pub fn config(&self) -> CloudConfig {
        self.inner.config.clone()
    }

    /// The generated cloud client (its requests carry this client's token), for what
    /// this type does not wrap. Rust only.
    pub fn cloud_api(&self) -> &cloud::Client {
        &self.inner.cloud
    }

    /// The generated notification client (its requests carry this client's token).
    /// Rust only.
    pub fn notification_api(&self) -> &notification::Client {
        &self.inner.notification
    }

    /// A valid access token (the cached one, or a new one), e.g. to call the service
    /// with another HTTP client. Requests of this client add it by themselves.
    ///
    /// # Errors
    /// [`CloudError::Authentication`] when the identity provider refuses the key and
    /// secret or cannot be reached; [`CloudError::InvalidResponse`] when its answer
    /// cannot be read.
    pub async fn access_token(&self) -> Result<AccessToken, CloudError> {
        self.inner.tokens.token().await.map(|(token, _)| token)
    }

    // ------------------------------------------------------------------ info

    /// The service's versions and the status of each region (`GET /api/v1/info`).
    ///
    /// # Errors
    /// [`CloudError::Api`] (403 without the `cloud:api-key` scope, 500),
    /// [`CloudError::Transport`], [`CloudError::Authentication`].
    pub async fn server_info(&self) -> Result<ServerInfo, CloudError> {
        let api = &self.inner.cloud;
        self.call(GET_SERVER_INFO, || api.get_server_info().send())
            .await
    }
}
