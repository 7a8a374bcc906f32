//! Hand-written request hooks for the generated unit client:
//! - the session token travels as the `auth` query parameter (the unit accepts no
//!   header token), added to every request but `login`;
//! - settings node paths keep their slashes (`/settings/output/comA/messages/imuShort`,
//!   not `%2F`), which the generator would otherwise percent-encode;
//! - the token never appears in `Debug` or error text: URLs in transport errors are
//!   redacted, and responses are handed back without the request URL;
//! - the same client runs over another link than HTTP: with an [`Exchange`] set in the
//!   state (svc-core supplies the sbgECom serial one), each request — method, path,
//!   query with `auth`, JSON body — is handed to it instead of the network, and its
//!   reply becomes the response. Every operation then works identically on both links.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use progenitor_client::{ClientHooks, ClientInfo, Error, OperationInfo};

/// The query parameter that carries the session token.
pub const AUTH_PARAMETER: &str = "auth";

svc_secret::secret_string!(
    /// A unit session token, as returned by `login`. `Debug` prints `[redacted]`.
    AuthToken
);

/// One REST request as a link other than HTTP carries it (`openapi/ins-device.yaml`,
/// "Serial transport": the path including `/api/v1`, the query without `?`, the JSON
/// body of a POST).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeRequest {
    pub method: http::Method,
    pub path: String,
    /// The query string without `?`; it may hold `auth=…`: never log it unredacted.
    pub query: String,
    pub body: Option<Vec<u8>>,
}

/// The unit's answer over such a link: an HTTP-like status and the body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeReply {
    pub status: u16,
    pub body: Vec<u8>,
}

/// Why an [`Exchange`] has no reply: its text (which must not contain the token), and
/// whether the unit stayed silent until the link's deadline (`no_answer`) rather than
/// the link failing. The SDK reports the first as a timeout of the unit, the second as
/// an unreachable unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeError {
    pub reason: String,
    pub no_answer: bool,
}

impl ExchangeError {
    /// The unit did not answer in time.
    pub fn no_answer(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            no_answer: true,
        }
    }

    /// The error text of a client error built from an exchange error, and whether the
    /// unit did not answer in time (see [`ExchangeError::no_answer`]).
    pub fn from_custom(custom: &str) -> (&str, bool) {
        match custom.strip_prefix(NO_ANSWER_TAG) {
            Some(reason) => (reason, true),
            None => (custom, false),
        }
    }

    fn into_custom(self) -> String {
        if self.no_answer {
            format!("{NO_ANSWER_TAG}{}", self.reason)
        } else {
            self.reason
        }
    }
}

/// A link failure (anything but silence).
impl From<String> for ExchangeError {
    fn from(reason: String) -> Self {
        Self {
            reason,
            no_answer: false,
        }
    }
}

impl fmt::Display for ExchangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

/// Marks the text of an [`ExchangeError`] without answer inside the generated client's
/// `Error::Custom` (which carries only text); removed by [`ExchangeError::from_custom`].
const NO_ANSWER_TAG: &str = "[no answer] ";

/// The future an [`Exchange`] returns; the error text must not contain the token.
pub type ExchangeFuture<'a> =
    Pin<Box<dyn Future<Output = Result<ExchangeReply, ExchangeError>> + Send + 'a>>;

/// A link that carries REST requests to the unit in place of HTTP.
pub trait Exchange: Send + Sync + 'static {
    fn exchange(&self, request: ExchangeRequest) -> ExchangeFuture<'_>;
}

/// The header that ties a request to its stashed reply between the `pre` and `exec`
/// hooks (internal; never sent anywhere).
const EXCHANGE_HEADER: &str = "x-svc-exchange";

/// The state the generated unit client carries: the current session token, shared
/// by every clone of the client (a login or a reboot changes it for all of them), and
/// the link when it is not HTTP.
#[derive(Clone, Default)]
pub struct DeviceState {
    token: Arc<RwLock<Option<AuthToken>>>,
    exchange: Option<Arc<dyn Exchange>>,
    replies: Arc<Mutex<HashMap<u64, ExchangeReply>>>,
    next: Arc<AtomicU64>,
}

impl DeviceState {
    pub fn new() -> Self {
        Self::default()
    }

    /// A state whose requests travel over `exchange` instead of HTTP.
    pub fn with_exchange(exchange: Arc<dyn Exchange>) -> Self {
        Self {
            exchange: Some(exchange),
            ..Self::default()
        }
    }

    /// A state over the same link (HTTP or the same exchange) with a token of its own
    /// (none at first): a second session beside this one, e.g. to try an old token
    /// without touching the current one.
    pub fn sibling(&self) -> Self {
        Self {
            exchange: self.exchange.clone(),
            ..Self::default()
        }
    }

    /// Sets (after a login) or clears (after a logout or a reboot) the session token.
    pub fn set_token(&self, token: Option<AuthToken>) {
        match self.token.write() {
            Ok(mut slot) => *slot = token,
            Err(poisoned) => *poisoned.into_inner() = token,
        }
    }

    pub fn token(&self) -> Option<AuthToken> {
        match self.token.read() {
            Ok(slot) => slot.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn replies(&self) -> std::sync::MutexGuard<'_, HashMap<u64, ExchangeReply>> {
        match self.replies.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }
}

impl fmt::Debug for DeviceState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceState")
            .field("logged_in", &self.token().is_some())
            .finish()
    }
}

