//! The exports and reports a configuration in the vendor's form asks for
//! (`exports[].profile`, `reports[].template`), each written to
//! `OUTPUT_DIR/STEM.EXT`: `OUTPUT_DIR` the entry's `outputDir` (none: the top of the
//! outputs), `STEM` its `name` in lower case with every run of other characters than
//! letters and digits as one `_` (none: `export1`, `report1`… by position).
//!
//! Export profiles (`FORMAT: … RATEHz`; the rate, 0.01 to 1000 Hz, defaults to 1 Hz):
//!
//! - `SBET` (`.sbet`): Smoothed Best Estimate of Trajectory, 17 little-endian
//!   doubles per record: GPS seconds of the week, latitude and longitude (rad),
//!   ellipsoidal height (m), velocity x (north), y (east), z (down) in m/s (the local
//!   level frame with a wander angle of 0), roll, pitch, heading (rad), the wander angle
//!   (0), the body-frame acceleration x, y, z (m/s², gravity excluded) and angular rate
//!   x, y, z (rad/s). GPS time is UTC + 18 s.
//! - `ASCII` (`.txt`): lines starting with `#` describe the file (the last one names
//!   the columns), then one line per epoch, columns separated by one space: [`ASCII_COLUMNS`].
//! - `KML` (`.kml`): a `LineString` of the whole trajectory, then one `Placemark` per
//!   epoch with its time and `ExtendedData` (quality, attitude, σ).
//! - `GeoJSON` (`.geojson`): a `FeatureCollection` of one `Point` feature per epoch
//!   (`[longitude, latitude, height]`) with the epoch's properties.
//!
//! Report templates:
//!
//! - `Minimal JSON` (`.json`): see [`minimal_report`];
//! - `Full HTML` (`.html`) and `Full PDF` (`.pdf`): the same figures with plots of the
//!   track, the height and the position σ over time.
//!
//! An unknown profile or template, a rate out of range, or two entries writing one
//! path are errors of the processing, naming the entry.

use std::io::{self, Write};

use serde_json::{Value, json};
use svc_protocol::processing_config::ProjectConfig;

use super::solution::{LeverArmEstimate, Settings, Solution, State, ned_to_body};
use super::trajectory::{Fix, great_circle};
use super::writers::{Fixed, IsoTime, fixed, iso_time, state_columns};

/// GPS time − UTC, seconds (since 2017-01-01).
const LEAP_SECONDS: f64 = 18.0;
/// 1980-01-06T00:00:00Z, the GPS epoch, in Unix seconds.
const GPS_EPOCH_UNIX: f64 = 315_964_800.0;
const WEEK_SECONDS: f64 = 604_800.0;

/// The columns of the `ASCII` export.
pub(crate) const ASCII_COLUMNS: &str = "utc_time gps_week gps_seconds latitude longitude height \
velocity_north velocity_east velocity_up roll pitch heading std_north std_east std_up \
std_velocity_north std_velocity_east std_velocity_up std_roll std_pitch std_heading quality";

/// An export's format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Sbet,
    Ascii,
    Kml,
    GeoJson,
}

impl Format {
    fn extension(self) -> &'static str {
        match self {
            Format::Sbet => "sbet",
            Format::Ascii => "txt",
            Format::Kml => "kml",
            Format::GeoJson => "geojson",
        }
    }
}

/// A report's template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Template {
    MinimalJson,
    FullHtml,
    FullPdf,
}

/// What to write where.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Output {
    Export {
        path: String,
        format: Format,
        rate_hz: f64,
    },
    Report {
        path: String,
        template: Template,
    },
}

impl Output {
    pub(crate) fn path(&self) -> &str {
        match self {
            Output::Export { path, .. } | Output::Report { path, .. } => path,
        }
    }
}

