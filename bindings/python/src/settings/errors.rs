//! The settings errors raised to Python (`SettingsError`, an `InvalidInputError` with
//! the `paths` concerned).

use pyo3::prelude::*;
use pyo3::types::PyList;
use svc_core::settings as core;

use super::paths::node_paths;
use crate::errors::SvcErr;

pub(super) fn settings_error(py: Python<'_>, error: &core::SettingsError) -> PyErr {
    // Every error of the functions used here is about the input (files are read here,
    // their errors are `io`).
    let kind = "invalid_input";
    let paths = match error {
        core::SettingsError::RemovalNotExpressible { removed } => node_paths(removed),
        core::SettingsError::UnknownNodes { paths } => node_paths(paths),
        core::SettingsError::NotAnObject { path, .. }
        | core::SettingsError::NonFiniteNumber { path } => {
            vec![path.to_string()]
        }
        _ => Vec::new(),
    };
    let mut failure = SvcErr::new(kind, error.to_string()).subsystem("settings");
    if let Ok(paths) = PyList::new(py, paths) {
        failure = failure.attr("paths", paths.into_any());
    }
    failure.into_pyerr(py)
}

/// The error of a write that cannot express the removed nodes, as
/// `SettingsError::RemovalNotExpressible` words it.
pub(super) fn removal_error(py: Python<'_>, removed: &[String]) -> PyErr {
    const SHOWN: usize = 10;
    let mut listed = removed
        .iter()
        .take(SHOWN)
        .map(|path| {
            if path.is_empty() {
                "the root"
            } else {
                path.as_str()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    if removed.len() > SHOWN {
        listed.push_str(&format!(" and {} more", removed.len() - SHOWN));
    }
    let message =
        format!("the write cannot remove nodes {listed} (a settings write only adds and changes)");
    let mut failure = SvcErr::new("invalid_input", message).subsystem("settings");
    if let Ok(paths) = PyList::new(py, removed) {
        failure = failure.attr("paths", paths.into_any());
    }
    failure.into_pyerr(py)
}
