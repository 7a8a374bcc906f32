//! `svc containers list|get|delete` and
//! `svc processings list|get|cancel|archive|errors|outputs|download`.
//!
//! The client comes from the environment (`SVC_BASE_URL`, `SVC_AUTH_URL`,
//! `SVC_NOTIFICATION_URL`, `SVC_API_KEY`, `SVC_API_SECRET`, `SVC_ORGANIZATION_ID`); a
//! missing or invalid variable is a usage error (exit 2) naming it. Lists are streamed
//! page after page and printed as JSON Lines (one compact JSON object per line); single
//! objects are printed as pretty JSON (compact with `--json`). Failures of the service
//! map to the exit codes of [`crate::exit`]; an identifier that is not a UUID is a usage
//! error (2). The API secret is never printed.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use futures::stream::{BoxStream, StreamExt};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::Value;
use svc_core::cloud::{CloudClient, CloudConfig, ListFilter};
use svc_core::transfer::{TransferError, TransferOptions, Transfers};
use uuid::Uuid;

use crate::exit::Failure;

/// Any of the SDK's serializable values as a JSON [`Value`], or a [`Failure`] (svc-cli
/// does not depend on serde, so the trait cannot be named in a generic function).
macro_rules! to_json {
    ($value:expr) => {
        serde_json::to_value($value).map_err(|e| $crate::exit::Failure::other(e.to_string()))
    };
}
pub(crate) use to_json;

/// The largest page the service serves.
const MAX_PAGE_SIZE: i64 = 100;

#[derive(Args, Debug)]
pub struct ContainersArgs {
    #[command(subcommand)]
    command: ContainersCommand,
}

