//! Processing outputs: a GNSS trajectory computed from the NMEA 0183 data of a container.
//!
//! [`process`] reads every input file of a processing line by line, streamed through a
//! `BufReader` with lines capped at [`MAX_LINE_BYTES`] (so a multi-hundred-MiB IMU log or a
//! binary file costs constant memory), extracts the GGA and RMC sentences of any talker
//! (`$GPGGA`, `$GNGGA`, `$GNRMC`, ...), merges them into one fix per epoch and writes, in order:
//!
//! 1. `trajectory.csv`: header
//!    `time,latitude,longitude,height,velocity_north,velocity_east,velocity_up`, then one line
//!    per fix with `\n` line ends; time is ISO 8601 UTC with milliseconds
//!    (`2026-01-02T03:04:05.000Z`), latitude/longitude in degrees with 9 decimals, the
//!    ellipsoidal height in metres and the velocities in m/s with 3 decimals.
//! 2. `trajectory.geojson`: a `FeatureCollection` with one `Feature` whose geometry is a
//!    `LineString` of `[longitude, latitude, height]` (a `Point` for a single fix) and whose
//!    properties are `startTime`, `endTime` and `fixCount`.
//! 3. `report.json`: statistics, see [`report_json`].
//!
//! # Input rules
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
//! `processing_json` may hold `{"outputs": {"csv": false, "geojson": false}}` to leave
//! `trajectory.csv` and/or `trajectory.geojson` out. `report.json` is always written; any other
//! key or value is ignored.
//!
//! # Determinism
//! The outputs depend only on the input bytes and their order: no clock, no randomness, a fixed
//! key order and fixed decimal formatting (`-0.000` is written `0.000`).

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{self, BufRead, BufReader};
use std::path::PathBuf;

use serde_json::{Map, Value, json};

/// Warnings about bad lines reported per file before they are only counted.
pub const MAX_WARNINGS_PER_FILE: usize = 100;
/// Longest line kept in memory; NMEA sentences are at most 82 bytes, longer lines are bad.
pub const MAX_LINE_BYTES: usize = 4096;

const DAY_MS: i64 = 86_400_000;
/// 2000-01-01 in days since 1970-01-01: the date assumed when no RMC gives one.
const DEFAULT_DAY: i64 = 10_957;
const KNOT_MS: f64 = 1852.0 / 3600.0;
const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;
/// Mean Earth radius (IUGG) for great-circle distances.
const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// One input file of the container: its container path and where its bytes lie.
#[derive(Clone, Debug)]
pub struct InputFile {
    pub path: String,
    pub location: PathBuf,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutputFile {
    pub path: String,
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Summary {
    /// Seconds between the first and the last usable fix.
    pub mission_length_s: i64,
    pub country: Option<String>,
    pub region: Option<String>,
    pub place: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub outputs: Vec<OutputFile>,
    pub warnings: Vec<String>,
    pub summary: Summary,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    pub error: String,
    pub warnings: Vec<String>,
}

/// A valid GGA: position, ellipsoidal height and fix quality (1..=9).
#[derive(Clone, Copy, Debug)]
struct Gga {
    lat: f64,
    lon: f64,
    height: f64,
    quality: u8,
}

/// A valid RMC with status `A`: position, date (days since 1970-01-01) and north/east velocity.
#[derive(Clone, Copy, Debug)]
struct Rmc {
    lat: f64,
    lon: f64,
    day: i64,
    velocity: Option<[f64; 2]>,
}

#[derive(Clone, Copy, Debug)]
enum Sentence {
    Gga(Gga),
    Rmc(Rmc),
}

/// A usable sentence with its UTC time of day in milliseconds.
#[derive(Clone, Copy, Debug)]
struct Record {
    tod_ms: i64,
    sentence: Sentence,
}

/// What one input file yielded.
#[derive(Debug)]
struct FileScan {
    path: String,
    sentences: u64,
    skipped: u64,
    records: Vec<Record>,
    notes: Vec<String>,
    valid_fixes: usize,
}

#[derive(Default)]
struct Epoch {
    gga: Option<Gga>,
    rmc: Option<Rmc>,
}

/// One trajectory point; `velocity` is north, east, up in m/s.
#[derive(Debug)]
struct Fix {
    time_ms: i64,
    lat: f64,
    lon: f64,
    height: f64,
    quality: Option<u8>,
    rmc_velocity: Option<[f64; 2]>,
    velocity: [f64; 3],
}

/// Computes the processing outputs from the container files (see the module documentation).
pub fn process(
    inputs: &[InputFile],
    processing_json: &Map<String, Value>,
) -> Result<Outcome, Failure> {
    let mut warnings = Vec::new();
    let mut scans: Vec<FileScan> = inputs
        .iter()
        .map(|input| scan_file(input, &mut warnings))
        .collect();
    let has_records = scans.iter().any(|s| !s.records.is_empty());
    let first_rmc_day = scans
        .iter()
        .flat_map(|s| &s.records)
        .find_map(|r| match r.sentence {
            Sentence::Rmc(rmc) => Some(rmc.day),
            Sentence::Gga(_) => None,
        });
    let fallback_day = first_rmc_day.unwrap_or_else(|| {
        if has_records {
            warnings.push("no RMC date; times assume 2000-01-01".to_string());
        }
        DEFAULT_DAY
    });
    let epochs = merge(&mut scans, fallback_day);
    let fixes = build_fixes(&epochs);
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
    let summary = Summary {
        mission_length_s: (last.time_ms - first.time_ms) / 1000,
        country: None,
        region: None,
        place: None,
    };

    let wanted = |name: &str| {
        let flag = processing_json
            .get("outputs")
            .and_then(|o| o.get(name))
            .and_then(Value::as_bool);
        flag != Some(false)
    };
    let mut outputs = Vec::new();
    if wanted("csv") {
        outputs.push(OutputFile {
            path: "trajectory.csv".into(),
            bytes: trajectory_csv(&fixes),
        });
    }
    if wanted("geojson") {
        outputs.push(OutputFile {
            path: "trajectory.geojson".into(),
            bytes: trajectory_geojson(&fixes),
        });
    }
    let report = report_json(&scans, &fixes, &summary, warnings.len());
    outputs.push(OutputFile {
        path: "report.json".into(),
        bytes: report,
    });
    Ok(Outcome {
        outputs,
        warnings,
        summary,
    })
}

/// Reads one file line by line, collecting its usable sentences; warnings go to `warnings`.
fn scan_file(input: &InputFile, warnings: &mut Vec<String>) -> FileScan {
    let mut scan = FileScan {
        path: input.path.clone(),
        sentences: 0,
        skipped: 0,
        records: Vec::new(),
        notes: Vec::new(),
        valid_fixes: 0,
    };
    let file = match File::open(&input.location) {
        Ok(file) => file,
        Err(e) => {
            warnings.push(format!("cannot open {}: {e}; file skipped", input.path));
            scan.notes.push(format!("cannot be opened: {e}"));
            return scan;
        }
    };
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut line = Vec::new();
    let (mut line_no, mut reported, mut unreported) = (0u64, 0usize, 0u64);
    loop {
        match read_line_capped(&mut reader, &mut line) {
            Ok(true) => line_no += 1,
            Ok(false) => break,
            Err(e) => {
                warnings.push(format!(
                    "read error in {} after line {line_no}: {e}",
                    input.path
                ));
                break;
            }
        }
        let text = line.trim_ascii();
        if text.first() != Some(&b'$') {
            continue;
        }
        scan.sentences += 1;
        let parsed = if line.len() > MAX_LINE_BYTES {
            Err(format!("line longer than {MAX_LINE_BYTES} bytes"))
        } else {
            match std::str::from_utf8(text) {
                Ok(sentence) => parse_sentence(sentence),
                Err(_) => Err("not valid UTF-8".to_string()),
            }
        };
        match parsed {
            Ok(Some(record)) => scan.records.push(record),
            Ok(None) => {}
            Err(reason) => {
                scan.skipped += 1;
                if reported < MAX_WARNINGS_PER_FILE {
                    reported += 1;
                    warnings.push(format!(
                        "{}:{line_no}: {reason}; sentence skipped",
                        input.path
                    ));
                } else {
                    unreported += 1;
                }
            }
        }
    }
    if unreported > 0 {
        warnings.push(format!(
            "{unreported} more bad lines skipped in {}",
            input.path
        ));
    }
    if scan.sentences == 0 {
        scan.notes.push(format!(
            "no GNSS sentences in {} ({})",
            input.path,
            plural(line_no, "line")
        ));
    }
    scan
}

/// Reads the next line without its `\n` into `buf`, keeping at most `MAX_LINE_BYTES + 1` bytes
/// (more means "too long") and discarding the rest. Returns `Ok(false)` at the end of input.
fn read_line_capped(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<bool> {
    buf.clear();
    let mut read_any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(read_any);
        }
        read_any = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let end = newline.unwrap_or(chunk.len());
        let room = (MAX_LINE_BYTES + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..end.min(room)]);
        reader.consume(newline.map_or(end, |n| n + 1));
        if newline.is_some() {
            return Ok(true);
        }
    }
}

