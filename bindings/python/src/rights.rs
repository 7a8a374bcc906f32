//! `svc_sdk.rights`: the unit's rights matrix (`svc_core::unit::rights`), the same data
//! the unit enforces.

use pyo3::prelude::*;
use svc_core::unit::rights;

/// The unit's user of that name; a name this version does not know is kept as is (and
/// the matrix then answers `None`).
fn user_name(name: &str) -> svc_core::unit::UserName {
    svc_core::unit::UserName::from(name)
}

/// Whether `user` may run the operation `operation` (an `operationId` of the unit's
/// document, e.g. `"updateSettings"`); `logged_in`: whether the session holds a token
/// (logout, password changes and the settings lock need one). `None` for a user or an
/// operation the matrix does not know.
#[pyfunction]
#[pyo3(signature = (user, operation, *, logged_in = true))]
fn may(user: &str, operation: &str, logged_in: bool) -> Option<bool> {
    rights::may(&user_name(user), operation, logged_in)
}

/// The operations `user` may run (`operationId`s, in the document's order), e.g. to
/// grey out actions in an app.
#[pyfunction]
#[pyo3(signature = (user, *, logged_in = true))]
fn allowed_operations(user: &str, logged_in: bool) -> Vec<&'static str> {
    rights::allowed_operations(&user_name(user), logged_in)
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(may, module)?)?;
    module.add_function(wrap_pyfunction!(allowed_operations, module)?)?;
    Ok(())
}