/// The URL with the value of every `auth` parameter replaced by `[redacted]`.
pub fn redacted_url(url: &reqwest::Url) -> reqwest::Url {
    let mut url = url.clone();
    redact_url(&mut url);
    url
}

fn redact_url(url: &mut reqwest::Url) {
    if !url.query_pairs().any(|(k, _)| k == AUTH_PARAMETER) {
        return;
    }
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if k == AUTH_PARAMETER {
                "[redacted]".to_owned()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    url.query_pairs_mut().clear().extend_pairs(pairs);
}

/// Node paths are sent with literal slashes. The generator percent-encodes every
/// path parameter, and a `/` can only have become `%2F` (a literal `%` would be
/// `%25`), so turning `%2F` back is exact.
fn restore_settings_slashes(url: &mut reqwest::Url) {
    const PREFIX: &str = "/api/v1/settings/";
    let path = url.path();
    if let Some(rest) = path.strip_prefix(PREFIX)
        && (rest.contains("%2F") || rest.contains("%2f"))
    {
        let restored = format!("{PREFIX}{}", rest.replace("%2F", "/").replace("%2f", "/"));
        url.set_path(&restored);
    }
}

/// Hands a request to the exchange link and stashes its reply for `exec`.
async fn exchange_request<E>(
    state: &DeviceState,
    exchange: &Arc<dyn Exchange>,
    request: &mut reqwest::Request,
) -> Result<(), Error<E>> {
    let body = match request.body() {
        None => None,
        Some(body) => Some(
            body.as_bytes()
                .ok_or_else(|| {
                    Error::Custom("a streamed request body cannot travel over this link".into())
                })?
                .to_vec(),
        ),
    };
    let url = request.url();
    let call = ExchangeRequest {
        method: request.method().clone(),
        path: url.path().to_owned(),
        query: url.query().unwrap_or_default().to_owned(),
        body,
    };
    let reply = exchange
        .exchange(call)
        .await
        .map_err(|e| Error::Custom(e.into_custom()))?;
    let id = state.next.fetch_add(1, Ordering::Relaxed);
    state.replies().insert(id, reply);
    let value = reqwest::header::HeaderValue::from(id);
    request.headers_mut().insert(EXCHANGE_HEADER, value);
    Ok(())
}

impl ClientHooks<DeviceState> for crate::Client {
    async fn pre<E>(
        &self,
        request: &mut reqwest::Request,
        info: &OperationInfo,
    ) -> Result<(), Error<E>> {
        restore_settings_slashes(request.url_mut());
        if info.operation_id != "login"
            && let Some(token) = self.inner().token()
        {
            request
                .url_mut()
                .query_pairs_mut()
                .append_pair(AUTH_PARAMETER, token.expose_secret());
        }
        if let Some(exchange) = &self.inner().exchange {
            exchange_request(self.inner(), exchange, request).await?;
        }
        Ok(())
    }

    async fn exec(
        &self,
        request: reqwest::Request,
        _info: &OperationInfo,
    ) -> reqwest::Result<reqwest::Response> {
        let stashed = request
            .headers()
            .get(EXCHANGE_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .and_then(|id| self.inner().replies().remove(&id));
        if let Some(reply) = stashed {
            let mut response = http::Response::new(reqwest::Body::from(reply.body));
            *response.status_mut() =
                http::StatusCode::from_u16(reply.status).unwrap_or(http::StatusCode::BAD_GATEWAY);
            response.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static("application/json"),
            );
            return Ok(reqwest::Response::from(response));
        }
        match self.client().execute(request).await {
            // The response would carry the request URL, token included, into every
            // `Debug` of an error; hand it back without it.
            Ok(response) => Ok(reqwest::Response::from(http::Response::from(response))),
            Err(mut e) => {
                if let Some(url) = e.url_mut() {
                    redact_url(url);
                }
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_is_redacted_and_other_parameters_kept() {
        let url =
            reqwest::Url::parse("http://unit/api/v1/settings?format=pretty&auth=s3cr3t").unwrap();
        let shown = redacted_url(&url).to_string();
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(
            shown.contains("format=pretty") && shown.contains("auth=%5Bredacted%5D"),
            "{shown}"
        );
    }

    #[test]
    fn settings_slashes_restored_only_under_settings() {
        let mut url =
            reqwest::Url::parse("http://unit/api/v1/settings/output%2FcomA%2Fmessages%2FimuShort")
                .unwrap();
        restore_settings_slashes(&mut url);
        assert_eq!(url.path(), "/api/v1/settings/output/comA/messages/imuShort");
        let mut literal = reqwest::Url::parse("http://unit/api/v1/settings/a%252Fb").unwrap();
        restore_settings_slashes(&mut literal);
        assert_eq!(
            literal.path(),
            "/api/v1/settings/a%252Fb",
            "an encoded `%` stays as it is"
        );
    }

    #[test]
    fn tokens_are_redacted_in_debug() {
        let state = DeviceState::new();
        state.set_token(Some(AuthToken::new("s3cr3t")));
        assert_eq!(
            format!("{:?}", state.token()),
            "Some(AuthToken([redacted]))"
        );
        assert!(!format!("{state:?}").contains("s3cr3t"));
    }
}
