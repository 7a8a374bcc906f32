//! `svc webhooks verify` and `svc webhooks listen`: check webhook deliveries of the
//! notification service (HMAC-SHA256 over `timestamp.body`, ±5 minutes by default).
//!
//! The signing secret comes from `--secret` or `SVC_WEBHOOK_SECRET`; several `--secret`s
//! are accepted during a rotation.
//!
//! `listen` serves HTTP/1.1 with the read timeouts of the emulator's servers (a request
//! head within 10 s or the connection is closed; a body silent for 10 s is answered 408
//! and its connection closed), a whole request (head and body) within 30 s (else 408 and
//! the connection closed, however steadily its bytes trickle in) and at most 256
//! connections at once, so that clients trickling bytes cannot hold every file
//! descriptor while valid deliveries wait. An
//! event whose id it printed before is printed again with `"duplicate": true`.
//!
//! `svc webhooks endpoints list|create|update|delete|missed`: the organization's webhook
//! endpoints, with the client of the environment (as `svc containers`). `create` prints
//! the new endpoint *with* its signing secret (the only time it is printed unasked);
//! `list` and `update` leave the secret out unless `--show-secrets` is given. The API
//! secret is never printed.

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use clap::{ArgGroup, Args, Subcommand};
use futures::StreamExt;
use http_body_util::{BodyExt as _, Full};
use hyper::body::{Body as _, Incoming};
use hyper::header::{CONNECTION, HeaderValue};
use hyper::service::service_fn;
use hyper::{HeaderMap, Request, Response, StatusCode};
use serde_json::Value;
use svc_core::cloud::{
    CreateWebhookEndpointRequest, EventType, UpdateWebhookEndpointRequest, WebhookEndpoint,
};
use svc_core::webhook::{Webhook, WebhookError, unix_now};
use svc_core::{Metadata, WebhookSecret};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use uuid::Uuid;

use crate::exit::Failure;
use crate::resources::{
    ListArgs, ObjectOutput, client, parse_id, print_object, print_stream, to_json,
};

#[derive(Args, Debug)]
pub struct WebhooksArgs {
    #[command(subcommand)]
    command: WebhooksCommand,
}

#[derive(Subcommand, Debug)]
enum WebhooksCommand {
    /// Verify one delivery: exit 0 when valid (the event is printed), 1 when not (the
    /// reason is printed on stderr).
    Verify {
        #[command(flatten)]
        secrets: Secrets,
        /// The `Svc-Timestamp` header.
        #[arg(long)]
        timestamp: String,
        /// The `Svc-Signature` header.
        #[arg(long)]
        signature: String,
        /// The raw body, from a file or `-` (stdin, the default).
        #[arg(default_value = "-")]
        body: PathBuf,
        /// Accept any timestamp (replaying a stored delivery).
        #[arg(long)]
        ignore_timestamp: bool,
    },
    /// Receive deliveries on 127.0.0.1:PORT: answer 200 to verified ones and print each
    /// event as one JSON line on stdout; answer 400 to the others (the reason on stderr).
    ///
    /// A delivery whose event id was printed before (the service retrying a delivery
    /// whose answer it did not get, or a replay) is answered 200 and printed again with
    /// `"duplicate": true` added to its JSON line (and a note on stderr); the ids of the
    /// last 10,000 events are remembered.
    ///
    /// Slow clients cannot hold the receiver: a request head must arrive within 10 s
    /// (else the connection is closed, which also ends idle kept-alive connections), a
    /// body that stops arriving for 10 s is answered 408 and its connection closed, a
    /// whole request (head and body) must arrive within 30 s (else 408 and the
    /// connection closed, even when its bytes keep trickling in), a body over 2 MiB is
    /// answered 413, and at most 256 connections are served at once (more wait to be
    /// accepted until one ends).
    Listen {
        #[command(flatten)]
        secrets: Secrets,
        /// The port to listen on (0: any; the address is printed on stderr).
        #[arg(long)]
        port: u16,
        #[command(flatten)]
        limits: ListenLimits,
    },
    /// The organization's webhook endpoints (notification service): list, create,
    /// update, delete, and the events an endpoint missed.
    #[command(subcommand)]
    Endpoints(EndpointsCommand),
}

