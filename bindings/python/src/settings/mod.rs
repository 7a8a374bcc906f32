//! `svc_sdk.settings`: settings trees (`svc_core::settings`): diff, apply, three-way
//! merge, `SettingsTree` for fleets of one schema.
//!
//! [`diff`] walks the Python objects themselves with svc-core's settings walk, which
//! this binding gives access to them through pyo3's safe `Bound` references
//! ([`Objects`](differ::Objects)): shared sub-trees skipped by identity, leaves
//! compared with JSON semantics (`True` is not `1`, `1` is not `1.0`), the partial tree
//! built along changed nodes only. `apply`, `merge` and `SettingsTree` convert their
//! trees to svc-core's values and back. `Patch`, `Merge` and `Conflict` are plain
//! Python classes of `svc_sdk.settings`.
//!
//! Files: `differ` (node access), `patch` (`diff`, `diff_json`, `apply`), `three_way`
//! (`merge`), `tree` (`SettingsTree`, `TreePatch`), `files` (`fleet_diff`), `errors`,
//! `text` (JSON given as `str` or `bytes`).

mod differ;
mod errors;
mod files;
mod patch;
mod text;
mod three_way;
mod tree;

use pyo3::prelude::*;

use files::fleet_diff;
use patch::{_refuse_removals, apply, diff, diff_json};
use three_way::merge;
use tree::{SettingsTree, TreePatch};

/// A name of `svc_sdk.settings`: the value classes (`Patch`, `Merge`, `Conflict`) and
/// `ABSENT` are Python's own, the native functions make them.
fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("svc_sdk.settings")?.getattr(name)
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<SettingsTree>()?;
    module.add_class::<TreePatch>()?;
    module.add_function(wrap_pyfunction!(_refuse_removals, module)?)?;
    module.add_function(wrap_pyfunction!(diff, module)?)?;
    module.add_function(wrap_pyfunction!(diff_json, module)?)?;
    module.add_function(wrap_pyfunction!(apply, module)?)?;
    module.add_function(wrap_pyfunction!(merge, module)?)?;
    module.add_function(wrap_pyfunction!(fleet_diff, module)?)?;
    Ok(())
}
