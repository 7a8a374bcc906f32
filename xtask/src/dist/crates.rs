//! The published library crates: their packages (`target/dist/crates/*.crate`), each
//! built from its own tarball by `cargo publish --dry-run --workspace`, and their file
//! lists.
//!
//! Every other workspace member has `publish = false` and is left out with `--exclude`
//! (the emulator, the CLI, the bindings, the test support, the benchmarks and xtask).

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use super::{output, run_step, sha256_file};

/// The published crates, in dependency order.
pub const PUBLISHED: [&str; 6] = [
    "svc-secret",
    "svc-cloud-api",
    "ins-device-api",
    "svc-protocol",
    "svc-logs",
    "svc-core",
];

/// Files a package carries besides its `src/` folder.
const TOP_LEVEL: [&str; 6] = [
    ".cargo_vcs_info.json",
    "Cargo.toml",
    "Cargo.toml.orig",
    "Cargo.lock",
    "README.md",
    "LICENSE",
];

/// The metadata crates.io and docs.rs show, which every published crate must have.
const METADATA: [&str; 7] = [
    "description",
    "license",
    "repository",
    "documentation",
    "readme",
    "keywords",
    "categories",
];

fn metadata(root: &Path) -> Result<serde_json::Value> {
    let text = output(
        "cargo metadata",
        Command::new("cargo")
            .args(["metadata", "--no-deps", "--format-version", "1", "--locked"])
            .current_dir(root),
    )?;
    serde_json::from_str(&text).context("reading cargo metadata's output")
}

fn packages(metadata: &serde_json::Value) -> Result<&Vec<serde_json::Value>> {
    metadata
        .get("packages")
        .and_then(serde_json::Value::as_array)
        .context("cargo metadata lists no packages")
}

fn name(package: &serde_json::Value) -> &str {
    package
        .get("name")
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
}

/// The members that are not published (`publish = false`: `"publish": []`), for
/// `--exclude`. Fails unless exactly [`PUBLISHED`] are publishable.
fn unpublished(metadata: &serde_json::Value) -> Result<Vec<String>> {
    let mut excluded = Vec::new();
    let mut published = BTreeSet::new();
    for package in packages(metadata)? {
        let never = package
            .get("publish")
            .and_then(serde_json::Value::as_array)
            .is_some_and(Vec::is_empty);
        if never {
            excluded.push(name(package).to_string());
        } else {
            published.insert(name(package).to_string());
        }
    }
    let wanted: BTreeSet<String> = PUBLISHED.iter().map(|name| name.to_string()).collect();
    if published != wanted {
        bail!(
            "the publishable members are {published:?}, expected {wanted:?}: set `publish` in their Cargo.toml"
        );
    }
    excluded.sort();
    Ok(excluded)
}

fn target_dir(metadata: &serde_json::Value) -> Result<PathBuf> {
    metadata
        .get("target_directory")
        .and_then(serde_json::Value::as_str)
        .map(PathBuf::from)
        .context("cargo metadata gives no target directory")
}

/// `cargo package|publish --workspace --exclude …` with the unpublished members left out.
fn workspace_command(root: &Path, metadata: &serde_json::Value, args: &[&str]) -> Result<Command> {
    let mut command = Command::new("cargo");
    command.args(args).args(["--workspace", "--locked"]);
    // The release workflow packages a clean checkout; here other work may be in progress.
    command.arg("--allow-dirty");
    for name in unpublished(metadata)? {
        command.args(["--exclude", &name]);
    }
    command.current_dir(root);
    Ok(command)
}

/// The `.crate` packages into `target/dist/crates/` (not verified here: `check` does).
pub fn build(root: &Path, out: &Path) -> Result<()> {
    let metadata = metadata(root)?;
    check_metadata(&metadata)?;
    run_step(
        "crate packages",
        &mut workspace_command(root, &metadata, &["package", "--no-verify"])?,
    )?;
    let dir = out.join("crates");
    super::fresh_dir(&dir)?;
    for (file, from) in packaged(&metadata)? {
        std::fs::copy(&from, dir.join(&file))
            .with_context(|| format!("copying {}", from.display()))?;
        println!("crates/{file}");
    }
    Ok(())
}