#[derive(Subcommand, Debug)]
enum EndpointsCommand {
    /// Every webhook endpoint, one JSON object per line (JSON Lines), without the signing
    /// secrets unless --show-secrets is given.
    List {
        #[command(flatten)]
        list: ListArgs,
        /// Include each endpoint's signing secret (`secret`) in the output.
        #[arg(long)]
        show_secrets: bool,
    },
    /// Register an endpoint (enabled) and print it as JSON, INCLUDING ITS SIGNING SECRET
    /// (`secret`, `whsec_…`): keep it to verify deliveries (`svc webhooks verify
    /// --secret`, or SVC_WEBHOOK_SECRET).
    Create {
        /// The absolute http(s) URL that receives deliveries (POST, must answer 2xx).
        #[arg(long)]
        url: String,
        /// An event type to deliver; repeat for several. Known types: cloud:processing-ended,
        /// cloud:processing-progress, cloud:processing-error.
        #[arg(long = "event", required = true, num_args = 1, value_name = "TYPE")]
        events: Vec<String>,
        /// A metadata entry KEY=VALUE; repeat for several (at most 50 keys).
        #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = parse_entry)]
        metadata: Vec<(String, String)>,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Change an endpoint: URL, event types (the list given replaces the old one),
    /// enabled or disabled, metadata (the entries given replace the whole object). Prints
    /// the endpoint without its signing secret unless --show-secrets is given.
    #[command(group(ArgGroup::new("change").required(true).multiple(true)
        .args(["url", "events", "enable", "disable", "metadata"])))]
    Update {
        /// The endpoint's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        /// A new target URL.
        #[arg(long)]
        url: Option<String>,
        /// An event type to deliver (repeat for several); replaces the endpoint's list.
        #[arg(long = "event", num_args = 1, value_name = "TYPE")]
        events: Vec<String>,
        /// Enable the endpoint (deliveries resume).
        #[arg(long, conflicts_with = "disable")]
        enable: bool,
        /// Disable the endpoint (it receives nothing).
        #[arg(long)]
        disable: bool,
        /// A metadata entry KEY=VALUE (repeat for several); the entries given replace
        /// the endpoint's whole metadata.
        #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = parse_entry)]
        metadata: Vec<(String, String)>,
        /// Include the signing secret (`secret`) in the output.
        #[arg(long)]
        show_secrets: bool,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Delete an endpoint, immediately and irreversibly.
    Delete {
        /// The endpoint's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
    },
    /// The events that could not be delivered to an endpoint (the first delivery and its
    /// 10 retries failed), one JSON object per line.
    Missed {
        /// The endpoint's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        #[command(flatten)]
        list: ListArgs,
    },
}

/// How long `listen` waits for the parts of a request, and how many connections it
/// serves at once (hidden: the defaults are the documented behaviour; tests shorten
/// them).
#[derive(Args, Clone, Copy, Debug)]
struct ListenLimits {
    /// Milliseconds within which a request head must arrive.
    #[arg(long, default_value_t = 10_000, hide = true)]
    header_timeout_ms: u64,
    /// Milliseconds of silence allowed while a request body arrives.
    #[arg(long, default_value_t = 10_000, hide = true)]
    body_timeout_ms: u64,
    /// Milliseconds within which a whole request (head and body) must arrive; the body
    /// gets what the head left of it.
    #[arg(long, default_value_t = 30_000, hide = true)]
    request_timeout_ms: u64,
    /// Connections served at once; more wait to be accepted.
    #[arg(long, default_value_t = 256, hide = true)]
    max_connections: usize,
}

impl ListenLimits {
    /// At least a millisecond (hyper and tokio need a positive duration).
    fn header_timeout(self) -> Duration {
        Duration::from_millis(self.header_timeout_ms.max(1))
    }

