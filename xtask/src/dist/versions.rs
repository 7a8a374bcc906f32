//! One version for every artifact: `[workspace.package] version` of the root Cargo.toml.
//!
//! - every workspace member takes it (`version.workspace = true`), and the path
//!   dependencies of `[workspace.dependencies]` that carry a version (what a published
//!   crate needs) name exactly it;
//! - the Python package's version is dynamic (maturin reads it from
//!   bindings/python/Cargo.toml);
//! - the Maven POM (`bindings/kotlin/pom.xml`) says the same, literally or through a
//!   property;
//! - the Swift package's version is the git tag `vVERSION`: a version tag on the checked
//!   out commit, and `SVC_RELEASE_TAG` (set by the release workflow to the tag it runs
//!   for), must name it;
//! - `CHANGELOG.md` has a section for it, or an `Unreleased` one;
//! - the repository address of the Python package is the workspace's.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};

fn read_toml(path: &Path) -> Result<toml::Table> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.parse::<toml::Table>()
        .with_context(|| format!("parsing {}", path.display()))
}

fn table<'a>(value: Option<&'a toml::Value>, what: &str) -> Result<&'a toml::Table> {
    value
        .and_then(toml::Value::as_table)
        .with_context(|| format!("{what} is missing or not a table"))
}

/// Checks every rule of the module and returns the version.
pub fn check(root: &Path) -> Result<String> {
    let manifest = read_toml(&root.join("Cargo.toml"))?;
    let workspace = table(manifest.get("workspace"), "Cargo.toml [workspace]")?;
    let package = table(workspace.get("package"), "Cargo.toml [workspace.package]")?;
    let version = package
        .get("version")
        .and_then(toml::Value::as_str)
        .context("Cargo.toml [workspace.package] has no version")?
        .to_string();
    if version.split('.').count() != 3
        || !version
            .split(['.', '-', '+'])
            .next()
            .is_some_and(|major| major.chars().all(|c| c.is_ascii_digit()))
    {
        bail!("the workspace version {version:?} is not MAJOR.MINOR.PATCH");
    }
    let repository = package
        .get("repository")
        .and_then(toml::Value::as_str)
        .context("Cargo.toml [workspace.package] has no repository")?;

    let mut problems = Vec::new();
    members(root, workspace, &mut problems)?;
    dependencies(workspace, &version, &mut problems)?;
    pyproject(root, repository, &mut problems)?;
    pom(root, &version, &mut problems)?;
    tags(root, &version, &mut problems)?;
    changelog(root, &version, &mut problems)?;
    if !problems.is_empty() {
        bail!(
            "the version {version} is not the same everywhere:\n  {}",
            problems.join("\n  ")
        );
    }
    Ok(version)
}

/// Every member's manifest says `version.workspace = true`.
fn members(root: &Path, workspace: &toml::Table, problems: &mut Vec<String>) -> Result<()> {
    let members = workspace
        .get("members")
        .and_then(toml::Value::as_array)
        .context("Cargo.toml [workspace] has no members")?;
    for member in members {
        let member = member
            .as_str()
            .context("a workspace member is not a string")?;
        let path = root.join(member).join("Cargo.toml");
        let manifest = read_toml(&path)?;
        let inherited = manifest
            .get("package")
            .and_then(|package| package.get("version"))
            .and_then(toml::Value::as_table)
            .and_then(|version| version.get("workspace"))
            .and_then(toml::Value::as_bool)
            == Some(true);
        if !inherited {
            problems.push(format!(
                "{member}/Cargo.toml: the version must be `version.workspace = true`"
            ));
        }
    }
    Ok(())
}

