//! Processing outputs: a trajectory computed from the NMEA 0183 data and the sbgECom
//! data-logger sessions of a container, shaped by the processing configuration
//! ([`solution`]: attitude, lever arm, standard deviations, quality; [`exports`]: the
//! vendor form's exports and reports).
//!
//! [`process_into`] reads every input file of a processing line by line, streamed through
//! a `BufReader` with lines capped at [`MAX_LINE_BYTES`] (so a multi-hundred-MiB IMU log or
//! a binary file costs constant memory), extracts the GGA and RMC sentences of any talker
//! (`$GPGGA`, `$GNGGA`, `$GNRMC`, ...), merges them into one fix per epoch (56 bytes each,
//! the only memory that grows with the inputs) and writes, in order, each through the
//! writer it is given ([`process`] holds them in memory):
//!
//! 1. `trajectory.csv`: header
//!    `time,latitude,longitude,height,velocity_north,velocity_east,velocity_up,roll,pitch,`
//!    `heading,std_north,std_east,std_up,std_velocity_north,std_velocity_east,`
//!    `std_velocity_up,std_roll,std_pitch,std_heading,quality`, then one line per fix (the
//!    [`solution`] at it) with `\n` line ends; time is ISO 8601 UTC with milliseconds
//!    (`2026-01-02T03:04:05.000Z`), latitude/longitude in degrees with 9 decimals, the
//!    ellipsoidal height in metres, velocities in m/s, angles in degrees and standard
//!    deviations with 3 decimals, the quality 1 to 6.
//! 2. `trajectory.geojson`: a `FeatureCollection` with one `Feature` whose geometry is a
//!    `LineString` of `[longitude, latitude, height]` (a `Point` for a single fix) and whose
//!    properties are `startTime`, `endTime` and `fixCount`.
//! 3. `report.json`: statistics of the inputs, see [`report_json`].
//! 4. The exports and reports of the vendor form ([`exports`]).
//!
//! The summary also tells where the mission took place: the country, region and place of
//! the fixes' median position ([`location`]).
//!
//! # Input rules
//! - Which files are read ([`Role`]): every input in the project's shorthand; in the
//!   vendor's form, those at or below `project.path` (the rover's settings sidecar there
//!   excepted), while the bases' data files are read only for the time they cover
//!   ([`bases`]) and other files not at all. `report.json` notes what each file was
//!   used for.
//! - A file whose first bytes hold a valid sbgECom log frame is a unit's binary
//!   data-logger session: its navigation positions are read as epochs (see [`binary`]).
//! - A line whose first non-blank byte is `$` is an NMEA sentence. Any other line (IMU CSV,
//!   logs, binary data) is ignored without a warning; a file without any sentence gets one
//!   informational note in the report (`no GNSS sentences in FILE`).
//! - The `*hh` checksum (XOR of the bytes between `$` and `*`) is verified when present. A
//!   sentence with a wrong checksum, invalid UTF-8, an over-long line, a missing or invalid
//!   required field, a GGA with fix quality 0 or an RMC with status `V` (both: no fix) is
//!   skipped with a warning `FILE:LINE: reason`. Other sentence types (GSV, VTG, ...) are
//!   counted but not used. At most [`MAX_WARNINGS_PER_FILE`] such warnings per file, then one
//!   `N more bad lines skipped in FILE`. A file that cannot be opened gives one warning.
//! - GGA gives time, position, ellipsoidal height (altitude + geoid separation; an empty
//!   separation counts as 0) and fix quality; RMC gives the date, speed over ground and course.
//!   They are merged by epoch (UTC time at millisecond resolution) over all files; the first
//!   GGA and the first RMC of an epoch win, later duplicates are dropped. An epoch without GGA
//!   takes the RMC position and the last known GGA height (the first GGA height before any GGA,
//!   0 when there is no GGA at all).
//! - Dates: an RMC dates itself; a GGA takes the date of the sentence before it in its file
//!   (before the first RMC of a file: that RMC), moved by one day when its time of day is more
//!   than 12 h away, which handles midnight rollover with or without an RMC. A file without
//!   RMC starts on the first RMC date of the other files; without any RMC date at all,
//!   `2000-01-01` is assumed with one warning.
//! - Velocities (north, east, up in m/s): north/east from the RMC speed and course of the epoch
//!   when present (an empty course is accepted for a zero speed), otherwise finite differences
//!   of consecutive positions on the local tangent plane (WGS84 meridian and prime-vertical
//!   radii at the mean latitude; a forward difference for the first fix); up from height
//!   differences over time, 0 for the first fix.
//!
//! # Options
//! `processing_json` is read as `svc_protocol::processing_config` reads it (a known field
//! of the wrong type fails the processing). It may hold `{"outputs": {"csv": false,
//! "geojson": false}}` to leave `trajectory.csv` and/or `trajectory.geojson` out;
//! `report.json` is always written; unknown fields are ignored.
//!
//! # Determinism
//! The outputs depend only on the input bytes and their order: no clock, no randomness, a fixed
//! key order and fixed decimal formatting (`-0.000` is written `0.000`).

