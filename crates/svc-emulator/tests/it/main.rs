#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Conformance tests of the cloud service emulator against `cloud-service.md`,
//! `resolved.md`, `openapi/cloud.yaml` and `openapi/notification.yaml`, over plain HTTP.

mod auth;
mod binary;
mod common;
mod containers;
mod faults;
mod files;
mod processings;
mod samples;
mod servers;
mod uploads;
mod webhooks;
