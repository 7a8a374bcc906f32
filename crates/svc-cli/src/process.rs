//! `svc process`: the main job. Upload survey files, run the processing, follow it,
//! download the outputs (see `svc_core::workflow`).

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use svc_core::ErrorKind;
use svc_core::cloud::{
    CloudClient, CloudConfig, CloudError, ContainerRegion, ENV_VARS, Metadata, ProcessingStatus,
};
use svc_core::transfer::{Progress, TransferError};
use svc_core::workflow::{
    BatchJournal, JobKey, PROCESSING_ID_PLACEHOLDER, ProcessingJob, Workflow, WorkflowError,
    WorkflowOptions, WorkflowOutcome, WorkflowProgress,
};
use uuid::Uuid;

use crate::exit::{self, Failure};

/// Exit code of a processing that ended with the result `failed` (its errors are
/// printed).
pub const PROCESSING_FAILED: u8 = 8;

/// The end of `svc process --help`.
const AFTER_HELP: &str = "\
The service is given by SVC_BASE_URL, SVC_AUTH_URL, SVC_NOTIFICATION_URL, SVC_API_KEY,
SVC_API_SECRET and SVC_ORGANIZATION_ID. When none of them is set, the embedded local
emulator is started in this process and used instead (results then come from the
emulator, and its report.json says so); with some set and others missing, nothing is
sent and the error names the missing ones.

Exit codes:
  0  the processing succeeded (with --no-wait: it was started)
  8  the processing ended with the result `failed` (its errors are printed)
  1  other failure (the processing was canceled or archived, a transfer failed)
  2  usage
  3  authentication or permission
  4  conflict: another processing is ongoing (see --wait-for-organization)
  5  invalid input: a missing file, two files with the same name, a configuration that
     is not a JSON object, an --out that is an existing file or cannot be written
     (nothing is sent)
  6  unreachable
  7  not found
  130, 143  stopped by SIGINT (Ctrl-C) or SIGTERM: the run stops and cleans up as on a
     failure (a second signal stops at once)

A failure names what it leaves in the cloud: the container (and the processing, once
started; a container or processing whose creation was under way when the run stopped is
looked up first). With --cleanup-on-failure, a run that fails (or is interrupted) after
creating the container and before starting the processing deletes the container and its
uploads.
With --json, a failure prints one JSON object on stdout: kind, message, containerId,
processingId, cleanedUp.

With --batch, the exit code is 0 when every mission succeeded, 8 when the others all
ended with a failed processing, else the code of the first other failure; each mission's
outcome or failure is in the summary table (or the --json report).";

/// How long a processing takes on the embedded emulator.
const EMULATOR_PROCESSING_TIME: Duration = Duration::from_secs(2);

