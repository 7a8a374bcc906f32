//! Serving the emulator's routers: HTTP/1.1 with read timeouts, and the documented error
//! body on every error answer.
//!
//! - **Header read timeout**: a connection whose request head is not complete within
//!   [`ReadTimeouts::header`] is closed (hyper's timer; it also bounds how long an idle
//!   keep-alive connection is kept).
//! - **Body read timeout**: a request body from which nothing arrives for
//!   [`ReadTimeouts::body`] (an idle timeout: a large upload that keeps coming is never
//!   cut) fails the route's read; the answer is then a 408 (S3's 400 `RequestTimeout`
//!   for the storage) in the server's error format, and the connection is closed.
//! - **Error bodies**: an error answer produced outside the routes' own code — axum's
//!   rejections (a body over the 2 MB limit: 413, a body that cannot be read), a
//!   method the path does not take (405), a route that does not exist — comes as plain
//!   text or empty; it is rewritten into the server's documented error body
//!   ([`ErrorFormat`]), keeping its status and its text as the explanation.
//! - **Connections**: nothing of a connection is kept once it has ended. The memory its
//!   buffers took stays with the allocator, though: glibc keeps freed memory in its
//!   per-thread arenas, so bursts of 10,000 simultaneous connections raise the resident
//!   memory over the first few bursts (from 133 to 217 MiB in one measurement), then no more, while
//!   the heap in use is back to 0.5 MiB after each burst.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::http::header::{ALLOW, CONNECTION, CONTENT_TYPE};
use axum::http::{HeaderValue, Method, Request, Response, StatusCode};
use axum::response::IntoResponse;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use serde_json::json;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;
use tower::ServiceExt as _;

/// How long a server waits for the parts of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadTimeouts {
    /// The whole request head (request line and headers) must arrive within this
    /// time; otherwise the connection is closed. It also bounds the wait for the next
    /// request on a kept-alive connection. Default 10 s.
    pub header: Duration,
    /// Silence allowed while a request body is read (restarted by every piece that
    /// arrives); after it the request is answered 408 and the connection closed.
    /// Default 10 s.
    pub body: Duration,
}

impl Default for ReadTimeouts {
    fn default() -> Self {
        Self {
            header: Duration::from_secs(10),
            body: Duration::from_secs(10),
        }
    }
}

impl ReadTimeouts {
    /// At least a millisecond each (hyper and tokio need a positive duration).
    pub(crate) fn positive(self) -> Self {
        let min = Duration::from_millis(1);
        Self {
            header: self.header.max(min),
            body: self.body.max(min),
        }
    }
}

/// The documented error body of a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorFormat {
    /// The cloud and notification services: `{title, details}` (schema `Error`).
    Cloud,
    /// The identity provider: `{error, error_description}` (RFC 6749 §5.2).
    OAuth,
    /// Object storage: S3's XML `<Error><Code/><Message/></Error>`.
    S3,
}

impl ErrorFormat {
    /// An error answer of this format.
    pub fn response(self, status: StatusCode, message: &str) -> Response<Body> {
        let message = if message.trim().is_empty() {
            status.canonical_reason().unwrap_or("Error").to_owned()
        } else {
            message.trim().to_owned()
        };
        match self {
            Self::Cloud => crate::api_error::ApiError::new(status, message).into_response(),
            Self::OAuth => {
                let error = if status.is_server_error() {
                    "server_error"
                } else {
                    "invalid_request"
                };
                (
                    status,
                    axum::Json(json!({"error": error, "error_description": message})),
                )
                    .into_response()
            }
            Self::S3 => {
                let code = match status {
                    StatusCode::REQUEST_TIMEOUT => "RequestTimeout",
                    StatusCode::NOT_FOUND => "NoSuchKey",
                    StatusCode::METHOD_NOT_ALLOWED => "MethodNotAllowed",
                    StatusCode::PAYLOAD_TOO_LARGE => "EntityTooLarge",
                    s if s.is_server_error() => "InternalError",
                    _ => "InvalidRequest",
                };
                // S3 answers an idle request body with 400 RequestTimeout.
                let status = if status == StatusCode::REQUEST_TIMEOUT {
                    StatusCode::BAD_REQUEST
                } else {
                    status
                };
                crate::storage::s3_error(status, code, &message)
            }
        }
    }