    fn body_timeout(self) -> Duration {
        Duration::from_millis(self.body_timeout_ms.max(1))
    }

    /// How long a body may take in all, from the moment its head arrived: what the
    /// whole-request deadline leaves after the longest a head may take (hyper does not
    /// say when a head's first byte came), so that head and body together never take
    /// longer than `request_timeout_ms`.
    fn body_deadline(self) -> Duration {
        Duration::from_millis(
            self.request_timeout_ms
                .saturating_sub(self.header_timeout_ms)
                .max(1),
        )
    }
}

#[derive(Args)]
struct Secrets {
    /// The endpoint's signing secret (`whsec_…`); repeat it during a rotation.
    #[arg(
        long = "secret",
        env = "SVC_WEBHOOK_SECRET",
        required = true,
        num_args = 1
    )]
    secrets: Vec<String>,
    /// How far the timestamp may be from now, in seconds.
    #[arg(long, default_value_t = 300)]
    tolerance_seconds: u64,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field(
                "secrets",
                &format_args!("{} [redacted]", self.secrets.len()),
            )
            .field("tolerance_seconds", &self.tolerance_seconds)
            .finish()
    }
}

impl Secrets {
    fn webhook(&self) -> Result<Webhook, Failure> {
        let secrets = self
            .secrets
            .iter()
            .map(|s| WebhookSecret::new(s.as_str()))
            .collect();
        Webhook::with_secrets(secrets)
            .map(|w| w.with_tolerance(Duration::from_secs(self.tolerance_seconds)))
            .map_err(|e| Failure::usage(e.to_string()))
    }
}

pub async fn run(args: WebhooksArgs) -> ExitCode {
    let result = match args.command {
        WebhooksCommand::Verify {
            secrets,
            timestamp,
            signature,
            body,
            ignore_timestamp,
        } => verify(&secrets, &timestamp, &signature, &body, ignore_timestamp),
        WebhooksCommand::Listen {
            secrets,
            port,
            limits,
        } => listen(&secrets, port, limits).await,
        WebhooksCommand::Endpoints(command) => endpoints(command).await,
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report("svc webhooks"),
    }
}

fn verify(
    secrets: &Secrets,
    timestamp: &str,
    signature: &str,
    body: &PathBuf,
    ignore_timestamp: bool,
) -> Result<(), Failure> {
    let webhook = secrets.webhook()?;
    let bytes = if body.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::other(format!("reading stdin: {e}")))?;
        bytes
    } else {
        std::fs::read(body)
            .map_err(|e| Failure::other(format!("reading {}: {e}", body.display())))?
    };
    let verified = if ignore_timestamp {
        webhook.verify_parts_ignoring_timestamp(Some(timestamp), Some(signature), &bytes)
    } else {
        webhook.verify_parts(Some(timestamp), Some(signature), &bytes, unix_now())
    };
    match verified {
        // Printed as it came (one line), fields this SDK does not know included.
        Ok(_) => {
            let line: Value =
                serde_json::from_slice(&bytes).map_err(|e| Failure::other(e.to_string()))?;
            println!("{line}");
            Ok(())
        }
        // The delivery is authentic: printed as it came, with a note on stderr.
        Err(WebhookError::UntypedEvent { reason, raw }) => {
            eprintln!(
                "svc webhooks: the signature holds, but this SDK cannot read the event ({reason}); printed as received"
            );
            println!("{raw}");
            Ok(())
        }
        Err(e) => Err(Failure {
            code: crate::exit::FAILURE,
            message: format!("invalid delivery: {e}"),
        }),
    }
}

/// Longest delivery body `listen` reads (axum's default limit, which it had before).
const MAX_DELIVERY_BYTES: usize = 2 * 1024 * 1024;

/// How many event ids `listen` remembers to recognize a delivery received before.
const RECENT_IDS: usize = 10_000;

/// Longest event id remembered (a UUID has 36 characters; a longer one, from an event
/// this SDK cannot type, is not worth keeping 10,000 of).
const MAX_REMEMBERED_ID: usize = 256;