/// `(file name, path)` of each published crate's package in `target/package/`.
fn packaged(metadata: &serde_json::Value) -> Result<Vec<(String, PathBuf)>> {
    let target = target_dir(metadata)?;
    let mut found = Vec::new();
    for package in packages(metadata)? {
        if !PUBLISHED.contains(&name(package)) {
            continue;
        }
        let version = package
            .get("version")
            .and_then(serde_json::Value::as_str)
            .context("a package without a version")?;
        let file = format!("{}-{version}.crate", name(package));
        let path = target.join("package").join(&file);
        if !path.is_file() {
            bail!("cargo left no {}", path.display());
        }
        found.push((file, path));
    }
    Ok(found)
}

/// Each crate built from its own package, in dependency order (cargo's multi-package
/// publishing resolves the crates of the same run from the packages just made), and the
/// packages are those of `target/dist/crates/`.
pub fn check(root: &Path, out: &Path) -> Result<()> {
    check_lists(root)?;
    let metadata = metadata(root)?;
    run_step(
        "cargo publish --dry-run",
        &mut workspace_command(root, &metadata, &["publish", "--dry-run"])?,
    )?;
    for (file, path) in packaged(&metadata)? {
        let shipped = out.join("crates").join(&file);
        if sha256_file(&shipped)? != sha256_file(&path)? {
            bail!(
                "target/dist/crates/{file} differs from the package cargo verified; run `cargo xtask dist` again"
            );
        }
    }
    println!(
        "{} crates built from their packages: {}",
        PUBLISHED.len(),
        PUBLISHED.join(", ")
    );
    Ok(())
}

/// The metadata each published crate must carry.
fn check_metadata(metadata: &serde_json::Value) -> Result<()> {
    let mut problems = Vec::new();
    for package in packages(metadata)? {
        if !PUBLISHED.contains(&name(package)) {
            continue;
        }
        for field in METADATA {
            let present = match package.get(field) {
                Some(serde_json::Value::String(text)) => !text.is_empty(),
                Some(serde_json::Value::Array(items)) => !items.is_empty(),
                _ => false,
            };
            if !present {
                problems.push(format!("{}: no {field}", name(package)));
            }
        }
        let docs_rs = package
            .pointer("/metadata/docs/rs/all-features")
            .and_then(serde_json::Value::as_bool);
        if docs_rs != Some(true) {
            problems.push(format!(
                "{}: [package.metadata.docs.rs] all-features = true is missing",
                name(package)
            ));
        }
    }
    unpublished(metadata)?;
    if !problems.is_empty() {
        bail!("crate metadata:\n  {}", problems.join("\n  "));
    }
    Ok(())
}

/// What `cargo xtask ci` checks without building: the metadata, and each published
/// crate's file list (`cargo package --list`) holds what builds and nothing else.
pub fn check_lists(root: &Path) -> Result<()> {
    println!("==> crate packages' file lists");
    let metadata = metadata(root)?;
    check_metadata(&metadata)?;
    let mut problems = Vec::new();
    for crate_name in PUBLISHED {
        let listed = output(
            "cargo package --list",
            Command::new("cargo")
                .args([
                    "package",
                    "--list",
                    "--locked",
                    "--allow-dirty",
                    "-p",
                    crate_name,
                ])
                .current_dir(root),
        )?;
        let listed: BTreeSet<String> = listed.lines().map(str::to_string).collect();
        let dir = root.join("crates").join(crate_name);
        let tracked = output(
            "git ls-files",
            Command::new("git")
                .args(["ls-files", "src"])
                .current_dir(&dir),
        )?;
        let tracked: Vec<String> = tracked.lines().map(str::to_string).collect();
        let embedded = embedded_files(&dir)?;
        problems.extend(
            list_problems(&listed, &tracked, &embedded)
                .into_iter()
                .map(|problem| format!("{crate_name}: {problem}")),
        );
        println!("{crate_name}: {} files", listed.len());
    }
    if !problems.is_empty() {
        bail!("crate packages:\n  {}", problems.join("\n  "));
    }
    Ok(())
}

