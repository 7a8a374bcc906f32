//! `svc-emulator`: runs the local cloud emulator until SIGINT or SIGTERM; see
//! [`svc_emulator::cli`]. The same command is `svc emulator`.

use std::process::ExitCode;

use clap::Parser;
use svc_emulator::cli::{EmulatorArgs, run};

#[derive(Parser, Debug)]
#[command(
    name = "svc-emulator",
    version,
    about = "Local emulator of the cloud post-processing service"
)]
struct Args {
    #[command(flatten)]
    emulator: EmulatorArgs,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    run("svc-emulator", &args.emulator).await
}