mod bases;
mod binary;
#[cfg(test)]
mod config_tests;
mod document;
mod exports;
mod location;
mod nmea;
mod places;
mod solution;
#[cfg(test)]
mod tests;
mod trajectory;
mod writers;

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::{Map, Value};

use nmea::{FileScan, scan_file};
use svc_protocol::processing_config::ProcessingConfig;
use trajectory::Epochs;
use writers::{report_json, trajectory_csv, trajectory_geojson};

/// Warnings about bad lines reported per file before they are only counted.
pub const MAX_WARNINGS_PER_FILE: usize = 100;
/// Longest line kept in memory; NMEA sentences are at most 82 bytes, longer lines are bad.
pub const MAX_LINE_BYTES: usize = 4096;

/// 2000-01-01 in days since 1970-01-01: the date assumed when no RMC gives one.
const DEFAULT_DAY: i64 = 10_957;

/// One input file of the container: its container path and where its bytes lie.
#[derive(Clone, Debug)]
pub struct InputFile {
    pub path: String,
    pub location: PathBuf,
}

/// An output held in memory ([`process`]).
#[derive(Clone, Debug, PartialEq)]
pub struct OutputFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

/// An output written through the writer its sink gave ([`process_into`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Written<W> {
    pub path: String,
    pub file: W,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Summary {
    /// Seconds between the first and the last usable fix.
    pub mission_length_s: i64,
    /// Where the mission took place ([`location`]): ISO 3166-1 alpha-2 country code,
    /// ISO 3166-2 subdivision code, English name of the nearest major city; `None` when
    /// not known (at sea, a country without subdivisions in the data, no city near).
    pub country: Option<String>,
    pub region: Option<String>,
    pub place: Option<String>,
}

/// What a processing produced: its outputs in order, the warnings, the summary.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome<O = OutputFile> {
    pub outputs: Vec<O>,
    pub warnings: Vec<String>,
    pub summary: Summary,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub error: String,
    pub warnings: Vec<String>,
}

/// Computes the processing outputs from the container files (see the module
/// documentation), each held in memory.
pub fn process(
    inputs: &[InputFile],
    processing_json: &Map<String, Value>,
) -> Result<Outcome, Failure> {
    let outcome = process_into(inputs, processing_json, |_| Ok(Vec::new()))?;
    Ok(Outcome {
        outputs: outcome
            .outputs
            .into_iter()
            .map(|w| OutputFile {
                path: w.path,
                bytes: w.file,
            })
            .collect(),
        warnings: outcome.warnings,
        summary: outcome.summary,
    })
}

