//! `cargo xtask python`: the Python package `svc-sdk` (`bindings/python`) built as a
//! release abi3 wheel and checked as it will be installed.
//!
//! 1. a virtual environment under `target/python-venv` with the pinned tools of
//!    `bindings/python/requirements-dev.txt` (installed again only when that file
//!    changes);
//! 2. `maturin build --release --zig` with the manylinux audit ([`COMPATIBILITY`]): the
//!    wheel must not need a newer glibc than that, nor a shared library outside the
//!    wheel. The build machine's glibc is newer (2.36 here, whose symbols the audit
//!    refuses), so the extension is linked by zig (the `ziglang` package from PyPI)
//!    against the glibc of the policy;
//! 3. the wheel at most [`MAX_WHEEL_BYTES`];
//! 4. the wheel installed into the venv, then pytest (with the `svc` binary built: the
//!    workflow tests compare their outputs with its), `mypy --strict` (examples, tests,
//!    benchmarks), `mypy.stubtest` (the stubs against the compiled module), short runs
//!    of the settings and live-batches benchmarks, and the import time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The manylinux policy the wheel is audited against (glibc 2.28: RHEL/Rocky 8, Debian
/// 10, Ubuntu 18.10 and later).
const COMPATIBILITY: &str = "manylinux_2_28";

/// The largest wheel accepted.
const MAX_WHEEL_BYTES: u64 = 10 * 1024 * 1024;

const PACKAGE: &str = "bindings/python";

pub fn run(root: &Path) -> Result<()> {
    let started = Instant::now();
    let python = venv(root)?;
    let wheel = build_wheel(root, &python)?;
    install(root, &python, &wheel)?;
    checks(root, &python)?;
    println!(
        "python package checked in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

fn run_in(dir: &Path, name: &str, program: &Path, args: &[&str]) -> Result<()> {
    println!("==> {name}: {} {}", program.display(), args.join(" "));
    let status = Command::new(program)
        .args(args)
        .current_dir(dir)
        .status()
        .with_context(|| format!("could not run {}", program.display()))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

/// `target/python-venv` with the pinned check tools; its python.
fn venv(root: &Path) -> Result<PathBuf> {
    let venv = root.join("target/python-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        run_in(
            root,
            "python venv",
            Path::new("python3"),
            &["-m", "venv", &venv.to_string_lossy()],
        )?;
    }
    let requirements = root.join(PACKAGE).join("requirements-dev.txt");
    let wanted = std::fs::read_to_string(&requirements)
        .with_context(|| format!("reading {}", requirements.display()))?;
    let marker = venv.join(".requirements-dev.txt");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        run_in(
            root,
            "python tools",
            &python,
            &[
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
                &requirements.to_string_lossy(),
            ],
        )?;
        std::fs::write(&marker, wanted).context("writing the venv marker")?;
    }
    Ok(python)
}

/// Builds the release wheel into `target/wheels/python` (emptied first) and returns it.
fn build_wheel(root: &Path, python: &Path) -> Result<PathBuf> {
    // maturin finds zig as `python -m ziglang` of the first python on the PATH: the venv's.
    let bin = python.parent().unwrap_or(root);
    let path = std::env::join_paths(
        std::iter::once(bin.to_path_buf()).chain(
            std::env::var_os("PATH")
                .iter()
                .flat_map(std::env::split_paths),
        ),
    )
    .context("building the PATH")?;
    let out = root.join("target/wheels/python");
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("emptying {}", out.display()))?;
    }
    let started = Instant::now();
    let args = [
        "-m",
        "maturin",
        "build",
        "--release",
        "--locked",
        "--zig",
        "--compatibility",
        COMPATIBILITY,
        "--out",
        &out.to_string_lossy(),
    ];
    println!("==> wheel: {} {}", python.display(), args.join(" "));
    let status = Command::new(python)
        .args(args)
        .current_dir(root.join(PACKAGE))
        .env("PATH", path)
        .status()
        .with_context(|| format!("could not run {}", python.display()))?;
    if !status.success() {
        bail!("the wheel build failed ({status})");
    }
    println!("wheel built in {:.0} s", started.elapsed().as_secs_f64());
    let wheels: Vec<PathBuf> = std::fs::read_dir(&out)
        .with_context(|| format!("listing {}", out.display()))?
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "whl"))
        .collect();
    let [wheel] = wheels.as_slice() else {
        bail!(
            "expected one wheel in {}, found {}",
            out.display(),
            wheels.len()
        );
    };
    let name = wheel
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains("abi3") || !name.contains(COMPATIBILITY) {
        bail!("{name} is not an abi3 {COMPATIBILITY} wheel");
    }
    let size = std::fs::metadata(wheel)
        .with_context(|| format!("reading {}", wheel.display()))?
        .len();
    println!("{name}: {:.1} MiB", size as f64 / (1024.0 * 1024.0));
    if size > MAX_WHEEL_BYTES {
        bail!(
            "{name} is {size} bytes, over the {} MiB limit",
            MAX_WHEEL_BYTES / (1024 * 1024)
        );
    }
    Ok(wheel.clone())
}

