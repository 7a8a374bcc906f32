//! A session with an inertial navigation unit, over HTTP or over the serial link.
//!
//! Both links run the same generated client (`ins-device-api`): over HTTP it talks to
//! `{device_url}/api/v1`; over the serial link each request is carried in sbgECom frames
//! by an [`Exchange`] (see [`serial_link`]). A [`Unit`]
//! adds what a session needs on top:
//!
//! - login, logout and password changes, the token kept out of every log and error;
//! - automatic re-login when a reboot has ended the token (the unit answers 401 to a
//!   token it no longer knows): the request is repeated once after logging in again;
//! - one typed [`UnitError`] carrying the unit's `status`, `title`, `detail` and, for a
//!   refused settings write, the list of invalid nodes;
//! - the rights matrix as data ([`rights`]), so a caller can ask "may this user do X"
//!   before trying.

pub mod rights;
pub mod serial_link;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ins_device_api::enums::UserName;
use ins_device_api::types::{self, DeviceInfo};
use ins_device_api::{AuthToken, Client, DeviceState, Password};
use serde_json::Value;
use tracing::Instrument as _;

use crate::error::ErrorKind;

pub use ins_device_api::hooks::{Exchange, ExchangeFuture, ExchangeReply, ExchangeRequest};

/// One invalid node of a refused settings write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeError {
    /// The node, e.g. `aiding/gnss1/leverArmPrimary`.
    pub path: String,
    /// Why the unit refused it.
    pub message: String,
}

/// What went wrong talking to a unit. The token and passwords never appear in it.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum UnitError {
    /// The unit answered with an error status and its error body.
    #[error("{operation}: the unit answered {status} {title}: {detail}{}", node_list(.errors))]
    Api {
        /// The operation (`operationId` of the document), e.g. `updateSettings`.
        operation: &'static str,
        /// The unit's status (400, 401, 403, 404, 409, 422, 500).
        status: u16,
        /// The error body's `title`.
        title: String,
        /// The error body's `detail`.
        detail: String,
        /// For a refused settings write (422): every invalid node.
        errors: Vec<NodeError>,
    },
    /// The unit could not be reached or the link broke (connection refused while it
    /// reboots, a timeout, a serial framing failure).
    #[error("{operation}: the unit could not be reached: {reason}")]
    Unreachable {
        /// The operation that was attempted.
        operation: &'static str,
        /// What failed, without the token.
        reason: String,
        /// The HTTP client's error (the token redacted from its address), when there is
        /// one (not over a serial link).
        #[source]
        source: Option<reqwest::Error>,
    },
    /// The unit answered something this SDK cannot read.
    #[error("{operation}: unexpected answer from the unit: {reason}")]
    InvalidResponse {
        /// The operation that was attempted.
        operation: &'static str,
        /// What could not be read.
        reason: String,
    },
    /// The request was refused before it was sent (an invalid argument).
    #[error("{operation}: invalid request: {reason}")]
    InvalidRequest {
        /// The operation that was refused.
        operation: &'static str,
        /// Which argument is wrong, and why.
        reason: String,
    },
    /// Applying a wanted tree: the unit's tree differs from the wanted one after writing.
    #[error("the unit's settings differ from the wanted ones after writing, at: {}", .paths.join(", "))]
    NotApplied {
        /// The nodes whose read-back value differs from the wanted one.
        paths: Vec<String>,
    },
    /// What the unit sent could not be saved locally (an export to a file).
    #[error("{operation}: {reason}")]
    Io {
        /// The operation whose result was being saved.
        operation: &'static str,
        /// The file and what the system said.
        reason: String,
    },
}

fn node_list(errors: &[NodeError]) -> String {
    if errors.is_empty() {
        return String::new();
    }
    let list: Vec<String> = errors
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    format!(" [{}]", list.join("; "))
}

impl UnitError {
    /// The unit's HTTP-like status, when it answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            Self::Api { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The invalid nodes of a refused settings write (empty otherwise).
    pub fn node_errors(&self) -> &[NodeError] {
        match self {
            Self::Api { errors, .. } => errors,
            _ => &[],
        }
    }

