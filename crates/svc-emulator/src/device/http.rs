//! The HTTP transport: a hyper HTTP/1.1 server handing every request to
//! [`Unit::handle`].
//!
//! Reboot: when the unit reboots, every open connection is shut down gracefully (the
//! answer in flight, the reboot's own `200`, is sent first; idle keep-alive
//! connections close at once). While the unit reboots, a new connection is accepted
//! and closed at once without an answer, and a request that still reaches the unit
//! gets no answer either (hyper closes the connection): clients see a failed request
//! ("connection closed"), never an HTTP status. The listener itself stays bound, so
//! the port cannot be taken by someone else meanwhile.
//!
//! Read timeouts ([`ReadTimeouts`]): a connection whose request head does not arrive
//! in time is closed; a body that stops arriving is answered 408 with the unit's error
//! body, and the connection closed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{ALLOW, CONNECTION, CONTENT_DISPOSITION, CONTENT_TYPE, HeaderValue};
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use super::unit::{Outcome, Unit};
use crate::server::{IdleBody, ReadTimeouts, serve_http1};

/// Largest request body accepted (a whole settings tree is about 20 KB).
const MAX_BODY: usize = 4 << 20;

/// The unit does not answer (it is rebooting): hyper closes the connection.
#[derive(Debug, thiserror::Error)]
#[error("the unit is rebooting")]
struct Rebooting;

/// Serves HTTP on `listener` until `stop` turns true.
pub async fn serve(
    listener: TcpListener,
    unit: Arc<Unit>,
    timeouts: ReadTimeouts,
    latency: Duration,
    stop: watch::Receiver<bool>,
) {
    let timeouts = timeouts.positive();
    let connection_stop = stop.clone();
    // Connections end with `stop` themselves: no grace needed.
    crate::server::accept(listener, stop, Duration::ZERO, None, |stream| {
        // A rebooting unit does not answer: the connection is dropped.
        (!unit.is_booting()).then(|| {
            connection(
                stream,
                unit.clone(),
                timeouts,
                latency,
                connection_stop.clone(),
            )
        })
    })
    .await;
}

async fn connection(
    stream: TcpStream,
    unit: Arc<Unit>,
    timeouts: ReadTimeouts,
    latency: Duration,
    mut stop: watch::Receiver<bool>,
) {
    let mut boots = unit.boots();
    boots.borrow_and_update();
    let service_unit = unit.clone();
    let service =
        service_fn(move |request| respond(service_unit.clone(), request, timeouts.body, latency));
    // A reboot closes the connection (after the answer in flight), as the emulator's
    // stop does.
    let ended = async move {
        tokio::select! {
            _ = stop.wait_for(|stopped| *stopped) => {}
            _ = boots.changed() => {}
        }
    };
    serve_http1(stream, service, timeouts.header, ended).await;
}

async fn respond(
    unit: Arc<Unit>,
    request: Request<Incoming>,
    body_timeout: Duration,
    latency: Duration,
) -> Result<Response<Full<Bytes>>, Rebooting> {
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    let (parts, body) = request.into_parts();
    let timed_out = Arc::new(AtomicBool::new(false));
    let body = IdleBody::new(body, body_timeout, timed_out.clone());
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(_) if timed_out.load(Ordering::Relaxed) => {
            let detail = serde_json::json!({
                "status": 408,
                "title": "Request Timeout",
                "detail": format!(
                    "the request body stopped arriving for {} ms; the connection is closed",
                    body_timeout.as_millis()
                ),
            });
            let mut response = json_response(408, detail.to_string().into_bytes(), None);
            response
                .headers_mut()
                .insert(CONNECTION, HeaderValue::from_static("close"));
            return Ok(response);
        }
        Err(e) => {
            let detail = serde_json::json!({
                "status": 400,
                "title": "Bad Request",
                "detail": format!("the body could not be read: {e}"),
            });
            return Ok(json_response(400, detail.to_string().into_bytes(), None));
        }
    };
    let path = parts.uri.path();
    let query = parts.uri.query().unwrap_or("");
    match unit.handle(parts.method.as_str(), path, query, &body) {
        Outcome::Reply(reply) => {
            let status = reply.status;
            let mut response = json_response(status, reply.body, reply.attachment);
            // A 405 says what the resource answers (RFC 9110).
            if status == 405
                && let Ok(allowed) = HeaderValue::from_str(&unit.allowed_methods(path))
            {
                response.headers_mut().insert(ALLOW, allowed);
            }
            Ok(response)
        }
        Outcome::Silent => Err(Rebooting),
    }
}

fn json_response(status: u16, body: Vec<u8>, attachment: Option<&str>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(Bytes::from(body)));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(name) = attachment
        && let Ok(value) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\""))
    {
        response.headers_mut().insert(CONTENT_DISPOSITION, value);
    }
    response
}
