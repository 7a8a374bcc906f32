//! The three-way `merge`, as `svc_sdk.settings.Merge` and its `Conflict`s (Python
//! classes), `ABSENT` for a node one side lacks.

use pyo3::prelude::*;
use pyo3::types::PyList;
use serde_json::Value;
use svc_core::settings as core;

use crate::convert::{ToValue, to_python};

/// Three-way merge: `ours` and `theirs` both derive from `base`; the result holds the
/// changes of both, and lists the nodes both changed differently (keeping ours there).
#[pyfunction]
pub(super) fn merge<'py>(
    py: Python<'py>,
    base: &Bound<'py, PyAny>,
    ours: &Bound<'py, PyAny>,
    theirs: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let base = ToValue::new(py).value(base)?;
    let ours = ToValue::new(py).value(ours)?;
    let theirs = ToValue::new(py).value(theirs)?;
    let merged = py.detach(|| core::merge(&base, &ours, &theirs));
    let side = |value: &Option<Value>| match value {
        Some(value) => to_python(py, value),
        None => super::class(py, "ABSENT"),
    };
    let conflicts = PyList::empty(py);
    for conflict in &merged.conflicts {
        conflicts.append(super::class(py, "Conflict")?.call1((
            conflict.path.to_string(),
            side(&conflict.base)?,
            side(&conflict.ours)?,
            side(&conflict.theirs)?,
        ))?)?;
    }
    super::class(py, "Merge")?.call1((to_python(py, &merged.tree)?, conflicts))
}
