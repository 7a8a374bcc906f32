//! The emulator's processing outputs from NMEA 0183 files (svc-emulator
//! `src/engine/outputs/`): the line reader, the GGA/RMC parsers, the merge by epoch and
//! the writers, through `process` as the engine calls it.
//!
//! Input: `[flags, fix (16 bytes)] files...`, the files separated by NUL (at most 3).
//! - flags: bit 0 put first a file with one RMC and one GGA made from `fix` (time of
//!   day, date, latitude, longitude, altitude, quality); bit 1 leave `trajectory.csv`
//!   out, bit 2 `trajectory.geojson`.
//!
//! Properties checked:
//! 1. nothing panics, and the outcome depends only on the input bytes (twice the same);
//! 2. the outputs are the documented ones, in order; the CSV has its header and one
//!    line of 7 finite numbers per fix, times strictly increasing, latitudes and
//!    longitudes in range; the GeoJSON and the report are JSON, the GeoJSON counts the
//!    CSV's fixes; the mission length is the CSV's first to last time;
//! 3. warnings are bounded (the per-file cap);
//! 4. a valid GGA and RMC always give a trajectory, with that fix at that time and
//!    position (the first file's fix wins its epoch).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use chrono::{DateTime, NaiveDate, Utc};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use svc_emulator::fuzzing::{InputFile, MAX_WARNINGS_PER_FILE, Outcome, process};

const CSV_HEADER: &str = "time,latitude,longitude,height,velocity_north,velocity_east,\
velocity_up,roll,pitch,heading,std_north,std_east,std_up,std_velocity_north,std_velocity_east,\
std_velocity_up,std_roll,std_pitch,std_heading,quality";

fn folder() -> &'static PathBuf {
    static FOLDER: OnceLock<PathBuf> = OnceLock::new();
    FOLDER.get_or_init(|| svc_fuzz::scratch_dir("nmea"))
}

/// The fix the generated sentences carry, and what the CSV must show for it.
struct Fix {
    sentences: String,
    time: String,
    lat: f64,
    lon: f64,
}

fuzz_target!(|data: &[u8]| {
    let [flags, rest @ ..] = data else {
        return;
    };
    let Some((fix_bytes, files)) = rest.split_at_checked(16) else {
        return;
    };
    let fix = (flags & 1 != 0).then(|| make_fix(fix_bytes));
    let mut contents: Vec<Vec<u8>> = Vec::new();
    if let Some(fix) = &fix {
        contents.push(fix.sentences.clone().into_bytes());
    }
    contents.extend(files.split(|&b| b == 0).take(3).map(<[u8]>::to_vec));
    let mut inputs = Vec::new();
    for (index, bytes) in contents.iter().enumerate() {
        let location = folder().join(format!("{index}.nmea"));
        std::fs::write(&location, bytes).expect("writing an input file");
        inputs.push(InputFile {
            path: format!("rover/{index}.nmea"),
            location,
        });
    }
    let mut options = Map::new();
    let csv_wanted = flags & 2 == 0;
    let geojson_wanted = flags & 4 == 0;
    options.insert(
        "outputs".to_owned(),
        serde_json::json!({"csv": csv_wanted, "geojson": geojson_wanted}),
    );

    let result = process(&inputs, &options);
    assert_eq!(
        process(&inputs, &options),
        result,
        "the outcome is not deterministic"
    );
    let warnings = match &result {
        Ok(outcome) => &outcome.warnings,
        Err(failure) => &failure.warnings,
    };
    assert!(
        warnings.len() <= inputs.len() * (MAX_WARNINGS_PER_FILE + 2) + 1,
        "{} warnings for {} files",
        warnings.len(),
        inputs.len()
    );
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(failure) => {
            assert!(
                fix.is_none(),
                "a valid GGA and RMC gave no trajectory: {}",
                failure.error
            );
            assert!(
                failure.error.starts_with("no usable GNSS input"),
                "{}",
                failure.error
            );
            return;
        }
    };
    check_outputs(&outcome, csv_wanted, geojson_wanted, fix.as_ref());
});

