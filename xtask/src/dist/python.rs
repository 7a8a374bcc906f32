//! The Python package `svc-sdk`: abi3 wheels (CPython 3.9+) for every platform this
//! machine can build, and the sdist, into `target/dist/python/`.
//!
//! | wheel | target | linked by | audit |
//! |---|---|---|---|
//! | `manylinux_2_28_x86_64`, `manylinux_2_28_aarch64` | `*-unknown-linux-gnu` | zig, against glibc 2.28 | maturin's manylinux audit |
//! | `musllinux_1_2_x86_64`, `musllinux_1_2_aarch64` | `*-unknown-linux-musl` | zig | maturin's musllinux audit |
//! | `win_amd64` | `x86_64-pc-windows-gnu` | mingw-w64; pyo3 writes python3.dll's import library (feature `generate-import-lib`) | its DLL imports: Windows' own and python3.dll only |
//!
//! The checks: the expected files and nothing else, each wheel at most
//! [`MAX_WHEEL_BYTES`], its metadata as an index shows it, the shared libraries each
//! Linux extension needs (its C library's only) and auditwheel's verdict on the manylinux
//! wheels (it resolves libraries on this glibc machine, so not the musllinux ones), the x86_64 wheel installed and smoke-tested (`smoke.py`: import, a
//! settings diff, a workflow on the in-process emulator) in a fresh venv, the aarch64
//! manylinux wheel the same under qemu-user with Debian's arm64 CPython, and the sdist's
//! file list, then the sdist installed from scratch in a fresh venv (compiling the
//! extension) and smoke-tested.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::tools::{self, Venv};
use super::{mib, output, run_step};

/// The largest wheel accepted.
const MAX_WHEEL_BYTES: u64 = 10 * 1024 * 1024;

/// The largest sdist accepted (the crates' sources; nothing built).
const MAX_SDIST_BYTES: u64 = 10 * 1024 * 1024;

const PACKAGE: &str = "bindings/python";

/// The Rust package of the extension (its path dependencies go into the sdist).
const CRATE: &str = "svc-python";

const SMOKE: &str = include_str!("smoke.py");
const INSPECT: &str = include_str!("inspect_wheel.py");

struct Wheel {
    target: &'static str,
    /// maturin's `--compatibility` (audited), for Linux.
    compatibility: Option<&'static str>,
    /// The wheel's platform tag.
    platform: &'static str,
}

const WHEELS: [Wheel; 5] = [
    Wheel {
        target: "x86_64-unknown-linux-gnu",
        compatibility: Some("manylinux_2_28"),
        platform: "manylinux_2_28_x86_64",
    },
    Wheel {
        target: "aarch64-unknown-linux-gnu",
        compatibility: Some("manylinux_2_28"),
        platform: "manylinux_2_28_aarch64",
    },
    Wheel {
        target: "x86_64-unknown-linux-musl",
        compatibility: Some("musllinux_1_2"),
        platform: "musllinux_1_2_x86_64",
    },
    Wheel {
        target: "aarch64-unknown-linux-musl",
        compatibility: Some("musllinux_1_2"),
        platform: "musllinux_1_2_aarch64",
    },
    Wheel {
        target: "x86_64-pc-windows-gnu",
        compatibility: None,
        platform: "win_amd64",
    },
];

fn wheel_name(version: &str, platform: &str) -> String {
    format!("svc_sdk-{version}-cp39-abi3-{platform}.whl")
}

fn sdist_name(version: &str) -> String {
    format!("svc_sdk-{version}.tar.gz")
}

fn maturin(venv: &Venv, root: &Path) -> Result<Command> {
    let mut command = Command::new(&venv.python);
    command
        .args(["-m", "maturin"])
        .current_dir(root.join(PACKAGE))
        .env("PATH", venv.path()?);
    Ok(command)
}

