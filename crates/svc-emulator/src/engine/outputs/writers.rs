//! The output files: `trajectory.csv`, `trajectory.geojson` and `report.json`, written
//! deterministically (fixed key order and decimal formatting).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{Value, json};

use super::Summary;
use super::nmea::FileScan;
use super::solution::{Solution, State};
use super::trajectory::{Fix, great_circle};

/// `x` with `decimals` decimals, never `-0.000`.
pub(super) fn fixed(x: f64, decimals: usize) -> String {
    Fixed(x, decimals).to_string()
}

/// `x` with `.1` decimals, never `-0.000`, written without allocating (the outputs
/// write millions of them).
#[derive(Clone, Copy)]
pub(super) struct Fixed(pub(super) f64, pub(super) usize);

impl std::fmt::Display for Fixed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Fixed(x, decimals) = *self;
        let mut buffer = [0_u8; 64];
        let mut cursor = io::Cursor::new(&mut buffer[..]);
        if write!(cursor, "{x:.decimals$}").is_err() {
            // Longer than the buffer (a huge value): written as it is.
            return write!(f, "{x:.decimals$}");
        }
        let len = usize::try_from(cursor.position()).unwrap_or(0);
        let text = std::str::from_utf8(&buffer[..len]).map_err(|_| std::fmt::Error)?;
        match text.strip_prefix('-') {
            Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => f.write_str(rest),
            _ => f.write_str(text),
        }
    }
}

/// `x` rounded to `decimals` decimals, as a JSON number written like [`fixed`] (minus zeros).
fn rounded(x: f64, decimals: usize) -> Value {
    json!(fixed(x, decimals).parse::<f64>().unwrap_or(x))
}

pub(super) fn iso_time(ms: i64) -> String {
    IsoTime(ms).to_string()
}

/// A UTC time (ms since 1970-01-01) in ISO 8601 with milliseconds, written without
/// allocating; nothing for a time out of range.
#[derive(Clone, Copy)]
pub(super) struct IsoTime(pub(super) i64);

impl std::fmt::Display for IsoTime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match chrono::DateTime::from_timestamp_millis(self.0) {
            Some(t) => write!(f, "{}", t.format("%Y-%m-%dT%H:%M:%S%.3fZ")),
            None => Ok(()),
        }
    }
}

/// The header of `trajectory.csv`.
pub(super) const TRAJECTORY_HEADER: &str = "time,latitude,longitude,height,velocity_north,\
velocity_east,velocity_up,roll,pitch,heading,std_north,std_east,std_up,std_velocity_north,\
std_velocity_east,std_velocity_up,std_roll,std_pitch,std_heading,quality";

/// The columns of a state after its time, as `trajectory.csv` and the ASCII export
/// write them (`separator` between them): position, velocity, attitude, their standard
/// deviations, quality.
pub(super) fn state_columns(out: &mut impl Write, s: &State, separator: char) -> io::Result<()> {
    let values = [
        Fixed(s.lat, 9),
        Fixed(s.lon, 9),
        Fixed(s.height, 3),
        Fixed(s.velocity[0], 3),
        Fixed(s.velocity[1], 3),
        Fixed(s.velocity[2], 3),
        Fixed(s.attitude[0], 3),
        Fixed(s.attitude[1], 3),
        Fixed(s.attitude[2], 3),
        Fixed(s.position_std[0], 3),
        Fixed(s.position_std[1], 3),
        Fixed(s.position_std[2], 3),
        Fixed(s.velocity_std[0], 3),
        Fixed(s.velocity_std[1], 3),
        Fixed(s.velocity_std[2], 3),
        Fixed(s.attitude_std[0], 3),
        Fixed(s.attitude_std[1], 3),
        Fixed(s.attitude_std[2], 3),
    ];
    for value in values {
        write!(out, "{value}{separator}")?;
    }
    write!(out, "{}", s.quality)
}

/// Writes `trajectory.csv`, one line per fix: the solution at each fix.
pub(super) fn trajectory_csv(solution: &Solution<'_>, out: &mut impl Write) -> io::Result<()> {
    writeln!(out, "{TRAJECTORY_HEADER}")?;
    for i in 0..solution.len() {
        let s = solution.at(i);
        write!(out, "{},", IsoTime(s.time_ms as i64))?;
        state_columns(out, &s, ',')?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// Writes `trajectory.geojson`: the document is built as a JSON value with a placeholder
/// for the coordinates, whose text is then written around them one position at a time
/// (the text is that of the whole value written at once, without holding it).
pub(super) fn trajectory_geojson(
    fixes: &[Fix],
    solution: &Solution<'_>,
    out: &mut impl Write,
) -> io::Result<()> {
    const PLACEHOLDER: &str = "\u{0}coordinates\u{0}";
    let position = |i: usize| {
        let s = solution.at(i);
        json!([rounded(s.lon, 9), rounded(s.lat, 9), rounded(s.height, 3)])
    };
    let geometry = match fixes {
        [_] => json!({ "type": "Point", "coordinates": position(0) }),
        _ => json!({ "type": "LineString", "coordinates": PLACEHOLDER }),
    };
    let properties = json!({
        "startTime": fixes.first().map(|f| iso_time(f.time_ms)),
        "endTime": fixes.last().map(|f| iso_time(f.time_ms)),
        "fixCount": fixes.len(),
    });
    let collection = json!({
        "type": "FeatureCollection",
        "features": [{ "type": "Feature", "geometry": geometry, "properties": properties }],
    });
    let document = collection.to_string();
    if let [_] = fixes {
        out.write_all(document.as_bytes())?;
    } else {
        let placeholder = Value::from(PLACEHOLDER).to_string();
        let (before, after) = document
            .split_once(&placeholder)
            .ok_or_else(|| io::Error::other("the GeoJSON coordinates have no place"))?;
        out.write_all(before.as_bytes())?;
        out.write_all(b"[")?;
        for i in 0..fixes.len() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &position(i))?;
        }
        out.write_all(b"]")?;
        out.write_all(after.as_bytes())?;
    }
    out.write_all(b"\n")
}