/// Process survey files: create a container, upload the files, start the processing,
/// follow it to its end, download its outputs.
///
/// The service is given by SVC_BASE_URL, SVC_AUTH_URL, SVC_NOTIFICATION_URL,
/// SVC_API_KEY, SVC_API_SECRET and SVC_ORGANIZATION_ID. When none of them is set, the
/// embedded local emulator is started in this process and used instead (say so on
/// stderr): it works on a fresh machine, with no account. With some set and others
/// missing, nothing is sent and the error names the missing ones.
///
/// Exit codes: 0 the processing succeeded (or, with --no-wait, was started);
/// 8 the processing ended with the result `failed`; 1 other failure (it was canceled
/// or archived, a transfer failed); 2 usage; 3 authentication or permission; 4
/// conflict (another processing is ongoing: see --wait-for-organization); 5 invalid
/// input (a missing or unreadable file, two files with the same name, a configuration
/// that is not a JSON object, an --out that is an existing file or cannot be written;
/// nothing is sent); 6 unreachable; 7 not found; 130/143 stopped by SIGINT/SIGTERM.
#[derive(clap::Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ProcessArgs {
    /// The input files (raw GNSS, INS logs, IMU, odometer data); each is stored at its
    /// file name, so two files may not have the same name. A folder (a mission's:
    /// `rover/…`, `base/…`) gives its files at their paths below it, the paths the
    /// configuration names.
    #[arg(required_unless_present = "batch", value_name = "FILES")]
    inputs: Vec<PathBuf>,
    /// Process a batch of missions instead: each folder of DIR, or each mission folder
    /// (or file) a LIST file names, one per line. One processing at a time, first come
    /// first served, the next mission uploading while one processes; each mission's
    /// outputs go to OUT/<mission>/ (OUT: --out, default ./svc-output); a summary table
    /// (or, with --json, {"missions": [...]}) at the end.
    #[arg(long, value_name = "DIR|LIST", conflicts_with_all = ["inputs", "no_wait"])]
    batch: Option<PathBuf>,
    /// The processing configuration: a JSON file holding one object (processingJson).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    /// Resource files (export profiles, report templates, geodesy resources).
    #[arg(long, num_args = 1.., value_name = "FILES")]
    resources: Vec<PathBuf>,
    /// The processing's name.
    #[arg(long)]
    name: Option<String>,
    /// A metadata entry KEY=VALUE of the container and the processing; repeat for
    /// several.
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = parse_entry)]
    metadata: Vec<(String, String)>,
    /// The region where the files are stored and the processing runs.
    #[arg(long, default_value = "eu-west-3")]
    region: String,
    /// Where to write the outputs [default: ./svc-output/<processing id>/].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Print the started processing and exit, without following it.
    #[arg(long)]
    no_wait: bool,
    /// When the organization already has an ongoing processing, wait for it to end
    /// (batch jobs) instead of failing with a conflict.
    #[arg(long)]
    wait_for_organization: bool,
    /// The longest wait for the organization to be free, in seconds.
    #[arg(long, default_value_t = 1800, value_name = "SECONDS")]
    max_wait: u64,
    /// Print the outcome as one JSON object on stdout (service: `cloud`, or `emulator`
    /// for the embedded one; processing, errors, outputs, downloaded paths), for
    /// scripts; a failure as one JSON object too (kind, message, containerId,
    /// processingId, cleanedUp).
    #[arg(long)]
    json: bool,
    /// When the run fails (or is interrupted) after creating the container and before
    /// the processing is started (a refused start, a failed upload), delete the
    /// container and its uploaded files instead of leaving them behind.
    #[arg(long)]
    cleanup_on_failure: bool,
    /// Know the job again by KEY (`auto`: derived from the configuration and the
    /// files' names, sizes and contents; with --batch, each mission's own): a rerun
    /// with the same key follows the earlier run's processing (and downloads its
    /// outputs) instead of starting, and paying for, another; containers an
    /// interrupted run left under the key are deleted.
    #[arg(long, value_name = "KEY|auto")]
    key: Option<String>,
    /// With --batch: note in FILE (JSON Lines) what each mission created, as it
    /// happens; the same batch run again with the same journal (after a crash, a
    /// reboot) follows the processings already started instead of starting them again,
    /// and deletes the containers left without one.
    #[arg(long, value_name = "FILE", requires = "batch")]
    journal: Option<PathBuf>,
}

impl ProcessArgs {
    /// The job's key (`--key`).
    fn job_key(&self) -> Option<JobKey> {
        self.key.as_ref().map(|key| match key.as_str() {
            "auto" => JobKey::Derived,
            given => JobKey::Given(given.to_owned()),
        })
    }
}

pub(crate) fn parse_entry(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("expected KEY=VALUE, got `{text}`")),
    }
}

pub async fn run(args: ProcessArgs) -> ExitCode {
    let json = args.json;
    match process(args).await {
        Ok(code) => code,
        Err(failure) => {
            if json {
                println!("{}", failure.to_json());
            }
            failure.failure.report("svc process")
        }
    }
}

/// Why `svc process` failed: the message and exit code, the kind of failure, and what
/// it leaves in the cloud (for `--json`).
#[derive(Debug)]
pub(crate) struct ProcessFailure {
    failure: Failure,
    kind: ErrorKind,
    container_id: Option<Uuid>,
    processing_id: Option<Uuid>,
    cleaned_up: bool,
}

impl ProcessFailure {
    pub(crate) fn local(failure: Failure, kind: ErrorKind) -> Self {
        Self {
            failure,
            kind,
            container_id: None,
            processing_id: None,
            cleaned_up: false,
        }
    }

