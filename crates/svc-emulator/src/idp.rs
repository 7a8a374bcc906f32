//! The identity provider: OpenID Connect discovery and a token endpoint.
//!
//! Grants (the `oidc` security scheme of `openapi/cloud.yaml`): `grant_type=password` with
//! `client_id=api-key`, `username=<API_KEY>`, `password=<API_SECRET>`, `scope=openid` (as
//! the real service), and `grant_type=client_credentials` with `client_id=<API_KEY>`,
//! `client_secret=<API_SECRET>`. The answer is `{access_token, token_type: "Bearer",
//! expires_in, scope}`; an administrator's token carries `cloud:api-key` and
//! `notification:user`, a member's only `openid`. Errors follow RFC 6749 §5.2.
//!
//! The token endpoint answers at [`TOKEN_PATH`], which discovery names, and at
//! [`REALM_TOKEN_PATH`], where the vendor's identity provider (Keycloak) has it and its
//! published samples post: a client configured for the service only changes the host.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use crate::state::{App, Caller, random_hex};

pub const TOKEN_PATH: &str = "/oauth/token";
/// The token endpoint of a Keycloak realm (any realm name).
pub const REALM_TOKEN_PATH: &str = "/realms/{realm}/protocol/openid-connect/token";
pub const SCOPE_CLOUD: &str = "cloud:api-key";
pub const SCOPE_NOTIFICATION: &str = "notification:user";

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/.well-known/openid-configuration", get(discovery))
        .route(TOKEN_PATH, post(token))
        .route(REALM_TOKEN_PATH, post(token))
        .with_state(app)
}

async fn discovery(State(app): State<Arc<App>>) -> Response {
    let issuer = &app.urls.auth;
    axum::Json(json!({
        "issuer": issuer,
        "token_endpoint": format!("{issuer}{TOKEN_PATH}"),
        "grant_types_supported": ["password", "client_credentials"],
        "token_endpoint_auth_methods_supported": ["client_secret_post"],
        "response_types_supported": ["token"],
        "scopes_supported": ["openid", SCOPE_CLOUD, SCOPE_NOTIFICATION],
    }))
    .into_response()
}

fn oauth_error(status: StatusCode, error: &str, description: &str) -> Response {
    (
        status,
        axum::Json(json!({"error": error, "error_description": description})),
    )
        .into_response()
}

async fn token(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let form: Vec<(String, String)> = form_urlencoded::parse(&body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let field = |name: &str| {
        form.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let (key, secret) = match field("grant_type") {
        Some("password") => {
            if field("client_id") != Some("api-key") {
                return oauth_error(
                    StatusCode::UNAUTHORIZED,
                    "invalid_client",
                    "client_id must be `api-key`",
                );
            }
            (field("username"), field("password"))
        }
        Some("client_credentials") => (field("client_id"), field("client_secret")),
        Some(other) => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                &format!("grant type `{other}` is not supported"),
            );
        }
        None => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                "grant_type is required",
            );
        }
    };
    let (Some(key), Some(secret)) = (key, secret) else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "the API key and secret are required",
        );
    };
    let mut db = app.db();
    let Some(api_key) = db
        .keys
        .get(key)
        .filter(|k| constant_time_eq(k.secret.as_bytes(), secret.as_bytes()))
    else {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_grant",
            "invalid API key or secret",
        );
    };
    let mut scopes = vec!["openid".to_owned()];
    if api_key.admin {
        scopes.extend([SCOPE_CLOUD.to_owned(), SCOPE_NOTIFICATION.to_owned()]);
    }
    let lifetime = app.config.token_lifetime;
    let caller = Caller {
        organization_id: api_key.organization_id,
        user_id: api_key.user_id,
        admin: api_key.admin,
        scopes: scopes.clone(),
        expires_at: chrono::Utc::now() + lifetime,
    };
    let access_token = format!("svc_at_{}", random_hex(32));
    // Forget expired tokens so the table does not grow without bound.
    let now = chrono::Utc::now();
    db.tokens.retain(|_, c| c.expires_at > now);
    db.tokens.insert(access_token.clone(), caller);
    axum::Json(json!({
        "access_token": access_token,
        "token_type": "Bearer",
        "expires_in": lifetime.as_secs(),
        "scope": scopes.join(" "),
    }))
    .into_response()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}
