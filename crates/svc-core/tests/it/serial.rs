//! `svc_core::serial`: the sbgECom framing of the unit's REST API over a serial link.

use svc_core::serial::{
    Ack, CLASS_REST, Decoder, ETX, Frame, ID_ACK, ID_GET, ID_GET_LEGACY, ID_POST, LARGE_FRAME_BIT,
    MAX_PAGE_DATA, MAX_PAYLOAD, Message, Method, Page, RestReply, RestRequest, SYNC, SerialError,
    crc16_kermit, decode_reply, encode_message,
};

/// A deterministic PRNG (xorshift64*), so failures replay.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| (self.next() >> 32) as u8).collect()
    }

    /// Printable JSON-ish text without NUL.
    fn text(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| b' ' + (self.next() % 95) as u8).collect()
    }
}

fn hex(text: &str) -> Vec<u8> {
    text.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// Feeds `bytes` to `decoder` in random chunks of 1..=`max_chunk` bytes.
fn feed(decoder: &mut Decoder, bytes: &[u8], rng: &mut Rng, max_chunk: usize) {
    let mut rest = bytes;
    while !rest.is_empty() {
        let n = rng.range(1, max_chunk).min(rest.len());
        decoder.push(&rest[..n]);
        rest = &rest[n..];
    }
}

/// Every byte pushed is in a valid frame, skipped, or held.
fn assert_accounted(decoder: &Decoder, pushed: usize) {
    let s = decoder.stats();
    assert_eq!(
        s.frame_bytes + s.skipped_bytes + decoder.buffered_len() as u64,
        pushed as u64,
        "{s:?}"
    );
}

fn one_message(bytes: &[u8]) -> Message {
    let mut decoder = Decoder::new();
    decoder.push(bytes);
    let message = decoder.next_message().expect("one whole message");
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.buffered_len(), 0);
    assert_eq!(decoder.stats().bad_frames(), 0);
    message
}

// ---------------------------------------------------------------------------------------
// The constants and the test vectors of `openapi/ins-device.yaml` ("Serial transport")

#[test]
fn constants_are_the_protocols() {
    assert_eq!(SYNC, [0xFF, 0x5A]);
    assert_eq!(ETX, 0x33);
    assert_eq!(MAX_PAYLOAD, 4086);
    assert_eq!(MAX_PAGE_DATA, 4081);
    assert_eq!(LARGE_FRAME_BIT, 0x80);
    assert_eq!(
        (CLASS_REST, ID_POST, ID_GET, ID_GET_LEGACY, ID_ACK),
        (0x10, 47, 48, 46, 0)
    );
}

#[test]
fn crc_check_value() {
    assert_eq!(crc16_kermit(b"123456789"), 0x2189);
}

const GET_INFO: &str = "ff 5a 30 10 0e 00 2f 61 70 69 2f 76 31 2f 69 6e 66 6f 00 00 88 93 33";
const REPLY_200: &str = "ff 5a 30 10 05 00 c8 00 7b 7d 00 e3 5b 33";
const ACK_48: &str = "ff 5a 00 10 04 00 30 10 00 00 02 6c 33";
const LARGE_PAGE: &str = "ff 5a 30 90 08 00 00 00 00 02 00 61 62 63 7e fa 33";

#[test]
fn vector_get_info() {
    let bytes = hex(GET_INFO);
    let request = RestRequest::get("/api/v1/info", "");
    assert_eq!(request.encode(0), bytes);
    assert_eq!(request.try_encode(0), Ok(bytes.clone()));

    let message = one_message(&bytes);
    assert_eq!((message.id, message.class), (ID_GET, CLASS_REST));
    assert_eq!(message.data, b"/api/v1/info\0\0");
    assert_eq!(RestRequest::decode(&message), Ok(request));
}

#[test]
fn vector_reply_200() {
    let bytes = hex(REPLY_200);
    let reply = RestReply::new(200, b"{}".to_vec());
    assert_eq!(reply.encode(ID_GET, 0), bytes);

    let message = one_message(&bytes);
    assert_eq!((message.id, message.class), (ID_GET, CLASS_REST));
    assert_eq!(RestReply::decode(&message), Ok(reply.clone()));
    assert_eq!(decode_reply(&message, ID_GET), Ok(reply));
}

