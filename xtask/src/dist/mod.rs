//! `cargo xtask dist [--check] [--only PART,...]`: every release artifact this machine can
//! build, into `target/dist/`, with a `SHA256SUMS` file (`sha256sum -c SHA256SUMS` in that
//! folder verifies it).
//!
//! | part | what (`target/dist/…`) | built with |
//! |---|---|---|
//! | `python` | `python/`: abi3 wheels (manylinux_2_28 and musllinux_1_2, x86_64 and aarch64; Windows x64) and the sdist | maturin, zig, mingw-w64 ([`python`]) |
//! | `crates` | `crates/`: the `.crate` packages of the published library crates | `cargo package --workspace` ([`crates`]) |
//! | `cli` | `cli/`: `svc` for x86_64 and aarch64 Linux (static musl), completions, man pages | cargo-zigbuild ([`cli`]) |
//! | `jvm` | the Maven artifact | [`jvm`] |
//!
//! `--check` checks what the last `cargo xtask dist` built (it builds first when there is
//! no `target/dist/SHA256SUMS`, as on a fresh machine): the checksums, the
//! version agreement ([`versions`]), each wheel's tag, audit, size and metadata, the
//! aarch64 wheel smoke-tested under qemu-user with an arm64 CPython, the sdist installed
//! from scratch in a fresh venv, each crate built from its own package
//! (`cargo publish --dry-run`), the aarch64 `svc` run under qemu-user. It installs what
//! it needs, idempotently: rustup targets, Debian's `mingw-w64` and `qemu-user-static`,
//! Python tools in `target/dist-tools/venv`, an arm64 CPython under
//! `~/.cache/svc-sdk/` ([`tools`]).
//!
//! What needs other hosts is built by `.github/workflows/release.yml`: the macOS and
//! Windows MSVC wheels with `--hosted python` (the host's own wheel, installed and
//! smoke-tested in a fresh venv), the mobile packages by the workflow it calls
//! (`mobile.yml`).
//!
//! [`ci_checks`] is the cheap part that `cargo xtask ci` runs: version agreement, the
//! sdist's and each crate package's file lists, the workflow file through actionlint.

mod cli;
mod crates;
mod jvm;
mod python;
mod tools;
mod versions;
mod workflow;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use sha2::{Digest, Sha256};

/// The parts of a release, in the order they are built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Part {
    Python,
    Crates,
    Cli,
    Jvm,
}

const PARTS: [Part; 4] = [Part::Python, Part::Crates, Part::Cli, Part::Jvm];

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Python => "python",
            Part::Crates => "crates",
            Part::Cli => "cli",
            Part::Jvm => "jvm",
        }
    }

    fn parse(name: &str) -> Result<Part> {
        PARTS
            .into_iter()
            .find(|part| part.name() == name)
            .with_context(|| format!("unknown part {name:?} (expected python, crates, cli or jvm)"))
    }
}

/// What `cargo xtask dist` was asked.
#[derive(Debug, PartialEq)]
enum Mode {
    /// Build the parts (and check them with `check`).
    Local { check: bool, parts: Vec<Part> },
    /// On a hosted runner: the host's own Python wheel (optionally for a target such as
    /// `universal2-apple-darwin`), installed and smoke-tested.
    HostedPython { target: Option<String> },
    /// The cheap checks `cargo xtask ci` runs.
    Ci,
}

fn parse(args: &[&str]) -> Result<Mode> {
    let mut check = false;
    let mut parts: Option<Vec<Part>> = None;
    let mut hosted = false;
    let mut target = None;
    let mut rest = args.iter();
    while let Some(&arg) = rest.next() {
        match arg {
            "--check" => check = true,
            "--ci" if args.len() == 1 => return Ok(Mode::Ci),
            "--only" => {
                let list = rest.next().context("--only needs a list of parts")?;
                let mut chosen = Vec::new();
                for name in list.split(',') {
                    chosen.push(Part::parse(name.trim())?);
                }
                parts = Some(chosen);
            }
            "--hosted" => match rest.next() {
                Some(&"python") => hosted = true,
                other => bail!("--hosted takes `python`, not {other:?}"),
            },
            "--target" => {
                target = Some(
                    rest.next()
                        .context("--target needs a target triple")?
                        .to_string(),
                );
            }
            other => bail!(
                "unknown argument {other:?}\nusage: cargo xtask dist [--check] [--only python,crates,cli,jvm]\n       \
                 cargo xtask dist --hosted python [--target TRIPLE]\n       \
                 cargo xtask dist --ci   (the cheap checks of `cargo xtask ci`)"
            ),
        }
    }
    if hosted {
        return Ok(Mode::HostedPython { target });
    }
    if target.is_some() {
        bail!("--target goes with --hosted python");
    }
    let mut parts = parts.unwrap_or_else(|| PARTS.to_vec());
    // Build in the fixed order, whatever order --only named them in.
    parts.sort_by_key(|part| PARTS.iter().position(|p| p == part));
    parts.dedup();
    Ok(Mode::Local { check, parts })
}