#[derive(Subcommand, Debug)]
enum ContainersCommand {
    /// Every container of the organization (or those --metadata says), one JSON object
    /// per line (JSON Lines).
    List(ContainersListArgs),
    /// One container with its files, as JSON.
    Get {
        /// The container's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Delete a container and all its files, immediately and irreversibly (its
    /// processings remain, with `containerId` null). Refused (exit 4) while one of its
    /// processings runs.
    Delete {
        /// The container's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
    },
}

#[derive(Args, Debug)]
pub struct ProcessingsArgs {
    #[command(subcommand)]
    command: ProcessingsCommand,
}

#[derive(Subcommand, Debug)]
enum ProcessingsCommand {
    /// Every processing of the organization (or those --name and --metadata say), one
    /// JSON object per line (JSON Lines).
    List(ProcessingsListArgs),
    /// One processing (status, step, progress, result), as JSON.
    Get {
        /// The processing's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Cancel a pending or running processing (exit 4 when it is not running), then
    /// print it.
    Cancel {
        /// The processing's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// Archive a processing and delete its result files, then print it.
    Archive {
        /// The processing's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        #[command(flatten)]
        output: ObjectOutput,
    },
    /// The errors and warnings of a processing, one JSON object per line.
    Errors {
        /// The processing's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
    },
    /// The output files of a processed processing, one `{path, url}` JSON object per
    /// line (`url` is a pre-signed download address that expires). Exit 4 when the
    /// processing is not `processed`.
    Outputs {
        /// The processing's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
    },
    /// Download the output files of a processed processing into a folder and print the
    /// paths written, one per line (progress on stderr when it is a terminal).
    Download {
        /// The processing's identifier (a UUID).
        #[arg(value_parser = parse_id)]
        id: Uuid,
        /// The folder to write into (created if needed; existing files are replaced).
        /// Default: ./svc-output/<id>/
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

/// Options of the `list` commands.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// Items fetched per request (1 to 100); every page is read whatever the size.
    #[arg(long, default_value_t = MAX_PAGE_SIZE, value_parser = clap::value_parser!(i64).range(1..=MAX_PAGE_SIZE))]
    pub(crate) page_size: i64,
}

/// Options of `containers list`.
#[derive(Args, Debug)]
pub(crate) struct ContainersListArgs {
    #[command(flatten)]
    pub(crate) list: ListArgs,
    /// Only the items that carry this metadata entry KEY=VALUE; repeat for several
    /// (all must hold), e.g. --metadata svc-job-key=sha256:….
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = crate::process::parse_entry)]
    pub(crate) metadata: Vec<(String, String)>,
}

/// Options of `processings list`.
#[derive(Args, Debug)]
pub(crate) struct ProcessingsListArgs {
    #[command(flatten)]
    pub(crate) list: ContainersListArgs,
    /// Only the processings of this name.
    #[arg(long)]
    pub(crate) name: Option<String>,
}

/// How a single object is printed.
#[derive(Args, Debug)]
pub(crate) struct ObjectOutput {
    /// Print the object as compact JSON on one line (default: pretty JSON).
    #[arg(long)]
    pub(crate) json: bool,
}

pub async fn containers(args: ContainersArgs) -> ExitCode {
    finish("svc containers", run_containers(args.command).await)
}

pub async fn processings(args: ProcessingsArgs) -> ExitCode {
    finish("svc processings", run_processings(args.command).await)
}

fn finish(program: &str, result: Result<(), Failure>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report(program),
    }
}

/// A pending file's upload form is a bearer credential for its object (whoever holds it
/// can upload there until it expires): its signature, credential, session token and
/// policy (which repeats the last two) are not printed.
fn redact_upload_forms(mut container: serde_json::Value) -> serde_json::Value {
    if let Some(files) = container.get_mut("files").and_then(|f| f.as_array_mut()) {
        for file in files {
            if let Some(fields) = file
                .pointer_mut("/uploadInfo/fields")
                .and_then(|f| f.as_object_mut())
            {
                for (name, value) in fields.iter_mut() {
                    if svc_core::cloud::is_secret_upload_field(name) {
                        *value = serde_json::Value::String("[redacted]".into());
                    }
                }
            }
        }
    }
    container
}

async fn run_containers(command: ContainersCommand) -> Result<(), Failure> {
    match command {
        ContainersCommand::List(ContainersListArgs { list, metadata }) => {
            let client = client(Some(list.page_size))?;
            let filter = ListFilter {
                name: None,
                metadata: metadata.into_iter().collect(),
            };
            print_stream(
                client
                    .list_containers_matching(filter)
                    .map(|r| {
                        r.map_err(Failure::from)
                            .and_then(|c| to_json!(&c))
                            .map(redact_upload_forms)
                    })
                    .boxed(),
            )
            .await
        }
        ContainersCommand::Get { id, output } => {
            let container = client(None)?.get_container(id).await?;
            print_object(&redact_upload_forms(to_json!(&container)?), &output)
        }
        ContainersCommand::Delete { id } => {
            client(None)?.delete_container(id).await?;
            eprintln!("svc containers: deleted container {id}");
            Ok(())
        }
    }
}

async fn run_processings(command: ProcessingsCommand) -> Result<(), Failure> {
    match command {
        ProcessingsCommand::List(ProcessingsListArgs { list, name }) => {
            let client = client(Some(list.list.page_size))?;
            let filter = ListFilter {
                name,
                metadata: list.metadata.into_iter().collect(),
            };
            print_stream(
                client
                    .list_processings_matching(filter)
                    .map(|r| r.map_err(Failure::from).and_then(|p| to_json!(&p)))
                    .boxed(),
            )
            .await
        }
        ProcessingsCommand::Get { id, output } => {
            let processing = client(None)?.get_processing(id).await?;
            print_object(&to_json!(&processing)?, &output)
        }
        ProcessingsCommand::Cancel { id, output } => {
            let client = client(None)?;
            client.cancel_processing(id).await?;
            eprintln!("svc processings: canceled processing {id}");
            match client.get_processing(id).await {
                Ok(processing) => print_object(&to_json!(&processing)?, &output),
                Err(e) => {
                    // The cancel itself succeeded: say why nothing is printed, exit 0.
                    eprintln!("svc processings: cannot read the processing again: {e}");
                    Ok(())
                }
            }
        }
        ProcessingsCommand::Archive { id, output } => {
            let processing = client(None)?.archive_processing(id).await?;
            print_object(&to_json!(&processing)?, &output)
        }
        ProcessingsCommand::Errors { id } => {
            let errors = client(None)?.list_processing_errors(id).await?;
            print_lines(
                errors
                    .iter()
                    .map(|e| to_json!(e))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        ProcessingsCommand::Outputs { id } => {
            let outputs = client(None)?.list_processing_outputs(id).await?;
            print_lines(
                outputs
                    .iter()
                    .map(|o| to_json!(o))
                    .collect::<Result<Vec<_>, _>>()?,
            )
        }
        ProcessingsCommand::Download { id, out } => download(id, out).await,
    }
}

async fn download(id: Uuid, out: Option<PathBuf>) -> Result<(), Failure> {
    // Before the first request (the token, the listing): a signal at any moment is
    // answered with its code.
    let mut signals = crate::exit::Signals::listen();
    let client = client(None)?;
    let folder = out.unwrap_or_else(|| PathBuf::from("svc-output").join(id.to_string()));
    let outputs = signals
        .unless_interrupted(
            client.list_processing_outputs(id),
            "before the download began: nothing was written",
        )
        .await??;
    // Storage authorizes by the pre-signed address: a plain HTTP client (no bearer
    // token, no total timeout: `idle_timeout` guards stalls).
    let transfers = Transfers::new(Default::default(), TransferOptions::default());
    let handle = transfers.download(outputs, folder);
    let bar = std::io::stderr()
        .is_terminal()
        .then(|| show_progress(handle.subscribe()));
    let canceler = handle.canceler();
    let (result, interrupted) =
        crate::exit::until_done_or_interrupted(&mut signals, handle.wait(), move || {
            canceler.cancel()
        })
        .await;
    if let Some(bar) = bar {
        // It ends by itself with the last snapshot (`finished`), clearing the bar.
        let _ = bar.await;
    }
    let report = result.map_err(|e| {
        let mut failure = transfer_failure(e);
        if let Some(signal) = interrupted {
            failure.code = signal.code();
        }
        failure
    })?;
    for path in report.written_paths() {
        if !write_line(&path.display().to_string())? {
            break;
        }
    }
    Ok(())
}

/// A progress bar on stderr following the transfer, cleared at its end.
fn show_progress(
    mut progress: tokio::sync::watch::Receiver<svc_core::transfer::Progress>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let bar = ProgressBar::new(0);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} {bytes}/{total_bytes} {bytes_per_sec} {wide_bar} {msg}",
        ) {
            bar.set_style(style);
        }
        loop {
            let snapshot = progress.borrow_and_update().clone();
            if let Some(total) = snapshot.total_bytes {
                bar.set_length(total);
            }
            bar.set_position(snapshot.done_bytes);
            bar.set_message(format!("{} file(s)", snapshot.files.len()));
            if snapshot.finished || progress.changed().await.is_err() {
                break;
            }
        }
        bar.finish_and_clear();
    })
}

