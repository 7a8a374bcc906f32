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
mod error;

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

use crate::limits;
use auth::TokenCache;
use error::ClientError;

pub use config::{
    ApiSecret, CloudConfig, ENV_API_KEY, ENV_API_SECRET, ENV_AUTH_URL, ENV_BASE_URL,
    ENV_NOTIFICATION_URL, ENV_ORGANIZATION_ID, ENV_VARS,
};
pub(crate) use error::http_client_error;
pub use error::{CloudError, RetryHint, TransportKind};

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
pub use svc_cloud_api::{AccessToken, ContainerPath, Metadata, Timestamp, UploadFields};

/// The longest time allowed to open a connection (shorter when the request timeout is).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// An operation and whether repeating it after it may have been applied is harmless.
#[derive(Clone, Copy, Debug)]
struct Op {
    /// The `operationId` of the OpenAPI document.
    id: &'static str,
    /// Repeating it gives the same end state (reads, full-replacement updates, deletes,
    /// archive).
    idempotent: bool,
    /// The resource it acts on (container, file, processing, endpoint), for the logs.
    resource: Option<Uuid>,
    /// The page it reads, for the logs.
    page: Option<i64>,
}

impl Op {
    const fn idempotent(id: &'static str) -> Self {
        Self {
            id,
            idempotent: true,
            resource: None,
            page: None,
        }
    }

    const fn once(id: &'static str) -> Self {
        Self {
            id,
            idempotent: false,
            resource: None,
            page: None,
        }
    }

    /// The same operation on `resource` (logged with it).
    const fn on(self, resource: Uuid) -> Self {
        Self {
            resource: Some(resource),
            ..self
        }
    }

    /// The same operation reading page `page` (logged with it).
    const fn at_page(self, page: i64) -> Self {
        Self {
            page: Some(page),
            ..self
        }
    }

    /// Whether the client repeats a request of this operation after `e` by itself.
    fn may_retry(self, e: &CloudError) -> bool {
        match e {
            // 429: the service refused to handle it now; nothing was applied.
            CloudError::Api { status: 429, .. } => true,
            CloudError::Api { .. } => self.idempotent && e.retry_hint() == RetryHint::Transient,
            CloudError::Transport { kind, .. } => {
                self.idempotent || !kind.may_have_reached_service()
            }
            _ => false,
        }
    }
}

const GET_SERVER_INFO: Op = Op::idempotent("getServerInfo");
const LIST_CONTAINERS: Op = Op::idempotent("listContainers");
const CREATE_CONTAINER: Op = Op::once("createContainer");
const GET_CONTAINER: Op = Op::idempotent("getContainer");
const UPDATE_CONTAINER: Op = Op::idempotent("updateContainer");
const DELETE_CONTAINER: Op = Op::idempotent("deleteContainer");
const ADD_CONTAINER_FILES: Op = Op::once("addContainerFiles");
const UPDATE_CONTAINER_FILE: Op = Op::idempotent("updateContainerFile");
const DELETE_CONTAINER_FILE: Op = Op::idempotent("deleteContainerFile");
const LIST_PROCESSINGS: Op = Op::idempotent("listProcessings");
const START_PROCESSING: Op = Op::once("startProcessing");
const GET_PROCESSING: Op = Op::idempotent("getProcessing");
const CANCEL_PROCESSING: Op = Op::once("cancelProcessing");
const ARCHIVE_PROCESSING: Op = Op::idempotent("archiveProcessing");
const LIST_PROCESSING_OUTPUTS: Op = Op::idempotent("listProcessingOutputs");
const LIST_PROCESSING_ERRORS: Op = Op::idempotent("listProcessingErrors");
const LIST_WEBHOOK_ENDPOINTS: Op = Op::idempotent("listWebhookEndpoints");
const CREATE_WEBHOOK_ENDPOINT: Op = Op::once("createWebhookEndpoint");
const UPDATE_WEBHOOK_ENDPOINT: Op = Op::idempotent("updateWebhookEndpoint");
const DELETE_WEBHOOK_ENDPOINT: Op = Op::idempotent("deleteWebhookEndpoint");
const LIST_MISSED_WEBHOOKS: Op = Op::idempotent("listMissedWebhooks");

