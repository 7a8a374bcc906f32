//! Project tasks: `cargo xtask <task>`.
//!
//! - `generate [--check]`: regenerate the API crates from `openapi/` and refresh the
//!   in-crate copies of the documents crates embed (or fail on drift).
//! - `validate`: validate the OpenAPI documents with a real OpenAPI 3.0.3 validator.
//! - `bindings kotlin|swift`, `kotlin`, `swift`: the mobile bindings (see `mobile.rs`).
//! - `python`: build the Python package's release wheel and run its checks.
//! - `load [--seconds N] [--clients N]`: load against the emulator binary (see `load/`).
//! - `fuzz [--seconds N] [target...]`: the cargo-fuzz targets of `fuzz/` (see `fuzz.rs`).
//! - `faults [--workflows N] [--seed N]`: svc-core's fault and scale suites with their
//!   figures, the heavy scale variant included (see `faults.rs`).
//! - `dist [--check] [--only PART,...]`: the release artifacts into `target/dist/`, with
//!   `SHA256SUMS` (`--check`: verify them; see `dist/`).
//! - `docs`: the documentation site into `target/site/` (mkdocs `--strict` and rustdoc
//!   `-D warnings`; see `docs.rs`).
//! - `ci`: everything CI runs, in order, installing what it needs.

mod ci;
mod dist;
mod docs;
mod faults;
mod fuzz;
mod generate;
mod load;
mod mobile;
mod python;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["generate"] => generate(false),
        ["generate", "--check"] => generate(true),
        ["validate"] => ci::validate_documents(&root()),
        ["bindings", language] => mobile::bindings(&root(), language).map(|_| ()),
        ["kotlin"] => mobile::kotlin(&root()),
        ["kotlin-bench"] => mobile::kotlin_bench(&root()),
        ["swift"] => mobile::swift(&root()),
        ["python"] => python::run(&root()),
        ["docs"] => docs::run(&root()),
        ["ci"] => ci::run(&root()),
        ["dist", rest @ ..] => dist::run(&root(), rest),
        ["load", rest @ ..] => load::run(&root(), rest),
        ["fuzz", rest @ ..] => fuzz::run(&root(), rest),
        ["faults", rest @ ..] => faults::run(&root(), rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <task>\n\n  generate [--check]  regenerate crates/*/src/generated and the \
                 embedded document copies from openapi/\n                      (--check: fail if the committed \
                 code or a copy is stale)\n  validate            validate the OpenAPI \
                 documents (openapi-spec-validator)\n  ci                  fmt, clippy, generate --check, validate, tests"
            );
            eprintln!(
                "  bindings kotlin|swift  generate the uniffi bindings into target/bindings/\n  \
                 kotlin              the Kotlin bindings' Maven suite against the emulator\n  \
                 kotlin-bench        the settings diff through the Kotlin binding vs pure Kotlin\n  \
                 swift               the Swift package's tests in a Debian trixie folder with swiftlang\n  \
                 python              the Python package: release wheel, pytest, mypy, stubtest\n  \
                 docs                the documentation site (mkdocs --strict, rustdoc -D warnings) into target/site\n  \
                 load [--seconds N] [--clients N] [--warmup S] [--check] [--debug]\n                      \
                 64 clients against the emulator: latency, requests/s, errors, memory\n  \
                 fuzz [--seconds N] [target...]\n                      \
                 the cargo-fuzz targets (nightly), 10^7 executions each unless --seconds\n  \
                 faults [--workflows N] [--seed N]\n                      \
                 the fault and scale suites with their figures, 1000 workflows at 20 % faults\n  \
                 dist [--check] [--only python,crates,cli,jvm]\n                      \
                 release artifacts into target/dist/ with SHA256SUMS (--check: verify them)"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root (the parent of this crate's folder), or `XTASK_ROOT` when set
/// (used by xtask's own tests to generate from scratch documents).
pub fn root() -> PathBuf {
    if let Some(dir) = std::env::var_os("XTASK_ROOT") {
        return PathBuf::from(dir);
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn generate(check: bool) -> Result<()> {
    let root = root();
    let outputs = generate::generate_all(&root)?;
    let mut stale = Vec::new();
    for out in &outputs {
        let path = root.join(&out.path);
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        if current == out.contents {
            continue;
        }
        if check {
            let diff = similar::TextDiff::from_lines(&current, &out.contents)
                .unified_diff()
                .context_radius(3)
                .header(
                    &format!("{} (committed)", out.path),
                    &format!("{} (generated)", out.path),
                )
                .to_string();
            let shown: String = diff.lines().take(200).map(|l| format!("{l}\n")).collect();
            eprintln!("{shown}");
            if diff.lines().count() > 200 {
                eprintln!("... ({} more diff lines)", diff.lines().count() - 200);
            }
            stale.push(out.path.clone());
        } else {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            std::fs::write(&path, &out.contents)
                .with_context(|| format!("writing {}", out.path))?;
            println!("wrote {}", out.path);
        }
    }
    if !stale.is_empty() {
        bail!(
            "generated code is stale: {} differ from what openapi/ produces.\n\
             Run `cargo xtask generate` and commit the result.",
            stale.join(", ")
        );
    }
    if check {
        println!("generated code is up to date ({} files)", outputs.len());
    }
    Ok(())
}
