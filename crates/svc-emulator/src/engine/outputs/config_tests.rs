//! The configuration changes the solution plausibly, and the vendor's form writes the
//! exports and reports it names.

use serde_json::{Value, json};

use super::tests::{gga, lines, rmc, run_with};
use super::{Failure, Outcome};

const LAT: &str = "4807.038000,N";
const LON: &str = "01131.000000,E";

/// 21 epochs a second apart going east at 10 m/s (19.438 knots), then `turn` degrees
/// of course per second for 10 more.
fn drive(turn: f64) -> Vec<u8> {
    let mut sentences = Vec::new();
    let mut lon_min = 31.0;
    let mut course: f64 = 90.0;
    let mut lat_min = 7.038;
    for i in 0..31 {
        let time = format!("1200{i:02}.00");
        let lat = format!("48{lat_min:09.6},N");
        let lon = format!("011{lon_min:09.6},E");
        sentences.push(gga(&time, &lat, &lon, 4, 500.0));
        sentences.push(rmc(
            &time,
            &lat,
            &lon,
            "19.438",
            &format!("{course:.1}"),
            "020126",
        ));
        // 10 m in minutes of arc at 48.1° N.
        let (north, east) = (
            course.to_radians().cos() * 10.0,
            course.to_radians().sin() * 10.0,
        );
        lat_min += north / 1852.0;
        lon_min += east / (1852.0 * 48.1_f64.to_radians().cos());
        if i >= 20 {
            course += turn;
        }
    }
    lines(&sentences)
}

fn rows(outcome: &Outcome, name: &str) -> Vec<Vec<f64>> {
    let text = output_text(outcome, name);
    text.lines()
        .skip(1)
        .map(|line| {
            line.split(',')
                .skip(1)
                .map(|v| v.parse().expect("a number"))
                .collect()
        })
        .collect()
}

fn output_text(outcome: &Outcome, name: &str) -> String {
    let file = outcome
        .outputs
        .iter()
        .find(|o| o.path == name)
        .unwrap_or_else(|| {
            panic!(
                "no {name} in {:?}",
                outcome.outputs.iter().map(|o| &o.path).collect::<Vec<_>>()
            )
        });
    String::from_utf8(file.bytes.clone()).expect("text")
}

fn output_bytes<'a>(outcome: &'a Outcome, name: &str) -> &'a [u8] {
    &outcome
        .outputs
        .iter()
        .find(|o| o.path == name)
        .unwrap_or_else(|| panic!("no {name}"))
        .bytes
}

// Columns of trajectory.csv after `time`.
const LATITUDE: usize = 0;
const LONGITUDE: usize = 1;
const HEIGHT: usize = 2;
const VELOCITY_NORTH: usize = 3;
const ROLL: usize = 6;
const PITCH: usize = 7;
const HEADING: usize = 8;
const STD_NORTH: usize = 9;
const QUALITY: usize = 18;

fn shorthand(options: Value) -> Result<Outcome, Failure> {
    run_with(&[("rover.nmea", drive(0.0))], options)
}

#[test]
fn the_attitude_follows_the_motion_and_the_quality_the_fix() {
    let outcome = shorthand(json!({})).expect("processed");
    let rows = rows(&outcome, "trajectory.csv");
    assert_eq!(rows.len(), 31);
    for row in &rows[2..18] {
        assert!((row[HEADING] - 90.0).abs() < 0.5, "{row:?}");
        assert!(row[ROLL].abs() < 0.5 && row[PITCH].abs() < 0.5, "{row:?}");
        assert_eq!(row[QUALITY], 1.0, "RTK fixed");
        assert_eq!(row[STD_NORTH], 0.02);
    }
}

