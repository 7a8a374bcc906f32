//! `tests/data/recording.sbg`, the recording the bindings' tests read (they have no
//! encoder of their own): exactly what [`recording`] writes. Run with
//! `SVC_UPDATE_FIXTURES=1` to write it again after a change.
//!
//! Five seconds of a unit logging: `utcTime` at 1 Hz (UTC known from the second record
//! on), `ekfNav` and `ekfEuler` at 10 Hz, `imuShort` at 100 Hz; then 20 bytes of
//! garbage, a frame with a bad CRC, and a truncated last frame.

use std::path::PathBuf;

use svc_logs::records::{EkfEuler, EkfNav, ImuShort, UtcTime};
use svc_logs::{LogReader, MessageKind, Record, encode_frame};

fn path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/recording.sbg")
}

/// The recording, byte for byte.
fn recording() -> Vec<u8> {
    let mut records = Vec::new();
    for ms in (0..5_000_u32).step_by(10) {
        let t = 1_000_000 + ms * 1000;
        if ms % 1000 == 0 {
            let second = u8::try_from(ms / 1000).expect("a second");
            records.push(Record::UtcTime(UtcTime {
                timestamp: t,
                // Clock steering, UTC initialized from the second record on.
                status: (2 << 1) | if ms == 0 { 0 } else { 2 << 6 },
                year: 2026,
                month: 11,
                day: 29,
                hour: 10,
                minute: 0,
                second,
                nanosecond: 0,
                gps_tow: 123_000_000 + ms,
                ..UtcTime::default()
            }));
        }
        if ms % 100 == 0 {
            let k = f64::from(ms) / 1000.0;
            records.push(Record::EkfNav(EkfNav {
                timestamp: t,
                velocity: [1.5, 0.5, 0.0],
                velocity_std: [0.02, 0.02, 0.03],
                position: [48.8566 + k * 1.0e-5, 2.3522 + k * 2.0e-5, 35.0],
                undulation: 45.25,
                position_std: [0.5, 0.5, 0.8],
                status: 4,
            }));
            records.push(Record::EkfEuler(EkfEuler {
                timestamp: t,
                euler: [0.01, -0.02, 0.5 + k as f32 * 0.01],
                euler_std: [0.001, 0.001, 0.01],
                status: 4,
                ..EkfEuler::default()
            }));
        }
        let ms_i = i32::try_from(ms).expect("small");
        records.push(Record::ImuShort(ImuShort {
            timestamp: t,
            status: 0,
            delta_velocity: [ms_i, -ms_i, 10_284_114],
            delta_angle: [0, 0, ms_i * 3],
            temperature: 25 * 256,
        }));
    }
    let mut bytes = Vec::new();
    for (i, record) in records.iter().enumerate() {
        bytes.extend(encode_frame(record, (i & 0xF) as u8).expect("a frame"));
    }
    bytes.extend(b"garbage between frames");
    let mut bad = encode_frame(&records[1], 0).expect("a frame");
    let crc = bad.len() - 3;
    bad[crc] ^= 0xFF;
    bytes.extend(bad);
    let last = encode_frame(&records[2], 0).expect("a frame");
    bytes.extend(&last[..last.len() - 4]);
    bytes
}

#[test]
fn the_committed_recording_is_what_this_test_writes() {
    let fresh = recording();
    if std::env::var_os("SVC_UPDATE_FIXTURES").is_some() {
        std::fs::write(path(), &fresh).expect("write the fixture");
    }
    let committed = std::fs::read(path()).expect("tests/data/recording.sbg");
    assert!(
        committed == fresh,
        "tests/data/recording.sbg differs from what this test writes: run it with SVC_UPDATE_FIXTURES=1"
    );
    let mut reader = LogReader::new(committed.as_slice());
    let mut counts = std::collections::BTreeMap::new();
    while let Some(record) = reader.next_record().expect("reads") {
        *counts.entry(record.kind()).or_insert(0) += 1;
    }
    assert_eq!(counts[&MessageKind::ImuShort], 500);
    assert_eq!(counts[&MessageKind::EkfNav], 50);
    assert_eq!(counts[&MessageKind::EkfEuler], 50);
    assert_eq!(counts[&MessageKind::UtcTime], 5);
    let stats = reader.stats();
    assert_eq!((stats.bad_crc, stats.truncated), (1, 1), "{stats:?}");
}
