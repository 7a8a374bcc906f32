//! `svc webhooks verify` and `svc webhooks listen`: check webhook deliveries of the
//! notification service (HMAC-SHA256 over `timestamp.body`, ±5 minutes by default).
//!
//! The signing secret comes from `--secret` or `SVC_WEBHOOK_SECRET`; several `--secret`s
//! are accepted during a rotation.
//!
//! `svc webhooks endpoints list|create|update|delete|missed`: the organization's webhook
//! endpoints, with the client of the environment (as `svc containers`). `create` prints
//! the new endpoint *with* its signing secret (the only time it is printed unasked);
//! `list` and `update` leave the secret out unless `--show-secrets` is given. The API
//! secret is never printed.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use clap::{ArgGroup, Args, Subcommand};
use futures::StreamExt;
use serde_json::Value;
use svc_core::cloud::{
    CreateWebhookEndpointRequest, EventType, UpdateWebhookEndpointRequest, WebhookEndpoint,
};
use svc_core::webhook::{Webhook, WebhookError, unix_now};
use svc_core::{Metadata, WebhookSecret};
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
    Listen {
        #[command(flatten)]
        secrets: Secrets,
        /// The port to listen on (0: any; the address is printed on stderr).
        #[arg(long)]
        port: u16,
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
        WebhooksCommand::Listen { secrets, port } => listen(&secrets, port).await,
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

async fn receive(
    State(webhook): State<Arc<Webhook>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, String) {
    match webhook.verify(&headers, &body) {
        // Printed as it came (one line), fields this SDK does not know included.
        Ok(_) => match serde_json::from_slice::<Value>(&body) {
            Ok(line) => {
                println!("{line}");
                (StatusCode::OK, String::new())
            }
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        },
        // Authentic but not typeable: refusing it would only make the service retry it
        // ten times and then record it as missed. It is printed as it came.
        Err(WebhookError::UntypedEvent { reason, raw }) => {
            eprintln!(
                "svc webhooks: accepted a signed delivery this SDK cannot read ({reason}); printed as received"
            );
            println!("{raw}");
            (StatusCode::OK, String::new())
        }
        Err(e) => {
            eprintln!("svc webhooks: refused a delivery: {e}");
            (StatusCode::BAD_REQUEST, format!("{e}\n"))
        }
    }
}

async fn listen(secrets: &Secrets, port: u16) -> Result<(), Failure> {
    let webhook = Arc::new(secrets.webhook()?);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port))
        .await
        .map_err(|e| Failure::other(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let address = listener
        .local_addr()
        .map_err(|e| Failure::other(e.to_string()))?;
    eprintln!("svc webhooks: listening on http://{address} (Ctrl-C to stop)");
    let app = Router::new().fallback(receive).with_state(webhook);
    axum::serve(listener, app)
        .with_graceful_shutdown(svc_emulator::cli::wait_for_signal())
        .await
        .map_err(|e| Failure::other(e.to_string()))
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
