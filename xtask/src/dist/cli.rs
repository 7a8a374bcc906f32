//! `svc` for Linux: static musl binaries for x86_64 and aarch64 (linked by zig through
//! cargo-zigbuild), each in `target/dist/cli/svc-VERSION-TARGET.tar.gz` with the shell
//! completions (bash, zsh, fish) and man pages, which the binary itself writes from its
//! clap definitions (`svc completions SHELL`, `svc man DIR`).
//!
//! The checks: each archive's layout, each binary static and for its machine, `svc
//! --version` and `svc device settings diff` on two files run natively (x86_64) and
//! under qemu-user (aarch64), and `cargo install --path crates/svc-cli` still working.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{output, run_step, tools};

/// The targets, with their ELF machine numbers.
const TARGETS: [(&str, u16); 2] = [
    ("x86_64-unknown-linux-musl", 62),
    ("aarch64-unknown-linux-musl", 183),
];

/// The target whose binary runs here (it writes the completions and man pages).
const NATIVE: &str = "x86_64-unknown-linux-musl";

const COMPLETIONS: [(&str, &str); 3] =
    [("bash", "svc.bash"), ("zsh", "_svc"), ("fish", "svc.fish")];

fn archive_stem(version: &str, target: &str) -> String {
    format!("svc-{version}-{target}")
}

fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), |dir| root.join(dir))
}

pub fn build(root: &Path, out: &Path, version: &str) -> Result<()> {
    let targets: Vec<&str> = TARGETS.iter().map(|(target, _)| *target).collect();
    tools::rust_targets(root, &targets)?;
    let venv = tools::venv(root)?;
    for target in &targets {
        run_step(
            &format!("svc for {target}"),
            Command::new(venv.bin.join("cargo-zigbuild"))
                .args([
                    "zigbuild",
                    "--release",
                    "--locked",
                    "-p",
                    "svc-cli",
                    "--bin",
                    "svc",
                ])
                .args(["--target", target])
                .current_dir(root)
                .env("PATH", venv.path()?),
        )?;
    }
    let binary = |target: &str| target_dir(root).join(target).join("release/svc");
    for (target, machine) in TARGETS {
        check_static(&binary(target), machine)?;
    }

    let staging = root.join("target/dist-tools/cli");
    super::fresh_dir(&staging)?;
    let generated = staging.join("generated");
    std::fs::create_dir_all(generated.join("completions"))
        .context("creating the completions folder")?;
    let native = binary(NATIVE);
    for (shell, file) in COMPLETIONS {
        let script = output(
            &format!("{shell} completions"),
            Command::new(&native).args(["completions", shell]),
        )?;
        std::fs::write(generated.join("completions").join(file), script)
            .with_context(|| format!("writing {file}"))?;
    }
    run_step(
        "man pages",
        Command::new(&native)
            .arg("man")
            .arg(generated.join("man/man1")),
    )?;

    let dir = out.join("cli");
    super::fresh_dir(&dir)?;
    let epoch = source_date_epoch(root);
    for (target, _) in TARGETS {
        let stem = archive_stem(version, target);
        let folder = staging.join(&stem);
        std::fs::create_dir_all(&folder).with_context(|| format!("creating {stem}"))?;
        std::fs::copy(binary(target), folder.join("svc"))
            .with_context(|| format!("copying svc for {target}"))?;
        std::fs::copy(root.join("LICENSE"), folder.join("LICENSE")).context("copying LICENSE")?;
        run_step(
            "copy completions and man pages",
            Command::new("cp")
                .arg("-r")
                .arg(generated.join("completions"))
                .arg(generated.join("man"))
                .arg(&folder),
        )?;
        let archive = dir.join(format!("{stem}.tar.gz"));
        // Reproducible: sorted names, no owners, the commit's time, gzip without a time.
        run_step(
            &format!("archive {stem}"),
            Command::new("tar")
                .args([
                    "--sort=name",
                    "--owner=0",
                    "--group=0",
                    "--numeric-owner",
                    &format!("--mtime=@{epoch}"),
                    "--use-compress-program=gzip -n -9",
                    "-cf",
                ])
                .arg(&archive)
                .arg("-C")
                .arg(&staging)
                .arg(&stem),
        )?;
    }
    Ok(())
}

