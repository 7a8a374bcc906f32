//! The processing configuration a start submits (`processingJson`), typed: what the SDK
//! checks before it uploads anything and what the emulator's engine reads, so that
//! both read it alike.
//!
//! Two forms are read:
//!
//! - the vendor's **project configuration** (its published samples submit it): a
//!   `version`, the `project` (its `name`, `type` — `sbgECom` for a unit's data-logger
//!   session — and `path`, the rover's folder among the input files), the `processing`
//!   (its `type`, e.g. `insSingle`, a `motionProfile`, base stations with their data
//!   files, `estimateLeverArm`), `exports` (each with a `profile`, e.g. `SBET: 200Hz`) and `reports` (each
//!   with a `template`, e.g. `Minimal JSON`);
//! - the project's **shorthand** for its own NMEA samples: `type`, `mode`, `gnss`
//!   (`elevationMaskDegrees`, `constellations`), `imu` (`file`, `leverArm`) and
//!   `outputs` (`csv`, `geojson`).
//!
//! A configuration with `version` or `project` is the vendor's; any other is the
//! shorthand. Every value set is open (an unknown motion profile or export profile is
//! kept: the service decides), and so is every object (unknown fields are kept and
//! submitted as they are). What is checked: the types of the known fields, the parts
//! the vendor's form requires (`version`, `project` with its `type` and `path`,
//! `processing` with its `type`, a `profile` per export, a `template` per report), and
//! that every path the configuration names is a relative container path
//! ([`limits::check_container_path`](crate::limits::check_container_path)). An error
//! names the field (`processing.bases[0].data[1]`).
//!
//! ```
//! use svc_protocol::processing_config::ProcessingConfig;
//!
//! let vendor = serde_json::json!({
//!     "version": "1.0",
//!     "project": {"name": "demo", "type": "sbgECom", "path": "rover/"},
//!     "processing": {"type": "insSingle", "motionProfile": "automotive",
//!                    "bases": [{"data": ["base/sbgs167p.20d"]}]},
//!     "exports": [{"name": "Export SBET", "profile": "SBET: 200Hz", "outputDir": "export"}]
//! });
//! let config = ProcessingConfig::from_value(&vendor)?;
//! assert_eq!(config.input_paths(), ["rover/", "base/sbgs167p.20d"]);
//!
//! let wrong = serde_json::json!({"version": "1.0", "project": {"type": "sbgECom", "path": 7},
//!                                "processing": {"type": "insSingle"}});
//! let e = ProcessingConfig::from_value(&wrong).unwrap_err();
//! assert_eq!(e.field, "project.path");
//! # Ok::<(), svc_protocol::processing_config::ConfigError>(())
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A processing configuration, in one of its two forms.
#[derive(Clone, Debug, PartialEq)]
pub enum ProcessingConfig {
    /// The vendor's project configuration.
    Project(ProjectConfig),
    /// The project's shorthand.
    Shorthand(ShorthandConfig),
}

