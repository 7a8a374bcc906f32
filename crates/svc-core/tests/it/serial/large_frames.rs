//! Large frames: reassembly errors.

use super::{Rng, assert_accounted, feed};
use svc_core::serial::{
    Ack, CLASS_REST, Decoder, Frame, ID_ACK, ID_GET, ID_POST, MAX_PAGE_DATA, MAX_PAYLOAD, Message,
    RestReply, encode_message,
};

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