/// `SOURCE_DATE_EPOCH`, else the time of the checked-out commit, else 0.
fn source_date_epoch(root: &Path) -> String {
    if let Ok(epoch) = std::env::var("SOURCE_DATE_EPOCH") {
        return epoch;
    }
    Command::new("git")
        .args(["log", "-1", "--format=%ct"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|epoch| !epoch.is_empty())
        .unwrap_or_else(|| "0".into())
}

/// An ELF file's machine, and whether it asks for a program interpreter (is dynamic).
fn elf_info(bytes: &[u8]) -> Result<(u16, bool)> {
    let u16_at = |at: usize| -> Result<u16> {
        let raw = bytes.get(at..at + 2).context("a truncated ELF header")?;
        Ok(u16::from_le_bytes([raw[0], raw[1]]))
    };
    let u32_at = |at: usize| -> Result<u32> {
        let raw = bytes.get(at..at + 4).context("a truncated ELF header")?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    };
    let u64_at = |at: usize| -> Result<u64> {
        let raw: [u8; 8] = bytes
            .get(at..at + 8)
            .context("a truncated ELF header")?
            .try_into()
            .context("a truncated ELF header")?;
        Ok(u64::from_le_bytes(raw))
    };
    if bytes.get(..6) != Some(b"\x7fELF\x02\x01".as_slice()) {
        bail!("not a 64-bit little-endian ELF file");
    }
    let machine = u16_at(18)?;
    let program_headers = usize::try_from(u64_at(32)?).context("a program header offset")?;
    let entry_size = usize::from(u16_at(54)?);
    let count = usize::from(u16_at(56)?);
    let mut interpreter = false;
    for index in 0..count {
        const PT_INTERP: u32 = 3;
        if u32_at(program_headers + index * entry_size)? == PT_INTERP {
            interpreter = true;
        }
    }
    Ok((machine, interpreter))
}

/// A static executable (no program interpreter) for the machine.
fn check_static(binary: &Path, machine: u16) -> Result<()> {
    let bytes = std::fs::read(binary).with_context(|| format!("reading {}", binary.display()))?;
    let (found, dynamic) =
        elf_info(&bytes).with_context(|| format!("reading {}", binary.display()))?;
    if found != machine {
        bail!(
            "{} is for ELF machine {found}, expected {machine}",
            binary.display()
        );
    }
    if dynamic {
        bail!(
            "{} is dynamically linked, expected static",
            binary.display()
        );
    }
    println!(
        "{}: static, {:.1} MiB",
        binary.display(),
        super::mib(bytes.len() as u64)
    );
    Ok(())
}

pub fn check(root: &Path, out: &Path, version: &str) -> Result<()> {
    let work = root.join("target/dist-check/cli");
    super::fresh_dir(&work)?;
    let old = work.join("unit.json");
    let new = work.join("wanted.json");
    std::fs::write(
        &old,
        r#"{"output":{"comA":{"messages":{"imuShort":"off","status":"1s"}}}}"#,
    )
    .context("writing unit.json")?;
    std::fs::write(
        &new,
        r#"{"output":{"comA":{"messages":{"imuShort":"10ms","status":"1s"}}}}"#,
    )
    .context("writing wanted.json")?;
    tools::apt(&["qemu-user-static"])?;
    let files = super::files_under(&out.join("cli"))?;
    let mut expected: Vec<String> = TARGETS
        .iter()
        .map(|(target, _)| format!("{}.tar.gz", archive_stem(version, target)))
        .collect();
    expected.sort();
    if files != expected {
        bail!("target/dist/cli holds {files:?}, expected {expected:?}");
    }
    for (target, machine) in TARGETS {
        let stem = archive_stem(version, target);
        run_step(
            &format!("unpack {stem}"),
            Command::new("tar")
                .arg("-xzf")
                .arg(out.join("cli").join(format!("{stem}.tar.gz")))
                .arg("-C")
                .arg(&work),
        )?;
        let folder = work.join(&stem);
        let binary = folder.join("svc");
        check_static(&binary, machine)?;
        for (shell, file) in COMPLETIONS {
            let path = folder.join("completions").join(file);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("{stem}: no {shell} completions"))?;
            if !text.contains("device") {
                bail!("{stem}: the {shell} completions do not complete `svc device`");
            }
        }
        for page in ["svc.1", "svc-device-settings-diff.1"] {
            let path = folder.join("man/man1").join(page);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("{stem}: no man page {page}"))?;
            if !text.contains(".TH svc") {
                bail!("{stem}: {page} is not a man page");
            }
        }
        if !folder.join("LICENSE").is_file() {
            bail!("{stem}: no LICENSE");
        }
        let run = |args: &[&std::ffi::OsStr]| -> Command {
            let mut command = if target == NATIVE {
                Command::new(&binary)
            } else {
                let mut command = Command::new("qemu-aarch64-static");
                command.arg(&binary);
                command
            };
            command.args(args).current_dir(&work);
            command
        };
        let printed = output("svc --version", &mut run(&["--version".as_ref()]))?;
        if printed.trim() != format!("svc {version}") {
            bail!("{stem}: `svc --version` printed {printed:?}");
        }
        let diff = output(
            "svc device settings diff",
            &mut run(&[
                "device".as_ref(),
                "settings".as_ref(),
                "diff".as_ref(),
                old.as_os_str(),
                new.as_os_str(),
            ]),
        )?;
        let diff: serde_json::Value = serde_json::from_str(&diff)
            .with_context(|| format!("{stem}: the diff is not JSON: {diff}"))?;
        let changed = diff.get("changed").cloned().unwrap_or_default();
        if changed != serde_json::json!(["output/comA/messages/imuShort"]) {
            bail!("{stem}: `svc device settings diff` found {changed}");
        }
        println!(
            "{stem}: {} ({}), settings diff: {changed}",
            printed.trim(),
            if target == NATIVE {
                "native"
            } else {
                "qemu-user"
            }
        );
    }
    // `cargo install --path crates/svc-cli` keeps working (a debug build, so that the
    // workspace's own build is reused).
    run_step(
        "cargo install --path crates/svc-cli",
        Command::new("cargo")
            .args([
                "install",
                "--locked",
                "--debug",
                "--force",
                "--path",
                "crates/svc-cli",
                "--root",
            ])
            .arg(work.join("installed"))
            .env("CARGO_TARGET_DIR", target_dir(root))
            .current_dir(root),
    )?;
    let installed = output(
        "installed svc --version",
        Command::new(work.join("installed/bin/svc")).arg("--version"),
    )?;
    if installed.trim() != format!("svc {version}") {
        bail!("the installed svc printed {installed:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elf_headers() {
        // This test binary: x86_64 or aarch64, linked dynamically by the host toolchain.
        let me = std::env::current_exe().expect("the test binary");
        let bytes = std::fs::read(me).expect("readable");
        let (machine, dynamic) = elf_info(&bytes).expect("an ELF file");
        assert!(machine == 62 || machine == 183, "{machine}");
        assert!(dynamic);
        assert!(elf_info(b"#!/bin/sh\n").is_err());
        assert!(elf_info(&bytes[..40]).is_err());
    }
}
