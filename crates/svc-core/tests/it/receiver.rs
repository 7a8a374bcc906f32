//! The axum extractor, behind a real server on 127.0.0.1:0, called with reqwest.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::routing::post;
use reqwest::StatusCode;
use svc_core::WebhookSecret;
use svc_core::webhook::{
    SIGNATURE_HEADER, TIMESTAMP_HEADER, VerifiedWebhook, Webhook, WebhookRejection, sign, unix_now,
};

use crate::{OTHER_SECRET, PROGRESS_BODY, SECRET};

async fn on_event(VerifiedWebhook(event): VerifiedWebhook) -> String {
    format!(
        "{} {} {}",
        event.event_type, event.payload.id, event.payload.status
    )
}

/// Serves `app` on an ephemeral port; the listener is bound before this returns, so
/// requests queue until the server task runs (no waiting needed).
async fn serve(app: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    address
}

async fn server_with(webhook: Webhook) -> SocketAddr {
    serve(
        Router::new()
            .route("/webhooks", post(on_event))
            .with_state(Arc::new(webhook)),
    )
    .await
}

struct Delivery {
    timestamp: Option<String>,
    signature: Option<String>,
    body: Vec<u8>,
}

impl Delivery {
    fn signed(secret: &str, timestamp: i64, body: &str) -> Self {
        Self {
            timestamp: Some(timestamp.to_string()),
            signature: Some(sign(
                &WebhookSecret::new(secret),
                timestamp,
                body.as_bytes(),
            )),
            body: body.as_bytes().to_vec(),
        }
    }

    async fn post(self, address: SocketAddr) -> (StatusCode, String) {
        let mut request = reqwest::Client::new()
            .post(format!("http://{address}/webhooks"))
            .header("content-type", "application/json")
            .body(self.body);
        if let Some(timestamp) = self.timestamp {
            request = request.header(TIMESTAMP_HEADER, timestamp);
        }
        if let Some(signature) = self.signature {
            request = request.header(SIGNATURE_HEADER, signature);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        (status, response.text().await.unwrap())
    }
}

#[tokio::test]
async fn a_signed_delivery_reaches_the_handler() {
    let address = server_with(Webhook::new(SECRET.into())).await;
    let (status, text) = Delivery::signed(SECRET, unix_now(), PROGRESS_BODY)
        .post(address)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        text,
        "cloud:processing-progress 6f1c2a4e-8b3d-4c1e-9a7f-2d5e8b1c3a90 processing"
    );
}

#[tokio::test]
async fn refused_deliveries_get_400_and_a_short_reason() {
    let address = server_with(Webhook::new(SECRET.into())).await;
    let now = unix_now();

    let (status, text) = Delivery::signed(OTHER_SECRET, now, PROGRESS_BODY)
        .post(address)
        .await;
    assert_eq!(
        (status, text.as_str()),
        (
            StatusCode::BAD_REQUEST,
            "the Svc-Signature header does not match the delivery with any configured secret"
        )
    );

    let mut missing = Delivery::signed(SECRET, now, PROGRESS_BODY);
    missing.signature = None;
    let (status, text) = missing.post(address).await;
    assert_eq!(
        (status, text.as_str()),
        (
            StatusCode::BAD_REQUEST,
            "the Svc-Signature header is missing"
        )
    );

    let (status, text) = Delivery::signed(SECRET, now - 600, PROGRESS_BODY)
        .post(address)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(text.starts_with("the delivery was signed 60"), "{text}");

    let (status, text) = Delivery::signed(SECRET, now, r#"{"hello":"world"}"#)
        .post(address)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        text.starts_with(
            "the signed body is a webhook event this SDK cannot read: eventType: missing"
        ),
        "{text}"
    );
}

