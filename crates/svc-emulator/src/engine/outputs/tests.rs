//! The outputs computed from NMEA inputs: formats, rules for bad input, determinism.

use super::nmea::{parse_angle, parse_date, parse_time, signed, unsigned};
use super::trajectory::{DAY_MS, nearest_time};
use super::writers::fixed;
use super::*;
use serde_json::json;
use std::io::Write as _;
use std::path::Path;

/// `$body*hh` with a correct checksum.
fn nmea(body: &str) -> String {
    let checksum = body.bytes().fold(0u8, |acc, b| acc ^ b);
    format!("${body}*{checksum:02X}")
}

pub(super) fn gga(time: &str, lat: &str, lon: &str, quality: u8, altitude: f64) -> String {
    nmea(&format!(
        "GPGGA,{time},{lat},{lon},{quality},12,0.8,{altitude:.3},M,47.500,M,,"
    ))
}

pub(super) fn rmc(
    time: &str,
    lat: &str,
    lon: &str,
    knots: &str,
    course: &str,
    date: &str,
) -> String {
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

pub(super) fn run_with(files: &[(&str, Vec<u8>)], options: Value) -> Result<Outcome, Failure> {
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

pub(super) fn lines(sentences: &[String]) -> Vec<u8> {
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
    assert_eq!(header.join(","), writers::TRAJECTORY_HEADER);
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
            // 48.117° N 11.517° E: 5 km from the centre of Munich.
            country: Some("DE".into()),
            region: None,
            place: Some("Munich".into()),
        }
    );

    let rows = csv_rows(&outcome);
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0][0], "2026-01-02T12:00:00.000Z");
    assert_eq!(rows[2][0], "2026-01-02T12:00:02.500Z");
    assert_eq!(rows[0][1], "48.117300000");
    assert_eq!(rows[0][2], "11.516666667");
    assert_eq!(rows[0][3], "547.500");
    assert_eq!(rows[0][4..7], ["0.000", "0.000", "0.000"]);
    close(number(&rows[1], 4), 20.0 * 1852.0 / 3600.0, 1e-3);
    assert_eq!(rows[2][6], "-0.667");

    let geojson: Value = serde_json::from_slice(output(&outcome, "trajectory.geojson")).unwrap();
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
        json!({"country": "DE", "region": null, "place": "Munich"})
    );
    assert_eq!(report["fixQuality"], json!({"4": 2, "5": 1}));
    assert_eq!(report["warnings"], 0);
    let keys: Vec<&String> = report.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "producedBy",
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
fn the_mission_location_is_where_the_fixes_are() {
    let location = |lat: &str, lon: &str| {
        let gnss = lines(&[
            rmc("120000", lat, lon, "0", "0", "020126"),
            gga("120000", lat, lon, 1, 10.0),
        ]);
        let outcome = run(&[("gnss.nmea", gnss)]).unwrap();
        let summary = &outcome.summary;
        let fields =
            json!({"country": summary.country, "region": summary.region, "place": summary.place});
        // The report says the same as the processing record.
        assert_eq!(report(&outcome)["missionLocation"], fields);
        fields
    };
    assert_eq!(
        location("3246.600,N", "09647.820,W"),
        json!({"country": "US", "region": "US-TX", "place": "Dallas"})
    );
    assert_eq!(
        location("3541.160,N", "13942.200,E"),
        json!({"country": "JP", "region": null, "place": "Tokyo"})
    );
    // At sea, mid-Atlantic: nothing is known.
    assert_eq!(
        location("3000.000,N", "04000.000,W"),
        json!({"country": null, "region": null, "place": null})
    );
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
        imu.extend_from_slice(format!("{i}.000,0.01,-0.02,9.81,0.001,0.002,0.003\n").as_bytes());
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
    let geojson: Value = serde_json::from_slice(output(&outcome, "trajectory.geojson")).unwrap();
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
    // Unknown fields are kept and change nothing; a known one of the wrong type fails
    // the processing, naming it.
    assert_eq!(
        names(json!({"outputs": {"csv": true}, "other": 1})),
        ["trajectory.csv", "trajectory.geojson", "report.json"]
    );
    let wrong = run_with(&[("g.nmea", gnss())], json!({"outputs": "none"})).unwrap_err();
    assert!(wrong.error.contains("outputs"), "{}", wrong.error);
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
    assert_eq!(
        report(&outcome)["missionLocation"],
        json!({"country": "DE", "region": null, "place": "Munich"})
    );
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

/// Found by fuzzing: a speed of 10^45 knots, finite in double precision, was infinite
/// in the fix's single-precision velocity and made the whole solution NaN.
#[test]
fn a_speed_beyond_a_million_knots_is_invalid() {
    let gnss = lines(&[
        gga("120000", LAT, LON, 1, 500.0),
        rmc(
            "120000",
            LAT,
            LON,
            &format!("1{}.0", "3".repeat(45)),
            "45.0",
            "020126",
        ),
        gga("120001", LAT, LON, 1, 500.0),
        rmc("120001", LAT, LON, "19.4", "45.0", "020126"),
    ]);
    let outcome = run(&[("gnss.nmea", gnss)]).unwrap();
    assert!(
        outcome.warnings[0].starts_with("gnss.nmea:2: RMC with invalid speed"),
        "{:?}",
        outcome.warnings
    );
    let text = String::from_utf8(output(&outcome, "trajectory.csv").to_vec()).unwrap();
    assert!(!text.contains("NaN") && !text.contains("inf"), "{text}");
}

#[test]
fn heights_and_speeds_too_large_are_invalid_not_infinite() {
    // Found by fuzzing: 400 digits read as infinity, and two huge heights made an
    // infinite height or vertical velocity; the CSV then held `inf`.
    let huge = "9".repeat(400);
    let gnss = lines(&[
        rmc("120000", LAT, LON, "0", "0", "020126"),
        gga("120000", LAT, LON, 1, 500.0),
        nmea(&format!(
            "GPGGA,120001,{LAT},{LON},1,08,1.0,{huge},M,47.5,M,,"
        )),
        nmea(&format!(
            "GPGGA,120002,{LAT},{LON},1,08,1.0,900000.0,M,900000.0,M,,"
        )),
        nmea(&format!(
            "GPGGA,120003,{LAT},{LON},1,08,1.0,-1000001.0,M,0.0,M,,"
        )),
        nmea(&format!("GNRMC,120004,A,{LAT},{LON},{huge},0,020126,,,A")),
        gga("120005", LAT, LON, 1, -1000.0),
    ]);
    let outcome = run(&[("gnss.nmea", gnss)]).unwrap();
    let w = &outcome.warnings;
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].starts_with("gnss.nmea:3: GGA with invalid altitude"),
        "{}",
        w[0]
    );
    assert!(
        w[1].starts_with("gnss.nmea:5: GGA with invalid altitude"),
        "{}",
        w[1]
    );
    assert!(
        w[2].starts_with("gnss.nmea:6: RMC with invalid speed"),
        "{}",
        w[2]
    );
    let rows = csv_rows(&outcome);
    assert_eq!(rows.len(), 3, "{rows:?}");
    for row in &rows {
        for column in 1..7 {
            assert!(number(row, column).is_finite(), "{row:?}");
        }
    }
    // 900 km of altitude plus 900 km of separation is accepted: each is in range.
    close(number(&rows[1], 3), 1_800_000.0, 1e-3);
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
    assert_eq!(unsigned(&"9".repeat(400)), None);
    assert_eq!(signed(&format!("-{}", "9".repeat(400))), None);
    assert_eq!(fixed(-0.0001, 3), "0.000");
    assert_eq!(nearest_time(DAY_MS - 1000, 0), DAY_MS);
    assert_eq!(nearest_time(DAY_MS, DAY_MS - 1000), DAY_MS - 1000);
}