/// The path dependencies of `[workspace.dependencies]` with a version name exactly it.
fn dependencies(workspace: &toml::Table, version: &str, problems: &mut Vec<String>) -> Result<()> {
    let dependencies = table(
        workspace.get("dependencies"),
        "Cargo.toml [workspace.dependencies]",
    )?;
    for (name, spec) in dependencies {
        let Some(spec) = spec.as_table() else {
            continue;
        };
        if spec.get("path").is_none() {
            continue;
        }
        if let Some(wanted) = spec.get("version").and_then(toml::Value::as_str)
            && wanted.trim_start_matches('=') != version
        {
            problems.push(format!(
                "Cargo.toml [workspace.dependencies] {name}: version {wanted:?}, not {version:?}"
            ));
        }
    }
    Ok(())
}

/// The Python package takes its version from Cargo (dynamic) and names the workspace's
/// repository.
fn pyproject(root: &Path, repository: &str, problems: &mut Vec<String>) -> Result<()> {
    let path = root.join("bindings/python/pyproject.toml");
    let pyproject = read_toml(&path)?;
    let project = table(pyproject.get("project"), "pyproject.toml [project]")?;
    if project.contains_key("version") {
        problems.push("bindings/python/pyproject.toml: [project] must not set a version (it is dynamic, from Cargo)".into());
    }
    let dynamic = project
        .get("dynamic")
        .and_then(toml::Value::as_array)
        .is_some_and(|list| list.iter().any(|item| item.as_str() == Some("version")));
    if !dynamic {
        problems
            .push("bindings/python/pyproject.toml: [project] dynamic must list \"version\"".into());
    }
    let listed = project
        .get("urls")
        .and_then(toml::Value::as_table)
        .and_then(|urls| urls.get("Repository"))
        .and_then(toml::Value::as_str);
    if listed != Some(repository) {
        problems.push(format!(
            "bindings/python/pyproject.toml: [project.urls] Repository is {listed:?}, the workspace's repository is {repository:?}"
        ));
    }
    Ok(())
}

/// The text of each element directly inside the root element of an XML document, in
/// order (`name`, text); comments, declarations and nested elements skipped.
fn top_level_elements(xml: &str) -> Result<Vec<(String, String)>> {
    let mut found = Vec::new();
    let mut depth = 0usize;
    let mut rest = xml;
    let mut current: Option<(String, usize)> = None;
    while let Some(start) = rest.find('<') {
        let after = &rest[start..];
        if after.starts_with("<!--") {
            let end = after.find("-->").context("an XML comment is not closed")?;
            rest = &after[end + 3..];
            continue;
        }
        let end = after.find('>').context("an XML tag is not closed")?;
        let tag = &after[1..end];
        let offset = xml.len() - after.len();
        rest = &after[end + 1..];
        if tag.starts_with('?') || tag.starts_with('!') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| !c.is_whitespace() && *c != '/')
            .collect();
        if tag.starts_with('/') {
            depth = depth.saturating_sub(1);
            if depth == 1
                && let Some((open, text_start)) = current.take()
                && open == name
            {
                found.push((name, xml[text_start..offset].trim().to_string()));
            }
        } else if tag.ends_with('/') {
            // An empty element: no depth change.
        } else {
            depth += 1;
            if depth == 2 {
                current = Some((name, xml.len() - rest.len()));
            }
        }
    }
    Ok(found)
}

/// The POM's own version (not a dependency's or the parent's) is the workspace's.
fn pom(root: &Path, version: &str, problems: &mut Vec<String>) -> Result<()> {
    let path = root.join("bindings/kotlin/pom.xml");
    let xml =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let elements = top_level_elements(&xml)?;
    let Some((_, declared)) = elements.iter().find(|(name, _)| name == "version") else {
        problems.push("bindings/kotlin/pom.xml: the project has no <version>".into());
        return Ok(());
    };
    let resolved = match declared
        .strip_prefix("${")
        .and_then(|property| property.strip_suffix('}'))
    {
        Some(property) => {
            let properties = elements
                .iter()
                .find(|(name, _)| name == "properties")
                .map(|(_, text)| text.as_str())
                .unwrap_or_default();
            let open = format!("<{property}>");
            properties.find(&open).and_then(|start| {
                let value = &properties[start + open.len()..];
                value
                    .find(&format!("</{property}>"))
                    .map(|end| value[..end].trim().to_string())
            })
        }
        None => Some(declared.clone()),
    };
    if resolved.as_deref() != Some(version) {
        problems.push(format!(
            "bindings/kotlin/pom.xml: the project's version is {declared:?} ({resolved:?}), not {version:?}"
        ));
    }
    Ok(())
}

