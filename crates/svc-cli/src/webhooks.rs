//! `svc webhooks verify` and `svc webhooks listen`: check webhook deliveries of the
//! notification service (HMAC-SHA256 over `timestamp.body`, ±5 minutes by default).
//!
//! The signing secret comes from `--secret` or `SVC_WEBHOOK_SECRET`; several `--secret`s
//! are accepted during a rotation.

use std::io::Read;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use clap::{Args, Subcommand};
use svc_core::WebhookSecret;
use svc_core::webhook::{Webhook, unix_now};

use crate::exit::Failure;

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
}

#[derive(Args, Debug)]
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
        Ok(event) => {
            let line = serde_json::to_string(&event).map_err(|e| Failure::other(e.to_string()))?;
            println!("{line}");
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
        Ok(event) => match serde_json::to_string(&event) {
            Ok(line) => {
                println!("{line}");
                (StatusCode::OK, String::new())
            }
            Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
        },
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