#[test]
fn a_lever_arm_moves_the_reported_point() {
    let plain = rows(&shorthand(json!({})).expect("processed"), "trajectory.csv");
    // The antenna 2 m ahead of the IMU and 1.5 m above it (z down).
    let moved = rows(
        &shorthand(json!({"imu": {"leverArm": [2.0, 0.0, -1.5]}})).expect("processed"),
        "trajectory.csv",
    );
    let (a, b) = (&plain[10], &moved[10]);
    assert!((b[HEIGHT] - (a[HEIGHT] - 1.5)).abs() < 0.01, "{a:?} {b:?}");
    // Heading east: the IMU is 2 m west of the antenna.
    let west_m =
        (a[LONGITUDE] - b[LONGITUDE]).to_radians() * 6_389_000.0 * 48.1_f64.to_radians().cos();
    assert!((west_m - 2.0).abs() < 0.05, "{west_m}");
    assert!((a[LATITUDE] - b[LATITUDE]).abs() < 1e-7);
}

#[test]
fn the_elevation_mask_the_mode_and_the_profile_change_the_solution() {
    let low = rows(&shorthand(json!({})).expect("processed"), "trajectory.csv");
    let high = rows(
        &shorthand(json!({"gnss": {"elevationMaskDegrees": 40}})).expect("processed"),
        "trajectory.csv",
    );
    assert!((high[5][STD_NORTH] - 2.0 * low[5][STD_NORTH]).abs() < 1e-3);

    let fixed = rows(
        &shorthand(json!({"mode": "static"})).expect("processed"),
        "trajectory.csv",
    );
    assert!(
        fixed
            .windows(2)
            .all(|w| w[0][LATITUDE] == w[1][LATITUDE] && w[0][LONGITUDE] == w[1][LONGITUDE])
    );
    assert!(fixed.iter().all(|r| r[VELOCITY_NORTH] == 0.0));
    // `auto`: this drive moves, so kinematic; a rover standing still is static.
    let auto = rows(
        &shorthand(json!({"mode": "auto"})).expect("processed"),
        "trajectory.csv",
    );
    assert_eq!(auto, low);
    let still: Vec<String> = (0..5)
        .map(|i| {
            gga(
                &format!("1200{i:02}.00"),
                LAT,
                LON,
                4,
                500.0 + f64::from(i) * 0.01,
            )
        })
        .collect();
    let standing =
        run_with(&[("still.nmea", lines(&still))], json!({"mode": "auto"})).expect("processed");
    let standing = rows(&standing, "trajectory.csv");
    assert!(
        standing.iter().all(|r| r[HEIGHT] == standing[0][HEIGHT]),
        "{standing:?}"
    );

    // A turn: the car leans into it, the ship does not.
    let turning = |profile: &str| {
        let config = json!({"version": "1.0", "project": {"type": "nmea", "path": "rover/"},
                            "processing": {"type": "gnssSingle", "motionProfile": profile}});
        let outcome = run_with(&[("rover/r.nmea", drive(6.0))], config).expect("processed");
        rows(&outcome, "trajectory.csv")
    };
    let (car, ship) = (turning("automotive"), turning("marine"));
    assert!(car[25][ROLL] < -5.0 || car[25][ROLL] > 5.0, "{:?}", car[25]);
    assert_eq!(ship[25][ROLL], 0.0);
    // Where the turn begins, the ship's longer window still sees the straight line.
    assert!(
        (car[21][HEADING] - ship[21][HEADING]).abs() > 0.5,
        "smoothed differently"
    );
}

#[test]
fn unknown_values_fail_the_processing_with_a_clear_error() {
    let vendor = |processing: Value, extra: Value| {
        let mut config = json!({"version": "1.0", "project": {"type": "nmea", "path": "rover/"},
                                "processing": processing});
        if let (Some(map), Some(more)) = (config.as_object_mut(), extra.as_object()) {
            map.extend(more.clone());
        }
        run_with(&[("rover/r.nmea", drive(0.0))], config)
    };
    let e = vendor(
        json!({"type": "insSingle", "motionProfile": "spaceship"}),
        json!({}),
    )
    .unwrap_err();
    assert!(
        e.error.contains("unknown motion profile `spaceship`"),
        "{}",
        e.error
    );
    let e = vendor(
        json!({"type": "insSingle"}),
        json!({"exports": [{"profile": "LAS: 10Hz"}]}),
    )
    .unwrap_err();
    assert!(
        e.error
            .contains("exports[0].profile: unknown export profile"),
        "{}",
        e.error
    );
    let e = vendor(
        json!({"type": "insSingle"}),
        json!({"reports": [{"template": "Glossy"}]}),
    )
    .unwrap_err();
    assert!(
        e.error
            .contains("reports[0].template: unknown report template `Glossy`"),
        "{}",
        e.error
    );
    let e = shorthand(json!({"mode": "nonsense", "bogus": 1})).unwrap_err();
    assert!(
        e.error.contains("mode: unknown mode `nonsense`"),
        "{}",
        e.error
    );
}

