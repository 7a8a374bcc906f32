//! xtask's integration tests, one binary: the documents against the specification,
//! and the generator's drift check.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: fixed inputs, a panic is a failure

mod drift;
mod spec_coverage;
