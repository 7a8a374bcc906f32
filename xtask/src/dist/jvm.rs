//! The JVM and Swift parts of `cargo xtask dist`.
//!
//! The Maven artifact for desktop and server JVMs, `svc.sdk:svc-sdk-kotlin:VERSION`, deployed
//! to the Maven repository `target/dist/maven/` (what a release uploads to a repository
//! manager): the generated Kotlin compiled, `libsvc_ffi.so` for `linux-x86-64` and
//! `linux-aarch64` under JNA's resource paths (JNA extracts the one for the running
//! machine), the POM, a sources jar and a javadoc jar. Both libraries are built with
//! the `release-ffi` profile and linked by zig against glibc 2.28 (cargo-zigbuild, as
//! the Linux wheels are), so that the artifact runs on the same systems as the wheels.
//! The POM is `bindings/kotlin/dist/pom.xml` with the workspace's version filled in.
//!
//! The checks: the repository's files, the POM's coordinates and version, the jar's
//! classes and libraries (each an ELF shared object for its machine), then
//! `bindings/kotlin/consumer`, a separate Maven project, uses the artifact from that
//! repository as an application would and runs a settings diff and a unit session
//! against `svc emulator`. The Swift package's release form is checked too: its version
//! (`bindings/swift/Package.swift`) is the workspace's, and its release target is the
//! XCFramework of the tag `vVERSION` (built on macOS by
//! `bindings/uniffi/scripts/build-xcframework.sh`, see `.github/workflows/mobile.yml`).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{output, run_step, tools};

/// The Linux targets (glibc 2.28, as manylinux_2_28), JNA's resource folder for each,
/// and the ELF machine number.
const TARGETS: [(&str, &str, u16); 2] = [
    ("x86_64-unknown-linux-gnu", "linux-x86-64", 62),
    ("aarch64-unknown-linux-gnu", "linux-aarch64", 183),
];

const GLIBC: &str = "2.28";
const GROUP: &str = "svc/sdk";
const ARTIFACT: &str = "svc-sdk-kotlin";

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}

fn library(root: &Path, target: &str) -> PathBuf {
    target_dir(root)
        .join(target)
        .join("release-ffi")
        .join("libsvc_ffi.so")
}

/// `[workspace.package] version` of the root Cargo.toml.
fn workspace_version(root: &Path) -> Result<String> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).context("reading Cargo.toml")?;
    let manifest: toml::Table = text.parse().context("parsing Cargo.toml")?;
    manifest
        .get("workspace")
        .and_then(|w| w.get("package"))
        .and_then(|p| p.get("version"))
        .and_then(toml::Value::as_str)
        .map(str::to_owned)
        .context("Cargo.toml has no [workspace.package] version")
}

fn maven() -> Result<&'static str> {
    let present = Command::new("mvn")
        .arg("-v")
        .output()
        .is_ok_and(|o| o.status.success());
    if !present {
        tools::apt(&["maven"])?;
    }
    Ok("mvn")
}

/// The folder of the artifact's version in the repository.
fn artifact_dir(out: &Path, version: &str) -> PathBuf {
    out.join("maven").join(GROUP).join(ARTIFACT).join(version)
}

fn file_url(path: &Path) -> String {
    format!("file://{}", path.display())
}

