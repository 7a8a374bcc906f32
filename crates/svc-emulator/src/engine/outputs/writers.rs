//! The output files: `trajectory.csv`, `trajectory.geojson` and `report.json`, written
//! deterministically (fixed key order and decimal formatting).

use std::collections::BTreeMap;
use std::io::{self, Write};

use serde_json::{Value, json};

use super::Summary;
use super::nmea::FileScan;
use super::trajectory::{Fix, great_circle, velocity};

/// `x` with `decimals` decimals, never `-0.000`.
pub(super) fn fixed(x: f64, decimals: usize) -> String {
    let s = format!("{x:.decimals$}");
    match s.strip_prefix('-') {
        Some(rest) if rest.bytes().all(|b| b == b'0' || b == b'.') => rest.to_string(),
        _ => s,
    }
}

/// `x` rounded to `decimals` decimals, as a JSON number written like [`fixed`] (minus zeros).
fn rounded(x: f64, decimals: usize) -> Value {
    json!(fixed(x, decimals).parse::<f64>().unwrap_or(x))
}

fn iso_time(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default()
}

/// Writes `trajectory.csv`, one line per fix.
pub(super) fn trajectory_csv(fixes: &[Fix], out: &mut impl Write) -> io::Result<()> {
    out.write_all(b"time,latitude,longitude,height,velocity_north,velocity_east,velocity_up\n")?;
    for (i, f) in fixes.iter().enumerate() {
        let [north, east, up] = velocity(fixes, i);
        writeln!(
            out,
            "{},{},{},{},{},{},{}",
            iso_time(f.time_ms),
            fixed(f.lat, 9),
            fixed(f.lon, 9),
            fixed(f.height, 3),
            fixed(north, 3),
            fixed(east, 3),
            fixed(up, 3),
        )?;
    }
    Ok(())
}

/// Writes `trajectory.geojson`: the document is built as a JSON value with a placeholder
/// for the coordinates, whose text is then written around them one position at a time
/// (the text is that of the whole value written at once, without holding it).
pub(super) fn trajectory_geojson(fixes: &[Fix], out: &mut impl Write) -> io::Result<()> {
    const PLACEHOLDER: &str = "\u{0}coordinates\u{0}";
    let position = |f: &Fix| json!([rounded(f.lon, 9), rounded(f.lat, 9), rounded(f.height, 3)]);
    let geometry = match fixes {
        [only] => json!({ "type": "Point", "coordinates": position(only) }),
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
        for (i, f) in fixes.iter().enumerate() {
            if i > 0 {
                out.write_all(b",")?;
            }
            serde_json::to_writer(&mut *out, &position(f))?;
        }
        out.write_all(b"]")?;
        out.write_all(after.as_bytes())?;
    }
    out.write_all(b"\n")
}

/// `report.json`, pretty-printed with keys in this order:
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
