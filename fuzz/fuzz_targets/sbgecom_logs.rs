//! The sbgECom log reader (svc-logs): arbitrary bytes fed in arbitrary chunks to the
//! push decoder, and read through the pull reader.
//!
//! Input: `[chunk, stream...]`; `chunk`: the size of the pieces the stream is fed in
//! (0: all at once), also the reader's chunk length.
//!
//! Properties checked:
//! 1. nothing panics;
//! 2. the counters account for every byte (valid frames + skipped = fed, nothing held
//!    after the end) and every message (records + unknown + invalid payloads);
//! 3. the records, counters and faults do not depend on the chunking, nor on pushing
//!    or pulling;
//! 4. every record re-encodes to a payload that decodes to the same bytes again;
//! 5. the faults are in offset order and within the input, their skipped spans add
//!    up to the skipped bytes (when none was dropped).
#![no_main]

use libfuzzer_sys::fuzz_target;
use svc_logs::{Fault, LogDecoder, LogReader, MAX_FAULTS, decode, encode};

fuzz_target!(|input: &[u8]| {
    let [chunk, stream @ ..] = input else {
        return;
    };
    let chunk = usize::from(*chunk);

    let mut chunked = LogDecoder::new();
    if chunk == 0 {
        chunked.feed(stream);
    } else {
        for piece in stream.chunks(chunk) {
            chunked.feed(piece);
        }
    }
    chunked.finish();
    let mut whole = LogDecoder::new();
    whole.feed(stream);
    whole.finish();

    let s = chunked.stats();
    assert_eq!(s.bytes, stream.len() as u64);
    assert_eq!(s.buffered_bytes, 0);
    assert_eq!(s.frame_bytes + s.skipped_bytes, s.bytes, "{s:?}");
    assert_eq!(
        s.messages,
        s.records + s.unknown + s.invalid_payload,
        "{s:?}"
    );
    assert_eq!(s, whole.stats(), "chunking changed the counters");
    assert_eq!(
        chunked.faults(),
        whole.faults(),
        "chunking changed the faults"
    );

    let faults = chunked.faults().to_vec();
    assert!(faults.len() <= MAX_FAULTS);
    assert!(faults.windows(2).all(|w| w[0].offset() <= w[1].offset()));
    assert!(faults.iter().all(|f| f.offset() < s.bytes.max(1)));
    if chunked.faults_dropped() == 0 {
        let skipped: u64 = faults
            .iter()
            .map(|f| match f {
                Fault::Skipped { len, .. } => *len,
                _ => 0,
            })
            .sum();
        assert_eq!(skipped, s.skipped_bytes);
    }

    let mut reader = LogReader::with_chunk_len(stream, chunk.max(1));
    let mut count = 0u64;
    while let Some(located) = chunked.next_located() {
        let pulled = reader
            .next_located()
            .ok()
            .flatten()
            .unwrap_or_else(|| panic!("the reader missed a record"));
        assert_eq!(pulled.offset, located.offset);
        let (class, id, payload) = encode(&located.record);
        assert_eq!(encode(&pulled.record), (class, id, payload.clone()));
        match decode(class, id, &payload) {
            Ok(again) => assert_eq!(encode(&again).2, payload),
            Err(error) => panic!("a record's own encoding does not decode: {error}"),
        }
        count += 1;
    }
    assert!(matches!(reader.next_located(), Ok(None)));
    assert_eq!(count, s.records);
    assert_eq!(reader.stats(), s);
    assert_eq!(reader.faults(), faults.as_slice());
});