pub fn run(root: &Path, args: &[&str]) -> Result<()> {
    match parse(args)? {
        Mode::Local { check, parts } => local(root, check, &parts),
        Mode::HostedPython { target } => python::hosted(root, target.as_deref()),
        Mode::Ci => ci_checks(root),
    }
}

/// The cheap checks `cargo xtask ci` runs: nothing is compiled.
pub fn ci_checks(root: &Path) -> Result<()> {
    let started = Instant::now();
    let version = versions::check(root)?;
    println!("==> version {version} agrees everywhere");
    crates::check_lists(root)?;
    python::check_sdist_list(root, &version)?;
    workflow::actionlint(root)?;
    println!(
        "release checks (versions, package lists, workflow) passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `target/dist`.
fn dist_dir(root: &Path) -> PathBuf {
    root.join("target/dist")
}

fn local(root: &Path, check: bool, parts: &[Part]) -> Result<()> {
    let started = Instant::now();
    let version = versions::check(root)?;
    println!("==> version {version}");
    let out = dist_dir(root);
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let mut report: Vec<(String, Result<()>, f64)> = Vec::new();
    let build = !check || !out.join(SUMS).exists();
    if !build {
        println!(
            "==> checking the artifacts of the last `cargo xtask dist` (run it again to rebuild)"
        );
    }
    for &part in parts.iter().filter(|_| build) {
        let step = Instant::now();
        println!("==> dist: building {}", part.name());
        let built = match part {
            Part::Python => python::build(root, &out, &version),
            Part::Crates => crates::build(root, &out),
            Part::Cli => cli::build(root, &out, &version),
            Part::Jvm => jvm::build(root, &out),
        };
        if let Err(e) = &built {
            eprintln!("error: building {}: {e:#}", part.name());
        }
        report.push((
            format!("build {}", part.name()),
            built,
            step.elapsed().as_secs_f64(),
        ));
    }
    if build {
        let sums = write_sums(&out);
        if let Err(e) = &sums {
            eprintln!("error: {e:#}");
        }
        report.push(("SHA256SUMS".into(), sums, 0.0));
    }
    if check && report.iter().all(|(_, result, _)| result.is_ok()) {
        let step = Instant::now();
        report.push((
            "check SHA256SUMS".into(),
            verify_sums(&out),
            step.elapsed().as_secs_f64(),
        ));
        for &part in parts {
            let step = Instant::now();
            println!("==> dist --check: {}", part.name());
            let checked = match part {
                Part::Python => python::check(root, &out, &version),
                Part::Crates => crates::check(root, &out),
                Part::Cli => cli::check(root, &out, &version),
                Part::Jvm => jvm::check(root, &out),
            };
            if let Err(e) = &checked {
                eprintln!("error: checking {}: {e:#}", part.name());
            }
            report.push((
                format!("check {}", part.name()),
                checked,
                step.elapsed().as_secs_f64(),
            ));
        }
    }
    println!("\n==> dist summary (target/dist)");
    for (name, result, seconds) in &report {
        let status = match result {
            Ok(()) => "ok".to_string(),
            Err(e) => format!("FAILED: {}", first_line(e)),
        };
        println!("  {name:<18} {seconds:>6.0} s  {status}");
    }
    for line in sizes(&out)? {
        println!("  {line}");
    }
    println!("  total {:.0} s", started.elapsed().as_secs_f64());
    let failed: Vec<&str> = report
        .iter()
        .filter(|(_, result, _)| result.is_err())
        .map(|(name, _, _)| name.as_str())
        .collect();
    if !failed.is_empty() {
        bail!("dist: {} failed", failed.join(", "));
    }
    Ok(())
}

fn first_line(e: &anyhow::Error) -> String {
    format!("{e:#}")
        .lines()
        .next()
        .unwrap_or_default()
        .to_string()
}

/// Every file under `dir`, as paths relative to it with `/`, sorted.
fn files_under(dir: &Path) -> Result<Vec<String>> {
    fn walk(base: &Path, dir: &Path, found: &mut Vec<String>) -> Result<()> {
        for entry in std::fs::read_dir(dir).with_context(|| format!("listing {}", dir.display()))? {
            let path = entry
                .with_context(|| format!("listing {}", dir.display()))?
                .path();
            if path.is_dir() {
                walk(base, &path, found)?;
            } else {
                let relative = path.strip_prefix(base).with_context(|| {
                    format!("{} is not under {}", path.display(), base.display())
                })?;
                let parts: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                found.push(parts.join("/"));
            }
        }
        Ok(())
    }
    let mut found = Vec::new();
    if dir.exists() {
        walk(dir, dir, &mut found)?;
    }
    found.sort();
    Ok(found)
}

fn sha256_file(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut file =
        std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let read = file
            .read(&mut buffer)
            .with_context(|| format!("reading {}", path.display()))?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    Ok(hasher
        .finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect())
}

const SUMS: &str = "SHA256SUMS";

/// `SHA256SUMS` over every file of `target/dist`, in `sha256sum`'s format.
fn write_sums(out: &Path) -> Result<()> {
    let mut text = String::new();
    for file in files_under(out)? {
        if file == SUMS {
            continue;
        }
        text.push_str(&format!("{}  {file}\n", sha256_file(&out.join(&file))?));
    }
    std::fs::write(out.join(SUMS), &text).context("writing target/dist/SHA256SUMS")?;
    println!("wrote target/dist/{SUMS} ({} files)", text.lines().count());
    Ok(())
}

/// Every file listed in `SHA256SUMS` has its checksum, and every file is listed.
fn verify_sums(out: &Path) -> Result<()> {
    let path = out.join(SUMS);
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("reading {} (run `cargo xtask dist`)", path.display()))?;
    let mut listed = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let (sum, file) = line
            .split_once("  ")
            .with_context(|| format!("{SUMS} line {} is not `SUM  FILE`", number + 1))?;
        let actual = sha256_file(&out.join(file))?;
        if actual != sum {
            bail!("{file}: SHA-256 {actual}, {SUMS} says {sum}");
        }
        listed.push(file.to_string());
    }
    listed.sort();
    let present: Vec<String> = files_under(out)?
        .into_iter()
        .filter(|file| file != SUMS)
        .collect();
    if listed != present {
        let missing: Vec<&String> = present.iter().filter(|f| !listed.contains(f)).collect();
        let gone: Vec<&String> = listed.iter().filter(|f| !present.contains(f)).collect();
        bail!("{SUMS} is stale: not listed {missing:?}, listed but absent {gone:?}");
    }
    println!("{SUMS}: {} files verified", listed.len());
    Ok(())
}

