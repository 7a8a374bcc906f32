//! Requests and replies: errors.

use super::one_message;
use svc_core::serial::{
    CLASS_REST, Frame, ID_ACK, ID_GET, ID_POST, Message, RestReply, RestRequest, SerialError,
    decode_reply,
};

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
