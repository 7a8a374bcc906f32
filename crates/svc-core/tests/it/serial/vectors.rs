//! The constants and the test vectors of `openapi/ins-device.yaml` ("Serial transport").

use super::{hex, one_message};
use svc_core::serial::{
    Ack, CLASS_REST, Decoder, ETX, Frame, ID_ACK, ID_GET, ID_GET_LEGACY, ID_POST, LARGE_FRAME_BIT,
    MAX_PAGE_DATA, MAX_PAYLOAD, Message, Page, RestReply, RestRequest, SYNC, SerialError,
    crc16_kermit, decode_reply,
};

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