/// Parses one `$...` line: `Ok(Some)` for a usable GGA/RMC, `Ok(None)` for another valid
/// sentence type, `Err(reason)` for a sentence to skip with a warning.
fn parse_sentence(line: &str) -> Result<Option<Record>, String> {
    let body = line.strip_prefix('$').unwrap_or(line);
    let data = match body.split_once('*') {
        None => body,
        Some((data, given)) => {
            let given = given.trim();
            let expected = match given.as_bytes() {
                [a, b] if a.is_ascii_hexdigit() && b.is_ascii_hexdigit() => {
                    u8::from_str_radix(given, 16).ok()
                }
                _ => None,
            };
            let Some(expected) = expected else {
                return Err(format!("malformed checksum {given:?}"));
            };
            let computed = data.bytes().fold(0u8, |acc, b| acc ^ b);
            if computed != expected {
                return Err(format!(
                    "checksum mismatch (computed {computed:02X}, sentence has {given})"
                ));
            }
            data
        }
    };
    let fields: Vec<&str> = data.split(',').collect();
    let address = fields.first().copied().unwrap_or("");
    let kind = if address.len() == 5 && address.is_ascii() {
        &address[2..]
    } else {
        ""
    };
    let sentence = match kind {
        "GGA" => Sentence::Gga(parse_gga(&fields)?),
        "RMC" => Sentence::Rmc(parse_rmc(&fields)?),
        _ => return Ok(None),
    };
    let tod_ms =
        parse_time(field(&fields, 1)).ok_or_else(|| invalid(kind, "time", field(&fields, 1)))?;
    Ok(Some(Record { tod_ms, sentence }))
}

