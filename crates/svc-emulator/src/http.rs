//! What every route of the cloud and notification services shares: the error body,
//! request-body decoding (400 for malformed syntax or a missing field, 422 for invalid
//! values), paging parameters, and who may call a route: [`Authorized`] and
//! [`InOrganization`], the extractors that authenticate the caller (and check the
//! organization in the path) before a route runs.

use std::marker::PhantomData;
use std::sync::Arc;

use axum::extract::{FromRequestParts, Path};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::de::DeserializeOwned;
use serde_json::Value;
use uuid::Uuid;

pub use crate::api_error::{ApiError, ApiResult};
use crate::state::{App, Caller};

/// A 200 answer with a JSON body.
pub fn ok<T: serde::Serialize>(value: T) -> Response {
    (StatusCode::OK, axum::Json(value)).into_response()
}

/// Parses a request body: first as JSON (400 when malformed), then `check` looks at the
/// raw value for invalid values (422), then the typed decoding (400 for a missing
/// required field or a wrong type). An empty body counts as `{}` when `optional`.
pub fn parse_body<T: DeserializeOwned>(
    bytes: &[u8],
    optional: bool,
    check: impl FnOnce(&Value) -> ApiResult<()>,
) -> ApiResult<T> {
    let value: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
        if optional {
            Value::Object(Default::default())
        } else {
            return Err(ApiError::bad_request("a JSON request body is required"));
        }
    } else {
        serde_json::from_slice(bytes)
            .map_err(|e| ApiError::bad_request(format!("malformed JSON body: {e}")))?
    };
    if !value.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    check(&value)?;
    serde_json::from_value(value)
        .map_err(|e| ApiError::bad_request(format!("invalid request body: {e}")))
}

/// `page` and `perPage` from a raw query string: missing or not an integer → 400,
/// out of range → 422 (`openapi/cloud.yaml`, "Lists and paging").
pub fn paging(query: Option<&str>) -> ApiResult<(usize, usize)> {
    let pairs = query.map(url_pairs).unwrap_or_default();
    let get = |name: &str| -> ApiResult<i64> {
        let raw = pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .ok_or_else(|| {
                ApiError::bad_request(format!("query parameter `{name}` is required"))
            })?;
        raw.parse::<i64>().map_err(|_| {
            ApiError::bad_request(format!(
                "query parameter `{name}` must be an integer, got `{raw}`"
            ))
        })
    };
    let (page, per_page) = (get("page")?, get("perPage")?);
    svc_protocol::limits::check_page(page, per_page)
        .map_err(|e| ApiError::invalid(e.to_string()))?;
    Ok((
        usize::try_from(page).unwrap_or(0),
        usize::try_from(per_page).unwrap_or(1),
    ))
}

fn url_pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// One page of a list.
pub fn page_of<T: Clone>(items: &[T], page: usize, per_page: usize) -> Vec<T> {
    items
        .iter()
        .skip(page.saturating_mul(per_page))
        .take(per_page)
        .cloned()
        .collect()
}

/// The caller behind the bearer token, with the scope the service needs.
/// No token → 401 with the exact details of the `oidc` security scheme of
/// `openapi/cloud.yaml`; an unknown or expired token → 401; a known caller without the
/// administrator role or the scope → 403.
pub fn authenticate(app: &App, headers: &HeaderMap, scope: &str) -> ApiResult<Caller> {
    let token = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| {
            let (scheme, rest) = v.split_once(' ')?;
            scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
        })
        .filter(|t| !t.is_empty())
        .ok_or_else(|| {
            ApiError::unauthorized("No bearer token found in the authorization header")
        })?;
    let caller = app
        .caller_for_token(token)
        .ok_or_else(|| ApiError::unauthorized("The access token is invalid or has expired"))?;
    if !caller.admin {
        return Err(ApiError::forbidden(
            "This API key does not belong to an organization administrator",
        ));
    }
    if !caller.scopes.iter().any(|s| s == scope) {
        return Err(ApiError::forbidden(format!(
            "The access token lacks the scope `{scope}`"
        )));
    }
    Ok(caller)
}

/// The organization in the path must exist (404) and be the caller's (403).
pub fn same_organization(app: &App, caller: &Caller, organization_id: Uuid) -> ApiResult<()> {
    if caller.organization_id == organization_id {
        return Ok(());
    }
    if !app.db().organizations.contains_key(&organization_id) {
        return Err(ApiError::not_found("organization", organization_id));
    }
    Err(ApiError::forbidden(format!(
        "You are not an administrator of organization {organization_id}"
    )))
}

