//! The emulator binary: built, started (its JSON line read), its memory and CPU read
//! from `/proc`, ended when dropped.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

pub(super) fn build_emulator(root: &Path, debug: bool) -> Result<PathBuf> {
    let mut args = vec![
        "build",
        "--quiet",
        "-p",
        "svc-emulator",
        "--bin",
        "svc-emulator",
        "--locked",
    ];
    if !debug {
        args.push("--release");
    }
    println!("==> emulator binary: cargo {}", args.join(" "));
    let status = Command::new("cargo")
        .args(&args)
        .current_dir(root)
        .status()
        .context("could not run cargo")?;
    if !status.success() {
        bail!("building the emulator failed ({status})");
    }
    let profile = if debug { "debug" } else { "release" };
    Ok(root.join("target").join(profile).join("svc-emulator"))
}

/// The emulator process, ended when dropped.
pub(super) struct Emulator {
    child: Child,
    pub(super) pid: u32,
    info: Value,
    /// Kept open: the emulator must not meet a closed pipe if it writes again.
    _stdout: Option<BufReader<ChildStdout>>,
}

impl Emulator {
    pub(super) fn start(binary: &Path) -> Result<Self> {
        let mut child = Command::new(binary)
            // Tokens outlive the run, as the SDK would renew them; no serial pty.
            .args(["--no-device-pty", "--token-lifetime-seconds", "3600"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut stdout = child.stdout.take().map(BufReader::new);
        // From here on, dropping `emulator` ends the process.
        let mut emulator = Self {
            pid: child.id(),
            child,
            info: Value::Null,
            _stdout: None,
        };
        let mut line = String::new();
        if let Some(out) = stdout.as_mut() {
            out.read_line(&mut line)
                .context("reading the emulator's JSON line")?;
        }
        if line.trim().is_empty() {
            bail!("the emulator printed nothing");
        }
        emulator.info =
            serde_json::from_str(&line).context("the emulator's first line is not JSON")?;
        emulator._stdout = stdout;
        Ok(emulator)
    }

    pub(super) fn field(&self, name: &str) -> Result<String> {
        self.info
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .with_context(|| format!("the emulator's JSON line has no `{name}`"))
    }

    /// Resident memory in KiB (`VmRSS` of `/proc/<pid>/status`).
    pub(super) fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .context("reading the emulator's /proc status")?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS in the emulator's /proc status")
    }

    /// CPU time used so far, in clock ticks (`utime + stime` of `/proc/<pid>/stat`).
    pub(super) fn cpu_ticks(&self) -> Result<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .context("reading the emulator's /proc stat")?;
        // The command name (field 2) is in parentheses and may hold spaces: count
        // fields from the last `)`; utime and stime are fields 14 and 15.
        let after = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .context("unexpected /proc stat")?;
        let fields: Vec<&str> = after.split_whitespace().collect();
        let tick = |i: usize| -> Result<u64> {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .context("unexpected /proc stat")
        };
        Ok(tick(11)? + tick(12)?)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        // Already ended or not: either way nothing more can be done here.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`; 100 on Linux).
pub(super) fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}