#[test]
fn the_vendor_form_writes_its_exports_and_reports() {
    let config = json!({
        "version": "1.0",
        "project": {"name": "drive", "type": "nmea", "path": "rover/"},
        "processing": {"type": "insSingle", "motionProfile": "automotive"},
        "exports": [
            {"name": "Export SBET", "profile": "SBET: 10Hz", "outputDir": "export"},
            {"name": "Export ASCII", "profile": "ASCII: INS at 5Hz", "outputDir": "export"},
            {"name": "Track", "profile": "KML: 1Hz"},
            {"name": "Points", "profile": "GeoJSON: 2Hz"}
        ],
        "reports": [
            {"name": "JSON report", "template": "Minimal JSON", "outputDir": "reports/json"},
            {"name": "PDF report", "template": "Full PDF"},
            {"name": "HTML report", "template": "Full HTML"}
        ]
    });
    let sidecar = json!({"settings": {"sensor": {"leverArm": [0.0, 0.0, -1.0]}}}).to_string();
    let outcome = run_with(
        &[
            ("rover/r.nmea", drive(0.0)),
            ("rover/settings.json", sidecar.into_bytes()),
        ],
        config,
    )
    .expect("processed");
    let names: Vec<&str> = outcome.outputs.iter().map(|o| o.path.as_str()).collect();
    assert_eq!(
        names,
        [
            "trajectory.csv",
            "trajectory.geojson",
            "report.json",
            "export/export_sbet.sbet",
            "export/export_ascii.txt",
            "track.kml",
            "points.geojson",
            "reports/json/json_report.json",
            "pdf_report.pdf",
            "html_report.html",
        ]
    );
    // 30 s at 10 Hz: 301 records of 17 doubles.
    let sbet = output_bytes(&outcome, "export/export_sbet.sbet");
    assert_eq!(sbet.len(), 301 * 17 * 8);
    let record: Vec<f64> = sbet[..17 * 8]
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().expect("8 bytes")))
        .collect();
    // 2026-01-02T12:00:00Z is a Friday: 5 days and 12 h into the GPS week, + 18 s.
    assert!(
        (record[0] - (5.0 * 86_400.0 + 43_200.0 + 18.0)).abs() < 1e-6,
        "{}",
        record[0]
    );
    assert!((record[1].to_degrees() - 48.1173).abs() < 1e-6);
    // Going east at 10 m/s: x (north) 0, y (east) 10; heading 90°.
    assert!(
        (record[5] - 10.0).abs() < 0.01 && record[4].abs() < 0.01,
        "{record:?}"
    );
    assert!((record[9].to_degrees() - 90.0).abs() < 0.5);
    // The sidecar's lever arm (antenna 1 m above the IMU) lowers the point.
    let csv = rows(&outcome, "trajectory.csv");
    assert!(
        (csv[0][HEIGHT] - (547.5 - 1.0)).abs() < 0.01,
        "{:?}",
        csv[0]
    );

    let ascii = output_text(&outcome, "export/export_ascii.txt");
    let body: Vec<&str> = ascii.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(body.len(), 151);
    assert_eq!(
        body[0].split(' ').count(),
        super::exports::ASCII_COLUMNS.split(' ').count()
    );
    assert!(
        body[0].starts_with("2026-01-02T12:00:00.000Z 2399 "),
        "{}",
        body[0]
    );

    let points: Value =
        serde_json::from_slice(output_bytes(&outcome, "points.geojson")).expect("JSON");
    assert_eq!(points["features"].as_array().map(Vec::len), Some(61));
    assert_eq!(points["features"][0]["properties"]["quality"], 1);
    let kml = output_text(&outcome, "track.kml");
    assert_eq!(kml.matches("<Placemark>").count(), 1 + 31);

    let report: Value =
        serde_json::from_slice(output_bytes(&outcome, "reports/json/json_report.json"))
            .expect("JSON");
    assert_eq!(report["epochs"], 31);
    assert_eq!(report["qualityShares"], json!({"1": 1.0}));
    assert_eq!(report["motionProfile"], "automotive");
    assert_eq!(report["leverArm"], json!([0.0, 0.0, -1.0]));
    assert!(
        (report["distanceMeters"].as_f64().unwrap_or(0.0) - 300.0).abs() < 1.0,
        "{report}"
    );

    let pdf = output_bytes(&outcome, "pdf_report.pdf");
    assert!(pdf.starts_with(b"%PDF-1.4") && pdf.ends_with(b"%%EOF\n"));
    let text = String::from_utf8_lossy(pdf);
    let start: usize = text
        .rsplit("startxref\n")
        .next()
        .and_then(|tail| tail.lines().next())
        .and_then(|n| n.parse().ok())
        .expect("startxref");
    assert!(
        text[start..].starts_with("xref"),
        "the cross-reference table is where it says"
    );
    let html = output_text(&outcome, "html_report.html");
    assert_eq!(html.matches("<svg").count(), 3);
}

