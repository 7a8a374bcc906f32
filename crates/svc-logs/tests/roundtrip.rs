//! Property tests: random records of every kind, encoded into frames, interleaved with
//! garbage, bad-CRC frames, unknown messages and payloads too short, come back exactly,
//! at their offsets, with the faults counted, in any chunking.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failure

use proptest::prelude::*;
use svc_logs::files::CsvWriter;
use svc_logs::records::{Diag, GnssSat, RawData, SatEntry, SatSignal, SessionInfo};
use svc_logs::tables::{TableReader, Tables};
use svc_logs::{
    Fault, LogDecoder, LogReader, MessageKind, Record, decode, decode_kind, encode, encode_frame,
};
use svc_protocol::serial::{CLASS_REST, SerialError, crc16_kermit, encode_message};

/// The payload lengths of the versions the vendor documents, for the kinds with
/// optional trailing fields; the others have one length, their minimum.
fn versions(kind: MessageKind) -> Vec<usize> {
    use MessageKind as K;
    match kind {
        K::Status => vec![22, 26, 27],
        K::UtcTime => vec![21, 33],
        K::PtpStatus => vec![76, 82],
        K::EkfEuler => vec![32, 40],
        K::EkfQuat => vec![36, 44],
        K::ShipMotion | K::ShipMotionHp => vec![32, 46],
        K::Gps1Pos | K::Gps2Pos => vec![52, 57, 62],
        K::Gps1Hdt | K::Gps2Hdt => vec![26, 30, 31, 32],
        K::AirData => vec![14, 26],
        other => vec![other.min_payload_len()],
    }
}

fn is_variable(kind: MessageKind) -> bool {
    use MessageKind as K;
    matches!(
        kind,
        K::Diag | K::SessionInfo | K::Gps1Raw | K::Gps2Raw | K::RtcmRaw | K::Gps1Sat | K::Gps2Sat
    )
}

/// A record of a fixed-layout kind: random bytes of one of its versions' lengths (every
/// field is random bits, NaNs included).
fn fixed_record() -> impl Strategy<Value = Record> {
    let kinds: Vec<MessageKind> = MessageKind::ALL
        .iter()
        .copied()
        .filter(|k| !is_variable(*k))
        .collect();
    proptest::sample::select(kinds)
        .prop_flat_map(|kind| (Just(kind), proptest::sample::select(versions(kind))))
        .prop_flat_map(|(kind, len)| (Just(kind), prop::collection::vec(any::<u8>(), len)))
        .prop_map(|(kind, bytes)| {
            let record = decode_kind(kind, &bytes).unwrap();
            // Each documented version reads and writes back to its very bytes.
            assert_eq!(encode(&record).2, bytes, "{kind}");
            record
        })
}

fn raw() -> impl Strategy<Value = RawData> {
    prop_oneof![
        8 => prop::collection::vec(any::<u8>(), 0..200),
        1 => prop::collection::vec(any::<u8>(), 4000..9000),
    ]
    .prop_map(|data| RawData { data })
}

fn sat_list() -> impl Strategy<Value = GnssSat> {
    let signal = (any::<u8>(), any::<u8>(), any::<u8>()).prop_map(|(id, flags, snr)| SatSignal {
        id,
        flags,
        snr,
    });
    let sat = (
        any::<u8>(),
        any::<i8>(),
        any::<u16>(),
        any::<u16>(),
        prop::collection::vec(signal, 0..=8),
    )
        .prop_map(|(id, elevation, azimuth, flags, signals)| SatEntry {
            id,
            elevation,
            azimuth,
            flags,
            signals,
        });
    (
        any::<u32>(),
        any::<u32>(),
        prop::collection::vec(sat, 0..=64),
    )
        .prop_map(|(timestamp, reserved, satellites)| GnssSat {
            timestamp,
            reserved,
            satellites,
        })
}

fn record() -> impl Strategy<Value = Record> {
    prop_oneof![
        10 => fixed_record(),
        1 => (any::<u32>(), any::<u8>(), any::<u8>(), "[^\u{0}]{0,80}").prop_map(
            |(timestamp, kind, error_code, message)| Record::Diag(Diag {
                timestamp,
                kind,
                error_code,
                message,
            })
        ),
        1 => (0u16..5, 1u16..6, prop::collection::vec(any::<u8>(), 0..=64)).prop_map(
            |(index, extra, data)| Record::SessionInfo(SessionInfo {
                page_index: index,
                page_count: index + extra,
                data,
            })
        ),
        1 => raw().prop_map(Record::Gps1Raw),
        1 => raw().prop_map(Record::Gps2Raw),
        1 => raw().prop_map(Record::RtcmRaw),
        1 => sat_list().prop_map(Record::Gps1Sat),
        1 => sat_list().prop_map(Record::Gps2Sat),
    ]
}