/// The repository's sample (`samples/`) gives, byte for byte, the outputs it gave when
/// every fix and every output was held in memory at once.
#[test]
fn the_sample_outputs_are_unchanged() {
    use sha2::{Digest as _, Sha256};
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    let inputs = [
        InputFile {
            path: "in/0_a_rover.nmea".into(),
            location: samples.join("rover.nmea"),
        },
        InputFile {
            path: "in/1_b_imu.csv".into(),
            location: samples.join("imu.csv"),
        },
    ];
    let settings: Value =
        serde_json::from_slice(&std::fs::read(samples.join("processing.json")).unwrap()).unwrap();
    let outcome = process(&inputs, settings.as_object().unwrap()).unwrap();
    // The line naming the emulator (and its version) aside.
    let produced_by = format!("  \"producedBy\": \"{}\",\n", super::writers::PRODUCED_BY);
    let digests: Vec<(&str, String)> = outcome
        .outputs
        .iter()
        .map(|o| {
            let text = String::from_utf8_lossy(&o.bytes);
            let bytes = if o.path == "report.json" {
                assert!(text.contains(&produced_by), "{text}");
                text.replacen(&produced_by, "", 1).into_bytes()
            } else {
                o.bytes.clone()
            };
            (o.path.as_str(), hex::encode(Sha256::digest(&bytes)))
        })
        .collect();
    assert_eq!(
        digests,
        [
            (
                "trajectory.csv",
                "a6b9ccb8f6e6502d022adbf79b4ccd1ffae73d65134002f2a62c087f1ee7caba".to_owned()
            ),
            (
                "trajectory.geojson",
                "586c04855d976cf6411568fe7328a88fd7a991b59e1c02b81c5f5beb1246680e".to_owned()
            ),
            (
                "report.json",
                "9b01b2f58b993f757e4a8d2012ce081d005336f5f2f970522899b79cfd4f15c3".to_owned()
            ),
        ]
    );
}

