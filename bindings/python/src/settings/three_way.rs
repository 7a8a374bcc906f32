//! The three-way `merge`: `Merge`, its `Conflict`s, and `ABSENT` for a node one side
//! lacks.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use serde_json::Value;
use svc_core::settings as core;

use crate::convert::{ToValue, to_python};

/// The marker of a node absent from one side of a `Conflict` (`None` is JSON null).
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Absent;

#[pymethods]
impl Absent {
    fn __repr__(&self) -> &'static str {
        "ABSENT"
    }

    fn __bool__(&self) -> bool {
        false
    }
}

static ABSENT: PyOnceLock<Py<Absent>> = PyOnceLock::new();

pub(super) fn absent(py: Python<'_>) -> PyResult<Py<PyAny>> {
    Ok(ABSENT
        .get_or_try_init(py, || Py::new(py, Absent))?
        .clone_ref(py)
        .into_any())
}

/// A node both sides of a merge changed, differently. A side lacking the node holds
/// `ABSENT`.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Conflict {
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    base: Py<PyAny>,
    #[pyo3(get)]
    ours: Py<PyAny>,
    #[pyo3(get)]
    theirs: Py<PyAny>,
}

#[pymethods]
impl Conflict {
    fn __repr__(&self) -> String {
        // The path only: the values may be secrets.
        format!("Conflict(path={:?})", self.path)
    }
}

/// The result of `merge`: the merged tree (holding ours at each conflict) and the
/// conflicts, in document order.
#[pyclass(frozen, module = "svc_sdk.settings")]
pub(crate) struct Merge {
    #[pyo3(get)]
    tree: Py<PyAny>,
    #[pyo3(get)]
    conflicts: Vec<Py<Conflict>>,
}

#[pymethods]
impl Merge {
    /// Whether the merge had no conflict.
    fn is_clean(&self) -> bool {
        self.conflicts.is_empty()
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let paths: Vec<String> = self
            .conflicts
            .iter()
            .map(|conflict| conflict.get().path.clone())
            .collect();
        let _ = py;
        format!("Merge(conflicts={paths:?})")
    }
}

/// Three-way merge: `ours` and `theirs` both derive from `base`; the result holds the
/// changes of both, and lists the nodes both changed differently (keeping ours there).
#[pyfunction]
pub(super) fn merge<'py>(
    py: Python<'py>,
    base: &Bound<'py, PyAny>,
    ours: &Bound<'py, PyAny>,
    theirs: &Bound<'py, PyAny>,
) -> PyResult<Merge> {
    let base = ToValue::new(py).value(base)?;
    let ours = ToValue::new(py).value(ours)?;
    let theirs = ToValue::new(py).value(theirs)?;
    let merged = py.detach(|| core::merge(&base, &ours, &theirs));
    let side = |value: &Option<Value>| -> PyResult<Py<PyAny>> {
        match value {
            Some(value) => Ok(to_python(py, value)?.unbind()),
            None => absent(py),
        }
    };
    let conflicts = merged
        .conflicts
        .iter()
        .map(|conflict| {
            Py::new(
                py,
                Conflict {
                    path: conflict.path.to_string(),
                    base: side(&conflict.base)?,
                    ours: side(&conflict.ours)?,
                    theirs: side(&conflict.theirs)?,
                },
            )
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(Merge {
        tree: to_python(py, &merged.tree)?.unbind(),
        conflicts,
    })
}
