//! The unit's recordings (`svc_logs`): a generated 64 MiB sbgECom log of a session
//! (imuData 200 Hz, ekfEuler and ekfNav 50 Hz, gps1Pos 5 Hz, utcTime 1 Hz, about 55
//! minutes) decoded to Arrow tables, in bytes of log per second.
//!
//! In the same run, the floor: `svc_protocol::serial::Decoder` framing alone (sync,
//! CRC, each message lent from the input by `push_with`), which every decoder of these
//! logs pays, and the same framing queueing a `Message` per frame; then the typed
//! records (`LogReader`), the Arrow batches (`TableReader`, each payload decoded
//! straight into its table's columns), the same batches built from the records
//! (`LogReader` then `Tables::push`), and the batches written as CSV to a sink
//! (`CsvWriter`, the text formatting included).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use svc_logs::files::CsvWriter;
use svc_logs::records::{EkfEuler, EkfNav, GnssPos, ImuData, UtcTime};
use svc_logs::tables::{TableReader, Tables};
use svc_logs::{LogReader, Record, encode_frame};
use svc_protocol::serial::Decoder;

const LOG_BYTES: usize = 64 * 1024 * 1024;
const CHUNK: usize = 64 * 1024;

/// A session log of about `LOG_BYTES`: 5 ms ticks from power-up.
fn session() -> Vec<u8> {
    let mut log = Vec::with_capacity(LOG_BYTES + 4096);
    let mut tick: u32 = 0;
    while log.len() < LOG_BYTES {
        let t = tick.wrapping_mul(5000);
        let x = f64::from(tick) * 1e-3;
        let frame = |r: Record| encode_frame(&r, 0).expect("encodes");
        log.extend(frame(Record::ImuData(ImuData {
            timestamp: t,
            status: 0x7f,
            accelerometers: [0.01 * x.sin() as f32, 0.02, 9.81],
            gyroscopes: [0.001, -0.002 * x.cos() as f32, 0.0005],
            temperature: 31.5,
            ..ImuData::default()
        })));
        if tick.is_multiple_of(4) {
            log.extend(frame(Record::EkfEuler(EkfEuler {
                timestamp: t,
                euler: [0.01, -0.02, x.sin() as f32],
                euler_std: [0.001, 0.001, 0.005],
                status: 0x10_0000,
                mag_declination: Some(0.02),
                mag_inclination: Some(1.1),
            })));
            log.extend(frame(Record::EkfNav(EkfNav {
                timestamp: t,
                velocity: [1.2, 0.3, -0.01],
                velocity_std: [0.02, 0.02, 0.03],
                position: [48.85 + x * 1e-7, 2.29 + x * 1e-7, 35.0 + x.sin()],
                undulation: 44.6,
                position_std: [0.02, 0.02, 0.04],
                status: 0x10_0000,
            })));
        }
        if tick.is_multiple_of(40) {
            log.extend(frame(Record::Gps1Pos(GnssPos {
                timestamp: t,
                status: 7 << 6,
                time_of_week: tick * 5,
                latitude: 48.85,
                longitude: 2.29,
                altitude: 35.0,
                num_sv_used: Some(18),
                num_sv_tracked: Some(22),
                ..GnssPos::default()
            })));
        }
        if tick.is_multiple_of(200) {
            log.extend(frame(Record::UtcTime(UtcTime {
                timestamp: t,
                status: 2 << 6,
                year: 2026,
                month: 11,
                day: 29,
                second: (tick / 200 % 60) as u8,
                ..UtcTime::default()
            })));
        }
        tick += 1;
    }
    log
}

fn framing(log: &[u8]) -> usize {
    let mut decoder = Decoder::new();
    let mut n = 0;
    for chunk in log.chunks(CHUNK) {
        decoder.push_with(chunk, |_, message| n += message.data.len());
    }
    n
}

fn framing_queued(log: &[u8]) -> usize {
    let mut decoder = Decoder::new();
    let mut n = 0;
    for chunk in log.chunks(CHUNK) {
        decoder.push(chunk);
        while let Some(message) = decoder.next_message() {
            n += message.data.len();
        }
    }
    n
}

fn records(log: &[u8]) -> usize {
    LogReader::new(log).map(|r| usize::from(r.is_ok())).sum()
}

fn tables(log: &[u8]) -> usize {
    TableReader::new(log)
        .map(|b| b.map_or(0, |(_, batch)| batch.num_rows()))
        .sum()
}

fn tables_of_records(log: &[u8]) -> usize {
    let mut tables = Tables::new();
    let mut rows = 0;
    for record in LogReader::new(log) {
        tables.push(&record.expect("reads")).expect("a row");
        while let Some((_, batch)) = tables.next_batch() {
            rows += batch.num_rows();
        }
    }
    tables.finish().expect("the last batches");
    while let Some((_, batch)) = tables.next_batch() {
        rows += batch.num_rows();
    }
    rows
}

fn csv(log: &[u8]) -> usize {
    let mut writer = CsvWriter::new(std::io::sink());
    let mut rows = 0;
    for batch in TableReader::new(log) {
        let (_, batch) = batch.expect("decodes");
        writer.write(&batch).expect("writes");
        rows += batch.num_rows();
    }
    rows
}

fn bench(c: &mut Criterion) {
    let log = session();
    let mut group = c.benchmark_group("logs_64MiB");
    group.throughput(Throughput::Bytes(log.len() as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    group.bench_function("framing_floor", |b| b.iter(|| black_box(framing(&log))));
    group.bench_function("framing_queued", |b| {
        b.iter(|| black_box(framing_queued(&log)))
    });
    group.bench_function("records", |b| b.iter(|| black_box(records(&log))));
    group.bench_function("tables", |b| b.iter(|| black_box(tables(&log))));
    group.bench_function("tables_of_records", |b| {
        b.iter(|| black_box(tables_of_records(&log)));
    });
    group.bench_function("tables_csv", |b| b.iter(|| black_box(csv(&log))));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