pub fn build(root: &Path, out: &Path, version: &str) -> Result<()> {
    tools::rust_targets(
        root,
        &WHEELS.iter().map(|wheel| wheel.target).collect::<Vec<_>>(),
    )?;
    tools::apt(&["mingw-w64"])?;
    let venv = tools::venv(root)?;
    let dir = out.join("python");
    super::fresh_dir(&dir)?;
    for wheel in &WHEELS {
        let started = std::time::Instant::now();
        let mut command = maturin(&venv, root)?;
        command
            .args(["build", "--release", "--locked", "--target", wheel.target])
            .arg("--out")
            .arg(&dir);
        match wheel.compatibility {
            Some(policy) => {
                command.args(["--zig", "--compatibility", policy]);
            }
            // No Windows Python to link against: pyo3 generates python3.dll's import
            // library (mingw-w64 links).
            None => {
                command.args(["--features", "generate-import-lib"]);
            }
        }
        run_step(&format!("wheel {}", wheel.platform), &mut command)?;
        let name = wheel_name(version, wheel.platform);
        let size =
            size_of(&dir.join(&name)).with_context(|| format!("maturin did not write {name}"))?;
        println!(
            "{name}: {:.2} MiB in {:.0} s",
            mib(size),
            started.elapsed().as_secs_f64()
        );
        if size > MAX_WHEEL_BYTES {
            bail!("{name} is {size} bytes, over {MAX_WHEEL_BYTES}");
        }
    }
    run_step(
        "sdist",
        maturin(&venv, root)?.arg("sdist").arg("--out").arg(&dir),
    )?;
    let sdist = sdist_name(version);
    size_of(&dir.join(&sdist)).with_context(|| format!("maturin did not write {sdist}"))?;
    Ok(())
}

fn size_of(path: &Path) -> Result<u64> {
    Ok(std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len())
}

pub fn check(root: &Path, out: &Path, version: &str) -> Result<()> {
    let venv = tools::venv(root)?;
    let dir = out.join("python");
    let work = root.join("target/dist-check/python");
    super::fresh_dir(&work)?;

    // The files: five wheels and the sdist, nothing else, within their sizes.
    let mut expected: BTreeSet<String> = WHEELS
        .iter()
        .map(|wheel| wheel_name(version, wheel.platform))
        .collect();
    expected.insert(sdist_name(version));
    let present: BTreeSet<String> = super::files_under(&dir)?.into_iter().collect();
    if present != expected {
        bail!("target/dist/python holds {present:?}, expected {expected:?}");
    }
    for name in &present {
        let size = size_of(&dir.join(name))?;
        let limit = if name.ends_with(".whl") {
            MAX_WHEEL_BYTES
        } else {
            MAX_SDIST_BYTES
        };
        if size > limit {
            bail!("{name} is {size} bytes, over {limit}");
        }
        println!("{name}: {:.2} MiB (limit {:.0} MiB)", mib(size), mib(limit));
    }

    // What an index shows, and the audit of each wheel.
    let inspect = work.join("inspect_wheel.py");
    std::fs::write(&inspect, INSPECT).context("writing inspect_wheel.py")?;
    for wheel in &WHEELS {
        let name = wheel_name(version, wheel.platform);
        let path = dir.join(&name);
        let extracted = work.join(wheel.platform);
        let text = output(
            "read the wheel",
            Command::new(&venv.python)
                .arg(&inspect)
                .arg(&path)
                .arg(&extracted),
        )?;
        let inspected: serde_json::Value =
            serde_json::from_str(&text).context("reading inspect_wheel.py's output")?;
        let problems = metadata_problems(&inspected, version, wheel.compatibility.is_none());
        if !problems.is_empty() {
            bail!("{name}:\n  {}", problems.join("\n  "));
        }
        match wheel.compatibility {
            Some(policy) => {
                let musl = policy.starts_with("musllinux");
                linux_needed(&extracted.join("svc_sdk/_native.abi3.so"), musl)?;
                // auditwheel resolves libraries on this (glibc) machine: it can judge the
                // manylinux wheels, not the musllinux ones (maturin audited those).
                if !musl {
                    auditwheel(&venv, &path, wheel.platform)?;
                }
            }
            None => windows_imports(&extracted.join("svc_sdk/_native.pyd"))?,
        }
    }

    let script = work.join("smoke.py");
    std::fs::write(&script, SMOKE).context("writing smoke.py")?;
    let samples = root.join("samples");

    // The x86_64 wheel in a fresh venv of this machine's CPython.
    let host = fresh_venv(&work.join("venv-wheel"))?;
    install(
        &host,
        &dir.join(wheel_name(version, "manylinux_2_28_x86_64")),
    )?;
    run_step(
        "smoke test: x86_64 wheel",
        Command::new(&host)
            .arg(&script)
            .arg(version)
            .arg(&samples)
            .current_dir(&work),
    )?;

    // The aarch64 wheel, installed by pip for that platform, under qemu-user.
    let arm64 = tools::arm64_python(root)?;
    let site = work.join("site-aarch64");
    run_step(
        "install the aarch64 wheel",
        Command::new(&host)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
                "--only-binary=:all:",
                "--platform",
                "manylinux_2_28_aarch64",
                "--implementation",
                "cp",
                "--python-version",
                "3.9",
                "--target",
            ])
            .arg(&site)
            .arg(dir.join(wheel_name(version, "manylinux_2_28_aarch64"))),
    )?;
    run_step(
        "smoke test: aarch64 wheel under qemu-user",
        arm64
            .command()
            .arg(&script)
            .arg(version)
            .arg(&samples)
            .env("PYTHONPATH", &site)
            .current_dir(&work),
    )?;

    // The sdist: its file list, then built from scratch in a fresh venv.
    let sdist = dir.join(sdist_name(version));
    check_sdist_file(root, &sdist, version)?;
    let from_source = fresh_venv(&work.join("venv-sdist"))?;
    let started = std::time::Instant::now();
    run_step(
        "install the sdist (compiles the extension)",
        Command::new(&from_source)
            .args([
                "-m",
                "pip",
                "install",
                "--disable-pip-version-check",
                "--no-cache-dir",
            ])
            .arg(&sdist)
            // The crates.io downloads and compiled dependencies are kept between runs;
            // the sdist's own crates are compiled from its sources each time.
            .env(
                "CARGO_TARGET_DIR",
                root.join("target/dist-tools/sdist-target"),
            ),
    )?;
    println!(
        "sdist installed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    run_step(
        "smoke test: the sdist's build",
        Command::new(&from_source)
            .arg(&script)
            .arg(version)
            .arg(&samples)
            .current_dir(&work),
    )?;
    Ok(())
}

