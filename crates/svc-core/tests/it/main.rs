//! Integration tests of svc-core, as one test binary (every file under `tests/it/` is a
//! module of this one, so the crate and its dependencies are linked once).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: fixed inputs, a panic is a failure

mod cloud;
mod common;
mod faults;
mod fleet;
mod limits;
#[cfg(feature = "axum")]
mod receiver;
mod serial;
mod settings;
#[cfg(feature = "webhook-listener")]
mod transfer;
mod unit;
mod vectors;
mod webhook;
mod workflow;
mod workflow_cancel;

pub use common::{OTHER_SECRET, PROGRESS_BODY, SECRET};