fn install(root: &Path, python: &Path, wheel: &Path) -> Result<()> {
    run_in(
        root,
        "install the wheel",
        python,
        &[
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--force-reinstall",
            "--no-deps",
            &wheel.to_string_lossy(),
        ],
    )
}

fn checks(root: &Path, python: &Path) -> Result<()> {
    // Run from the package folder: tests import the installed package (there is no
    // `svc_sdk` folder there, the sources are under python/).
    let package = root.join(PACKAGE);
    // The workflow tests compare outputs with those of `svc`, built (or found up to
    // date) as `cargo test` builds it; `CARGO_TARGET_DIR` moves it.
    crate::mobile::build_as_tests(root)?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), |dir| root.join(dir));
    crate::mobile::run(
        &package,
        "pytest",
        Command::new(python)
            // Four workers (pytest-xdist): the tests mostly wait on emulators, so even on
            // 2 cores this takes the suite from 2 minutes to 40 s; each worker starts its
            // own session emulators, as a user's parallel suite does with the plugin.
            .args(["-m", "pytest", "-q", "-n", "4", "tests"])
            .env("SVC_BIN", target.join("debug/svc")),
    )?;
    let mut typed: Vec<String> = vec!["tests".into(), "benchmarks".into()];
    let examples = package.join("examples");
    if let Ok(entries) = std::fs::read_dir(&examples) {
        let mut files: Vec<String> = entries
            .filter_map(|entry| entry.ok().map(|entry| entry.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "py"))
            .map(|path| path.to_string_lossy().into_owned())
            .collect();
        files.sort();
        typed.extend(files);
    }
    let mut args = vec!["-m", "mypy", "--strict"];
    args.extend(typed.iter().map(String::as_str));
    run_in(&package, "mypy --strict", python, &args)?;
    run_in(
        &package,
        "stubtest",
        python,
        &["-m", "mypy.stubtest", "svc_sdk"],
    )?;
    run_in(
        &package,
        "settings benchmark (short run)",
        python,
        &["benchmarks/bench_settings.py", "--quick"],
    )?;
    run_in(
        &package,
        "live batches benchmark (short run)",
        python,
        &["benchmarks/bench_live.py", "--quick"],
    )?;
    run_in(
        &package,
        "import time",
        python,
        &[
            "-c",
            "import subprocess, sys, time\n\
             best = min(\n\
                 float(subprocess.run([sys.executable, '-c', \
             'import time; t = time.perf_counter(); import svc_sdk; print(time.perf_counter() - t)'], \
             check=True, capture_output=True, text=True).stdout)\n\
                 for _ in range(5))\n\
             print(f'import svc_sdk: {best * 1000:.0f} ms')\n\
             sys.exit(0 if best < 0.15 else 'import svc_sdk takes over 150 ms')",
        ],
    )
}
