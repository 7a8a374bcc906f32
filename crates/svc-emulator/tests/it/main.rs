#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Conformance tests of the cloud service emulator against `openapi/cloud.yaml` and
//! `openapi/notification.yaml` (the specification with its open points decided; see
//! `docs/specification.md`), over plain HTTP.

mod auth;
mod binary;
mod common;
mod containers;
mod faults;
mod files;
mod fleet;
mod outputs;
mod processings;
mod samples;
mod servers;
mod uploads;
mod webhooks;
