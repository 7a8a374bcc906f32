//! Resynchronisation and errors.

use super::{Rng, assert_accounted, feed, hex};
use svc_core::serial::{Decoder, Frame, ID_GET, Message, RestReply, SerialError, decode_reply};

#[test]
fn garbage_before_and_between_frames_is_skipped_and_counted() {
    let mut rng = Rng::new(5);
    let mut stream = Vec::new();
    let mut expected = Vec::new();
    let mut garbage = 0;
    for i in 0..40 {
        // Garbage, including lone sync bytes and sync pairs that start nothing valid.
        let junk_len = rng.range(0, 200);
        let mut junk = rng.bytes(junk_len);
        if i % 3 == 0 {
            junk.extend_from_slice(&[0xFF, 0xFF, 0x5A, 0x30]);
        }
        if i % 5 == 0 {
            junk.push(0xFF);
        }
        garbage += junk.len();
        stream.extend_from_slice(&junk);
        let body_len = rng.range(0, 9000);
        let reply = RestReply::new(200, rng.text(body_len));
        stream.extend_from_slice(&reply.encode(ID_GET, i as u8));
        expected.push(reply);
    }
    stream.extend_from_slice(b"trailing junk");
    garbage += 13;
    for max_chunk in [1, 64, 4096, 1 << 20] {
        let mut decoder = Decoder::new();
        feed(&mut decoder, &stream, &mut rng, max_chunk);
        let replies: Vec<RestReply> = decoder
            .messages()
            .map(|m| decode_reply(&m, ID_GET).unwrap())
            .collect();
        assert_eq!(replies, expected, "max chunk {max_chunk}");
        assert_eq!(decoder.stats().skipped_bytes, garbage as u64);
        assert_accounted(&decoder, stream.len());
    }
}

#[test]
fn a_flipped_bit_skips_the_frame_and_the_next_one_decodes() {
    let first = RestReply::new(200, b"{\"a\":1}".to_vec()).encode(ID_GET, 0);
    let second = RestReply::new(404, b"{\"b\":2}".to_vec()).encode(ID_GET, 0);
    // Flip each bit of the first frame's id, class and data in turn.
    for byte in 2..first.len() - 3 {
        if (4..6).contains(&byte) {
            continue; // a length change is another test
        }
        for bit in 0..8 {
            let mut corrupt = first.clone();
            corrupt[byte] ^= 1 << bit;
            let mut stream = corrupt.clone();
            stream.extend_from_slice(&second);
            let mut decoder = Decoder::new();
            decoder.push(&stream);
            let messages: Vec<Message> = decoder.messages().collect();
            assert_eq!(messages.len(), 1, "byte {byte} bit {bit}");
            assert_eq!(RestReply::decode(&messages[0]).unwrap().status, 404);
            let s = decoder.stats();
            assert_eq!((s.bad_crc, s.bad_etx), (1, 0), "byte {byte} bit {bit}");
            assert_eq!(s.skipped_bytes, corrupt.len() as u64);
            assert_accounted(&decoder, stream.len());
        }
    }
    // A flipped CRC bit too.
    let mut corrupt = first.clone();
    corrupt[first.len() - 2] ^= 0x10;
    corrupt.extend_from_slice(&second);
    let mut decoder = Decoder::new();
    decoder.push(&corrupt);
    assert_eq!(decoder.messages().count(), 1);
    assert_eq!(decoder.stats().bad_crc, 1);
}

#[test]
fn a_bad_etx_skips_the_frame() {
    let mut first = RestReply::new(200, b"{}".to_vec()).encode(ID_GET, 0);
    *first.last_mut().unwrap() = 0x34;
    let second = RestReply::new(201, b"{}".to_vec()).encode(ID_GET, 0);
    let mut stream = first.clone();
    stream.extend_from_slice(&second);
    let mut decoder = Decoder::new();
    let mut rng = Rng::new(6);
    feed(&mut decoder, &stream, &mut rng, 5);
    let messages: Vec<Message> = decoder.messages().collect();
    assert_eq!(messages.len(), 1);
    assert_eq!(RestReply::decode(&messages[0]).unwrap().status, 201);
    let s = decoder.stats();
    assert_eq!((s.bad_etx, s.bad_crc, s.frames), (1, 0, 1));
    assert_eq!(s.skipped_bytes, first.len() as u64);
    assert_eq!(
        Frame::decode(&first),
        Err(SerialError::BadEtx { found: 0x34 })
    );
}

