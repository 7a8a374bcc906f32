//! The sbgECom stream decoder (svc-protocol `serial`): arbitrary bytes pushed in
//! arbitrary chunks, large-frame reassembly, and the REST/ACK decoders on what comes
//! out.
//!
//! Input: `[chunk, options, stream...]`.
//! - `chunk`: the size of the pieces the stream is pushed in (0: all at once);
//! - `options`: bits 0-1 the decoder's message limit, bit 2 push with an inter-byte
//!   timeout (the transport's clock), bit 3 make the round-trip message larger than a
//!   standard frame (large-frame pages).
//!
//! Properties checked:
//! 1. nothing panics;
//! 2. every byte pushed is in exactly one of: a valid frame, the skipped bytes, the
//!    buffer (the decoder's documented invariant), and the buffer stays under one frame;
//! 3. the messages and counters do not depend on how the stream was chunked;
//! 4. each valid frame in the stream re-encodes to its own bytes;
//! 5. a message decoded as a REST request, reply or ACK re-encodes to the same message;
//! 6. encode then decode gives the message back, after any garbage followed by a
//!    resync (what a transport does on a read timeout), in any chunking, standard or
//!    large frames;
//! 7. `push_with` lends, in the same chunks, the messages (and offsets) `push` queues,
//!    with the same counters.
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use svc_protocol::serial::{
    Ack, Decoder, Frame, ID_GET_LEGACY, MAX_FRAME_LEN, MAX_MESSAGE_LEN, MAX_PAGE_DATA, MAX_PAYLOAD,
    Message, RestReply, RestRequest, SYNC1, SYNC2, SerialError, decode_reply,
};

fuzz_target!(|input: &[u8]| {
    let [chunk, options, stream @ ..] = input else {
        return;
    };
    let chunk = usize::from(*chunk);
    let max_message_len = match options & 0b11 {
        0 => MAX_MESSAGE_LEN,
        1 => 2 * MAX_PAGE_DATA,
        2 => MAX_PAYLOAD + 1,
        _ => 16,
    };
    let timed = options & 0b100 != 0;

    // 7: lent or queued, the same messages at the same offsets.
    let pieces: Vec<&[u8]> = if chunk == 0 {
        vec![stream]
    } else {
        stream.chunks(chunk).collect()
    };
    let mut queued = Decoder::with_max_message_len(max_message_len);
    let mut lent = Decoder::with_max_message_len(max_message_len);
    let (mut expected, mut got) = (Vec::new(), Vec::new());
    for piece in &pieces {
        queued.push(piece);
        while let Some(item) = queued.next_message_with_offset() {
            expected.push(item);
        }
        lent.push_with(piece, |at, message| got.push((at, message.to_message())));
    }
    assert_eq!(got, expected, "push_with differs from push");
    assert_eq!(lent.stats(), queued.stats());

    // 1-3: the stream in chunks, then at once, give the same messages and counters.
    let mut chunked = Decoder::with_max_message_len(max_message_len);
    let chunked_messages = push_in_chunks(&mut chunked, stream, chunk, timed);
    let mut whole = Decoder::with_max_message_len(max_message_len);
    whole.push(stream);
    let whole_messages: Vec<Message> = whole.messages().collect();
    if !timed {
        assert_eq!(
            chunked_messages, whole_messages,
            "chunking changed the messages"
        );
        assert_eq!(
            chunked.stats(),
            whole.stats(),
            "chunking changed the counters"
        );
        assert_eq!(chunked.buffered_len(), whole.buffered_len());
    }
    for decoder in [&chunked, &whole] {
        check_accounting(decoder, stream.len());
    }

    // 4: every frame at a sync re-encodes to its bytes.
    for at in 0..stream.len().saturating_sub(1) {
        if stream[at] == SYNC1 && stream[at + 1] == SYNC2 {
            match Frame::decode(&stream[at..]) {
                Ok((frame, len)) => {
                    assert_eq!(frame.encode().as_deref(), Ok(&stream[at..at + len]));
                    assert_eq!(frame.encoded_len(), len);
                }
                Err(
                    SerialError::Truncated { .. }
                    | SerialError::BadLength { .. }
                    | SerialError::BadEtx { .. }
                    | SerialError::BadCrc { .. },
                ) => {}
                Err(other) => panic!("unexpected frame error at a sync: {other:?}"),
            }
        }
    }

    // 5: the REST and ACK decoders on every message.
    for message in &whole_messages {
        assert!(
            message.class & 0x80 == 0,
            "a message class has the page bit"
        );
        check_rest_decoders(message);
    }

    // 6: round trip of a message made from the input, behind the stream as garbage.
    let (id, class, data) = match stream {
        [id, class, rest @ ..] => (*id, class & 0x7f, rest),
        _ => (0, 0, &[][..]),
    };
    let data = if options & 0b1000 != 0 && !data.is_empty() {
        // Past one standard frame: 1 to 3 pages, the data repeated to fill them.
        let len = MAX_PAYLOAD + 1 + (usize::from(*options) * 97 + data.len()) % (2 * MAX_PAGE_DATA);
        data.iter().copied().cycle().take(len).collect()
    } else {
        data.to_vec()
    };
    let sent = Message::new(id, class, data);
    let transfer_id = options >> 4;
    let bytes = sent.encode(transfer_id);
    let mut decoder = Decoder::new();
    push_in_chunks(&mut decoder, stream, chunk, false);
    decoder.resync();
    assert_eq!(decoder.buffered_len(), 0, "resync left bytes held");
    // The messages the garbage held are not the ones checked.
    decoder.messages().for_each(drop);
    // Large frames in coarser pieces: byte-by-byte pushes are covered by the stream
    // above, and would make each run of a large message slow.
    let piece = if bytes.len() > MAX_FRAME_LEN {
        chunk * 32
    } else {
        chunk
    };
    let received = push_in_chunks(&mut decoder, &bytes, piece, false);
    assert_eq!(received, [sent], "encode then decode changed the message");
    assert_eq!(decoder.buffered_len(), 0);
    assert_eq!(decoder.partial_message_len(), None);
});