    pub(crate) fn invalid(message: impl Into<String>) -> Self {
        Self::local(Failure::invalid(message), ErrorKind::InvalidInput)
    }

    fn to_json(&self) -> serde_json::Value {
        json!({
            "kind": self.kind.as_str(),
            "message": self.failure.message,
            "containerId": self.container_id,
            "processingId": self.processing_id,
            "cleanedUp": self.cleaned_up,
        })
    }
}

impl From<CloudError> for ProcessFailure {
    fn from(e: CloudError) -> Self {
        let kind = e.kind();
        Self::local(Failure::from(e), kind)
    }
}

async fn process(args: ProcessArgs) -> Result<ExitCode, ProcessFailure> {
    // First thing: a signal at any moment of the command is answered with its code.
    let mut signals = crate::exit::Signals::listen();
    // Everything local is checked before anything is started or sent.
    let missions = match &args.batch {
        Some(source) => Some(crate::batch::missions(source).map_err(ProcessFailure::invalid)?),
        None => None,
    };
    let mission_inputs = missions.iter().flatten().map(|m| &m.input);
    for file in args
        .inputs
        .iter()
        .chain(&args.resources)
        .chain(mission_inputs)
    {
        check_file(file)?;
    }
    let processing_json =
        svc_core::workflow::read_processing_config(&args.config).map_err(|e| {
            let kind = e.kind();
            ProcessFailure::local(Failure::invalid(e.to_string()), kind)
        })?;
    let region = ContainerRegion::from(args.region.clone());
    if !region.is_known() {
        return Err(ProcessFailure::invalid(format!(
            "unknown region `{}` (known: eu-west-3, us-west-1, ap-northeast-1, ap-southeast-2)",
            args.region
        )));
    }
    if let Some(missions) = missions {
        let journal = match &args.journal {
            Some(path) => Some(Arc::new(BatchJournal::open(path).map_err(|e| {
                ProcessFailure::invalid(format!("--journal {}: {e}", path.display()))
            })?)),
            None => None,
        };
        let (client, emulator) = signals
            .unless_interrupted(connect(), "before anything was sent: nothing was created")
            .await
            .map_err(|failure| ProcessFailure::local(failure, ErrorKind::Canceled))??;
        let template = ProcessingJob {
            inputs: Vec::new(),
            resources: args.resources.clone(),
            processing_json,
            name: args.name.clone(),
            metadata: args.metadata.iter().cloned().collect::<Metadata>(),
            region,
            output_folder: None,
            key: args.job_key(),
        };
        let run = crate::batch::BatchRun {
            missions,
            template,
            out: args
                .out
                .clone()
                .unwrap_or_else(|| PathBuf::from("svc-output")),
            max_wait: Duration::from_secs(args.max_wait),
            cleanup_on_failure: args.cleanup_on_failure,
            json: args.json,
            embedded: emulator.is_some(),
            journal,
        };
        let code = crate::batch::run(Workflow::try_new(client)?, run, &mut signals).await;
        drop(emulator);
        return code;
    }
    let output_folder = args
        .out
        .clone()
        .unwrap_or_else(|| Path::new("svc-output").join(PROCESSING_ID_PLACEHOLDER));
    // Before anything is started or sent: finding it out after the processing would
    // waste its credit.
    svc_core::workflow::check_output_folder(&output_folder)
        .map_err(|e| ProcessFailure::invalid(format!("--out: {e}")))?;

    let (client, emulator) = signals
        .unless_interrupted(connect(), "before anything was sent: nothing was created")
        .await
        .map_err(|failure| ProcessFailure::local(failure, ErrorKind::Canceled))??;

    let job = ProcessingJob {
        inputs: args.inputs.clone(),
        resources: args.resources.clone(),
        processing_json,
        name: args.name.clone(),
        metadata: args.metadata.iter().cloned().collect::<Metadata>(),
        region,
        output_folder: Some(output_folder),
        key: args.job_key(),
    };
    let bars = std::io::stderr()
        .is_terminal()
        .then(|| Arc::new(Bars::default()));
    let on_progress = match bars.clone() {
        Some(bars) => Arc::new(move |p: &WorkflowProgress| bars.show(p))
            as svc_core::workflow::WorkflowProgressCallback,
        // Without bars (a log, a script): one line once the processing has started, so
        // that its identifier is known even if the command is interrupted.
        None => {
            let notes = Notes::default();
            Arc::new(move |p: &WorkflowProgress| notes.show(p))
        }
    };
    let options = WorkflowOptions {
        wait_for_free_organization: args.wait_for_organization,
        max_wait: Duration::from_secs(args.max_wait),
        follow: !args.no_wait,
        on_progress: Some(on_progress),
        cleanup_on_failure: args.cleanup_on_failure,
        ..WorkflowOptions::default()
    };

    let handle = Workflow::try_new(client)?.start(job, options);
    let canceler = handle.canceler();
    let (result, interrupted) =
        crate::exit::until_done_or_interrupted(&mut signals, handle.wait(), move || {
            canceler.cancel()
        })
        .await;
    if let Some(bars) = &bars {
        bars.clear();
    }
    let outcome = result.map_err(|e| {
        let mut failure = failure(e, emulator.is_some());
        if let Some(signal) = interrupted {
            failure.failure.code = signal.code();
        }
        failure
    })?;

    if args.json {
        println!("{}", outcome_json(&outcome, emulator.is_some()));
    } else if args.no_wait {
        print_started(&outcome);
    } else {
        print_summary(&outcome);
    }
    if args.no_wait && emulator.is_some() {
        eprintln!(
            "svc process: the embedded emulator stops with this command: the processing will not be found afterwards"
        );
    }
    drop(emulator);
    Ok(exit_code(&outcome, args.no_wait))
}