/// The outputs `config` asks for, checked.
///
/// # Errors
/// The entry that cannot be written, and why.
pub(crate) fn planned(config: &ProjectConfig) -> Result<Vec<Output>, String> {
    let mut outputs = Vec::new();
    for (i, export) in config.exports.iter().enumerate() {
        let field = format!("exports[{i}].profile");
        let (format, rate_hz) = profile(&export.profile).map_err(|e| format!("{field}: {e}"))?;
        let path = path_of(
            export.output_dir.as_deref(),
            export.name.as_deref(),
            &format!("export{}", i + 1),
            format.extension(),
        )
        .map_err(|e| format!("exports[{i}].outputDir: {e}"))?;
        outputs.push(Output::Export {
            path,
            format,
            rate_hz,
        });
    }
    for (i, report) in config.reports.iter().enumerate() {
        let template = match report.template.trim().to_ascii_lowercase().as_str() {
            "minimal json" => Template::MinimalJson,
            "full html" => Template::FullHtml,
            "full pdf" => Template::FullPdf,
            _ => {
                return Err(format!(
                    "reports[{i}].template: unknown report template `{}` (known: Minimal JSON, Full HTML, Full PDF)",
                    report.template
                ));
            }
        };
        let extension = match template {
            Template::MinimalJson => "json",
            Template::FullHtml => "html",
            Template::FullPdf => "pdf",
        };
        let path = path_of(
            report.output_dir.as_deref(),
            report.name.as_deref(),
            &format!("report{}", i + 1),
            extension,
        )
        .map_err(|e| format!("reports[{i}].outputDir: {e}"))?;
        outputs.push(Output::Report { path, template });
    }
    for (i, output) in outputs.iter().enumerate() {
        let reserved = ["trajectory.csv", "trajectory.geojson", "report.json"];
        if reserved.contains(&output.path())
            || outputs[..i].iter().any(|o| o.path() == output.path())
        {
            return Err(format!(
                "{}: written twice (give the exports and reports distinct names or folders)",
                output.path()
            ));
        }
    }
    Ok(outputs)
}

/// `FORMAT: … RATEHz` as a format and a rate.
fn profile(text: &str) -> Result<(Format, f64), String> {
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    let format = match name.trim().to_ascii_lowercase().as_str() {
        "sbet" => Format::Sbet,
        "ascii" => Format::Ascii,
        "kml" => Format::Kml,
        "geojson" => Format::GeoJson,
        _ => {
            return Err(format!(
                "unknown export profile `{text}` (known: SBET, ASCII, KML, GeoJSON, each with an optional rate: `SBET: 200Hz`)"
            ));
        }
    };
    let rate = rest
        .split_whitespace()
        .filter_map(|word| {
            let lower = word.to_ascii_lowercase();
            lower.strip_suffix("hz").map(|n| n.parse::<f64>())
        })
        .next_back();
    let rate_hz = match rate {
        None => 1.0,
        Some(Ok(rate)) if (0.01..=1000.0).contains(&rate) => rate,
        Some(_) => {
            return Err(format!(
                "`{text}`: the rate must be 0.01 to 1000 Hz (`SBET: 200Hz`)"
            ));
        }
    };
    Ok((format, rate_hz))
}

/// `OUTPUT_DIR/STEM.EXT` (see the module documentation).
fn path_of(
    dir: Option<&str>,
    name: Option<&str>,
    default: &str,
    extension: &str,
) -> Result<String, String> {
    let mut stem = String::new();
    for c in name.unwrap_or_default().chars() {
        if c.is_ascii_alphanumeric() {
            stem.push(c.to_ascii_lowercase());
        } else if !stem.ends_with('_') && !stem.is_empty() {
            stem.push('_');
        }
    }
    let stem = stem.trim_end_matches('_');
    let stem = if stem.is_empty() { default } else { stem };
    let file = format!("{stem}.{extension}");
    let dir = dir.map(|d| d.trim_matches('/')).filter(|d| !d.is_empty());
    let path = match dir {
        Some(dir) => format!("{dir}/{file}"),
        None => file,
    };
    svc_protocol::limits::check_container_path(&path)
        .map_err(|e| format!("`{path}` is not a path among the outputs: {e}"))?;
    Ok(path)
}