/// One page of a list: its items and, when the service says, the total over all pages.
type Page<T> = (Vec<T>, Option<u64>);

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
}

impl fmt::Debug for CloudClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let c = &self.inner.config;
        f.debug_struct("CloudClient")
            .field("base_url", &c.base_url)
            .field("notification_url", &c.notification_url)
            .field("auth_url", &c.auth_url)
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
        let http = reqwest::Client::builder()
            .connect_timeout(config.request_timeout.min(CONNECT_TIMEOUT))
            .timeout(config.request_timeout)
            .build()
            .map_err(|e| error::http_client_error(&e))?;
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

    fn build(config: CloudConfig, http: reqwest::Client) -> Self {
        let tokens = Arc::new(TokenCache::new(
            http.clone(),
            &config.auth_url,
            config.api_key.clone(),
            config.api_secret.clone(),
            config.retry,
        ));
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

    // ------------------------------------------------------------------ machinery

    /// Runs one operation with the retry policy (see [`Op::may_retry`]).
    async fn call<T, F, Fut>(&self, op: Op, f: F) -> Result<T, CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
    {
        self.call_tracked(op, None, f).await
    }

    /// As [`CloudClient::call`]; sets `lost` when an attempt failed after its request
    /// may have reached the service (its answer was lost).
    async fn call_tracked<T, F, Fut>(
        &self,
        op: Op,
        lost: Option<&AtomicBool>,
        f: F,
    ) -> Result<T, CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
    {
        let f = &f;
        let span = tracing::info_span!(
            "cloud",
            op = op.id,
            resource_id = op.resource.map(display),
            page = op.page
        );
        let started = std::time::Instant::now();
        let result = self
            .inner
            .config
            .retry
            .run_explained(
                move |number| async move {
                    let result = self.attempt(op, number, f).await;
                    if let (Some(lost), Err(CloudError::Transport { kind, .. })) = (lost, &result)
                        && kind.may_have_reached_service()
                    {
                        lost.store(true, Ordering::Relaxed);
                    }
                    result
                },
                |e| op.may_retry(e),
                ToString::to_string,
            )
            .instrument(span.clone())
            .await;
        let elapsed_ms = crate::observe::millis(started.elapsed());
        match &result {
            Ok(_) => tracing::debug!(parent: &span, elapsed_ms, "operation succeeded"),
            Err(e) => tracing::debug!(
                parent: &span,
                elapsed_ms,
                status = e.status(),
                kind = %e.kind(),
                error = %e,
                "operation failed"
            ),
        }
        result
    }

    /// One attempt (number `number` of the operation): with a valid token; on 401 the
    /// token is discarded, a new one obtained and the request repeated once.
    async fn attempt<T, F, Fut>(&self, op: Op, number: u32, f: &F) -> Result<T, CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
    {
        let tokens = &self.inner.tokens;
        let (_, generation) = tokens.token().await?;
        let error = match request(op, number, f).await {
            Ok(value) => return Ok(value),
            Err(e) => e,
        };
        if error.status() != Some(401) {
            return Err(error);
        }
        tracing::info!(
            op = op.id,
            token_generation = generation,
            "the service answered 401: renewing the access token and repeating once"
        );
        tokens.invalidate(generation);
        tokens.token().await?;
        request(op, number, f).await
    }

    /// A `DELETE`: a 404 after an attempt whose answer was lost means that attempt
    /// deleted it.
    async fn delete<F, Fut>(&self, op: Op, f: F) -> Result<(), CloudError>
    where
        F: Fn() -> Fut,
        Fut: Future<Output = Result<ResponseValue<()>, ClientError>>,
    {
        let lost = AtomicBool::new(false);
        match self.call_tracked(op, Some(&lost), f).await {
            Err(e) if e.status() == Some(404) && lost.load(Ordering::Relaxed) => Ok(()),
            result => result,
        }
    }

    /// Every item of a list, page after page of [`CloudConfig::page_size`] items, until
    /// a short page or the total the service gave; stops after the first error.
    fn pages<T, F>(&self, fetch: F) -> BoxStream<'static, Result<T, CloudError>>
    where
        T: Send + 'static,
        F: Fn(CloudClient, i64, i64) -> BoxFuture<'static, Result<Page<T>, CloudError>>
            + Send
            + 'static,
    {
        struct State<F> {
            client: CloudClient,
            fetch: F,
            page: i64,
            seen: u64,
            done: bool,
        }
        let per_page = self.inner.config.page_size;
        let start = State {
            client: self.clone(),
            fetch,
            page: 0,
            seen: 0,
            done: false,
        };
        stream::unfold(start, move |mut s| async move {
            if s.done {
                return None;
            }
            match (s.fetch)(s.client.clone(), s.page, per_page).await {
                Ok((items, total)) => {
                    let count = items.len() as u64;
                    s.seen += count;
                    s.page += 1;
                    s.done = count < per_page.unsigned_abs() || total.is_some_and(|t| s.seen >= t);
                    Some((Ok(items), s))
                }
                Err(e) => {
                    s.done = true;
                    Some((Err(e), s))
                }
            }
        })
        .flat_map(|page| match page {
            Ok(items) => stream::iter(items.into_iter().map(Ok)).left_stream(),
            Err(e) => stream::once(async move { Err(e) }).right_stream(),
        })
        .boxed()
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

    // ------------------------------------------------------------------ containers

    /// Creates a container in the organization, with the files of `request.files`
    /// registered at once (each `pending`, with its `uploadInfo`).
    ///
    /// Not retried once the request may have reached the service (see the
    /// [module documentation](self)).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits, an
    /// invalid file path or a negative size; [`CloudError::Api`] with 409 for two files
    /// with the same path, 422 for a region the service does not know, 403, 500;
    /// [`CloudError::Transport`] (for a cut answer: the container most likely exists);
    /// [`CloudError::Authentication`].
    pub async fn create_container(
        &self,
        request: CreateContainerRequest,
    ) -> Result<Container, CloudError> {
        let op = CREATE_CONTAINER;
        check_metadata(op, None, request.metadata.as_ref())?;
        check_files(op, &request.files)?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.create_container()
                .organization_id(org)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// A container with its files (and the `uploadInfo` of `pending` ones).
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404 for an unknown container (or one of another
    /// organization), 403, 500; [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn get_container(&self, container_id: Uuid) -> Result<Container, CloudError> {
        let api = &self.inner.cloud;
        self.call(GET_CONTAINER.on(container_id), || {
            api.get_container().container_id(container_id).send()
        })
        .await
    }

    /// Updates a container; `request.metadata` replaces the whole metadata object.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn update_container(
        &self,
        container_id: Uuid,
        request: UpdateContainerRequest,
    ) -> Result<Container, CloudError> {
        let op = UPDATE_CONTAINER.on(container_id);
        check_metadata(op, None, request.metadata.as_ref())?;
        let api = &self.inner.cloud;
        self.call(op, || {
            api.update_container()
                .container_id(container_id)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// Deletes a container and all its files, immediately and irreversibly; its
    /// processings remain (with `containerId` null).
    ///
    /// # Errors
    /// [`CloudError::Api`] with 409 while one of its processings is `pending` or
    /// `processing`, 404 for an unknown container, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn delete_container(&self, container_id: Uuid) -> Result<(), CloudError> {
        let api = &self.inner.cloud;
        self.delete(DELETE_CONTAINER.on(container_id), || {
            api.delete_container().container_id(container_id).send()
        })
        .await
    }

    /// Registers files in a container; each is `pending` with its `uploadInfo` (upload
    /// them with [`crate::transfer`]).
    ///
    /// Not retried once the request may have reached the service.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for an invalid path, metadata over
    /// its limits or a negative size; [`CloudError::Api`] with 409 for a path another
    /// file holds, 404 for an unknown container, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn add_container_files(
        &self,
        container_id: Uuid,
        files: Vec<CreateContainerFile>,
    ) -> Result<Vec<ContainerFile>, CloudError> {
        let op = ADD_CONTAINER_FILES.on(container_id);
        check_files(op, &files)?;
        let body = cloud::types::AddContainerFilesRequest { files };
        let api = &self.inner.cloud;
        self.call(op, || {
            api.add_container_files()
                .container_id(container_id)
                .body(body.clone())
                .send()
        })
        .await
    }

    /// Changes a container file's `type`, `path` and/or `metadata` (which replaces the
    /// whole object); absent fields are left unchanged.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for an invalid path or metadata over
    /// its limits; [`CloudError::Api`] with 409 for a path another file of the container
    /// holds, 422 for a type the service does not know, 404, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn update_container_file(
        &self,
        container_file_id: Uuid,
        request: UpdateContainerFileRequest,
    ) -> Result<ContainerFile, CloudError> {
        let op = UPDATE_CONTAINER_FILE.on(container_file_id);
        if let Some(path) = &request.path {
            limits::check_container_path(path)
                .map_err(|l| CloudError::invalid_input(op.id, None, l))?;
        }
        check_metadata(op, None, request.metadata.as_ref())?;
        let api = &self.inner.cloud;
        self.call(op, || {
            api.update_container_file()
                .container_file_id(container_file_id)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// Deletes a container file, immediately and irreversibly.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn delete_container_file(&self, container_file_id: Uuid) -> Result<(), CloudError> {
        let api = &self.inner.cloud;
        self.delete(DELETE_CONTAINER_FILE.on(container_file_id), || {
            api.delete_container_file()
                .container_file_id(container_file_id)
                .send()
        })
        .await
    }

    /// One page of the organization's containers (`page` from 0, `per_page` 1..=100),
    /// with the total number of containers (`num_items`).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_containers_page(
        &self,
        page: i64,
        per_page: i64,
    ) -> Result<ContainerList, CloudError> {
        let op = LIST_CONTAINERS.at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.list_containers()
                .organization_id(org)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every container of the organization, fetched page after page as the stream is
    /// read.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_containers_page`] and ends
    /// after the first one.
    pub fn list_containers(&self) -> BoxStream<'static, Result<Container, CloudError>> {
        self.pages(|client, page, per_page| {
            Box::pin(async move {
                let list = client.list_containers_page(page, per_page).await?;
                Ok((list.containers, Some(list.num_items)))
            })
        })
    }

    /// Every container of the organization, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_containers_page`].
    pub async fn list_containers_all(&self) -> Result<Vec<Container>, CloudError> {
        self.list_containers().try_collect().await
    }

    // ------------------------------------------------------------------ processings

    /// Starts a processing of a container with a complete processing configuration
    /// (`processingJson`). Uses one processing credit.
    ///
    /// Not retried once the request may have reached the service: a second start would
    /// answer 409 or start a second processing.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 409 while the organization has a processing `pending` or
    /// `processing` or while a registered file is not uploaded, 403 without a credit
    /// left, 404 for an unknown container, 422, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn start_processing(
        &self,
        request: StartProcessingRequest,
    ) -> Result<Processing, CloudError> {
        let op = START_PROCESSING.on(request.container_id);
        check_metadata(op, None, request.metadata.as_ref())?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.start_processing()
                .organization_id(org)
                .body(request.clone())
                .send()
        })
        .await
    }

    /// A processing with its status and progress.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn get_processing(&self, processing_id: Uuid) -> Result<Processing, CloudError> {
        let api = &self.inner.cloud;
        self.call(GET_PROCESSING.on(processing_id), || {
            api.get_processing().processing_id(processing_id).send()
        })
        .await
    }

    /// Cancels a `pending` or `processing` processing (it becomes `canceled`).
    ///
    /// Not retried once the request may have reached the service.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 409 when it is not running, 404, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn cancel_processing(&self, processing_id: Uuid) -> Result<(), CloudError> {
        let api = &self.inner.cloud;
        self.call(CANCEL_PROCESSING.on(processing_id), || {
            api.cancel_processing().processing_id(processing_id).send()
        })
        .await
    }

    /// Archives a processing (it becomes `archived`) and deletes its result files.
    /// Archiving an archived processing changes nothing, so it is retried like a read.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn archive_processing(&self, processing_id: Uuid) -> Result<Processing, CloudError> {
        let api = &self.inner.cloud;
        self.call(ARCHIVE_PROCESSING.on(processing_id), || {
            api.archive_processing().processing_id(processing_id).send()
        })
        .await
    }

    /// The output files of a `processed` processing, each with a pre-signed download
    /// address (download them with [`crate::transfer`]).
    ///
    /// # Errors
    /// [`CloudError::Api`] with 409 when the processing is not `processed`, 404, 403,
    /// 500; [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn list_processing_outputs(
        &self,
        processing_id: Uuid,
    ) -> Result<Vec<OutputFile>, CloudError> {
        let api = &self.inner.cloud;
        self.call(LIST_PROCESSING_OUTPUTS.on(processing_id), || {
            api.list_processing_outputs()
                .processing_id(processing_id)
                .send()
        })
        .await
    }

    /// The errors and warnings recorded for a processing.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_processing_errors(
        &self,
        processing_id: Uuid,
    ) -> Result<Vec<ProcessingError>, CloudError> {
        let api = &self.inner.cloud;
        self.call(LIST_PROCESSING_ERRORS.on(processing_id), || {
            api.list_processing_errors()
                .processing_id(processing_id)
                .send()
        })
        .await
    }

    /// One page of the organization's processings (`page` from 0, `per_page`
    /// 1..=100), with the total number of processings (`num_items`).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_processings_page(
        &self,
        page: i64,
        per_page: i64,
    ) -> Result<ProcessingList, CloudError> {
        let op = LIST_PROCESSINGS.at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let (api, org) = (&self.inner.cloud, self.organization_id());
        self.call(op, || {
            api.list_processings()
                .organization_id(org)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every processing of the organization, fetched page after page as the stream is
    /// read.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_processings_page`] and ends
    /// after the first one.
    pub fn list_processings(&self) -> BoxStream<'static, Result<Processing, CloudError>> {
        self.pages(|client, page, per_page| {
            Box::pin(async move {
                let list = client.list_processings_page(page, per_page).await?;
                Ok((list.processings, Some(list.num_items)))
            })
        })
    }

    /// Every processing of the organization, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_processings_page`].
    pub async fn list_processings_all(&self) -> Result<Vec<Processing>, CloudError> {
        self.list_processings().try_collect().await
    }

    // ------------------------------------------------------------------ webhook endpoints

    /// One page of the organization's webhook endpoints (each with its signing secret).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn list_webhook_endpoints_page(
        &self,
        page: i64,
        per_page: i64,
    ) -> Result<Vec<WebhookEndpoint>, CloudError> {
        let op = LIST_WEBHOOK_ENDPOINTS.at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let (api, org) = (&self.inner.notification, self.organization_id());
        self.call(op, || {
            api.list_webhook_endpoints()
                .organization_id(org)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every webhook endpoint of the organization, fetched page after page.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_webhook_endpoints_page`] and
    /// ends after the first one.
    pub fn list_webhook_endpoints(
        &self,
    ) -> BoxStream<'static, Result<WebhookEndpoint, CloudError>> {
        self.pages(|client, page, per_page| {
            Box::pin(async move {
                let items = client.list_webhook_endpoints_page(page, per_page).await?;
                Ok((items, None))
            })
        })
    }

    /// Every webhook endpoint of the organization, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_webhook_endpoints_page`].
    pub async fn list_webhook_endpoints_all(&self) -> Result<Vec<WebhookEndpoint>, CloudError> {
        self.list_webhook_endpoints().try_collect().await
    }

    /// Registers a webhook endpoint (enabled, with a new signing secret).
    ///
    /// Not retried once the request may have reached the service.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 422 for a URL that is not an absolute http(s) URL, no or
    /// an unknown event type, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`]; [`CloudError::InvalidResponse`] when the answer
    /// holds no endpoint.
    pub async fn create_webhook_endpoint(
        &self,
        request: CreateWebhookEndpointRequest,
    ) -> Result<WebhookEndpoint, CloudError> {
        let op = CREATE_WEBHOOK_ENDPOINT;
        check_metadata(op, None, request.metadata.as_ref())?;
        let (api, org) = (&self.inner.notification, self.organization_id());
        let answer = self
            .call(op, || {
                api.create_webhook_endpoint()
                    .organization_id(org)
                    .body(request.clone())
                    .send()
            })
            .await?;
        answer
            .into_iter()
            .next()
            .ok_or_else(|| CloudError::InvalidResponse {
                operation: op.id,
                reason: "the answer holds no webhook endpoint".to_owned(),
            })
    }

    /// Changes a webhook endpoint's `url`, `enabled_event_types`, `metadata` (which
    /// replaces the whole object) and/or `enabled`; absent fields are left unchanged.
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for metadata over its limits;
    /// [`CloudError::Api`] with 422 for an invalid URL or event type, 404, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`];
    /// [`CloudError::InvalidResponse`] when the answer holds no endpoint.
    pub async fn update_webhook_endpoint(
        &self,
        webhook_endpoint_id: Uuid,
        request: UpdateWebhookEndpointRequest,
    ) -> Result<WebhookEndpoint, CloudError> {
        let op = UPDATE_WEBHOOK_ENDPOINT.on(webhook_endpoint_id);
        check_metadata(op, None, request.metadata.as_ref())?;
        let api = &self.inner.notification;
        let answer = self
            .call(op, || {
                api.update_webhook_endpoint()
                    .webhook_endpoint_id(webhook_endpoint_id)
                    .body(request.clone())
                    .send()
            })
            .await?;
        let position = answer
            .iter()
            .position(|e| e.id == webhook_endpoint_id)
            .unwrap_or(0);
        answer
            .into_iter()
            .nth(position)
            .ok_or_else(|| CloudError::InvalidResponse {
                operation: op.id,
                reason: "the answer holds no webhook endpoint".to_owned(),
            })
    }

    /// Deletes a webhook endpoint, immediately and irreversibly.
    ///
    /// # Errors
    /// [`CloudError::Api`] with 404, 403, 500; [`CloudError::Transport`];
    /// [`CloudError::Authentication`].
    pub async fn delete_webhook_endpoint(
        &self,
        webhook_endpoint_id: Uuid,
    ) -> Result<(), CloudError> {
        let api = &self.inner.notification;
        self.delete(DELETE_WEBHOOK_ENDPOINT.on(webhook_endpoint_id), || {
            api.delete_webhook_endpoint()
                .webhook_endpoint_id(webhook_endpoint_id)
                .send()
        })
        .await
    }

    /// One page of the events that could not be delivered to a webhook endpoint (the
    /// first delivery and its 10 retries failed).
    ///
    /// # Errors
    /// [`CloudError::InvalidInput`] (nothing sent) for a page below 0 or a page size
    /// outside 1..=100; [`CloudError::Api`] with 404 for an unknown endpoint, 403, 500;
    /// [`CloudError::Transport`]; [`CloudError::Authentication`].
    pub async fn list_missed_webhooks_page(
        &self,
        webhook_endpoint_id: Uuid,
        page: i64,
        per_page: i64,
    ) -> Result<Vec<MissedWebhook>, CloudError> {
        let op = LIST_MISSED_WEBHOOKS.on(webhook_endpoint_id).at_page(page);
        let per_page = check_page(op, page, per_page)?;
        let api = &self.inner.notification;
        self.call(op, || {
            api.list_missed_webhooks()
                .webhook_endpoint_id(webhook_endpoint_id)
                .page(page)
                .per_page(per_page)
                .send()
        })
        .await
    }

    /// Every missed event of a webhook endpoint, fetched page after page.
    ///
    /// # Errors
    /// The stream yields the errors of [`CloudClient::list_missed_webhooks_page`] and
    /// ends after the first one.
    pub fn list_missed_webhooks(
        &self,
        webhook_endpoint_id: Uuid,
    ) -> BoxStream<'static, Result<MissedWebhook, CloudError>> {
        self.pages(move |client, page, per_page| {
            Box::pin(async move {
                let items = client
                    .list_missed_webhooks_page(webhook_endpoint_id, page, per_page)
                    .await?;
                Ok((items, None))
            })
        })
    }

    /// Every missed event of a webhook endpoint, collected.
    ///
    /// # Errors
    /// As [`CloudClient::list_missed_webhooks_page`].
    pub async fn list_missed_webhooks_all(
        &self,
        webhook_endpoint_id: Uuid,
    ) -> Result<Vec<MissedWebhook>, CloudError> {
        self.list_missed_webhooks(webhook_endpoint_id)
            .try_collect()
            .await
    }
}

/// One HTTP request of `op` (attempt `number`), in a span of its own with its status
/// and duration. The address is not logged (the generated client builds it; it never
/// holds a secret, the token travels in a header).
async fn request<T, F, Fut>(op: Op, number: u32, f: &F) -> Result<T, CloudError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Result<ResponseValue<T>, ClientError>>,
{
    let span = tracing::debug_span!("http", op = op.id, attempt = number, status = Empty);
    async {
        let started = std::time::Instant::now();
        tracing::trace!("request sent");
        let result = match f().await {
            Ok(value) => {
                tracing::Span::current().record("status", value.status().as_u16());
                Ok(value.into_inner())
            }
            Err(e) => {
                let error = CloudError::from_client(op.id, e).await;
                if let Some(status) = error.status() {
                    tracing::Span::current().record("status", status);
                }
                Err(error)
            }
        };
        let elapsed_ms = crate::observe::millis(started.elapsed());
        match &result {
            Ok(_) => tracing::debug!(elapsed_ms, "response"),
            Err(e) => tracing::debug!(elapsed_ms, kind = %e.kind(), error = %e, "request failed"),
        }
        result
    }
    .instrument(span)
    .await
}

/// Checks paging parameters; returns `per_page` as the generated client takes it.
fn check_page(op: Op, page: i64, per_page: i64) -> Result<u64, CloudError> {
    limits::check_page(page, per_page).map_err(|l| CloudError::invalid_input(op.id, None, l))?;
    Ok(per_page.unsigned_abs())
}

fn check_metadata(op: Op, at: Option<&str>, metadata: Option<&Metadata>) -> Result<(), CloudError> {
    match metadata {
        Some(m) => limits::check_metadata(m).map_err(|l| CloudError::invalid_input(op.id, at, l)),
        None => Ok(()),
    }
}

/// Checks files to register: paths, metadata and sizes, naming the file by its index.
fn check_files(op: Op, files: &[CreateContainerFile]) -> Result<(), CloudError> {
    for (i, f) in files.iter().enumerate() {
        limits::check_container_path(&f.path)
            .map_err(|l| CloudError::invalid_input(op.id, Some(&format!("files[{i}].path")), l))?;
        check_metadata(
            op,
            Some(&format!("files[{i}].metadata")),
            f.metadata.as_ref(),
        )?;
        if f.size < 0 {
            return Err(CloudError::InvalidInput {
                operation: op.id,
                reason: format!("files[{i}].size must not be negative, got {}", f.size),
                limit: None,
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn transport(kind: TransportKind) -> CloudError {
        CloudError::Transport {
            operation: "x",
            kind,
            reason: "r".into(),
            source: None,
        }
    }

    fn api(status: u16) -> CloudError {
        CloudError::Api {
            operation: "x",
            status,
            title: String::new(),
            details: String::new(),
        }
    }

    #[test]
    fn creations_are_retried_only_when_the_request_did_not_reach_the_service() {
        let post = CREATE_CONTAINER;
        assert!(post.may_retry(&transport(TransportKind::Connect)));
        for kind in [
            TransportKind::Timeout,
            TransportKind::Interrupted,
            TransportKind::Other,
        ] {
            assert!(!post.may_retry(&transport(kind)), "{kind:?}");
        }
        assert!(!post.may_retry(&api(500)));
        assert!(post.may_retry(&api(429)));
    }

    #[test]
    fn reads_are_retried_on_transient_failures_only() {
        let get = GET_CONTAINER;
        for kind in [
            TransportKind::Connect,
            TransportKind::Timeout,
            TransportKind::Interrupted,
            TransportKind::Other,
        ] {
            assert!(get.may_retry(&transport(kind)), "{kind:?}");
        }
        assert!(get.may_retry(&api(500)));
        assert!(get.may_retry(&api(503)));
        for status in [400, 401, 403, 404, 409, 422] {
            assert!(!get.may_retry(&api(status)), "{status}");
        }
        assert!(!get.may_retry(&CloudError::Authentication {
            status: None,
            error: "e".into(),
            description: "d".into(),
        }));
    }
}
