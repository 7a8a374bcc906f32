//! The error answer of the cloud and notification services: a status and the
//! `{title, details}` body of the specification, as every route, the fault layer and
//! the servers' own refusals write it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use svc_cloud_api::cloud::types::Error as ErrorBody;
use uuid::Uuid;

/// An error answer: a status and the `{title, details}` body of the specification.
#[derive(Debug)]
pub struct ApiError {
    pub status: StatusCode,
    pub details: String,
}

impl ApiError {
    pub fn new(status: StatusCode, details: impl Into<String>) -> Self {
        Self {
            status,
            details: details.into(),
        }
    }
    pub fn bad_request(details: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, details)
    }
    pub fn unauthorized(details: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, details)
    }
    pub fn forbidden(details: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, details)
    }
    pub fn not_found(what: &str, id: Uuid) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("{what} {id} not found"))
    }
    pub fn conflict(details: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, details)
    }
    pub fn invalid(details: impl Into<String>) -> Self {
        Self::new(StatusCode::UNPROCESSABLE_ENTITY, details)
    }
    pub fn internal(details: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, details)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let title = self.status.canonical_reason().unwrap_or("Error").to_owned();
        let body = ErrorBody {
            title,
            details: self.details,
        };
        (self.status, axum::Json(body)).into_response()
    }
}

pub type ApiResult<T> = Result<T, ApiError>;
