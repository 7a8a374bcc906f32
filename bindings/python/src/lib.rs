//! `svc_sdk._native`: the extension module of the Python package `svc-sdk`.
//!
//! One file per area, each with a `register` function adding its classes and functions
//! to the module; the Python package (`python/svc_sdk/`) re-exports them under their
//! public modules and adds what is easier written in Python (the exception classes,
//! framework helpers). Shared helpers: `errors` (the exceptions of `svc_sdk.errors`),
//! `runtime` (the tokio runtime and `block_on`), `convert` (JSON values), `call` (an
//! operation awaited from sync or asyncio Python), `failures` (svc-core errors as
//! exceptions).

use pyo3::prelude::*;

mod call;
mod cloud;
mod convert;
mod dict_walk;
mod emulator;
mod errors;
mod failures;
mod rights;
mod runtime;
mod settings;
mod unit;
mod webhook;
mod workflow;

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // The one rule of `retryable`, for the errors raised without the flag.
    let retryable: Vec<&str> = svc_core::ErrorKind::ALL
        .iter()
        .filter(|kind| kind.is_retryable())
        .map(|kind| kind.as_str())
        .collect();
    module.add("RETRYABLE_KINDS", retryable)?;
    runtime::register(module)?;
    settings::register(module)?;
    webhook::register(module)?;
    rights::register(module)?;
    call::register(module)?;
    cloud::register(module)?;
    workflow::register(module)?;
    unit::register(module)?;
    emulator::register(module)?;
    Ok(())
}
