//! The serial framing, checked against recorded bytes.

use super::*;

//
// The framing tests send recorded bytes and compare the unit's ACKs with recorded
// bytes, rather than encoding with the codec the unit itself decodes with: a codec bug
// could otherwise pass on both sides. The fixtures were computed apart from
// `svc_protocol::serial` (a few lines of Python: CRC-16/KERMIT over id, class, length
// and data), and the first one is the specification's test vector.

/// `GET /api/v1/info`, no query, in one standard frame (the specification's vector).
const GET_INFO: &str = "ff5a30100e002f6170692f76312f696e666f0000889333";

/// The same request in one large frame: class 0x90, transfer id 2, page 0 of 1.
const GET_INFO_LARGE: &str = "ff5a3090130002000001002f6170692f76312f696e666f00005fc133";

/// A successful ACK of a GET (error code 0), as a unit would send it.
const ACK_GET_OK: &str = "ff5a0010040030100000026c33";

/// Recorded bytes from their hex text.
fn fixture(hex_text: &str) -> Vec<u8> {
    hex::decode(hex_text).expect("fixture hex")
}

/// Port A streams nothing from now: these tests look at the bytes of the answers
/// themselves.
fn quiet(unit: &DeviceEmulator) {
    let quiet = br#"{"output":{"comA":{"messages":{"status":"off","utcTime":"off","ekfEuler":"off","ekfNav":"off","gps1Pos":"off"}}}}"#;
    let (status, _) = unit
        .handle("POST", "/api/v1/settings", "", quiet)
        .expect("an answer");
    assert_eq!(status, 200, "Port A made quiet");
}

/// A link to the bridge of a quiet Port A.
async fn tcp_link(unit: &DeviceEmulator) -> SerialLink {
    quiet(unit);
    let stream = tokio::net::TcpStream::connect(unit.serial_tcp())
        .await
        .expect("connect to the serial bridge");
    SerialLink::new(Box::new(stream))
}

#[tokio::test]
async fn the_resolved_test_vector_is_answered() {
    let unit = start(config()).await;
    let mut link = tcp_link(&unit).await;
    link.send(&fixture(GET_INFO)).await;
    let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
    assert_eq!((message.id, message.class), (ID_GET, CLASS_REST));
    let reply = decode_reply(&message, ID_GET).expect("a reply");
    assert_eq!(reply.status, 200);
    let info: Value = serde_json::from_slice(&reply.body).expect("JSON");
    assert!(info["apiVersion"].is_string());
    assert_eq!(link.received.last(), Some(&0x33));
    unit.shutdown().await;
}