/// On a hosted runner (macOS, Windows): the host's wheel (or `target`'s, such as
/// `universal2-apple-darwin`) into `target/dist/python/`, installed in a fresh venv and
/// smoke-tested.
pub fn hosted(root: &Path, target: Option<&str>) -> Result<()> {
    let version = super::versions::check(root)?;
    let venv = tools::hosted_venv(root)?;
    if let Some(target) = target {
        let targets: Vec<&str> = match target {
            "universal2-apple-darwin" => vec!["aarch64-apple-darwin", "x86_64-apple-darwin"],
            other => vec![other],
        };
        tools::rust_targets(root, &targets)?;
    }
    let dir = super::dist_dir(root).join("python");
    super::fresh_dir(&dir)?;
    let mut command = maturin(&venv, root)?;
    command
        .args(["build", "--release", "--locked", "--out"])
        .arg(&dir);
    if let Some(target) = target {
        command.args(["--target", target]);
    }
    run_step("wheel for this host", &mut command)?;
    let wheels: Vec<String> = super::files_under(&dir)?
        .into_iter()
        .filter(|name| name.ends_with(".whl"))
        .collect();
    let [wheel] = wheels.as_slice() else {
        bail!("expected one wheel in target/dist/python, found {wheels:?}");
    };
    if !wheel.starts_with(&format!("svc_sdk-{version}-cp39-abi3-")) {
        bail!("{wheel} is not an abi3 wheel of svc_sdk {version}");
    }
    let size = size_of(&dir.join(wheel))?;
    println!("{wheel}: {:.2} MiB", mib(size));
    if size > MAX_WHEEL_BYTES {
        bail!("{wheel} is {size} bytes, over {MAX_WHEEL_BYTES}");
    }
    let work = root.join("target/dist-check/python");
    super::fresh_dir(&work)?;
    let python = fresh_venv(&work.join("venv-wheel"))?;
    install(&python, &dir.join(wheel))?;
    let script = work.join("smoke.py");
    std::fs::write(&script, SMOKE).context("writing smoke.py")?;
    run_step(
        "smoke test",
        Command::new(&python)
            .arg(&script)
            .arg(&version)
            .arg(root.join("samples"))
            .current_dir(&work),
    )?;
    super::write_sums(&super::dist_dir(root))
}