fn check_file(file: &Path) -> Result<(), ProcessFailure> {
    match std::fs::metadata(file) {
        Ok(m) if m.is_file() || m.is_dir() => Ok(()),
        Ok(_) => Err(ProcessFailure::invalid(format!(
            "`{}` is neither a regular file nor a folder; nothing was sent",
            file.display()
        ))),
        Err(e) => Err(ProcessFailure::invalid(format!(
            "cannot read `{}`: {e}; nothing was sent",
            file.display()
        ))),
    }
}

/// The client of the configured service, or of the embedded emulator when none of the
/// service's variables ([`ENV_VARS`]) is set (the emulator runs as long as the returned
/// value lives). With some set and others missing, the error names the missing ones:
/// a forgotten `SVC_BASE_URL` must not send real data to the emulator.
async fn connect() -> Result<(CloudClient, Option<svc_emulator::Emulator>), ProcessFailure> {
    let configured = ENV_VARS.iter().any(|name| std::env::var_os(name).is_some());
    if configured {
        let config = CloudConfig::from_env()?;
        return Ok((CloudClient::new(config)?, None));
    }
    eprintln!(
        "svc process: no SVC_* service variable is set: starting the embedded local emulator; results come from the local emulator, not the cloud service"
    );
    let emulator = svc_emulator::Emulator::start(svc_emulator::EmulatorConfig {
        processing_time: EMULATOR_PROCESSING_TIME,
        device: None,
        ..svc_emulator::EmulatorConfig::default()
    })
    .await
    .map_err(|e| {
        ProcessFailure::local(
            Failure::other(format!("the embedded emulator did not start: {e}")),
            ErrorKind::Internal,
        )
    })?;
    let config = CloudConfig::from_vars(|name| emulator.info().var(name))?;
    Ok((CloudClient::new(config)?, Some(emulator)))
}