/// One line per artifact at the top of each part's folder, with its size.
fn sizes(out: &Path) -> Result<Vec<String>> {
    let mut lines = Vec::new();
    for file in files_under(out)? {
        if file.matches('/').count() != 1 {
            continue;
        }
        let bytes = std::fs::metadata(out.join(&file))
            .with_context(|| format!("reading {file}"))?
            .len();
        lines.push(format!("{file:<70} {:>7.2} MiB", mib(bytes)));
    }
    Ok(lines)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Runs a command to its end, its output shown; fails naming it.
fn run_step(name: &str, command: &mut Command) -> Result<()> {
    println!("==> {name}: {}", describe(command));
    let status = command
        .status()
        .with_context(|| format!("{name}: could not run {}", describe(command)))?;
    if !status.success() {
        bail!("{name} failed ({status}): {}", describe(command));
    }
    Ok(())
}

/// Runs a command and returns its stdout; on failure the error carries its stderr.
fn output(name: &str, command: &mut Command) -> Result<String> {
    let result = command
        .output()
        .with_context(|| format!("{name}: could not run {}", describe(command)))?;
    if !result.status.success() {
        bail!(
            "{name} failed ({}): {}\n{}{}",
            result.status,
            describe(command),
            String::from_utf8_lossy(&result.stdout),
            String::from_utf8_lossy(&result.stderr)
        );
    }
    String::from_utf8(result.stdout).with_context(|| format!("{name}: output is not UTF-8"))
}

fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// An empty folder (removed first when present).
fn fresh_dir(dir: &Path) -> Result<()> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        assert_eq!(
            parse(&[]).ok(),
            Some(Mode::Local {
                check: false,
                parts: PARTS.to_vec()
            })
        );
        assert_eq!(
            parse(&["--check", "--only", "cli,python"]).ok(),
            Some(Mode::Local {
                check: true,
                parts: vec![Part::Python, Part::Cli]
            })
        );
        assert_eq!(
            parse(&["--hosted", "python", "--target", "universal2-apple-darwin"]).ok(),
            Some(Mode::HostedPython {
                target: Some("universal2-apple-darwin".into())
            })
        );
        assert_eq!(parse(&["--ci"]).ok(), Some(Mode::Ci));
        assert!(parse(&["--only", "wheels"]).is_err());
        assert!(parse(&["--target", "x"]).is_err());
        assert!(parse(&["--hosted", "jvm"]).is_err());
    }

    #[test]
    fn sums_round_trip_and_catch_changes() {
        let dir = std::env::temp_dir().join(format!("xtask-dist-sums-{}", std::process::id()));
        fresh_dir(&dir.join("a")).expect("a folder");
        std::fs::write(dir.join("a/one.txt"), "one").expect("a file");
        std::fs::write(dir.join("two.txt"), "two").expect("a file");
        write_sums(&dir).expect("sums");
        let text = std::fs::read_to_string(dir.join(SUMS)).expect("SHA256SUMS");
        assert!(text.contains("  a/one.txt\n"), "{text}");
        verify_sums(&dir).expect("verified");
        std::fs::write(dir.join("a/one.txt"), "changed").expect("a file");
        assert!(verify_sums(&dir).is_err());
        write_sums(&dir).expect("sums");
        std::fs::write(dir.join("three.txt"), "new").expect("a file");
        assert!(verify_sums(&dir).is_err());
        std::fs::remove_dir_all(&dir).expect("cleaned up");
    }
}
