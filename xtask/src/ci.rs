//! `cargo xtask ci` and `cargo xtask validate`.
//!
//! CI runs on a fresh machine that has only the toolchains, so this installs what it
//! needs (Python packages in a virtual environment under `target/`), never globally.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

const DOCUMENTS: &[&str] = &[
    "openapi/cloud.yaml",
    "openapi/notification.yaml",
    "openapi/ins-device.yaml",
];

/// How many tests of one test binary run at once in CI.
const TEST_THREADS: &str = "8";

/// Python packages the checks use, pinned.
const PYTHON_PACKAGES: &[&str] = &[
    "openapi-spec-validator==0.9.0",
    "PyYAML>=6",
    "schemathesis==4.32.5",
];

pub fn run(root: &Path) -> Result<()> {
    let mut phases = Phases::default();
    phases.time("rustfmt", || {
        step(root, "rustfmt", "cargo", &["fmt", "--all", "--check"])
    })?;
    phases.time("clippy", || {
        step(
            root,
            "clippy",
            "cargo",
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
        )
    })?;
    phases.time("generated code, OpenAPI documents", || {
        println!("==> generated code is up to date");
        crate::generate(true)?;
        validate_documents(root)
    })?;
    // The release's cheap checks (nothing compiled): one version everywhere, the sdist's
    // and the crate packages' file lists, the hosted runners' workflow (actionlint).
    phases.time("release checks", || crate::dist::ci_checks(root))?;
    phases.time("workspace tests", || {
        // Most integration tests wait on sockets, timers and child processes, not on the
        // CPU: 8 at a time instead of one a core takes the suites from 4 minutes to under
        // 2 on 2 cores (libtest's own setting, which the criterion benches ignore).
        step_with(
            root,
            "tests",
            "cargo",
            &["test", "--workspace", "--all-targets", "--locked"],
            &[("RUST_TEST_THREADS", TEST_THREADS)],
        )?;
        step(
            root,
            "doc tests",
            "cargo",
            &["test", "--workspace", "--doc", "--locked"],
        )
    })?;
    phases.time("python package", || crate::python::run(root))?;
    // The documentation site: mkdocs --strict and rustdoc -D warnings (about 1 min).
    phases.time("docs", || crate::docs::run(root))?;
    phases.time("kotlin and swift", || crate::mobile::ci(root))?;
    phases.time("conformance (schemathesis)", || conformance(root))?;
    // 64 clients, 2 s warm-up + 3 s per scenario on the debug emulator (~20 s).
    phases.time("load", || crate::load::ci(root))?;
    // Every fuzz target for a few seconds after building them (see fuzz.rs).
    phases.time("fuzzing", || crate::fuzz::ci(root))?;
    phases.time("sample dataset", || sample_is_reproducible(root))?;
    phases.print();
    println!("==> all checks passed");
    Ok(())
}

/// How long each phase of the run took, printed at its end (the phases to trim first).
#[derive(Default)]
struct Phases(Vec<(&'static str, std::time::Duration)>);

impl Phases {
    fn time(&mut self, name: &'static str, phase: impl FnOnce() -> Result<()>) -> Result<()> {
        let started = std::time::Instant::now();
        let outcome = phase();
        self.0.push((name, started.elapsed()));
        if outcome.is_err() {
            self.print();
        }
        outcome
    }

    fn print(&self) {
        println!("==> time per phase");
        let total: std::time::Duration = self.0.iter().map(|(_, d)| *d).sum();
        for (name, took) in &self.0 {
            println!("{name:<30} {:>6.0} s", took.as_secs_f64());
        }
        println!("{:<30} {:>6.0} s", "in all", total.as_secs_f64());
    }
}

fn step(root: &Path, name: &str, program: &str, args: &[&str]) -> Result<()> {
    step_with(root, name, program, args, &[])
}

/// [`step`] with environment variables set for the program.
fn step_with(
    root: &Path,
    name: &str,
    program: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> Result<()> {
    let shown: Vec<String> = envs.iter().map(|(k, v)| format!("{k}={v} ")).collect();
    println!("==> {name}: {}{program} {}", shown.concat(), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(root)
        .status()
        .with_context(|| format!("could not run {program}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

/// Every answer of the emulator checked against the documents by schemathesis.
fn conformance(root: &Path) -> Result<()> {
    step(
        root,
        "emulator binary",
        "cargo",
        &[
            "build",
            "-p",
            "svc-emulator",
            "--bin",
            "svc-emulator",
            "--locked",
        ],
    )?;
    let python = python_env(root)?;
    let script = root
        .join("openapi/schemathesis_emulator.py")
        .to_string_lossy()
        .into_owned();
    let binary = root
        .join("target/debug/svc-emulator")
        .to_string_lossy()
        .into_owned();
    step(
        root,
        "schemathesis",
        &python.to_string_lossy(),
        &[&script, &binary, "--max-examples", "25"],
    )
}

/// The committed sample dataset is exactly what its script writes.
fn sample_is_reproducible(root: &Path) -> Result<()> {
    let out = root.join("target/sample-check");
    std::fs::create_dir_all(&out).context("creating target/sample-check")?;
    let script = root
        .join("samples/make_sample.py")
        .to_string_lossy()
        .into_owned();
    step(
        root,
        "sample dataset",
        "python3",
        &[&script, "--out", &out.to_string_lossy()],
    )?;
    for name in ["rover.nmea", "imu.csv"] {
        let committed = std::fs::read(root.join("samples").join(name))
            .with_context(|| format!("samples/{name}"))?;
        let fresh = std::fs::read(out.join(name)).with_context(|| format!("regenerated {name}"))?;
        if committed != fresh {
            bail!(
                "samples/{name} differs from what samples/make_sample.py writes; run it and commit the result"
            );
        }
    }
    println!("samples/ matches samples/make_sample.py");
    Ok(())
}

/// A Python virtual environment under target/ with the validator installed.
fn python_env(root: &Path) -> Result<PathBuf> {
    let venv = root.join("target/ci-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        step(
            root,
            "python venv",
            "python3",
            &["-m", "venv", &venv.to_string_lossy()],
        )?;
    }
    let marker = venv.join(".installed");
    let wanted = PYTHON_PACKAGES.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        let mut args = vec![
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ];
        args.extend_from_slice(PYTHON_PACKAGES);
        step(root, "python packages", &python.to_string_lossy(), &args)?;
        std::fs::write(&marker, wanted).context("writing the venv marker")?;
    }
    Ok(python)
}

/// Validates the three documents with openapi-spec-validator (a real OpenAPI 3.0.3
/// validator, which also resolves every `$ref`), then checks the generator conventions.
pub fn validate_documents(root: &Path) -> Result<()> {
    println!("==> OpenAPI documents");
    let python = python_env(root)?;
    let script = root.join("openapi/validate.py");
    let mut args = vec![script.to_string_lossy().into_owned()];
    args.extend(
        DOCUMENTS
            .iter()
            .map(|d| root.join(d).to_string_lossy().into_owned()),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    step(
        root,
        "openapi-spec-validator",
        &python.to_string_lossy(),
        &args,
    )?;
    for doc in DOCUMENTS {
        crate::generate::check_conventions(&crate::generate::load(root, doc)?)?;
    }
    println!("conventions hold in {} documents", DOCUMENTS.len());
    Ok(())
}