/// Why a configuration was refused: the field and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("processing configuration: {field}: {reason}")]
pub struct ConfigError {
    /// Where (`project.path`, `exports[1].profile`; `.` for the whole).
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl ConfigError {
    fn at(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

/// The vendor's project configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectConfig {
    /// The format's version (`1.0`).
    pub version: String,
    /// What is processed.
    pub project: Project,
    /// How.
    pub processing: Processing,
    /// The exports to write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exports: Vec<Export>,
    /// The reports to write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<Report>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `project`: what is processed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Project {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The rover's data: `sbgECom` (a unit's data-logger session), or another type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The rover's folder or file among the input files (`rover/`).
    pub path: String,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `processing`: how.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Processing {
    /// The processing: `insSingle`, or another type.
    #[serde(rename = "type")]
    pub kind: String,
    /// The vehicle's motion: `automotive`, `marine`, `airborne`, `pedestrian`... .
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motion_profile: Option<String>,
    /// Base stations.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub bases: Vec<Base>,
    /// Whether to estimate the lever arm from the IMU to the GNSS antenna (reported by
    /// the `Minimal JSON` report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub estimate_lever_arm: Option<bool>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A base station.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Base {
    /// How its position is known (`published`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position_mode: Option<String>,
    /// Its antenna.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub antenna: Option<Antenna>,
    /// Its data files among the input files (RINEX observations).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub data: Vec<String>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A base station's antenna.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Antenna {
    /// Its IGS type and radome (`TWIVP6050_CONE  NONE`).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// An export to write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Export {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The profile: `SBET: 200Hz`, `ASCII: INS at 200Hz`...
    pub profile: String,
    /// Where among the outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_dir: Option<String>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A report to write.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The template: `Minimal JSON`, `Full PDF`...
    pub template: String,
    /// Where among the outputs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_dir: Option<String>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// The project's shorthand.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShorthandConfig {
    /// The processing's type (`gnss`...).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `kinematic`, `static`...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// GNSS settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gnss: Option<ShorthandGnss>,
    /// The IMU's file and lever arm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imu: Option<ShorthandImu>,
    /// Which outputs to write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<ShorthandOutputs>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `gnss` of the shorthand.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShorthandGnss {
    /// Satellites below are not used, degrees.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elevation_mask_degrees: Option<f64>,
    /// The constellations used (`GPS`, `GALILEO`...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constellations: Option<Vec<String>>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `imu` of the shorthand.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShorthandImu {
    /// The IMU's file among the input files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// From the IMU to the GNSS antenna, metres (x, y, z).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lever_arm: Option<[f64; 3]>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// `outputs` of the shorthand.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ShorthandOutputs {
    /// The trajectory as CSV.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub csv: Option<bool>,
    /// The trajectory as GeoJSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub geojson: Option<bool>,
    /// Fields this SDK does not know, kept.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

impl ProcessingConfig {
    /// Reads and checks a configuration (see the [module](self)).
    ///
    /// # Errors
    /// [`ConfigError`] naming the first field that is wrong.
    pub fn from_value(value: &Value) -> Result<Self, ConfigError> {
        let Value::Object(map) = value else {
            return Err(ConfigError::at(".", "not a JSON object"));
        };
        Self::from_map(map)
    }

    /// As [`from_value`](Self::from_value), for the object itself.
    ///
    /// # Errors
    /// As [`from_value`](Self::from_value).
    pub fn from_map(map: &Map<String, Value>) -> Result<Self, ConfigError> {
        let vendor = map.contains_key("version") || map.contains_key("project");
        let config = if vendor {
            ProcessingConfig::Project(typed(map)?)
        } else {
            ProcessingConfig::Shorthand(typed(map)?)
        };
        config.check_paths()?;
        Ok(config)
    }

    /// The paths of input files it names, in order: the project's path and the bases'
    /// data (the vendor's form), the IMU's file (the shorthand).
    #[must_use]
    pub fn input_paths(&self) -> Vec<&str> {
        self.named_input_paths()
            .into_iter()
            .map(|(_, path)| path)
            .collect()
    }

    /// The paths of input files it names, each with the field that names it
    /// (`project.path`, `processing.bases[0].data[1]`, `imu.file`).
    #[must_use]
    pub fn named_input_paths(&self) -> Vec<(String, &str)> {
        match self {
            ProcessingConfig::Project(config) => {
                let mut paths = vec![("project.path".to_owned(), config.project.path.as_str())];
                for (b, base) in config.processing.bases.iter().enumerate() {
                    for (d, data) in base.data.iter().enumerate() {
                        paths.push((format!("processing.bases[{b}].data[{d}]"), data.as_str()));
                    }
                }
                paths
            }
            ProcessingConfig::Shorthand(config) => config
                .imu
                .as_ref()
                .and_then(|imu| imu.file.as_deref())
                .map(|file| vec![("imu.file".to_owned(), file)])
                .unwrap_or_default(),
        }
    }

    fn check_paths(&self) -> Result<(), ConfigError> {
        for (field, path) in self.named_input_paths() {
            // A folder is named with its trailing slash (`rover/`).
            let trimmed = path.strip_suffix('/').unwrap_or(path);
            crate::limits::check_container_path(trimmed).map_err(|e| {
                ConfigError::at(field, format!("not a path among the input files: {e}"))
            })?;
        }
        Ok(())
    }
}

/// `map` as a `T`, naming the field of the first error.
fn typed<T: serde::de::DeserializeOwned>(map: &Map<String, Value>) -> Result<T, ConfigError> {
    let value = Value::Object(map.clone());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        let reason = e.into_inner().to_string();
        // A missing field is reported at its parent: name the field itself.
        match reason
            .strip_prefix("missing field `")
            .and_then(|rest| rest.split('`').next())
        {
            Some(missing) => ConfigError::at(
                if field == "." {
                    missing.to_owned()
                } else {
                    format!("{field}.{missing}")
                },
                "missing",
            ),
            None => ConfigError::at(field, reason),
        }
    })
}
