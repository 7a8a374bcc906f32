//! `SettingsTree`, laid out for comparing many trees of one schema, and its
//! `TreePatch`.

use pyo3::prelude::*;
use svc_core::settings::{self as core, NodePath, SettingsTree as CoreTree};

use super::errors::node_paths;
use super::errors::settings_error;
use super::patch;
use super::text::json_bytes;
use crate::convert::{ToValue, to_python};
use crate::errors::SvcErr;

/// A settings tree laid out for comparing many trees of one schema (a fleet against a
/// reference, successive reads of a unit): trees of one shape diff by comparing two
/// flat arrays of leaves. Immutable.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct SettingsTree {
    tree: CoreTree,
}

#[pymethods]
impl SettingsTree {
    /// The tree of a `dict` (any JSON value).
    #[staticmethod]
    fn from_dict(py: Python<'_>, tree: &Bound<'_, PyAny>) -> PyResult<Self> {
        let value = ToValue::new(py).value(tree)?;
        Ok(Self {
            tree: py.detach(|| CoreTree::from_value(&value)),
        })
    }

    /// The tree of a JSON document (`str` or `bytes`), parsed in Rust.
    #[staticmethod]
    fn from_json(py: Python<'_>, text: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = json_bytes(text)?;
        let tree = py
            .detach(|| CoreTree::from_json_bytes(&bytes))
            .map_err(|e| settings_error(py, &e))?;
        Ok(Self { tree })
    }

    /// The tree as Python objects (`dict`s, keys in order).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.tree.to_value())
    }

    /// The tree as compact JSON text.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.tree)
            .map_err(|e| SvcErr::new("internal", e.to_string()).into_pyerr(py))
    }

    /// The minimal patch from this tree to `new` (the same as `diff` of the two trees).
    fn diff(&self, new: &SettingsTree) -> TreePatch {
        TreePatch {
            patch: self.tree.diff(&new.tree),
        }
    }

    /// The patch from this tree to the tree of `new` (JSON `str` or `bytes`), in one
    /// call with the GIL released: the fleet case, a reference kept and each unit's
    /// export arriving as text. The first call writes this tree's compact text and
    /// indexes it; a text written the same way is then compared byte by byte and only
    /// its differing values are parsed.
    fn diff_json<'py>(
        &self,
        py: Python<'py>,
        new: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bytes = json_bytes(new)?;
        let patch = py
            .detach(|| self.tree.diff_json(bytes))
            .map_err(|e| settings_error(py, &e))?;
        patch::from_core(py, &patch)
    }

    /// Whether both trees have the same shape (keys, nesting and order): then `diff`
    /// compares their leaves directly.
    fn same_shape(&self, other: &SettingsTree) -> bool {
        self.tree.same_shape(&other.tree)
    }

    /// The number of leaves (scalars, nulls and arrays).
    #[getter]
    fn leaf_count(&self) -> usize {
        self.tree.leaf_count()
    }

    /// The node at `path` (`"aiding/gnss1"`) as Python objects, `default` when there is
    /// none.
    #[pyo3(signature = (path, default = None))]
    fn get<'py>(
        &self,
        py: Python<'py>,
        path: &str,
        default: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let path = NodePath::parse(path).map_err(|e| settings_error(py, &e))?;
        match self.tree.get(&path) {
            Some(value) => to_python(py, &value),
            None => Ok(default.unwrap_or_else(|| py.None().into_bound(py))),
        }
    }

    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other
            .cast::<SettingsTree>()
            .is_ok_and(|other| self.tree == other.get().tree)
    }

    fn __repr__(&self) -> String {
        format!("SettingsTree(leaves={})", self.tree.leaf_count())
    }
}

/// What turns one `SettingsTree` into another (`SettingsTree.diff`): the changed and
/// removed nodes, and the partial tree, read from the new tree's leaves when asked for.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct TreePatch {
    patch: core::TreePatch,
}

#[pymethods]
impl TreePatch {
    /// The changed nodes, in document order.
    #[getter]
    fn changed(&self) -> Vec<String> {
        self.patch.changed().map(ToString::to_string).collect()
    }

    /// The nodes of the old tree that the new one lacks.
    #[getter]
    fn removed(&self) -> Vec<String> {
        node_paths(self.patch.removed())
    }

    /// The partial tree to write, as Python objects.
    #[getter]
    fn tree<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        to_python(py, &self.patch.to_patch().tree)
    }

    /// The partial tree as compact JSON text (the body of the unit's settings write),
    /// serialized straight from the new tree's leaves.
    fn to_json(&self, py: Python<'_>) -> PyResult<String> {
        serde_json::to_string(&self.patch)
            .map_err(|e| SvcErr::new("internal", e.to_string()).into_pyerr(py))
    }

    /// The same patch as a `Patch` (what `diff` gives for the two trees).
    fn to_patch<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        patch::from_core(py, &self.patch.to_patch())
    }

    /// Whether the two trees were equal.
    fn is_empty(&self) -> bool {
        self.patch.is_empty()
    }

    /// Whether the old tree had nodes that the new one lacks.
    fn has_removals(&self) -> bool {
        self.patch.has_removals()
    }

    fn __repr__(&self) -> String {
        format!(
            "TreePatch(changed={:?}, removed={:?})",
            self.changed(),
            self.removed()
        )
    }
}
