//! The notification service: webhook endpoints per organization, and the deliveries.
//!
//! Each processing update raises the event types of `openapi/notification.yaml` ("Events");
//! each enabled endpoint of the organization that subscribed to a type gets one POST of a
//! `WebhookEvent`, signed with `Svc-Timestamp` (send time, whole seconds) and
//! `Svc-Signature` (lowercase hex HMAC-SHA256 keyed with the endpoint secret over
//! `timestamp.body`). A delivery fails on a non-2xx answer, a connection error or no answer
//! within the timeout; it is retried up to 10 times with doubling delays from the
//! configured base (capped); after the 10th failed retry a MissedWebhook is recorded.
//! Disabled endpoints receive nothing.

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery};
use axum::response::Response;
use axum::routing::{get, patch};
use serde_json::Value;
use svc_cloud_api::cloud::types::Processing;
use svc_cloud_api::enums::EventType;
use svc_cloud_api::notification::types::{
    CreateWebhookEndpointRequest, MissedWebhook, UpdateWebhookEndpointRequest, WebhookEndpoint,
    WebhookEvent,
};
use svc_cloud_api::{Metadata, WebhookSecret};
use uuid::Uuid;

use crate::http::{
    Api, ApiError, ApiResult, Authorized, InOrganization, check_enum, check_metadata_value, ok,
    page_of, paging, parse_body, uuid_segment,
};
use crate::idp::SCOPE_NOTIFICATION;
use crate::state::{App, Caller, Db, EndpointRecord, event_types_for, now, random_hex};

/// Retries after the first delivery (the specification: up to 10).
pub const MAX_RETRIES: u32 = 10;

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(
            "/api/v2/organizations/{org}/webhook-endpoints",
            get(list_endpoints).post(create_endpoint),
        )
        .route(
            "/api/v2/webhook-endpoints/{id}",
            patch(update_endpoint).delete(delete_endpoint),
        )
        .route(
            "/api/v2/webhook-endpoints/{id}/missed-webhooks",
            get(list_missed),
        )
        .fallback(|| async { ApiError::new(axum::http::StatusCode::NOT_FOUND, "no such route") })
        .with_state(app)
}

/// The notification service's routes: tokens with the `notification` scope.
pub struct NotificationApi;

impl Api for NotificationApi {
    const SCOPE: &'static str = SCOPE_NOTIFICATION;
}

/// The caller of a route.
type Notification = Authorized<NotificationApi>;
/// The caller of an organization-scoped route, and the organization.
type NotificationOrg = InOrganization<NotificationApi>;

fn check_url(value: Option<&Value>) -> ApiResult<()> {
    match value {
        None => Ok(()),
        Some(Value::String(url)) => match reqwest::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Ok(()),
            _ => Err(ApiError::invalid(format!(
                "`url` must be an absolute http(s) URL, got `{url}`"
            ))),
        },
        Some(_) => Err(ApiError::bad_request("`url` must be a string")),
    }
}

fn check_event_types(value: Option<&Value>) -> ApiResult<()> {
    let Some(value) = value else { return Ok(()) };
    let Some(types) = value.as_array() else {
        return Err(ApiError::bad_request(
            "`enabledEventTypes` must be an array",
        ));
    };
    if types.is_empty() {
        return Err(ApiError::invalid(
            "`enabledEventTypes` must name at least one event type",
        ));
    }
    for (i, t) in types.iter().enumerate() {
        check_enum(
            Some(t),
            &format!("enabledEventTypes[{i}]"),
            EventType::KNOWN,
        )?;
    }
    Ok(())
}

async fn list_endpoints(
    InOrganization { app, org, .. }: NotificationOrg,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let (page, per_page) = paging(query.as_deref())?;
    let db = app.db();
    let all: Vec<WebhookEndpoint> = db
        .endpoints
        .values()
        .filter(|e| e.organization_id == org)
        .map(|e| e.endpoint.clone())
        .collect();
    Ok(ok(page_of(&all, page, per_page)))
}

async fn create_endpoint(
    InOrganization { app, org, .. }: NotificationOrg,
    body: Bytes,
) -> ApiResult<Response> {
    let request: CreateWebhookEndpointRequest = parse_body(&body, false, |v| {
        check_url(v.get("url"))?;
        check_event_types(v.get("enabledEventTypes"))?;
        check_metadata_value(v.get("metadata"), "metadata")
    })?;
    let endpoint = WebhookEndpoint {
        id: Uuid::new_v4(),
        url: Some(request.url),
        enabled_event_types: request.enabled_event_types,
        secret: Some(WebhookSecret::new(format!("whsec_{}", random_hex(32)))),
        enabled: Some(true),
        metadata: Some(request.metadata.unwrap_or_default()),
    };
    app.db().endpoints.insert(
        endpoint.id,
        EndpointRecord {
            organization_id: org,
            endpoint: endpoint.clone(),
        },
    );
    Ok(ok(vec![endpoint]))
}

fn own_endpoint<'a>(db: &'a Db, caller: &Caller, id: Uuid) -> ApiResult<&'a EndpointRecord> {
    db.endpoints
        .get(&id)
        .filter(|e| e.organization_id == caller.organization_id)
        .ok_or_else(|| ApiError::not_found("webhook endpoint", id))
}