fn transfer_failure(e: TransferError) -> Failure {
    Failure {
        code: crate::exit::code_for(e.kind()),
        message: e.to_string(),
    }
}

/// A client from the environment, reading lists `page_size` items at a time.
///
/// # Errors
/// An invalid-input failure (5) naming the missing or invalid variable.
pub(crate) fn client(page_size: Option<i64>) -> Result<CloudClient, Failure> {
    let mut config = CloudConfig::from_env()?;
    if let Some(size) = page_size {
        config.page_size = size;
    }
    Ok(CloudClient::new(config)?)
}

/// Parses a resource identifier; clap turns the error into a usage error (exit 2).
pub(crate) fn parse_id(text: &str) -> Result<Uuid, String> {
    Uuid::parse_str(text.trim()).map_err(|_| format!("not a UUID: {text:?}"))
}

/// Prints one object: pretty JSON, or compact with `--json`.
pub(crate) fn print_object(value: &Value, output: &ObjectOutput) -> Result<(), Failure> {
    let text = if output.json {
        serde_json::to_string(value)
    } else {
        serde_json::to_string_pretty(value)
    }
    .map_err(|e| Failure::other(e.to_string()))?;
    write_line(&text).map(|_| ())
}

/// Prints values as JSON Lines (one compact JSON object per line); stops quietly when
/// stdout is closed (`| head`).
pub(crate) fn print_lines(values: impl IntoIterator<Item = Value>) -> Result<(), Failure> {
    for value in values {
        if !write_line(&compact(&value)?)? {
            break;
        }
    }
    Ok(())
}

/// Prints every item of a list stream as JSON Lines, page after page as they come;
/// the lines before an error are printed, then the error is returned.
pub(crate) async fn print_stream(
    mut items: BoxStream<'static, Result<Value, Failure>>,
) -> Result<(), Failure> {
    while let Some(item) = items.next().await {
        if !write_line(&compact(&item?)?)? {
            break;
        }
    }
    Ok(())
}

fn compact(value: &Value) -> Result<String, Failure> {
    serde_json::to_string(value).map_err(|e| Failure::other(e.to_string()))
}

/// Writes one line to stdout; `Ok(false)` when stdout is closed.
fn write_line(text: &str) -> Result<bool, Failure> {
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(Failure::other(format!("writing to stdout: {e}"))),
    }
}