/// Computes the processing outputs from the container files (see the module
/// documentation), writing each through the writer `create` gives for its path (flushed
/// once written). A writer that fails fails the processing (`could not write PATH: ...`).
pub fn process_into<W: Write>(
    inputs: &[InputFile],
    processing_json: &Map<String, Value>,
    mut create: impl FnMut(&str) -> io::Result<W>,
) -> Result<Outcome<Written<W>>, Failure> {
    let mut warnings = Vec::new();
    // The configuration first: a wrong one fails the processing before any input is read.
    let configured = match configured(inputs, processing_json, &mut warnings) {
        Ok(configured) => configured,
        Err(error) => return Err(Failure { error, warnings }),
    };
    let Configured {
        settings,
        planned,
        profile: profile_name,
        bases: base_paths,
        ..
    } = &configured;
    let mut epochs = Epochs::default();
    let mut scans: Vec<FileScan> = inputs
        .iter()
        .map(|input| {
            epochs.start_file();
            match configured.role(&input.path) {
                Role::Rover => scan_file(input, &mut warnings, |record| epochs.add(&record)),
                role => role.scan(input),
            }
        })
        .collect();
    let has_records = !epochs.is_empty();
    let fallback_day = epochs.first_rmc_day().unwrap_or_else(|| {
        if has_records {
            warnings.push("no RMC date; times assume 2000-01-01".to_string());
        }
        DEFAULT_DAY
    });
    let (mut fixes, valid_fixes) = epochs.into_fixes(fallback_day);
    for (scan, valid) in scans.iter_mut().zip(valid_fixes) {
        scan.valid_fixes = valid;
    }
    let (Some(first), Some(last)) = (fixes.first(), fixes.last()) else {
        let sentences: u64 = scans.iter().map(|s| s.sentences).sum();
        let skipped: u64 = scans.iter().map(|s| s.skipped).sum();
        let error = format!(
            "no usable GNSS input: {}, {} ({skipped} skipped), 0 valid GGA/RMC sentences",
            plural(inputs.len() as u64, "file"),
            plural(sentences, "NMEA sentence"),
        );
        return Err(Failure { error, warnings });
    };
    let base_paths: Vec<&str> = base_paths.iter().map(String::as_str).collect();
    warnings.extend(bases::warnings(
        inputs,
        &base_paths,
        first.time_ms,
        last.time_ms,
    ));
    let mut lever_arm = solution::LeverArmEstimate::default();
    for scan in &scans {
        lever_arm.merge(&scan.lever_arm);
    }
    if settings.estimate_lever_arm && lever_arm.epochs == 0 {
        warnings.push(
            "lever arm not estimated: no input gives an instant with both the GNSS antenna's position (gps1Pos) and the navigation position and attitude (ekfNav, ekfEuler) of a unit's session".to_owned(),
        );
    }
    let mission_length_s = (last.time_ms - first.time_ms) / 1000;
    let location = location::mission_location(&mut fixes);
    // Back in time order (one fix per time).
    fixes.sort_unstable_by_key(|f| f.time_ms);
    let summary = Summary {
        mission_length_s,
        country: location.country,
        region: location.region,
        place: location.place,
    };

    let wanted = |name: &str| {
        let flag = processing_json
            .get("outputs")
            .and_then(|o| o.get(name))
            .and_then(Value::as_bool);
        flag != Some(false)
    };
    let report = report_json(&scans, &fixes, &summary, warnings.len());
    let mut outputs = Vec::new();
    let mut write = |path: &str, content: &dyn Fn(&mut W) -> io::Result<()>| {
        let written = create(path).and_then(|mut file| {
            content(&mut file)?;
            file.flush()?;
            Ok(file)
        });
        match written {
            Ok(file) => {
                outputs.push(Written {
                    path: path.to_owned(),
                    file,
                });
                Ok(())
            }
            Err(e) => Err(format!("could not write {path}: {e}")),
        }
    };
    let solution = solution::Solution::new(&fixes, settings);
    let warning_count = warnings.len();
    let result = (|| {
        if wanted("csv") {
            write("trajectory.csv", &|out| trajectory_csv(&solution, out))?;
        }
        if wanted("geojson") {
            write("trajectory.geojson", &|out| {
                trajectory_geojson(&fixes, &solution, out)
            })?;
        }
        write("report.json", &|out| out.write_all(&report))?;
        // The reports' figures, one pass over the epochs whatever the number of reports.
        let mut figures: Option<Value> = None;
        for output in planned {
            match output {
                exports::Output::Export {
                    path,
                    format,
                    rate_hz,
                } => write(path, &|out| {
                    exports::write_export(&solution, *format, *rate_hz, out)
                })?,
                exports::Output::Report { path, template } => {
                    let figures = figures.get_or_insert_with(|| {
                        exports::minimal_report(
                            &fixes,
                            &solution,
                            settings,
                            &lever_arm,
                            profile_name,
                            warning_count,
                        )
                    });
                    let figures = &*figures;
                    write(path, &|out| match template {
                        exports::Template::MinimalJson => {
                            serde_json::to_writer_pretty(&mut *out, figures)?;
                            out.write_all(b"\n")
                        }
                        exports::Template::FullHtml => document::html(figures, &solution, out),
                        exports::Template::FullPdf => document::pdf(figures, &solution, out),
                    })?;
                }
            }
        }
        Ok::<(), String>(())
    })();
    drop(fixes);
    if let Err(error) = result {
        return Err(Failure { error, warnings });
    }
    Ok(Outcome {
        outputs,
        warnings,
        summary,
    })
}

/// What the configuration says: the solution's settings, the exports and reports to
/// write, the motion profile's name and which input plays which part.
struct Configured {
    settings: solution::Settings,
    planned: Vec<exports::Output>,
    profile: String,
    /// The bases' data files (`processing.bases[].data`).
    bases: Vec<String>,
    /// The rover's file or folder (`project.path`); `None` in the shorthand form,
    /// where every file is rover input.
    rover: Option<String>,
    /// The rover's settings sidecar and the lever arm read from it.
    sidecar: Option<(String, [f64; 3])>,
}

