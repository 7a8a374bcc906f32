//! `cargo xtask fuzz [--seconds N] [target...]` and CI's bounded fuzzing run
//! (`cargo xtask fuzz --ci`).
//!
//! The libFuzzer targets live in `fuzz/`, a cargo-fuzz project with its own workspace
//! and lock file, built with the nightly toolchain (`cargo +nightly fuzz`) into
//! `fuzz/target`, apart from the main target directory. cargo-fuzz itself is used from
//! `target/cargo-fuzz` (installed there, pinned, when missing: about 25 s on 2 cores)
//! or from the PATH.
//!
//! Targets are built with optimizations, debug assertions and overflow checks, and no
//! sanitizer: every crate of the workspace forbids `unsafe`, so AddressSanitizer would
//! only watch the dependencies, and it ran `settings` 5.6 times slower here (2,531
//! against 14,285 inputs per second over the same 200,000 runs from the seeds).
//!
//! Each run starts from the committed seeds (`fuzz/corpus/<target>`, read only) and
//! the inputs earlier runs kept (`fuzz/target/corpus/<target>`, where new ones go). A
//! crash, a failed property or a hang (an input running over 10 s) fails the run; the
//! input is left in `fuzz/artifacts/<target>/` (replay it with
//! `cargo +nightly fuzz run <target> <file>`). The whole libFuzzer output of each
//! target goes to `fuzz/target/logs/<target>.log`.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// The targets, in `fuzz/fuzz_targets/<name>.rs`.
pub const TARGETS: &[&str] = &[
    "serial_decoder",
    "webhook_verify",
    "settings",
    "response_decoders",
    "emulator_upload",
    "emulator_nmea",
    "sbgecom_logs",
];

/// cargo-fuzz, pinned.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Executions per target of the long run, unless `--seconds` is given.
const LONG_RUNS: u64 = 10_000_000;

/// Seconds per target in CI: the targets run two at a time on 2 cores, so about 80 s
/// in all, after a build from scratch of about 4 minutes (see [`ci`]).
const CI_SECONDS: u64 = 20;

/// An input running longer than this is a hang: the run fails on it.
const HANG_SECONDS: u64 = 10;

/// What one target's run did.
struct Outcome {
    target: String,
    runs: u64,
    seconds: f64,
    passed: bool,
    log: PathBuf,
}

/// `cargo xtask fuzz [--seconds N] [target...]`: every target (or those named) for
/// `N` seconds each, or else until each has run 10^7 inputs; targets run side by side,
/// one per core. `cargo xtask fuzz --ci`: what CI runs ([`ci`]).
pub fn run(root: &Path, args: &[&str]) -> Result<()> {
    if args == ["--ci"] {
        return ci(root);
    }
    let mut seconds = None;
    let mut targets = Vec::new();
    let mut args = args.iter();
    while let Some(&arg) = args.next() {
        match arg {
            "--seconds" => {
                let value = args.next().context("--seconds needs a number")?;
                seconds = Some(
                    value
                        .parse::<u64>()
                        .ok()
                        .filter(|&n| n > 0)
                        .with_context(|| format!("--seconds {value}: not a positive number"))?,
                );
            }
            name if TARGETS.contains(&name) => targets.push(name),
            other => bail!("unknown fuzz target or option {other:?}; targets: {TARGETS:?}"),
        }
    }
    if targets.is_empty() {
        targets = TARGETS.to_vec();
    }
    let limit = match seconds {
        Some(n) => Limit::Seconds(n),
        None => Limit::Runs(LONG_RUNS),
    };
    fuzz(root, &targets, limit, Build::Release)
}

/// CI's bounded run: every target for [`CI_SECONDS`] seconds, built from scratch on a
/// fresh machine (cargo-fuzz installed into `target/` when missing).
///
/// Built with the dev profile (`--dev`, no debug information), the project's own crates
/// at `opt-level = 1` (`fuzz/Cargo.toml`), rather than the release profile: on 2 cores
/// the build takes about 4 minutes instead of 9, and the targets run at a tenth to a
/// third of the release build's inputs a second (from about 90 for `emulator_upload`
/// to 4,000 for `response_decoders`), enough for a run of seconds that starts every
/// target on its seeds and the inputs earlier runs kept. The long runs (`cargo xtask
/// fuzz`) use the release profile.
pub fn ci(root: &Path) -> Result<()> {
    fuzz(root, TARGETS, Limit::Seconds(CI_SECONDS), Build::Dev)
}

