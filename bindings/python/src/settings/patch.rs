//! `Patch` and the functions that make one (`diff`, `diff_json` and their reference
//! versions for the tests), and `apply`.

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use svc_core::settings::{self as core, walk};

use super::differ::{Objects, Writer};
use super::errors::{removal_error, settings_error};
use super::paths::{Paths, node_paths};
use super::text::{Text, not_json_text};
use crate::convert::to_python;

/// What turns one settings tree into another: the partial tree to write (`tree`), the
/// changed nodes and the removed ones (which a write cannot express). Made by `diff`
/// and `diff_json`.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Patch {
    tree: Py<PyAny>,
    changed: Paths,
    removed: Paths,
}

#[pymethods]
impl Patch {
    /// The partial tree: only the changed nodes and the objects on their paths, keys in
    /// the new tree's order (the body of the unit's settings write). Fresh `dict`s and
    /// `list`s: changing them changes neither tree.
    #[getter]
    fn tree(&self, py: Python<'_>) -> Py<PyAny> {
        self.tree.clone_ref(py)
    }

    /// The changed nodes (`"aiding/gnss1/leverArmPrimary"`), in the new tree's order:
    /// every leaf whose value changed (an array is one leaf) and the top of every added
    /// or retyped sub-tree.
    #[getter]
    fn changed(&self, py: Python<'_>) -> Vec<String> {
        self.changed.strings(py).to_vec()
    }

    /// The nodes of the old tree that the new one lacks (normally none: settings trees
    /// have a fixed key set). A write cannot remove them.
    #[getter]
    fn removed(&self, py: Python<'_>) -> Vec<String> {
        self.removed.strings(py).to_vec()
    }

    /// Whether the two trees were equal (nothing changed, nothing removed).
    fn is_empty(&self, py: Python<'_>) -> bool {
        self.changed.len(py) == 0 && self.removed.len(py) == 0
    }

    /// Whether the old tree had nodes that the new one lacks.
    fn has_removals(&self, py: Python<'_>) -> bool {
        self.removed.len(py) > 0
    }

    /// The body of the write turning the old tree into the new one (`tree`).
    ///
    /// Raises `SettingsError` (an `InvalidInputError`, with `paths`) when the patch has
    /// removals: the write would leave them in place.
    fn to_write(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        if self.removed.len(py) > 0 {
            return Err(removal_error(py, self.removed.strings(py)));
        }
        Ok(self.tree.clone_ref(py))
    }

    fn __len__(&self, py: Python<'_>) -> usize {
        self.changed.len(py) + self.removed.len(py)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        // Paths only: values may be secrets (the NTRIP password).
        format!(
            "Patch(changed={:?}, removed={:?})",
            self.changed.strings(py),
            self.removed.strings(py)
        )
    }
}

impl Patch {
    pub(super) fn from_core(py: Python<'_>, patch: &core::Patch) -> PyResult<Self> {
        Ok(Self {
            tree: to_python(py, &patch.tree)?.unbind(),
            changed: Paths::from_strings(py, node_paths(&patch.changed)),
            removed: Paths::from_strings(py, node_paths(&patch.removed)),
        })
    }
}

/// The minimal patch from `old` to `new` (see `Patch`): objects compared key by key,
/// arrays and scalars whole, with JSON semantics; any mappings and sequences are read
/// as JSON, through svc-core's settings walk.
#[pyfunction]
pub(super) fn diff<'py>(
    py: Python<'py>,
    old: &Bound<'py, PyAny>,
    new: &Bound<'py, PyAny>,
) -> PyResult<Patch> {
    let (tree, changed, removed) = Objects::new(py).diff(old, new)?;
    Ok(Patch {
        tree: tree.unbind(),
        changed,
        removed,
    })
}

/// The minimal patch between two JSON documents (`str` or `bytes`), compared in Rust
/// with the GIL released and without parsing what is the same in both; only the patch
/// becomes Python objects.
#[pyfunction]
pub(super) fn diff_json<'py>(
    py: Python<'py>,
    old_text: &Bound<'py, PyAny>,
    new_text: &Bound<'py, PyAny>,
) -> PyResult<Patch> {
    let (old_text, new_text) = (Text::from_object(old_text)?, Text::from_object(new_text)?);
    let (old_bytes, new_bytes) = (old_text.as_bytes(), new_text.as_bytes());
    let patch = py
        .detach(|| core::diff_json(old_bytes, new_bytes))
        .map_err(|e| settings_error(py, &e))?;
    Patch::from_core(py, &patch)
}

/// `svc_core::settings::diff` of the two documents parsed into `serde_json::Value`s: the
/// reference `diff_json` is tested against (not API).
#[pyfunction]
pub(super) fn _diff_json_reference<'py>(
    py: Python<'py>,
    old_text: &Bound<'py, PyAny>,
    new_text: &Bound<'py, PyAny>,
) -> PyResult<Patch> {
    let (old_text, new_text) = (Text::from_object(old_text)?, Text::from_object(new_text)?);
    let old: Value = serde_json::from_slice(old_text.as_bytes())
        .map_err(|e| not_json_text(py, "the old tree", &e))?;
    let new: Value = serde_json::from_slice(new_text.as_bytes())
        .map_err(|e| not_json_text(py, "the new tree", &e))?;
    Patch::from_core(py, &core::diff(&old, &new))
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
    let mut writer = Writer::new(py);
    let out = writer.copy(tree)?;
    match (out.cast::<PyDict>(), patch.cast::<PyDict>()) {
        // At the root, an object merges into an object; anything else replaces the tree
        // (which was checked all the same).
        (Ok(object), Ok(_)) => {
            walk::apply(&mut writer, &mut object.clone(), patch)?;
            Ok(out)
        }
        _ => writer.copy(patch),
    }
}
