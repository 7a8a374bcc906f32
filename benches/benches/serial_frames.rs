//! sbgECom framing of the unit's REST API over a serial link (`svc_core::serial`):
//! encode and decode throughput, in bytes on the wire, for a 200-byte request, a reply
//! filling one standard frame (4 KiB) and a 64 KiB reply in large frames.
//!
//! Decoding goes through the streaming `Decoder` (then the REST layout), fed the whole
//! buffer at once and in 64-byte reads (a UART driver's typical chunk). No crate does
//! the same job to compare with; the reference in the same run is the CRC-16/KERMIT
//! pass alone over the same bytes, the floor of any decoder that checks every frame.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use svc_core::serial::{
    Decoder, ID_GET, MAX_PAYLOAD, RestReply, RestRequest, crc16_kermit, decode_reply,
};

/// A JSON-looking body of `len` bytes.
fn json_body(len: usize) -> Vec<u8> {
    let unit = br#"{"aiding":{"gnss1":{"model":"internal","leverArm":[0.12,-0.3,1.05]}}},"#;
    unit.iter().copied().cycle().take(len).collect()
}

enum Case {
    Request(RestRequest),
    Reply(RestReply),
}

impl Case {
    fn encode(&self) -> Vec<u8> {
        match self {
            Case::Request(request) => request.encode(3),
            Case::Reply(reply) => reply.encode(ID_GET, 3),
        }
    }

    /// Decodes one message from `bytes` pushed in `chunk`-byte pieces; returns the body
    /// length so nothing is optimised away.
    fn decode(&self, bytes: &[u8], chunk: usize) -> usize {
        let mut decoder = Decoder::new();
        for piece in bytes.chunks(chunk) {
            decoder.push(piece);
        }
        let Some(message) = decoder.next_message() else {
            panic!("no message decoded");
        };
        match self {
            Case::Request(_) => match RestRequest::decode(&message) {
                Ok(request) => request.body.map_or(0, |b| b.len()),
                Err(error) => panic!("{error}"),
            },
            Case::Reply(_) => match decode_reply(&message, ID_GET) {
                Ok(reply) => reply.body.len(),
                Err(error) => panic!("{error}"),
            },
        }
    }
}

fn cases() -> Vec<(&'static str, Case)> {
    let path = "/api/v1/settings/aiding/gnss1";
    let query = "auth=0123456789abcdef0123456789abcdef&checkOnly=true";
    // A POST whose data (path NUL query NUL body NUL) are 200 bytes.
    let body = 200 - (path.len() + query.len() + 3);
    let request = RestRequest::post(path, query, json_body(body));
    // The largest reply in one standard frame: status + body + NUL = 4086 bytes.
    let reply_4k = RestReply::new(200, json_body(MAX_PAYLOAD - 3));
    let reply_64k = RestReply::new(200, json_body(64 * 1024));
    vec![
        ("request_200B", Case::Request(request)),
        ("reply_4KiB_standard", Case::Reply(reply_4k)),
        ("reply_64KiB_large", Case::Reply(reply_64k)),
    ]
}

fn serial_frames(c: &mut Criterion) {
    let mut group = c.benchmark_group("serial_frames");
    group
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for (name, case) in cases() {
        let bytes = case.encode();
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(BenchmarkId::new("encode", name), &case, |b, case| {
            b.iter(|| black_box(case).encode());
        });
        group.bench_with_input(BenchmarkId::new("decode", name), &bytes, |b, bytes| {
            b.iter(|| case.decode(black_box(bytes), usize::MAX));
        });
        group.bench_with_input(
            BenchmarkId::new("decode_reads_of_64B", name),
            &bytes,
            |b, bytes| b.iter(|| case.decode(black_box(bytes), 64)),
        );
        group.bench_with_input(BenchmarkId::new("crc_only", name), &bytes, |b, bytes| {
            b.iter(|| crc16_kermit(black_box(bytes)));
        });
    }
    group.finish();
}

criterion_group!(benches, serial_frames);
criterion_main!(benches);