/// The GPS week and seconds of the week of a UTC time (ms since 1970-01-01).
pub(crate) fn gps_time(utc_ms: f64) -> (i64, f64) {
    let gps = utc_ms / 1000.0 + LEAP_SECONDS - GPS_EPOCH_UNIX;
    let week = (gps / WEEK_SECONDS).floor();
    (week as i64, gps - week * WEEK_SECONDS)
}

/// Writes an export of `solution` at its rate.
pub(crate) fn write_export(
    solution: &Solution<'_>,
    format: Format,
    rate_hz: f64,
    out: &mut impl Write,
) -> io::Result<()> {
    match format {
        Format::Sbet => {
            let mut last: Option<State> = None;
            solution.at_rate(rate_hz, |s| {
                let (accel, rates) = match &last {
                    Some(prev) => derivatives(prev, s),
                    None => ([0.0; 3], [0.0; 3]),
                };
                let (_, seconds) = gps_time(s.time_ms);
                let record = [
                    seconds,
                    s.lat.to_radians(),
                    s.lon.to_radians(),
                    s.height,
                    s.velocity[0],
                    s.velocity[1],
                    -s.velocity[2],
                    s.attitude[0].to_radians(),
                    s.attitude[1].to_radians(),
                    s.attitude[2].to_radians(),
                    0.0,
                    accel[0],
                    accel[1],
                    accel[2],
                    rates[0],
                    rates[1],
                    rates[2],
                ];
                for value in record {
                    out.write_all(&value.to_le_bytes())?;
                }
                last = Some(*s);
                Ok(())
            })
        }
        Format::Ascii => {
            writeln!(
                out,
                "# trajectory export at {rate_hz} Hz: UTC time (ISO 8601), GPS week and seconds of the week,"
            )?;
            writeln!(
                out,
                "# degrees, metres, m/s, 1-sigma standard deviations, quality 1 (RTK fixed) to 6 (outage)"
            )?;
            writeln!(out, "# {ASCII_COLUMNS}")?;
            solution.at_rate(rate_hz, |s| {
                let (week, seconds) = gps_time(s.time_ms);
                write!(
                    out,
                    "{} {week} {} ",
                    IsoTime(s.time_ms.round() as i64),
                    Fixed(seconds, 3)
                )?;
                state_columns(out, s, ' ')?;
                out.write_all(b"\n")
            })
        }
        Format::GeoJson => {
            out.write_all(b"{\"type\":\"FeatureCollection\",\"features\":[")?;
            let mut first = true;
            solution.at_rate(rate_hz, |s| {
                if !first {
                    out.write_all(b",")?;
                }
                first = false;
                serde_json::to_writer(&mut *out, &point_feature(s))?;
                Ok::<(), io::Error>(())
            })?;
            out.write_all(b"]}\n")
        }
        Format::Kml => {
            out.write_all(
                b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<kml xmlns=\"http://www.opengis.net/kml/2.2\"><Document><name>trajectory</name>\n<Placemark><name>track</name><LineString><altitudeMode>absolute</altitudeMode><coordinates>",
            )?;
            solution.at_rate(rate_hz, |s| write!(out, "{} ", KmlPosition(s)))?;
            out.write_all(b"</coordinates></LineString></Placemark>\n")?;
            solution.at_rate(rate_hz, |s| {
                write!(
                    out,
                    "<Placemark><TimeStamp><when>{}</when></TimeStamp><ExtendedData>",
                    iso_time(s.time_ms.round() as i64)
                )?;
                for (name, value) in [
                    ("quality", s.quality.to_string()),
                    ("roll", fixed(s.attitude[0], 3)),
                    ("pitch", fixed(s.attitude[1], 3)),
                    ("heading", fixed(s.attitude[2], 3)),
                    ("std_north", fixed(s.position_std[0], 3)),
                    ("std_east", fixed(s.position_std[1], 3)),
                    ("std_up", fixed(s.position_std[2], 3)),
                ] {
                    write!(out, "<Data name=\"{name}\"><value>{value}</value></Data>")?;
                }
                writeln!(
                    out,
                    "</ExtendedData><Point><altitudeMode>absolute</altitudeMode><coordinates>{}</coordinates></Point></Placemark>",
                    KmlPosition(s)
                )
            })?;
            out.write_all(b"</Document></kml>\n")
        }
    }
}

