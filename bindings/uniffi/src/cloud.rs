//! `CloudClient`: every operation of the cloud service and its notification service,
//! as `async` methods, and the pagers over its lists.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use svc_core::cloud as sc;
use svc_core::cloud::CloudError;
use svc_core::http::HttpClientConfig;

use crate::error::{SvcError, parse_id};
use crate::runtime::run;
use crate::token::{AccessToken, Provided, TokenProvider, token_out};
use crate::types::Count;
use crate::types::{
    Container, ContainerFile, ContainerPage, CreateContainerFile, CreateContainerRequest,
    CreateWebhookEndpointRequest, MissedWebhook, OutputFile, Processing, ProcessingError,
    ProcessingPage, Secret, ServerInfo, StartProcessingRequest, UpdateContainerFileRequest,
    UpdateWebhookEndpointRequest, WebhookEndpoint, at_least, metadata_in, signed,
};

/// Which certificate authorities the HTTPS connections trust.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, uniffi::Enum)]
pub enum TlsRoots {
    /// Mozilla's root certificates, built into the library: no dependency on the
    /// system's certificate store (works on a minimal system and on every phone), but
    /// no custom or enterprise CA.
    #[default]
    Bundled,
    /// The platform's verifier: the system store on Linux, the Keychain on iOS and
    /// macOS (enterprise and user-installed CAs included). On Linux without CA
    /// certificates, building the client fails with an `InvalidInput` error. On
    /// Android, Android's trust manager (the app's Network Security Config, user and
    /// device-management CAs) once `AndroidPlatform.init(context)` was called; refused
    /// with an `InvalidInput` error before.
    Platform,
}

impl TlsRoots {
    /// A client built as svc-core's `config` says, with these roots.
    pub(crate) fn client(self, config: HttpClientConfig) -> Result<reqwest::Client, SvcError> {
        let roots = match self {
            Self::Bundled => svc_core::http::TlsRoots::Bundled,
            Self::Platform => svc_core::http::TlsRoots::Platform,
        };
        Ok(HttpClientConfig { roots, ..config }.build()?)
    }
}

/// The settings of a [`CloudClient`], with its credentials: either a `tokenProvider`
/// (the app's backend gives access tokens: the way for apps distributed to users, which
/// must not carry the organization's API secret) or `authUrl`, `apiKey` and `apiSecret`
/// (managed internal apps and servers). The secret is a [`Secret`], so printing the
/// record does not show it.
#[derive(Clone, uniffi::Record)]
pub struct CloudConfig {
    /// The service address, e.g. `https://cloud.example.com` (without `/api/v2`).
    pub base_url: String,
    /// The identity provider address (with the key and secret).
    #[uniffi(default = None)]
    pub auth_url: Option<String>,
    /// The notification service address.
    pub notification_url: String,
    /// The API key (with the secret).
    #[uniffi(default = None)]
    pub api_key: Option<String>,
    /// The API secret (with the key).
    #[uniffi(default = None)]
    pub api_secret: Option<Arc<Secret>>,
    /// The organization (a UUID).
    pub organization_id: String,
    /// Where access tokens come from instead of the key and secret.
    #[uniffi(default = None)]
    pub token_provider: Option<Arc<dyn TokenProvider>>,
    /// How long one request may take, answer included (`None`: 30 s).
    #[uniffi(default = None)]
    pub request_timeout: Option<Duration>,
    /// Items per page of the pagers and `…All` lists (1 to 100).
    #[uniffi(default = 100)]
    pub page_size: Count,
    /// Attempts in all for a request that fails transiently (1 = no retry).
    #[uniffi(default = 5)]
    pub max_attempts: Count,
    /// Which certificate authorities HTTPS trusts (`None`: `TlsRoots.Bundled`).
    #[uniffi(default = None)]
    pub tls: Option<TlsRoots>,
}