    /// Whether `content_type` is this format's.
    fn is_own(self, content_type: &str) -> bool {
        match self {
            Self::Cloud | Self::OAuth => content_type.starts_with("application/json"),
            Self::S3 => content_type.starts_with("application/xml"),
        }
    }
}

/// Serves `router` on `listener` until `stop` turns true (open connections are then
/// shut down gracefully, for at most 5 s).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    format: ErrorFormat,
    timeouts: ReadTimeouts,
    stop: watch::Receiver<bool>,
) {
    let timeouts = timeouts.positive();
    let connection_stop = stop.clone();
    accept(listener, stop, Duration::from_secs(5), None, |stream| {
        let _ = stream.set_nodelay(true);
        Some(connection(
            stream,
            router.clone(),
            format,
            timeouts,
            connection_stop.clone(),
        ))
    })
    .await;
}

/// The accept loop of every HTTP server of the emulator (and of `svc webhooks
/// listen`): each accepted connection is served by the task `serve` gives for it
/// (`None`: the connection is dropped), until `stop` turns true; open connections then
/// have `grace` to end before they are aborted. With `max_connections`, at most that
/// many are served at once: the next is accepted once one ends, the others wait in the
/// system's queue. A connection's task (and what it returns) is let go as soon as it
/// ends: nothing of a closed connection is kept.
pub async fn accept<F>(
    listener: TcpListener,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
    max_connections: Option<usize>,
    mut serve: impl FnMut(TcpStream) -> Option<F>,
) where
    F: Future + Send + 'static,
    F::Output: Send,
{
    let slots = max_connections.map(|n| Arc::new(Semaphore::new(n.max(1))));
    let mut connections = JoinSet::new();
    loop {
        let slot = match &slots {
            None => None,
            Some(slots) => tokio::select! {
                slot = slots.clone().acquire_owned() => slot.ok(),
                Some(_) = connections.join_next(), if !connections.is_empty() => continue,
                _ = stop.wait_for(|stopped| *stopped) => break,
            },
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            // An ended connection's task (its memory, about 1.4 KB) is released now, not
            // when the next connection arrives.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            _ = stop.wait_for(|stopped| *stopped) => break,
        };
        match accepted {
            Ok((stream, _)) => {
                if let Some(task) = serve(stream) {
                    connections.spawn(async move {
                        let ended = task.await;
                        drop(slot);
                        ended
                    });
                }
            }
            // Out of file descriptors and the like: wait a little, go on.
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    let _ = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.shutdown().await;
}

async fn connection(
    stream: tokio::net::TcpStream,
    router: Router,
    format: ErrorFormat,
    timeouts: ReadTimeouts,
    mut stop: watch::Receiver<bool>,
) {
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let router = router.clone();
        async move { Ok::<_, Infallible>(handle(router, request, format, timeouts.body).await) }
    });
    serve_http1(stream, service, timeouts.header, async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    })
    .await;
}

/// Serves one HTTP/1.1 connection with `service`: the request head must arrive within
/// `header_timeout` (else the connection is closed); when `stop` resolves, answers in
/// flight are finished (5 s at most) and the connection closed.
pub async fn serve_http1<S, B>(
    stream: TcpStream,
    service: S,
    header_timeout: Duration,
    stop: impl Future<Output = ()>,
) where
    S: hyper::service::HttpService<Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout);
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        () = stop => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = tokio::time::timeout(Duration::from_secs(5), conn).await;
}

