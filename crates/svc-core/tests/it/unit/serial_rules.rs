//! The serial link's rules against a fake unit written here: a GET is sent again on a
//! timeout and a POST never, ACK errors, garbage and corrupt headers are skipped.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use svc_core::serial::{Ack, CLASS_REST, Decoder, ID_GET, ID_POST, Method, RestReply, RestRequest};
use svc_core::unit::serial_link::{SerialLink, SerialOptions};
use svc_core::unit::{Unit, UnitError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What the fake unit does with each request it decodes.
#[derive(Clone, Copy)]
enum Fake {
    /// Never answers.
    Silent,
    /// Answers an ACK with this error code.
    AckError(u16),
    /// Answers garbage, a frame with a bad CRC, then the valid reply.
    GarbageThenReply,
    /// Answers an ACK of another message (a POST, code 0), then the valid reply.
    OtherAckThenReply,
    /// Sends a corrupt header whose length is in range (4086) and a little junk, then,
    /// after [`LINE_PAUSE`] of silence, the valid reply.
    CorruptHeaderPauseThenReply,
    /// Sends a corrupt header whose length is in range, a little junk and the valid
    /// reply in one write.
    CorruptHeaderThenReply,
}

/// A header whose length is in range (4086) but that starts no real frame: the
/// sequence of issue #11.
const CORRUPT_HEADER: [u8; 6] = [0xff, 0x5a, 0x30, 0x10, 0xf6, 0x0f];

/// The silence of [`Fake::CorruptHeaderPauseThenReply`]: longer than the link's
/// inter-byte timeout, much shorter than its answer timeout.
const LINE_PAUSE: Duration = Duration::from_millis(600);

const INFO_BODY: &str = r#"{"productCode":"FAKE-1","serialNumber":"F0001","hwRevision":"1","mnfVersion":"1","mnfDate":"2024-01-01","macAddress":"02:00:00:00:00:01","productType":"INS","fmwVersion":"9.9","btVersion":"1","eComVersion":"5","apiVersion":"1.3"}"#;

/// A TCP serial bridge to a fake unit; returns its address and the requests it decoded.
async fn fake_unit(behaviour: Fake) -> (String, tokio::sync::mpsc::UnboundedReceiver<RestRequest>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let mut decoder = Decoder::new();
        let mut buffer = vec![0u8; 8192];
        loop {
            let n = match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            decoder.push(&buffer[..n]);
            while let Some(message) = decoder.next_message() {
                let request = RestRequest::decode(&message).expect("a REST request");
                let id = request.id();
                let _ = tx.send(request);
                let reply = || RestReply::new(200, INFO_BODY.as_bytes()).encode(id, 0);
                let corrupt = || {
                    let mut bytes = CORRUPT_HEADER.to_vec();
                    bytes.extend_from_slice(b"junk\x00\x01");
                    bytes
                };
                let answer = match behaviour {
                    Fake::Silent => continue,
                    Fake::CorruptHeaderPauseThenReply => {
                        if stream.write_all(&corrupt()).await.is_err() {
                            return;
                        }
                        // The silence is the point of this fake: the line is idle.
                        tokio::time::sleep(LINE_PAUSE).await;
                        reply()
                    }
                    Fake::CorruptHeaderThenReply => {
                        let mut bytes = corrupt();
                        bytes.extend_from_slice(&reply());
                        bytes
                    }
                    Fake::AckError(code) => Ack {
                        id,
                        class: CLASS_REST,
                        error: code,
                    }
                    .encode(),
                    Fake::GarbageThenReply => {
                        let reply = RestReply::new(200, INFO_BODY.as_bytes()).encode(id, 0);
                        let mut broken = reply.clone();
                        let crc = broken.len() - 2;
                        broken[crc] ^= 0x55;
                        let mut bytes = b"noise\x00\x33\x5a\x10 more noise".to_vec();
                        bytes.extend_from_slice(&broken);
                        bytes.extend_from_slice(&[0x00, 0x5a, 0x33]);
                        bytes.extend_from_slice(&reply);
                        bytes
                    }
                    Fake::OtherAckThenReply => {
                        let other = if id == ID_POST { ID_GET } else { ID_POST };
                        let mut bytes = Ack {
                            id: other,
                            class: CLASS_REST,
                            error: 0,
                        }
                        .encode();
                        bytes.extend(RestReply::new(200, INFO_BODY.as_bytes()).encode(id, 0));
                        bytes
                    }
                };
                if stream.write_all(&answer).await.is_err() {
                    return;
                }
            }
        }
    });
    (address, rx)
}

