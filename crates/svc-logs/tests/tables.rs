//! Tables from generated logs: schemas, titles, units, values, row counts, batches of
//! bounded size, the UTC column, and the CSV text.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failure

use arrow_array::RecordBatch;
use arrow_array::{
    Array, Float32Array, Float64Array, Int64Array, TimestampMicrosecondArray, UInt16Array,
    UInt32Array,
};
use svc_logs::columns::columns;
use svc_logs::files::CsvWriter;
use svc_logs::records::{EkfEuler, EkfNav, GnssPos, ImuData, ImuShort, UtcTime};
use svc_logs::tables::{TableReader, UTC_COLUMN, has_table};
use svc_logs::{MessageKind, Record, decode_kind, encode_frame};

/// A record of every tabled kind: a payload of its longest documented version, bytes
/// `seed`, `seed+1`, ... (timestamps then small and increasing with the seed).
fn record_of(kind: MessageKind, seed: u8) -> Record {
    let len = kind.min_payload_len() + 16;
    let mut payload: Vec<u8> = (0..len).map(|i| seed.wrapping_add(i as u8)).collect();
    payload[..4].copy_from_slice(&(u32::from(seed) * 1000).to_le_bytes());
    decode_kind(kind, &payload).unwrap_or_else(|_| {
        decode_kind(kind, &vec![0; kind.min_payload_len()]).expect("zeros decode")
    })
}

fn batches(log: &[u8], rows: usize) -> Vec<(MessageKind, RecordBatch)> {
    TableReader::with_batch_rows(log, rows)
        .collect::<Result<_, _>>()
        .unwrap()
}

fn f64s(batch: &RecordBatch, name: &str) -> Vec<f64> {
    let col = batch.column_by_name(name).expect(name);
    if let Some(a) = col.as_any().downcast_ref::<Float64Array>() {
        return a.values().to_vec();
    }
    let a = col.as_any().downcast_ref::<Float32Array>().expect(name);
    a.values().iter().map(|&v| f64::from(v)).collect()
}

#[test]
fn every_tabled_message_gets_its_table_with_titles_units_and_rows() {
    let tabled: Vec<MessageKind> = MessageKind::ALL
        .iter()
        .copied()
        .filter(|&k| has_table(k))
        .collect();
    assert_eq!(tabled.len(), 33);
    let mut log = Vec::new();
    for (i, &kind) in tabled.iter().enumerate() {
        for seed in 0..=(i % 3) as u8 {
            log.extend(encode_frame(&record_of(kind, seed), 0).unwrap());
        }
    }
    // Untabled messages are left out.
    log.extend(encode_frame(&Record::Gps1Raw(Default::default()), 0).unwrap());
    let got = batches(&log, 1000);
    assert_eq!(got.len(), tabled.len());
    for (i, &kind) in tabled.iter().enumerate() {
        let (_, batch) = got.iter().find(|(k, _)| *k == kind).expect("a table");
        assert_eq!(batch.num_rows(), i % 3 + 1, "{kind}");
        let schema = batch.schema();
        let cols = columns(kind);
        assert_eq!(schema.fields().len(), cols.len() + 1, "{kind}");
        for (field, col) in schema.fields().iter().zip(cols) {
            assert_eq!(field.name(), col.title, "{kind}");
            assert_eq!(
                field.metadata().get("unit").map(String::as_str),
                Some(col.unit)
            );
        }
        assert_eq!(schema.field(cols.len()).name(), UTC_COLUMN);
        assert_eq!(
            schema.metadata().get("message").map(String::as_str),
            Some(kind.name())
        );
        let ts = batch
            .column(0)
            .as_any()
            .downcast_ref::<Int64Array>()
            .unwrap();
        let expected: Vec<i64> = (0..batch.num_rows() as i64).map(|s| s * 1000).collect();
        assert_eq!(ts.values().to_vec(), expected, "{kind}");
    }
}