/// What `listen` shares between its connections.
struct Receiver {
    webhook: Webhook,
    recent: Mutex<RecentIds>,
}

/// The ids of the last events printed, oldest first out.
struct RecentIds {
    order: VecDeque<String>,
    ids: HashSet<String>,
    capacity: usize,
}

impl RecentIds {
    fn new(capacity: usize) -> Self {
        Self {
            order: VecDeque::new(),
            ids: HashSet::new(),
            capacity: capacity.max(1),
        }
    }

    /// Whether `id` is among the recent ids; remembers it (forgetting the oldest one
    /// when full) when it is not.
    fn seen_before(&mut self, id: &str) -> bool {
        if self.ids.contains(id) {
            return true;
        }
        if id.len() <= MAX_REMEMBERED_ID {
            if self.order.len() >= self.capacity
                && let Some(oldest) = self.order.pop_front()
            {
                self.ids.remove(&oldest);
            }
            self.order.push_back(id.to_owned());
            self.ids.insert(id.to_owned());
        }
        false
    }
}

impl Receiver {
    /// Verifies one delivery: the status to answer and the text of the answer.
    fn receive(&self, headers: &HeaderMap, body: &[u8]) -> (StatusCode, String) {
        match self.webhook.verify(headers, body) {
            // Printed as it came (one line), fields this SDK does not know included.
            Ok(_) => match serde_json::from_slice::<Value>(body) {
                Ok(line) => {
                    self.print(line);
                    (StatusCode::OK, String::new())
                }
                Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
            },
            // Authentic but not typeable: refusing it would only make the service retry
            // it ten times and then record it as missed. It is printed as it came.
            Err(WebhookError::UntypedEvent { reason, raw }) => {
                eprintln!(
                    "svc webhooks: accepted a signed delivery this SDK cannot read ({reason}); printed as received"
                );
                self.print(*raw);
                (StatusCode::OK, String::new())
            }
            Err(e) => {
                eprintln!("svc webhooks: refused a delivery: {e}");
                (StatusCode::BAD_REQUEST, format!("{e}\n"))
            }
        }
    }

    /// Prints an authentic event as one line, with `"duplicate": true` added when an
    /// event of the same id was printed before.
    fn print(&self, mut line: Value) {
        let id = line
            .get("id")
            .and_then(|id| match id {
                Value::String(text) => Some(text.clone()),
                Value::Number(number) => Some(number.to_string()),
                _ => None,
            })
            .filter(|id| !id.is_empty());
        if let Some(id) = id {
            let duplicate = self
                .recent
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .seen_before(&id);
            if duplicate && let Value::Object(fields) = &mut line {
                fields.insert("duplicate".to_owned(), Value::Bool(true));
                eprintln!(
                    "svc webhooks: event {id} was received before (a retry or a replay); printed again with \"duplicate\": true"
                );
            }
        }
        println!("{line}");
    }
}

