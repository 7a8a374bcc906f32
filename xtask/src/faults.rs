//! `cargo xtask faults [--workflows N] [--seed N]`: svc-core's fault and scale suites
//! (`crates/svc-core/tests/it/faults.rs`) one at a time, with their figures printed, and
//! the heavy scale variant that `cargo test` leaves out (`#[ignore]`): N workflows
//! (default 1000), 64 at a time, at 20 % injected faults.
//!
//! CI runs the other suites with every test (`cargo test --workspace`): 100 workflows,
//! the identity provider down 30 s, the notification service down 3 s, a noisy serial
//! line; together they add about half a minute to the test step on 2 cores (they run
//! beside the other tests). One at a time here, each suite's peak RSS (`VmHWM`) is its
//! own up to that point.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

pub fn run(root: &Path, args: &[&str]) -> Result<()> {
    let mut command = Command::new("cargo");
    command.current_dir(root).args([
        "test",
        "-p",
        "svc-core",
        "--test",
        "it",
        "--",
        "faults::",
        "--include-ignored",
        "--nocapture",
        "--test-threads",
        "1",
    ]);
    let mut args = args.iter();
    while let Some(&arg) = args.next() {
        let mut number = |what: &str| -> Result<String> {
            let value = args.next().with_context(|| format!("{arg} needs {what}"))?;
            value
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0 || arg == "--seed")
                .with_context(|| format!("{arg} {value}: not {what}"))?;
            Ok((*value).to_owned())
        };
        match arg {
            "--workflows" => {
                command.env("SVC_SCALE_WORKFLOWS", number("a positive number")?);
            }
            "--seed" => {
                command.env("SVC_FAULT_SEED", number("a number")?);
            }
            other => bail!("unknown option {other:?} (--workflows N, --seed N)"),
        }
    }
    println!("==> fault and scale suites (the heavy one included)");
    let status = command.status().context("could not run cargo")?;
    if !status.success() {
        bail!("the fault and scale suites failed ({status})");
    }
    Ok(())
}
