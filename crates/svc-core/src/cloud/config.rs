//! The settings of a [`CloudClient`](super::CloudClient): given explicitly or read from
//! the environment.

use std::fmt;
use std::time::Duration;

use uuid::Uuid;

use super::CloudError;
use crate::limits;
use crate::retry::RetryPolicy;

/// The environment variable holding the service address (`{base_url}`).
pub const ENV_BASE_URL: &str = "SVC_BASE_URL";
/// The environment variable holding the identity provider address (`{auth_url}`).
pub const ENV_AUTH_URL: &str = "SVC_AUTH_URL";
/// The environment variable holding the notification service address.
pub const ENV_NOTIFICATION_URL: &str = "SVC_NOTIFICATION_URL";
/// The environment variable holding the API key.
pub const ENV_API_KEY: &str = "SVC_API_KEY";
/// The environment variable holding the API secret.
pub const ENV_API_SECRET: &str = "SVC_API_SECRET";
/// The environment variable holding the organization's identifier (a UUID).
pub const ENV_ORGANIZATION_ID: &str = "SVC_ORGANIZATION_ID";

/// Every variable [`CloudConfig::from_env`] reads, in the order it checks them.
pub const ENV_VARS: [&str; 6] = [
    ENV_BASE_URL,
    ENV_AUTH_URL,
    ENV_NOTIFICATION_URL,
    ENV_API_KEY,
    ENV_API_SECRET,
    ENV_ORGANIZATION_ID,
];

/// An API secret (`<API_SECRET>`). `Debug` prints `[redacted]`; there is no `Display`.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiSecret(String);

impl ApiSecret {
    /// Wraps a secret.
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }

    /// The secret itself. Do not log it.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiSecret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiSecret([redacted])")
    }
}

impl From<String> for ApiSecret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl From<&str> for ApiSecret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

/// The settings of a [`CloudClient`](super::CloudClient). `Debug` redacts the secret,
/// and writes the addresses without user information, query or fragment.
#[derive(Clone, PartialEq)]
pub struct CloudConfig {
    /// The service address (`{base_url}`), e.g. `https://cloud.example.com`, without
    /// `/api/v2`.
    pub base_url: String,
    /// The identity provider address (`{auth_url}`); discovery is at
    /// `{auth_url}/.well-known/openid-configuration`.
    pub auth_url: String,
    /// The notification (webhook endpoint) service address, without `/api/v2`.
    pub notification_url: String,
    /// The API key (`<API_KEY>`), created by an organization administrator.
    pub api_key: String,
    /// The API secret (`<API_SECRET>`).
    pub api_secret: ApiSecret,
    /// The organization every list, creation and start is scoped to.
    pub organization_id: Uuid,
    /// How requests are retried (see [`CloudClient`](super::CloudClient) for which ones).
    pub retry: RetryPolicy,
    /// How long one request (one attempt) may take, answer included.
    pub request_timeout: Duration,
    /// How long establishing a connection may take (at most the request timeout).
    pub connect_timeout: Duration,
    /// Items asked for per page by the list streams and the `_all` lists (1 to 100).
    pub page_size: i64,
}

impl fmt::Debug for CloudConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CloudConfig")
            .field("base_url", &crate::observe::url(&self.base_url))
            .field("auth_url", &crate::observe::url(&self.auth_url))
            .field(
                "notification_url",
                &crate::observe::url(&self.notification_url),
            )
            .field("api_key", &self.api_key)
            .field("api_secret", &self.api_secret)
            .field("organization_id", &self.organization_id)
            .field("retry", &self.retry)
            .field("request_timeout", &self.request_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("page_size", &self.page_size)
            .finish()
    }
}

impl CloudConfig {
    /// The default [`CloudConfig::request_timeout`].
    pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
    /// The default [`CloudConfig::connect_timeout`].
    pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

    /// Settings with the default retry policy, request timeout and page size (100).
    pub fn new(
        base_url: String,
        auth_url: String,
        notification_url: String,
        api_key: String,
        api_secret: ApiSecret,
        organization_id: Uuid,
    ) -> Self {
        Self {
            base_url,
            auth_url,
            notification_url,
            api_key,
            api_secret,
            organization_id,
            retry: RetryPolicy::default(),
            request_timeout: Self::DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: Self::DEFAULT_CONNECT_TIMEOUT,
            page_size: limits::MAX_PER_PAGE,
        }
    }