/// Builds the JVM artifacts into `out` (`target/dist/`).
pub fn build(root: &Path, out: &Path) -> Result<()> {
    let version = workspace_version(root)?;
    let targets: Vec<&str> = TARGETS.iter().map(|(target, _, _)| *target).collect();
    tools::rust_targets(root, &targets)?;
    let venv = tools::venv(root)?;
    for target in &targets {
        run_step(
            &format!("libsvc_ffi.so for {target} (glibc {GLIBC})"),
            Command::new(venv.bin.join("cargo-zigbuild"))
                .args([
                    "zigbuild",
                    "-p",
                    "svc-ffi",
                    "--lib",
                    "--profile",
                    "release-ffi",
                    "--locked",
                ])
                .args(["--target", &format!("{target}.{GLIBC}")])
                .current_dir(root)
                .env("PATH", venv.path()?),
        )?;
    }
    // The Kotlin, generated from a debug build of the same sources (the release
    // libraries are stripped of the metadata uniffi's generator reads; the API and its
    // checksums are the same).
    let generated = crate::mobile::bindings(root, "kotlin")?;

    let staging = root.join("target/dist-tools/jvm");
    super::fresh_dir(&staging)?;
    for (target, folder, machine) in TARGETS {
        let built = library(root, target);
        check_elf(&built, machine)?;
        let dir = staging.join("resources").join(folder);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::copy(&built, dir.join("libsvc_ffi.so"))
            .with_context(|| format!("copying {}", built.display()))?;
    }
    let javadoc = staging.join("javadoc");
    std::fs::create_dir_all(&javadoc).context("creating the javadoc folder")?;
    std::fs::write(
        javadoc.join("README.md"),
        format!(
            "# svc SDK {version} for the JVM\n\n\
             The API is the Kotlin generated by uniffi, in the sources jar \
             (`svc-sdk-{version}-sources.jar`, package `svc.sdk`), with a comment on every \
             type and method. The guide is docs/mobile.md of the repository.\n"
        ),
    )
    .context("writing the javadoc jar's README")?;
    let template = std::fs::read_to_string(root.join("bindings/kotlin/dist/pom.xml"))
        .context("reading bindings/kotlin/dist/pom.xml")?;
    if !template.contains("<version>${revision}</version>") {
        bail!("bindings/kotlin/dist/pom.xml must take its version as ${{revision}}");
    }
    let pom = staging.join("pom.xml");
    std::fs::write(
        &pom,
        template.replacen(
            "<version>${revision}</version>",
            &format!("<version>{version}</version>"),
            1,
        ),
    )
    .context("writing the POM")?;

    let repository = out.join("maven");
    super::fresh_dir(&repository)?;
    run_step(
        "the Maven artifact, deployed to target/dist/maven",
        Command::new(maven()?)
            .args(["-B", "-ntp", "-q", "-f"])
            .arg(&pom)
            .arg(format!("-Dsvc.generated={}", generated.display()))
            .arg(format!("-Dsvc.staging={}", staging.display()))
            .arg(format!(
                "-DaltDeploymentRepository=svc-dist::{}",
                file_url(&repository)
            ))
            .arg("deploy"),
    )?;
    for (target, _, _) in TARGETS {
        let size = std::fs::metadata(library(root, target)).map_or(0, |m| m.len());
        println!(
            "libsvc_ffi.so for {target}: {:.1} MB ({size} bytes)",
            size as f64 / 1e6
        );
    }
    Ok(())
}

/// Checks that `path` is an ELF shared object for `machine`.
fn check_elf(path: &Path, machine: u16) -> Result<()> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let header = bytes
        .get(..20)
        .with_context(|| format!("{} is too short for ELF", path.display()))?;
    let found = u16::from_le_bytes([header[18], header[19]]);
    let kind = u16::from_le_bytes([header[16], header[17]]);
    if &header[..4] != b"\x7fELF" || kind != 3 || found != machine {
        bail!(
            "{} is not an ELF shared object for machine {machine} (type {kind}, machine {found})",
            path.display()
        );
    }
    Ok(())
}

/// The version `bindings/swift/Package.swift` declares (`let version = "…"`).
fn swift_package_version(root: &Path) -> Result<String> {
    let manifest = std::fs::read_to_string(root.join("bindings/swift/Package.swift"))
        .context("reading bindings/swift/Package.swift")?;
    manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("let version = \""))
        .and_then(|rest| rest.strip_suffix('"'))
        .map(str::to_owned)
        .context("bindings/swift/Package.swift has no `let version = \"…\"`")
}