/// Receives the requests the fake unit decoded until `count` arrived (deadline 5 s),
/// then checks that no more follow shortly.
async fn received(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<RestRequest>,
    count: usize,
) -> Vec<RestRequest> {
    let mut got = Vec::new();
    while got.len() < count {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(r)) => got.push(r),
            _ => panic!(
                "only {} of {count} requests reached the fake unit",
                got.len()
            ),
        }
    }
    // Absence can only be shown by waiting: a short while.
    if let Ok(Some(extra)) = tokio::time::timeout(Duration::from_millis(150), rx.recv()).await {
        panic!("an extra request reached the fake unit: {extra:?}");
    }
    got
}

const FAST: SerialOptions = SerialOptions {
    answer_timeout: Duration::from_millis(200),
    get_attempts: 3,
    inter_byte_timeout: Duration::from_millis(100),
};

#[tokio::test]
async fn serial_get_and_check_only_write_are_sent_again_on_timeout_other_posts_never() {
    let (address, mut rx) = fake_unit(Fake::Silent).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());

    let started = Instant::now();
    let e = unit.info().await.unwrap_err();
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "3 × 200 ms"
    );
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    assert!(e.is_retryable());
    let text = e.to_string();
    assert!(text.contains("attempt 3 of 3"), "{text}");
    let requests = received(&mut rx, 3).await;
    for r in &requests {
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.path, "/api/v1/info");
    }

    let e = unit
        .write_node("oem/label", &json!("once"), false)
        .await
        .unwrap_err();
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("not sent again") || text.contains("not repeated"),
        "the error says the POST was not repeated: {text}"
    );
    let requests = received(&mut rx, 1).await;
    assert_eq!(requests[0].method, Method::Post);
    assert_eq!(requests[0].path, "/api/v1/settings/oem/label");
    assert_eq!(requests[0].body.as_deref(), Some(&b"\"once\""[..]));

    // A reboot (a POST) is not repeated either. (A session without a login first
    // tries to take a token to tell later whether the unit rebooted: a login, which
    // is repeated.)
    let e = unit.reboot().await.unwrap_err();
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    let requests = received(&mut rx, 4).await;
    for r in &requests[..3] {
        assert_eq!(r.path, "/api/v1/user/login");
    }
    assert_eq!(requests[3].path, "/api/v1/reboot");

    // A check-only write applies nothing: it is sent again, as a GET is.
    let e = unit
        .write(&json!({"oem": {"label": "checked"}}), true)
        .await
        .unwrap_err();
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("attempt 3 of 3"), "{text}");
    assert!(!text.contains("not sent again"), "{text}");
    let requests = received(&mut rx, 3).await;
    for r in &requests {
        assert_eq!(r.method, Method::Post);
        assert_eq!(r.path, "/api/v1/settings");
        assert!(r.query.split('&').any(|p| p == "checkOnly=true"), "{r:?}");
    }
}