impl std::fmt::Debug for CloudConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CloudConfig")
            .field("base_url", &svc_core::shown_address(&self.base_url))
            .field(
                "auth_url",
                &self.auth_url.as_deref().map(svc_core::shown_address),
            )
            .field(
                "notification_url",
                &svc_core::shown_address(&self.notification_url),
            )
            .field("api_key", &self.api_key)
            .field(
                "api_secret",
                &self.api_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("organization_id", &self.organization_id)
            .field("token_provider", &self.token_provider.is_some())
            .field("request_timeout", &self.request_timeout)
            .field("page_size", &self.page_size)
            .field("max_attempts", &self.max_attempts)
            .field("tls", &self.tls)
            .finish()
    }
}

/// A client of the cloud service for one organization: tokens, retries, checks before
/// sending (see svc-core's `cloud` module). Every operation is `async`.
#[derive(Debug, uniffi::Object)]
pub struct CloudClient {
    pub(crate) inner: sc::CloudClient,
    /// The client for storage transfers (no total timeout), with the same TLS roots.
    pub(crate) transfer_http: reqwest::Client,
}

impl CloudClient {
    fn build(
        config: sc::CloudConfig,
        tls: TlsRoots,
        provider: Option<Arc<dyn TokenProvider>>,
    ) -> Result<Arc<Self>, SvcError> {
        let timeout = config.request_timeout;
        if timeout.is_zero() {
            // Checked by svc-core too; a zero timeout would also make the HTTP
            // client refuse every request.
            return Err(SvcError::invalid(
                "invalid configuration: request_timeout must be longer than zero",
            ));
        }
        let http = tls.client(HttpClientConfig::cloud(&config))?;
        let transfer_http = tls.client(HttpClientConfig::transfers())?;
        let inner = match provider {
            Some(provider) => {
                sc::CloudClient::with_token_provider(config, http, Arc::new(Provided(provider)))?
            }
            None => sc::CloudClient::with_http_client(config, http)?,
        };
        Ok(Arc::new(Self {
            inner,
            transfer_http,
        }))
    }
}

/// A setting the key-and-secret credentials need.
fn required<T>(setting: &str, value: Option<T>) -> Result<T, SvcError> {
    value.ok_or_else(|| {
        SvcError::invalid(format!(
            "invalid configuration: {setting} is missing (give authUrl, apiKey and \
             apiSecret, or a tokenProvider)"
        ))
    })
}

/// Reads items of a list stream, a page at a time.
async fn next_page<T>(
    stream: &tokio::sync::Mutex<BoxStream<'static, Result<T, CloudError>>>,
    size: usize,
) -> Result<Option<Vec<T>>, SvcError> {
    let mut stream = stream.lock().await;
    let mut items = Vec::new();
    while items.len() < size {
        match stream.next().await {
            Some(item) => items.push(item?),
            None => break,
        }
    }
    Ok((!items.is_empty()).then_some(items))
}