async fn listen(secrets: &Secrets, port: u16, limits: ListenLimits) -> Result<(), Failure> {
    let receiver = Arc::new(Receiver {
        webhook: secrets.webhook()?,
        recent: Mutex::new(RecentIds::new(RECENT_IDS)),
    });
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| Failure::other(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let address = listener
        .local_addr()
        .map_err(|e| Failure::other(e.to_string()))?;
    eprintln!("svc webhooks: listening on http://{address} (Ctrl-C to stop)");
    serve_deliveries(
        listener,
        receiver,
        limits,
        svc_emulator::cli::wait_for_signal(),
    )
    .await;
    Ok(())
}

/// The accept loop of `listen` (the emulator's servers' own): at most
/// `limits.max_connections` connections at once — the next one is accepted once one
/// ends, the others wait in the system's queue — until `shutdown`; open connections
/// then have 5 s to end.
async fn serve_deliveries(
    listener: TcpListener,
    receiver: Arc<Receiver>,
    limits: ListenLimits,
    shutdown: impl Future<Output = ()>,
) {
    let (stop_sender, stop) = watch::channel(false);
    let connection_stop = stop.clone();
    let server = svc_emulator::accept(
        listener,
        stop,
        Duration::from_secs(5),
        Some(limits.max_connections),
        |stream| {
            let _ = stream.set_nodelay(true);
            Some(connection(
                stream,
                receiver.clone(),
                limits,
                connection_stop.clone(),
            ))
        },
    );
    let mut server = std::pin::pin!(server);
    tokio::select! {
        () = server.as_mut() => return,
        () = shutdown => {}
    }
    let _ = stop_sender.send(true);
    server.await;
}

/// One connection, HTTP/1.1 under the header read timeout (hyper's timer: the head of
/// each request, the first one and those after it on a kept-alive connection, must be
/// complete in time, else the connection is closed).
async fn connection(
    stream: TcpStream,
    receiver: Arc<Receiver>,
    limits: ListenLimits,
    mut stop: watch::Receiver<bool>,
) {
    let service = service_fn(move |request: Request<Incoming>| {
        let receiver = receiver.clone();
        async move { Ok::<_, Infallible>(delivery(&receiver, request, limits).await) }
    });
    svc_emulator::serve_http1(stream, service, limits.header_timeout(), async move {
        let _ = stop.wait_for(|stopped| *stopped).await;
    })
    .await;
}

/// Why a delivery's body could not be read.
enum BodyFailure {
    /// Nothing arrived for the body timeout.
    Stalled,
    /// The whole request took longer than its deadline.
    Late,
    /// Longer than [`MAX_DELIVERY_BYTES`].
    TooLarge,
    /// The connection failed while it was read.
    Broken(String),
}

/// Reads a body whole, giving up when nothing arrives for `idle` (restarted by every
/// piece), when it is not all there by `deadline`, or when it grows too large.
async fn read_body(
    mut body: Incoming,
    idle: Duration,
    deadline: tokio::time::Instant,
) -> Result<Bytes, BodyFailure> {
    if body
        .size_hint()
        .exact()
        .is_some_and(|length| length > MAX_DELIVERY_BYTES as u64)
    {
        return Err(BodyFailure::TooLarge);
    }
    let mut bytes = BytesMut::new();
    loop {
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Err(BodyFailure::Late);
        }
        let late = deadline - now < idle;
        let frame = match tokio::time::timeout(idle.min(deadline - now), body.frame()).await {
            Err(_) if late => return Err(BodyFailure::Late),
            Err(_) => return Err(BodyFailure::Stalled),
            Ok(None) => return Ok(bytes.freeze()),
            Ok(Some(Err(e))) => return Err(BodyFailure::Broken(e.to_string())),
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > MAX_DELIVERY_BYTES {
                return Err(BodyFailure::TooLarge);
            }
            bytes.extend_from_slice(&data);
        }
    }
}

