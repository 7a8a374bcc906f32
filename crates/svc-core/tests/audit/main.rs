//! The TRACE-level audit (`tracing_audit`), in a test process of its own: `tracing`
//! caches, per call site, whether any subscriber wants its events, and the other
//! integration tests, running at the same time without a subscriber, could settle that
//! for a call site (a retry, say) before this test's subscriber is in place — the
//! audit then missed events it must see.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code: fixed inputs, a panic is a failure
// The shared helpers of `tests/it`, of which this test uses a few.
#![allow(dead_code)]

#[path = "../it/common.rs"]
mod common;
mod tracing_audit;

pub use common::{OTHER_SECRET, PROGRESS_BODY, SECRET};