    /// What kind of failure this is (shared with the other subsystems and the bindings).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Api { status, .. } => ErrorKind::from_status(*status),
            Self::Unreachable { .. } => ErrorKind::Unreachable,
            Self::InvalidResponse { .. } | Self::NotApplied { .. } => ErrorKind::InvalidResponse,
            Self::InvalidRequest { .. } => ErrorKind::InvalidInput,
            Self::Io { .. } => ErrorKind::Io,
        }
    }

    /// Whether repeating the same request can help (the specification's error table:
    /// 500 — "retry reasonable" — and an unreachable unit, e.g. while it reboots).
    /// 400, 401, 403, 404, 409 and 422 need a change first.
    pub fn is_retryable(&self) -> bool {
        match self {
            Self::Api { status, .. } => *status >= 500,
            Self::Unreachable { .. } => true,
            _ => false,
        }
    }

    fn from_client(operation: &'static str, e: ins_device_api::Error<types::Error>) -> Self {
        use ins_device_api::Error as E;
        match e {
            E::ErrorResponse(body) => {
                let status = body.status().as_u16();
                let body = body.into_inner();
                UnitError::Api {
                    operation,
                    status,
                    title: body.title,
                    detail: body.detail,
                    errors: body
                        .errors
                        .into_iter()
                        .map(|e| NodeError {
                            path: e.path,
                            message: e.message,
                        })
                        .collect(),
                }
            }
            E::CommunicationError(e) | E::ResponseBodyError(e) | E::InvalidUpgrade(e) => {
                UnitError::Unreachable {
                    operation,
                    reason: transport_reason(&e),
                    source: Some(e),
                }
            }
            E::Custom(reason) => UnitError::Unreachable {
                operation,
                reason,
                source: None,
            },
            E::InvalidResponsePayload(_, e) => UnitError::InvalidResponse {
                operation,
                reason: e.to_string(),
            },
            E::UnexpectedResponse(r) => UnitError::InvalidResponse {
                operation,
                reason: format!(
                    "status {} is not documented for this operation",
                    r.status().as_u16()
                ),
            },
            E::InvalidRequest(reason) => UnitError::InvalidRequest { operation, reason },
        }
    }
}

/// A transport error's text; its URL is already redacted by the client hooks.
fn transport_reason(e: &reqwest::Error) -> String {
    let mut reason = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        reason.push_str(": ");
        reason.push_str(&s.to_string());
        source = s.source();
    }
    reason
}

/// What may be logged of a unit error: the status, title and invalid node paths of an
/// answer, the reason of an unreachable unit (token-free) — never the unit's detail or
/// node messages, nor a decoder's text, which could quote a settings value (a password).
fn loggable(e: &UnitError) -> String {
    match e {
        UnitError::Api {
            status,
            title,
            errors,
            ..
        } => {
            let paths: Vec<&str> = errors.iter().map(|e| e.path.as_str()).collect();
            if paths.is_empty() {
                format!("the unit answered {status} {title}")
            } else {
                format!(
                    "the unit answered {status} {title}; invalid nodes: {}",
                    paths.join(", ")
                )
            }
        }
        UnitError::Unreachable { reason, .. } => format!("unreachable: {reason}"),
        UnitError::InvalidResponse { .. } => "an unreadable answer".to_owned(),
        UnitError::InvalidRequest { .. } => "an invalid request (not sent)".to_owned(),
        UnitError::NotApplied { paths } => {
            format!("not applied at: {}", paths.join(", "))
        }
        UnitError::Io { .. } => "a local file error".to_owned(),
    }
}

impl From<types::WriteResult> for WriteOutcome {
    fn from(result: types::WriteResult) -> Self {
        Self {
            need_reboot: result.need_reboot,
        }
    }
}

/// How [`Unit::apply_wanted`] applies a wanted tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Only validate the change on the unit (`checkOnly`); apply nothing.
    pub check_only: bool,
    /// Hold the settings lock while reading, writing and reading back (needs a login);
    /// it is released afterwards, also on failure.
    pub lock: bool,
}

/// What [`Unit::apply_wanted`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyReport {
    /// The nodes that differed from the wanted values (and were written, unless
    /// `check_only`), e.g. `aiding/gnss1/leverArmPrimary`.
    pub changed: Vec<String>,
    /// Whether the change takes effect only after a reboot.
    pub need_reboot: bool,
    /// Whether anything was written (false for `check_only` or when nothing differed).
    pub written: bool,
}

/// The answer of a settings write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOutcome {
    /// Whether the change takes effect only after a reboot (network, ports).
    pub need_reboot: bool,
}

