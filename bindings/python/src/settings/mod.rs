//! `svc_sdk.settings`: settings trees (`svc_core::settings`) — minimal diff, apply,
//! three-way merge, `SettingsTree` for fleets of one schema.
//!
//! [`diff`] and [`apply`] work on the Python objects themselves, with svc-core's
//! settings walk (`svc_core::settings::walk`: what a change, a removal, an equal leaf
//! and a write are, written once for every representation): this binding gives it
//! access to Python objects through pyo3's safe `Bound` references
//! ([`Objects`](differ::Objects)). It skips shared sub-trees by identity, compares
//! leaves with exact JSON semantics (`True` is not `1`, `1` is not `1.0`: the types are
//! compared before the values) and builds the partial tree only along changed nodes
//! (the tests check it against [`diff_json`], the walk of the same trees as text).
//!
//! One file per seam: `paths` (node paths, kept as keys until read), `errors` and `text`
//! (JSON given as `str` or `bytes`), `differ` (the access through `Bound` references,
//! checked copies, the write), `patch` (`Patch` and the diff and apply functions),
//! `three_way` (`merge`), `tree` (`SettingsTree`, `TreePatch`), `files` (`fleet_diff`).

mod differ;
mod errors;
mod files;
mod patch;
mod paths;
mod text;
mod three_way;
mod tree;

use pyo3::prelude::*;

use files::fleet_diff;
use patch::{_diff_json_reference, Patch, apply, diff, diff_json};
use three_way::{Absent, Conflict, Merge, absent, merge};
use tree::{SettingsTree, TreePatch};

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = module.py();
    module.add_class::<Patch>()?;
    module.add_class::<Merge>()?;
    module.add_class::<Conflict>()?;
    module.add_class::<SettingsTree>()?;
    module.add_class::<TreePatch>()?;
    module.add_class::<Absent>()?;
    module.add("ABSENT", absent(py)?)?;
    module.add_function(wrap_pyfunction!(diff, module)?)?;
    module.add_function(wrap_pyfunction!(diff_json, module)?)?;
    module.add_function(wrap_pyfunction!(_diff_json_reference, module)?)?;
    module.add_function(wrap_pyfunction!(apply, module)?)?;
    module.add_function(wrap_pyfunction!(merge, module)?)?;
    module.add_function(wrap_pyfunction!(fleet_diff, module)?)?;
    Ok(())
}
