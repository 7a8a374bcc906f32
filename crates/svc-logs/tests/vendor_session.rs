//! `tests/data/vendor-session.sbg`: a session written by the vendor's own sbgECom library
//! (its `sbgEComLog*WriteToStream` functions and `sbgEComProtocolSend`; how it was made:
//! `tests/data/README.md`). The decoder reads what the vendor's library writes, field
//! for field, and its encoder writes the same bytes back.

use std::collections::BTreeMap;
use std::path::PathBuf;

use svc_logs::records::{ClockState, GnssPosType, UtcStatus, UtcTime};
use svc_logs::{LogReader, MessageKind, Record, encode_frame};

fn session() -> Vec<u8> {
    let path =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/vendor-session.sbg");
    std::fs::read(path).expect("tests/data/vendor-session.sbg")
}

#[test]
fn every_frame_of_the_vendor_library_decodes_and_encodes_back_to_its_bytes() {
    let bytes = session();
    let mut reader = LogReader::new(bytes.as_slice());
    let mut counts = BTreeMap::new();
    let mut end = 0;
    while let Some(located) = reader.next_located().expect("reads") {
        let at = usize::try_from(located.offset).unwrap();
        assert_eq!(at, end, "frames follow each other");
        let frame = encode_frame(&located.record, 0).expect("encodes");
        assert_eq!(
            &bytes[at..at + frame.len()],
            frame.as_slice(),
            "{:?} at {at}",
            located.record
        );
        end = at + frame.len();
        *counts.entry(located.record.kind()).or_insert(0) += 1;
    }
    assert_eq!(end, bytes.len());
    let stats = reader.stats();
    assert_eq!(
        (
            stats.bad_crc,
            stats.truncated,
            stats.unknown,
            stats.skipped_bytes
        ),
        (0, 0, 0, 0),
        "{stats:?}"
    );
    assert_eq!(counts[&MessageKind::UtcTime], 31);
    assert_eq!(counts[&MessageKind::EkfEuler], 601);
    assert_eq!(counts[&MessageKind::EkfNav], 601);
    assert_eq!(counts[&MessageKind::Gps1Pos], 151);
}

#[test]
fn the_fields_are_the_values_the_library_was_given() {
    let bytes = session();
    let mut reader = LogReader::new(bytes.as_slice());
    let (mut utc, mut nav, mut euler, mut pos) = (None, None, None, None);
    while let Some(record) = reader.next_record().expect("reads") {
        match record {
            Record::UtcTime(r) if utc.is_none() => utc = Some(r),
            Record::EkfNav(r) if nav.is_none() => nav = Some(r),
            Record::EkfEuler(r) if euler.is_none() => euler = Some(r),
            Record::Gps1Pos(r) if pos.is_none() => pos = Some(r),
            _ => {}
        }
    }
    let (utc, nav, euler, pos) = (utc.unwrap(), nav.unwrap(), euler.unwrap(), pos.unwrap());
    // 2020-06-15 15:20:00 UTC, 600 s after power-up, 141618 s into the GPS week.
    assert_eq!(utc.timestamp, 600_000_000);
    assert_eq!(
        (
            utc.year, utc.month, utc.day, utc.hour, utc.minute, utc.second
        ),
        (2020, 6, 15, 15, 20, 0)
    );
    assert_eq!(utc.gps_tow, 141_618_000);
    assert_eq!(utc.clock_state(), Some(ClockState::Valid));
    assert_eq!(utc.utc_status(), Some(UtcStatus::Initialized));
    assert_eq!(
        utc.status & UtcTime::UTC_IS_ACCURATE,
        UtcTime::UTC_IS_ACCURATE
    );
    assert_eq!(nav.timestamp, 600_000_000);
    assert_eq!(nav.position, [48.9331, 2.168, 52.0]);
    assert_eq!(nav.undulation, 44.7_f32);
    assert_eq!(nav.position_std, [0.015, 0.014, 0.025]);
    // NAV_POSITION with attitude, heading, velocity and position valid, GPS1 position
    // used, alignment valid.
    assert_eq!(nav.status, 0x0800_08F4);
    assert_eq!(euler.euler[2], 0.3_f32);
    assert_eq!(pos.latitude, 48.9331);
    assert_eq!(pos.pos_type(), Some(GnssPosType::RtkInt));
    assert_eq!(pos.num_sv_used, Some(21));
}