#[test]
fn an_inertial_session_gives_its_own_attitude() {
    use svc_logs::records::{EkfEuler, EkfNav, UtcTime};
    use svc_logs::{Record, encode_frame};
    let utc = Record::UtcTime(UtcTime {
        timestamp: 1_000_000,
        status: 2 << 6,
        year: 2026,
        month: 11,
        day: 29,
        hour: 10,
        ..UtcTime::default()
    });
    let mut bytes = encode_frame(&utc, 0).expect("a frame");
    for i in 0..5_u32 {
        let timestamp = 1_000_000 + i * 200_000;
        let euler = Record::EkfEuler(EkfEuler {
            timestamp,
            euler: [0.02, -0.01, 3.0],
            euler_std: [0.001, 0.001, 0.004],
            ..EkfEuler::default()
        });
        let nav = Record::EkfNav(EkfNav {
            timestamp,
            velocity: [0.0, 1.0, 0.0],
            position: [48.0 + f64::from(i) * 1e-6, 2.35, 35.0],
            position_std: [0.03, 0.02, 0.05],
            status: 4,
            ..EkfNav::default()
        });
        // Either order: a unit may log the attitude of an instant after its position.
        let (first, second) = if i % 2 == 0 {
            (&euler, &nav)
        } else {
            (&nav, &euler)
        };
        bytes.extend(encode_frame(first, 0).expect("a frame"));
        bytes.extend(encode_frame(second, 0).expect("a frame"));
    }
    let outcome = run_with(&[("rover/session.001", bytes)], json!({})).expect("processed");
    let rows = rows(&outcome, "trajectory.csv");
    assert_eq!(rows.len(), 5);
    for row in &rows {
        assert!(
            (row[HEADING] - 3.0_f64.to_degrees()).abs() < 0.01,
            "{row:?}"
        );
    }
    let row = &rows[2];
    assert!((row[ROLL] - 0.02_f64.to_degrees()).abs() < 0.01, "{row:?}");
    assert!((row[PITCH] + 0.01_f64.to_degrees()).abs() < 0.01, "{row:?}");
    assert!(
        (row[HEADING] - 3.0_f64.to_degrees()).abs() < 0.01,
        "{row:?}"
    );
    assert!(
        (row[HEADING + 9] - 0.004_f64.to_degrees()).abs() < 0.01,
        "heading σ: {row:?}"
    );
    assert_eq!(row[QUALITY], 1.0, "3 cm: RTK-fixed class");
    assert_eq!(row[STD_NORTH], 0.03);
}

