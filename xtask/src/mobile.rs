//! The mobile bindings (`bindings/uniffi`, crate `svc-ffi`):
//!
//! - `cargo xtask bindings kotlin|swift`: builds the library and uniffi's bindgen
//!   (`bindings/uniffi/bindgen`), then writes the foreign code, generated from the
//!   built library, to `target/bindings/<language>` (never committed), with the
//!   hand-written Kotlin of `bindings/kotlin/src/main/kotlin` beside it;
//! - `cargo xtask kotlin`: the Kotlin code compiled and tested on the JVM by Maven
//!   (`bindings/kotlin`: kotlin-maven-plugin, JNA, kotlinx-coroutines, JUnit 5, all from
//!   Maven Central), against the emulator the tests start (`svc emulator`), then the
//!   Android consumer rules checked with R8;
//! - `cargo xtask swift`: the Swift package tested with swiftlang in a Debian folder;
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

pub(crate) fn run(dir: &Path, name: &str, command: &mut Command) -> Result<()> {
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

/// The workspace built as `cargo test --workspace --all-targets` builds it (the step of
/// CI before the bindings' checks, so nothing is built again there; another command
/// would unify features differently and rebuild svc-core, reqwest and the rest): the
/// `svc` binary and the debug libraries the bindings' tests use.
pub(crate) fn build_as_tests(root: &Path) -> Result<()> {
    cargo(
        root,
        "workspace as the tests build it (svc-ffi, svc)",
        &[
            "test",
            "--workspace",
            "--all-targets",
            "--locked",
            "--no-run",
        ],
    )
}

/// Builds the library (debug), the `svc` binary the tests start, and the bindgen.
///
/// The library and `svc`: [`build_as_tests`]. That build leaves the cdylib in
/// `target/debug/deps`; it is copied beside `svc`. The bindgen: its
/// own workspace (`bindings/uniffi/bindgen`), built into `target/bindgen`.
fn build(root: &Path) -> Result<PathBuf> {
    build_as_tests(root)?;
    let built = library(root, "debug/deps");
    let beside = library(root, "debug");
    // Cargo may have left a hard link of the same file there: copying onto it would
    // empty both.
    let _ = std::fs::remove_file(&beside);
    std::fs::copy(&built, &beside).with_context(|| format!("copying {}", built.display()))?;
    let target = root.join("target/bindgen");
    cargo(
        root,
        "uniffi-bindgen",
        &[
            "build",
            "--manifest-path",
            "bindings/uniffi/bindgen/Cargo.toml",
            "--locked",
            "--target-dir",
            &target.to_string_lossy(),
        ],
    )?;
    Ok(target.join("debug/uniffi-bindgen"))
}

/// Builds the library (debug) and the bindgen, then generates the code of `language`
/// into `target/bindings/<language>`; returns that folder.
pub fn bindings(root: &Path, language: &str) -> Result<PathBuf> {
    if !matches!(language, "kotlin" | "swift") {
        bail!("unknown language {language:?}: kotlin or swift");
    }
    let bindgen = build(root)?;
    let out = root.join("target/bindings").join(language);
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("removing {}", out.display()))?;
    }
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
    if language == "kotlin" {
        // The hand-written Kotlin beside the generated code (`Flow`s over the
        // generated classes): compiled, tested and packaged with it.
        copy_dir(&root.join("bindings/kotlin/src/main/kotlin"), &out)?;
    }
    Ok(out)
}

/// Installs a Debian package (updating the package lists first when the install
/// fails, as on a machine whose lists were never fetched).
fn apt_install(package: &str) -> Result<()> {
    let install = |name: &str| {
        run(
            Path::new("."),
            name,
            Command::new("apt-get").args(["install", "-y", "-q", package]),
        )
    };
    if install(&format!("install {package}")).is_ok() {
        return Ok(());
    }
    run(
        Path::new("."),
        "apt-get update",
        Command::new("apt-get").args(["update", "-q"]),
    )?;
    install(&format!("install {package} (after update)"))
}