/// The failure of a workflow; `embedded`: it ran against the embedded emulator, which
/// stops with the command.
fn failure(e: WorkflowError, embedded: bool) -> ProcessFailure {
    let code = match &e {
        // A local input the command was given, or an output path it refuses to write.
        WorkflowError::LocalFile { .. } => exit::INVALID,
        WorkflowError::Transfer { source, .. }
            if matches!(**source, TransferError::UnsafeOutputPath { .. }) =>
        {
            exit::INVALID
        }
        // The service's error decides (e.g. a missing setting is a usage error).
        WorkflowError::Cloud { source, .. } => exit::cloud_code(source),
        e => exit::code_for(e.kind()),
    };
    let processing_id = e.processing_id();
    // The core's message names what is left in the cloud.
    let mut message = e.to_string();
    match &e {
        WorkflowError::Cloud { source, .. }
            if source.status() == Some(409) && processing_id.is_none() =>
        {
            message.push_str("; use --wait-for-organization to wait for the ongoing processing");
        }
        WorkflowError::Canceled {
            processing_id: Some(p),
            ..
        } if embedded => {
            message = format!(
                "the workflow was canceled; processing {p} ran in the embedded emulator, which stops with this command: the processing ends with it"
            );
        }
        _ => {}
    }
    let container_id = e.container_id();
    let cleaned_up = e.cleanup().deleted();
    if embedded {
        if container_id.is_some() && !cleaned_up && !message.contains("embedded emulator") {
            message.push_str(
                "; this ran on the embedded emulator, which stops with this command: nothing of it remains",
            );
        }
    } else {
        match (container_id, processing_id, cleaned_up) {
            (Some(c), None, false) => message.push_str(&format!(
                "; `svc containers delete {c}` deletes it (--cleanup-on-failure does so on failure)"
            )),
            (_, Some(p), _) => message.push_str(&format!(
                "; `svc processings get {p}` shows where it stands, `svc processings download {p}` fetches its outputs once it is processed"
            )),
            _ => {}
        }
    }
    ProcessFailure {
        failure: Failure { code, message },
        kind: e.kind(),
        container_id,
        processing_id,
        cleaned_up,
    }
}

fn exit_code(outcome: &WorkflowOutcome, no_wait: bool) -> ExitCode {
    if no_wait || outcome.succeeded() {
        ExitCode::SUCCESS
    } else if outcome.failed() {
        ExitCode::from(PROCESSING_FAILED)
    } else {
        ExitCode::from(exit::FAILURE)
    }
}

/// The outcome for `--json`. `service` says where it comes from (`emulator`: the
/// embedded one, when no service variable is set; `cloud`: the configured service), so that a
/// script cannot take emulated results for the cloud's.
fn outcome_json(outcome: &WorkflowOutcome, embedded: bool) -> serde_json::Value {
    json!({
        "service": if embedded { "emulator" } else { "cloud" },
        "processing": outcome.processing,
        "containerId": outcome.container_id,
        "errors": outcome.errors,
        "outputs": outcome.outputs,
        "downloaded": outcome.downloaded,
        "reused": outcome.reused,
    })
}

fn print_started(outcome: &WorkflowOutcome) {
    let p = &outcome.processing;
    println!("Processing {} started ({}).", p.id, p.status);
    if let Some(container) = outcome.container_id {
        println!("  container: {container}");
    }
}

fn print_summary(outcome: &WorkflowOutcome) {
    let p = &outcome.processing;
    if outcome.reused {
        println!("An earlier run of this job (--key) started this processing; none was started.");
    }
    let result = p
        .processing_result
        .as_ref()
        .map_or_else(|| "no result".to_owned(), ToString::to_string);
    match &p.name {
        Some(name) => println!("Processing {} \"{name}\": {}, {result}", p.id, p.status),
        None => println!("Processing {}: {}, {result}", p.id, p.status),
    }
    let seconds = |s: Option<i64>| s.map_or_else(|| "unknown".to_owned(), |s| format!("{s} s"));
    println!("  duration:       {}", seconds(p.processing_duration));
    println!("  mission length: {}", seconds(p.mission_length));
    let (errors, warnings) = (outcome.error_messages().count(), outcome.warnings().count());
    println!("  errors: {errors}, warnings: {warnings}");
    for e in &outcome.errors {
        println!(
            "    [{}] {}",
            e.level.as_ref().map_or("?", |l| l.as_str()),
            e.message.as_deref().unwrap_or("(no message)")
        );
    }
    if outcome.downloaded.is_empty() {
        if p.status == ProcessingStatus::Processed && !outcome.outputs.is_empty() {
            println!("  no file written");
        }
    } else {
        println!("  files written:");
        for path in &outcome.downloaded {
            println!("    {}", path.display());
        }
    }
}

/// Without progress bars: says once on stderr that the processing has started.
#[derive(Default)]
struct Notes {
    container: Mutex<Option<Uuid>>,
    started: std::sync::atomic::AtomicBool,
}