#[test]
fn values_are_those_the_logger_writes_in_full_precision() {
    let nav = EkfNav {
        timestamp: 10,
        velocity: [1.5, -2.25, 0.125],
        velocity_std: [0.1, 0.2, 0.3],
        position: [48.858_370_123_456_78, 2.294_481_987_654_32, 35.123_456_789],
        undulation: 44.5,
        position_std: [0.01, 0.02, 0.03],
        status: 0x1234_5678,
    };
    let euler = EkfEuler {
        timestamp: 20,
        euler: [0.1, -0.2, 3.0],
        euler_std: [0.001, 0.002, 0.003],
        status: 7,
        mag_declination: Some(0.05),
        mag_inclination: None,
    };
    let imu = ImuData {
        timestamp: 30,
        status: 0x00ff,
        accelerometers: [0.1, 0.2, 9.81],
        gyroscopes: [0.01, -0.02, 0.03],
        temperature: 25.5,
        ..ImuData::default()
    };
    let short = ImuShort {
        timestamp: 40,
        status: 0,
        delta_velocity: [1_048_576, -524_288, 0],
        delta_angle: [67_108_864, 0, 0],
        temperature: 256 * 20,
    };
    let pos = GnssPos {
        timestamp: 50,
        status: 7 << 6,
        time_of_week: 123_456,
        latitude: -33.123_456_789_012,
        longitude: 151.987_654_321_098,
        altitude: 12.345,
        num_sv_used: Some(14),
        ..GnssPos::default()
    };
    let mut log = Vec::new();
    for r in [
        Record::EkfNav(nav.clone()),
        Record::EkfEuler(euler.clone()),
        Record::ImuData(imu.clone()),
        Record::ImuShort(short),
        Record::Gps1Pos(pos.clone()),
    ] {
        log.extend(encode_frame(&r, 0).unwrap());
    }
    let got = batches(&log, 10);
    let table = |name: &str| {
        got.iter()
            .find(|(k, _)| k.name() == name)
            .map(|(_, b)| b.clone())
            .expect(name)
    };
    let b = table("ekfNav");
    assert_eq!(f64s(&b, "latitude"), [nav.position[0]]);
    assert_eq!(f64s(&b, "longitude"), [nav.position[1]]);
    assert_eq!(f64s(&b, "velE"), [-2.25]);
    assert_eq!(f64s(&b, "undulation"), [44.5]);
    let status = b.column_by_name("status").unwrap();
    let status = status.as_any().downcast_ref::<UInt32Array>().unwrap();
    assert_eq!(status.value(0), 0x1234_5678);

    let b = table("ekfEuler");
    let deg = |r: f32| f64::from(r).to_degrees();
    assert!((f64s(&b, "roll")[0] - deg(0.1)).abs() < 1e-12);
    assert!((f64s(&b, "yaw")[0] - deg(3.0)).abs() < 1e-12);
    assert!((f64s(&b, "magHeading")[0] - (deg(3.0) - deg(0.05))).abs() < 1e-9);
    // Absent after a declination present: NaN on the wire, as the vendor writes it.
    let incl = b.column_by_name("magIncl").unwrap();
    assert!(incl.is_null(0) || f64s(&b, "magIncl")[0].is_nan());

    let b = table("imuData");
    assert_eq!(f64s(&b, "accelZ"), [f64::from(9.81f32)]);
    assert!((f64s(&b, "gyroY")[0] - deg(-0.02)).abs() < 1e-12);
    let st = b.column_by_name("status").unwrap();
    assert_eq!(
        st.as_any().downcast_ref::<UInt16Array>().unwrap().value(0),
        0xff
    );

    let b = table("imuShort");
    assert_eq!(f64s(&b, "accelX"), [1.0]);
    assert_eq!(f64s(&b, "accelY"), [-0.5]);
    assert!((f64s(&b, "gyroX")[0] - 1f64.to_degrees()).abs() < 1e-12);
    assert_eq!(f64s(&b, "temperature"), [20.0]);

    let b = table("gps1Pos");
    assert_eq!(f64s(&b, "latitude"), [pos.latitude]);
    assert_eq!(f64s(&b, "longitude"), [pos.longitude]);
    assert_eq!(b.schema().field(0).name(), "timestamp");
}

#[test]
fn two_hundred_thousand_imu_short_records_come_in_bounded_batches() {
    let mut log = Vec::new();
    for t in 0..200_000u32 {
        let r = Record::ImuShort(ImuShort {
            timestamp: t * 5000,
            ..ImuShort::default()
        });
        log.extend(encode_frame(&r, 0).unwrap());
    }
    let got = batches(&log, 65_536);
    let rows: Vec<usize> = got.iter().map(|(_, b)| b.num_rows()).collect();
    assert_eq!(rows, [65_536, 65_536, 65_536, 3_392]);
    // The u32 timestamp wraps (at 4295 s): the table's goes on.
    let last = got.last().unwrap().1.column(0).clone();
    let last = last.as_any().downcast_ref::<Int64Array>().unwrap();
    assert_eq!(last.value(last.len() - 1), 199_999 * 5000);
}

