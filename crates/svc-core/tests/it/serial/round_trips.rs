//! Round trips through the streaming decoder.

use super::{Rng, assert_accounted, feed, one_message};
use svc_core::serial::{
    Ack, CLASS_REST, Decoder, Frame, ID_GET, ID_GET_LEGACY, ID_POST, MAX_PAGE_DATA, MAX_PAYLOAD,
    Message, Method, RestReply, RestRequest, SerialError, decode_reply, encode_message,
};

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