impl Notes {
    fn show(&self, progress: &WorkflowProgress) {
        use std::sync::atomic::Ordering;
        match progress {
            WorkflowProgress::Starting { container_id } => {
                if let Ok(mut container) = self.container.lock() {
                    *container = Some(*container_id);
                }
            }
            WorkflowProgress::Queued { processing_id }
            | WorkflowProgress::Running { processing_id, .. }
                if !self.started.swap(true, Ordering::Relaxed) =>
            {
                let container = self.container.lock().ok().and_then(|c| *c);
                match container {
                    Some(c) => {
                        eprintln!(
                            "svc process: processing {processing_id} started (container {c})"
                        );
                    }
                    None => eprintln!("svc process: processing {processing_id} started"),
                }
            }
            _ => {}
        }
    }
}

/// Progress bars on stderr: uploads, processing, downloads.
#[derive(Default)]
struct Bars {
    current: Mutex<Option<(Stage, ProgressBar)>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Stage {
    Preparing,
    Uploading,
    Processing,
    Downloading,
}

fn bytes_bar(label: &str) -> ProgressBar {
    let style = ProgressStyle::with_template(&format!(
        "{label:<12} {{bar:30}} {{bytes}}/{{total_bytes}} {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(0).with_style(style)
}

fn processing_bar() -> ProgressBar {
    let style = ProgressStyle::with_template("processing   {bar:30} {pos:>3}% {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::new(100).with_style(style)
}

fn spinner() -> ProgressBar {
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

impl Bars {
    fn bar(&self, stage: Stage, make: impl FnOnce() -> ProgressBar) -> Option<ProgressBar> {
        let mut current = self.current.lock().ok()?;
        match &*current {
            Some((s, bar)) if *s == stage => Some(bar.clone()),
            _ => {
                if let Some((_, old)) = current.take() {
                    old.finish_and_clear();
                }
                let bar = make();
                *current = Some((stage, bar.clone()));
                Some(bar)
            }
        }
    }

    fn transfer(&self, stage: Stage, label: &str, p: &Progress) {
        if let Some(bar) = self.bar(stage, || bytes_bar(label)) {
            bar.set_length(p.total_bytes.unwrap_or(p.done_bytes));
            bar.set_position(p.done_bytes);
            bar.set_message(format!("{} file(s)", p.files.len()));
        }
    }

    fn show(&self, progress: &WorkflowProgress) {
        match progress {
            WorkflowProgress::CreatingContainer => {
                if let Some(bar) = self.bar(Stage::Preparing, spinner) {
                    bar.set_message("creating the container");
                }
            }
            WorkflowProgress::Uploading(p) => self.transfer(Stage::Uploading, "uploading", p),
            WorkflowProgress::Starting { .. } => {
                if let Some(bar) = self.bar(Stage::Processing, processing_bar) {
                    bar.set_message("starting");
                }
            }
            WorkflowProgress::WaitingForOrganization { waited, behind, .. } => {
                if let Some(bar) = self.bar(Stage::Processing, processing_bar) {
                    bar.set_message(match behind {
                        Some(mission) => format!("in line behind {mission}"),
                        None => format!(
                            "waiting for the organization's ongoing processing ({} s)",
                            waited.as_secs()
                        ),
                    });
                }
            }
            WorkflowProgress::Queued { .. } => {
                if let Some(bar) = self.bar(Stage::Processing, processing_bar) {
                    bar.set_message("pending");
                }
            }
            WorkflowProgress::Running { step, progress, .. } => {
                if let Some(bar) = self.bar(Stage::Processing, processing_bar) {
                    let fraction = progress.unwrap_or(0.0).clamp(0.0, 1.0);
                    bar.set_position((fraction * 100.0).round() as u64);
                    bar.set_message(step.as_ref().map_or_else(String::new, ToString::to_string));
                }
            }
            WorkflowProgress::Downloading(p) => {
                self.transfer(Stage::Downloading, "downloading", p);
            }
            _ => self.clear(),
        }
    }

    fn clear(&self) {
        if let Ok(mut current) = self.current.lock()
            && let Some((_, bar)) = current.take()
        {
            bar.finish_and_clear();
        }
    }
}