/// A KML position: `longitude,latitude,height`.
struct KmlPosition<'a>(&'a State);

impl std::fmt::Display for KmlPosition<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.0;
        write!(
            f,
            "{},{},{}",
            Fixed(s.lon, 9),
            Fixed(s.lat, 9),
            Fixed(s.height, 3)
        )
    }
}

/// The body-frame acceleration (gravity excluded) and attitude rates from `a` to `b`.
fn derivatives(a: &State, b: &State) -> ([f64; 3], [f64; 3]) {
    let dt = (b.time_ms - a.time_ms) / 1000.0;
    if dt <= 0.0 {
        return ([0.0; 3], [0.0; 3]);
    }
    let ned = [
        (b.velocity[0] - a.velocity[0]) / dt,
        (b.velocity[1] - a.velocity[1]) / dt,
        -(b.velocity[2] - a.velocity[2]) / dt,
    ];
    let turn = |x: f64, y: f64| {
        let d = (y - x).rem_euclid(360.0);
        (if d > 180.0 { d - 360.0 } else { d }).to_radians() / dt
    };
    (
        ned_to_body(b.attitude, ned),
        [
            turn(a.attitude[0], b.attitude[0]),
            turn(a.attitude[1], b.attitude[1]),
            turn(a.attitude[2], b.attitude[2]),
        ],
    )
}

/// An epoch as a GeoJSON `Point` feature.
fn point_feature(s: &State) -> Value {
    let number = |x: f64, decimals: usize| json!(fixed(x, decimals).parse::<f64>().unwrap_or(x));
    json!({
        "type": "Feature",
        "geometry": {"type": "Point", "coordinates": [number(s.lon, 9), number(s.lat, 9), number(s.height, 3)]},
        "properties": {
            "time": iso_time(s.time_ms.round() as i64),
            "quality": s.quality,
            "roll": number(s.attitude[0], 3),
            "pitch": number(s.attitude[1], 3),
            "heading": number(s.attitude[2], 3),
            "velocityNorth": number(s.velocity[0], 3),
            "velocityEast": number(s.velocity[1], 3),
            "velocityUp": number(s.velocity[2], 3),
            "stdNorth": number(s.position_std[0], 3),
            "stdEast": number(s.position_std[1], 3),
            "stdUp": number(s.position_std[2], 3),
        },
    })
}

