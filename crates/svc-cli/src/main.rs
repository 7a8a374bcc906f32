//! `svc`: the command-line tool of the SDK.
//!
//! - `svc process`: the main job — upload survey files, run a processing, follow it,
//!   download the outputs (against the embedded emulator when no `SVC_*` service variable is set).
//! - `svc containers …`, `svc processings …`: the cloud service's resources.
//! - `svc webhooks endpoints …`, `svc webhooks verify|listen`: webhook endpoints and
//!   deliveries.
//! - `svc device`: configure an inertial navigation unit over HTTP or a serial link.
//! - `svc emulator`: the local emulator (one JSON line on stdout, then serves).
//!
//! Exit codes tell failure kinds apart (see [`exit`]): 0 success, 1 other failure,
//! 2 usage, 3 authentication or permission (401/403), 4 conflict (409), 5 invalid input
//! (400/422 or refused before sending), 6 unreachable, 7 not found (404). A command
//! whose stdout is closed (`svc … | head -1`) ends quietly with exit code 0 (see
//! [`output`]).
//!
//! Logs (svc-core's `tracing` spans and events) go to stderr: warnings only by default,
//! `-v` info, `-vv` debug, `-vvv` trace (for the SDK's own crates); `RUST_LOG`, when
//! set, replaces that filter with its own directives (`RUST_LOG=svc_core::unit=trace`).
//! No secret, token, password or pre-signed signature is ever logged.

#![forbid(unsafe_code)]

// `println!` and `print!` of this crate, in place of std's: they write through
// `output::print`, which ends the command quietly (exit code 0) when stdout is closed
// (`svc … | head -1`) instead of panicking. Defined before the modules so that their
// textual scope covers every module below.
macro_rules! println {
    () => {
        $crate::output::print(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::print(format_args!("{}\n", format_args!($($arg)*)))
    };
}

#[allow(
    unused_macros,
    reason = "no command prints without a newline today; one that does must not use std's"
)]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::output::print(format_args!($($arg)*))
    };
}

mod batch;
mod completions;
mod credentials;
mod device;
mod exit;
mod fleet;
mod logs;
mod output;
mod process;
mod resources;
mod stream;
mod webhooks;

use std::process::ExitCode;

use clap::{ArgAction, CommandFactory, Parser, Subcommand};
use tracing_subscriber::EnvFilter;

/// The SDK's command-line tool: the cloud post-processing service, inertial navigation
/// units, and the local emulator of both.
#[derive(Parser, Debug)]
#[command(name = "svc", version, propagate_version = true)]
struct Cli {
    /// More log lines on stderr: -v info (steps, tokens, retries, transfers, unit
    /// sessions), -vv debug (every request and answer, progress), -vvv trace (serial
    /// frames). RUST_LOG, when set, replaces this filter. Secrets are never logged.
    #[arg(short, long, action = ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Process survey files in the cloud: upload, run, follow, download the outputs.
    /// With no SVC_* service variable set, runs against the embedded emulator.
    Process(process::ProcessArgs),
    /// Containers of the cloud service.
    Containers(resources::ContainersArgs),
    /// Processings of the cloud service.
    Processings(resources::ProcessingsArgs),
    /// Run the local emulator until Ctrl-C: prints one JSON line (addresses, credentials).
    Emulator(svc_emulator::cli::EmulatorArgs),
    /// Configure an inertial navigation unit (HTTP, serial port or serial-over-TCP).
    Device(device::DeviceArgs),
    /// Verify webhook deliveries, or receive them.
    Webhooks(webhooks::WebhooksArgs),
    /// The unit's recordings: sbgECom binary logs as tables.
    Logs(logs::LogsArgs),
    /// Print the shell completions (bash, zsh, fish) for packagers.
    #[command(hide = true)]
    Completions(completions::CompletionsArgs),
    /// Write the man pages into a folder, for packagers.
    #[command(hide = true)]
    Man(completions::ManArgs),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging(cli.verbose);
    match cli.command {
        Command::Emulator(args) => svc_emulator::cli::run("svc emulator", &args).await,
        Command::Process(args) => process::run(args).await,
        Command::Containers(args) => resources::containers(args).await,
        Command::Processings(args) => resources::processings(args).await,
        Command::Device(args) => device::run(args).await,
        Command::Webhooks(args) => webhooks::run(args).await,
        Command::Logs(args) => logs::run(args).await,
        Command::Completions(args) => completions::completions(&args, Cli::command()),
        Command::Man(args) => completions::man(&args, Cli::command()),
    }
}

/// The log filter of `-v` counts: the SDK's crates at that level, everything else at
/// warnings.
fn verbosity_filter(verbose: u8) -> String {
    let level = match verbose {
        0 => return "warn".to_owned(),
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    format!("warn,svc={level},svc_core={level},svc_emulator={level}")
}

/// Logs to stderr: `RUST_LOG` when it is set (and valid), else the `-v` level; warnings
/// only by default, so that a command's usual output is unchanged.
fn init_logging(verbose: u8) {
    let from_env = std::env::var("RUST_LOG")
        .ok()
        .filter(|directives| !directives.trim().is_empty())
        .and_then(|directives| match EnvFilter::try_new(&directives) {
            Ok(filter) => Some(filter),
            Err(e) => {
                eprintln!("svc: RUST_LOG is not a valid filter ({e}); using the -v level");
                None
            }
        });
    let filter = from_env.unwrap_or_else(|| EnvFilter::new(verbosity_filter(verbose)));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .try_init();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbosity_levels() {
        assert_eq!(verbosity_filter(0), "warn");
        assert!(verbosity_filter(1).contains("svc_core=info"));
        assert!(verbosity_filter(2).contains("svc_core=debug"));
        assert!(verbosity_filter(7).contains("svc_core=trace"));
        for v in 0..4 {
            EnvFilter::try_new(verbosity_filter(v)).expect("a valid filter");
        }
    }

    #[test]
    fn verbose_is_global() {
        let cli = Cli::try_parse_from(["svc", "containers", "list", "-vv"]).expect("parses");
        assert_eq!(cli.verbose, 2);
        let cli = Cli::try_parse_from(["svc", "-v", "containers", "list"]).expect("parses");
        assert_eq!(cli.verbose, 1);
    }
}