/// A session with one unit. Cheap to clone; clones share the login.
#[derive(Clone)]
pub struct Unit {
    client: Client,
    state: DeviceState,
    credentials: Arc<Mutex<Option<(UserName, Password)>>>,
    link: Arc<str>,
}

impl std::fmt::Debug for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unit")
            .field("link", &self.link)
            .field("user", &self.user())
            .finish()
    }
}

/// How long one HTTP request to the unit may take.
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

impl Unit {
    /// A session with the unit at `url` (e.g. `http://192.168.1.1`; without `/api/v1`).
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] when the URL is not an `http://` address.
    pub fn http(url: &str) -> Result<Self, UnitError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(HTTP_TIMEOUT)
            .build()
            .map_err(|e| UnitError::InvalidRequest {
                operation: "connect",
                reason: e.to_string(),
            })?;
        Self::http_with_client(url, http)
    }

    /// A session with the unit at `url` whose requests go through `http` (your own
    /// timeouts, proxy or connection pool; [`HTTP_TIMEOUT`] is not applied to it).
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] when the URL is not an `http://` address.
    pub fn http_with_client(url: &str, http: reqwest::Client) -> Result<Self, UnitError> {
        let parsed = reqwest::Url::parse(url).map_err(|e| UnitError::InvalidRequest {
            operation: "connect",
            reason: format!("`{url}`: {e}"),
        })?;
        if parsed.scheme() != "http" {
            return Err(UnitError::InvalidRequest {
                operation: "connect",
                reason: format!(
                    "`{url}`: the unit speaks plain HTTP only (port 80); use an http:// address"
                ),
            });
        }
        let state = DeviceState::new();
        let base = url.trim_end_matches('/');
        tracing::debug!(link = %crate::observe::parsed_url(&parsed), "unit over HTTP");
        Ok(Self::from_parts(
            Client::new_with_client(base, http, state.clone()),
            state,
            base.to_owned(),
        ))
    }

    /// A session over the unit's serial protocol through a serial-over-IP bridge at
    /// `host:port` (a TCP socket carrying the sbgECom frames), with the default
    /// [`SerialOptions`](serial_link::SerialOptions).
    ///
    /// # Errors
    /// [`UnitError::Unreachable`] when no connection can be made within 10 s.
    pub async fn serial_tcp(address: &str) -> Result<Self, UnitError> {
        Self::serial_tcp_with(address, serial_link::SerialOptions::default()).await
    }

    /// As [`Unit::serial_tcp`], with the link's deadlines and retries.
    ///
    /// # Errors
    /// As [`Unit::serial_tcp`].
    pub async fn serial_tcp_with(
        address: &str,
        options: serial_link::SerialOptions,
    ) -> Result<Self, UnitError> {
        let link = serial_link::SerialLink::tcp(address, options)
            .await
            .map_err(|reason| {
                tracing::debug!(address, %reason, "no connection to the serial bridge");
                UnitError::Unreachable {
                    operation: "connect",
                    reason,
                    source: None,
                }
            })?;
        tracing::info!(address, "connected to the unit's serial bridge");
        Ok(Self::over(
            Arc::new(link),
            format!("serial bridge {address}"),
        ))
    }

    /// A session over the unit's serial protocol on a local serial port (e.g.
    /// `/dev/ttyUSB0`) at `baud` (8 data bits, no parity, 1 stop bit), with the default
    /// [`SerialOptions`](serial_link::SerialOptions).
    ///
    /// # Errors
    /// [`UnitError::Unreachable`] when the port cannot be opened;
    /// [`UnitError::InvalidRequest`] on a build or platform without serial ports (the
    /// `serial-port` feature, Unix): use [`Unit::serial_tcp`] or [`Unit::over`].
    pub fn serial(path: &str, baud: u32) -> Result<Self, UnitError> {
        Self::serial_with(path, baud, serial_link::SerialOptions::default())
    }

    /// As [`Unit::serial`], with the link's deadlines and retries.
    ///
    /// # Errors
    /// As [`Unit::serial`].
    #[cfg(all(unix, feature = "serial-port"))]
    pub fn serial_with(
        path: &str,
        baud: u32,
        options: serial_link::SerialOptions,
    ) -> Result<Self, UnitError> {
        let link = serial_link::SerialLink::port(path, baud, options).map_err(|reason| {
            tracing::debug!(path, baud, %reason, "the serial port cannot be opened");
            UnitError::Unreachable {
                operation: "connect",
                reason,
                source: None,
            }
        })?;
        tracing::info!(path, baud, "opened the unit's serial port");
        Ok(Self::over(Arc::new(link), format!("serial port {path}")))
    }

    /// As [`Unit::serial`], with the link's deadlines and retries.
    ///
    /// # Errors
    /// As [`Unit::serial`].
    #[cfg(not(all(unix, feature = "serial-port")))]
    pub fn serial_with(
        path: &str,
        _baud: u32,
        _options: serial_link::SerialOptions,
    ) -> Result<Self, UnitError> {
        Err(UnitError::InvalidRequest {
            operation: "connect",
            reason: format!(
                "serial ports are not supported in this build or on this platform ({path}); use a serial-over-IP bridge"
            ),
        })
    }

    /// A session over another link (the serial one: see [`serial_link`]).
    pub fn over(exchange: Arc<dyn Exchange>, describe: String) -> Self {
        let state = DeviceState::with_exchange(exchange);
        Self::from_parts(Client::new("serial://unit", state.clone()), state, describe)
    }

    fn from_parts(client: Client, state: DeviceState, link: String) -> Self {
        Self {
            client,
            state,
            credentials: Arc::new(Mutex::new(None)),
            link: link.into(),
        }
    }

    /// Where the unit is (its URL or serial link); never holds the token.
    pub fn link(&self) -> &str {
        &self.link
    }

    /// The logged-in user, or `None` when requests act as the unit's default user.
    pub fn user(&self) -> Option<UserName> {
        self.credentials().as_ref().map(|(u, _)| u.clone())
    }

    fn credentials(&self) -> std::sync::MutexGuard<'_, Option<(UserName, Password)>> {
        match self.credentials.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The generated client, for operations this type does not wrap.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// Runs one operation; on a 401 while logged in (a reboot ended the token), logs in
    /// again with the remembered credentials and runs it once more.
    async fn call<T, F, Fut>(&self, operation: &'static str, f: F) -> Result<T, UnitError>
    where
        F: Fn(Client) -> Fut,
        Fut: std::future::Future<
                Output = Result<
                    ins_device_api::ResponseValue<T>,
                    ins_device_api::Error<types::Error>,
                >,
            >,
    {
        let span = tracing::info_span!(
            "unit",
            op = operation,
            link = %crate::observe::url(&self.link)
        );
        let started = std::time::Instant::now();
        let result = self
            .call_in_span(operation, f)
            .instrument(span.clone())
            .await;
        let elapsed_ms = crate::observe::millis(started.elapsed());
        match &result {
            Ok(_) => tracing::debug!(parent: &span, elapsed_ms, "unit operation succeeded"),
            Err(e) => tracing::debug!(
                parent: &span,
                elapsed_ms,
                status = e.status(),
                kind = %e.kind(),
                error = %loggable(e),
                "unit operation failed"
            ),
        }
        result
    }

    async fn call_in_span<T, F, Fut>(&self, operation: &'static str, f: F) -> Result<T, UnitError>
    where
        F: Fn(Client) -> Fut,
        Fut: std::future::Future<
                Output = Result<
                    ins_device_api::ResponseValue<T>,
                    ins_device_api::Error<types::Error>,
                >,
            >,
    {
        // Logged in, but the token is gone (our own reboot cleared it): log in again
        // first, so that the request runs as this session's user, not the default user.
        if self.state.token().is_none() {
            let credentials = self.credentials().clone();
            if let Some((user, password)) = credentials {
                tracing::debug!("no token since the reboot: logging in again first");
                self.login_once(user, password).await?;
            }
        }
        match f(self.client.clone()).await {
            Ok(v) => Ok(v.into_inner()),
            Err(e) => {
                let error = UnitError::from_client(operation, e);
                let had_token = self.state.token().is_some();
                let credentials = self.credentials().clone();
                match (error.status(), had_token, credentials) {
                    (Some(401), true, Some((user, password))) => {
                        tracing::info!(
                            "the unit answered 401 (its token ended, e.g. by a reboot): \
                             logging in again and repeating once"
                        );
                        self.state.set_token(None);
                        self.login_once(user, password).await?;
                        f(self.client.clone())
                            .await
                            .map(|v| v.into_inner())
                            .map_err(|e| UnitError::from_client(operation, e))
                    }
                    _ => Err(error),
                }
            }
        }
    }

    async fn login_once(&self, user: UserName, password: Password) -> Result<(), UnitError> {
        let span = tracing::info_span!(
            "unit_login",
            user = %user,
            link = %crate::observe::url(&self.link)
        );
        let body = types::LoginRequest { user, password };
        let token = match self
            .client
            .login()
            .body(body)
            .send()
            .instrument(span.clone())
            .await
        {
            Ok(answer) => answer.into_inner().token,
            Err(e) => {
                let e = UnitError::from_client("login", e);
                tracing::info!(
                    parent: &span,
                    status = e.status(),
                    kind = %e.kind(),
                    error = %loggable(&e),
                    "login refused or failed"
                );
                return Err(e);
            }
        };
        self.state.set_token(Some(token));
        tracing::info!(parent: &span, "logged in");
        Ok(())
    }

    /// Logs in; the session remembers the credentials to log in again after a reboot.
    ///
    /// # Errors
    /// [`UnitError::Api`] with status 401 for a wrong user or password.
    pub async fn login(&self, user: UserName, password: Password) -> Result<(), UnitError> {
        self.login_once(user.clone(), password.clone()).await?;
        *self.credentials() = Some((user, password));
        Ok(())
    }

    /// Logs out (the unit forgets the token and releases a lock it held); later requests
    /// act as the default user.
    pub async fn logout(&self) -> Result<(), UnitError> {
        let result = match self.state.token() {
            Some(_) => self
                .client
                .logout()
                .send()
                .await
                .map(|_| ())
                .map_err(|e| UnitError::from_client("logout", e)),
            None => Ok(()),
        };
        self.state.set_token(None);
        *self.credentials() = None;
        match &result {
            Ok(()) => tracing::info!(link = %crate::observe::url(&self.link), "logged out"),
            Err(e) => tracing::info!(
                link = %crate::observe::url(&self.link),
                error = %loggable(e),
                "logout failed (the session forgot its token all the same)"
            ),
        }
        result
    }

    /// Changes a password: the logged-in user's own (`user` = `None`) or, for `setup`,
    /// another user's. An empty password clears it. Changing one's own password updates
    /// the remembered credentials.
    ///
    /// # Errors
    /// 401 without a login; 403 for another user's password by anyone but `setup`.
    pub async fn change_password(
        &self,
        user: Option<UserName>,
        password: Password,
    ) -> Result<(), UnitError> {
        let body = types::ChangePasswordRequest {
            user: user.clone(),
            password: password.clone(),
        };
        self.call("changePassword", |c| {
            let body = body.clone();
            async move { c.change_password().body(body).send().await }
        })
        .await?;
        let mut credentials = self.credentials();
        let own = match credentials.as_mut() {
            Some((me, remembered)) if user.as_ref().is_none_or(|u| u == me) => {
                *remembered = password;
                true
            }
            _ => false,
        };
        tracing::info!(
            for_user = user.as_ref().map(tracing::field::display),
            own,
            "password changed"
        );
        Ok(())
    }

    /// The unit's identity and versions (`GET /info`).
    pub async fn info(&self) -> Result<DeviceInfo, UnitError> {
        self.call("getDeviceInfo", |c| async move {
            c.get_device_info().send().await
        })
        .await
    }

    /// The whole settings tree, untyped (node paths: see [`crate::settings`]).
    pub async fn settings(&self) -> Result<Value, UnitError> {
        let typed = self
            .call(
                "getSettings",
                |c| async move { c.get_settings().send().await },
            )
            .await?;
        serde_json::to_value(typed).map_err(|e| UnitError::InvalidResponse {
            operation: "getSettings",
            reason: e.to_string(),
        })
    }

    /// The whole settings tree as the generated typed structure.
    pub async fn settings_typed(&self) -> Result<types::Settings, UnitError> {
        self.call(
            "getSettings",
            |c| async move { c.get_settings().send().await },
        )
        .await
    }

    /// Only the settings that differ from the defaults, as a partial tree.
    pub async fn settings_delta(&self) -> Result<Value, UnitError> {
        let typed = self
            .call("getSettings", |c| async move {
                c.get_settings().delta(true).send().await
            })
            .await?;
        serde_json::to_value(typed).map_err(|e| UnitError::InvalidResponse {
            operation: "getSettings",
            reason: e.to_string(),
        })
    }

    /// One node of the tree, e.g. `aiding/gnss1/leverArmPrimary` (slashes sent literally).
    ///
    /// # Errors
    /// 404 for a path that is not in the tree.
    pub async fn node(&self, path: &str) -> Result<Value, UnitError> {
        let path = path.trim_matches('/').to_owned();
        self.call("getSettingsNode", |c| {
            let path = path.clone();
            async move { c.get_settings_node().path(path).send().await }
        })
        .await
    }

    /// Writes a partial tree (merged recursively by the unit); with `check_only` the unit
    /// only validates it.
    ///
    /// # Errors
    /// 422 with every invalid node ([`UnitError::node_errors`]) — nothing is applied;
    /// 409 while another session holds the settings lock; 403 without the Setting WRITE right.
    pub async fn write(&self, patch: &Value, check_only: bool) -> Result<WriteOutcome, UnitError> {
        let body = typed_tree("updateSettings", patch)?;
        let outcome = self
            .call("updateSettings", |c| {
                let body = body.clone();
                async move {
                    c.update_settings()
                        .check_only(check_only)
                        .body(body)
                        .send()
                        .await
                }
            })
            .await
            .map(WriteOutcome::from)?;
        tracing::debug!(
            nodes = leaf_count(patch),
            check_only,
            need_reboot = outcome.need_reboot,
            "settings written"
        );
        Ok(outcome)
    }

    /// Writes one node (`POST /settings/<path>`).
    pub async fn write_node(
        &self,
        path: &str,
        value: &Value,
        check_only: bool,
    ) -> Result<WriteOutcome, UnitError> {
        let path = path.trim_matches('/').to_owned();
        let value = value.clone();
        let outcome = self
            .call("updateSettingsNode", |c| {
                let (path, value) = (path.clone(), value.clone());
                async move {
                    c.update_settings_node()
                        .path(path)
                        .check_only(check_only)
                        .body(value)
                        .send()
                        .await
                }
            })
            .await
            .map(WriteOutcome::from)?;
        // The node's path only: its value may be a secret (a password node).
        tracing::debug!(
            node = %path,
            check_only,
            need_reboot = outcome.need_reboot,
            "settings node written"
        );
        Ok(outcome)
    }

    /// Restores the factory default settings.
    pub async fn restore_defaults(&self, check_only: bool) -> Result<WriteOutcome, UnitError> {
        self.call("restoreDefaultSettings", |c| async move {
            c.restore_default_settings()
                .check_only(check_only)
                .send()
                .await
        })
        .await
        .map(WriteOutcome::from)
    }

    /// The whole tree as the unit exports it (`GET /settings/export`), every node kept.
    pub async fn export(&self) -> Result<Value, UnitError> {
        // Untyped on purpose: a backup keeps every node the unit holds, including those
        // the settings schema does not describe.
        let file = self
            .call("exportSettings", |c| async move {
                c.export_settings().send().await
            })
            .await?;
        Ok(Value::Object(file.0))
    }

    /// Imports a whole tree (`POST /settings/import`).
    pub async fn import(&self, tree: &Value, check_only: bool) -> Result<WriteOutcome, UnitError> {
        let body = typed_tree("importSettings", tree)?;
        self.call("importSettings", |c| {
            let body = body.clone();
            async move {
                c.import_settings()
                    .check_only(check_only)
                    .body(body)
                    .send()
                    .await
            }
        })
        .await
        .map(WriteOutcome::from)
    }

    /// Brings the unit's settings to `wanted` (a whole or partial tree) and writes only
    /// what differs: reads the tree, computes the minimal patch, validates it with
    /// `checkOnly` (a 422 lists every invalid node and nothing is applied), writes it,
    /// then reads the tree back and confirms every changed node.
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] for a wanted tree with unknown nodes or values of the
    /// wrong shape (nothing sent); [`UnitError::Api`] (409 locked by another session, 422
    /// invalid nodes, 403 no right); [`UnitError::NotApplied`] when the read-back differs.
    pub async fn apply_wanted(
        &self,
        wanted: &Value,
        options: ApplyOptions,
    ) -> Result<ApplyReport, UnitError> {
        // Refuse a wanted tree the settings schema does not describe before anything else.
        typed_tree("updateSettings", wanted)?;
        if options.lock {
            self.lock().await?;
        }
        let result = self.apply_unlocked(wanted, options.check_only).await;
        if options.lock {
            let unlocked = self.unlock().await;
            if result.is_ok() {
                unlocked?;
            }
        }
        match &result {
            Ok(report) => tracing::info!(
                changed = report.changed.len(),
                nodes = %report.changed.join(", "),
                written = report.written,
                need_reboot = report.need_reboot,
                check_only = options.check_only,
                "wanted settings applied"
            ),
            Err(e) => tracing::info!(error = %loggable(e), "applying the wanted settings failed"),
        }
        result
    }

    /// What [`apply_wanted`](Self::apply_wanted) would change on the unit, without
    /// changing anything: the nodes whose values differ from `wanted` (a whole or
    /// partial tree), read with the viewer's rights. Empty: the unit is in sync.
    ///
    /// # Errors
    /// As [`apply_wanted`](Self::apply_wanted) for a wanted tree the schema does not
    /// describe (nothing sent), and the errors of reading the settings.
    pub async fn pending_changes(&self, wanted: &Value) -> Result<Vec<String>, UnitError> {
        typed_tree("updateSettings", wanted)?;
        let (_, patch) = self.plan(wanted).await?;
        Ok(patch
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect())
    }

    /// The unit's tree made `wanted` (normalized), and the patch from the current tree.
    async fn plan(&self, wanted: &Value) -> Result<(Value, crate::settings::Patch), UnitError> {
        let current = self.settings().await?;
        // Both trees pass through the typed tree, so `1` and `1.0` of a number node
        // compare equal and only real differences are written.
        let target = normalized("updateSettings", &crate::settings::apply(&current, wanted))?;
        let patch = crate::settings::diff(&current, &target);
        Ok((target, patch))
    }

    async fn apply_unlocked(
        &self,
        wanted: &Value,
        check_only: bool,
    ) -> Result<ApplyReport, UnitError> {
        let (target, patch) = self.plan(wanted).await?;
        let changed: Vec<String> = patch
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
        if changed.is_empty() {
            return Ok(ApplyReport {
                changed,
                need_reboot: false,
                written: false,
            });
        }
        let body = patch.tree;
        let checked = self.write(&body, true).await?;
        if check_only {
            return Ok(ApplyReport {
                changed,
                need_reboot: checked.need_reboot,
                written: false,
            });
        }
        let written = self.write(&body, false).await?;
        let after = self.settings().await?;
        let differing: Vec<String> = patch
            .changed
            .iter()
            .filter(|p| crate::settings::get(&after, p) != crate::settings::get(&target, p))
            .map(|p| p.as_str().to_owned())
            .collect();
        if !differing.is_empty() {
            return Err(UnitError::NotApplied { paths: differing });
        }
        Ok(ApplyReport {
            changed,
            need_reboot: written.need_reboot || checked.need_reboot,
            written: true,
        })
    }

    /// Takes the settings lock for this session's token (needs a login).
    pub async fn lock(&self) -> Result<(), UnitError> {
        self.call(
            "lockSettings",
            |c| async move { c.lock_settings().send().await },
        )
        .await
        .map(|_| ())?;
        tracing::info!(link = %crate::observe::url(&self.link), "settings locked");
        Ok(())
    }

    /// Releases the settings lock.
    pub async fn unlock(&self) -> Result<(), UnitError> {
        self.call("unlockSettings", |c| async move {
            c.unlock_settings().send().await
        })
        .await
        .map(|_| ())?;
        tracing::info!(link = %crate::observe::url(&self.link), "settings unlocked");
        Ok(())
    }

    /// Reboots the unit. Every token and lock ends; the session logs in again on its next
    /// request if it was logged in.
    pub async fn reboot(&self) -> Result<(), UnitError> {
        self.call("reboot", |c| async move { c.reboot().send().await })
            .await?;
        self.state.set_token(None);
        tracing::info!(link = %crate::observe::url(&self.link), "unit rebooting");
        Ok(())
    }

    /// Waits until the unit answers again after a reboot (polling `/info`), then logs in
    /// again if the session was logged in.
    ///
    /// # Errors
    /// The last error when the unit is still not back after `timeout`.
    pub async fn wait_until_back(&self, timeout: Duration) -> Result<DeviceInfo, UnitError> {
        let began = tokio::time::Instant::now();
        let deadline = began + timeout;
        let mut delay = Duration::from_millis(100);
        let mut attempt: u32 = 0;
        loop {
            attempt += 1;
            let result = match self.user() {
                Some(_) if self.state.token().is_none() => {
                    let credentials = self.credentials().clone();
                    match credentials {
                        Some((u, p)) => match self.login_once(u, p).await {
                            Ok(()) => self.info().await,
                            Err(e) => Err(e),
                        },
                        None => self.info().await,
                    }
                }
                _ => self.info().await,
            };
            match result {
                Ok(info) => {
                    tracing::info!(
                        attempts = attempt,
                        waited_ms = crate::observe::millis(began.elapsed()),
                        "the unit is back"
                    );
                    return Ok(info);
                }
                Err(e) if e.is_retryable() && tokio::time::Instant::now() + delay < deadline => {
                    tracing::debug!(
                        attempt,
                        delay_ms = crate::observe::millis(delay),
                        reason = %loggable(&e),
                        "the unit is not back yet"
                    );
                    tokio::time::sleep(delay).await;
                    delay = (delay * 2).min(Duration::from_secs(1));
                }
                Err(e) => {
                    tracing::info!(attempts = attempt, error = %loggable(&e), "the unit did not come back");
                    return Err(e);
                }
            }
        }
    }

    /// The data logger's state.
    pub async fn logger_status(&self) -> Result<types::DataLoggerStatus, UnitError> {
        self.call("getDataLoggerStatus", |c| async move {
            c.get_data_logger_status().send().await
        })
        .await
    }

    /// Starts the data logger (409 when it is already logging).
    pub async fn logger_start(&self) -> Result<(), UnitError> {
        self.call("startDataLogger", |c| async move {
            c.start_data_logger().send().await
        })
        .await
        .map(|_| ())
    }

    /// Stops the data logger (409 when it is idle).
    pub async fn logger_stop(&self) -> Result<(), UnitError> {
        self.call("stopDataLogger", |c| async move {
            c.stop_data_logger().send().await
        })
        .await
        .map(|_| ())
    }

    /// Sets the session token directly (a token obtained elsewhere). Prefer [`Unit::login`],
    /// which can log in again after a reboot.
    pub fn set_token(&self, token: Option<AuthToken>) {
        self.state.set_token(token);
    }
}