/// `process_into` writes what `process` holds, and a writer that fails fails the run.
#[test]
fn outputs_go_through_the_writers_given() {
    let gnss = lines(&[
        rmc("120000", LAT, LON, "3.3", "123.4", "020126"),
        gga("120000", LAT, LON, 1, 500.0),
        gga("120001", "4807.040,N", "01131.001,E", 1, 500.3),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let inputs = [write(dir.path(), "gnss.nmea", &gnss)];
    let held = process(&inputs, &Map::new()).unwrap();
    let mut created = Vec::new();
    let written = process_into(&inputs, &Map::new(), |path| {
        created.push(path.to_owned());
        Ok(Vec::new())
    })
    .unwrap();
    assert_eq!(
        created,
        ["trajectory.csv", "trajectory.geojson", "report.json"]
    );
    let bytes: Vec<(String, Vec<u8>)> = written
        .outputs
        .into_iter()
        .map(|w| (w.path, w.file))
        .collect();
    let expected: Vec<(String, Vec<u8>)> = held
        .outputs
        .into_iter()
        .map(|o| (o.path, o.bytes))
        .collect();
    assert_eq!(bytes, expected);
    assert_eq!(written.summary, held.summary);

    #[derive(Debug)]
    struct Full;
    impl Write for Full {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"))
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let failure = process_into(&inputs, &Map::new(), |_| Ok(Full)).unwrap_err();
    assert_eq!(failure.error, "could not write trajectory.csv: disk full");
}

/// While the files are read, a GGA and the RMC of its epoch make one compact entry, and
/// no text is kept.
#[test]
fn reading_keeps_one_compact_entry_per_epoch() {
    assert!(std::mem::size_of::<trajectory::Fix>() <= 56);
    let mut sentences = Vec::new();
    for i in 0..500 {
        let time = format!("12{:02}{:02}", i / 60, i % 60);
        sentences.push(rmc(&time, LAT, LON, "1.0", "90.0", "020126"));
        sentences.push(gga(&time, LAT, LON, 1, 500.0));
        sentences.push(gga(&time, LAT, LON, 2, 501.0));
    }
    let text = lines(&sentences);
    let mut epochs = trajectory::Epochs::default();
    epochs.start_file();
    let mut warnings = Vec::new();
    let scan = nmea::scan("gnss.nmea", text.as_slice(), &mut warnings, |record| {
        epochs.add(&record);
    });
    assert_eq!((scan.sentences, scan.skipped), (1500, 0));
    assert_eq!(epochs.len(), 500);
    let (fixes, valid) = epochs.into_fixes(0);
    assert_eq!((fixes.len(), valid), (500, vec![500]));
    // The first GGA of each epoch won.
    assert!(fixes.iter().all(|f| f.quality() == Some(1)));
}

/// What the memory test's child process prints: RSS before, peak during, RSS after, KiB.
#[cfg(target_os = "linux")]
const MEMORY_CHILD: &str = "SVC_EMULATOR_OUTPUTS_MEMORY_INPUT";

/// Processing holds the compact fixes, not the text of the inputs nor the outputs, and
/// gives the memory back: measured in a child process (this test again, alone), whose
/// peak resident memory is reset before the processing.
#[cfg(target_os = "linux")]
#[test]
fn processing_memory_is_bounded_by_the_fixes_and_given_back() {
    if let Ok(input) = std::env::var(MEMORY_CHILD) {
        return measure_processing_memory(Path::new(&input));
    }
    const FIXES: usize = 100_000;
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("big.nmea");
    let mut file = io::BufWriter::new(std::fs::File::create(&input).unwrap());
    for i in 0..FIXES {
        let (seconds, tenth) = (i / 10, i % 10);
        let time = format!(
            "{:02}{:02}{:02}.{tenth}0",
            10 + seconds / 3600,
            seconds / 60 % 60,
            seconds % 60
        );
        let lat = format!("{:.6},N", 4807.0 + 0.0001 * (i % 1000) as f64);
        write!(
            file,
            "{}\r\n{}\r\n",
            gga(&time, &lat, LON, 1, 500.0),
            rmc(&time, &lat, LON, "10.0", "45.0", "020126")
        )
        .unwrap();
    }
    file.flush().unwrap();
    drop(file);
    let input_bytes = std::fs::metadata(&input).unwrap().len();
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "engine::outputs::tests::processing_memory_is_bounded_by_the_fixes_and_given_back",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(MEMORY_CHILD, &input)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    let figures: Vec<u64> = stdout
        .lines()
        .find_map(|l| l.split_once("memory KiB: ").map(|(_, figures)| figures))
        .unwrap_or_else(|| panic!("no figures from the child: {stdout}"))
        .split(' ')
        .map(|n| n.parse().unwrap())
        .collect();
    let [before, peak, after] = figures[..] else {
        panic!("{figures:?}")
    };
    let kib = |bytes: u64| bytes / 1024;
    // The fixes take 56 bytes each (5.3 MiB; their vector grows up to twice that); the
    // text of the input is 15 MiB, the outputs 14 MiB.
    let fixes = kib((FIXES * std::mem::size_of::<trajectory::Fix>()) as u64);
    assert!(
        peak - before <= 2 * fixes + 4 * 1024,
        "the processing of {} KiB of NMEA took {} KiB at its peak, more than twice its {fixes} KiB of fixes and 4 MiB",
        kib(input_bytes),
        peak - before
    );
    assert!(
        after <= before + 4 * 1024,
        "{} KiB were kept after the processing",
        after - before
    );
}

/// The child's side: one processing of `input` with its outputs written to files, and the
/// resident memory before (its peak reset), at the peak, and after.
#[cfg(target_os = "linux")]
fn measure_processing_memory(input: &Path) {
    let status = || {
        let text = std::fs::read_to_string("/proc/self/status").unwrap();
        let kib = |name: &str| -> u64 {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
                .unwrap()
        };
        (kib("VmRSS:"), kib("VmHWM:"))
    };
    let out = tempfile::tempdir().unwrap();
    let inputs = [InputFile {
        path: "big.nmea".into(),
        location: input.to_owned(),
    }];
    // Loads the boundaries, read once per process, and touches the code of a processing
    // (the pages of the program count in the resident memory), before measuring.
    location::locate(48.0, 11.0);
    let warm_up = out.path().join("warm-up.nmea");
    std::fs::write(
        &warm_up,
        lines(&[
            gga("120000", LAT, LON, 1, 500.0),
            rmc("120000", LAT, LON, "1.0", "90.0", "020126"),
        ]),
    )
    .unwrap();
    let warm_inputs = [InputFile {
        path: "warm-up.nmea".into(),
        location: warm_up,
    }];
    process_into(&warm_inputs, &Map::new(), |_| Ok(io::sink())).unwrap();
    // Resets the peak to the current resident memory; where the kernel does not allow it,
    // the peak includes the child's start, and the figure is an upper bound.
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let (before, _) = status();
    let outcome = process_into(&inputs, &Map::new(), |path| {
        std::fs::File::create(out.path().join(path)).map(io::BufWriter::new)
    })
    .unwrap();
    assert_eq!(outcome.summary.mission_length_s, 9_999);
    drop(outcome);
    let (after, peak) = status();
    println!("memory KiB: {before} {peak} {after}");
}
