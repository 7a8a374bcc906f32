//! The processing configuration (`processingJson`) as records: the vendor's project form
//! and the shorthand, read and written by `svc_core::processing_config`, with a JSON
//! case for an object in neither form.
//!
//! Every record keeps the fields this SDK does not know in `extra` (name → JSON text),
//! so that a configuration read from the service and submitted again loses nothing.

use std::collections::HashMap;

use serde_json::{Map, Value};
use svc_core::processing_config as pc;

use crate::error::{SvcError, json_error};
use crate::types::{json_object_in, json_object_out};

/// A processing configuration, in one of the forms the service reads.
#[derive(Clone, Debug, PartialEq, uniffi::Enum)]
pub enum ProcessingConfig {
    /// The vendor's project configuration (`version`, `project`, `processing`,
    /// `exports`, `reports`).
    Project { config: ProjectConfig },
    /// The shorthand (`type`, `mode`, `gnss`, `imu`, `outputs`).
    Shorthand { config: ShorthandConfig },
    /// Any other JSON object, as text: what the service returned in neither form, or a
    /// configuration written by hand. A workflow checks it before it uploads anything.
    Json { json: String },
}

/// The vendor's project configuration.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct ProjectConfig {
    /// The format's version.
    #[uniffi(default = "1.0")]
    pub version: String,
    /// What is processed.
    pub project: ConfigProject,
    /// How.
    pub processing: ConfigProcessing,
    /// The exports to write.
    #[uniffi(default = [])]
    pub exports: Vec<ConfigExport>,
    /// The reports to write.
    #[uniffi(default = [])]
    pub reports: Vec<ConfigReport>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// `project`: what is processed.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct ConfigProject {
    /// The rover's data (`type`): `sbgECom` for a unit's data-logger session.
    pub kind: String,
    /// The rover's folder or file among the input files (`rover/`).
    pub path: String,
    /// Its name.
    #[uniffi(default = None)]
    pub name: Option<String>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// `processing`: how.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct ConfigProcessing {
    /// The processing (`type`): `insSingle`, or another.
    pub kind: String,
    /// The vehicle's motion: `automotive`, `marine`, `airborne`, `pedestrian`...
    #[uniffi(default = None)]
    pub motion_profile: Option<String>,
    /// Base stations.
    #[uniffi(default = [])]
    pub bases: Vec<ConfigBase>,
    /// Whether to estimate the lever arm from the IMU to the GNSS antenna.
    #[uniffi(default = None)]
    pub estimate_lever_arm: Option<bool>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// A base station.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct ConfigBase {
    /// Its data files among the input files (RINEX observations).
    #[uniffi(default = [])]
    pub data: Vec<String>,
    /// How its position is known (`published`...).
    #[uniffi(default = None)]
    pub position_mode: Option<String>,
    /// Its antenna's IGS type and radome (`antenna.type`, `TWIVP6050_CONE  NONE`).
    #[uniffi(default = None)]
    pub antenna_type: Option<String>,
    /// Fields of `antenna` this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub antenna_extra: HashMap<String, String>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// An export to write.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct ConfigExport {
    /// The profile: `SBET: 200Hz`, `ASCII: INS at 200Hz`...
    pub profile: String,
    /// Its name.
    #[uniffi(default = None)]
    pub name: Option<String>,
    /// Where among the outputs.
    #[uniffi(default = None)]
    pub output_dir: Option<String>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// A report to write.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct ConfigReport {
    /// The template: `Minimal JSON`, `Full PDF`...
    pub template: String,
    /// Its name.
    #[uniffi(default = None)]
    pub name: Option<String>,
    /// Where among the outputs.
    #[uniffi(default = None)]
    pub output_dir: Option<String>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// The shorthand configuration.
