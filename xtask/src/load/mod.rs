//! `cargo xtask load`: a bounded load generator against the emulator binary.
//!
//! Starts `svc-emulator` (the release build by default, from a release build of this
//! generator; `--debug`: both debug builds, as CI runs them),
//! obtains an access token from its identity provider as the SDK does (OpenID discovery,
//! then the password grant with the API key), and runs three scenarios one after the
//! other, each with `--clients` concurrent clients (one HTTP connection each) for a
//! warm-up and then `--seconds`:
//!
//! - `list containers`: `GET /api/v2/organizations/{org}/containers` (one page of 50
//!   containers, each with pending files and their upload forms);
//! - `upload 64 KiB`: each client creates a container with 8 files, uploads each to the
//!   emulated object storage with its POST policy form (as the SDK does), then deletes the
//!   container, so the storage does not grow; latency is that of the uploads;
//! - `unit GET /settings`: each client logs in to the emulated unit once, then reads the
//!   whole settings tree.
//!
//! For each: requests per second, errors (a transport error or any status but the one
//! expected), p50/p99/max latency, and the emulator's resident memory (`VmRSS`) sampled
//! every second after the warm-up (first, last, max) with its CPU use, which tells
//! whether the emulator or this generator was the limit (both share the machine).
//!
//! `--check` (CI) fails on any error and when the emulator's memory at the end of a
//! scenario is more than twice what it was after the warm-up.
//!
//! Files: `emulator` (the emulator process), `measure` (the scenarios, their figures and
//! the check), `clients` (the login and each client's requests).

mod clients;
mod emulator;
mod measure;

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use emulator::{Emulator, build_emulator};
use measure::scenarios;

/// What one run does.
#[derive(Clone, Debug)]
pub struct Options {
    /// Measured seconds per scenario (after the warm-up).
    pub seconds: f64,
    pub clients: usize,
    /// Unmeasured seconds before each scenario's measurement.
    pub warmup: f64,
    /// Fail on errors or on memory growth.
    pub check: bool,
    /// Use the debug build of the emulator instead of the release one.
    pub debug: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: 60.0,
            clients: 64,
            warmup: 2.0,
            check: false,
            debug: false,
        }
    }
}

/// Containers present while the listing runs (all on the one page asked for).
const LISTED_CONTAINERS: usize = 50;
/// Files registered (pending) in each listed container.
const LISTED_FILES: usize = 2;
/// Size of each uploaded file.
const UPLOAD_SIZE: usize = 64 * 1024;
/// Files uploaded per container before it is deleted.
const FILES_PER_CONTAINER: usize = 8;
/// Allowed growth of the emulator's memory over a scenario, after its warm-up.
const MAX_RSS_GROWTH: f64 = 2.0;
/// Error messages kept per scenario, to show what failed.
const KEPT_ERRORS: usize = 5;

/// `cargo xtask load [--seconds N] [--clients N] [--warmup S] [--check] [--debug]`.
pub fn run(root: &Path, args: &[&str]) -> Result<()> {
    let options = parse(args)?;
    if cfg!(debug_assertions) && !options.debug {
        return release_generator(root, args);
    }
    load(root, &options)
}

/// Runs this task from a release build of xtask: a debug build of the generator spends
/// most of the machine's CPU itself (on 2 cores, several times what the release emulator
/// needs), and its figures would be its own rather than the emulator's.
fn release_generator(root: &Path, args: &[&str]) -> Result<()> {
    let build = ["build", "--quiet", "--release", "-p", "xtask", "--locked"];
    println!("==> load generator: cargo {}", build.join(" "));
    let status = Command::new("cargo")
        .args(build)
        .current_dir(root)
        .status()
        .context("could not run cargo")?;
    if !status.success() {
        bail!("building xtask in release failed ({status})");
    }
    let status = Command::new(root.join("target/release/xtask"))
        .arg("load")
        .args(args)
        .current_dir(root)
        .status()
        .context("running the release xtask")?;
    if !status.success() {
        bail!("the load run failed ({status})");
    }
    Ok(())
}

/// The bounded run CI does, as `cargo xtask load --seconds 3 --warmup 2 --debug --check`:
/// the debug builds, 64 clients, 2 s warm-up and 3 s per scenario (about 20 s in all).
pub fn ci(root: &Path) -> Result<()> {
    load(
        root,
        &Options {
            seconds: 3.0,
            clients: 64,
            warmup: 2.0,
            check: true,
            debug: true,
        },
    )
}

fn parse(args: &[&str]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .copied()
                .with_context(|| format!("{name} needs a value"))
        };
        match *arg {
            "--seconds" => options.seconds = seconds(value(arg)?, arg, false)?,
            "--warmup" => options.warmup = seconds(value(arg)?, arg, true)?,
            "--clients" => {
                options.clients = value(arg)?.parse().context("--clients: a count")?;
                if options.clients == 0 {
                    bail!("--clients must be at least 1");
                }
            }
            "--check" => options.check = true,
            "--debug" => options.debug = true,
            other => bail!(
                "unknown argument `{other}`\nusage: cargo xtask load [--seconds N] [--clients N] [--warmup S] [--check] [--debug]"
            ),
        }
    }
    Ok(options)
}

/// A finite number of seconds, more than 0 (or 0 too with `zero`).
fn seconds(text: &str, name: &str, zero: bool) -> Result<f64> {
    let value: f64 = text
        .parse()
        .with_context(|| format!("{name}: a number of seconds"))?;
    let least = if zero { "0 or more" } else { "more than 0" };
    if !value.is_finite() || value < 0.0 || (value == 0.0 && !zero) || value > 86_400.0 {
        bail!("{name} must be {least} seconds (at most a day)");
    }
    Ok(value)
}

fn load(root: &Path, options: &Options) -> Result<()> {
    let binary = build_emulator(root, options.debug)?;
    let emulator = Emulator::start(&binary)?;
    println!(
        "==> load: {} clients, {} s warm-up + {} s per scenario, emulator {} (pid {})",
        options.clients,
        options.warmup,
        options.seconds,
        binary.display(),
        emulator.pid
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let reports = runtime.block_on(scenarios(&emulator, options))?;
    drop(emulator);
    if options.check {
        let mut failures = Vec::new();
        for report in &reports {
            failures.extend(report.problems());
        }
        if !failures.is_empty() {
            bail!("load check failed:\n  {}", failures.join("\n  "));
        }
        println!("load check passed: no errors, memory within {MAX_RSS_GROWTH}x after warm-up");
    }
    Ok(())
}