/// Maven, installed from Debian's packages when the machine lacks it.
fn maven() -> Result<&'static str> {
    let present = Command::new("mvn")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        apt_install("maven")?;
    }
    Ok("mvn")
}

/// `cargo xtask ci`'s step: the Kotlin suite, then the Swift one.
pub fn ci(root: &Path) -> Result<()> {
    // The generator's own tests (its rewrite of uniffi's Swift), in its workspace.
    cargo(
        root,
        "uniffi-bindgen tests",
        &[
            "test",
            "--manifest-path",
            "bindings/uniffi/bindgen/Cargo.toml",
            "--locked",
            "--target-dir",
            &root.join("target/bindgen").to_string_lossy(),
        ],
    )?;
    kotlin(root)?;
    swift(root)
}

/// `cargo xtask kotlin`: bindings, the `svc` binary the tests start, `mvn test`, then
/// the R8 check of the consumer rules ([`r8_check`]).
pub fn kotlin(root: &Path) -> Result<()> {
    let started = Instant::now();
    bindings(root, "kotlin")?;
    let mvn = maven()?;
    run(
        &root.join("bindings/kotlin"),
        "kotlin tests",
        Command::new(mvn).args(["-B", "-ntp", "test"]),
    )?;
    if let Ok(memory) = std::fs::read_to_string(root.join("target/kotlin-memory.txt")) {
        println!("{}", memory.trim());
    }
    r8_check(root, mvn)?;
    println!(
        "kotlin bindings checked in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The property `name` of bindings/kotlin/pom.xml (`<name>value</name>`).
fn pom_property(root: &Path, name: &str) -> Result<String> {
    let pom = std::fs::read_to_string(root.join("bindings/kotlin/pom.xml"))
        .context("reading bindings/kotlin/pom.xml")?;
    pom.split(&format!("<{name}>"))
        .nth(1)
        .and_then(|rest| rest.split(&format!("</{name}>")).next())
        .map(|v| v.trim().to_owned())
        .with_context(|| format!("no <{name}> in bindings/kotlin/pom.xml"))
}

/// The JDK the `java` on the PATH belongs to (R8's library: the JDK's classes).
fn java_home() -> Result<String> {
    let output = Command::new("java")
        .args(["-XshowSettings:properties", "-version"])
        .output()
        .context("running java")?;
    let text = String::from_utf8_lossy(&output.stderr);
    text.lines()
        .find_map(|l| l.trim().strip_prefix("java.home = "))
        .map(str::to_owned)
        .context("java does not say its java.home")
}

/// The consumer rules an app ships (`bindings/kotlin/consumer-rules.pro`), checked as an
/// app's release build uses them: R8 (from Maven Central) shrinks and obfuscates a small
/// app (`bindings/kotlin/src/r8`) with the generated bindings, kotlinx-coroutines and
/// JNA, with those rules alone, to class files; the result runs on the JVM and makes
/// every kind of call across the boundary. A rule missing (a structure JNA reads by
/// reflection, a callback) fails here, not in an app's release build.
fn r8_check(root: &Path, mvn: &str) -> Result<()> {
    let kotlin = root.join("bindings/kotlin");
    let out = kotlin.join("target/r8");
    let _ = std::fs::remove_dir_all(&out);
    let version = pom_property(root, "r8.version")?;
    let libs = out.join("libs");
    run(
        &kotlin,
        "the app's dependencies and R8 (Maven Central)",
        Command::new(mvn).args([
            "-B",
            "-ntp",
            "-q",
            "jar:jar",
            "dependency:copy-dependencies",
            "-DincludeScope=runtime",
            &format!("-DoutputDirectory={}", libs.display()),
        ]),
    )?;
    run(
        &kotlin,
        "R8",
        Command::new(mvn).args([
            "-B",
            "-ntp",
            "-q",
            "dependency:copy",
            &format!("-Dartifact=com.android.tools:r8:{version}"),
            &format!("-DoutputDirectory={}", out.display()),
        ]),
    )?;
    let mut inputs = vec![kotlin.join(format!(
        "target/svc-sdk-kotlin-{}.jar",
        pom_property(root, "version")?
    ))];
    for entry in std::fs::read_dir(&libs).context("the copied dependencies")? {
        inputs.push(entry?.path());
    }
    let shrunk = out.join("app.jar");
    let started = Instant::now();
    run(
        &kotlin,
        "R8 over the app, the bindings and their dependencies",
        Command::new("java")
            .arg("-cp")
            .arg(out.join(format!("r8-{version}.jar")))
            .args(["com.android.tools.r8.R8", "--release", "--classfile"])
            .args(["--lib", &java_home()?])
            .arg("--pg-conf")
            .arg(kotlin.join("consumer-rules.pro"))
            .arg("--pg-conf")
            .arg(kotlin.join("src/r8/app-rules.pro"))
            .arg("--output")
            .arg(&shrunk)
            .args(&inputs),
    )?;
    let before: u64 = inputs
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let after = std::fs::metadata(&shrunk).map(|m| m.len()).unwrap_or(0);
    run(
        &kotlin,
        "the shrunk app",
        Command::new("java")
            .arg(format!(
                "-Djna.library.path={}",
                library(root, "debug").parent().unwrap_or(root).display()
            ))
            .arg("-cp")
            .arg(&shrunk)
            .arg("svc.sdk.app.MainKt"),
    )?;
    println!(
        "R8 {version}: {:.1} MB of classes in, {:.1} MB out, in {:.0} s; the shrunk app ran",
        before as f64 / 1e6,
        after as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// `cargo xtask kotlin-bench`: the settings-diff benchmark of `bindings/kotlin`
/// (`SettingsDiffBench`: the binding, crossing included, against pure Kotlin with
/// Jackson, in the same run) against a release build of the library; the result is
/// printed and written to `target/kotlin-bench.txt`.
pub fn kotlin_bench(root: &Path) -> Result<()> {
    bindings(root, "kotlin")?;
    cargo(
        root,
        "svc-ffi (release)",
        &["build", "-p", "svc-ffi", "--release", "--locked"],
    )?;
    let mvn = maven()?;
    let libdir = format!("-Dsvc.libdir={}", root.join("target/release").display());
    run(
        &root.join("bindings/kotlin"),
        "kotlin benchmark",
        Command::new(mvn).args([
            "-B",
            "-ntp",
            "test",
            "-Dgroups=bench",
            "-Dsvc.excludedGroups=none",
            &libdir,
        ]),
    )
}

// ------------------------------------------------------------------ Swift

/// Debian trixie's packages the Swift folder is made of (swiftlang 6.0: Foundation,
/// XCTest and swift-testing).
const SWIFT_PACKAGES: &str = "swiftlang,libc6-dev,ca-certificates";

/// Where the Debian trixie folder with `swiftlang` lives, kept between runs (outside
/// the work tree, so that a fresh clone on the same machine reuses it):
/// `SVC_SWIFT_ROOT`, or `~/.cache/svc-sdk/swift-trixie`.
fn swift_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("SVC_SWIFT_ROOT") {
        return PathBuf::from(dir);
    }
    let home = std::env::var_os("HOME").map_or_else(|| PathBuf::from("/root"), PathBuf::from);
    home.join(".cache/svc-sdk/swift-trixie")
}

/// The trixie folder, made with debootstrap on first use (about 90 s, 3.2 GB). A
/// marker file says it is complete, so that an interrupted run starts over.
fn trixie(dir: &Path) -> Result<()> {
    let marker = dir.join(".svc-swift-ready");
    if std::fs::read_to_string(&marker).ok().as_deref() == Some(SWIFT_PACKAGES) {
        return Ok(());
    }
    if !Command::new("debootstrap")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
    {
        apt_install("debootstrap")?;
    }
    if dir.exists() {
        unmount_proc(dir);
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    run(
        Path::new("."),
        "debootstrap trixie with swiftlang",
        Command::new("debootstrap").args([
            "--variant=minbase",
            &format!("--include={SWIFT_PACKAGES}"),
            "trixie",
            &dir.to_string_lossy(),
            "http://deb.debian.org/debian",
        ]),
    )?;
    // Downloaded packages are not needed once installed.
    let _ = std::fs::remove_dir_all(dir.join("var/cache/apt/archives"));
    std::fs::write(&marker, SWIFT_PACKAGES).context("writing the folder's marker")?;
    Ok(())
}

fn proc_mounted(dir: &Path) -> bool {
    let target = dir.join("proc");
    std::fs::read_to_string("/proc/mounts").is_ok_and(|mounts| {
        mounts
            .lines()
            .any(|l| l.split(' ').nth(1) == Some(&*target.to_string_lossy()))
    })
}

fn unmount_proc(dir: &Path) {
    if proc_mounted(dir) {
        let _ = Command::new("umount").arg(dir.join("proc")).status();
    }
}

/// Unmounts the folder's `/proc` and stops the emulator when the Swift run ends,
/// whatever its outcome.
struct SwiftRun {
    dir: PathBuf,
    emulator: Option<std::process::Child>,
}

impl Drop for SwiftRun {
    fn drop(&mut self) {
        if let Some(mut child) = self.emulator.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        unmount_proc(&self.dir);
    }
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| format!("creating {}", to.display()))?;
    for entry in std::fs::read_dir(from).with_context(|| format!("reading {}", from.display()))? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)
                .with_context(|| format!("copying {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// `cargo xtask swift`: the SwiftPM package `bindings/swift` with the generated code,
/// built and tested by `swift test` in the Debian trixie folder (this machine has no
/// Swift toolchain, and its glibc is too old for trixie's), against an emulator
/// started here on the host (the folder shares the network).
pub fn swift(root: &Path) -> Result<()> {
    if !cfg!(target_os = "linux") {
        bail!(
            "cargo xtask swift runs Linux Swift in a Debian folder; on macOS run `swift test` in bindings/swift"
        );
    }
    let started = Instant::now();
    let generated = bindings(root, "swift")?;
    let dir = swift_root();
    trixie(&dir)?;
    let mut guard = SwiftRun {
        dir: dir.clone(),
        emulator: None,
    };

    // The package as the folder sees it, under /svc: the committed sources, the
    // generated code, the library, the test data. `.build` is kept between runs.
    let pkg = dir.join("svc/pkg");
    for sub in ["Sources", "Tests", "fixtures", "Consumer/Sources"] {
        let _ = std::fs::remove_dir_all(pkg.join(sub));
    }
    let source = root.join("bindings/swift");
    copy_dir(&source.join("Sources"), &pkg.join("Sources"))?;
    copy_dir(&source.join("Tests"), &pkg.join("Tests"))?;
    copy_dir(&source.join("Consumer"), &pkg.join("Consumer"))?;
    std::fs::copy(source.join("Package.swift"), pkg.join("Package.swift"))?;
    std::fs::copy(
        generated.join("SvcSdk.swift"),
        pkg.join("Sources/SvcSdk/SvcSdk.swift"),
    )?;
    std::fs::copy(
        generated.join("SvcFfi.h"),
        pkg.join("Sources/SvcFfi/SvcFfi.h"),
    )?;
    let lib = dir.join("svc/lib");
    std::fs::create_dir_all(&lib)?;
    std::fs::copy(library(root, "debug"), lib.join("libsvc_ffi.so"))?;
    let fixtures = pkg.join("fixtures");
    std::fs::create_dir_all(&fixtures)?;
    for name in ["rover.nmea", "imu.csv", "processing.json", "project.json"] {
        std::fs::copy(root.join("samples").join(name), fixtures.join(name))?;
    }
    std::fs::copy(
        root.join("tests/data/webhook_vectors.json"),
        fixtures.join("webhook_vectors.json"),
    )?;
    std::fs::copy(
        root.join("crates/svc-test-support/src/settings/unit_default.json"),
        fixtures.join("unit_default.json"),
    )?;

    // The emulator, on the host.
    let mut emulator = Command::new(root.join("target/debug/svc"))
        .args(["emulator", "--processing-seconds", "2", "--no-device-pty"])
        .arg("--upload-extra-field=x-amz-meta-uploaded-by=svc sdk swift/1+2=3")
        // A slow uplink (4 MiB/s), under which an upload is cancelled mid-flight.
        .args(["--upload-bytes-per-second", "4194304"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("starting svc emulator")?;
    let stdout = emulator.stdout.take().context("the emulator's stdout")?;
    guard.emulator = Some(emulator);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(stdout), &mut line)
        .context("reading the emulator's line")?;
    let info: serde_json::Value =
        serde_json::from_str(line.trim()).context("the emulator's line is not JSON")?;
    let field = |name: &str| info[name].as_str().unwrap_or_default().to_owned();

    // The trajectory `svc process` gives, for the Swift workflow test to compare with.
    let cli = fixtures.join("cli");
    run(
        root,
        "svc process (the reference trajectory)",
        Command::new(root.join("target/debug/svc"))
            .args(["process", "samples/rover.nmea", "samples/imu.csv"])
            .args(["--config", "samples/processing.json", "--json"])
            .args(["--wait-for-organization", "--out"])
            .arg(&cli)
            .env("SVC_BASE_URL", field("base_url"))
            .env("SVC_AUTH_URL", field("auth_url"))
            .env("SVC_NOTIFICATION_URL", field("notification_url"))
            .env("SVC_API_KEY", field("api_key"))
            .env("SVC_API_SECRET", field("api_secret"))
            .env("SVC_ORGANIZATION_ID", field("organization_id"))
            .stdout(std::process::Stdio::null()),
    )?;

    if !proc_mounted(&dir) {
        run(
            Path::new("."),
            "mount /proc in the folder",
            Command::new("mount")
                .args(["-t", "proc", "proc"])
                .arg(dir.join("proc")),
        )?;
    }
    run(
        Path::new("."),
        "swift test, and an app using the package",
        Command::new("chroot")
            .arg(&dir)
            .args([
                "/usr/bin/env",
                "-i",
                "HOME=/root",
                "PATH=/usr/bin:/bin",
                "LANG=C.UTF-8",
            ])
            .arg(format!("SVC_EMULATOR_JSON={}", line.trim()))
            .args([
                "SVC_FFI_LIB_DIR=/svc/lib",
                "SVC_FIXTURES=/svc/pkg/fixtures",
                "/bin/sh",
                "-c",
                // The package's tests, then an app that depends on the package (resolved
                // by path, linked, run against the emulator). The library's folder is
                // given on the command line, as a manifest may not (in a dependency).
                "set -e; link='-Xlinker -L/svc/lib -Xlinker -rpath -Xlinker /svc/lib'; \
                 cd /svc/pkg && swift test $link; \
                 cd Consumer && swift build $link && .build/debug/SvcApp && \
                 env -u SVC_EMULATOR_JSON .build/debug/SvcApp",
            ]),
    )?;
    drop(guard);
    // The figures of the 10,000-call loop (AppTests), for the record.
    if let Ok(memory) = std::fs::read_to_string(fixtures.join("memory.txt")) {
        println!("{}", memory.trim());
        let _ = std::fs::write(root.join("target/swift-memory.txt"), memory);
    }
    println!(
        "swift bindings checked in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