/// Pushes `bytes` in pieces of `chunk` bytes (all at once for 0) and takes the
/// messages; with `timed`, through `push_at` with a clock that jumps past the
/// inter-byte timeout between some pieces.
fn push_in_chunks(decoder: &mut Decoder, bytes: &[u8], chunk: usize, timed: bool) -> Vec<Message> {
    let gap = Duration::from_millis(10);
    if timed {
        decoder.set_inter_byte_timeout(Some(gap));
    }
    let start = Instant::now();
    let mut now = start;
    let size = if chunk == 0 {
        bytes.len().max(1)
    } else {
        chunk
    };
    let mut messages = Vec::new();
    for (index, piece) in bytes.chunks(size).enumerate() {
        if timed {
            // Every third piece comes after a silence longer than the timeout.
            now += if index % 3 == 2 { gap * 2 } else { gap / 4 };
            if index % 5 == 4 {
                decoder.expire_partial_frame(now);
            }
            decoder.push_at(piece, now);
            if let Some(deadline) = decoder.partial_frame_deadline() {
                assert!(deadline > start);
            }
        } else {
            decoder.push(piece);
        }
        assert!(
            decoder.buffered_len() < MAX_FRAME_LEN,
            "the buffer grew past one frame"
        );
        messages.extend(decoder.messages());
    }
    messages
}

/// Frame bytes, skipped bytes and buffered bytes add up to the bytes pushed.
fn check_accounting(decoder: &Decoder, pushed: usize) {
    let stats = decoder.stats();
    assert_eq!(
        stats.frame_bytes + stats.skipped_bytes + decoder.buffered_len() as u64,
        pushed as u64,
        "{stats:?}"
    );
    assert!(stats.messages <= stats.frames);
    assert!(decoder.buffered_len() < MAX_FRAME_LEN);
}

/// What decodes as a request, reply or ACK re-encodes to the same message.
fn check_rest_decoders(message: &Message) {
    if let Ok(request) = RestRequest::decode(message) {
        let again = request.to_message().expect("a decoded request encodes");
        if message.id == ID_GET_LEGACY {
            // Older firmware's GET id is read as GET and sent as the current one.
            assert_eq!((again.class, &again.data), (message.class, &message.data));
        } else {
            assert_eq!(&again, message);
        }
        assert_eq!(RestRequest::decode(&again), Ok(request));
    }
    if let Ok(reply) = RestReply::decode(message) {
        let again = reply
            .to_message(message.id)
            .expect("a decoded reply encodes");
        assert_eq!(&again, message);
        assert_eq!(decode_reply(message, message.id), Ok(reply));
    }
    if let Ok(ack) = Ack::decode(message) {
        assert_eq!(&ack.to_message(), message);
        let mut decoder = Decoder::new();
        decoder.push(&ack.encode());
        assert_eq!(decoder.next_message().as_ref(), Some(message));
    }
    for id in [46, 47, 48, message.id] {
        let _ = decode_reply(message, id);
    }
}
