//! The settings errors raised to Python (`SettingsError`, an `InvalidInputError` with
//! the `paths` concerned).

use pyo3::prelude::*;
use pyo3::types::PyList;
use svc_core::settings as core;

use crate::errors::SvcErr;

/// The paths as strings (`"aiding/gnss1"`).
pub(super) fn node_paths(paths: &[core::NodePath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}

/// The `SettingsError` (its kind, `invalid_input` or `io`, and the `paths` concerned).
pub(super) fn settings_error(py: Python<'_>, error: &core::SettingsError) -> PyErr {
    raise(py, error.kind().as_str(), error.to_string(), error.paths())
}

/// The error of a write that cannot express the removed nodes (paths of Python keys,
/// which need not be valid node paths), worded as svc-core's
/// `SettingsError::RemovalNotExpressible`.
pub(super) fn removal_error(py: Python<'_>, removed: &[String]) -> PyErr {
    let named = |p: &String| {
        if p.is_empty() {
            "the root".into()
        } else {
            p.clone()
        }
    };
    let mut listed = removed
        .iter()
        .take(10)
        .map(named)
        .collect::<Vec<_>>()
        .join(", ");
    if removed.len() > 10 {
        listed += &format!(" and {} more", removed.len() - 10);
    }
    let message =
        format!("the write cannot remove nodes {listed} (a settings write only adds and changes)");
    raise(py, "invalid_input", message, removed.to_vec())
}

fn raise(py: Python<'_>, kind: &'static str, message: String, paths: Vec<String>) -> PyErr {
    let mut failure = SvcErr::new(kind, message).subsystem("settings");
    if let Ok(paths) = PyList::new(py, paths) {
        failure = failure.attr("paths", paths.into_any());
    }
    failure.into_pyerr(py)
}