/// A RINEX 2 observation header covering 2026-01-02 from `first` to `last` (GPS time,
/// `HH    MM`).
fn rinex(first: &str, last: &str) -> Vec<u8> {
    let line = |content: &str, label: &str| format!("{content:<60}{label}\n");
    [
        line(
            "     2.11           OBSERVATION DATA    G (GPS)",
            "RINEX VERSION / TYPE",
        ),
        line(
            &format!("  2026     1     2    {first}    0.0000000     GPS"),
            "TIME OF FIRST OBS",
        ),
        line(
            &format!("  2026     1     2    {last}    0.0000000     GPS"),
            "TIME OF LAST OBS",
        ),
        line("", "END OF HEADER"),
    ]
    .concat()
    .into_bytes()
}

#[test]
fn a_base_that_does_not_cover_the_rover_is_a_warning() {
    let config = json!({"version": "1.0", "project": {"type": "nmea", "path": "rover/"},
                        "processing": {"type": "insSingle", "bases": [
                            {"data": ["base/early.26o", "base/around.26o", "base/absent.26o"]}]}});
    let outcome = run_with(
        &[
            ("rover/r.nmea", drive(0.0)),
            ("base/early.26o", rinex("11     0", "11    30")),
            ("base/around.26o", rinex("11    59", "12    10")),
        ],
        config,
    )
    .expect("a warning does not fail the processing");
    let about = |name: &str| outcome.warnings.iter().filter(|w| w.contains(name)).count();
    assert_eq!(about("base/around.26o"), 0, "{:?}", outcome.warnings);
    assert!(
        outcome.warnings.iter().any(|w| w
            .contains("base/early.26o covers 2026-01-02T10:59:42.000Z")
            && w.contains("does not cover the rover's time")),
        "{:?}",
        outcome.warnings
    );
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.contains("base/absent.26o is not among the inputs")),
        "{:?}",
        outcome.warnings
    );
}

#[test]
fn each_file_plays_the_part_the_vendor_form_gives_it() {
    // A drive elsewhere: read, it would add 31 epochs 100 km away.
    let elsewhere = String::from_utf8(drive(0.0))
        .unwrap()
        .replace("4807.", "4907.")
        .replace("*", "");
    let config = json!({"version": "1.0", "project": {"type": "nmea", "path": "rover/"},
                        "processing": {"type": "insSingle", "bases": [{"data": ["base/b.26o"]}]}});
    let outcome = run_with(
        &[
            ("rover/r.nmea", drive(0.0)),
            (
                "rover/settings.json",
                br#"{"settings": {"sensor": {"leverArm": [1.5, 0, 0]}}}"#.to_vec(),
            ),
            ("base/b.26o", rinex("11    59", "12    10")),
            ("other/elsewhere.nmea", elsewhere.into_bytes()),
        ],
        config,
    )
    .expect("processes");
    assert_eq!(outcome.warnings, Vec::<String>::new());
    let report: Value = serde_json::from_slice(output_bytes(&outcome, "report.json")).unwrap();
    assert_eq!(report["fixCount"], 31, "only the rover's epochs: {report}");
    let files = &report["inputFiles"];
    assert_eq!(files[0]["validFixes"], 31, "{files}");
    assert_eq!(
        files[1]["notes"],
        json!(["the rover's settings: settings.sensor.leverArm applied"])
    );
    assert_eq!(
        files[2]["notes"],
        json!([
            "base station observations from 2026-01-02T11:58:42.000Z to 2026-01-02T12:09:42.000Z"
        ])
    );
    assert_eq!(
        files[3]["notes"],
        json!(["not used: neither in the rover's project.path nor a base's data"])
    );
    assert_eq!(files[3]["validFixes"], 0);
}