fn check_outputs(outcome: &Outcome, csv_wanted: bool, geojson_wanted: bool, fix: Option<&Fix>) {
    let names: Vec<&str> = outcome.outputs.iter().map(|o| o.path.as_str()).collect();
    let mut expected = Vec::new();
    if csv_wanted {
        expected.push("trajectory.csv");
    }
    if geojson_wanted {
        expected.push("trajectory.geojson");
    }
    expected.push("report.json");
    assert_eq!(names, expected);
    let file = |name: &str| {
        outcome
            .outputs
            .iter()
            .find(|o| o.path == name)
            .map(|o| o.bytes.as_slice())
    };
    let report: Value = serde_json::from_slice(file("report.json").expect("a report"))
        .expect("report.json is JSON");
    assert!(report.is_object());
    assert!(outcome.summary.mission_length_s >= 0);

    let mut fixes = None;
    if let Some(csv) = file("trajectory.csv") {
        let text = std::str::from_utf8(csv).expect("the CSV is UTF-8");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some(CSV_HEADER));
        let mut times = Vec::new();
        let mut positions = Vec::new();
        for line in lines {
            let fields: Vec<&str> = line.split(',').collect();
            assert_eq!(fields.len(), 20, "{line}");
            let time: DateTime<Utc> = fields[0].parse().expect("an ISO 8601 time");
            let numbers: Vec<f64> = fields[1..]
                .iter()
                .map(|f| f.parse::<f64>().expect("a number"))
                .collect();
            assert!(
                numbers.iter().all(|n| n.is_finite()),
                "a number is not finite: {line}"
            );
            assert!(
                numbers[0].abs() <= 90.0 && numbers[1].abs() <= 180.0,
                "{line}"
            );
            if let Some(last) = times.last() {
                assert!(time > *last, "times do not increase: {line}");
            }
            times.push(time);
            positions.push((fields[0].to_owned(), numbers[0], numbers[1]));
        }
        assert!(!times.is_empty(), "a trajectory without a fix");
        let length = (times[times.len() - 1] - times[0]).num_milliseconds() / 1000;
        assert_eq!(outcome.summary.mission_length_s, length);
        if let Some(fix) = fix {
            let found = positions.iter().find(|(time, _, _)| *time == fix.time);
            let Some((_, lat, lon)) = found else {
                panic!("no fix at {} in the CSV:\n{text}", fix.time);
            };
            assert!(
                (lat - fix.lat).abs() <= 1e-9 && (lon - fix.lon).abs() <= 1e-9,
                "the fix at {} is at {lat},{lon}, not {},{}",
                fix.time,
                fix.lat,
                fix.lon
            );
        }
        fixes = Some(times.len());
    }
    if let Some(geojson) = file("trajectory.geojson") {
        let geojson: Value = serde_json::from_slice(geojson).expect("the GeoJSON is JSON");
        let count = geojson["features"][0]["properties"]["fixCount"]
            .as_u64()
            .expect("a fix count");
        assert!(count >= 1);
        if let Some(fixes) = fixes {
            assert_eq!(count, fixes as u64);
        }
        let coordinates = &geojson["features"][0]["geometry"]["coordinates"];
        assert!(
            !contains_null(coordinates),
            "a coordinate is not a number: {coordinates}"
        );
    }
}

fn contains_null(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Array(items) => items.iter().any(contains_null),
        _ => false,
    }
}

/// An RMC and a GGA of one epoch from 16 bytes, with correct checksums.
fn make_fix(b: &[u8]) -> Fix {
    let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    let ms_of_day = u32_at(0) % 86_400_000;
    let (hh, mm, ss, ms) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1000 % 60,
        ms_of_day % 1000,
    );
    // Latitude and longitude as whole millionths of a minute.
    let lat_units = u64::from(u32_at(4)) % (90 * 60_000_000 + 1);
    let lon_units = (u64::from(u32_at(8)) << 1 | u64::from(b[15] & 1)) % (180 * 60_000_000 + 1);
    let angle = |units: u64, width: usize| {
        let degrees = units / 60_000_000;
        let minutes = units % 60_000_000;
        let text = format!(
            "{degrees:0width$}{:02}.{:06}",
            minutes / 1_000_000,
            minutes % 1_000_000
        );
        // As the reader computes it: whole degrees plus the minutes' decimal text / 60.
        let minutes_text = &text[width..];
        let value = degrees as f64 + minutes_text.parse::<f64>().expect("digits") / 60.0;
        (text, value)
    };
    let (lat_text, lat) = angle(lat_units, 2);
    let (lon_text, lon) = angle(lon_units, 3);
    let (ns, lat) = if b[12] & 1 == 0 {
        ("N", lat)
    } else {
        ("S", -lat)
    };
    let (ew, lon) = if b[12] & 2 == 0 {
        ("E", lon)
    } else {
        ("W", -lon)
    };
    // A date from 1980 to 2079 (the two-digit years the reader takes).
    let day = u32::from(u16::from_le_bytes([b[13], b[14]])) % 36_525;
    let date = NaiveDate::from_ymd_opt(1980, 1, 1)
        .expect("a valid date")
        .checked_add_days(chrono::Days::new(u64::from(day)))
        .expect("in range");
    let quality = 1 + (b[12] >> 2) % 9;
    let altitude = f64::from(i16::from_le_bytes([b[13], b[15]])) / 10.0;
    let time = format!("{hh:02}{mm:02}{ss:02}.{ms:03}");
    let rmc = format!(
        "GPRMC,{time},A,{lat_text},{ns},{lon_text},{ew},0.0,,{},,",
        date.format("%d%m%y")
    );
    let gga = format!(
        "GPGGA,{time},{lat_text},{ns},{lon_text},{ew},{quality},08,0.9,{altitude:.1},M,0.0,M,,"
    );
    let sentence = |body: &str| {
        let checksum = body.bytes().fold(0u8, |acc, b| acc ^ b);
        format!("${body}*{checksum:02X}\r\n")
    };
    Fix {
        sentences: sentence(&rmc) + &sentence(&gga),
        time: format!(
            "{}T{hh:02}:{mm:02}:{ss:02}.{ms:03}Z",
            date.format("%Y-%m-%d")
        ),
        lat,
        lon,
    }
}