/// What `report.json` says made it: the emulator, so that results computed locally are
/// never mistaken for the service's.
pub(super) const PRODUCED_BY: &str = concat!(
    "svc-emulator ",
    env!("CARGO_PKG_VERSION"),
    " (the local emulator, not the cloud service)"
);

/// `report.json`, pretty-printed with keys in this order:
/// - `producedBy`: [`PRODUCED_BY`];
/// - `fixCount`;
/// - `inputFiles`: per file `path`, `sentences` (lines starting with `$`), `validFixes`
///   (distinct epochs with a usable GGA or RMC), `skippedLines` (sentences skipped with a
///   warning) and `notes` (only when there are some);
/// - `startTime`, `endTime` (as in the CSV), `durationSeconds` (milliseconds precision),
///   `missionLengthSeconds` (whole seconds, as [`Summary::mission_length_s`]);
/// - `distanceMeters`: sum of the horizontal great-circle distances between consecutive fixes;
/// - `boundingBox`: `minLatitude`, `minLongitude`, `maxLatitude`, `maxLongitude`, `minHeight`,
///   `maxHeight`;
/// - `missionLocation`: `country`, `region`, `place` as in [`Summary`] (unknown: null);
/// - `fixQuality`: fix count per GGA quality (`"1"`, `"4"`, ...), plus `rmcOnly` for fixes
///   without a GGA when there are some;
/// - `warnings`: the number of warnings.
pub(super) fn report_json(
    scans: &[FileScan],
    fixes: &[Fix],
    summary: &Summary,
    warnings: usize,
) -> Vec<u8> {
    let files: Vec<Value> = scans
        .iter()
        .map(|s| {
            let mut file = json!({
                "path": s.path,
                "sentences": s.sentences,
                "validFixes": s.valid_fixes,
                "skippedLines": s.skipped,
            });
            if let (false, Some(map)) = (s.notes.is_empty(), file.as_object_mut()) {
                map.insert("notes".into(), json!(s.notes));
            }
            file
        })
        .collect();
    let extreme = |value: fn(&Fix) -> f64, pick: fn(f64, f64) -> f64| {
        fixes.iter().map(value).reduce(pick).unwrap_or(0.0)
    };
    let mut qualities: BTreeMap<String, u64> = BTreeMap::new();
    for fix in fixes {
        *qualities
            .entry(
                fix.quality()
                    .map_or_else(|| "rmcOnly".to_string(), |q| q.to_string()),
            )
            .or_default() += 1;
    }
    let distance: f64 = fixes.windows(2).map(|w| great_circle(&w[0], &w[1])).sum();
    let (start, end) = (
        fixes.first().map_or(0, |f| f.time_ms),
        fixes.last().map_or(0, |f| f.time_ms),
    );
    let report = json!({
        "producedBy": PRODUCED_BY,
        "fixCount": fixes.len(),
        "inputFiles": files,
        "startTime": iso_time(start),
        "endTime": iso_time(end),
        "durationSeconds": rounded((end - start) as f64 / 1000.0, 3),
        "missionLengthSeconds": summary.mission_length_s,
        "distanceMeters": rounded(distance, 3),
        "boundingBox": {
            "minLatitude": rounded(extreme(|f| f.lat, f64::min), 9),
            "minLongitude": rounded(extreme(|f| f.lon, f64::min), 9),
            "maxLatitude": rounded(extreme(|f| f.lat, f64::max), 9),
            "maxLongitude": rounded(extreme(|f| f.lon, f64::max), 9),
            "minHeight": rounded(extreme(|f| f.height, f64::min), 3),
            "maxHeight": rounded(extreme(|f| f.height, f64::max), 3),
        },
        "missionLocation": { "country": summary.country, "region": summary.region, "place": summary.place },
        "fixQuality": qualities,
        "warnings": warnings,
    });
    // A `Value` (string keys, finite or null numbers) always serializes into a `Vec`.
    let mut bytes = serde_json::to_vec_pretty(&report).expect("a JSON value serializes");
    bytes.push(b'\n');
    bytes
}