/// What is wrong with a package's file list: a file outside `src/` and the known
/// top-level files, a missing one, a tracked source left out, or an embedded file
/// (`include_str!`) the package does not carry.
fn list_problems(
    listed: &BTreeSet<String>,
    tracked_sources: &[String],
    embedded: &[String],
) -> Vec<String> {
    let mut problems = Vec::new();
    for file in listed {
        if !file.starts_with("src/") && !TOP_LEVEL.contains(&file.as_str()) {
            problems.push(format!("ships {file}, which nothing builds from"));
        }
    }
    for file in ["Cargo.toml", "README.md", "LICENSE", "src/lib.rs"] {
        if !listed.contains(file) {
            problems.push(format!("does not ship {file}"));
        }
    }
    for file in tracked_sources {
        if !listed.contains(file) {
            problems.push(format!("leaves out the tracked source {file}"));
        }
    }
    for file in embedded {
        if !listed.contains(file) {
            problems.push(format!(
                "embeds {file}, which is not in the package (keep a copy inside the crate)"
            ));
        }
    }
    problems
}

/// The files that `include_str!`/`include_bytes!` in `src/` embed, relative to the
/// crate folder (`../x` when outside it).
fn embedded_files(dir: &Path) -> Result<Vec<String>> {
    let mut found = Vec::new();
    for file in super::files_under(&dir.join("src"))? {
        if !file.ends_with(".rs") {
            continue;
        }
        let path = dir.join("src").join(&file);
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        for macro_name in ["include_str!(\"", "include_bytes!(\""] {
            for (at, _) in text.match_indices(macro_name) {
                let rest = &text[at + macro_name.len()..];
                let Some(end) = rest.find('"') else { continue };
                let parent = Path::new("src")
                    .join(&file)
                    .parent()
                    .map(Path::to_path_buf)
                    .unwrap_or_default();
                found.push(normalize(&parent.join(&rest[..end])));
            }
        }
    }
    Ok(found)
}

/// `a/b/../c` → `a/c`; a path leaving the folder keeps its leading `..`.
fn normalize(path: &Path) -> String {
    let mut parts: Vec<String> = Vec::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                if parts.last().is_some_and(|last| last != "..") {
                    parts.pop();
                } else {
                    parts.push("..".into());
                }
            }
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            _ => {}
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|item| item.to_string()).collect()
    }

    #[test]
    fn a_package_ships_what_builds_and_nothing_else() {
        let good = set(&[
            "Cargo.toml",
            "Cargo.toml.orig",
            "README.md",
            "LICENSE",
            "src/lib.rs",
            "src/a/b.rs",
        ]);
        let tracked = vec!["src/lib.rs".to_string(), "src/a/b.rs".to_string()];
        assert!(list_problems(&good, &tracked, &[]).is_empty());

        let mut with_tests = good.clone();
        with_tests.insert("tests/it/main.rs".into());
        assert_eq!(list_problems(&with_tests, &tracked, &[]).len(), 1);

        let mut without_license = good.clone();
        without_license.remove("LICENSE");
        assert_eq!(list_problems(&without_license, &tracked, &[]).len(), 1);

        let tracked_more = vec!["src/lib.rs".to_string(), "src/new.rs".to_string()];
        assert_eq!(list_problems(&good, &tracked_more, &[]).len(), 1);

        let outside = vec!["../../openapi/x.yaml".to_string()];
        assert_eq!(list_problems(&good, &tracked, &outside).len(), 1);
    }

    #[test]
    fn embedded_paths_are_normalized() {
        assert_eq!(
            normalize(Path::new("src/device/ins-device.yaml")),
            "src/device/ins-device.yaml"
        );
        assert_eq!(normalize(Path::new("src/a/../b.json")), "src/b.json");
        assert_eq!(
            normalize(Path::new("src/../../../openapi/x.yaml")),
            "../../openapi/x.yaml"
        );
    }
}