#[derive(Clone, Debug, Default, PartialEq, uniffi::Record)]
pub struct ShorthandConfig {
    /// The processing's type (`type`: `gnss`...).
    #[uniffi(default = None)]
    pub kind: Option<String>,
    /// `kinematic`, `static`...
    #[uniffi(default = None)]
    pub mode: Option<String>,
    /// GNSS settings.
    #[uniffi(default = None)]
    pub gnss: Option<ShorthandGnss>,
    /// The IMU's file and lever arm.
    #[uniffi(default = None)]
    pub imu: Option<ShorthandImu>,
    /// Which outputs to write.
    #[uniffi(default = None)]
    pub outputs: Option<ShorthandOutputs>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// `gnss` of the shorthand.
#[derive(Clone, Debug, Default, PartialEq, uniffi::Record)]
pub struct ShorthandGnss {
    /// Satellites below are not used, degrees.
    #[uniffi(default = None)]
    pub elevation_mask_degrees: Option<f64>,
    /// The constellations used (`GPS`, `GALILEO`...).
    #[uniffi(default = None)]
    pub constellations: Option<Vec<String>>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// `imu` of the shorthand.
#[derive(Clone, Debug, Default, PartialEq, uniffi::Record)]
pub struct ShorthandImu {
    /// The IMU's file among the input files.
    #[uniffi(default = None)]
    pub file: Option<String>,
    /// From the IMU to the GNSS antenna.
    #[uniffi(default = None)]
    pub lever_arm: Option<LeverArm>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// A lever arm, metres along the unit's axes.
#[derive(Clone, Copy, Debug, PartialEq, uniffi::Record)]
pub struct LeverArm {
    pub x: f64,
    pub y: f64,
    pub z: f64,
}

/// `outputs` of the shorthand.
#[derive(Clone, Debug, Default, PartialEq, uniffi::Record)]
pub struct ShorthandOutputs {
    /// The trajectory as CSV.
    #[uniffi(default = None)]
    pub csv: Option<bool>,
    /// The trajectory as GeoJSON.
    #[uniffi(default = None)]
    pub geojson: Option<bool>,
    /// Fields this SDK does not know: name → JSON text.
    #[uniffi(default)]
    pub extra: HashMap<String, String>,
}

/// Reads a processing configuration (a JSON object, as a configuration file holds it)
/// and checks it as a workflow does: the types of the known fields, the parts the
/// vendor's form requires, the paths it names.
///
/// # Errors
/// `InvalidInput` naming the field that is wrong.
#[uniffi::export]
pub fn processing_config_from_json(json: String) -> Result<ProcessingConfig, SvcError> {
    let map = json_object_in("the processing configuration", &json)?;
    let config =
        pc::ProcessingConfig::from_map(&map).map_err(|e| SvcError::invalid(e.to_string()))?;
    Ok(config.into())
}

/// The configuration as the JSON object submitted to the service.
///
/// # Errors
/// `InvalidInput` for a JSON case that is not a JSON object, or an `extra` value that
/// is not JSON text or names a field of its own.
#[uniffi::export]
pub fn processing_config_to_json(config: ProcessingConfig) -> Result<String, SvcError> {
    config.into_map().map(json_object_out)
}

impl ProcessingConfig {
    /// The JSON object submitted to the service.
    pub(crate) fn into_map(self) -> Result<Map<String, Value>, SvcError> {
        let typed = match self {
            ProcessingConfig::Project { config } => {
                pc::ProcessingConfig::Project(config.try_into()?)
            }
            ProcessingConfig::Shorthand { config } => {
                pc::ProcessingConfig::Shorthand(config.try_into()?)
            }
            ProcessingConfig::Json { json } => return json_object_in("processingConfig", &json),
        };
        let value = match typed {
            pc::ProcessingConfig::Project(c) => serde_json::to_value(c),
            pc::ProcessingConfig::Shorthand(c) => serde_json::to_value(c),
        }
        .map_err(|e| SvcError::internal(format!("processing configuration: {e}")))?;
        match value {
            Value::Object(map) => Ok(map),
            _ => Err(SvcError::internal(
                "processing configuration: not written as a JSON object",
            )),
        }
    }