/// GGA: 1 time, 2-3 latitude, 4-5 longitude, 6 quality, 7 satellites, 8 HDOP, 9 altitude,
/// 11 geoid separation.
fn parse_gga(f: &[&str]) -> Result<Gga, String> {
    let quality = field(f, 6);
    let quality = match quality.parse::<u8>() {
        Ok(0) => return Err("GGA without fix (quality 0)".to_string()),
        Ok(q) if q <= 9 && quality.len() == 1 => q,
        _ => return Err(invalid("GGA", "fix quality", quality)),
    };
    let (lat, lon) = parse_position("GGA", f, 2)?;
    let sats = field(f, 7);
    if !sats.is_empty() && unsigned(sats).is_none() {
        return Err(invalid("GGA", "satellite count", sats));
    }
    let hdop = field(f, 8);
    if !hdop.is_empty() && unsigned(hdop).is_none() {
        return Err(invalid("GGA", "HDOP", hdop));
    }
    let altitude = signed(field(f, 9)).ok_or_else(|| invalid("GGA", "altitude", field(f, 9)))?;
    let separation = match field(f, 11) {
        "" => 0.0,
        s => signed(s).ok_or_else(|| invalid("GGA", "geoid separation", s))?,
    };
    Ok(Gga {
        lat,
        lon,
        height: altitude + separation,
        quality,
    })
}

/// RMC: 1 time, 2 status, 3-4 latitude, 5-6 longitude, 7 speed (knots), 8 course, 9 date.
fn parse_rmc(f: &[&str]) -> Result<Rmc, String> {
    match field(f, 2) {
        "A" => {}
        "V" => return Err("RMC without fix (status V)".to_string()),
        s => return Err(invalid("RMC", "status", s)),
    }
    let (lat, lon) = parse_position("RMC", f, 3)?;
    let speed = match field(f, 7) {
        "" => None,
        s => Some(unsigned(s).ok_or_else(|| invalid("RMC", "speed", s))? * KNOT_MS),
    };
    let course = match field(f, 8) {
        "" => None,
        s => Some(
            unsigned(s)
                .filter(|c| *c <= 360.0)
                .ok_or_else(|| invalid("RMC", "course", s))?,
        ),
    };
    let day = parse_date(field(f, 9)).ok_or_else(|| invalid("RMC", "date", field(f, 9)))?;
    let velocity = match (speed, course) {
        (Some(v), Some(c)) => Some([v * c.to_radians().cos(), v * c.to_radians().sin()]),
        (Some(0.0), None) => Some([0.0, 0.0]),
        _ => None,
    };
    Ok(Rmc {
        lat,
        lon,
        day,
        velocity,
    })
}

fn field<'a>(fields: &[&'a str], index: usize) -> &'a str {
    fields.get(index).copied().unwrap_or("")
}

fn invalid(kind: &str, name: &str, value: &str) -> String {
    if value.is_empty() {
        format!("{kind} with missing {name}")
    } else {
        format!("{kind} with invalid {name} {value:?}")
    }
}

/// Latitude (`ddmm.mmmm`, `N`/`S`) at `f[at..at + 2]`, longitude (`dddmm.mmmm`, `E`/`W`) after.
fn parse_position(kind: &str, f: &[&str], at: usize) -> Result<(f64, f64), String> {
    let angle = |i: usize, name: &str, max: f64, hemispheres: [&str; 2]| {
        parse_angle(field(f, i), field(f, i + 1), max, hemispheres).ok_or_else(|| {
            let text = format!("{},{}", field(f, i), field(f, i + 1));
            invalid(kind, name, if text == "," { "" } else { &text })
        })
    };
    let lat = angle(at, "latitude", 90.0, ["N", "S"])?;
    let lon = angle(at + 2, "longitude", 180.0, ["E", "W"])?;
    Ok((lat, lon))
}

/// `[d]ddmm.mmmm` with hemisphere `[positive, negative]` → signed degrees, at most `max`.
fn parse_angle(
    value: &str,
    hemisphere: &str,
    max: f64,
    [positive, negative]: [&str; 2],
) -> Option<f64> {
    // Split the text rather than the number so that the minutes keep their exact decimal value.
    let split = value.find('.').unwrap_or(value.len()).checked_sub(2)?;
    let degrees = match value.get(..split)? {
        "" => 0.0,
        text => unsigned(text)?,
    };
    let minutes = unsigned(value.get(split..)?)?;
    let angle = degrees + minutes / 60.0;
    if minutes >= 60.0 || angle > max {
        None
    } else if hemisphere == positive {
        Some(angle)
    } else if hemisphere == negative {
        Some(-angle)
    } else {
        None
    }
}

/// `hhmmss[.sss]` → milliseconds since midnight.
fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 6 || !b[..6].iter().all(u8::is_ascii_digit) || b.get(6).is_some_and(|c| *c != b'.')
    {
        return None;
    }
    let two = |i: usize| i64::from(b[i] - b'0') * 10 + i64::from(b[i + 1] - b'0');
    let (hours, minutes) = (two(0), two(2));
    let seconds = unsigned(s.get(4..)?)?;
    if hours >= 24 || minutes >= 60 || seconds >= 60.0 {
        return None;
    }
    Some((hours * 3600 + minutes * 60) * 1000 + (seconds * 1000.0).round() as i64)
}

/// `ddmmyy` → days since 1970-01-01 (years 80-99 are 19xx, 00-79 are 20xx).
fn parse_date(s: &str) -> Option<i64> {
    if s.len() != 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| s.get(range).and_then(|p| p.parse::<u32>().ok());
    let (day, month, yy) = (number(0..2)?, number(2..4)?, number(4..6)?);
    let year = if yy >= 80 { 1900 + yy } else { 2000 + yy };
    let date = chrono::NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    Some(i64::from(date.to_epoch_days()))
}

/// A plain decimal number `123.45` (no sign, exponent, `inf` or `nan`).
fn unsigned(s: &str) -> Option<f64> {
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    let dots = s.bytes().filter(|b| *b == b'.').count();
    if digits == 0 || dots > 1 || digits + dots != s.len() {
        return None;
    }
    s.parse().ok()
}

fn signed(s: &str) -> Option<f64> {
    match s.strip_prefix('-') {
        Some(rest) => unsigned(rest).map(|v| -v),
        None => unsigned(s),
    }
}