#[test]
fn a_truncated_frame_then_more_data() {
    let a = RestReply::new(200, b"{\"x\":1}".to_vec()).encode(ID_GET, 0);
    let b = RestReply::new(202, b"{\"y\":2}".to_vec()).encode(ID_GET, 0);
    let c = RestReply::new(203, b"{}".to_vec()).encode(ID_GET, 0);

    // A short frame cut short: the frames behind it complete its length, its CRC fails,
    // and the decoder finds the next frame inside what it held.
    let mut decoder = Decoder::new();
    decoder.push(&a[..10]);
    assert!(decoder.next_message().is_none());
    decoder.push(&b);
    decoder.push(&c);
    let statuses: Vec<u16> = decoder
        .messages()
        .map(|m| RestReply::decode(&m).unwrap().status)
        .collect();
    assert_eq!(statuses, [202, 203]);
    assert_eq!(decoder.stats().bad_frames(), 1);
    assert_eq!(decoder.stats().skipped_bytes, 10);
    assert_accounted(&decoder, 10 + b.len() + c.len());

    // A long frame cut short waits for its length (at most 4095 bytes in all)...
    let long = RestReply::new(200, vec![b'x'; 4000]).encode(ID_GET, 0);
    let mut decoder = Decoder::new();
    decoder.push(&long[..100]);
    decoder.push(&b);
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.buffered_len(), 100 + b.len());
    // ...then resync() gives it up and decodes what came behind (a transport calls it
    // after a read timeout).
    decoder.resync();
    let statuses: Vec<u16> = decoder
        .messages()
        .map(|m| RestReply::decode(&m).unwrap().status)
        .collect();
    assert_eq!(statuses, [202]);
    assert_eq!(decoder.stats().truncated, 1);
    assert_eq!(decoder.buffered_len(), 0);
    assert_accounted(&decoder, 100 + b.len());

    // Or more frames arrive and complete its length: every one behind it decodes.
    let mut decoder = Decoder::new();
    decoder.push(&long[..100]);
    let mut pushed = 100;
    let mut sent = 0;
    while pushed < 100 + long.len() {
        decoder.push(&c);
        pushed += c.len();
        sent += 1;
    }
    assert_eq!(decoder.messages().count(), sent);
    assert_eq!(decoder.stats().bad_frames(), 1);
    assert_accounted(&decoder, pushed);
}

#[test]
fn a_bogus_huge_length_resyncs_at_once() {
    let good = RestReply::new(200, b"{}".to_vec()).encode(ID_GET, 0);
    for len in [4087u16, 0x1000, 0x8000, u16::MAX] {
        let mut stream = vec![0xFF, 0x5A, 0x30, 0x10];
        stream.extend_from_slice(&len.to_le_bytes());
        stream.extend_from_slice(&good);
        let mut decoder = Decoder::new();
        decoder.push(&stream);
        // Decoded without waiting for `len` more bytes.
        assert_eq!(decoder.messages().count(), 1, "length {len}");
        let s = decoder.stats();
        assert_eq!((s.bad_length, s.skipped_bytes), (1, 6));
        assert_eq!(decoder.buffered_len(), 0);
    }
    // The same header alone is refused as soon as it is complete.
    let mut decoder = Decoder::new();
    decoder.push(&[0xFF, 0x5A, 0x30, 0x10, 0x00]);
    assert_eq!(decoder.buffered_len(), 5);
    decoder.push(&[0x80]);
    assert_eq!(decoder.buffered_len(), 0);
    assert_eq!(decoder.stats().bad_length, 1);
}

