//! Settings files (a unit's exports): read them as trees, and compare a fleet's files
//! against one reference.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{SettingsError, SettingsTree, TreePatch};

/// Reads a settings file: JSON whose root is an object.
///
/// # Errors
/// [`SettingsError::ReadFile`] when it cannot be read, [`SettingsError::NotATree`] when
/// it is not JSON or its root is not an object (an array, a number…). The message
/// names the file and the parser's position, never a value of the file.
pub fn read_tree(path: &Path) -> Result<Value, SettingsError> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| SettingsError::ReadFile {
        path: shown.clone(),
        reason: e.to_string(),
    })?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| SettingsError::NotATree {
        path: shown.clone(),
        reason: format!("not JSON (line {}, column {})", e.line(), e.column()),
    })?;
    if !value.is_object() {
        return Err(SettingsError::NotATree {
            path: shown,
            reason: format!("its root is {}, not an object", kind_of(&value)),
        });
    }
    Ok(value)
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One file's difference from the reference (see [`diff_files`]).
#[derive(Clone, Debug)]
pub struct FileDiff {
    /// The file.
    pub file: PathBuf,
    /// What turns the reference into the file's tree: its changed and removed nodes
    /// and the partial tree to write.
    pub patch: TreePatch,
}

/// Compares settings files (a fleet's exports) against a reference file. Every file is
/// read first, so a bad one fails the whole comparison before any result; the trees
/// are [`SettingsTree`]s, so files of the reference's shape diff leaf by leaf.
///
/// # Errors
/// The [`read_tree`] error of the first file that cannot be used.
pub fn diff_files(reference: &Path, files: &[PathBuf]) -> Result<Vec<FileDiff>, SettingsError> {
    let reference = SettingsTree::from_value(&read_tree(reference)?);
    let trees = files
        .iter()
        .map(|file| Ok((file, SettingsTree::from_value(&read_tree(file)?))))
        .collect::<Result<Vec<_>, SettingsError>>()?;
    Ok(trees
        .into_iter()
        .map(|(file, tree)| FileDiff {
            file: file.clone(),
            patch: reference.diff(&tree),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).expect("write a test file");
        path
    }

    #[test]
    fn files_diff_against_the_reference() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let reference = write(dir.path(), "ref.json", r#"{"a":{"b":1,"c":"x"},"d":true}"#);
        let same = write(dir.path(), "same.json", r#"{"a":{"b":1,"c":"x"},"d":true}"#);
        let other = write(
            dir.path(),
            "other.json",
            r#"{"a":{"b":2,"c":"x"},"d":true}"#,
        );
        let diffs = diff_files(&reference, &[same.clone(), other.clone()]).expect("diffs");
        assert_eq!(diffs.len(), 2);
        assert_eq!(diffs[0].file, same);
        assert!(diffs[0].patch.is_empty());
        assert_eq!(diffs[1].file, other);
        let changed: Vec<&str> = diffs[1].patch.changed().map(|p| p.as_str()).collect();
        assert_eq!(changed, ["a/b"]);
        assert_eq!(
            serde_json::to_value(&diffs[1].patch).expect("a body"),
            serde_json::json!({"a": {"b": 2}})
        );
    }

    #[test]
    fn a_file_that_is_not_a_tree_fails_the_whole_comparison() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let reference = write(dir.path(), "ref.json", r#"{"a":1}"#);
        let good = write(dir.path(), "good.json", r#"{"a":2}"#);
        let array = write(dir.path(), "arr.json", r#"[1,2]"#);
        let broken = write(dir.path(), "broken.json", r#"{"a": "secret-value"#);
        let e = diff_files(&reference, &[good.clone(), array]).expect_err("an array");
        assert!(matches!(e, SettingsError::NotATree { .. }), "{e:?}");
        assert!(e.to_string().contains("an array"), "{e}");
        assert_eq!(e.kind(), ErrorKind::InvalidInput);
        let e = diff_files(&reference, &[good.clone(), broken]).expect_err("not JSON");
        assert!(e.to_string().contains("line 1"), "{e}");
        assert!(!e.to_string().contains("secret-value"), "{e}");
        let e =
            diff_files(&reference, &[good, dir.path().join("missing.json")]).expect_err("missing");
        assert_eq!(e.kind(), ErrorKind::Io);
        let e = diff_files(&array_or(dir.path()), &[]).expect_err("reference");
        assert!(e.to_string().contains("ref2.json"), "{e}");
    }

    fn array_or(dir: &Path) -> PathBuf {
        write(dir, "ref2.json", "3")
    }
}