#[test]
fn vector_ack() {
    let bytes = hex(ACK_48);
    let ack = Ack {
        id: ID_GET,
        class: CLASS_REST,
        error: 0,
    };
    assert_eq!(ack.encode(), bytes);

    let message = one_message(&bytes);
    assert_eq!((message.id, message.class), (ID_ACK, CLASS_REST));
    assert_eq!(Ack::decode(&message), Ok(ack));
    assert!(ack.is_success());
    // An ACK in place of a reply is an error, even with code 0.
    assert_eq!(
        decode_reply(&message, ID_GET),
        Err(SerialError::Ack { error: 0 })
    );
}

#[test]
fn vector_large_page() {
    let bytes = hex(LARGE_PAGE);
    let frame = Frame::large_page(ID_GET, CLASS_REST, 0, 0, 2, b"abc").unwrap();
    assert_eq!(frame.encode(), Ok(bytes.clone()));

    let (decoded, len) = Frame::decode(&bytes).unwrap();
    assert_eq!(len, bytes.len());
    assert_eq!(decoded, frame);
    assert_eq!((decoded.id, decoded.class), (0x30, 0x90));
    assert!(decoded.is_large());
    assert_eq!(decoded.message_class(), CLASS_REST);
    assert_eq!(
        decoded.page(),
        Ok(Page {
            transfer_id: 0,
            index: 0,
            count: 2,
            data: b"abc",
        })
    );

    // Through the decoder: page 0 of 2 waits for page 1 (pages need not be full on
    // reception), then the message is whole.
    let mut decoder = Decoder::new();
    decoder.push(&bytes);
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.partial_message_len(), Some(3));
    let last = Frame::large_page(ID_GET, CLASS_REST, 0, 1, 2, b"de").unwrap();
    decoder.push(&last.encode().unwrap());
    let message = decoder.next_message().unwrap();
    assert_eq!(message, Message::new(ID_GET, CLASS_REST, b"abcde".to_vec()));
    assert_eq!(decoder.partial_message_len(), None);
}

// ---------------------------------------------------------------------------------------
// Round trips through the streaming decoder

const SIZES: &[usize] = &[
    0, 1, 2, 3, 100, 4080, 4081, 4082, 4083, 4084, 4085, 4086, 4087, 4088, 8162, 8163, 8167,
    12_000, 100_000,
];

#[test]
fn requests_of_many_sizes_round_trip_in_random_chunks() {
    let mut rng = Rng::new(1);
    let mut stream = Vec::new();
    let mut sent = Vec::new();
    for (i, &size) in SIZES.iter().enumerate() {
        // POST: the data are path NUL query NUL body NUL.
        let path = "/api/v1/settings/import";
        let query = "auth=0123456789abcdef";
        let body_len = size.saturating_sub(path.len() + query.len() + 3);
        let post = RestRequest::post(path, query, rng.text(body_len));
        let bytes = post.encode(i as u8);
        stream.extend_from_slice(&bytes);
        sent.push(post);
        // GET: a long query.
        let get = RestRequest::get(
            "/api/v1/settings",
            String::from_utf8(rng.text(size)).unwrap(),
        );
        stream.extend_from_slice(&get.encode(i as u8));
        sent.push(get);
    }
    for max_chunk in [1, 7, 300, 5000, 70_000] {
        let mut decoder = Decoder::new();
        feed(&mut decoder, &stream, &mut rng, max_chunk);
        let received: Vec<RestRequest> = decoder
            .messages()
            .map(|m| RestRequest::decode(&m).unwrap())
            .collect();
        assert_eq!(received, sent, "max chunk {max_chunk}");
        assert_eq!(decoder.stats().skipped_bytes, 0);
        assert_eq!(decoder.stats().bad_frames(), 0);
        assert_eq!(decoder.stats().page_errors, 0);
        assert_eq!(decoder.buffered_len(), 0);
        assert_accounted(&decoder, stream.len());
    }
}

