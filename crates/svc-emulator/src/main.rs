//! `svc-emulator`: runs the local cloud emulator until SIGINT or SIGTERM.
//!
//! When every server accepts connections it prints exactly one JSON object on one line on
//! stdout (addresses and credentials), then serves. Nothing else goes to stdout.

use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use svc_emulator::{Emulator, EmulatorConfig, FaultConfig};

/// Local emulator of the cloud post-processing service, its identity provider, object
/// storage and notification service.
#[derive(Parser, Debug)]
#[command(name = "svc-emulator", version)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// First port (cloud; then identity provider, notification, storage); 0 = any free ports.
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// How long a processing takes, in seconds.
    #[arg(long, default_value_t = 3.0)]
    processing_seconds: f64,
    /// Lifetime of access tokens, in seconds.
    #[arg(long, default_value_t = 300)]
    token_lifetime_seconds: u64,
    /// First webhook retry delay in milliseconds (doubles on each retry).
    #[arg(long, default_value_t = 1000)]
    webhook_retry_base_ms: u64,
    /// Processing credits of each organization.
    #[arg(long, default_value_t = 100)]
    credits: u32,
    /// Share of requests answered 500, delayed or cut (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    fault_rate: f64,
}

fn config(args: &Args) -> Result<EmulatorConfig, String> {
    if !(args.processing_seconds.is_finite() && args.processing_seconds >= 0.0) {
        return Err("--processing-seconds must be a number of seconds ≥ 0".into());
    }
    if !(0.0..=1.0).contains(&args.fault_rate) {
        return Err("--fault-rate must be between 0 and 1".into());
    }
    Ok(EmulatorConfig {
        host: args.host,
        port: args.port,
        processing_time: Duration::from_secs_f64(args.processing_seconds),
        token_lifetime: Duration::from_secs(args.token_lifetime_seconds),
        webhook_retry_base: Duration::from_millis(args.webhook_retry_base_ms),
        credits: args.credits,
        faults: FaultConfig {
            rate: args.fault_rate,
            ..FaultConfig::default()
        },
        ..EmulatorConfig::default()
    })
}

async fn wait_for_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = ctrl_c => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = ctrl_c.await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = ctrl_c.await;
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let config = match config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("svc-emulator: {e}");
            return ExitCode::from(2);
        }
    };
    let emulator = match Emulator::start(config).await {
        Ok(e) => e,
        Err(e) => {
            eprintln!("svc-emulator: could not start: {e:#}");
            return ExitCode::FAILURE;
        }
    };
    match serde_json::to_string(emulator.info()) {
        Ok(line) => println!("{line}"),
        Err(e) => {
            eprintln!("svc-emulator: {e}");
            return ExitCode::FAILURE;
        }
    }
    wait_for_signal().await;
    emulator.shutdown().await;
    ExitCode::SUCCESS
}