/// A session whose GNSS antenna sits 1.2 m ahead, 0.4 m left and 0.8 m above its
/// navigation point, turning through every heading, rolled and pitched: asked for, the
/// estimate finds that lever arm; not asked, the report has none.
#[test]
fn the_lever_arm_is_estimated_when_the_configuration_asks() {
    use super::solution::{body_to_ned, moved};
    use svc_logs::records::{EkfEuler, EkfNav, GnssPos, UtcTime};
    use svc_logs::{Record, encode_frame};
    let arm = [1.2, -0.4, -0.8];
    let utc = Record::UtcTime(UtcTime {
        timestamp: 1_000_000,
        status: 2 << 6,
        year: 2026,
        month: 11,
        day: 29,
        hour: 10,
        ..UtcTime::default()
    });
    let mut bytes = encode_frame(&utc, 0).expect("a frame");
    for i in 0..36_u32 {
        let timestamp = 1_000_000 + i * 200_000;
        let euler = [0.05_f32, -0.03, (f64::from(i) * 10.0).to_radians() as f32];
        let nav = [48.0 + f64::from(i) * 1e-5, 2.35, 35.0];
        let attitude = euler.map(|r| f64::from(r).to_degrees());
        let (lat, lon, height) = moved(nav[0], nav[1], nav[2], body_to_ned(attitude, arm));
        let records = [
            Record::EkfEuler(EkfEuler {
                timestamp,
                euler,
                euler_std: [0.001, 0.001, 0.004],
                ..EkfEuler::default()
            }),
            Record::EkfNav(EkfNav {
                timestamp,
                velocity: [1.0, 0.0, 0.0],
                position: nav,
                position_std: [0.02, 0.02, 0.03],
                status: 4,
                ..EkfNav::default()
            }),
            Record::Gps1Pos(GnssPos {
                timestamp,
                // Solution computed, RTK fixed.
                status: 7 << 6,
                latitude: lat,
                longitude: lon,
                altitude: height,
                ..GnssPos::default()
            }),
        ];
        // The antenna's position before, between or after the navigation's records.
        let order: [usize; 3] = match i % 3 {
            0 => [2, 0, 1],
            1 => [0, 2, 1],
            _ => [1, 0, 2],
        };
        for k in order {
            bytes.extend(encode_frame(&records[k], 0).expect("a frame"));
        }
    }
    let config = |estimate: bool| {
        json!({"version": "1.0", "project": {"type": "sbgECom", "path": "rover/"},
               "processing": {"type": "insSingle", "estimateLeverArm": estimate},
               "reports": [{"name": "r", "template": "Minimal JSON"}]})
    };
    let outcome = run_with(&[("rover/session.001", bytes.clone())], config(true)).unwrap();
    assert_eq!(outcome.warnings, Vec::<String>::new());
    let report: Value = serde_json::from_slice(output_bytes(&outcome, "r.json")).unwrap();
    let estimate = &report["estimatedLeverArm"];
    assert_eq!(estimate["epochs"], 36, "{report}");
    for (k, expected) in arm.iter().enumerate() {
        let got = estimate["leverArm"][k].as_f64().unwrap();
        assert!((got - expected).abs() <= 0.002, "{k}: {estimate}");
        assert!(estimate["std"][k].as_f64().unwrap() <= 0.002, "{estimate}");
    }

    let outcome = run_with(&[("rover/session.001", bytes)], config(false)).unwrap();
    let report: Value = serde_json::from_slice(output_bytes(&outcome, "r.json")).unwrap();
    assert!(report.get("estimatedLeverArm").is_none(), "{report}");

    // Asked of NMEA, which gives no such instant: null, and a warning says why.
    let outcome = run_with(&[("rover/r.nmea", drive(0.0))], {
        let mut c = config(true);
        c["project"]["type"] = json!("nmea");
        c
    })
    .unwrap();
    let report: Value = serde_json::from_slice(output_bytes(&outcome, "r.json")).unwrap();
    assert_eq!(report["estimatedLeverArm"], Value::Null, "{report}");
    assert!(
        outcome
            .warnings
            .iter()
            .any(|w| w.starts_with("lever arm not estimated")),
        "{:?}",
        outcome.warnings
    );
    // A wrong type is an error naming the field.
    let mut wrong = config(true);
    wrong["processing"]["estimateLeverArm"] = json!("yes");
    let failure = run_with(&[("rover/r.nmea", drive(0.0))], wrong).unwrap_err();
    assert!(
        failure.error.contains("processing.estimateLeverArm"),
        "{}",
        failure.error
    );
}