#[test]
fn message_sizes_pick_standard_or_large_frames() {
    let mut rng = Rng::new(2);
    for &size in SIZES {
        let data = rng.bytes(size);
        let bytes = encode_message(ID_POST, CLASS_REST, &data, 3);
        let pages = if size <= MAX_PAYLOAD {
            0
        } else {
            size.div_ceil(MAX_PAGE_DATA)
        };
        let frames = pages.max(1);
        assert_eq!(
            bytes.len(),
            size + 9 * frames + 5 * pages,
            "size {size}: overhead"
        );
        // Every page but the last is full, with the same transfer id and count.
        let mut rest = &bytes[..];
        let mut index = 0;
        while !rest.is_empty() {
            let (frame, len) = Frame::decode(rest).unwrap();
            rest = &rest[len..];
            assert_eq!(frame.is_large(), pages > 0, "size {size}");
            if pages > 0 {
                let page = frame.page().unwrap();
                assert_eq!(
                    (page.transfer_id, page.index, page.count as usize),
                    (3, index, pages)
                );
                if (index as usize) < pages - 1 {
                    assert_eq!(page.data.len(), MAX_PAGE_DATA);
                }
            }
            index += 1;
        }
        assert_eq!(index as usize, frames);
        let message = Message::new(ID_POST, CLASS_REST, data.clone());
        assert_eq!(message.encode(3), bytes);
        let mut decoder = Decoder::new();
        feed(&mut decoder, &bytes, &mut rng, 997);
        assert_eq!(decoder.next_message(), Some(message), "size {size}");
    }
}

#[test]
fn replies_and_acks_of_many_sizes_round_trip() {
    let mut rng = Rng::new(3);
    for &size in SIZES {
        for request_id in [ID_GET, ID_POST, ID_GET_LEGACY] {
            // The body may hold any byte, NUL included (it ends at the last byte).
            let reply = RestReply::new(rng.range(100, 599) as u16, rng.bytes(size));
            let bytes = reply.encode(request_id, (size % 16) as u8);
            let mut decoder = Decoder::new();
            feed(&mut decoder, &bytes, &mut rng, 3000);
            let message = decoder.next_message().unwrap();
            assert_eq!(message.data.len(), size + 3);
            assert_eq!(decode_reply(&message, request_id), Ok(reply));
        }
    }
    for error in [0, 1, 9, 0x1234, u16::MAX] {
        let ack = Ack {
            id: ID_POST,
            class: CLASS_REST,
            error,
        };
        let bytes = ack.encode();
        assert_eq!(bytes.len(), 13);
        let message = one_message(&bytes);
        assert_eq!(Ack::decode(&message), Ok(ack));
        assert_eq!(
            decode_reply(&message, ID_POST),
            Err(SerialError::Ack { error })
        );
    }
}

#[test]
fn a_settings_tree_of_100_kib_round_trips() {
    let node = r#"{"aiding":{"gnss1":{"model":"internal","leverArm":[0.1,0.2,0.3]}}},"#;
    let tree = node.repeat(1500);
    assert!(tree.len() > 100_000);
    let request = RestRequest::post("/api/v1/settings", "auth=abc&checkOnly=true", tree.clone());
    let mut rng = Rng::new(4);
    let mut decoder = Decoder::new();
    feed(&mut decoder, &request.encode(9), &mut rng, 512);
    let decoded = RestRequest::decode(&decoder.next_message().unwrap()).unwrap();
    assert_eq!(decoded, request);
    assert_eq!(decoded.method, Method::Post);
    assert!(decoder.stats().frames > 20);
}

#[test]
fn legacy_get_id_is_accepted() {
    let message = Message::new(ID_GET_LEGACY, CLASS_REST, b"/api/v1/info\0\0".to_vec());
    let request = RestRequest::decode(&one_message(&message.encode(0))).unwrap();
    assert_eq!(request.method, Method::Get);
    let reply = RestReply::new(200, b"{}".to_vec());
    assert_eq!(
        decode_reply(&one_message(&reply.encode(ID_GET_LEGACY, 0)), ID_GET_LEGACY),
        Ok(reply)
    );
}

// ---------------------------------------------------------------------------------------
// Resynchronisation and errors

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

// ---------------------------------------------------------------------------------------
// Large frames: reassembly errors

fn pages(id: u8, transfer_id: u8, data: &[u8]) -> Vec<Vec<u8>> {
    let count = data.len().div_ceil(MAX_PAGE_DATA) as u16;
    data.chunks(MAX_PAGE_DATA)
        .enumerate()
        .map(|(i, chunk)| {
            Frame::large_page(id, CLASS_REST, transfer_id, i as u16, count, chunk)
                .unwrap()
                .encode()
                .unwrap()
        })
        .collect()
}

#[test]
fn large_pages_joined_match_encode_message() {
    let data = Rng::new(7).bytes(3 * MAX_PAGE_DATA + 1);
    assert_eq!(
        pages(ID_GET, 5, &data).concat(),
        encode_message(ID_GET, CLASS_REST, &data, 5)
    );
    // Only the low 4 bits of the transfer id are sent.
    assert_eq!(
        encode_message(ID_GET, CLASS_REST, &data, 0x35),
        encode_message(ID_GET, CLASS_REST, &data, 0x05)
    );
}

