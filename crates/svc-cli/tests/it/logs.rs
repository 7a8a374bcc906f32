//! `svc logs`: convert generated logs to CSV and Parquet, inspect logs with faults,
//! refuse what is not a log, a missing file.

use std::path::Path;

use arrow_array::{Array, Float64Array, Int64Array};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use svc_logs::Record;
use svc_logs::encode_frame;
use svc_logs::records::{EkfNav, GnssPos, ImuData, UtcTime};

use crate::support::svc;

fn nav(t: u32) -> Record {
    Record::EkfNav(EkfNav {
        timestamp: t,
        position: [48.0 + f64::from(t) * 1e-9, 2.0, 35.0],
        ..EkfNav::default()
    })
}

fn imu(t: u32) -> Record {
    Record::ImuData(ImuData {
        timestamp: t,
        accelerometers: [0.0, 0.0, 9.81],
        ..ImuData::default()
    })
}

/// 2 s of a session: imuData at 200 Hz, ekfNav at 50 Hz, gps1Pos (RTK fixed) and a
/// valid utcTime at 1 Hz.
fn session() -> Vec<u8> {
    let mut log = Vec::new();
    for i in 0..400u32 {
        let t = 1_000_000 + i * 5000;
        if i % 200 == 0 {
            let utc = UtcTime {
                timestamp: t,
                status: 2 << 6,
                year: 2026,
                month: 3,
                day: 4,
                hour: 5,
                minute: 6,
                second: 7 + (i / 200) as u8,
                ..UtcTime::default()
            };
            log.extend(encode_frame(&Record::UtcTime(utc), 0).unwrap());
            let pos = GnssPos {
                timestamp: t,
                status: 7 << 6,
                ..GnssPos::default()
            };
            log.extend(encode_frame(&Record::Gps1Pos(pos), 0).unwrap());
        }
        log.extend(encode_frame(&imu(t), 0).unwrap());
        if i % 4 == 0 {
            log.extend(encode_frame(&nav(t), 0).unwrap());
        }
    }
    log
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

#[test]
fn convert_writes_one_csv_per_message_from_several_files() {
    let dir = tempfile::tempdir().unwrap();
    let log = session();
    let (a, b) = log.split_at(log.len() / 3 + 7); // a frame cut across the files
    let a = write(dir.path(), "a.bin", a);
    let b = write(dir.path(), "b.bin", b);
    let out = dir.path().join("tables");
    let run = svc(&["logs", "convert", &a, &b, "--out", out.to_str().unwrap()]);
    run.ok();
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["ekfNav.csv", "gps1Pos.csv", "imuData.csv", "utcTime.csv"]
    );
    let imu = std::fs::read_to_string(out.join("imuData.csv")).unwrap();
    let lines: Vec<&str> = imu.lines().collect();
    assert_eq!(lines.len(), 2 + 400);
    assert_eq!(
        lines[0],
        "timestamp,status,accelX,accelY,accelZ,gyroX,gyroY,gyroZ,temperature,utcTime"
    );
    assert_eq!(
        lines[1],
        "(us),(na),(m.s^-2),(m.s^-2),(m.s^-2),(deg.s^-1),(deg.s^-1),(deg.s^-1),(degC),(us)"
    );
    assert_eq!(
        lines[2],
        "1000000,0,0,0,9.81,0,0,0,0,2026-03-04T05:06:07.000000Z"
    );
    assert!(
        run.stdout.contains("imuData.csv\t400 rows"),
        "{}",
        run.stdout
    );
}

#[test]
fn convert_to_parquet_reads_back() {
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "session.bin", &session());
    let out = dir.path().join("pq");
    svc(&[
        "logs",
        "convert",
        &file,
        "--out",
        out.to_str().unwrap(),
        "--format",
        "parquet",
    ])
    .ok();
    let reader = ParquetRecordBatchReaderBuilder::try_new(
        std::fs::File::open(out.join("ekfNav.parquet")).unwrap(),
    )
    .unwrap()
    .build()
    .unwrap();
    let batches: Vec<_> = reader.collect::<Result<_, _>>().unwrap();
    let rows: usize = batches.iter().map(|b| b.num_rows()).sum();
    assert_eq!(rows, 100);
    let b = &batches[0];
    let schema = b.schema();
    assert_eq!(schema.field(0).name(), "timestamp");
    assert_eq!(
        schema
            .field_with_name("latitude")
            .unwrap()
            .metadata()
            .get("unit")
            .map(String::as_str),
        Some("deg")
    );
    let ts = b.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(ts.value(1), 1_020_000);
    let lat = b
        .column_by_name("latitude")
        .unwrap()
        .as_any()
        .downcast_ref::<Float64Array>()
        .unwrap()
        .clone();
    assert_eq!(lat.value(1), 48.0 + 1_020_000f64 * 1e-9);
    assert!(!b.column_by_name("utcTime").unwrap().is_null(0));
    assert!(!out.join("ekfNav.parquet.part").exists());
}