/// How the targets are built.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Build {
    /// The release profile (`opt-level = 3`): for long runs.
    Release,
    /// The dev profile without debug information: the shortest build, for CI.
    Dev,
}

#[derive(Clone, Copy)]
enum Limit {
    Seconds(u64),
    Runs(u64),
}

fn fuzz(root: &Path, targets: &[&str], limit: Limit, profile: Build) -> Result<()> {
    let started = Instant::now();
    let cargo_fuzz_dir = cargo_fuzz(root)?;
    let path = search_path(&cargo_fuzz_dir)?;
    println!(
        "==> fuzz targets: cargo +nightly fuzz build ({})",
        targets.join(", ")
    );
    let build_started = Instant::now();
    let mut build = Command::new("cargo");
    build
        .args(["+nightly", "fuzz", "build", "--sanitizer", "none"])
        .current_dir(root)
        .env("PATH", &path);
    if profile == Build::Dev {
        build.arg("--dev").env("CARGO_PROFILE_DEV_DEBUG", "0");
    }
    if targets.len() == 1 {
        build.arg(targets[0]);
    }
    let status = build
        .status()
        .context("could not run cargo +nightly fuzz (is the nightly toolchain installed?)")?;
    if !status.success() {
        bail!("building the fuzz targets failed ({status})");
    }
    println!("built in {:.0} s", build_started.elapsed().as_secs_f64());

    let bin_dir = root
        .join("fuzz/target")
        .join(host_triple()?)
        .join(if profile == Build::Dev {
            "debug"
        } else {
            "release"
        });
    let workers = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(targets.len());
    let queue = Mutex::new(targets.iter().copied());
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let next = queue
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .next();
                    let Some(target) = next else { break };
                    let outcome = run_target(root, &bin_dir, target, limit);
                    outcomes
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((target, outcome));
                }
            });
        }
    });
    let mut outcomes = outcomes
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    outcomes.sort_by_key(|(target, _)| TARGETS.iter().position(|t| t == target));

    println!(
        "\n{:<20} {:>12} {:>9} {:>10}  result",
        "target", "executions", "seconds", "exec/s"
    );
    let mut failed = Vec::new();
    for (target, outcome) in &outcomes {
        let outcome = match outcome {
            Ok(outcome) => outcome,
            Err(error) => {
                println!("{target:<20} {error:#}");
                failed.push(format!("{target}: {error:#}"));
                continue;
            }
        };
        let rate = if outcome.seconds > 0.0 {
            outcome.runs as f64 / outcome.seconds
        } else {
            0.0
        };
        println!(
            "{:<20} {:>12} {:>9.0} {:>10.0}  {}",
            outcome.target,
            outcome.runs,
            outcome.seconds,
            rate,
            if outcome.passed { "ok" } else { "FAILED" }
        );
        if !outcome.passed {
            failed.push(format!(
                "{}: see {} and fuzz/artifacts/{}/",
                outcome.target,
                outcome.log.display(),
                outcome.target
            ));
        }
    }
    println!(
        "fuzzing took {:.0} s in all (build included)",
        started.elapsed().as_secs_f64()
    );
    if !failed.is_empty() {
        bail!("fuzzing found failures:\n  {}", failed.join("\n  "));
    }
    Ok(())
}