#[test]
fn large_pages_out_of_order_are_dropped_and_counted() {
    let data = Rng::new(8).bytes(4 * MAX_PAGE_DATA);
    let p = pages(ID_POST, 1, &data);
    let good = RestReply::new(200, b"{}".to_vec()).encode(ID_GET, 0);

    // Pages 0, 2, 1, 3: page 2 drops the message, pages 2, 1 and 3 are thrown away.
    let mut decoder = Decoder::new();
    for i in [0, 2, 1, 3] {
        decoder.push(&p[i]);
    }
    decoder.push(&good);
    let messages: Vec<Message> = decoder.messages().collect();
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].id, ID_GET);
    let s = decoder.stats();
    assert_eq!((s.dropped_messages, s.page_errors), (1, 3));
    assert_eq!(s.frames, 5);
    assert_eq!(s.bad_frames(), 0);

    // A repeated page is out of order too.
    let mut decoder = Decoder::new();
    for i in [0, 1, 1, 2, 3] {
        decoder.push(&p[i]);
    }
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.stats().dropped_messages, 1);

    // A message starting with page 1 never starts.
    let mut decoder = Decoder::new();
    for page in &p[1..] {
        decoder.push(page);
    }
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.stats().page_errors, 3);
    assert_eq!(decoder.stats().dropped_messages, 0);

    // After the errors, the whole message sent again is decoded.
    let mut decoder = Decoder::new();
    for i in [0, 2] {
        decoder.push(&p[i]);
    }
    decoder.push(&p.concat());
    assert_eq!(decoder.next_message().unwrap().data, data);
}

#[test]
fn a_page_of_another_transfer_drops_the_message() {
    let mut rng = Rng::new(9);
    let first = rng.bytes(3 * MAX_PAGE_DATA);
    let second = rng.bytes(2 * MAX_PAGE_DATA + 7);
    let a = pages(ID_POST, 1, &first);
    let b = pages(ID_POST, 2, &second);

    // Transfer 1 page 0, then transfer 2 page 1 (the index expected next): the message
    // is dropped, and every later page of transfer 1 is thrown away.
    let mut decoder = Decoder::new();
    decoder.push(&a[0]);
    decoder.push(&b[1]);
    decoder.push(&a[1]);
    decoder.push(&a[2]);
    assert!(decoder.next_message().is_none());
    let s = decoder.stats();
    assert_eq!((s.dropped_messages, s.page_errors), (1, 3));

    // Transfer 1 page 0, then all of transfer 2: transfer 2 restarts the reassembly.
    let mut decoder = Decoder::new();
    decoder.push(&a[0]);
    decoder.push(&b.concat());
    assert_eq!(decoder.next_message().unwrap().data, second);
    assert_eq!(decoder.stats().dropped_messages, 1);
    assert_eq!(decoder.stats().page_errors, 0);
}

#[test]
fn a_page_count_change_drops_the_message() {
    let data = Rng::new(10).bytes(3 * MAX_PAGE_DATA);
    let p = pages(ID_POST, 4, &data);
    let changed = Frame::large_page(
        ID_POST,
        CLASS_REST,
        4,
        1,
        4,
        &data[MAX_PAGE_DATA..2 * MAX_PAGE_DATA],
    )
    .unwrap()
    .encode()
    .unwrap();
    let mut decoder = Decoder::new();
    decoder.push(&p[0]);
    decoder.push(&changed);
    decoder.push(&p[2]);
    assert!(decoder.next_message().is_none());
    let s = decoder.stats();
    assert_eq!((s.dropped_messages, s.page_errors), (1, 2));
    assert_eq!(decoder.partial_message_len(), None);
}

#[test]
fn a_page_of_another_message_id_drops_the_message() {
    let data = Rng::new(11).bytes(2 * MAX_PAGE_DATA);
    let a = pages(ID_POST, 0, &data);
    let b = pages(ID_GET, 0, &data);
    let mut decoder = Decoder::new();
    decoder.push(&a[0]);
    decoder.push(&b[1]);
    assert!(decoder.next_message().is_none());
    assert_eq!(decoder.stats().dropped_messages, 1);
}