/// A new venv at `dir` (removed first); its python.
fn fresh_venv(dir: &Path) -> Result<PathBuf> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    run_step(
        "fresh venv",
        Command::new(tools::host_python())
            .arg("-m")
            .arg("venv")
            .arg(dir),
    )?;
    Ok(tools::venv_python(dir))
}

fn install(python: &Path, wheel: &Path) -> Result<()> {
    run_step(
        "install the wheel",
        Command::new(python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-deps",
            ])
            .arg(wheel),
    )
}

fn strings<'a>(fields: &'a serde_json::Value, key: &str) -> Vec<&'a str> {
    fields
        .get(key)
        .and_then(serde_json::Value::as_array)
        .map(|items| items.iter().filter_map(serde_json::Value::as_str).collect())
        .unwrap_or_default()
}

/// What is missing from a wheel's metadata and files (`inspect_wheel.py`'s output).
fn metadata_problems(inspected: &serde_json::Value, version: &str, windows: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let fields = inspected.get("fields").cloned().unwrap_or_default();
    let one = |key: &str| strings(&fields, key).first().map(|s| s.to_string());
    let mut expect = |key: &str, wanted: &str| {
        if one(key).as_deref() != Some(wanted) {
            problems.push(format!("{key} is {:?}, expected {wanted:?}", one(key)));
        }
    };
    expect("Name", "svc-sdk");
    expect("Version", version);
    expect("Requires-Python", ">=3.9");
    expect("License-Expression", "Apache-2.0");
    expect(
        "Description-Content-Type",
        "text/markdown; charset=UTF-8; variant=GFM",
    );
    if one("Summary").is_none_or(|summary| summary.is_empty()) {
        problems.push("no Summary".into());
    }
    if !strings(&fields, "License-File").contains(&"LICENSE") {
        problems.push("no License-File: LICENSE".into());
    }
    let classifiers = strings(&fields, "Classifier");
    for wanted in ["Typing :: Typed", "Programming Language :: Rust"] {
        if !classifiers.contains(&wanted) {
            problems.push(format!("no classifier {wanted:?}"));
        }
    }
    let urls = strings(&fields, "Project-URL");
    for label in ["Repository", "Documentation", "Changelog"] {
        if !urls
            .iter()
            .any(|url| url.starts_with(&format!("{label}, ")))
        {
            problems.push(format!("no Project-URL {label}"));
        }
    }
    let extras = strings(&fields, "Provides-Extra");
    for extra in ["pandas", "notebook"] {
        if !extras.contains(&extra) {
            problems.push(format!("no extra {extra}"));
        }
    }
    let description = inspected
        .get("description")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    if !description.contains("pip install svc-sdk") {
        problems.push("the description (README.md) does not say `pip install svc-sdk`".into());
    }
    let files = strings(inspected, "files");
    let extension = if windows {
        "svc_sdk/_native.pyd"
    } else {
        "svc_sdk/_native.abi3.so"
    };
    let license = format!("svc_sdk-{version}.dist-info/licenses/LICENSE");
    for wanted in [
        "svc_sdk/__init__.py",
        "svc_sdk/py.typed",
        "svc_sdk/_native.pyi",
        extension,
        license.as_str(),
    ] {
        if !files.contains(&wanted) {
            problems.push(format!("does not hold {wanted}"));
        }
    }
    problems
}

/// auditwheel (pypa's) agrees that the wheel meets its platform tag's policy.
fn auditwheel(venv: &Venv, wheel: &Path, platform: &str) -> Result<()> {
    let shown = output(
        "auditwheel show",
        Command::new(venv.bin.join("auditwheel"))
            .arg("show")
            .arg(wheel),
    )?;
    let flat = shown.split_whitespace().collect::<Vec<_>>().join(" ");
    if !flat.contains(&format!("\"{platform}\"")) {
        bail!(
            "auditwheel does not find {platform} for {}:\n{shown}",
            wheel.display()
        );
    }
    println!("auditwheel: consistent with {platform}");
    Ok(())
}