macro_rules! pager {
    ($(#[$doc:meta])* $name:ident, $item:ty, $src:ty) => {
        $(#[$doc])*
        ///
        /// `nextPage()` gives the next items (one request's worth), or `null`/`nil`
        /// once the list is over. A failed page ends the pager.
        #[derive(uniffi::Object)]
        pub struct $name {
            stream: Arc<tokio::sync::Mutex<BoxStream<'static, Result<$src, CloudError>>>>,
            size: usize,
        }

        impl $name {
            fn new(stream: BoxStream<'static, Result<$src, CloudError>>, size: i64) -> Arc<Self> {
                // Fused: asking again after the end keeps answering the end.
                Arc::new(Self {
                    stream: Arc::new(tokio::sync::Mutex::new(stream.fuse().boxed())),
                    size: usize::try_from(size).unwrap_or(1).max(1),
                })
            }
        }

        #[uniffi::export]
        impl $name {
            /// The next page, or `None` when the list is over.
            pub async fn next_page(&self) -> Result<Option<Vec<$item>>, SvcError> {
                let (stream, size) = (self.stream.clone(), self.size);
                run(async move {
                    Ok(next_page(&stream, size)
                        .await?
                        .map(|items| items.into_iter().map(Into::into).collect()))
                })
                .await
            }
        }
    };
}

pager!(
    /// The organization's containers, page after page.
    ContainerPager, Container, sc::Container);
pager!(
    /// The organization's processings, page after page.
    ProcessingPager, Processing, sc::Processing);
pager!(
    /// The organization's webhook endpoints, page after page.
    WebhookEndpointPager, WebhookEndpoint, sc::WebhookEndpoint);
pager!(
    /// The missed events of a webhook endpoint, page after page.
    MissedWebhookPager, MissedWebhook, sc::MissedWebhook);

fn all<T, U: From<T>>(items: Vec<T>) -> Vec<U> {
    items.into_iter().map(Into::into).collect()
}

#[uniffi::export]
impl CloudClient {
    /// A client with explicit settings. Nothing is sent yet.
    ///
    /// Errors: `InvalidInput` naming the setting (a URL that is not `http(s)://`, a
    /// missing or empty key or secret, both credentials or none, an organization that is
    /// not a UUID, a zero timeout, a page size outside 1..=100, TLS roots that cannot be
    /// loaded).
    #[uniffi::constructor]
    pub fn create(config: CloudConfig) -> Result<Arc<Self>, SvcError> {
        let organization_id = parse_id("organizationId", &config.organization_id)?;
        let provider = config.token_provider;
        let (auth_url, api_key, api_secret) = match &provider {
            Some(_) => {
                if config.api_key.is_some() || config.api_secret.is_some() {
                    return Err(SvcError::invalid(
                        "invalid configuration: give a tokenProvider or an apiKey and \
                         apiSecret, not both",
                    ));
                }
                (String::new(), String::new(), String::new())
            }
            None => (
                required("authUrl", config.auth_url)?,
                required("apiKey", config.api_key)?,
                required("apiSecret", config.api_secret)?
                    .expose()
                    .to_owned(),
            ),
        };
        let mut core = sc::CloudConfig::new(
            config.base_url,
            auth_url,
            config.notification_url,
            api_key,
            sc::ApiSecret::new(api_secret),
            organization_id,
        );
        if let Some(timeout) = config.request_timeout {
            core.request_timeout = timeout;
        }
        core.page_size = i64::from(config.page_size.0);
        core.retry.max_attempts = at_least(config.max_attempts, 1);
        Self::build(core, config.tls.unwrap_or_default(), provider)
    }

    /// A client with the settings of the environment (`SVC_BASE_URL`, `SVC_AUTH_URL`,
    /// `SVC_NOTIFICATION_URL`, `SVC_API_KEY`, `SVC_API_SECRET`,
    /// `SVC_ORGANIZATION_ID`) and the given TLS roots. For servers and tools: an app
    /// holds no API secret (see `CloudConfig.tokenProvider`).
    ///
    /// Errors: `InvalidInput` naming the first missing or invalid variable.
    #[uniffi::constructor(default(tls = None))]
    pub fn from_env(tls: Option<TlsRoots>) -> Result<Arc<Self>, SvcError> {
        Self::build(sc::CloudConfig::from_env()?, tls.unwrap_or_default(), None)
    }

    /// A valid access token of this client (the cached one, or a new one): what a
    /// backend holding the organization's key and secret gives the apps of its users
    /// (their `TokenProvider`).
    ///
    /// Errors: `Authentication` when the credentials are refused.
    pub async fn access_token(&self) -> Result<AccessToken, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(token_out(c.access_token().await?)) }).await
    }

    /// The organization this client works for.
    pub fn organization_id(&self) -> String {
        self.inner.organization_id().to_string()
    }

    /// The service's versions and the status of each region.
    pub async fn server_info(&self) -> Result<ServerInfo, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(c.server_info().await?.into()) }).await
    }

    // ------------------------------------------------------------ containers

    /// Creates a container, with its files registered at once.
    pub async fn create_container(
        &self,
        request: CreateContainerRequest,
    ) -> Result<Container, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(c.create_container(request.into()).await?.into()) }).await
    }

    /// A container with its files.
    pub async fn get_container(&self, container_id: String) -> Result<Container, SvcError> {
        let id = parse_id("containerId", &container_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.get_container(id).await?.into()) }).await
    }

    /// Replaces a container's metadata (`None`: removes it).
    pub async fn update_container(
        &self,
        container_id: String,
        metadata: Option<std::collections::HashMap<String, String>>,
    ) -> Result<Container, SvcError> {
        let id = parse_id("containerId", &container_id)?;
        let request = sc::UpdateContainerRequest {
            metadata: metadata.map(metadata_in),
        };
        let c = self.inner.clone();
        run(async move { Ok(c.update_container(id, request).await?.into()) }).await
    }

    /// Deletes a container and its files.
    pub async fn delete_container(&self, container_id: String) -> Result<(), SvcError> {
        let id = parse_id("containerId", &container_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.delete_container(id).await?) }).await
    }

    /// Registers files in a container (each `pending`, with its upload form).
    pub async fn add_container_files(
        &self,
        container_id: String,
        files: Vec<CreateContainerFile>,
    ) -> Result<Vec<ContainerFile>, SvcError> {
        let id = parse_id("containerId", &container_id)?;
        let files = files.into_iter().map(Into::into).collect();
        let c = self.inner.clone();
        run(async move { Ok(all(c.add_container_files(id, files).await?)) }).await
    }

    /// Changes a container file's type, path or metadata.
    pub async fn update_container_file(
        &self,
        container_file_id: String,
        request: UpdateContainerFileRequest,
    ) -> Result<ContainerFile, SvcError> {
        let id = parse_id("containerFileId", &container_file_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.update_container_file(id, request.into()).await?.into()) }).await
    }

    /// Deletes a container file.
    pub async fn delete_container_file(&self, container_file_id: String) -> Result<(), SvcError> {
        let id = parse_id("containerFileId", &container_file_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.delete_container_file(id).await?) }).await
    }

    /// One page of containers (`page` from 0, `perPage` 1..=100).
    pub async fn list_containers_page(
        &self,
        page: Count,
        per_page: Count,
    ) -> Result<ContainerPage, SvcError> {
        let c = self.inner.clone();
        run(async move {
            let list = c
                .list_containers_page(page.0.into(), per_page.0.into())
                .await?;
            Ok(ContainerPage {
                containers: all(list.containers),
                num_items: signed(list.num_items),
            })
        })
        .await
    }

    /// Every container, page after page.
    pub fn list_containers(&self) -> Arc<ContainerPager> {
        ContainerPager::new(self.inner.list_containers(), self.inner.config().page_size)
    }

    /// Every container, collected.
    pub async fn list_containers_all(&self) -> Result<Vec<Container>, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(all(c.list_containers_all().await?)) }).await
    }

    // ------------------------------------------------------------ processings

    /// Starts a processing (uses one processing credit).
    pub async fn start_processing(
        &self,
        request: StartProcessingRequest,
    ) -> Result<Processing, SvcError> {
        let request = request.try_into()?;
        let c = self.inner.clone();
        run(async move { Ok(c.start_processing(request).await?.into()) }).await
    }

    /// A processing with its status and progress.
    pub async fn get_processing(&self, processing_id: String) -> Result<Processing, SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.get_processing(id).await?.into()) }).await
    }

    /// Cancels a `pending` or `processing` processing.
    pub async fn cancel_processing(&self, processing_id: String) -> Result<(), SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.cancel_processing(id).await?) }).await
    }

    /// Archives a processing (its result files are deleted).
    pub async fn archive_processing(&self, processing_id: String) -> Result<Processing, SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.archive_processing(id).await?.into()) }).await
    }

    /// The output files of a `processed` processing, with download addresses.
    pub async fn list_processing_outputs(
        &self,
        processing_id: String,
    ) -> Result<Vec<OutputFile>, SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let c = self.inner.clone();
        run(async move { Ok(all(c.list_processing_outputs(id).await?)) }).await
    }

    /// The errors and warnings recorded for a processing.
    pub async fn list_processing_errors(
        &self,
        processing_id: String,
    ) -> Result<Vec<ProcessingError>, SvcError> {
        let id = parse_id("processingId", &processing_id)?;
        let c = self.inner.clone();
        run(async move { Ok(all(c.list_processing_errors(id).await?)) }).await
    }

    /// One page of processings.
    pub async fn list_processings_page(
        &self,
        page: Count,
        per_page: Count,
    ) -> Result<ProcessingPage, SvcError> {
        let c = self.inner.clone();
        run(async move {
            let list = c
                .list_processings_page(page.0.into(), per_page.0.into())
                .await?;
            Ok(ProcessingPage {
                processings: all(list.processings),
                num_items: signed(list.num_items),
            })
        })
        .await
    }

    /// Every processing, page after page.
    pub fn list_processings(&self) -> Arc<ProcessingPager> {
        ProcessingPager::new(self.inner.list_processings(), self.inner.config().page_size)
    }

    /// Every processing, collected.
    pub async fn list_processings_all(&self) -> Result<Vec<Processing>, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(all(c.list_processings_all().await?)) }).await
    }

    // ------------------------------------------------------------ webhook endpoints

    /// One page of webhook endpoints.
    pub async fn list_webhook_endpoints_page(
        &self,
        page: Count,
        per_page: Count,
    ) -> Result<Vec<WebhookEndpoint>, SvcError> {
        let c = self.inner.clone();
        run(async move {
            Ok(all(c
                .list_webhook_endpoints_page(page.0.into(), per_page.0.into())
                .await?))
        })
        .await
    }

    /// Every webhook endpoint, page after page.
    pub fn list_webhook_endpoints(&self) -> Arc<WebhookEndpointPager> {
        WebhookEndpointPager::new(
            self.inner.list_webhook_endpoints(),
            self.inner.config().page_size,
        )
    }

    /// Every webhook endpoint, collected.
    pub async fn list_webhook_endpoints_all(&self) -> Result<Vec<WebhookEndpoint>, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(all(c.list_webhook_endpoints_all().await?)) }).await
    }

    /// Registers a webhook endpoint.
    pub async fn create_webhook_endpoint(
        &self,
        request: CreateWebhookEndpointRequest,
    ) -> Result<WebhookEndpoint, SvcError> {
        let c = self.inner.clone();
        run(async move { Ok(c.create_webhook_endpoint(request.into()).await?.into()) }).await
    }

    /// Changes a webhook endpoint.
    pub async fn update_webhook_endpoint(
        &self,
        webhook_endpoint_id: String,
        request: UpdateWebhookEndpointRequest,
    ) -> Result<WebhookEndpoint, SvcError> {
        let id = parse_id("webhookEndpointId", &webhook_endpoint_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.update_webhook_endpoint(id, request.into()).await?.into()) }).await
    }

    /// Deletes a webhook endpoint.
    pub async fn delete_webhook_endpoint(
        &self,
        webhook_endpoint_id: String,
    ) -> Result<(), SvcError> {
        let id = parse_id("webhookEndpointId", &webhook_endpoint_id)?;
        let c = self.inner.clone();
        run(async move { Ok(c.delete_webhook_endpoint(id).await?) }).await
    }

    /// One page of the missed events of a webhook endpoint.
    pub async fn list_missed_webhooks_page(
        &self,
        webhook_endpoint_id: String,
        page: Count,
        per_page: Count,
    ) -> Result<Vec<MissedWebhook>, SvcError> {
        let id = parse_id("webhookEndpointId", &webhook_endpoint_id)?;
        let c = self.inner.clone();
        run(async move {
            Ok(all(c
                .list_missed_webhooks_page(id, page.0.into(), per_page.0.into())
                .await?))
        })
        .await
    }

    /// Every missed event of a webhook endpoint, page after page.
    pub fn list_missed_webhooks(
        &self,
        webhook_endpoint_id: String,
    ) -> Result<Arc<MissedWebhookPager>, SvcError> {
        let id = parse_id("webhookEndpointId", &webhook_endpoint_id)?;
        Ok(MissedWebhookPager::new(
            self.inner.list_missed_webhooks(id),
            self.inner.config().page_size,
        ))
    }

    /// Every missed event of a webhook endpoint, collected.
    pub async fn list_missed_webhooks_all(
        &self,
        webhook_endpoint_id: String,
    ) -> Result<Vec<MissedWebhook>, SvcError> {
        let id = parse_id("webhookEndpointId", &webhook_endpoint_id)?;
        let c = self.inner.clone();
        run(async move { Ok(all(c.list_missed_webhooks_all(id).await?)) }).await
    }
}