#[tokio::test]
async fn rotation_over_http() {
    let webhook = Webhook::with_secrets(vec![
        WebhookSecret::new(OTHER_SECRET),
        WebhookSecret::new(SECRET),
    ])
    .unwrap();
    let address = server_with(webhook).await;
    for secret in [SECRET, OTHER_SECRET] {
        let (status, _) = Delivery::signed(secret, unix_now(), PROGRESS_BODY)
            .post(address)
            .await;
        assert_eq!(status, StatusCode::OK);
    }
}

#[tokio::test]
async fn a_receiver_without_secret_answers_500() {
    let address = server_with(Webhook::new(WebhookSecret::new(""))).await;
    let (status, text) = Delivery::signed("", unix_now(), PROGRESS_BODY)
        .post(address)
        .await;
    assert_eq!(
        (status, text.as_str()),
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            "no webhook secret is configured"
        )
    );
}

#[tokio::test]
async fn the_webhook_can_come_from_an_application_state() {
    #[derive(Clone)]
    struct AppState {
        webhook: Arc<Webhook>,
        greeting: &'static str,
    }
    impl FromRef<AppState> for Arc<Webhook> {
        fn from_ref(state: &AppState) -> Self {
            Arc::clone(&state.webhook)
        }
    }
    async fn handler(
        axum::extract::State(state): axum::extract::State<AppState>,
        VerifiedWebhook(event): VerifiedWebhook,
    ) -> String {
        format!("{} {}", state.greeting, event.id)
    }
    let state = AppState {
        webhook: Arc::new(Webhook::new(SECRET.into())),
        greeting: "got",
    };
    let address = serve(
        Router::new()
            .route("/webhooks", post(handler))
            .with_state(state),
    )
    .await;
    let (status, text) = Delivery::signed(SECRET, unix_now(), PROGRESS_BODY)
        .post(address)
        .await;
    assert_eq!(
        (status, text.as_str()),
        (StatusCode::OK, "got 2e4f6a8c-1b3d-4e5f-9a7b-c8d9e0f1a2b3")
    );
}

#[tokio::test]
async fn a_body_over_the_router_limit_gets_413() {
    let app = Router::new()
        .route("/webhooks", post(on_event))
        .layer(DefaultBodyLimit::max(256))
        .with_state(Arc::new(Webhook::new(SECRET.into())));
    let address = serve(app).await;
    let (status, _) = Delivery::signed(SECRET, unix_now(), PROGRESS_BODY)
        .post(address)
        .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn a_handler_taking_the_rejection_reads_its_kind() {
    async fn kind_of(result: Result<VerifiedWebhook, WebhookRejection>) -> String {
        match result {
            Ok(_) => "verified".to_owned(),
            Err(rejection) => rejection.kind().as_str().to_owned(),
        }
    }
    let app = |webhook: Webhook| {
        Router::new()
            .route("/webhooks", post(kind_of))
            .layer(DefaultBodyLimit::max(1024))
            .with_state(Arc::new(webhook))
    };
    let address = serve(app(Webhook::new(SECRET.into()))).await;
    let now = unix_now();
    let mut oversized = Delivery::signed(SECRET, now, PROGRESS_BODY);
    oversized.body = vec![b' '; 4096];
    for (delivery, expected) in [
        (Delivery::signed(SECRET, now, PROGRESS_BODY), "verified"),
        (
            Delivery::signed(OTHER_SECRET, now, PROGRESS_BODY),
            "verification",
        ),
        (
            Delivery::signed(SECRET, now - 3600, PROGRESS_BODY),
            "verification",
        ),
        (oversized, "invalid_input"),
    ] {
        let (status, text) = delivery.post(address).await;
        assert_eq!((status, text.as_str()), (StatusCode::OK, expected));
    }
    let without_secret = serve(app(Webhook::new(WebhookSecret::new("")))).await;
    let (_, text) = Delivery::signed(SECRET, now, PROGRESS_BODY)
        .post(without_secret)
        .await;
    assert_eq!(text, "invalid_input");
}