    /// A configuration the service returned: typed when it reads as one of the forms,
    /// the JSON case otherwise.
    pub(crate) fn from_service(map: Map<String, Value>) -> Self {
        match pc::ProcessingConfig::from_map(&map) {
            Ok(config) => config.into(),
            Err(_) => ProcessingConfig::Json {
                json: json_object_out(map),
            },
        }
    }
}

impl From<pc::ProcessingConfig> for ProcessingConfig {
    fn from(c: pc::ProcessingConfig) -> Self {
        match c {
            pc::ProcessingConfig::Project(p) => ProcessingConfig::Project { config: p.into() },
            pc::ProcessingConfig::Shorthand(s) => ProcessingConfig::Shorthand { config: s.into() },
        }
    }
}

/// A number from the foreign side that JSON can hold (JSON has no NaN or infinity).
fn finite(field: &str, v: f64) -> Result<f64, SvcError> {
    if v.is_finite() {
        Ok(v)
    } else {
        Err(SvcError::invalid(format!(
            "processing configuration: {field}: {v} is not a finite number"
        )))
    }
}

/// Unknown fields, out: each value as JSON text.
fn extra_out(other: Map<String, Value>) -> HashMap<String, String> {
    other.into_iter().map(|(k, v)| (k, v.to_string())).collect()
}

/// Unknown fields, in: each value parsed, none naming a field the record has (`known`,
/// as the JSON names it), in name order.
fn extra_in(
    at: &str,
    extra: HashMap<String, String>,
    known: &[&str],
) -> Result<Map<String, Value>, SvcError> {
    let mut sorted: Vec<_> = extra.into_iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted
        .into_iter()
        .map(|(name, text)| {
            let field = format!("{at}.extra[{name:?}]");
            if known.contains(&name.as_str()) {
                return Err(SvcError::invalid(format!(
                    "processing configuration: {field}: `{name}` is a field of its own"
                )));
            }
            let value = serde_json::from_str(&text).map_err(|e| json_error(&field, &e))?;
            Ok((name, value))
        })
        .collect()
}

impl From<pc::ProjectConfig> for ProjectConfig {
    fn from(c: pc::ProjectConfig) -> Self {
        Self {
            version: c.version,
            project: ConfigProject {
                kind: c.project.kind,
                path: c.project.path,
                name: c.project.name,
                extra: extra_out(c.project.other),
            },
            processing: ConfigProcessing {
                kind: c.processing.kind,
                motion_profile: c.processing.motion_profile,
                bases: c
                    .processing
                    .bases
                    .into_iter()
                    .map(|b| {
                        let (antenna_type, antenna_extra) = match b.antenna {
                            Some(a) => (a.kind, extra_out(a.other)),
                            None => (None, HashMap::new()),
                        };
                        ConfigBase {
                            data: b.data,
                            position_mode: b.position_mode,
                            antenna_type,
                            antenna_extra,
                            extra: extra_out(b.other),
                        }
                    })
                    .collect(),
                estimate_lever_arm: c.processing.estimate_lever_arm,
                extra: extra_out(c.processing.other),
            },
            exports: c
                .exports
                .into_iter()
                .map(|e| ConfigExport {
                    profile: e.profile,
                    name: e.name,
                    output_dir: e.output_dir,
                    extra: extra_out(e.other),
                })
                .collect(),
            reports: c
                .reports
                .into_iter()
                .map(|r| ConfigReport {
                    template: r.template,
                    name: r.name,
                    output_dir: r.output_dir,
                    extra: extra_out(r.other),
                })
                .collect(),
            extra: extra_out(c.other),
        }
    }
}

impl TryFrom<ProjectConfig> for pc::ProjectConfig {
    type Error = SvcError;
    fn try_from(c: ProjectConfig) -> Result<Self, SvcError> {
        let bases = c
            .processing
            .bases
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                let at = format!("processing.bases[{i}]");
                let antenna_other = extra_in(&format!("{at}.antenna"), b.antenna_extra, &["type"])?;
                let antenna =
                    (b.antenna_type.is_some() || !antenna_other.is_empty()).then(|| pc::Antenna {
                        kind: b.antenna_type,
                        other: antenna_other,
                    });
                Ok(pc::Base {
                    position_mode: b.position_mode,
                    antenna,
                    data: b.data,
                    other: extra_in(&at, b.extra, &["positionMode", "antenna", "data"])?,
                })
            })
            .collect::<Result<_, SvcError>>()?;
        let exports = c
            .exports
            .into_iter()
            .enumerate()
            .map(|(i, e)| {
                Ok(pc::Export {
                    name: e.name,
                    profile: e.profile,
                    output_dir: e.output_dir,
                    other: extra_in(
                        &format!("exports[{i}]"),
                        e.extra,
                        &["name", "profile", "outputDir"],
                    )?,
                })
            })
            .collect::<Result<_, SvcError>>()?;
        let reports = c
            .reports
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                Ok(pc::Report {
                    name: r.name,
                    template: r.template,
                    output_dir: r.output_dir,
                    other: extra_in(
                        &format!("reports[{i}]"),
                        r.extra,
                        &["name", "template", "outputDir"],
                    )?,
                })
            })
            .collect::<Result<_, SvcError>>()?;
        Ok(Self {
            version: c.version,
            project: pc::Project {
                name: c.project.name,
                kind: c.project.kind,
                path: c.project.path,
                other: extra_in("project", c.project.extra, &["name", "type", "path"])?,
            },
            processing: pc::Processing {
                kind: c.processing.kind,
                motion_profile: c.processing.motion_profile,
                bases,
                estimate_lever_arm: c.processing.estimate_lever_arm,
                other: extra_in(
                    "processing",
                    c.processing.extra,
                    &["type", "motionProfile", "bases", "estimateLeverArm"],
                )?,
            },
            exports,
            reports,
            other: extra_in(
                "(top level)",
                c.extra,
                &["version", "project", "processing", "exports", "reports"],
            )?,
        })
    }
}