/// One request through the router, its body under the idle timeout, its error answer
/// in the documented format.
async fn handle(
    router: Router,
    request: Request<Incoming>,
    format: ErrorFormat,
    body_timeout: Duration,
) -> Response<Body> {
    let timed_out = Arc::new(AtomicBool::new(false));
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let request =
        request.map(|body| Body::new(IdleBody::new(body, body_timeout, timed_out.clone())));
    let response = match router.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    if timed_out.load(Ordering::Relaxed) {
        let mut response = format.response(
            StatusCode::REQUEST_TIMEOUT,
            &format!(
                "the request body stopped arriving for {} ms; the connection is closed",
                body_timeout.as_millis()
            ),
        );
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
        return response;
    }
    documented(response, format, &method, &path).await
}

/// Longest error text kept from a response being rewritten.
const MAX_ERROR_TEXT: usize = 64 * 1024;

/// `response` with its error body in `format` when it is an error answer in another
/// format (axum's plain-text rejections, an empty 405).
async fn documented(
    response: Response<Body>,
    format: ErrorFormat,
    method: &Method,
    path: &str,
) -> Response<Body> {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let content_type = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if format.is_own(content_type) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, MAX_ERROR_TEXT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(_) => String::new(),
    };
    let text = match (status, text.trim().is_empty()) {
        (StatusCode::METHOD_NOT_ALLOWED, true) => {
            format!("the method {method} is not allowed on {path}")
        }
        (StatusCode::NOT_FOUND, true) => format!("nothing at {path}"),
        _ => text,
    };
    let mut rewritten = format.response(status, &text);
    for name in [ALLOW, CONNECTION] {
        if let Some(value) = parts.headers.get(&name) {
            rewritten.headers_mut().insert(name, value.clone());
        }
    }
    rewritten
}

/// A request body that fails when nothing arrives for `timeout` (an idle timeout,
/// restarted by every frame), and then sets its `timed_out` flag.
pub(crate) struct IdleBody {
    inner: Incoming,
    timeout: Duration,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    timed_out: Arc<AtomicBool>,
}

impl IdleBody {
    pub(crate) fn new(inner: Incoming, timeout: Duration, timed_out: Arc<AtomicBool>) -> Self {
        Self {
            inner,
            timeout: timeout.max(Duration::from_millis(1)),
            sleep: None,
            timed_out,
        }
    }
}

/// The error of a body read that timed out.
#[derive(Debug, thiserror::Error)]
#[error("the request body stopped arriving for {0:?}")]
struct BodyTimedOut(Duration);

impl hyper::body::Body for IdleBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            this.sleep = None;
            return Poll::Ready(frame.map(|f| f.map_err(Into::into)));
        }
        let timeout = this.timeout;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if sleep.as_mut().poll(cx).is_ready() {
            this.timed_out.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(Box::new(BodyTimedOut(timeout)))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each connection's task returns a clone of `held`: the accept loop lets it go when
    /// the connection ends, not when the next one arrives (10,000 closed connections
    /// kept 14 MB that way until a new one came).
    #[tokio::test]
    async fn an_ended_connection_is_let_go_before_the_next_arrives() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let (stop, stopped) = watch::channel(false);
        let held = Arc::new(());
        let accepted = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (given, counted) = (held.clone(), accepted.clone());
        let server = tokio::spawn(accept(
            listener,
            stopped,
            Duration::ZERO,
            None,
            move |stream| {
                counted.fetch_add(1, Ordering::SeqCst);
                let given = given.clone();
                Some(async move {
                    drop(stream);
                    given
                })
            },
        ));
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        let wait = |what: &str, done: &dyn Fn() -> bool| {
            assert!(tokio::time::Instant::now() < deadline, "{what}");
            !done()
        };
        for n in 1..=3 {
            let _client = TcpStream::connect(address).await.unwrap();
            while wait("a connection was not accepted", &|| {
                accepted.load(Ordering::SeqCst) == n
            }) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            // `held`, and the clone the accept loop's closure keeps: the task's is gone.
            while wait("an ended connection's task is still kept", &|| {
                Arc::strong_count(&held) == 2
            }) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        stop.send_replace(true);
        server.await.unwrap();
    }
}
