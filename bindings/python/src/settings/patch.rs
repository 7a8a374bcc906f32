//! The functions that make a `Patch` (`diff`, `diff_json`), and `apply`.

use pyo3::prelude::*;
use svc_core::settings as core;

use super::differ::Objects;
use super::errors::{node_paths, removal_error, settings_error};
use super::text::json_bytes;
use crate::convert::{ToValue, to_python};

/// A `svc_sdk.settings.Patch` (a Python class: values cross as they are).
pub(super) fn patch<'py>(
    py: Python<'py>,
    tree: Bound<'py, PyAny>,
    changed: Vec<String>,
    removed: Vec<String>,
) -> PyResult<Bound<'py, PyAny>> {
    super::class(py, "Patch")?.call1((tree, changed, removed))
}

/// [`patch`] of svc-core's patch.
pub(super) fn from_core<'py>(py: Python<'py>, core: &core::Patch) -> PyResult<Bound<'py, PyAny>> {
    let tree = to_python(py, &core.tree)?;
    patch(
        py,
        tree,
        node_paths(&core.changed),
        node_paths(&core.removed),
    )
}

/// Raises the `SettingsError` of a write that cannot express `removed` (`Patch.to_write`).
#[pyfunction]
pub(super) fn _refuse_removals(py: Python<'_>, removed: Vec<String>) -> PyResult<()> {
    Err(removal_error(py, &removed))
}

/// The minimal patch from `old` to `new` (see `Patch`): objects compared key by key,
/// arrays and scalars whole, with JSON semantics; any mappings and sequences are read
/// as JSON, through svc-core's settings walk.
#[pyfunction]
pub(super) fn diff<'py>(
    py: Python<'py>,
    old: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (tree, changed, removed) = Objects::new(py).diff(old, new)?;
    patch(py, tree, changed, removed)
}

/// The minimal patch between two JSON documents (`str` or `bytes`), compared in Rust
/// with the GIL released and without parsing what is the same in both; only the patch
/// becomes Python objects.
#[pyfunction]
pub(super) fn diff_json<'py>(
    py: Python<'py>,
    old_text: &Bound<'py, PyAny>,
    new_text: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let (old_bytes, new_bytes) = (json_bytes(old_text)?, json_bytes(new_text)?);
    let patch = py
        .detach(|| core::diff_json(old_bytes, new_bytes))
        .map_err(|e| settings_error(py, &e))?;
    from_core(py, &patch)
}

/// `tree` with the partial tree `patch` written into it, as the unit writes settings
/// (objects merged key by key, everything else replaced whole, `None` a value like any
/// other). A new tree: neither argument is changed.
#[pyfunction]
pub(super) fn apply<'py>(
    py: Python<'py>,
    tree: &Bound<'py, PyAny>,
    patch: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let tree = ToValue::new(py).value(tree)?;
    let patch = ToValue::new(py).value(patch)?;
    to_python(py, &py.detach(|| core::apply(&tree, &patch)))
}
