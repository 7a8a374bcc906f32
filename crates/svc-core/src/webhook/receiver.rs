//! Receiving deliveries in an axum service (cargo feature `axum`, on by default).

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRef, FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::{Webhook, WebhookError, WebhookEvent};

/// An axum extractor: a delivery whose signature and timestamp were verified with the
/// state's `Arc<Webhook>`, decoded into a [`WebhookEvent`].
///
/// It reads the whole body (within the router's body limit, axum's
/// `DefaultBodyLimit`) and calls [`Webhook::verify`]. A refused delivery is answered
/// with [`WebhookRejection`]: 400 and a short text reason for the sender's faults,
/// 500 when the receiver has no secret. An authentic delivery this SDK cannot type
/// ([`WebhookError::UntypedEvent`]) is answered 400 too, so that the service keeps it
/// (it retries, then lists it as a missed webhook); to take such deliveries' JSON at
/// once, call [`Webhook::verify`] in the handler instead. Being a body extractor, it
/// must be the last argument of the handler.
///
/// The state is either the `Arc<Webhook>` itself or your own state from which one can
/// be taken ([`FromRef`]):
///
/// ```no_run
/// use std::sync::Arc;
///
/// use axum::extract::FromRef;
/// use axum::http::StatusCode;
/// use axum::routing::post;
/// use axum::Router;
/// use svc_core::webhook::{EventType, VerifiedWebhook, Webhook};
/// use svc_core::WebhookSecret;
///
/// #[derive(Clone)]
/// struct AppState {
///     webhook: Arc<Webhook>,
///     // database pool, ...
/// }
///
/// impl FromRef<AppState> for Arc<Webhook> {
///     fn from_ref(state: &AppState) -> Self {
///         Arc::clone(&state.webhook)
///     }
/// }
///
/// async fn on_event(VerifiedWebhook(event): VerifiedWebhook) -> StatusCode {
///     match event.event_type {
///         EventType::CloudProcessingEnded => println!("processing {} ended", event.payload.id),
///         other => println!("{other} for processing {}", event.payload.id),
///     }
///     // Any 2xx acknowledges the delivery; anything else makes the service retry it.
///     StatusCode::NO_CONTENT
/// }
///
/// # async fn serve() -> std::io::Result<()> {
/// let secret = WebhookSecret::new(std::env::var("SVC_WEBHOOK_SECRET").unwrap_or_default());
/// let state = AppState { webhook: Arc::new(Webhook::new(secret)) };
/// let app = Router::new().route("/webhooks/svc", post(on_event)).with_state(state);
///
/// let listener = tokio::net::TcpListener::bind("0.0.0.0:8080").await?;
/// axum::serve(listener, app).await
/// # }
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedWebhook(pub WebhookEvent);

impl VerifiedWebhook {
    /// The verified event.
    #[must_use]
    pub fn into_inner(self) -> WebhookEvent {
        self.0
    }
}

impl<S> FromRequest<S> for VerifiedWebhook
where
    Arc<Webhook>: FromRef<S>,
    S: Send + Sync,
{
    type Rejection = WebhookRejection;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let webhook = Arc::<Webhook>::from_ref(state);
        let headers = request.headers().clone();
        let body = Bytes::from_request(request, state).await?;
        Ok(Self(webhook.verify(&headers, &body)?))
    }
}

/// Why [`VerifiedWebhook`] refused a request; as a response, a status and a short
/// plain-text reason (never a secret nor the body).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WebhookRejection {
    /// The delivery did not verify: 400, except [`WebhookError::NoSecret`] (the
    /// receiver's configuration): 500.
    #[error(transparent)]
    Verification(#[from] WebhookError),
    /// The body could not be read: axum's own answer (413 when it is over the body
    /// limit, 400 otherwise).
    #[error(transparent)]
    Body(#[from] BytesRejection),
}

impl WebhookRejection {
    /// What kind of failure this is: the verification's
    /// ([`WebhookError::kind`]) for a delivery that does not verify;
    /// [`InvalidInput`](crate::ErrorKind::InvalidInput) for a body over the router's
    /// limit (413), [`Unreachable`](crate::ErrorKind::Unreachable) for one that could
    /// not be read (the connection broke).
    #[must_use]
    pub fn kind(&self) -> crate::ErrorKind {
        match self {
            Self::Verification(error) => error.kind(),
            Self::Body(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                crate::ErrorKind::InvalidInput
            }
            Self::Body(_) => crate::ErrorKind::Unreachable,
        }
    }
}

impl IntoResponse for WebhookRejection {
    fn into_response(self) -> Response {
        match self {
            Self::Verification(error @ WebhookError::NoSecret) => {
                (StatusCode::INTERNAL_SERVER_ERROR, error.to_string()).into_response()
            }
            Self::Verification(error) => {
                (StatusCode::BAD_REQUEST, error.to_string()).into_response()
            }
            Self::Body(rejection) => rejection.into_response(),
        }
    }
}