/// One piece of the stream.
#[derive(Debug, Clone)]
enum Item {
    Record(Record),
    /// Bytes that hold no 0xFF, so no sync.
    Garbage(Vec<u8>),
    /// A frame whose CRC is wrong, and whose bytes after the sync hold no 0xFF.
    BadCrc(u8, Vec<u8>),
    /// A valid frame of a class and id of no known message.
    Unknown(u8, u8, Vec<u8>),
    /// A known message whose payload is one byte short or more.
    TooShort(MessageKind, usize),
}

fn item() -> impl Strategy<Value = Item> {
    let short_kinds: Vec<MessageKind> = MessageKind::ALL
        .iter()
        .copied()
        .filter(|k| k.min_payload_len() > 0)
        .collect();
    prop_oneof![
        12 => record().prop_map(Item::Record),
        2 => prop::collection::vec(0u8..0xFF, 1..40).prop_map(Item::Garbage),
        2 => (0u8..0xFF, prop::collection::vec(0u8..0xFF, 0..60))
            .prop_map(|(id, data)| Item::BadCrc(id, data)),
        2 => prop_oneof![
            (Just(CLASS_REST), any::<u8>()),
            (1u8..0x7F, any::<u8>()),
            (Just(0u8), prop_oneof![Just(0u8), Just(56u8), 58u8..=255]),
        ]
        .prop_flat_map(|(class, id)| (Just(class), Just(id), prop::collection::vec(any::<u8>(), 0..50)))
        .prop_map(|(class, id, data)| Item::Unknown(class, id, data)),
        1 => (proptest::sample::select(short_kinds), any::<prop::sample::Index>())
            .prop_map(|(kind, index)| Item::TooShort(kind, index.index(kind.min_payload_len()))),
    ]
}