/// A login (and the other POSTs whose repetition changes nothing more) gets no
/// answer: it is sent again, as a GET is, without the "may have applied" warning of
/// real writes.
#[tokio::test]
async fn serial_login_lock_unlock_save_and_logout_are_sent_again_on_timeout() {
    let (address, mut rx) = fake_unit(Fake::Silent).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    let e = unit
        .login(
            ins_device_api::enums::UserName::Setup,
            ins_device_api::Password::new("pw"),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    let text = e.to_string();
    assert!(text.contains("attempt 3 of 3"), "{text}");
    assert!(!text.contains("not sent again"), "{text}");
    let requests = received(&mut rx, 3).await;
    for r in &requests {
        assert_eq!(
            (r.method, r.path.as_str()),
            (Method::Post, "/api/v1/user/login")
        );
    }
    for (path, call) in [
        ("/api/v1/settings/lock", 0),
        ("/api/v1/settings/unlock", 1),
        ("/api/v1/settings/save", 2),
    ] {
        let e = match call {
            0 => unit.lock().await,
            // The session holds no lock: the release is sent by hand.
            1 => unit
                .client()
                .unlock_settings()
                .send()
                .await
                .map(drop)
                .map_err(|e| UnitError::InvalidResponse {
                    operation: "unlockSettings",
                    reason: e.to_string(),
                }),
            _ => unit.save().await,
        }
        .unwrap_err();
        assert!(e.to_string().contains("attempt 3 of 3"), "{path}: {e}");
        let requests = received(&mut rx, 3).await;
        assert!(requests.iter().all(|r| r.path == path), "{requests:?}");
    }
    // Logged in (a token set by hand), a logout is repeated likewise.
    unit.set_token(Some(ins_device_api::AuthToken::new("t")));
    unit.logout().await.unwrap_err();
    let requests = received(&mut rx, 3).await;
    assert!(requests.iter().all(|r| r.path == "/api/v1/user/logout"));
}

#[tokio::test]
async fn serial_ack_with_an_error_code_is_reported_with_the_code() {
    let (address, mut rx) = fake_unit(Fake::AckError(7)).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    let e = unit.info().await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains("error code 7"), "{text}");
    // An ACK is an answer: the GET is not sent again.
    assert_eq!(received(&mut rx, 1).await.len(), 1);
    let e = unit
        .write(&json!({"oem": {"label": "x"}}), false)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("error code 7"), "{e}");
    received(&mut rx, 1).await;
}

#[tokio::test]
async fn serial_garbage_before_a_reply_is_skipped() {
    let (address, mut rx) = fake_unit(Fake::GarbageThenReply).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    for _ in 0..3 {
        let info = unit.info().await.unwrap();
        assert_eq!(info.product_code, "FAKE-1");
        assert_eq!(info.api_version, "1.3");
    }
    assert_eq!(received(&mut rx, 3).await.len(), 3, "each GET sent once");
}

/// An ACK names the message it acknowledges: one for another message (e.g. the late
/// ACK of an earlier POST) is not the answer to this request, which still comes.
/// (`decode_reply`'s contract: "an ACK of another command … a transport may skip it
/// and keep waiting".)
#[tokio::test]
async fn serial_ack_of_another_message_is_not_the_answer() {
    let (address, mut rx) = fake_unit(Fake::OtherAckThenReply).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    let info = unit.info().await.expect("the reply after the other ACK");
    assert_eq!(info.product_code, "FAKE-1");
    assert_eq!(received(&mut rx, 1).await.len(), 1);
}

/// A corrupt header announcing 4086 bytes no longer swallows the answer behind it:
/// the link gives the partial frame up once the line has been idle for the inter-byte
/// timeout and finds the answer at once, well within the answer timeout. GETs are not
/// sent again here, so a swallowed answer would fail the call.
#[tokio::test]
async fn serial_corrupt_header_is_abandoned_after_the_inter_byte_timeout() {
    let options = SerialOptions {
        answer_timeout: Duration::from_secs(3),
        get_attempts: 1,
        ..SerialOptions::default()
    };
    for fake in [
        Fake::CorruptHeaderPauseThenReply,
        Fake::CorruptHeaderThenReply,
    ] {
        let (address, mut rx) = fake_unit(fake).await;
        let link = SerialLink::tcp(&address, options).await.unwrap();
        let unit = Unit::over(Arc::new(link), "fake".to_owned());
        for _ in 0..2 {
            let started = Instant::now();
            let info = unit
                .info()
                .await
                .expect("the answer behind the corrupt header");
            assert_eq!(info.product_code, "FAKE-1");
            assert!(
                started.elapsed() < LINE_PAUSE + Duration::from_secs(2),
                "answered promptly: {:?}",
                started.elapsed()
            );
        }
        assert_eq!(received(&mut rx, 2).await.len(), 2, "each GET sent once");
    }
}

#[tokio::test]
async fn serial_bridge_that_does_not_listen_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    let e = SerialLink::tcp(&address, FAST).await.unwrap_err();
    assert!(e.contains(&address), "{e}");
    let e = Unit::http("https://127.0.0.1:1").unwrap_err();
    assert!(matches!(e, UnitError::InvalidRequest { .. }), "{e:?}");
}
