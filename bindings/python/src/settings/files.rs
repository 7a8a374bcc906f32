//! Settings files: a fleet's exports compared against a reference file.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyList;
use svc_core::settings as core;

use super::errors::node_paths;
use crate::convert::to_python;
use crate::errors::SvcErr;

/// Compares settings files (a fleet's exports) against a reference file: one entry per
/// file, `{"file", "changed", "removed", "patch"}` (compared in Rust with the GIL
/// released: every file read, on every core, before any is compared, so a bad one fails
/// the whole call).
#[pyfunction]
pub(super) fn fleet_diff<'py>(
    py: Python<'py>,
    reference: PathBuf,
    files: Vec<PathBuf>,
) -> PyResult<Bound<'py, PyList>> {
    let entries = py.detach(|| {
        let diffs = core::diff_files(&reference, &files)?;
        let mut entries = Vec::with_capacity(diffs.len());
        for diff in &diffs {
            let patch = &diff.patch;
            entries.push(serde_json::json!({
                "file": diff.file.display().to_string(),
                "changed": node_paths(&patch.changed),
                "removed": node_paths(&patch.removed),
                "patch": patch.tree,
            }));
        }
        Ok::<_, core::SettingsError>(entries)
    });
    let entries = entries.map_err(|e| {
        let kind = e.kind().as_str();
        SvcErr::new(kind, e.to_string())
            .subsystem("settings")
            .into_pyerr(py)
    })?;
    let list = PyList::empty(py);
    for entry in &entries {
        list.append(to_python(py, entry)?)?;
    }
    Ok(list)
}