#[test]
fn standard_frames_between_pages_do_not_disturb_reassembly() {
    let data = Rng::new(12).bytes(3 * MAX_PAGE_DATA - 1);
    let p = pages(ID_POST, 3, &data);
    let ack = Ack {
        id: 1,
        class: 2,
        error: 3,
    }
    .encode();
    let mut decoder = Decoder::new();
    decoder.push(&p[0]);
    decoder.push(&ack);
    decoder.push(&p[1]);
    decoder.push(b"noise");
    decoder.push(&p[2]);
    let messages: Vec<Message> = decoder.messages().collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].id, ID_ACK);
    assert_eq!(messages[1].data, data);
}

#[test]
fn a_corrupt_page_loses_the_message_not_the_stream() {
    let mut rng = Rng::new(13);
    // Text: no 0xFF, so no sync inside the corrupt page.
    let data = rng.text(5 * MAX_PAGE_DATA);
    let mut bytes = encode_message(ID_POST, CLASS_REST, &data, 0);
    // Corrupt a byte in the third page.
    let at = 2 * (MAX_PAYLOAD + 9) + 100;
    bytes[at] ^= 0x01;
    let reply = RestReply::new(200, b"{}".to_vec()).encode(ID_GET, 0);
    bytes.extend_from_slice(&reply);
    let again = encode_message(ID_POST, CLASS_REST, &data, 1);
    bytes.extend_from_slice(&again);
    let mut decoder = Decoder::new();
    feed(&mut decoder, &bytes, &mut rng, 2000);
    let messages: Vec<Message> = decoder.messages().collect();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0].id, ID_GET);
    assert_eq!(messages[1].data, data);
    let s = decoder.stats();
    assert_eq!(s.bad_crc, 1);
    // Page 3 (index 3) is out of order once page 2 is lost; page 4 is thrown away too.
    assert_eq!((s.dropped_messages, s.page_errors), (1, 2));
    assert_accounted(&decoder, bytes.len());
}

#[test]
fn resync_drops_a_partial_large_message() {
    let data = Rng::new(14).bytes(2 * MAX_PAGE_DATA);
    let p = pages(ID_POST, 0, &data);
    let mut decoder = Decoder::new();
    decoder.push(&p[0]);
    assert_eq!(decoder.partial_message_len(), Some(MAX_PAGE_DATA));
    decoder.resync();
    assert_eq!(decoder.partial_message_len(), None);
    decoder.push(&p[1]);
    assert!(decoder.next_message().is_none());
    let s = decoder.stats();
    assert_eq!((s.dropped_messages, s.page_errors), (1, 1));
}

// ---------------------------------------------------------------------------------------
// Requests and replies: errors

#[test]
fn encoding_errors_are_typed() {
    assert_eq!(
        RestRequest::get("/api/v1/info", "a\0b").try_encode(0),
        Err(SerialError::NulInField { field: "query" })
    );
    assert_eq!(
        RestReply::new(200, Vec::new()).try_encode(ID_ACK, 0),
        Err(SerialError::UnexpectedMessage {
            id: ID_ACK,
            class: CLASS_REST
        })
    );
    assert_eq!(
        Message::new(1, 0x90, Vec::new()).try_encode(0),
        Err(SerialError::ClassOutOfRange { class: 0x90 })
    );
    assert_eq!(
        Frame::new(1, 2, vec![0; 4087]).encode(),
        Err(SerialError::TooLong {
            len: 4087,
            max: 4086
        })
    );
}

#[test]
fn a_reply_to_another_request_is_unexpected() {
    let reply = one_message(&RestReply::new(200, b"{}".to_vec()).encode(ID_POST, 0));
    assert_eq!(
        decode_reply(&reply, ID_GET),
        Err(SerialError::UnexpectedMessage {
            id: ID_POST,
            class: CLASS_REST
        })
    );
    let other = one_message(&Message::new(0x05, 0x02, vec![1, 2, 3]).encode(0));
    assert_eq!(
        decode_reply(&other, ID_GET),
        Err(SerialError::UnexpectedMessage { id: 5, class: 2 })
    );
    assert!(RestRequest::decode(&other).is_err());
}

#[test]
fn error_messages_do_not_quote_data() {
    let error = SerialError::Ack { error: 7 };
    assert_eq!(
        error.to_string(),
        "the unit answered with an ACK (error code 7) in place of a reply"
    );
    assert_eq!(
        SerialError::MissingNul { field: "query" }.to_string(),
        "missing NUL after the query"
    );
    assert_eq!(
        SerialError::BadLength { len: 5000 }.to_string(),
        "bad frame length 5000: a frame holds at most 4086 data bytes"
    );
}
