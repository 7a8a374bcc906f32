//! S3's XML error answers.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// An S3-style error answer.
#[derive(Debug)]
pub(super) struct S3Error {
    status: StatusCode,
    code: &'static str,
    message: String,
}

impl S3Error {
    pub(super) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
        }
    }

    pub(super) fn denied(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "AccessDenied", message)
    }

    /// The upload of an object no longer wanted ([`super::Storage::with_upload_gate`]).
    pub(super) fn not_wanted() -> Self {
        Self::denied(
            "The file of this upload form was deleted (alone or with its container): nothing can be uploaded to it",
        )
    }

    pub(super) fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "InvalidArgument", message)
    }

    pub(super) fn file_not_last() -> Self {
        Self::invalid_argument("Field file must be the last form field")
    }

    pub(super) fn no_such_bucket(bucket: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "NoSuchBucket",
            format!("The specified bucket does not exist: {bucket}"),
        )
    }

    pub(super) fn internal(e: impl std::fmt::Display) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            e.to_string(),
        )
    }
}

impl IntoResponse for S3Error {
    fn into_response(self) -> Response {
        let body = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>{}</Code><Message>{}</Message></Error>",
            self.code,
            xml_escape(&self.message)
        );
        (
            self.status,
            [(header::CONTENT_TYPE, "application/xml")],
            body,
        )
            .into_response()
    }
}

/// An S3-style XML error answer (for errors raised outside the storage's routes).
pub(crate) fn s3_error(status: StatusCode, code: &'static str, message: &str) -> Response {
    S3Error::new(status, code, message).into_response()
}

fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}
