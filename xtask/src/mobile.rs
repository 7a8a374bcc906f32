//! The mobile bindings (`bindings/uniffi`, crate `svc-ffi`):
//!
//! - `cargo xtask bindings kotlin|swift`: builds the library and uniffi's bindgen (the
//!   `cli` feature of `svc-ffi`), then writes the foreign code, generated from the
//!   built library, to `target/bindings/<language>` (never committed);
//! - `cargo xtask kotlin`: the Kotlin code compiled and tested on the JVM by Maven
//!   (`bindings/kotlin`: kotlin-maven-plugin, JNA, kotlinx-coroutines, JUnit 5, all from
//!   Maven Central), against the emulator the tests start (`svc emulator`);
//! - `cargo xtask kotlin-bench`: the settings-diff benchmark of `bindings/kotlin`
//!   against a release build of the library.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

/// The built library, as `cargo build` leaves it for this platform.
fn library(root: &Path, profile: &str) -> PathBuf {
    let name = if cfg!(target_os = "macos") {
        "libsvc_ffi.dylib"
    } else {
        "libsvc_ffi.so"
    };
    root.join("target").join(profile).join(name)
}

fn run(dir: &Path, name: &str, command: &mut Command) -> Result<()> {
    println!("==> {name}: {command:?}");
    let status = command
        .current_dir(dir)
        .status()
        .with_context(|| format!("could not run {name}"))?;
    if !status.success() {
        bail!("{name} failed ({status})");
    }
    Ok(())
}

fn cargo(root: &Path, name: &str, args: &[&str]) -> Result<()> {
    run(root, name, Command::new("cargo").args(args))
}

/// Builds the library (debug) and the bindgen, then generates the code of `language`
/// into `target/bindings/<language>`; returns that folder.
pub fn bindings(root: &Path, language: &str) -> Result<PathBuf> {
    if !matches!(language, "kotlin" | "swift") {
        bail!("unknown language {language:?}: kotlin or swift");
    }
    // One build: the library and the bindgen binary (whose `cli` feature only adds
    // uniffi's generator to the binary).
    cargo(
        root,
        "svc-ffi library and bindgen",
        &["build", "-p", "svc-ffi", "--features", "cli", "--locked"],
    )?;
    let out = root.join("target/bindings").join(language);
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
    let bindgen = root.join("target/debug/uniffi-bindgen");
    run(
        root,
        &format!("{language} bindings"),
        Command::new(&bindgen).args([
            "generate",
            "--library",
            &library(root, "debug").to_string_lossy(),
            "--language",
            language,
            "--no-format",
            "--out-dir",
            &out.to_string_lossy(),
        ]),
    )?;
    Ok(out)
}

/// Maven, installed from Debian's packages when the machine lacks it.
fn maven() -> Result<&'static str> {
    let present = Command::new("mvn")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        run(
            Path::new("."),
            "install maven",
            Command::new("apt-get").args(["install", "-y", "-q", "maven"]),
        )?;
    }
    Ok("mvn")
}

/// `cargo xtask kotlin`: bindings, the `svc` binary the tests start, then `mvn test`.
pub fn kotlin(root: &Path) -> Result<()> {
    let started = Instant::now();
    bindings(root, "kotlin")?;
    cargo(
        root,
        "svc binary",
        &["build", "-p", "svc-cli", "--bin", "svc", "--locked"],
    )?;
    let mvn = maven()?;
    run(
        &root.join("bindings/kotlin"),
        "kotlin tests",
        Command::new(mvn).args(["-B", "-ntp", "test"]),
    )?;
    println!(
        "kotlin bindings checked in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
