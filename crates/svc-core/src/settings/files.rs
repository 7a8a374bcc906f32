//! Settings files (a unit's exports): read them as trees, and compare a fleet's files
//! against one reference.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::text::Reference;
use super::{Patch, SettingsError};

/// Reads a settings file: JSON whose root is an object.
///
/// # Errors
/// [`SettingsError::ReadFile`] when it cannot be read, [`SettingsError::NotATree`] when
/// it is not JSON or its root is not an object (an array, a number…). The message
/// names the file and the parser's position, never a value of the file.
pub fn read_tree(path: &Path) -> Result<Value, SettingsError> {
    let bytes = read(path)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| not_a_tree(path, "not UTF-8"))?;
    parse_tree(text, &path.display().to_string())
}

/// Reads the text of a settings file named `name` (a path, `stdin`…) as [`read_tree`]
/// reads a file.
///
/// # Errors
/// [`SettingsError::NotATree`] when it is not JSON or its root is not an object;
/// [`SettingsError::DuplicateKey`] when one object has a key twice (naming the key,
/// its node and its line: a parser would keep the last one silently).
pub fn parse_tree(text: &str, name: &str) -> Result<Value, SettingsError> {
    let value: Value = serde_json::from_str(text).map_err(|e| SettingsError::NotATree {
        path: name.to_owned(),
        reason: format!("not JSON (line {}, column {})", e.line(), e.column()),
    })?;
    if !value.is_object() {
        return Err(SettingsError::NotATree {
            path: name.to_owned(),
            reason: format!("its root is {}, not an object", kind_of(&value)),
        });
    }
    refuse_duplicates(text, name)?;
    Ok(value)
}

/// [`SettingsError::DuplicateKey`] for the first key written twice in one object of
/// `text` (JSON already checked).
fn refuse_duplicates(text: &str, name: &str) -> Result<(), SettingsError> {
    match super::strict::first_duplicate_key(text) {
        Ok(None) => Ok(()),
        Ok(Some(found)) => Err(SettingsError::DuplicateKey {
            path: name.to_owned(),
            node: found.node,
            key: found.key,
            line: found.line,
        }),
        Err(e) => Err(SettingsError::NotATree {
            path: name.to_owned(),
            reason: format!("not JSON (line {}, column {})", e.line(), e.column()),
        }),
    }
}

fn read(path: &Path) -> Result<Vec<u8>, SettingsError> {
    std::fs::read(path).map_err(|e| SettingsError::ReadFile {
        path: path.display().to_string(),
        reason: e.to_string(),
    })
}

/// Reads a settings file's text, refusing (as [`read_tree`] does, naming what it is)
/// a file that cannot be read, is not UTF-8 or whose root is not an object. Whether
/// the rest is JSON is found by the comparison that reads it.
fn read_text(path: &Path) -> Result<String, SettingsError> {
    let bytes = read(path)?;
    let first = bytes.iter().find(|byte| !byte.is_ascii_whitespace());
    if first != Some(&b'{') {
        return Err(read_tree(path)
            .err()
            .unwrap_or_else(|| not_a_tree(path, "its root is not an object")));
    }
    String::from_utf8(bytes).map_err(|_| {
        read_tree(path)
            .err()
            .unwrap_or_else(|| not_a_tree(path, "not UTF-8"))
    })
}

/// A key written twice in one object, refused naming it (whether the text is JSON is
/// found by the comparison).
fn unique_keys(path: &Path, text: &str) -> Result<(), SettingsError> {
    match super::strict::first_duplicate_key(text) {
        Ok(Some(_)) => refuse_duplicates(text, &path.display().to_string()),
        _ => Ok(()),
    }
}

fn not_a_tree(path: &Path, reason: &str) -> SettingsError {
    SettingsError::NotATree {
        path: path.display().to_string(),
        reason: reason.to_owned(),
    }
}

/// The errors of comparing texts, naming the file: "the old tree" is the reference.
fn name_files(e: SettingsError, reference: &Path, file: &Path) -> SettingsError {
    match e {
        SettingsError::NotJson {
            document,
            line,
            column,
        } => {
            let path = if document == "the old tree" {
                reference
            } else {
                file
            };
            not_a_tree(path, &format!("not JSON (line {line}, column {column})"))
        }
        other => other,
    }
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
    pub patch: Patch,
}

/// Compares settings files (a fleet's exports) against a reference file. Every file is
/// read first, so a bad one fails the whole comparison before any result. The files
/// are compared on every core, each as text against the reference's text, whose
/// structure is read once (as [`diff_json`](super::diff_json) compares two texts:
/// exports of one firmware differ only in some values, and only those are parsed).
///
/// # Errors
/// The [`read_tree`] error of the reference, or of the first file (in the order given)
/// that cannot be used.
pub fn diff_files(reference: &Path, files: &[PathBuf]) -> Result<Vec<FileDiff>, SettingsError> {
    let reference_text = read_text(reference)?;
    unique_keys(reference, &reference_text)?;
    // Checked whole, its structure read once for every file.
    let index = Reference::new(reference_text).map_err(|e| name_files(e, reference, reference))?;
    let index = &index;
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(files.len().div_ceil(8).max(1));
    let per_thread = files.len().div_ceil(threads).max(1);
    let read: Vec<Result<Vec<FileDiff>, SettingsError>> = std::thread::scope(|scope| {
        let workers: Vec<_> = files
            .chunks(per_thread)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|file| {
                            let text = read_text(file)?;
                            // Laid out as the reference, its keys are the reference's
                            // (unique); any other text is checked for a key written
                            // twice first.
                            let patch = match index.same_layout(&text) {
                                Some(patch) => patch,
                                None => {
                                    unique_keys(file, &text)?;
                                    index
                                        .diff_other_layout(&text)
                                        .map_err(|e| name_files(e, reference, file))?
                                }
                            };
                            Ok(FileDiff {
                                file: file.clone(),
                                patch,
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
    fn a_key_written_twice_is_refused_in_the_reference_and_in_any_file() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let reference = write(dir.path(), "ref.json", r#"{"a":[{"b":1}],"c":1}"#);
        // Laid out as the reference but for an array that now writes a key twice; then
        // laid out otherwise, with a key twice at the top.
        let in_array = write(dir.path(), "array.json", r#"{"a":[{"b":1,"b":2}],"c":1}"#);
        let elsewhere = write(
            dir.path(),
            "top.json",
            r#"{"a": [{"b": 1}], "c": 1, "c": 2}"#,
        );
        for (file, node, key) in [(&in_array, "a/0/b", "b"), (&elsewhere, "c", "c")] {
            match diff_files(&reference, std::slice::from_ref(file)) {
                Err(SettingsError::DuplicateKey {
                    path,
                    node: n,
                    key: k,
                    ..
                }) => {
                    assert_eq!(path, file.display().to_string());
                    assert_eq!((n.as_str(), k.as_str()), (node, key));
                }
                other => panic!("{}: {other:?}", file.display()),
            }
        }
        let twice = write(dir.path(), "twice.json", r#"{"a":[{"b":1}],"c":1,"c":1}"#);
        let ok = write(dir.path(), "ok.json", r#"{"a":[{"b":2}],"c":1}"#);
        assert!(matches!(
            diff_files(&twice, &[ok]),
            Err(SettingsError::DuplicateKey { .. })
        ));
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
        let changed: Vec<&str> = diffs[1].patch.changed.iter().map(|p| p.as_str()).collect();
        assert_eq!(changed, ["a/b"]);
        assert_eq!(diffs[1].patch.tree, serde_json::json!({"a": {"b": 2}}));
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