/// The part an input file plays in a processing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Read for the rover's epochs (NMEA or a binary session).
    Rover,
    /// A base station's observations: their span is checked ([`bases`]), nothing more.
    Base,
    /// The rover's settings sidecar: its lever arm is used.
    Settings,
    /// Named by no part of the vendor form: not read.
    Unused,
}

impl Configured {
    fn role(&self, path: &str) -> Role {
        if self.bases.iter().any(|base| base == path) {
            return Role::Base;
        }
        if self
            .sidecar
            .as_ref()
            .is_some_and(|(sidecar, _)| sidecar == path)
        {
            return Role::Settings;
        }
        match &self.rover {
            Some(rover) if !in_rover(path, rover) => Role::Unused,
            _ => Role::Rover,
        }
    }
}

impl Role {
    /// The report's entry for a file that is not read for epochs: what it was used for.
    fn scan(self, input: &InputFile) -> FileScan {
        let mut scan = FileScan::new(&input.path);
        let note = match self {
            Role::Rover => return scan,
            Role::Base => match bases::span_of(input) {
                Ok(span) => format!(
                    "base station observations from {} to {}",
                    writers::iso_time(span.first),
                    span.last
                        .map_or_else(|| "an end it does not say".to_owned(), writers::iso_time)
                ),
                Err(reason) => format!("base station data: {reason}"),
            },
            Role::Settings => "the rover's settings: settings.sensor.leverArm applied".to_owned(),
            Role::Unused => {
                "not used: neither in the rover's project.path nor a base's data".to_owned()
            }
        };
        scan.notes.push(note);
        scan
    }
}

/// What the configuration says ([`Configured`]), from `processing_json` (see
/// [`solution::Settings::of`] and [`exports`]).
fn configured(
    inputs: &[InputFile],
    processing_json: &Map<String, Value>,
    warnings: &mut Vec<String>,
) -> Result<Configured, String> {
    let config = ProcessingConfig::from_map(processing_json).map_err(|e| e.to_string())?;
    let configured = match &config {
        ProcessingConfig::Project(project) => {
            let sidecar = sidecar_lever_arm(inputs, &project.project.path, warnings);
            Configured {
                settings: solution::Settings::of(&config, sidecar.as_ref().map(|(_, arm)| *arm))?,
                planned: exports::planned(project)?,
                profile: project
                    .processing
                    .motion_profile
                    .clone()
                    .unwrap_or_else(|| "automotive".to_owned()),
                bases: project
                    .processing
                    .bases
                    .iter()
                    .flat_map(|base| base.data.iter().cloned())
                    .collect(),
                rover: Some(project.project.path.clone()),
                sidecar,
            }
        }
        ProcessingConfig::Shorthand(_) => Configured {
            settings: solution::Settings::of(&config, None)?,
            planned: Vec::new(),
            profile: "automotive".to_owned(),
            bases: Vec::new(),
            rover: None,
            sidecar: None,
        },
    };
    Ok(configured)
}

/// Whether the container path `path` is the rover's file or lies in its folder `rover`
/// (`project.path`, with or without a trailing `/`).
fn in_rover(path: &str, rover: &str) -> bool {
    let folder = rover.trim_end_matches('/');
    path == folder
        || path
            .strip_prefix(folder)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// The vendor's rover settings sidecar and its lever arm: a JSON file in the rover's
/// folder (`rover`, as `project.path` names it) holding `settings.sensor.leverArm`
/// (`[x, y, z]`, metres). A sidecar that cannot be read is a warning.
fn sidecar_lever_arm(
    inputs: &[InputFile],
    rover: &str,
    warnings: &mut Vec<String>,
) -> Option<(String, [f64; 3])> {
    /// A settings sidecar is small; a larger JSON file is not one.
    const MAX_SIDECAR_BYTES: u64 = 1 << 20;
    for input in inputs {
        if !in_rover(&input.path, rover) || !input.path.to_ascii_lowercase().ends_with(".json") {
            continue;
        }
        let small = std::fs::metadata(&input.location).is_ok_and(|m| m.len() <= MAX_SIDECAR_BYTES);
        let value = small
            .then(|| std::fs::read(&input.location).ok())
            .flatten()
            .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
        let Some(value) = value else {
            warnings.push(format!(
                "{}: not a readable JSON settings file; ignored",
                input.path
            ));
            continue;
        };
        let Some(arm) = value.pointer("/settings/sensor/leverArm") else {
            continue;
        };
        match serde_json::from_value::<[f64; 3]>(arm.clone()) {
            Ok(arm) => return Some((input.path.clone(), arm)),
            Err(_) => warnings.push(format!(
                "{}: settings.sensor.leverArm is not [x, y, z] in metres; ignored",
                input.path
            )),
        }
    }
    None
}

pub(super) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}