/// The session with garbage, a frame of bad CRC and a truncated tail.
fn damaged() -> (Vec<u8>, u64, u64, u64) {
    let mut log = session();
    let garbage_at = log.len() as u64;
    log.extend_from_slice(b"some garbage here");
    let bad_at = log.len() as u64;
    let mut bad = encode_frame(&nav(9_000_000), 0).unwrap();
    let n = bad.len();
    bad[n - 3] ^= 0xff; // the CRC
    log.extend(bad);
    log.extend(encode_frame(&nav(9_100_000), 0).unwrap());
    let cut_at = log.len() as u64;
    let tail = encode_frame(&nav(9_200_000), 0).unwrap();
    log.extend_from_slice(&tail[..tail.len() / 2]);
    (log, garbage_at, bad_at, cut_at)
}

#[test]
fn inspect_reports_rates_utc_gnss_and_faults_at_their_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let (log, garbage_at, bad_at, cut_at) = damaged();
    let file = write(dir.path(), "damaged.bin", &log);
    let run = svc(&["logs", "inspect", &file, "--json"]);
    run.ok();
    let v = run.json();
    let imu = &v["messages"]["imuData"];
    assert_eq!(imu["count"], 400);
    assert!((imu["rate_hz"].as_f64().unwrap() - 200.0).abs() < 1e-6);
    assert_eq!(imu["first_timestamp_us"], 1_000_000);
    assert_eq!(imu["last_timestamp_us"], 1_000_000 + 399 * 5000);
    assert_eq!(imu["gaps"], 0);
    // ekfNav: the two frames after the damage are 7 s later: one gap.
    let nav = &v["messages"]["ekfNav"];
    assert_eq!(nav["count"], 101);
    assert_eq!(nav["gaps"], 1);
    assert_eq!(nav["largest_gap_us"], 9_100_000 - (1_000_000 + 396 * 5000));
    assert_eq!(v["utc"]["first_valid"], "2026-03-04T05:06:07.000000Z");
    assert!(v["utc"]["valid_share"].as_f64().unwrap() > 0.9);
    assert_eq!(v["gnss"]["gps1Pos"], 2);
    assert_eq!(v["gnss"]["fix_share"], 1.0);
    assert_eq!(v["gnss"]["best_type"], "RtkInt");
    let faults = &v["faults"];
    assert_eq!(faults["bad_crc"], 1);
    assert_eq!(faults["truncated"], 1);
    assert!(faults["skipped_bytes"].as_u64().unwrap() >= 17);
    let listed = faults["listed"].as_array().unwrap();
    let offsets: Vec<u64> = listed
        .iter()
        .map(|f| f["offset"].as_u64().unwrap())
        .collect();
    assert!(offsets.contains(&garbage_at), "{listed:?}");
    assert!(offsets.contains(&bad_at), "{listed:?}");
    assert!(offsets.contains(&cut_at), "{listed:?}");

    let text = svc(&["logs", "inspect", &file]);
    text.ok();
    assert!(text.stdout.contains("imuData"), "{}", text.stdout);
    assert!(
        text.stdout.contains("1 bad CRC, 1 truncated"),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout.contains(&format!("at {bad_at} ")),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("best RtkInt"), "{}", text.stdout);
}

#[test]
fn a_file_that_is_no_log_and_a_missing_file_fail_with_their_codes() {
    let dir = tempfile::tempdir().unwrap();
    let text = write(
        dir.path(),
        "notes.txt",
        &b"hello, this is not a log\n".repeat(100),
    );
    let run = svc(&["logs", "inspect", &text]);
    run.fails_with(5);
    assert!(run.stderr.contains("not an sbgECom log"), "{}", run.stderr);
    let out = dir.path().join("out");
    svc(&["logs", "convert", &text, "--out", out.to_str().unwrap()]).fails_with(5);
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    let missing = dir.path().join("missing.bin");
    svc(&["logs", "inspect", missing.to_str().unwrap()]).fails_with(7);
}
