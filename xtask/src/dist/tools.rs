//! What `cargo xtask dist` needs, installed when missing and kept for the next run:
//!
//! - a Python venv `target/dist-tools/venv` with maturin and ziglang (the pins of
//!   `bindings/python/requirements-dev.txt`, the ones `cargo xtask python` uses),
//!   cargo-zigbuild and auditwheel (pinned here);
//! - the rustup targets of the cross builds (for the toolchain of `rust-toolchain.toml`);
//! - Debian packages: `mingw-w64` (the Windows wheel's linker), `qemu-user-static` (runs
//!   aarch64 programs);
//! - an arm64 CPython from Debian's arm64 packages, extracted under
//!   `~/.cache/svc-sdk/arm64-python` and run by qemu-user.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{output, run_step};

/// Tools pinned here (maturin and ziglang are pinned in requirements-dev.txt).
const CARGO_ZIGBUILD: &str = "cargo-zigbuild==0.24.0";
const AUDITWHEEL: &str = "auditwheel==6.8.2";

/// The venv of the release tools.
pub struct Venv {
    /// Its python.
    pub python: PathBuf,
    /// Its `bin` folder (maturin, cargo-zigbuild, auditwheel).
    pub bin: PathBuf,
}

impl Venv {
    /// `PATH` with the venv first: maturin and cargo-zigbuild find zig as
    /// `python3 -m ziglang` of the first python on the PATH.
    pub fn path(&self) -> Result<OsString> {
        std::env::join_paths(
            std::iter::once(self.bin.clone()).chain(
                std::env::var_os("PATH")
                    .iter()
                    .flat_map(std::env::split_paths),
            ),
        )
        .context("building the PATH")
    }
}

/// The pins of maturin and ziglang in `bindings/python/requirements-dev.txt`.
fn python_pins(root: &Path) -> Result<Vec<String>> {
    let path = root.join("bindings/python/requirements-dev.txt");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut pins = Vec::new();
    for name in ["maturin", "ziglang"] {
        let pin = text
            .lines()
            .map(str::trim)
            .find(|line| line.starts_with(&format!("{name}==")))
            .with_context(|| format!("{} pins no {name}==VERSION", path.display()))?;
        pins.push(pin.to_string());
    }
    Ok(pins)
}

/// `target/dist-tools/venv` with the release tools, installed again only when the pins
/// change.
pub fn venv(root: &Path) -> Result<Venv> {
    let mut wanted = python_pins(root)?;
    wanted.push(CARGO_ZIGBUILD.into());
    wanted.push(AUDITWHEEL.into());
    venv_with(&root.join("target/dist-tools/venv"), &wanted)
}

/// On a hosted runner (macOS, Windows): `target/dist-tools/venv-hosted` with maturin
/// only (the host's own toolchain links).
pub fn hosted_venv(root: &Path) -> Result<Venv> {
    let wanted: Vec<String> = python_pins(root)?
        .into_iter()
        .filter(|pin| pin.starts_with("maturin=="))
        .collect();
    venv_with(&root.join("target/dist-tools/venv-hosted"), &wanted)
}

/// This machine's python: `python` on Windows, `python3` elsewhere.
pub fn host_python() -> &'static str {
    if cfg!(windows) { "python" } else { "python3" }
}

/// The `bin` folder of a venv (`Scripts` on Windows).
pub fn venv_bin(dir: &Path) -> PathBuf {
    if cfg!(windows) {
        dir.join("Scripts")
    } else {
        dir.join("bin")
    }
}

/// The python of a venv.
pub fn venv_python(dir: &Path) -> PathBuf {
    venv_bin(dir).join(if cfg!(windows) {
        "python.exe"
    } else {
        "python"
    })
}

fn venv_with(dir: &Path, wanted: &[String]) -> Result<Venv> {
    let python = venv_python(dir);
    if !python.exists() {
        run_step(
            "release tools venv",
            Command::new(host_python()).arg("-m").arg("venv").arg(dir),
        )?;
    }
    let marker = dir.join(".installed");
    let list = wanted.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(list.as_str()) {
        run_step(
            "release tools",
            Command::new(&python)
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                ])
                .args(wanted),
        )?;
        std::fs::write(&marker, list).context("writing the release tools' marker")?;
    }
    Ok(Venv {
        python,
        bin: venv_bin(dir),
    })
}

/// Adds the rustup targets that are missing (for the workspace's pinned toolchain).
pub fn rust_targets(root: &Path, targets: &[&str]) -> Result<()> {
    let installed = output(
        "rustup targets",
        Command::new("rustup")
            .args(["target", "list", "--installed"])
            .current_dir(root),
    )?;
    let missing: Vec<&str> = targets
        .iter()
        .copied()
        .filter(|target| !installed.lines().any(|line| line.trim() == *target))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    run_step(
        "rustup targets",
        Command::new("rustup")
            .args(["target", "add"])
            .args(&missing)
            .current_dir(root),
    )
}

/// `program` run as root: directly when this is root, else through `sudo`.
fn as_root(program: &str) -> Command {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
    if root {
        Command::new(program)
    } else {
        let mut command = Command::new("sudo");
        command.arg(program);
        command
    }
}

fn installed(package: &str) -> bool {
    Command::new("dpkg-query")
        .args(["-W", "-f=${Status}", package])
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).contains("install ok installed"))
}