/// The shared libraries a Linux extension may need: the C library's own (glibc's, or
/// musl's single `libc.so`), nothing a machine may lack.
fn linux_library_allowed(library: &str, musl: bool) -> bool {
    const GLIBC: [&str; 9] = [
        "libc.so.6",
        "libm.so.6",
        "libpthread.so.0",
        "libdl.so.2",
        "libutil.so.1",
        "librt.so.1",
        "libgcc_s.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
    ];
    if musl {
        library == "libc.so"
    } else {
        GLIBC.contains(&library)
    }
}

fn linux_needed(extension: &Path, musl: bool) -> Result<()> {
    let dump = output("objdump", Command::new("objdump").arg("-p").arg(extension))?;
    let needed: Vec<&str> = dump
        .lines()
        .filter_map(|line| line.trim().strip_prefix("NEEDED"))
        .map(str::trim)
        .collect();
    if needed.is_empty() {
        bail!(
            "{} needs no shared library: not a dynamic extension?",
            extension.display()
        );
    }
    let foreign: Vec<&&str> = needed
        .iter()
        .filter(|library| !linux_library_allowed(library, musl))
        .collect();
    if !foreign.is_empty() {
        bail!(
            "{} needs libraries outside the {} policy: {foreign:?}",
            extension.display(),
            if musl { "musllinux" } else { "manylinux" }
        );
    }
    println!("{}: needs {}", extension.display(), needed.join(", "));
    Ok(())
}

/// The DLLs a Windows extension may import: Windows' own and the stable ABI's
/// python3.dll (not a version's python3X.dll, nor mingw's runtime DLLs, which a
/// Windows machine does not have).
fn windows_dll_allowed(dll: &str) -> bool {
    let dll = dll.to_ascii_lowercase();
    const SYSTEM: [&str; 20] = [
        "kernel32.dll",
        "ntdll.dll",
        "advapi32.dll",
        "bcrypt.dll",
        "bcryptprimitives.dll",
        "cfgmgr32.dll",
        "crypt32.dll",
        "dbghelp.dll",
        "iphlpapi.dll",
        "msvcrt.dll",
        "ncrypt.dll",
        "ole32.dll",
        "oleaut32.dll",
        "secur32.dll",
        "setupapi.dll",
        "shell32.dll",
        "user32.dll",
        "userenv.dll",
        "ws2_32.dll",
        "powrprof.dll",
    ];
    dll == "python3.dll" || dll.starts_with("api-ms-win-") || SYSTEM.contains(&dll.as_str())
}

fn windows_imports(pyd: &Path) -> Result<()> {
    let dump = output(
        "objdump",
        Command::new("x86_64-w64-mingw32-objdump")
            .arg("-p")
            .arg(pyd),
    )?;
    let dlls: Vec<&str> = dump
        .lines()
        .filter_map(|line| line.trim().strip_prefix("DLL Name: "))
        .collect();
    if !dlls
        .iter()
        .any(|dll| dll.eq_ignore_ascii_case("python3.dll"))
    {
        bail!(
            "{} does not import python3.dll (the stable ABI): {dlls:?}",
            pyd.display()
        );
    }
    let foreign: Vec<&&str> = dlls
        .iter()
        .filter(|dll| !windows_dll_allowed(dll))
        .collect();
    if !foreign.is_empty() {
        bail!(
            "{} imports DLLs a Windows machine may not have: {foreign:?}",
            pyd.display()
        );
    }
    println!("win_amd64: imports {}", dlls.join(", "));
    Ok(())
}