/// The organization of an organization-scoped route (`/organizations/{org}/...`): it must
/// exist (404) and be the caller's (403).
pub fn organization_of(app: &App, caller: &Caller, raw: &str) -> ApiResult<Uuid> {
    let org = uuid_segment(raw, "organization")?;
    same_organization(app, caller, org)?;
    Ok(org)
}

/// A service's API, whose routes take an [`Authorized`] or [`InOrganization`] caller.
pub trait Api: Send + Sync + 'static {
    /// The scope its access tokens must carry.
    const SCOPE: &'static str;
    /// Runs before each request's caller is authenticated.
    fn before(_app: &App) {}
}

/// The caller of a route of API `S`, as every route starts: [`Api::before`],
/// then [`authenticate`] with `S::SCOPE` (401/403 in the service's error body). It runs
/// after the extractors listed before it in a route's arguments and before those after
/// it (a request body is read last).
pub struct Authorized<S> {
    pub app: Arc<App>,
    pub caller: Caller,
    service: PhantomData<S>,
}

impl<S: Api> FromRequestParts<Arc<App>> for Authorized<S> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> ApiResult<Self> {
        S::before(app);
        let caller = authenticate(app, &parts.headers, S::SCOPE)?;
        Ok(Self {
            app: app.clone(),
            caller,
            service: PhantomData,
        })
    }
}

/// The caller of an organization-scoped route of `S` (`/organizations/{org}/...`, the
/// route's only path parameter) and that organization: the path is read first (a
/// segment that is not UTF-8: axum's rejection), then the caller is [`Authorized`], then
/// the organization must exist (404) and be the caller's (403), as [`organization_of`]
/// checks.
pub struct InOrganization<S> {
    pub app: Arc<App>,
    pub caller: Caller,
    pub org: Uuid,
    service: PhantomData<S>,
}

impl<S: Api> FromRequestParts<Arc<App>> for InOrganization<S> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, app: &Arc<App>) -> Result<Self, Response> {
        let Path(raw) = Path::<String>::from_request_parts(parts, app)
            .await
            .map_err(IntoResponse::into_response)?;
        let Authorized { app, caller, .. } = Authorized::<S>::from_request_parts(parts, app)
            .await
            .map_err(IntoResponse::into_response)?;
        let org = organization_of(&app, &caller, &raw).map_err(IntoResponse::into_response)?;
        Ok(Self {
            app,
            caller,
            org,
            service: PhantomData,
        })
    }
}

/// A path segment that must be a UUID (404 otherwise: no such resource can exist).
pub fn uuid_segment(raw: &str, what: &str) -> ApiResult<Uuid> {
    raw.parse()
        .map_err(|_| ApiError::new(StatusCode::NOT_FOUND, format!("{what} `{raw}` not found")))
}

/// Checks `metadata` in a raw body: an object of string values within the limits (422).
pub fn check_metadata_value(value: Option<&Value>, at: &str) -> ApiResult<()> {
    let Some(value) = value else { return Ok(()) };
    let Some(map) = value.as_object() else {
        return Err(ApiError::invalid(format!(
            "`{at}` must be an object of strings"
        )));
    };
    let mut metadata = svc_cloud_api::Metadata::new();
    for (k, v) in map {
        let Some(s) = v.as_str() else {
            return Err(ApiError::invalid(format!("`{at}.{k}` must be a string")));
        };
        metadata.insert(k.clone(), s.to_owned());
    }
    svc_protocol::limits::check_metadata(&metadata)
        .map_err(|e| ApiError::invalid(format!("`{at}`: {e}")))
}

/// Checks a known value of an open enum in a raw body (422 for an unknown one).
pub fn check_enum(value: Option<&Value>, at: &str, known: &[&str]) -> ApiResult<()> {
    match value {
        None => Ok(()),
        Some(Value::String(s)) if known.contains(&s.as_str()) => Ok(()),
        Some(Value::String(s)) => Err(ApiError::invalid(format!(
            "`{at}` has the invalid value `{s}`; allowed: {}",
            known.join(", ")
        ))),
        Some(_) => Err(ApiError::bad_request(format!("`{at}` must be a string"))),
    }
}

/// Checks a container path in a raw body (422).
pub fn check_path_value(value: Option<&Value>, at: &str) -> ApiResult<()> {
    match value {
        None => Ok(()),
        Some(Value::String(p)) => svc_protocol::limits::check_container_path(p)
            .map_err(|e| ApiError::invalid(format!("`{at}`: {e}"))),
        Some(_) => Err(ApiError::bad_request(format!("`{at}` must be a string"))),
    }
}