/// The figures of the `Minimal JSON` report (keys in this order): `startTime`,
/// `endTime`, `durationSeconds`, `epochs` (fixes), `distanceMeters`, `qualityShares`
/// (the share of the epochs of each quality, `"1"` to `"6"`, those present),
/// `meanStd` (`north`, `east`, `up`, metres), `motionProfile`, `leverArm` (the one
/// applied, metres), `warnings`; when the configuration asks for it,
/// `estimatedLeverArm`: `{leverArm, std, epochs}` from `lever_arm` (x, y, z and their
/// spread in metres; the instants it rests on), or `null` when the inputs give none.
pub(crate) fn minimal_report(
    fixes: &[Fix],
    solution: &Solution<'_>,
    settings: &Settings,
    lever_arm: &LeverArmEstimate,
    profile_name: &str,
    warnings: usize,
) -> Value {
    let n = solution.len();
    let mut shares = serde_json::Map::new();
    let mut counts = [0_usize; 7];
    let mut std_sum = [0.0; 3];
    for i in 0..n {
        let s = solution.at(i);
        counts[usize::from(s.quality.min(6))] += 1;
        for (sum, std) in std_sum.iter_mut().zip(s.position_std) {
            *sum += std;
        }
    }
    for (quality, count) in counts.iter().enumerate().skip(1) {
        if *count > 0 {
            let share = *count as f64 / n.max(1) as f64;
            shares.insert(
                quality.to_string(),
                json!(fixed(share, 4).parse::<f64>().unwrap_or(share)),
            );
        }
    }
    let number = |x: f64, decimals: usize| json!(fixed(x, decimals).parse::<f64>().unwrap_or(x));
    let (start, end) = (
        fixes.first().map_or(0, |f| f.time_ms),
        fixes.last().map_or(0, |f| f.time_ms),
    );
    let distance: f64 = fixes.windows(2).map(|w| great_circle(&w[0], &w[1])).sum();
    let mean = |k: usize| number(std_sum[k] / n.max(1) as f64, 3);
    let mut report = json!({
        "startTime": iso_time(start),
        "endTime": iso_time(end),
        "durationSeconds": number((end - start) as f64 / 1000.0, 3),
        "epochs": n,
        "distanceMeters": number(distance, 3),
        "qualityShares": shares,
        "meanStd": {"north": mean(0), "east": mean(1), "up": mean(2)},
        "motionProfile": profile_name,
        "leverArm": settings.lever_arm,
        "warnings": warnings,
    });
    if let (true, Some(map)) = (settings.estimate_lever_arm, report.as_object_mut()) {
        let estimate = lever_arm.result().map(|(arm, std)| {
            json!({
                "leverArm": arm.map(|v| number(v, 3)),
                "std": std.map(|v| number(v, 3)),
                "epochs": lever_arm.epochs,
            })
        });
        map.insert(
            "estimatedLeverArm".to_owned(),
            estimate.unwrap_or(Value::Null),
        );
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_name_a_format_and_a_rate() {
        assert_eq!(profile("SBET: 200Hz").unwrap(), (Format::Sbet, 200.0));
        assert_eq!(
            profile("ASCII: INS at 10Hz").unwrap(),
            (Format::Ascii, 10.0)
        );
        assert_eq!(profile("kml").unwrap(), (Format::Kml, 1.0));
        assert_eq!(profile("GeoJSON: 0.5Hz").unwrap(), (Format::GeoJson, 0.5));
        assert!(
            profile("LAS: 10Hz")
                .unwrap_err()
                .contains("unknown export profile `LAS: 10Hz`")
        );
        assert!(
            profile("SBET: 5000Hz")
                .unwrap_err()
                .contains("0.01 to 1000 Hz")
        );
    }

    #[test]
    fn paths_come_from_the_folder_and_the_name() {
        assert_eq!(
            path_of(Some("export"), Some("Export SBET"), "export1", "sbet").unwrap(),
            "export/export_sbet.sbet"
        );
        assert_eq!(
            path_of(None, None, "report2", "json").unwrap(),
            "report2.json"
        );
        assert_eq!(
            path_of(Some("reports/json/"), Some("JSON report!"), "r", "json").unwrap(),
            "reports/json/json_report.json"
        );
        assert!(path_of(Some("../up"), Some("x"), "r", "json").is_err());
    }

    #[test]
    fn gps_time_is_utc_plus_the_leap_seconds_from_the_gps_epoch() {
        // 2020-01-05T00:00:00Z (a Sunday) is 14,609 days = 2087 weeks after the GPS
        // epoch; GPS time is 18 s ahead.
        let utc_ms = 1_578_182_400_000.0;
        let (week, seconds) = gps_time(utc_ms);
        assert_eq!(week, 2087);
        assert!((seconds - 18.0).abs() < 1e-6, "{seconds}");
    }
}