async fn update_endpoint(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Notification,
    body: Bytes,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "webhook endpoint")?;
    let request: UpdateWebhookEndpointRequest = parse_body(&body, true, |v| {
        check_url(v.get("url"))?;
        check_event_types(v.get("enabledEventTypes"))?;
        if let Some(enabled) = v.get("enabled").filter(|e| !e.is_boolean()) {
            return Err(ApiError::bad_request(format!(
                "`enabled` must be a boolean, got {enabled}"
            )));
        }
        check_metadata_value(v.get("metadata"), "metadata")
    })?;
    let mut db = app.db();
    own_endpoint(&db, &caller, id)?;
    let record = db
        .endpoints
        .get_mut(&id)
        .ok_or_else(|| ApiError::not_found("webhook endpoint", id))?;
    let e = &mut record.endpoint;
    if let Some(url) = request.url {
        e.url = Some(url);
    }
    // An absent list decodes as empty; an empty one was refused above (422).
    if !request.enabled_event_types.is_empty() {
        e.enabled_event_types = request.enabled_event_types;
    }
    if let Some(metadata) = request.metadata {
        e.metadata = Some(metadata);
    }
    if let Some(enabled) = request.enabled {
        e.enabled = Some(enabled);
    }
    Ok(ok(vec![e.clone()]))
}

async fn delete_endpoint(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Notification,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "webhook endpoint")?;
    let mut db = app.db();
    own_endpoint(&db, &caller, id)?;
    db.endpoints.shift_remove(&id);
    db.missed.remove(&id);
    db.raised.remove(&id);
    Ok(ok(serde_json::json!({})))
}

async fn list_missed(
    Path(id): Path<String>,
    Authorized { app, caller, .. }: Notification,
    RawQuery(query): RawQuery,
) -> ApiResult<Response> {
    let id = uuid_segment(&id, "webhook endpoint")?;
    let (page, per_page) = paging(query.as_deref())?;
    let db = app.db();
    own_endpoint(&db, &caller, id)?;
    let missed = db
        .missed
        .get(&id)
        .map(|m| page_of(m, page, per_page))
        .unwrap_or_default();
    Ok(ok(missed))
}

// ---------------------------------------------------------------------------------------
// Deliveries

/// One delivery to make: the endpoint (as it was when the event was raised) and the event.
struct Delivery {
    endpoint_id: Uuid,
    url: String,
    secret: WebhookSecret,
    event: WebhookEvent,
}

/// Raises the events of a processing update and starts their deliveries.
pub fn publish(app: &Arc<App>, processing: &Processing, error_recorded: bool) {
    let types = event_types_for(processing, error_recorded);
    let deliveries: Vec<Delivery> = {
        let db = app.db();
        db.endpoints
            .values()
            .filter(|e| {
                Some(e.organization_id) == processing.organization_id
                    && e.endpoint.enabled == Some(true)
            })
            .flat_map(|e| {
                types
                    .iter()
                    .filter(|t| e.endpoint.enabled_event_types.contains(t))
                    .map(|t| Delivery {
                        endpoint_id: e.endpoint.id,
                        url: e
                            .endpoint
                            .url
                            .clone()
                            .expect("the emulator creates every endpoint with its URL"),
                        secret: e
                            .endpoint
                            .secret
                            .clone()
                            .expect("the emulator creates every endpoint with its secret"),
                        event: WebhookEvent {
                            id: Uuid::new_v4(),
                            event_type: t.clone(),
                            created_at: Some(now()),
                            endpoint_metadata: Some(
                                e.endpoint.metadata.clone().unwrap_or_else(Metadata::new),
                            ),
                            payload: processing.clone(),
                        },
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    };
    if !deliveries.is_empty() {
        // Every event raised, per endpoint: what a test checks its receiver got.
        let mut db = app.db();
        for d in &deliveries {
            db.raised.entry(d.endpoint_id).or_default().push(d.event.id);
        }
    }
    for delivery in deliveries {
        let app = app.clone();
        tokio::spawn(async move { deliver(app, delivery).await });
    }
}

async fn deliver(app: Arc<App>, delivery: Delivery) {
    let body = match serde_json::to_vec(&delivery.event) {
        Ok(body) => body,
        Err(_) => return,
    };
    let mut delay = app.config.webhook_retry_base;
    for attempt in 0..=MAX_RETRIES {
        if attempt > 0 {
            if !app.sleep(delay).await {
                return;
            }
            delay = (delay * 2).min(app.config.webhook_retry_cap);
        }
        // A deleted or disabled endpoint gets nothing more.
        let still_wanted = app
            .db()
            .endpoints
            .get(&delivery.endpoint_id)
            .is_some_and(|e| e.endpoint.enabled == Some(true));
        if !still_wanted {
            return;
        }
        // An injected outage of the notification service: its sender is down too, so
        // the attempt fails (and once the retries run out, the event is missed).
        let faults = &app.config.faults.handle;
        if faults.is_down(crate::faults::Service::Notification) {
            faults.delivery_failed_while_down();
            continue;
        }
        let timestamp = chrono::Utc::now().timestamp();
        let signature = svc_protocol::webhook::sign(&delivery.secret, timestamp, &body);
        let sent = app
            .http
            .post(&delivery.url)
            .header("content-type", "application/json")
            .header(
                svc_protocol::webhook::TIMESTAMP_HEADER,
                timestamp.to_string(),
            )
            .header(svc_protocol::webhook::SIGNATURE_HEADER, signature)
            .body(body.clone())
            .send()
            .await;
        if matches!(&sent, Ok(r) if r.status().is_success()) {
            return;
        }
    }
    let missed = MissedWebhook {
        id: delivery.event.id,
        event_type: delivery.event.event_type.clone(),
        payload: match serde_json::to_value(&delivery.event.payload) {
            Ok(Value::Object(map)) => map,
            _ => Default::default(),
        },
        // When the event was recorded as missed, after the last retry.
        created_at: Some(now()),
        endpoint_metadata: delivery.event.endpoint_metadata.clone(),
    };
    let mut db = app.db();
    if db.endpoints.contains_key(&delivery.endpoint_id) {
        db.missed
            .entry(delivery.endpoint_id)
            .or_default()
            .push(missed);
    }
}
