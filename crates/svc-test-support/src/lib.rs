//! Fixtures that the workspace's tests and benchmarks share, kept once instead of
//! copied into each test suite: a realistic NMEA track ([`nmea`]), the field lists of
//! the specification's schemas that tests check responses against
//! ([`PROCESSING_FIELDS`], [`UPLOAD_FIELDS`]), and settings trees of the unit's shape
//! with deterministic random edits ([`settings`]).
//!
//! A dev-dependency only (`publish = false`): none of it reaches a release build.

#![allow(clippy::unwrap_used, clippy::expect_used)] // fixtures: fixed inputs, a panic is a failure

pub mod nmea;
pub mod settings;

/// Every field a Processing always carries (possibly null), per the `Processing`
/// schema of `openapi/cloud.yaml`.
pub const PROCESSING_FIELDS: [&str; 21] = [
    "id",
    "name",
    "type",
    "status",
    "region",
    "processingResult",
    "processingDuration",
    "processingStep",
    "processingProgress",
    "archiveScheduledAt",
    "createdAt",
    "updatedAt",
    "creatorId",
    "organizationId",
    "containerId",
    "errorCount",
    "missionLength",
    "missionLocationCountry",
    "missionLocationRegion",
    "missionLocationPlace",
    "processingJson",
];

/// The upload form fields of `openapi/cloud.yaml` (`UploadFields`), in the order the
/// service hands them out (its own clients send them in this order): the form of
/// temporary credentials, with the session token last.
pub const UPLOAD_FIELDS: [&str; 8] = [
    "bucket",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Date",
    "key",
    "Policy",
    "X-Amz-Signature",
    "X-Amz-Security-Token",
];