/// Issue #11: a corrupt header whose length is in range (`ff 5a 30 10 f6 0f`, 4086
/// bytes announced) and some junk. Without a timeout every frame behind it is held
/// until 4095 bytes have arrived; with an inter-byte timeout the partial frame is
/// abandoned once the line has been silent that long, and the next sync is searched
/// at once.
#[test]
fn a_corrupt_header_in_range_is_abandoned_after_the_inter_byte_timeout() {
    use std::time::{Duration, Instant};

    let gap = Duration::from_millis(100);
    let corrupt = hex("ff 5a 30 10 f6 0f 6a 75 6e 6b 00 01");
    let good = RestReply::new(200, b"{}".to_vec()).encode(ID_GET, 0);
    let t0 = Instant::now();

    // Without a timeout (plain `push`): the valid frame is swallowed.
    let mut decoder = Decoder::new();
    decoder.push(&corrupt);
    decoder.push(&good);
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.partial_frame_deadline(), None, "no timeout set");

    // The valid frame after a pause longer than the gap: decoded at once.
    let mut decoder = Decoder::new().with_inter_byte_timeout(gap);
    assert_eq!(decoder.inter_byte_timeout(), Some(gap));
    decoder.push_at(&corrupt, t0);
    assert_eq!(decoder.partial_frame_deadline(), Some(t0 + gap));
    decoder.push_at(&good, t0 + gap + Duration::from_millis(1));
    let message = decoder.next_message().expect("the frame after the pause");
    assert_eq!(RestReply::decode(&message).unwrap().status, 200);
    assert_eq!(decoder.stats().truncated, 1);
    assert_eq!(decoder.buffered_len(), 0);
    assert_eq!(decoder.partial_frame_deadline(), None, "nothing held");
    assert_accounted(&decoder, corrupt.len() + good.len());

    // The valid frame right behind the junk, then silence: found when the deadline
    // passes, not before.
    let mut decoder = Decoder::new().with_inter_byte_timeout(gap);
    decoder.push_at(&corrupt, t0);
    decoder.push_at(&good, t0 + Duration::from_millis(10));
    assert!(decoder.next_message().is_none());
    let deadline = decoder.partial_frame_deadline().expect("a frame is held");
    assert_eq!(deadline, t0 + Duration::from_millis(10) + gap);
    assert!(!decoder.expire_partial_frame(deadline));
    assert!(decoder.next_message().is_none());
    assert!(decoder.expire_partial_frame(deadline + Duration::from_millis(1)));
    let message = decoder.next_message().expect("the frame behind the junk");
    assert_eq!(RestReply::decode(&message).unwrap().status, 200);
    assert_accounted(&decoder, corrupt.len() + good.len());

    // Bytes of one frame with gaps shorter than the timeout are one frame.
    let mut decoder = Decoder::new().with_inter_byte_timeout(gap);
    let mut at = t0;
    for chunk in good.chunks(3) {
        decoder.push_at(chunk, at);
        at += gap / 2;
    }
    assert_eq!(decoder.messages().count(), 1);
    assert_eq!(decoder.stats().truncated, 0);

    // abandon_partial_frame() by hand, and the timeout can be removed.
    let mut decoder = Decoder::new();
    decoder.push(&corrupt);
    decoder.push(&good);
    assert!(decoder.abandon_partial_frame());
    assert_eq!(decoder.messages().count(), 1);
    assert!(!decoder.abandon_partial_frame(), "nothing held any more");
    let mut decoder = Decoder::new().with_inter_byte_timeout(gap);
    decoder.set_inter_byte_timeout(None);
    decoder.push_at(&corrupt, t0);
    assert!(!decoder.expire_partial_frame(t0 + gap * 10));
}

#[test]
fn a_frame_inside_a_bad_frame_is_found() {
    // A corrupt frame whose data hold a whole valid frame: the decoder resyncs from the
    // byte after the refused sync, so it finds the inner one.
    let inner = RestReply::new(200, b"{}".to_vec()).encode(ID_GET, 0);
    let mut outer = Message::new(1, 2, inner.clone()).encode(0);
    let crc_at = outer.len() - 3;
    outer[crc_at] ^= 0xFF; // corrupt the outer frame's CRC
    let mut decoder = Decoder::new();
    decoder.push(&outer);
    let messages: Vec<Message> = decoder.messages().collect();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].id, ID_GET);
    assert_eq!(decoder.stats().bad_crc, 1);
    assert_accounted(&decoder, outer.len());
}