/// One request: its body read under the idle timeout, then verified and printed.
async fn delivery(
    receiver: &Receiver,
    request: Request<Incoming>,
    limits: ListenLimits,
) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body_timeout = limits.body_timeout();
    let deadline = tokio::time::Instant::now() + limits.body_deadline();
    let (status, text, close) = match read_body(body, body_timeout, deadline).await {
        Ok(body) => {
            let (status, text) = receiver.receive(&parts.headers, &body);
            (status, text, false)
        }
        Err(BodyFailure::Stalled) => (
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request body stopped arriving for {} ms; the connection is closed\n",
                body_timeout.as_millis()
            ),
            true,
        ),
        Err(BodyFailure::Late) => (
            StatusCode::REQUEST_TIMEOUT,
            format!(
                "the request did not arrive whole within {} ms; the connection is closed\n",
                limits.request_timeout_ms
            ),
            true,
        ),
        Err(BodyFailure::TooLarge) => (
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("a delivery body is at most {MAX_DELIVERY_BYTES} bytes\n"),
            true,
        ),
        Err(BodyFailure::Broken(reason)) => (
            StatusCode::BAD_REQUEST,
            format!("the request body could not be read: {reason}\n"),
            true,
        ),
    };
    let mut response = Response::new(Full::new(Bytes::from(text)));
    *response.status_mut() = status;
    if close {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

async fn endpoints(command: EndpointsCommand) -> Result<(), Failure> {
    match command {
        EndpointsCommand::List { list, show_secrets } => {
            let client = client(Some(list.page_size))?;
            print_stream(
                client
                    .list_webhook_endpoints()
                    .map(move |r| {
                        r.map_err(Failure::from)
                            .and_then(|e| endpoint_json(&e, show_secrets))
                    })
                    .boxed(),
            )
            .await
        }
        EndpointsCommand::Create {
            url,
            events,
            metadata,
            output,
        } => {
            let request = CreateWebhookEndpointRequest {
                enabled_event_types: event_types(events),
                metadata: metadata_of(metadata)?,
                url,
            };
            let endpoint = client(None)?.create_webhook_endpoint(request).await?;
            print_object(&endpoint_json(&endpoint, true)?, &output)
        }
        EndpointsCommand::Update {
            id,
            url,
            events,
            enable,
            disable,
            metadata,
            show_secrets,
            output,
        } => {
            let request = UpdateWebhookEndpointRequest {
                enabled: match (enable, disable) {
                    (true, _) => Some(true),
                    (_, true) => Some(false),
                    _ => None,
                },
                enabled_event_types: event_types(events),
                metadata: metadata_of(metadata)?,
                url,
            };
            let endpoint = client(None)?.update_webhook_endpoint(id, request).await?;
            print_object(&endpoint_json(&endpoint, show_secrets)?, &output)
        }
        EndpointsCommand::Delete { id } => {
            client(None)?.delete_webhook_endpoint(id).await?;
            eprintln!("svc webhooks: deleted webhook endpoint {id}");
            Ok(())
        }
        EndpointsCommand::Missed { id, list } => {
            let client = client(Some(list.page_size))?;
            print_stream(
                client
                    .list_missed_webhooks(id)
                    .map(|r| r.map_err(Failure::from).and_then(|m| to_json!(&m)))
                    .boxed(),
            )
            .await
        }
    }
}

/// An endpoint as JSON, with its signing secret only when asked for.
fn endpoint_json(endpoint: &WebhookEndpoint, with_secret: bool) -> Result<Value, Failure> {
    let mut value = to_json!(endpoint)?;
    if !with_secret && let Value::Object(fields) = &mut value {
        fields.shift_remove("secret");
    }
    Ok(value)
}

fn event_types(events: Vec<String>) -> Vec<EventType> {
    events.into_iter().map(EventType::from).collect()
}

/// `KEY=VALUE` (split at the first `=`; the key must not be empty).
fn parse_entry(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((key, value)) if !key.is_empty() => Ok((key.to_owned(), value.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got {text:?}")),
    }
}

/// The metadata object of `--metadata` entries (`None` without any); a key given twice
/// is a usage error.
fn metadata_of(entries: Vec<(String, String)>) -> Result<Option<Metadata>, Failure> {
    if entries.is_empty() {
        return Ok(None);
    }
    let mut metadata = Metadata::new();
    for (key, value) in entries {
        if metadata.insert(key.clone(), value).is_some() {
            return Err(Failure::usage(format!("--metadata {key:?} is given twice")));
        }
    }
    Ok(Some(metadata))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_ids_are_bounded() {
        let mut recent = RecentIds::new(3);
        for id in ["a", "b", "c"] {
            assert!(!recent.seen_before(id));
        }
        assert!(recent.seen_before("a"));
        // A fourth id pushes the oldest one out.
        assert!(!recent.seen_before("d"));
        assert!(!recent.seen_before("a"));
        assert!(recent.seen_before("d"));
        assert_eq!(recent.order.len(), 3);
        assert_eq!(recent.ids.len(), 3);
        // An id too long to keep is never remembered.
        let long = "x".repeat(MAX_REMEMBERED_ID + 1);
        assert!(!recent.seen_before(&long));
        assert!(!recent.seen_before(&long));
    }
}