    /// Settings from the environment variables [`ENV_VARS`] (`SVC_BASE_URL`,
    /// `SVC_AUTH_URL`, `SVC_NOTIFICATION_URL`, `SVC_API_KEY`, `SVC_API_SECRET`,
    /// `SVC_ORGANIZATION_ID`), with the defaults of [`CloudConfig::new`].
    ///
    /// # Errors
    /// [`CloudError::Config`] naming the first variable that is missing, empty, not
    /// UTF-8 or invalid (a URL that is not `http(s)://host…`, an identifier that is not
    /// a UUID); the other missing ones are listed in its reason. A secret's value is
    /// never quoted.
    pub fn from_env() -> Result<Self, CloudError> {
        for name in ENV_VARS {
            if let Err(std::env::VarError::NotUnicode(_)) = std::env::var(name) {
                return Err(config_error(name, "is not valid UTF-8"));
            }
        }
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// Settings from any source of variables: `lookup` is asked for each name of
    /// [`ENV_VARS`] (`None` when it is not set). [`CloudConfig::from_env`] uses it with
    /// the process environment; tests and embedders pass a map.
    ///
    /// # Errors
    /// As [`CloudConfig::from_env`].
    pub fn from_vars(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, CloudError> {
        let values: Vec<Option<String>> = ENV_VARS
            .iter()
            .map(|name| lookup(name).filter(|v| !v.trim().is_empty()))
            .collect();
        let missing: Vec<&str> = ENV_VARS
            .iter()
            .zip(&values)
            .filter(|(_, v)| v.is_none())
            .map(|(name, _)| *name)
            .collect();
        if let Some((first, others)) = missing.split_first() {
            let set_but_empty = lookup(first).is_some();
            let mut reason = if set_but_empty {
                "is set but empty".to_owned()
            } else {
                "is not set".to_owned()
            };
            if !others.is_empty() {
                reason.push_str(&format!(" (also missing: {})", others.join(", ")));
            }
            return Err(CloudError::Config {
                setting: (*first).to_owned(),
                reason,
                missing: true,
            });
        }
        let get = |i: usize| values.get(i).cloned().flatten().unwrap_or_default();
        let base_url = checked_url(ENV_BASE_URL, get(0).trim())?;
        let auth_url = checked_url(ENV_AUTH_URL, get(1).trim())?;
        let notification_url = checked_url(ENV_NOTIFICATION_URL, get(2).trim())?;
        let api_key = get(3).trim().to_owned();
        let api_secret = ApiSecret::new(get(4));
        let raw_id = get(5);
        let organization_id = raw_id.trim().parse::<Uuid>().map_err(|_| {
            config_error(
                ENV_ORGANIZATION_ID,
                &format!(
                    "is not a UUID: {:?}",
                    crate::cloud::error::shorten(&raw_id, 64)
                ),
            )
        })?;
        Ok(Self::new(
            base_url,
            auth_url,
            notification_url,
            api_key,
            api_secret,
            organization_id,
        ))
    }

    /// The settings checked and normalized (URLs without a trailing `/`).
    pub(crate) fn checked(&self) -> Result<CloudConfig, CloudError> {
        self.checked_with(true)
    }

    /// As [`CloudConfig::checked`], without the credentials (`auth_url`, `api_key`,
    /// `api_secret`): for a client whose tokens come from a token provider.
    pub(crate) fn checked_without_credentials(&self) -> Result<CloudConfig, CloudError> {
        self.checked_with(false)
    }

    fn checked_with(&self, credentials: bool) -> Result<CloudConfig, CloudError> {
        let mut c = self.clone();
        c.base_url = checked_url("base_url", &self.base_url)?;
        if credentials {
            c.auth_url = checked_url("auth_url", &self.auth_url)?;
        }
        c.notification_url = checked_url("notification_url", &self.notification_url)?;
        if credentials && self.api_key.trim().is_empty() {
            return Err(config_error("api_key", "is empty"));
        }
        if credentials && self.api_secret.expose_secret().is_empty() {
            return Err(config_error("api_secret", "is empty"));
        }
        if self.request_timeout.is_zero() {
            return Err(config_error("request_timeout", "must be longer than zero"));
        }
        if self.connect_timeout.is_zero() {
            return Err(config_error("connect_timeout", "must be longer than zero"));
        }
        if self.retry.max_attempts == 0 {
            return Err(config_error(
                "max_attempts",
                "must be at least 1 (1: every request is tried once)",
            ));
        }
        if !(limits::MIN_PER_PAGE..=limits::MAX_PER_PAGE).contains(&self.page_size) {
            return Err(config_error(
                "page_size",
                &format!(
                    "is {}; it must be between {} and {}",
                    self.page_size,
                    limits::MIN_PER_PAGE,
                    limits::MAX_PER_PAGE
                ),
            ));
        }
        Ok(c)
    }
}

fn config_error(setting: &str, reason: &str) -> CloudError {
    CloudError::Config {
        setting: setting.to_owned(),
        reason: reason.to_owned(),
        missing: false,
    }
}

/// An `http(s)://host[:port][/path]` address without query or fragment, returned
/// without a trailing `/`.
fn checked_url(setting: &str, value: &str) -> Result<String, CloudError> {
    let value = value.trim();
    let url = reqwest::Url::parse(value)
        .map_err(|e| config_error(setting, &format!("is not a valid URL ({value:?}): {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(config_error(
            setting,
            &format!("must be an http:// or https:// address with a host, got {value:?}"),
        ));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(config_error(
            setting,
            &format!("must not have a query or fragment, got {value:?}"),
        ));
    }
    let trimmed = value.trim_end_matches('/');
    if ["/api/v1", "/api/v2"].iter().any(|v| trimmed.ends_with(v)) {
        return Err(config_error(
            setting,
            &format!(
                "must be the service address without the version prefix (drop the trailing /api/v…), got {value:?}"
            ),
        ));
    }
    Ok(trimmed.to_owned())
}