/// Installs the Debian packages that are missing (`apt-get`, as root).
pub fn apt(packages: &[&str]) -> Result<()> {
    let missing: Vec<&str> = packages
        .iter()
        .copied()
        .filter(|package| !installed(package))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let hint = || {
        format!(
            "install them with `apt-get install {}` (as root)",
            missing.join(" ")
        )
    };
    run_step("apt-get update", as_root("apt-get").arg("update")).with_context(hint)?;
    run_step(
        "Debian packages",
        as_root("apt-get")
            .args(["install", "-y", "--no-install-recommends"])
            .args(&missing)
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )
    .with_context(hint)
}

/// `~/.cache/svc-sdk` (or `target/` when there is no home).
fn cache_dir(root: &Path) -> PathBuf {
    std::env::var_os("HOME")
        .map(|home| PathBuf::from(home).join(".cache/svc-sdk"))
        .unwrap_or_else(|| root.join("target/dist-tools"))
}

/// An arm64 CPython: a folder holding Debian's arm64 packages of `python3` and what
/// they depend on, and its interpreter, run by `qemu-aarch64-static -L SYSROOT`.
pub struct Arm64Python {
    pub sysroot: PathBuf,
    pub python: PathBuf,
}

impl Arm64Python {
    /// A command running the arm64 python under qemu-user.
    pub fn command(&self) -> Command {
        let mut command = Command::new("qemu-aarch64-static");
        command.arg("-L").arg(&self.sysroot).arg(&self.python);
        command
    }
}

/// The names of the `:arm64` packages in `apt-cache depends --recurse` output.
fn arm64_packages(depends: &str) -> BTreeSet<String> {
    depends
        .lines()
        .map(|line| {
            let line = line.trim().trim_start_matches('|');
            line.split_once(": ").map_or(line, |(_, name)| name).trim()
        })
        .filter(|name| !name.starts_with('<') && name.ends_with(":arm64"))
        .map(str::to_string)
        .collect()
}

pub fn arm64_python(root: &Path) -> Result<Arm64Python> {
    apt(&["qemu-user-static"])?;
    let dir = cache_dir(root).join("arm64-python");
    let sysroot = dir.join("sysroot");
    let python = sysroot.join("usr/bin/python3");
    let marker = dir.join(".complete");
    if marker.exists() && python.exists() {
        return Ok(Arm64Python { sysroot, python });
    }
    let foreign = output(
        "dpkg architectures",
        Command::new("dpkg").arg("--print-foreign-architectures"),
    )?;
    if !foreign.lines().any(|arch| arch.trim() == "arm64") {
        run_step(
            "arm64 packages",
            as_root("dpkg").args(["--add-architecture", "arm64"]),
        )
        .context("adding Debian's arm64 architecture (needs root)")?;
        run_step("apt-get update", as_root("apt-get").arg("update"))?;
    }
    let roots = ["python3:arm64", "libgcc-s1:arm64"];
    let mut depends = Command::new("apt-cache");
    depends.args([
        "depends",
        "--recurse",
        "--no-recommends",
        "--no-suggests",
        "--no-conflicts",
        "--no-breaks",
        "--no-replaces",
        "--no-enhances",
    ]);
    depends.args(roots);
    let mut packages = arm64_packages(&output("arm64 python's packages", &mut depends)?);
    if !packages.contains("python3:arm64") {
        // Nothing known for arm64 yet: the package lists predate the architecture.
        run_step("apt-get update", as_root("apt-get").arg("update"))?;
        packages = arm64_packages(&output("arm64 python's packages", &mut depends)?);
    }
    if !packages.contains("python3:arm64") {
        bail!("apt knows no python3:arm64 package; is Debian's arm64 architecture enabled?");
    }
    let debs = dir.join("debs");
    super::fresh_dir(&debs)?;
    run_step(
        "download arm64 python",
        Command::new("apt-get")
            .arg("download")
            .args(&packages)
            .current_dir(&debs),
    )?;
    super::fresh_dir(&sysroot)?;
    let mut count = 0;
    for entry in std::fs::read_dir(&debs).with_context(|| format!("listing {}", debs.display()))? {
        let deb = entry
            .with_context(|| format!("listing {}", debs.display()))?
            .path();
        if deb.extension().is_some_and(|ext| ext == "deb") {
            output(
                "extract a package",
                Command::new("dpkg").arg("-x").arg(&deb).arg(&sysroot),
            )?;
            count += 1;
        }
    }
    if !python.exists() {
        bail!("{} packages extracted, but no {}", count, python.display());
    }
    std::fs::write(&marker, packages.into_iter().collect::<Vec<_>>().join("\n"))
        .context("writing the arm64 python's marker")?;
    println!(
        "arm64 CPython: {count} Debian packages in {}",
        sysroot.display()
    );
    Ok(Arm64Python { sysroot, python })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arm64_packages_from_apt_cache_depends() {
        let text = "python3:arm64\n  PreDepends: python3-minimal:arm64\n  Depends: <debconf-2.0>\n \
                    |Depends: libgcc-s1:arm64\n  Depends: media-types\nlibc6:arm64\n";
        let names: Vec<String> = arm64_packages(text).into_iter().collect();
        assert_eq!(
            names,
            [
                "libc6:arm64",
                "libgcc-s1:arm64",
                "python3-minimal:arm64",
                "python3:arm64"
            ]
        );
    }
}
