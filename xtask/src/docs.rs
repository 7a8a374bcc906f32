//! `cargo xtask docs`: the documentation site, with warnings as errors.
//!
//! The pages of `docs/` and README.md (as the home page, its links made relative to the
//! site) are staged in `target/site-src/` and built by mkdocs (Material theme) with
//! `--strict` (a broken link or anchor, a page left out of the navigation, a Python
//! reference that does not resolve fails the build), the Python API reference made by
//! mkdocstrings from the package's sources and stubs. rustdoc then documents the
//! published crates with `-D warnings` into `target/site/rust/`. Tools come from PyPI
//! into a virtual environment under `target/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// What the site is built with, pinned.
const PACKAGES: &[&str] = &[
    "mkdocs==1.6.1",
    "mkdocs-material==9.8.2",
    "mkdocstrings==1.0.8",
    "mkdocstrings-python==2.0.11",
];

/// The crates whose reference the site carries (the published ones).
const CRATES: &[&str] = &[
    "svc-core",
    "svc-cloud-api",
    "ins-device-api",
    "svc-protocol",
    "svc-logs",
    "svc-secret",
];

pub fn run(root: &Path) -> Result<()> {
    let started = std::time::Instant::now();
    let python = venv(root)?;
    stage(root)?;
    println!("==> docs: mkdocs build --strict");
    let status = Command::new(&python)
        .args([
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--quiet",
            "--config-file",
        ])
        .env("NO_MKDOCS_2_WARNING", "1")
        .arg(root.join("mkdocs.yml"))
        .current_dir(root)
        .status()
        .context("could not run mkdocs")?;
    if !status.success() {
        bail!("the documentation site does not build cleanly ({status})");
    }
    println!("==> docs: cargo doc (-D warnings)");
    let mut doc = Command::new("cargo");
    doc.args(["doc", "--no-deps", "--locked"])
        .env("RUSTDOCFLAGS", "-D warnings")
        .current_dir(root);
    for name in CRATES {
        doc.args(["-p", name]);
    }
    let status = doc.status().context("could not run cargo doc")?;
    if !status.success() {
        bail!("rustdoc found problems in the crates' documentation ({status})");
    }
    let site_rust = root.join("target/site/rust");
    if site_rust.exists() {
        std::fs::remove_dir_all(&site_rust).context("clearing target/site/rust")?;
    }
    copy_dir(&root.join("target/doc"), &site_rust)?;
    println!(
        "site built into target/site/ in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The virtual environment with the site's tools (made once; refreshed when the pins
/// change).
fn venv(root: &Path) -> Result<PathBuf> {
    let venv = root.join("target/docs-venv");
    let python = venv.join("bin/python");
    if !python.exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("could not run python3 -m venv")?;
        if !status.success() {
            bail!("could not make the docs virtual environment ({status})");
        }
    }
    let marker = venv.join(".installed");
    let wanted = PACKAGES.join("\n");
    if std::fs::read_to_string(&marker).ok().as_deref() != Some(wanted.as_str()) {
        let status = Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .args(PACKAGES)
            .status()
            .context("could not run pip")?;
        if !status.success() {
            bail!("could not install the site's tools ({status})");
        }
        std::fs::write(&marker, wanted).context("writing the docs venv marker")?;
    }
    Ok(python)
}

/// `docs/` and the README as the home page, in `target/site-src/`.
fn stage(root: &Path) -> Result<()> {
    let stage = root.join("target/site-src");
    if stage.exists() {
        std::fs::remove_dir_all(&stage).context("clearing target/site-src")?;
    }
    copy_dir(&root.join("docs"), &stage)?;
    let readme = std::fs::read_to_string(root.join("README.md")).context("reading README.md")?;
    std::fs::write(stage.join("index.md"), home_page(&readme)).context("writing index.md")?;
    Ok(())
}

/// The README with its links made the site's: `docs/x.md` becomes `x.md`; a link to a
/// file of the repository that is not a page keeps its text, without the link.
fn home_page(readme: &str) -> String {
    let mut out = String::with_capacity(readme.len());
    let mut rest = readme;
    while let Some(open) = rest.find("](") {
        let Some(close) = rest[open + 2..].find(')') else {
            break;
        };
        let target = &rest[open + 2..open + 2 + close];
        let text_start = rest[..open].rfind('[');
        match (text_start, target) {
            (_, t) if t.starts_with("http://") || t.starts_with("https://") => {
                out.push_str(&rest[..open + 2 + close + 1]);
            }
            (_, t) if t.starts_with("docs/") => {
                out.push_str(&rest[..open + 2]);
                out.push_str(&t["docs/".len()..]);
                out.push(')');
            }
            (Some(start), _) => {
                out.push_str(&rest[..start]);
                out.push_str(&rest[start + 1..open]);
            }
            (None, _) => out.push_str(&rest[..open + 2 + close + 1]),
        }
        rest = &rest[open + 2 + close + 1..];
    }
    out.push_str(rest);
    out
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

#[cfg(test)]
mod tests {
    use super::home_page;

    #[test]
    fn the_readme_links_become_the_sites() {
        let readme = "see [the CLI](docs/cli.md), [`openapi/`](openapi/), [site](https://x.y/z) and [LICENSE](LICENSE).";
        assert_eq!(
            home_page(readme),
            "see [the CLI](cli.md), `openapi/`, [site](https://x.y/z) and LICENSE."
        );
    }
}