/// Checks the JVM artifacts in `out`, then uses them from `bindings/kotlin/consumer`.
pub fn check(root: &Path, out: &Path) -> Result<()> {
    let version = workspace_version(root)?;

    // The Swift package's release form.
    let swift = swift_package_version(root)?;
    if swift != version {
        bail!(
            "bindings/swift/Package.swift says version {swift}, the workspace {version}: they must agree (the release tag is v{version})"
        );
    }
    let manifest = std::fs::read_to_string(root.join("bindings/swift/Package.swift"))
        .context("reading bindings/swift/Package.swift")?;
    for needed in [
        "releases/download/v\\(version)/SvcFfi.xcframework.zip",
        ".binaryTarget(",
    ] {
        if !manifest.contains(needed) {
            bail!("bindings/swift/Package.swift lacks {needed:?} (its release form)");
        }
    }

    // The repository's files.
    let dir = artifact_dir(out, &version);
    let stem = format!("{ARTIFACT}-{version}");
    for suffix in [".pom", ".jar", "-sources.jar", "-javadoc.jar"] {
        let file = dir.join(format!("{stem}{suffix}"));
        let size = std::fs::metadata(&file)
            .with_context(|| format!("{} is missing", file.display()))?
            .len();
        if size == 0 {
            bail!("{} is empty", file.display());
        }
    }
    let pom =
        std::fs::read_to_string(dir.join(format!("{stem}.pom"))).context("reading the POM")?;
    for needed in [
        "<groupId>svc.sdk</groupId>".to_owned(),
        format!("<artifactId>{ARTIFACT}</artifactId>"),
        format!("<version>{version}</version>"),
        "<artifactId>jna</artifactId>".to_owned(),
        "<artifactId>kotlinx-coroutines-core</artifactId>".to_owned(),
        "<licenses>".to_owned(),
    ] {
        if !pom.contains(&needed) {
            bail!("the deployed POM lacks {needed}");
        }
    }
    if pom.contains("<version>${revision}</version>") {
        bail!("the deployed POM's version is not filled in");
    }

    // The jar's contents.
    let jar = dir.join(format!("{stem}.jar"));
    let listing = output("the jar's files", Command::new("jar").arg("tf").arg(&jar))?;
    for needed in ["svc/sdk/Svc_ffiKt.class", "svc/sdk/CloudClient.class"] {
        if !listing.lines().any(|l| l == needed) {
            bail!("{} lacks {needed}", jar.display());
        }
    }
    let sources = output(
        "the sources jar's files",
        Command::new("jar")
            .arg("tf")
            .arg(dir.join(format!("{stem}-sources.jar"))),
    )?;
    if !sources.lines().any(|l| l.ends_with("svc/sdk/svc_ffi.kt")) {
        bail!("the sources jar lacks the generated svc/sdk/svc_ffi.kt");
    }
    let unpacked = root.join("target/dist-tools/jvm-check");
    super::fresh_dir(&unpacked)?;
    let names: Vec<String> = TARGETS
        .iter()
        .map(|(_, folder, _)| format!("{folder}/libsvc_ffi.so"))
        .collect();
    run_step(
        "the libraries out of the jar",
        Command::new("jar")
            .arg("xf")
            .arg(&jar)
            .args(&names)
            .current_dir(&unpacked),
    )?;
    for ((target, folder, machine), name) in TARGETS.iter().zip(&names) {
        let path = unpacked.join(name);
        check_elf(&path, *machine).with_context(|| format!("{folder} in the jar"))?;
        let size = std::fs::metadata(&path).map_or(0, |m| m.len());
        println!("{name} ({target}): {:.1} MB", size as f64 / 1e6);
    }

    // An application using it from the repository.
    let binary = target_dir(root).join("debug/svc");
    if !binary.exists() {
        run_step(
            "svc (the consumer's tests start its emulator)",
            Command::new("cargo")
                .args(["build", "-p", "svc-cli", "--bin", "svc", "--locked"])
                .current_dir(root),
        )?;
    }
    // Maven keeps a release version it downloaded once: the consumer must get this one.
    if let Some(home) = std::env::var_os("HOME") {
        let cached = PathBuf::from(home)
            .join(".m2/repository")
            .join(GROUP)
            .join(ARTIFACT);
        if cached.exists() {
            std::fs::remove_dir_all(&cached)
                .with_context(|| format!("removing {}", cached.display()))?;
        }
    }
    run_step(
        "bindings/kotlin/consumer: the artifact from target/dist/maven, against the emulator",
        Command::new(maven()?)
            .args(["-B", "-ntp", "test"])
            .arg(format!("-Dsvc.version={version}"))
            .arg(format!("-Dsvc.repo={}", file_url(&out.join("maven"))))
            .arg(format!("-Dsvc.binary={}", binary.display()))
            .current_dir(root.join("bindings/kotlin/consumer")),
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_swift_package_and_the_workspace_agree() -> Result<()> {
        let root = crate::root();
        assert_eq!(swift_package_version(&root)?, workspace_version(&root)?);
        Ok(())
    }
}
