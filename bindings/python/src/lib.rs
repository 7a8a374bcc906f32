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
mod emulator;
mod errors;
mod failures;
mod live;
mod logs;
mod recordings;
mod rights;
mod runtime;
mod settings;
mod trajectory;
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
    // svc-core's defaults, which the Python signatures show.
    let config = svc_core::cloud::CloudConfig::new(
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        svc_core::cloud::ApiSecret::new(""),
        uuid::Uuid::nil(),
    );
    module.add(
        "DEFAULT_REQUEST_TIMEOUT",
        config.request_timeout.as_secs_f64(),
    )?;
    module.add(
        "DEFAULT_CONNECT_TIMEOUT",
        config.connect_timeout.as_secs_f64(),
    )?;
    module.add("DEFAULT_MAX_ATTEMPTS", config.retry.max_attempts)?;
    module.add("DEFAULT_PAGE_SIZE", config.page_size)?;
    module.add(
        "DEFAULT_OUTAGE_TOLERANCE",
        svc_core::workflow::DEFAULT_OUTAGE_TOLERANCE.as_secs_f64(),
    )?;
    module.add(
        "DEFAULT_UNIT_TIMEOUT",
        svc_core::unit::HTTP_TIMEOUT.as_secs_f64(),
    )?;
    module.add(
        "DEFAULT_SERIAL_TIMEOUT",
        svc_core::unit::serial_link::SerialOptions::default()
            .answer_timeout
            .as_secs_f64(),
    )?;
    runtime::register(module)?;
    settings::register(module)?;
    webhook::register(module)?;
    rights::register(module)?;
    logs::register(module)?;
    recordings::register(module)?;
    live::register(module)?;
    call::register(module)?;
    cloud::register(module)?;
    workflow::register(module)?;
    trajectory::register(module)?;
    unit::register(module)?;
    emulator::register(module)?;
    Ok(())
}