/// A version tag (`vX.Y.Z` or `X.Y.Z`) names the workspace's version.
fn tag_matches(tag: &str, version: &str) -> bool {
    tag.strip_prefix('v').unwrap_or(tag) == version
}

fn looks_like_version(tag: &str) -> bool {
    let bare = tag.strip_prefix('v').unwrap_or(tag);
    bare.split('.').count() >= 3 && bare.starts_with(|c: char| c.is_ascii_digit())
}

/// The Swift package's version is the git tag: the version tags on the checked-out
/// commit and `SVC_RELEASE_TAG` must name the workspace's version.
fn tags(root: &Path, version: &str, problems: &mut Vec<String>) -> Result<()> {
    if let Ok(tag) = std::env::var("SVC_RELEASE_TAG")
        && !tag.is_empty()
        && !tag_matches(&tag, version)
    {
        problems.push(format!(
            "SVC_RELEASE_TAG is {tag:?}: a release of {version} is tagged v{version}"
        ));
    }
    // Without git (a source archive), there is no tag to compare.
    let Ok(out) = Command::new("git")
        .args(["tag", "--points-at", "HEAD"])
        .current_dir(root)
        .output()
    else {
        return Ok(());
    };
    if !out.status.success() {
        return Ok(());
    }
    for tag in String::from_utf8_lossy(&out.stdout).lines() {
        if looks_like_version(tag) && !tag_matches(tag, version) {
            problems.push(format!(
                "the commit is tagged {tag}, but the workspace version is {version}"
            ));
        }
    }
    Ok(())
}

/// `CHANGELOG.md` (Keep a Changelog) has a section `## [VERSION]` or `## [Unreleased]`.
fn changelog(root: &Path, version: &str, problems: &mut Vec<String>) -> Result<()> {
    let path = root.join("CHANGELOG.md");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let sections: Vec<&str> = text
        .lines()
        .filter_map(|line| line.strip_prefix("## ["))
        .filter_map(|line| line.split_once(']').map(|(name, _)| name))
        .collect();
    if !sections
        .iter()
        .any(|name| *name == version || *name == "Unreleased")
    {
        problems.push(format!(
            "CHANGELOG.md has no section `## [{version}]` nor `## [Unreleased]` (found {sections:?})"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pom_version_is_the_projects_own() {
        let xml = r#"<?xml version="1.0"?>
<!-- <version>9</version> -->
<project xmlns="x">
  <parent><groupId>g</groupId><version>5.0</version></parent>
  <artifactId>a</artifactId>
  <version>${revision}</version>
  <properties><revision>0.1.0</revision><empty/></properties>
  <dependencies><dependency><version>2.0</version></dependency></dependencies>
</project>"#;
        let elements = top_level_elements(xml).expect("parses");
        let names: Vec<&str> = elements.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(
            names,
            [
                "parent",
                "artifactId",
                "version",
                "properties",
                "dependencies"
            ]
        );
        assert_eq!(elements[2].1, "${revision}");
    }

    #[test]
    fn tags() {
        assert!(tag_matches("v0.1.0", "0.1.0"));
        assert!(tag_matches("0.1.0", "0.1.0"));
        assert!(!tag_matches("v0.2.0", "0.1.0"));
        assert!(looks_like_version("v1.2.3"));
        assert!(!looks_like_version("nightly"));
    }

    #[test]
    fn the_workspace_agrees() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the workspace root");
        let version = check(root).expect("versions agree");
        assert_eq!(version, env!("CARGO_PKG_VERSION"));
    }
}
