//! The hosted runners' workflow (`.github/workflows/*.yml`) checked by actionlint, a Go
//! module installed into `target/dist-tools/go-bin` (`go install`, pinned) when missing.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{output, run_step};

const ACTIONLINT: &str = "github.com/rhysd/actionlint/cmd/actionlint";
const ACTIONLINT_VERSION: &str = "v1.7.12";

pub fn actionlint(root: &Path) -> Result<()> {
    println!("==> the release workflow through actionlint");
    let bin = root.join("target/dist-tools/go-bin");
    let exe = bin.join("actionlint");
    let current = Command::new(&exe)
        .arg("-version")
        .output()
        .ok()
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned());
    if current.is_none_or(|text| text.lines().next() != Some(ACTIONLINT_VERSION)) {
        run_step(
            "install actionlint",
            Command::new("go")
                .args(["install", &format!("{ACTIONLINT}@{ACTIONLINT_VERSION}")])
                .env("GOBIN", &bin),
        )
        .context("installing actionlint needs Go and the Go module proxy")?;
    }
    let folder = root.join(".github/workflows");
    let workflows: Vec<String> = super::files_under(&folder)?
        .into_iter()
        .filter(|name| name.ends_with(".yml") || name.ends_with(".yaml"))
        .map(|name| format!(".github/workflows/{name}"))
        .collect();
    if workflows.is_empty() {
        bail!("no workflow under .github/workflows");
    }
    output(
        "actionlint",
        Command::new(&exe)
            .arg("-no-color")
            .args(&workflows)
            .current_dir(root),
    )?;
    println!(
        "actionlint {ACTIONLINT_VERSION}: {} clean",
        workflows.join(", ")
    );
    Ok(())
}