/// The crates the extension is built from: the path dependencies of [`CRATE`], direct or
/// not (dev-dependencies aside), as folders relative to the workspace root.
fn source_crates(root: &Path) -> Result<Vec<String>> {
    let text = output(
        "cargo metadata",
        Command::new("cargo")
            .args(["metadata", "--no-deps", "--format-version", "1", "--locked"])
            .current_dir(root),
    )?;
    let metadata: serde_json::Value =
        serde_json::from_str(&text).context("reading cargo metadata's output")?;
    let packages = metadata
        .get("packages")
        .and_then(serde_json::Value::as_array)
        .context("cargo metadata lists no packages")?;
    let by_name = |name: &str| {
        packages
            .iter()
            .find(|package| package.get("name").and_then(serde_json::Value::as_str) == Some(name))
    };
    let mut seen = BTreeSet::new();
    let mut queue = vec![CRATE.to_string()];
    let mut folders = Vec::new();
    while let Some(name) = queue.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        let package = by_name(&name).with_context(|| format!("no package {name}"))?;
        let manifest = package
            .get("manifest_path")
            .and_then(serde_json::Value::as_str)
            .context("a package without a manifest path")?;
        let folder = Path::new(manifest)
            .parent()
            .and_then(|dir| dir.strip_prefix(root).ok())
            .with_context(|| format!("{manifest} is not in the workspace"))?;
        folders.push(folder.to_string_lossy().replace('\\', "/"));
        for dependency in package
            .get("dependencies")
            .and_then(serde_json::Value::as_array)
            .into_iter()
            .flatten()
        {
            let dev = dependency.get("kind").and_then(serde_json::Value::as_str) == Some("dev");
            if dependency.get("path").is_some()
                && !dev
                && let Some(name) = dependency.get("name").and_then(serde_json::Value::as_str)
            {
                queue.push(name.to_string());
            }
        }
    }
    folders.sort();
    Ok(folders)
}

/// Tracked files under a folder of the repository, relative to the root.
fn tracked(root: &Path, folder: &str) -> Result<Vec<String>> {
    Ok(output(
        "git ls-files",
        Command::new("git")
            .args(["ls-files", folder])
            .current_dir(root),
    )?
    .lines()
    .map(str::to_string)
    .collect())
}

/// What is wrong with the sdist's file list (paths without the `svc_sdk-VERSION/`
/// prefix): a missing manifest or source of the crates it builds, of the extension or
/// of the Python package, or a file from parts of the repository it must not carry.
fn sdist_problems(files: &BTreeSet<String>, crates: &[String], required: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for wanted in [
        "pyproject.toml",
        "PKG-INFO",
        "Cargo.toml",
        "Cargo.lock",
        "LICENSE",
    ] {
        if !files.contains(wanted) {
            problems.push(format!("no {wanted}"));
        }
    }
    for folder in crates {
        for wanted in ["Cargo.toml", "src/lib.rs"] {
            let path = format!("{folder}/{wanted}");
            if !files.contains(&path) {
                problems.push(format!("no {path} (a crate the extension is built from)"));
            }
        }
    }
    for path in required {
        if !files.contains(path) {
            problems.push(format!("no {path}"));
        }
    }
    const NEVER: [&str; 8] = [
        "target/",
        ".git/",
        "fuzz/",
        "xtask/",
        "benches/",
        "crates/svc-cli/",
        "bindings/uniffi/",
        "bindings/kotlin/",
    ];
    for file in files {
        if NEVER
            .iter()
            .any(|prefix| file.starts_with(prefix) || file.contains(&format!("/{prefix}")))
            || file.ends_with(".whl")
            || file.ends_with(".crate")
            || file.ends_with(".so")
        {
            problems.push(format!("carries {file}"));
        }
    }
    problems
}

/// The sdist holds the crates the extension is built from, the extension's and the
/// Python package's tracked sources, and nothing from the rest of the repository.
fn check_sdist_file(root: &Path, sdist: &Path, version: &str) -> Result<()> {
    let listing = output("list the sdist", Command::new("tar").arg("-tzf").arg(sdist))?;
    let prefix = format!("svc_sdk-{version}/");
    let mut files = BTreeSet::new();
    for line in listing.lines() {
        let Some(path) = line.strip_prefix(&prefix) else {
            bail!("{} holds {line}, outside {prefix}", sdist.display());
        };
        if !path.is_empty() && !path.ends_with('/') {
            files.insert(path.to_string());
        }
    }
    let crates = source_crates(root)?;
    // The package's Python sources sit at python/ (its python-source), the extension's
    // Rust sources at bindings/python/src.
    let mut required = Vec::new();
    for path in tracked(root, &format!("{PACKAGE}/python"))? {
        if let Some(inside) = path.strip_prefix(&format!("{PACKAGE}/")) {
            required.push(inside.to_string());
        }
    }
    required.extend(tracked(root, &format!("{PACKAGE}/src"))?);
    let problems = sdist_problems(&files, &crates, &required);
    if !problems.is_empty() {
        bail!("{}:\n  {}", sdist.display(), problems.join("\n  "));
    }
    println!(
        "{}: {} files, the crates {}",
        sdist
            .file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default(),
        files.len(),
        crates.join(", ")
    );
    Ok(())
}