/// A frame of class 0 with a wrong CRC holding no 0xFF after its sync.
fn bad_crc_frame(id: u8, data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(data.len()).unwrap();
    let mut body = vec![id, 0x00];
    body.extend_from_slice(&len.to_le_bytes());
    body.extend_from_slice(data);
    let good = crc16_kermit(&body);
    let wrong: u16 = if good == 0x1234 { 0x1235 } else { 0x1234 };
    let mut frame = vec![0xFF, 0x5A];
    frame.extend_from_slice(&body);
    frame.extend_from_slice(&wrong.to_le_bytes());
    frame.push(0x33);
    frame
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Expected {
    records: u64,
    unknown: u64,
    invalid_payload: u64,
    bad_crc: u64,
    truncated: u64,
    skipped_bytes: u64,
}

/// The stream, the records sent with their offsets, the counters expected, the offsets
/// of the bad-CRC frames.
type Built = (Vec<u8>, Vec<(u64, Record)>, Expected, Vec<u64>);

fn build(items: &[Item], tail: Option<usize>) -> Built {
    let mut stream = Vec::new();
    let mut records = Vec::new();
    let mut expected = Expected::default();
    let mut bad_offsets = Vec::new();
    for (n, item) in items.iter().enumerate() {
        let at = stream.len() as u64;
        match item {
            Item::Record(record) => {
                stream.extend(encode_frame(record, n as u8).unwrap());
                records.push((at, record.clone()));
                expected.records += 1;
            }
            Item::Garbage(bytes) => {
                stream.extend_from_slice(bytes);
                expected.skipped_bytes += bytes.len() as u64;
            }
            Item::BadCrc(id, data) => {
                let frame = bad_crc_frame(*id, data);
                expected.skipped_bytes += frame.len() as u64;
                expected.bad_crc += 1;
                bad_offsets.push(at);
                stream.extend(frame);
            }
            Item::Unknown(class, id, data) => {
                stream.extend(encode_message(*id, *class, data, 0));
                expected.unknown += 1;
            }
            Item::TooShort(kind, len) => {
                stream.extend(encode_message(kind.id(), kind.class(), &vec![0; *len], 0));
                expected.invalid_payload += 1;
            }
        }
    }
    if let Some(cut) = tail {
        // The start of an event frame (no 0xFF after its sync), cut short.
        let frame = encode_message(24, 0, &[1; 14], 0);
        let cut = 2 + cut % (frame.len() - 3);
        stream.extend_from_slice(&frame[..cut]);
        expected.truncated += 1;
        expected.skipped_bytes += cut as u64;
    }
    (stream, records, expected, bad_offsets)
}

/// Records compare by their bytes (a NaN is not equal to itself).
fn same(a: &Record, b: &Record) -> bool {
    encode(a) == encode(b)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn records_come_back_through_faults(
        items in prop::collection::vec(item(), 0..30),
        tail in prop::option::of(any::<usize>()),
        chunks in prop::collection::vec(1usize..5000, 1..8),
        reader_chunk in 1usize..70_000,
    ) {
        let (stream, sent, expected, bad_offsets) = build(&items, tail);

        // Push-style, in the chunk sizes drawn (cycled).
        let mut decoder = LogDecoder::new();
        let mut rest = stream.as_slice();
        for size in chunks.iter().cycle() {
            if rest.is_empty() {
                break;
            }
            let (now, later) = rest.split_at((*size).min(rest.len()));
            decoder.feed(now);
            rest = later;
        }
        decoder.finish();
        let mut got = Vec::new();
        while let Some(located) = decoder.next_located() {
            got.push((located.offset, located.record));
        }
        prop_assert_eq!(got.len(), sent.len());
        for ((at, record), (sent_at, sent_record)) in got.iter().zip(&sent) {
            prop_assert_eq!(at, sent_at);
            prop_assert!(same(record, sent_record), "{:?} != {:?}", record, sent_record);
        }
        let s = decoder.stats();
        let seen = Expected {
            records: s.records,
            unknown: s.unknown,
            invalid_payload: s.invalid_payload,
            bad_crc: s.bad_crc,
            truncated: s.truncated,
            skipped_bytes: s.skipped_bytes,
        };
        prop_assert_eq!(&seen, &expected);
        prop_assert_eq!((s.bad_etx, s.bad_length, s.page_errors, s.dropped_messages), (0, 0, 0, 0));
        prop_assert_eq!(s.bytes, stream.len() as u64);
        prop_assert_eq!(s.frame_bytes + s.skipped_bytes, s.bytes);
        prop_assert_eq!(s.buffered_bytes, 0);
        prop_assert_eq!(s.messages, s.records + s.unknown + s.invalid_payload);
        let refused: Vec<u64> = decoder
            .faults()
            .iter()
            .filter_map(|f| match f {
                Fault::BadFrame { offset, error: SerialError::BadCrc { .. } } => Some(*offset),
                _ => None,
            })
            .collect();
        prop_assert_eq!(refused, bad_offsets);
        let skipped: u64 = decoder
            .faults()
            .iter()
            .filter_map(|f| match f {
                Fault::Skipped { len, .. } => Some(*len),
                _ => None,
            })
            .sum();
        prop_assert_eq!(skipped, s.skipped_bytes);
        prop_assert!(decoder.faults().windows(2).all(|w| w[0].offset() <= w[1].offset()));

        // Pull-style, from a reader, gives the same.
        let mut reader = LogReader::with_chunk_len(stream.as_slice(), reader_chunk);
        let mut pulled = Vec::new();
        while let Some(located) = reader.next_located().unwrap() {
            pulled.push(located);
        }
        prop_assert_eq!(pulled.len(), sent.len());
        prop_assert_eq!(reader.stats(), s);
        prop_assert_eq!(reader.faults(), decoder.faults());
    }

    #[test]
    fn tables_read_from_the_payloads_are_those_of_the_records(
        items in prop::collection::vec(item(), 0..30),
        tail in prop::option::of(any::<usize>()),
        rows in 1usize..5,
    ) {
        let (stream, _, _, _) = build(&items, tail);
        // Straight from the payloads.
        let mut direct = TableReader::with_batch_rows(stream.as_slice(), rows);
        let mut got = Vec::new();
        while let Some((kind, batch)) = direct.next_batch().unwrap() {
            got.push((kind, batch));
        }
        // Through the records.
        let mut reader = LogReader::new(stream.as_slice());
        let mut tables = Tables::with_batch_rows(rows);
        let mut want = Vec::new();
        while let Some(record) = reader.next_record().unwrap() {
            tables.push(&record).unwrap();
            want.extend(std::iter::from_fn(|| tables.next_batch()));
        }
        tables.finish().unwrap();
        want.extend(std::iter::from_fn(|| tables.next_batch()));
        prop_assert_eq!(got.len(), want.len());
        for ((kind, batch), (want_kind, want_batch)) in got.iter().zip(&want) {
            prop_assert_eq!(kind, want_kind);
            prop_assert_eq!(batch.schema(), want_batch.schema());
            // As text: a NaN is not equal to itself.
            let csv = |batch| {
                let mut writer = CsvWriter::new(Vec::new());
                writer.write(batch).unwrap();
                String::from_utf8(writer.finish().unwrap()).unwrap()
            };
            prop_assert_eq!(csv(batch), csv(want_batch));
        }
        prop_assert_eq!(direct.stats(), reader.stats());
        prop_assert_eq!(direct.faults(), reader.faults());
    }

    #[test]
    fn decode_never_panics_on_any_payload(
        class in 0u8..2,
        id in any::<u8>(),
        payload in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        if let Ok(record) = decode(class, id, &payload) {
            // What decodes encodes to a payload that decodes the same.
            let (c, i, bytes) = encode(&record);
            prop_assert_eq!((c, i), (class, id));
            let again = decode(c, i, &bytes).unwrap();
            prop_assert!(same(&again, &record));
        }
    }
}
