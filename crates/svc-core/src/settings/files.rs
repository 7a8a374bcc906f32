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
    let bytes = read(path)?;
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

fn read(path: &Path) -> Result<Vec<u8>, SettingsError> {
    std::fs::read(path).map_err(|e| SettingsError::ReadFile {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Reads a settings file as a [`SettingsTree`], straight from its text into the shape
/// of the last trees read when it has it (see [`SettingsTree::from_json`]). Errors as
/// [`read_tree`].
fn read_settings_tree(path: &Path) -> Result<SettingsTree, SettingsError> {
    let bytes = read(path)?;
    let not_a_tree = |reason: String| SettingsError::NotATree {
        path: path.display().to_string(),
        reason,
    };
    // A settings tree is an object: anything else is refused before it is read (as
    // `read_tree` refuses it, naming what it is).
    let first = bytes.iter().find(|byte| !byte.is_ascii_whitespace());
    let text = match std::str::from_utf8(&bytes) {
        Ok(text) if first == Some(&b'{') => text,
        _ => return read_tree(path).map(|value| SettingsTree::from_value(&value)),
    };
    SettingsTree::from_json(text).map_err(|e| match e {
        SettingsError::NotJson { line, column, .. } => {
            not_a_tree(format!("not JSON (line {line}, column {column})"))
        }
        other => other,
    })
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
/// read first, so a bad one fails the whole comparison before any result. The files are
/// read on every core, each straight from its text into the reference's shape when it
/// has it ([`SettingsTree::from_json`]), and then diff leaf by leaf.
///
/// # Errors
/// The [`read_tree`] error of the first file (in the order given) that cannot be used.
pub fn diff_files(reference: &Path, files: &[PathBuf]) -> Result<Vec<FileDiff>, SettingsError> {
    let reference = read_settings_tree(reference)?;
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(files.len().div_ceil(8).max(1));
    let per_thread = files.len().div_ceil(threads).max(1);
    let read: Vec<Result<Vec<FileDiff>, SettingsError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(per_thread)
            .map(|chunk| {
                let reference = &reference;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|file| {
                            let tree = read_settings_tree(file)?;
                            Ok(FileDiff {
                                file: file.clone(),
                                patch: reference.diff(&tree),
                            })
                        })
                        .collect::<Result<Vec<_>, SettingsError>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| {
                worker.join().unwrap_or_else(|_| {
                    Err(SettingsError::ReadFile {
                        path: "a settings file".to_owned(),
                        reason: "the thread reading it failed".to_owned(),
                    })
                })
            })
            .collect()
    });
    let mut diffs = Vec::with_capacity(files.len());
    for chunk in read {
        diffs.extend(chunk?);
    }
    Ok(diffs)
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