/// A (partial) tree as the typed `Settings` the generated client sends. Refused before
/// sending, naming the nodes: a value of the wrong shape, and any key the settings
/// schema does not define (the typed tree would drop it silently, and a client never
/// sends a field the unit did not define).
fn typed_tree(operation: &'static str, tree: &Value) -> Result<types::Settings, UnitError> {
    let typed: types::Settings =
        serde_json::from_value(tree.clone()).map_err(|e| UnitError::InvalidRequest {
            operation,
            reason: format!("not a valid settings tree: {e}"),
        })?;
    let back = serde_json::to_value(&typed).map_err(|e| UnitError::InvalidRequest {
        operation,
        reason: e.to_string(),
    })?;
    let mut unknown = Vec::new();
    missing_paths(tree, &back, &mut String::new(), &mut unknown);
    if !unknown.is_empty() {
        return Err(UnitError::InvalidRequest {
            operation,
            reason: format!("unknown settings node(s): {}", unknown.join(", ")),
        });
    }
    Ok(typed)
}

/// A tree as the typed settings structure writes it back (numbers of number nodes as
/// floats, and so on), after the checks of [`typed_tree`].
fn normalized(operation: &'static str, tree: &Value) -> Result<Value, UnitError> {
    let typed = typed_tree(operation, tree)?;
    serde_json::to_value(typed).map_err(|e| UnitError::InvalidRequest {
        operation,
        reason: e.to_string(),
    })
}

/// The nodes of a (partial) tree that are not objects, for the logs.
fn leaf_count(tree: &Value) -> usize {
    match tree {
        Value::Object(map) => map.values().map(leaf_count).sum(),
        _ => 1,
    }
}

/// Paths of `a` that `b` lacks (objects compared key by key).
fn missing_paths(a: &Value, b: &Value, prefix: &mut String, out: &mut Vec<String>) {
    let (Value::Object(a), Value::Object(b)) = (a, b) else {
        return;
    };
    for (key, value) in a {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(key);
        match b.get(key) {
            None => out.push(prefix.clone()),
            Some(other) => missing_paths(value, other, prefix, out),
        }
        prefix.truncate(len);
    }
}