/// What `cargo xtask ci` checks: the sdist maturin makes now (a few seconds, nothing
/// compiled) has the files it must have.
pub fn check_sdist_list(root: &Path, version: &str) -> Result<()> {
    println!("==> the sdist's file list");
    let venv = tools::venv(root)?;
    let dir = root.join("target/dist-check/sdist-list");
    super::fresh_dir(&dir)?;
    output(
        "maturin sdist",
        maturin(&venv, root)?.arg("sdist").arg("--out").arg(&dir),
    )?;
    check_sdist_file(root, &dir.join(sdist_name(version)), version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_libraries() {
        assert!(linux_library_allowed("libc.so.6", false));
        assert!(!linux_library_allowed("libc.so", false));
        assert!(linux_library_allowed("libc.so", true));
        assert!(!linux_library_allowed("libc.so.6", true));
        assert!(!linux_library_allowed("libssl.so.3", false));
    }

    #[test]
    fn windows_dlls() {
        assert!(windows_dll_allowed("python3.dll"));
        assert!(windows_dll_allowed("KERNEL32.dll"));
        // Serial ports are enumerated through the configuration manager and SetupAPI.
        assert!(windows_dll_allowed("cfgmgr32.dll"));
        assert!(windows_dll_allowed("setupapi.dll"));
        assert!(windows_dll_allowed("api-ms-win-core-synch-l1-2-0.dll"));
        assert!(!windows_dll_allowed("python311.dll"));
        assert!(!windows_dll_allowed("libgcc_s_seh-1.dll"));
        assert!(!windows_dll_allowed("libwinpthread-1.dll"));
    }

    #[test]
    fn sdist_rules() {
        let files: BTreeSet<String> = [
            "pyproject.toml",
            "PKG-INFO",
            "Cargo.toml",
            "Cargo.lock",
            "LICENSE",
            "crates/svc-core/Cargo.toml",
            "crates/svc-core/src/lib.rs",
            "python/svc_sdk/__init__.py",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let crates = vec!["crates/svc-core".to_string()];
        let required = vec!["python/svc_sdk/__init__.py".to_string()];
        assert!(sdist_problems(&files, &crates, &required).is_empty());
        let more = vec!["crates/svc-emulator".to_string()];
        assert_eq!(sdist_problems(&files, &more, &required).len(), 2);
        let mut extra = files.clone();
        extra.insert("crates/svc-cli/src/main.rs".into());
        extra.insert("target/release/x".into());
        assert_eq!(sdist_problems(&extra, &crates, &required).len(), 2);
    }

    #[test]
    fn metadata_rules() {
        let inspected = serde_json::json!({
            "fields": {
                "Name": ["svc-sdk"], "Version": ["0.1.0"], "Requires-Python": [">=3.9"],
                "License-Expression": ["Apache-2.0"], "License-File": ["LICENSE"],
                "Description-Content-Type": ["text/markdown; charset=UTF-8; variant=GFM"],
                "Summary": ["SDK"],
                "Classifier": ["Typing :: Typed", "Programming Language :: Rust"],
                "Project-URL": ["Repository, https://x", "Documentation, https://x", "Changelog, https://x"],
                "Provides-Extra": ["pandas", "notebook"],
            },
            "description": "pip install svc-sdk",
            "files": ["svc_sdk/__init__.py", "svc_sdk/py.typed", "svc_sdk/_native.pyi",
                      "svc_sdk/_native.abi3.so", "svc_sdk-0.1.0.dist-info/licenses/LICENSE"],
        });
        assert_eq!(
            metadata_problems(&inspected, "0.1.0", false),
            Vec::<String>::new()
        );
        assert_eq!(metadata_problems(&inspected, "0.1.0", true).len(), 1);
        assert_eq!(metadata_problems(&inspected, "0.2.0", false).len(), 2);
    }
}
