//! Fixtures that the workspace's tests and benchmarks share, kept once instead of
//! copied into each test suite: a realistic NMEA track ([`nmea`]), the field lists of
//! the specification's schemas that tests check responses against
//! ([`PROCESSING_FIELDS`], [`UPLOAD_FIELDS`]), settings trees of the unit's shape
//! with deterministic random edits ([`settings`]), and the processing configuration the
//! vendor's published cloud samples submit ([`vendor_sample_config`]).
//!
//! A dev-dependency only (`publish = false`): none of it reaches a release build.

#![allow(clippy::unwrap_used, clippy::expect_used)] // fixtures: fixed inputs, a panic is a failure

pub mod nmea;
pub mod settings;

/// The processing configuration the vendor's published cloud samples (Python and
/// TypeScript) submit, as they submit it: a unit's session in `rover/`, a base station's
/// observations in `base/sbgs167p.20d`, an SBET and an ASCII export at 200 Hz, a Minimal
/// JSON and a Full PDF report.
#[must_use]
pub fn vendor_sample_config() -> serde_json::Value {
    serde_json::json!({
      "version": "1.0",
      "project": {"name": "Qinertia CLI", "author": "Chuck Berry", "organization": "SBG Systems",
                  "description": "Simple Qinertia CLI project to showcase NAVSIGHT-S with an APOGEE-I tightly coupled post processing.",
                  "type": "sbgECom", "path": "rover/"},
      "processing": {"motionProfile": "automotive", "type": "insSingle",
                     "bases": [{"positionMode": "published",
                                "antenna": {"type": "TWIVP6050_CONE  NONE"},
                                "data": ["base/sbgs167p.20d"]}]},
      "exports": [{"name": "Export SBET", "profile": "SBET: 200Hz", "outputDir": "export"},
                  {"name": "Export ASCII", "profile": "ASCII: INS at 200Hz", "outputDir": "export"}],
      "reports": [{"name": "JSON report", "template": "Minimal JSON", "outputDir": "reports/json"},
                  {"name": "PDF report", "template": "Full PDF"}]
    })
}

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
/// service hands them out.
pub use svc_cloud_api::UPLOAD_FIELDS;