impl From<pc::ShorthandConfig> for ShorthandConfig {
    fn from(c: pc::ShorthandConfig) -> Self {
        Self {
            kind: c.kind,
            mode: c.mode,
            gnss: c.gnss.map(|g| ShorthandGnss {
                elevation_mask_degrees: g.elevation_mask_degrees,
                constellations: g.constellations,
                extra: extra_out(g.other),
            }),
            imu: c.imu.map(|i| ShorthandImu {
                file: i.file,
                lever_arm: i.lever_arm.map(|[x, y, z]| LeverArm { x, y, z }),
                extra: extra_out(i.other),
            }),
            outputs: c.outputs.map(|o| ShorthandOutputs {
                csv: o.csv,
                geojson: o.geojson,
                extra: extra_out(o.other),
            }),
            extra: extra_out(c.other),
        }
    }
}

impl TryFrom<ShorthandConfig> for pc::ShorthandConfig {
    type Error = SvcError;
    fn try_from(c: ShorthandConfig) -> Result<Self, SvcError> {
        Ok(Self {
            kind: c.kind,
            mode: c.mode,
            gnss: c
                .gnss
                .map(|g| -> Result<_, SvcError> {
                    Ok(pc::ShorthandGnss {
                        elevation_mask_degrees: g
                            .elevation_mask_degrees
                            .map(|v| finite("gnss.elevationMaskDegrees", v))
                            .transpose()?,
                        constellations: g.constellations,
                        other: extra_in(
                            "gnss",
                            g.extra,
                            &["elevationMaskDegrees", "constellations"],
                        )?,
                    })
                })
                .transpose()?,
            imu: c
                .imu
                .map(|i| -> Result<_, SvcError> {
                    Ok(pc::ShorthandImu {
                        file: i.file,
                        lever_arm: i
                            .lever_arm
                            .map(|a| -> Result<_, SvcError> {
                                Ok([
                                    finite("imu.leverArm.x", a.x)?,
                                    finite("imu.leverArm.y", a.y)?,
                                    finite("imu.leverArm.z", a.z)?,
                                ])
                            })
                            .transpose()?,
                        other: extra_in("imu", i.extra, &["file", "leverArm"])?,
                    })
                })
                .transpose()?,
            outputs: c
                .outputs
                .map(|o| -> Result<_, SvcError> {
                    Ok(pc::ShorthandOutputs {
                        csv: o.csv,
                        geojson: o.geojson,
                        other: extra_in("outputs", o.extra, &["csv", "geojson"])?,
                    })
                })
                .transpose()?,
            other: extra_in(
                "(top level)",
                c.extra,
                &["type", "mode", "gnss", "imu", "outputs"],
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn what_the_service_returns_in_neither_form_stays_json_and_is_kept_whole() {
        let odd = serde_json::json!({"version": 7, "engine": "v9"});
        let config = ProcessingConfig::from_service(map(odd.clone()));
        let ProcessingConfig::Json { json } = &config else {
            panic!("typed: {config:?}");
        };
        assert_eq!(serde_json::from_str::<Value>(json).ok(), Some(odd.clone()));
        assert_eq!(config.into_map().ok(), Some(map(odd)));
        // A configuration the service left out is an empty shorthand.
        assert_eq!(
            ProcessingConfig::from_service(Map::new()),
            ProcessingConfig::Shorthand {
                config: ShorthandConfig::default()
            }
        );
    }
}