#[tokio::test]
async fn a_full_settings_tree_goes_in_large_frames_both_ways() {
    let unit = start(DeviceConfig {
        pty: true,
        ..config()
    })
    .await;
    let mut http = connect(&unit, Via::Http).await;
    quiet(&unit);
    for &via in SERIAL_VIAS {
        let export = http.get("/settings/export", "").await;
        assert!(
            export.raw.len() > 4086,
            "the tree is {} bytes",
            export.raw.len()
        );
        let mut link = match connect(&unit, via).await {
            Client::Serial(link) => link,
            Client::Http { .. } => unreachable!(),
        };
        let request = RestRequest::get("/api/v1/settings", "");
        link.send(&request.encode(0)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
        let reply = decode_reply(&message, request.id()).expect("a reply");
        assert_eq!(reply.status, 200);
        assert!(
            reply.body == export.raw,
            "{via:?}: another tree than over HTTP"
        );
        // The first frame on the wire is a large-frame page: class 0x90, page 0 of n.
        assert_eq!(&link.received[..4], [0xFF, 0x5A, ID_GET, CLASS_REST | 0x80]);
        let pages = u16::from_le_bytes([link.received[9], link.received[10]]);
        assert_eq!(usize::from(pages), (export.raw.len() + 3).div_ceil(4081));

        // A whole tree written back in large frames (import of a changed tree).
        let mut tree = export.body.clone();
        tree["oem"]["label"] = json!(format!("{via:?}"));
        let body = serde_json::to_vec_pretty(&tree).expect("JSON");
        assert!(body.len() > 4086);
        let request = RestRequest::post("/api/v1/settings/import", "", body);
        link.send(&request.encode(3)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
        let reply = decode_reply(&message, request.id()).expect("a reply");
        assert_eq!(
            reply.status,
            200,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(
            http.get("/settings/oem/label", "").await.body,
            json!(format!("{via:?}"))
        );
    }
    unit.shutdown().await;
}

#[tokio::test]
async fn bad_frames_are_skipped_and_good_ones_answered() {
    let unit = start(config()).await;
    let mut link = tcp_link(&unit).await;
    let good = fixture(GET_INFO);
    let mut bad_crc = good.clone();
    let crc_at = bad_crc.len() - 3;
    bad_crc[crc_at] ^= 0xFF;
    let mut bad_etx = good.clone();
    let etx_at = bad_etx.len() - 1;
    bad_etx[etx_at] = 0x00;
    // Noise, a bad CRC and a bad ETX, then a good frame, in one write.
    let mut bytes = b"noise\xff\x00".to_vec();
    bytes.extend_from_slice(&bad_crc);
    bytes.extend_from_slice(&bad_etx);
    bytes.extend_from_slice(&good);
    link.send(&bytes).await;
    let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
    assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    // Only that one is answered.
    assert!(link.next_message(SILENCE).await.is_none());
    // A bad CRC alone: no answer at all.
    link.send(&bad_crc).await;
    assert!(link.next_message(SILENCE).await.is_none());
    link.send(&good).await;
    assert!(link.next_message(ANSWER_WAIT).await.is_some());
    unit.shutdown().await;
}

/// A header whose length is in range (4086) but that starts no real frame: the
/// sequence of issue #11.
const CORRUPT_HEADER: [u8; 6] = [0xff, 0x5a, 0x30, 0x10, 0xf6, 0x0f];

/// A corrupt header announcing 4086 bytes, then a few bytes of junk: the unit gives the
/// partial frame up once the line is idle for the inter-byte timeout, and answers the
/// valid frame that follows at once (before, every later frame waited for 4095 bytes).
#[tokio::test]
async fn a_corrupt_header_does_not_stall_the_next_frames() {
    let unit = start(config()).await;
    let good = fixture(GET_INFO);
    let mut corrupt = CORRUPT_HEADER.to_vec();
    corrupt.extend_from_slice(b"junk\x00\x01");

    // The valid frame after a pause longer than the inter-byte timeout.
    let mut link = tcp_link(&unit).await;
    link.send(&corrupt).await;
    tokio::time::sleep(DeviceConfig::default().serial_inter_byte_timeout * 2).await;
    let sent = Instant::now();
    link.send(&good).await;
    let message = link
        .next_message(Duration::from_secs(2))
        .await
        .expect("the frame after the pause is answered");
    assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    assert!(sent.elapsed() < Duration::from_secs(2));

    // The valid frame right behind the junk, in the same write: found once the line
    // has been idle for the inter-byte timeout.
    let mut link = tcp_link(&unit).await;
    let mut bytes = corrupt.clone();
    bytes.extend_from_slice(&good);
    link.send(&bytes).await;
    let message = link
        .next_message(Duration::from_secs(2))
        .await
        .expect("the frame behind the junk is answered");
    assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    assert!(link.next_message(SILENCE).await.is_none(), "answered once");
    unit.shutdown().await;
}

#[tokio::test]
async fn malformed_requests_are_acked_with_an_error_code() {
    let unit = start(config()).await;
    let mut link = tcp_link(&unit).await;
    // (message id, request frame, error code, the ACK frame expected in answer)
    let cases: [(u8, &str, u16, &str); 4] = [
        // The REST class, data without the NUL separators: `/api/v1/info`.
        (
            ID_GET,
            "ff5a30100c002f6170692f76312f696e666f6cd933",
            crate::device::ACK_INVALID_FRAME,
            "ff5a0010040030100400620b33",
        ),
        // A POST whose body lacks its NUL: `/api/v1/settings NUL NUL {}`.
        (
            47,
            "ff5a2f1014002f6170692f76312f73657474696e677300007b7db1d533",
            crate::device::ACK_INVALID_FRAME,
            "ff5a001004002f1004003a7a33",
        ),
        // A path that is not UTF-8: `/api/ 0xFF NUL NUL`.
        (
            ID_GET,
            "ff5a301008002f6170692fff000099d433",
            crate::device::ACK_INVALID_FRAME,
            "ff5a0010040030100400620b33",
        ),
        // An id of the REST class that is no request (99): `/api/v1/info NUL NUL`.
        (
            99,
            "ff5a63100e002f6170692f76312f696e666f000030a633",
            crate::device::ACK_INVALID_PARAMETER,
            "ff5a0010040063100900c14b33",
        ),
    ];
    for (id, request, code, expected_ack) in cases {
        link.received.clear();
        link.send(&fixture(request)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("an ACK");
        assert_eq!(hex::encode(&link.received), expected_ack, "ACK bytes");
        assert_eq!(
            decode_reply(&message, id),
            Err(SerialError::Ack { error: code })
        );
        let ack = Ack::decode(&message).expect("an ACK");
        assert_eq!((ack.id, ack.class), (id, CLASS_REST));
        assert_ne!(ack.error, 0);
    }
    // An ACK sent to the unit is not answered.
    link.send(&fixture(ACK_GET_OK)).await;
    assert!(link.next_message(SILENCE).await.is_none());
    // The link still serves requests, in a standard or a large frame.
    for request in [GET_INFO, GET_INFO_LARGE] {
        link.send(&fixture(request)).await;
        let message = link.next_message(ANSWER_WAIT).await.expect("a reply");
        assert_eq!(decode_reply(&message, ID_GET).expect("a reply").status, 200);
    }
    unit.shutdown().await;
}