/// Dates every record (see the module documentation) and merges all files into epochs.
fn merge(scans: &mut [FileScan], fallback_day: i64) -> BTreeMap<i64, Epoch> {
    let mut epochs: BTreeMap<i64, Epoch> = BTreeMap::new();
    for scan in scans.iter_mut() {
        let records = std::mem::take(&mut scan.records);
        let first_rmc = records.iter().find_map(|r| match r.sentence {
            Sentence::Rmc(rmc) => Some(rmc.day * DAY_MS + r.tod_ms),
            Sentence::Gga(_) => None,
        });
        let first = records
            .first()
            .map_or(0, |r| fallback_day * DAY_MS + r.tod_ms);
        let mut reference = first_rmc.unwrap_or(first);
        let mut own = BTreeSet::new();
        for record in &records {
            let time = match record.sentence {
                Sentence::Rmc(rmc) => rmc.day * DAY_MS + record.tod_ms,
                Sentence::Gga(_) => nearest_time(reference, record.tod_ms),
            };
            reference = time;
            own.insert(time);
            let epoch = epochs.entry(time).or_default();
            match record.sentence {
                Sentence::Gga(gga) => {
                    epoch.gga.get_or_insert(gga);
                }
                Sentence::Rmc(rmc) => {
                    epoch.rmc.get_or_insert(rmc);
                }
            }
        }
        scan.valid_fixes = own.len();
    }
    epochs
}

/// The time with time of day `tod_ms` closest to `reference` (same day, the day before or after).
fn nearest_time(reference: i64, tod_ms: i64) -> i64 {
    let candidate = reference.div_euclid(DAY_MS) * DAY_MS + tod_ms;
    if candidate - reference > DAY_MS / 2 {
        candidate - DAY_MS
    } else if reference - candidate > DAY_MS / 2 {
        candidate + DAY_MS
    } else {
        candidate
    }
}

/// One fix per epoch with a position, in time order, with velocities.
fn build_fixes(epochs: &BTreeMap<i64, Epoch>) -> Vec<Fix> {
    let mut height = epochs
        .values()
        .find_map(|e| e.gga.map(|g| g.height))
        .unwrap_or(0.0);
    let mut fixes = Vec::with_capacity(epochs.len());
    for (&time_ms, epoch) in epochs {
        let (lat, lon, quality) = match (epoch.gga, epoch.rmc) {
            (Some(gga), _) => {
                height = gga.height;
                (gga.lat, gga.lon, Some(gga.quality))
            }
            (None, Some(rmc)) => (rmc.lat, rmc.lon, None),
            (None, None) => continue,
        };
        let rmc_velocity = epoch.rmc.and_then(|r| r.velocity);
        fixes.push(Fix {
            time_ms,
            lat,
            lon,
            height,
            quality,
            rmc_velocity,
            velocity: [0.0; 3],
        });
    }
    for i in 0..fixes.len() {
        let [north, east] = match (fixes[i].rmc_velocity, i) {
            (Some(v), _) => v,
            (None, 0) => fixes
                .get(1)
                .map_or([0.0, 0.0], |next| horizontal_velocity(&fixes[0], next)),
            (None, _) => horizontal_velocity(&fixes[i - 1], &fixes[i]),
        };
        let up = match i.checked_sub(1).and_then(|p| fixes.get(p)) {
            Some(prev) => (fixes[i].height - prev.height) / seconds_between(prev, &fixes[i]),
            None => 0.0,
        };
        fixes[i].velocity = [north, east, up];
    }
    fixes
}

fn seconds_between(a: &Fix, b: &Fix) -> f64 {
    (b.time_ms - a.time_ms) as f64 / 1000.0
}

/// North/east velocity from `a` to `b` on the local tangent plane at their mean latitude.
fn horizontal_velocity(a: &Fix, b: &Fix) -> [f64; 2] {
    let lat = ((a.lat + b.lat) / 2.0).to_radians();
    let w = (1.0 - WGS84_E2 * lat.sin().powi(2)).sqrt();
    let meridian = WGS84_A * (1.0 - WGS84_E2) / (w * w * w);
    let prime_vertical = WGS84_A / w;
    let h = (a.height + b.height) / 2.0;
    let mut dlon = b.lon - a.lon;
    if dlon > 180.0 {
        dlon -= 360.0;
    } else if dlon < -180.0 {
        dlon += 360.0;
    }
    let dt = seconds_between(a, b);
    let north = (b.lat - a.lat).to_radians() * (meridian + h);
    let east = dlon.to_radians() * (prime_vertical + h) * lat.cos();
    [north / dt, east / dt]
}