/// Runs one built target from its seeds and kept inputs, its output to its log.
fn run_target(root: &Path, bin_dir: &Path, target: &str, limit: Limit) -> Result<Outcome> {
    let kept = root.join("fuzz/target/corpus").join(target);
    let seeds = root.join("fuzz/corpus").join(target);
    let artifacts = root.join("fuzz/artifacts").join(target);
    let logs = root.join("fuzz/target/logs");
    for dir in [&kept, &artifacts, &logs] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let log_path = logs.join(format!("{target}.log"));
    let mut log = std::fs::File::create(&log_path)
        .with_context(|| format!("creating {}", log_path.display()))?;
    let mut command = Command::new(bin_dir.join(target));
    command
        .arg(format!("-artifact_prefix={}/", artifacts.display()))
        .arg(format!("-timeout={HANG_SECONDS}"))
        .arg("-print_final_stats=1")
        .arg(match limit {
            Limit::Seconds(n) => format!("-max_total_time={n}"),
            Limit::Runs(n) => format!("-runs={n}"),
        })
        .arg(&kept)
        .arg(&seeds)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    println!("==> fuzz {target}: {}", describe(limit));
    let started = Instant::now();
    let mut child = command
        .spawn()
        .with_context(|| format!("could not start fuzz target {target} (built?)"))?;
    // libFuzzer reports on stderr; the target's own output (a panic) too.
    let stderr = child.stderr.take().context("no stderr")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let out_thread = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = std::io::Read::read_to_string(&mut BufReader::new(stdout), &mut text);
        text
    });
    let mut runs = 0;
    let mut last_progress = Instant::now();
    for line in BufReader::new(stderr).lines() {
        let line = line.context("reading the fuzzer's output")?;
        let _ = writeln!(log, "{line}");
        // The final count, or (a crash stops it before) the last progress line's.
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units:") {
            runs = n.trim().parse().unwrap_or(runs);
        } else if let Some(n) = line
            .strip_prefix('#')
            .and_then(|l| l.split_whitespace().next())
        {
            runs = n.parse().unwrap_or(runs);
        }
        let notable = line.contains("panicked at")
            || line.contains("==ERROR")
            || line.starts_with("SUMMARY")
            || line.contains("Test unit written");
        // A progress line a minute per target is enough on the console.
        let progress = (line.contains("pulse") || line.contains("REDUCE") || line.contains("NEW"))
            && last_progress.elapsed() >= Duration::from_secs(60);
        if notable || progress {
            if progress {
                last_progress = Instant::now();
            }
            println!("[{target}] {line}");
        }
    }
    let status = child.wait().context("waiting for the fuzzer")?;
    let stdout = out_thread.join().unwrap_or_default();
    let _ = write!(log, "{stdout}");
    Ok(Outcome {
        target: target.to_owned(),
        runs,
        seconds: started.elapsed().as_secs_f64(),
        passed: status.success(),
        log: log_path,
    })
}

fn describe(limit: Limit) -> String {
    match limit {
        Limit::Seconds(n) => format!("{n} s"),
        Limit::Runs(n) => format!("{n} executions"),
    }
}

/// The folder holding a `cargo-fuzz` of the pinned version: `target/cargo-fuzz/bin`
/// (installed there when no `cargo-fuzz` is found on the PATH: about 25 s, once). It is
/// built without optimizations: it only starts cargo and the targets, and its release
/// build took twice as long.
fn cargo_fuzz(root: &Path) -> Result<PathBuf> {
    let install_root = root.join("target/cargo-fuzz");
    let local = install_root.join("bin");
    if local.join("cargo-fuzz").exists() {
        return Ok(local);
    }
    let on_path = Command::new("cargo-fuzz")
        .arg("--version")
        .output()
        .is_ok_and(|out| {
            out.status.success()
                && String::from_utf8_lossy(&out.stdout).contains(CARGO_FUZZ_VERSION)
        });
    if on_path {
        // Nothing to add to the PATH.
        return Ok(PathBuf::new());
    }
    println!(
        "==> cargo-fuzz {CARGO_FUZZ_VERSION}: installing into {}",
        install_root.display()
    );
    let started = Instant::now();
    let status = Command::new("cargo")
        .args([
            "install",
            "cargo-fuzz",
            "--version",
            CARGO_FUZZ_VERSION,
            "--locked",
            "--debug",
            "--root",
        ])
        .arg(&install_root)
        .current_dir(root)
        .status()
        .context("could not run cargo install")?;
    if !status.success() {
        bail!("installing cargo-fuzz failed ({status})");
    }
    println!("installed in {:.0} s", started.elapsed().as_secs_f64());
    Ok(local)
}

/// The PATH with `dir` first (unchanged for an empty `dir`).
fn search_path(dir: &Path) -> Result<std::ffi::OsString> {
    let current = std::env::var_os("PATH").unwrap_or_default();
    if dir.as_os_str().is_empty() {
        return Ok(current);
    }
    let mut dirs = vec![dir.to_path_buf()];
    dirs.extend(std::env::split_paths(&current));
    std::env::join_paths(dirs).context("building PATH")
}

/// The host's target triple (where cargo-fuzz puts the built targets).
fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .args(["+nightly", "-vV"])
        .output()
        .context("could not run rustc +nightly -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: ").map(str::to_owned))
        .context("rustc -vV printed no host")
}
