//! `svc`: the command-line tool of the SDK.
//!
//! - `svc process`: the main job — upload survey files, run a processing, follow it,
//!   download the outputs (against the embedded emulator when `SVC_BASE_URL` is unset).
//! - `svc containers …`, `svc processings …`: the cloud service's resources.
//! - `svc webhooks endpoints …`, `svc webhooks verify|listen`: webhook endpoints and
//!   deliveries.
//! - `svc device`: configure an inertial navigation unit over HTTP or a serial link.
//! - `svc emulator`: the local emulator (one JSON line on stdout, then serves).
//!
//! Exit codes tell failure kinds apart (see [`exit`]): 0 success, 1 other failure,
//! 2 usage, 3 authentication or permission (401/403), 4 conflict (409), 5 invalid input
//! (400/422 or refused before sending), 6 unreachable, 7 not found (404).

#![forbid(unsafe_code)]

mod device;
mod exit;
mod fleet;
mod process;
mod resources;
mod webhooks;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// The SDK's command-line tool: the cloud post-processing service, inertial navigation
/// units, and the local emulator of both.
#[derive(Parser, Debug)]
#[command(name = "svc", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Process survey files in the cloud: upload, run, follow, download the outputs.
    /// Without SVC_BASE_URL, runs against the embedded emulator.
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
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Emulator(args) => svc_emulator::cli::run("svc emulator", &args).await,
        Command::Process(args) => process::run(args).await,
        Command::Containers(args) => resources::containers(args).await,
        Command::Processings(args) => resources::processings(args).await,
        Command::Device(args) => device::run(args).await,
        Command::Webhooks(args) => webhooks::run(args).await,
    }
}