#[test]
fn the_utc_column_follows_the_latest_valid_utc_time() {
    let utc = |timestamp: u32, second: u8, valid: bool| {
        Record::UtcTime(UtcTime {
            timestamp,
            status: if valid { 2 << 6 } else { 0 },
            year: 2026,
            month: 1,
            day: 2,
            hour: 3,
            minute: 4,
            second,
            nanosecond: 500_000_000,
            ..UtcTime::default()
        })
    };
    let nav = |timestamp: u32| {
        Record::EkfNav(EkfNav {
            timestamp,
            ..EkfNav::default()
        })
    };
    let mut log = Vec::new();
    for r in [
        nav(500_000),
        utc(900_000, 0, false),
        utc(1_000_000, 5, true),
        nav(1_500_000),
        utc(2_000_000, 6, true),
        nav(2_250_000),
    ] {
        log.extend(encode_frame(&r, 0).unwrap());
    }
    let got = batches(&log, 100);
    let (_, nav_batch) = got.iter().find(|(k, _)| k.name() == "ekfNav").unwrap();
    let utc_col = nav_batch.column_by_name(UTC_COLUMN).unwrap();
    let utc_col = utc_col
        .as_any()
        .downcast_ref::<TimestampMicrosecondArray>()
        .unwrap();
    // 2026-01-02T03:04:05.5Z
    let t0 = 1_767_323_045_500_000i64;
    assert!(utc_col.is_null(0));
    assert_eq!(utc_col.value(1), t0 + 500_000);
    assert_eq!(utc_col.value(2), t0 + 1_000_000 + 250_000);
    let (_, utc_batch) = got.iter().find(|(k, _)| k.name() == "utcTime").unwrap();
    let col = utc_batch.column_by_name(UTC_COLUMN).unwrap();
    assert!(col.is_null(0));
    assert!(!col.is_null(1));
}

#[test]
fn csv_has_titles_units_and_shortest_numbers() {
    let nav = EkfNav {
        timestamp: 10,
        velocity: [1.5, 0.1, 0.0],
        position: [48.5, 2.25, 35.0],
        ..EkfNav::default()
    };
    let log = encode_frame(&Record::EkfNav(nav), 0).unwrap();
    let got = batches(&log, 10);
    let mut w = CsvWriter::new(Vec::new());
    w.write(&got[0].1).unwrap();
    let text = String::from_utf8(w.finish().unwrap()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3);
    assert!(lines[0].starts_with("timestamp,status,velN,velE,velD,"));
    assert!(lines[0].ends_with(",undulation,utcTime"));
    assert!(lines[1].starts_with("(us),(na),(m.s^-1),"));
    assert!(lines[1].ends_with(",(m),(us)"));
    assert_eq!(lines[2], "10,0,1.5,0.1,0,0,0,0,48.5,2.25,35,0,0,0,0,");
}

/// Every message as a JSON line: valid JSON, its name, and the columns of its table
/// under their titles, in order (the same layout as the tables).
#[test]
fn every_record_is_one_json_object_with_its_table_columns() {
    use svc_logs::columns::columns;
    use svc_logs::json::record_json;
    for &kind in svc_logs::MessageKind::ALL {
        let record = if kind == MessageKind::SessionInfo {
            Record::SessionInfo(svc_logs::records::SessionInfo {
                page_count: 1,
                ..Default::default()
            })
        } else {
            record_of(kind, 3)
        };
        let line = record_json(&record);
        assert!(!line.contains('\n'), "{line}");
        let value: serde_json::Value =
            serde_json::from_str(&line).unwrap_or_else(|e| panic!("{kind}: {e}: {line}"));
        let object = value.as_object().expect("an object");
        assert_eq!(object["message"], kind.name());
        let titles: Vec<&str> = columns(kind).iter().map(|c| c.title).collect();
        if !titles.is_empty() {
            // message, then the table's columns (the timestamp first).
            let keys: Vec<&str> = object.keys().map(String::as_str).collect();
            let mut expected = vec!["message"];
            expected.extend(&titles);
            let mut sorted_keys = keys.clone();
            sorted_keys.sort_unstable();
            let mut sorted_expected = expected.clone();
            sorted_expected.sort_unstable();
            assert_eq!(sorted_keys, sorted_expected, "{kind}");
        }
    }
}

/// Values as the tables give them: angles in degrees, a NaN as null, text escaped.
#[test]
fn json_values_are_those_of_the_tables() {
    use svc_logs::json::record_json;
    use svc_logs::records::{Diag, EkfEuler};
    let euler = EkfEuler {
        timestamp: 7,
        euler: [std::f32::consts::FRAC_PI_2, f32::NAN, 0.0],
        ..EkfEuler::default()
    };
    let value: serde_json::Value =
        serde_json::from_str(&record_json(&svc_logs::Record::EkfEuler(euler))).expect("JSON");
    assert_eq!(value["timestamp"], 7);
    assert!(
        (value["roll"].as_f64().expect("roll") - 90.0).abs() < 1e-4,
        "{value}"
    );
    assert!(value["pitch"].is_null(), "{value}");
    let diag = Diag {
        timestamp: 1,
        kind: 1,
        error_code: 4,
        message: "line \"one\"\n\ttwo\u{1}".to_owned(),
    };
    let value: serde_json::Value =
        serde_json::from_str(&record_json(&svc_logs::Record::Diag(diag))).expect("JSON");
    assert_eq!(value["text"], "line \"one\"\n\ttwo\u{1}");
    assert_eq!(value["errorCode"], 4);
}