/// Horizontal great-circle (haversine) distance in metres.
fn great_circle(a: &Fix, b: &Fix) -> f64 {
    let (lat1, lat2) = (a.lat.to_radians(), b.lat.to_radians());
    let dlat = lat2 - lat1;
    let dlon = (b.lon - a.lon).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

/// `x` with `decimals` decimals, never `-0.000`.
fn fixed(x: f64, decimals: usize) -> String {
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

fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn trajectory_csv(fixes: &[Fix]) -> Vec<u8> {
    let mut csv = String::with_capacity(80 + fixes.len() * 96);
    csv.push_str("time,latitude,longitude,height,velocity_north,velocity_east,velocity_up\n");
    for f in fixes {
        let [north, east, up] = f.velocity;
        csv.push_str(&format!(
            "{},{},{},{},{},{},{}\n",
            iso_time(f.time_ms),
            fixed(f.lat, 9),
            fixed(f.lon, 9),
            fixed(f.height, 3),
            fixed(north, 3),
            fixed(east, 3),
            fixed(up, 3),
        ));
    }
    csv.into_bytes()
}

fn trajectory_geojson(fixes: &[Fix]) -> Vec<u8> {
    let position = |f: &Fix| json!([rounded(f.lon, 9), rounded(f.lat, 9), rounded(f.height, 3)]);
    let geometry = match fixes {
        [only] => json!({ "type": "Point", "coordinates": position(only) }),
        _ => {
            json!({ "type": "LineString", "coordinates": fixes.iter().map(position).collect::<Vec<_>>() })
        }
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
    // A `Value` (string keys, finite or null numbers) always serializes into a `Vec`.
    let mut bytes = serde_json::to_vec(&collection).expect("a JSON value serializes");
    bytes.push(b'\n');
    bytes
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
/// - `missionLocation`: `country`, `region`, `place` (unknown: null);
/// - `fixQuality`: fix count per GGA quality (`"1"`, `"4"`, ...), plus `rmcOnly` for fixes
///   without a GGA when there are some;
/// - `warnings`: the number of warnings.
fn report_json(scans: &[FileScan], fixes: &[Fix], summary: &Summary, warnings: usize) -> Vec<u8> {
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
                fix.quality
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// `$body*hh` with a correct checksum.
    fn nmea(body: &str) -> String {
        let checksum = body.bytes().fold(0u8, |acc, b| acc ^ b);
        format!("${body}*{checksum:02X}")
    }

    fn gga(time: &str, lat: &str, lon: &str, quality: u8, altitude: f64) -> String {
        nmea(&format!(
            "GPGGA,{time},{lat},{lon},{quality},12,0.8,{altitude:.3},M,47.500,M,,"
        ))
    }

    fn rmc(time: &str, lat: &str, lon: &str, knots: &str, course: &str, date: &str) -> String {
        nmea(&format!(
            "GNRMC,{time},A,{lat},{lon},{knots},{course},{date},,,A"
        ))
    }

    const LAT: &str = "4807.038000,N";
    const LON: &str = "01131.000000,E";

    fn write(dir: &Path, name: &str, content: &[u8]) -> InputFile {
        let location = dir.join(name.replace('/', "_"));
        std::fs::write(&location, content).unwrap();
        InputFile {
            path: name.to_string(),
            location,
        }
    }

    fn run_with(files: &[(&str, Vec<u8>)], options: Value) -> Result<Outcome, Failure> {
        let dir = tempfile::Builder::new()
            .prefix("outputs-test-")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        let inputs: Vec<InputFile> = files
            .iter()
            .map(|(name, content)| write(dir.path(), name, content))
            .collect();
        process(&inputs, options.as_object().unwrap())
    }

    fn run(files: &[(&str, Vec<u8>)]) -> Result<Outcome, Failure> {
        run_with(files, json!({}))
    }

    fn lines(sentences: &[String]) -> Vec<u8> {
        let mut text = sentences.join("\r\n");
        text.push_str("\r\n");
        text.into_bytes()
    }

    fn output<'a>(outcome: &'a Outcome, name: &str) -> &'a [u8] {
        &outcome
            .outputs
            .iter()
            .find(|o| o.path == name)
            .unwrap()
            .bytes
    }

    fn csv_rows(outcome: &Outcome) -> Vec<Vec<String>> {
        let text = std::str::from_utf8(output(outcome, "trajectory.csv")).unwrap();
        assert!(text.ends_with('\n') && !text.contains('\r'));
        let mut rows = text
            .lines()
            .map(|l| l.split(',').map(String::from).collect::<Vec<_>>());
        let header = rows.next().unwrap();
        assert_eq!(
            header.join(","),
            "time,latitude,longitude,height,velocity_north,velocity_east,velocity_up"
        );
        rows.collect()
    }

    fn number(row: &[String], column: usize) -> f64 {
        row[column].parse().unwrap()
    }

    fn report(outcome: &Outcome) -> Value {
        serde_json::from_slice(output(outcome, "report.json")).unwrap()
    }

    fn close(actual: f64, expected: f64, tolerance: f64) {
        assert!(
            (actual - expected).abs() <= tolerance,
            "{actual} is not {expected} ± {tolerance}"
        );
    }

    #[test]
    fn gga_and_rmc_make_csv_geojson_and_report() {
        let gnss = lines(&[
            nmea("GPGSV,1,1,01,10,45,120,40"),
            gga("120000.00", LAT, LON, 4, 500.0),
            rmc("120000.00", LAT, LON, "0.0", "", "020126"),
            gga("120001.00", "4807.048000,N", LON, 4, 501.0),
            rmc("120001.00", "4807.048000,N", LON, "20.0", "0.0", "020126"),
            gga("120002.50", "4807.058000,N", LON, 5, 500.0),
            rmc("120002.50", "4807.058000,N", LON, "20.0", "0.0", "020126"),
        ]);
        let outcome = run(&[("rover/gnss.nmea", gnss)]).unwrap();
        assert_eq!(outcome.warnings, Vec::<String>::new());
        let names: Vec<&str> = outcome.outputs.iter().map(|o| o.path.as_str()).collect();
        assert_eq!(
            names,
            ["trajectory.csv", "trajectory.geojson", "report.json"]
        );
        assert_eq!(
            outcome.summary,
            Summary {
                mission_length_s: 2,
                ..Summary::default()
            }
        );

        let rows = csv_rows(&outcome);
        assert_eq!(rows.len(), 3);
        assert_eq!(rows[0][0], "2026-01-02T12:00:00.000Z");
        assert_eq!(rows[2][0], "2026-01-02T12:00:02.500Z");
        assert_eq!(rows[0][1], "48.117300000");
        assert_eq!(rows[0][2], "11.516666667");
        assert_eq!(rows[0][3], "547.500");
        assert_eq!(rows[0][4..], ["0.000", "0.000", "0.000"]);
        close(number(&rows[1], 4), 20.0 * 1852.0 / 3600.0, 1e-3);
        assert_eq!(rows[2][6], "-0.667");

        let geojson: Value =
            serde_json::from_slice(output(&outcome, "trajectory.geojson")).unwrap();
        assert_eq!(geojson["type"], "FeatureCollection");
        let feature = &geojson["features"][0];
        assert_eq!(feature["type"], "Feature");
        assert_eq!(feature["geometry"]["type"], "LineString");
        assert_eq!(
            feature["geometry"]["coordinates"][0],
            json!([11.516666667, 48.1173, 547.5])
        );
        assert_eq!(
            feature["geometry"]["coordinates"].as_array().unwrap().len(),
            3
        );
        assert_eq!(
            feature["properties"],
            json!({"startTime": "2026-01-02T12:00:00.000Z", "endTime": "2026-01-02T12:00:02.500Z", "fixCount": 3})
        );

        let report = report(&outcome);
        assert_eq!(report["fixCount"], 3);
        assert_eq!(
            report["inputFiles"],
            json!([{"path": "rover/gnss.nmea", "sentences": 7, "validFixes": 3, "skippedLines": 0}])
        );
        assert_eq!(report["durationSeconds"], 2.5);
        assert_eq!(report["missionLengthSeconds"], 2);
        close(
            report["distanceMeters"].as_f64().unwrap(),
            0.02 * 1853.2,
            0.1,
        );
        assert_eq!(report["boundingBox"]["minLatitude"], 48.1173);
        assert_eq!(report["boundingBox"]["maxLatitude"], 48.117633333);
        assert_eq!(report["boundingBox"]["maxHeight"], 548.5);
        assert_eq!(
            report["missionLocation"],
            json!({"country": null, "region": null, "place": null})
        );
        assert_eq!(report["fixQuality"], json!({"4": 2, "5": 1}));
        assert_eq!(report["warnings"], 0);
        let keys: Vec<&String> = report.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "fixCount",
                "inputFiles",
                "startTime",
                "endTime",
                "durationSeconds",
                "missionLengthSeconds",
                "distanceMeters",
                "boundingBox",
                "missionLocation",
                "fixQuality",
                "warnings"
            ]
        );
    }

    #[test]
    fn bad_checksum_and_no_fix_are_skipped_with_warnings() {
        let mut corrupted = gga("120001", LAT, LON, 1, 500.0);
        corrupted.replace_range(20..21, "9"); // change one digit, keep the old checksum
        let gnss = lines(&[
            rmc("120000", LAT, LON, "0", "0", "020126"),
            gga("120000", LAT, LON, 1, 500.0),
            corrupted,
            nmea("GPGGA,120002,,,,,0,00,99.9,,M,,M,,"),
            nmea("GPGGA,120003,4807.038,N,01131.000,E,1,08,1.0,,M,,M,,"),
            "$GPGGA,120004,4807.038,N,01131.000,E,1,08,1.0,500.0,M,47.5,M,,*ZZ".to_string(),
            nmea("GNRMC,120005,V,,,,,,,020126,,,N"),
            gga("120006", LAT, LON, 1, 500.0),
        ]);
        let mut bytes = gnss;
        bytes.extend_from_slice(b"$GPGGA,\xff\xfe*00\n");
        let outcome = run(&[("gnss.nmea", bytes)]).unwrap();
        let w = &outcome.warnings;
        assert_eq!(w.len(), 6, "{w:?}");
        assert!(
            w[0].starts_with("gnss.nmea:3: checksum mismatch"),
            "{}",
            w[0]
        );
        assert!(
            w[1].starts_with("gnss.nmea:4: GGA without fix (quality 0)"),
            "{}",
            w[1]
        );
        assert!(
            w[2].starts_with("gnss.nmea:5: GGA with missing altitude"),
            "{}",
            w[2]
        );
        assert!(
            w[3].starts_with("gnss.nmea:6: malformed checksum"),
            "{}",
            w[3]
        );
        assert!(
            w[4].starts_with("gnss.nmea:7: RMC without fix (status V)"),
            "{}",
            w[4]
        );
        assert!(w[5].starts_with("gnss.nmea:9: not valid UTF-8"), "{}", w[5]);
        let rows = csv_rows(&outcome);
        let times: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
        assert_eq!(
            times,
            ["2026-01-02T12:00:00.000Z", "2026-01-02T12:00:06.000Z"]
        );
        let report = report(&outcome);
        assert_eq!(report["inputFiles"][0]["skippedLines"], 6);
        assert_eq!(report["inputFiles"][0]["sentences"], 9);
        assert_eq!(report["warnings"], 6);
    }

    #[test]
    fn midnight_rollover_with_and_without_rmc() {
        let gga_only_after_midnight = lines(&[
            rmc("235959", LAT, LON, "0", "0", "311225"),
            gga("235959", LAT, LON, 1, 500.0),
            gga("000000", LAT, LON, 1, 500.0),
            gga("000001", LAT, LON, 1, 500.0),
        ]);
        // The GGA of 23:59:59.5 comes before the first RMC, which is already on the next day.
        let gga_before_rmc = lines(&[
            gga("235959.5", LAT, LON, 1, 500.0),
            rmc("000000.5", LAT, LON, "0", "0", "010126"),
        ]);
        let outcome = run(&[
            ("a.nmea", gga_only_after_midnight),
            ("b.nmea", gga_before_rmc),
        ])
        .unwrap();
        let times: Vec<String> = csv_rows(&outcome)
            .into_iter()
            .map(|r| r[0].clone())
            .collect();
        assert_eq!(
            times,
            [
                "2025-12-31T23:59:59.000Z",
                "2025-12-31T23:59:59.500Z",
                "2026-01-01T00:00:00.000Z",
                "2026-01-01T00:00:00.500Z",
                "2026-01-01T00:00:01.000Z"
            ]
        );
        assert_eq!(outcome.summary.mission_length_s, 2);
        assert!(outcome.warnings.is_empty());
    }

    #[test]
    fn rmc_only_input_gives_fixes_at_zero_height() {
        let gnss = lines(&[
            rmc(
                "080000",
                "3351.000,S",
                "15112.000,E",
                "10.0",
                "90.0",
                "150625",
            ),
            rmc(
                "080001",
                "3351.000,S",
                "15112.003,E",
                "10.0",
                "90.0",
                "150625",
            ),
        ]);
        let outcome = run(&[("rmc.nmea", gnss)]).unwrap();
        let rows = csv_rows(&outcome);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            rows[0][..4],
            [
                "2025-06-15T08:00:00.000Z",
                "-33.850000000",
                "151.200000000",
                "0.000"
            ]
        );
        close(number(&rows[0], 4), 0.0, 1e-3);
        close(number(&rows[0], 5), 5.144, 1e-3);
        assert_eq!(report(&outcome)["fixQuality"], json!({"rmcOnly": 2}));
    }

    #[test]
    fn velocity_from_rmc_or_finite_differences() {
        // 0.01 minute of latitude and longitude per second at about 48.1° N, climbing 2 m/s.
        let moving = |prefix: &str| {
            (0..3)
                .map(|i| {
                    let lat = format!("{:.6},N", 4807.0 + 0.01 * f64::from(i));
                    let lon = format!("{:011.6},E", 1131.0 + 0.01 * f64::from(i));
                    gga(
                        &format!("{prefix}{i}"),
                        &lat,
                        &lon,
                        2,
                        500.0 + 2.0 * f64::from(i),
                    )
                })
                .collect::<Vec<_>>()
        };
        let mut sentences = moving("10000");
        sentences.push(rmc(
            "100001",
            "4807.010,N",
            "01131.010,E",
            "10.0",
            "45.0",
            "010326",
        ));
        let outcome = run(&[("gnss.nmea", lines(&sentences))]).unwrap();
        let rows = csv_rows(&outcome);
        let lat = (48.0 + 7.01 / 60.0_f64).to_radians();
        let north = (0.01 / 60.0_f64).to_radians() * 6_373_700.0;
        let east = (0.01 / 60.0_f64).to_radians() * 6_390_300.0 * lat.cos();
        for (i, row) in rows.iter().enumerate() {
            if i == 1 {
                let v = 10.0 * 1852.0 / 3600.0 * 45.0_f64.to_radians().cos();
                close(number(row, 4), v, 1e-3);
                close(number(row, 5), v, 1e-3);
            } else {
                close(number(row, 4), north, 0.01);
                close(number(row, 5), east, 0.01);
            }
            close(number(row, 6), if i == 0 { 0.0 } else { 2.0 }, 1e-3);
        }
    }

    #[test]
    fn non_nmea_files_get_a_note_not_warnings() {
        let mut imu = b"time,ax,ay,az,gx,gy,gz\n".to_vec();
        for i in 0..1000 {
            imu.extend_from_slice(
                format!("{i}.000,0.01,-0.02,9.81,0.001,0.002,0.003\n").as_bytes(),
            );
        }
        imu.extend_from_slice(b"\x00\xff\xfe binary \x80\n");
        imu.extend_from_slice(&vec![b'x'; 3 * MAX_LINE_BYTES]);
        let gnss = lines(&[gga("120000", LAT, LON, 1, 500.0)]);
        let outcome = run(&[("imu/imu.csv", imu), ("gnss.nmea", gnss)]).unwrap();
        assert_eq!(outcome.warnings, ["no RMC date; times assume 2000-01-01"]);
        let report = report(&outcome);
        assert_eq!(
            report["inputFiles"][0],
            json!({"path": "imu/imu.csv", "sentences": 0, "validFixes": 0, "skippedLines": 0, "notes": ["no GNSS sentences in imu/imu.csv (1003 lines)"]})
        );
        let geojson: Value =
            serde_json::from_slice(output(&outcome, "trajectory.geojson")).unwrap();
        assert_eq!(
            geojson["features"][0]["geometry"],
            json!({"type": "Point", "coordinates": [11.516666667, 48.1173, 547.5]})
        );
        assert_eq!(csv_rows(&outcome)[0][0], "2000-01-01T12:00:00.000Z");
    }

    #[test]
    fn no_usable_input_is_a_failure() {
        let dir = tempfile::Builder::new()
            .prefix("outputs-test-")
            .tempdir_in(std::env::temp_dir())
            .unwrap();
        let inputs = [
            write(dir.path(), "imu.csv", b"1,2,3\n"),
            write(
                dir.path(),
                "bad.nmea",
                lines(&[nmea("GPGGA,120000,,,,,0,00,,,M,,M,,")]).as_slice(),
            ),
            InputFile {
                path: "missing.nmea".into(),
                location: dir.path().join("missing"),
            },
        ];
        let failure = process(&inputs, &Map::new()).unwrap_err();
        assert_eq!(
            failure.error,
            "no usable GNSS input: 3 files, 1 NMEA sentence (1 skipped), 0 valid GGA/RMC sentences"
        );
        assert_eq!(failure.warnings.len(), 2);
        assert!(failure.warnings[0].starts_with("bad.nmea:1: GGA without fix"));
        assert!(failure.warnings[1].starts_with("cannot open missing.nmea"));
        assert_eq!(
            process(&[], &Map::new()).unwrap_err().error,
            "no usable GNSS input: 0 files, 0 NMEA sentences (0 skipped), 0 valid GGA/RMC sentences"
        );
    }

    #[test]
    fn files_are_merged_sorted_and_deduplicated() {
        let late = lines(&[
            rmc("100002", LAT, LON, "0", "0", "010326"),
            gga("100002", LAT, LON, 1, 502.0),
        ]);
        let early = lines(&[
            gga("100001", LAT, LON, 1, 501.0),
            gga("100000", LAT, LON, 1, 500.0),
            gga("100001", LAT, LON, 1, 999.0),
            rmc("100001", LAT, LON, "0", "0", "010326"),
        ]);
        let outcome = run(&[("late.nmea", late), ("early.nmea", early)]).unwrap();
        let rows = csv_rows(&outcome);
        let got: Vec<(&str, &str)> = rows
            .iter()
            .map(|r| (&r[0][11..19], r[3].as_str()))
            .collect();
        assert_eq!(
            got,
            [
                ("10:00:00", "547.500"),
                ("10:00:01", "548.500"),
                ("10:00:02", "549.500")
            ]
        );
        assert_eq!(report(&outcome)["inputFiles"][1]["validFixes"], 2);
    }

    #[test]
    fn outputs_are_deterministic() {
        let gnss = lines(&[
            rmc("120000", LAT, LON, "3.3", "123.4", "020126"),
            gga("120000", LAT, LON, 1, 500.0),
            gga("120001", "4807.040,N", "01131.001,E", 1, 500.3),
            "$GPGGA,garbage*00".to_string(),
        ]);
        let a = run(&[("gnss.nmea", gnss.clone()), ("imu.csv", b"1,2\n".to_vec())]).unwrap();
        let b = run(&[("gnss.nmea", gnss), ("imu.csv", b"1,2\n".to_vec())]).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn warnings_are_capped_per_file() {
        let mut sentences = vec![gga("120000", LAT, LON, 1, 500.0)];
        sentences.extend((0..250).map(|_| "$GPGGA,120001,bad*00".to_string()));
        let outcome = run(&[("rover/bad.nmea", lines(&sentences))]).unwrap();
        assert_eq!(outcome.warnings.len(), MAX_WARNINGS_PER_FILE + 2);
        assert_eq!(
            outcome.warnings[MAX_WARNINGS_PER_FILE],
            "150 more bad lines skipped in rover/bad.nmea"
        );
        assert_eq!(
            outcome.warnings[MAX_WARNINGS_PER_FILE + 1],
            "no RMC date; times assume 2000-01-01"
        );
        assert_eq!(report(&outcome)["inputFiles"][0]["skippedLines"], 250);
    }

    #[test]
    fn options_leave_outputs_out() {
        let gnss = || lines(&[gga("120000", LAT, LON, 1, 500.0)]);
        let names = |options: Value| {
            let outcome = run_with(&[("g.nmea", gnss())], options).unwrap();
            outcome
                .outputs
                .into_iter()
                .map(|o| o.path)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(json!({"outputs": {"geojson": false}})),
            ["trajectory.csv", "report.json"]
        );
        assert_eq!(
            names(json!({"outputs": {"csv": false, "geojson": true}})),
            ["trajectory.geojson", "report.json"]
        );
        assert_eq!(
            names(json!({"outputs": "none", "other": 1})),
            ["trajectory.csv", "trajectory.geojson", "report.json"]
        );
    }

    #[test]
    fn sample_file_in_tests_data() {
        let location = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sample.nmea");
        let inputs = [InputFile {
            path: "rover/sample.nmea".into(),
            location,
        }];
        let outcome = process(&inputs, &Map::new()).unwrap();
        assert!(outcome.warnings.is_empty(), "{:?}", outcome.warnings);
        assert_eq!(outcome.summary.mission_length_s, 9);
        let rows = csv_rows(&outcome);
        assert_eq!(rows.len(), 10);
        assert_eq!(
            rows[0][..4],
            [
                "2026-01-02T10:30:00.000Z",
                "48.117300000",
                "11.516666667",
                "559.812"
            ]
        );
        close(
            number(&rows[5], 4),
            14.2 * 1852.0 / 3600.0 * 42.5_f64.to_radians().cos(),
            1e-3,
        );
        close(number(&rows[5], 6), 0.1, 1e-3);
    }

    #[test]
    fn field_parsers() {
        assert_eq!(parse_time("235959.999"), Some(86_399_999));
        assert_eq!(parse_time("240000"), None);
        assert_eq!(parse_time("1200"), None);
        assert_eq!(parse_time("12005e"), None);
        assert_eq!(parse_time("12345.5"), None);
        assert_eq!(parse_time("123456."), Some(45_296_000));
        assert_eq!(parse_date("290224"), Some(19_782));
        assert_eq!(parse_date("300224"), None);
        assert_eq!(parse_date("010199"), Some(10_592));
        assert_eq!(
            parse_angle("4807.038", "N", 90.0, ["N", "S"]),
            Some(48.0 + 7.038 / 60.0)
        );
        assert_eq!(parse_angle("00030.000", "W", 180.0, ["E", "W"]), Some(-0.5));
        assert_eq!(parse_angle("30.000", "S", 90.0, ["N", "S"]), Some(-0.5));
        assert_eq!(parse_angle("4860.000", "N", 90.0, ["N", "S"]), None);
        assert_eq!(parse_angle("1e3", "N", 90.0, ["N", "S"]), None);
        assert_eq!(parse_angle("4807.038", "E", 90.0, ["N", "S"]), None);
        assert_eq!(signed("-12.5"), Some(-12.5));
        assert_eq!(unsigned("inf"), None);
        assert_eq!(fixed(-0.0001, 3), "0.000");
        assert_eq!(nearest_time(DAY_MS - 1000, 0), DAY_MS);
        assert_eq!(nearest_time(DAY_MS, DAY_MS - 1000), DAY_MS - 1000);
    }
}
