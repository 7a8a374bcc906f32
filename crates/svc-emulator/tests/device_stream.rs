#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The emulated unit's live output on its serial link (Port A): the messages
//! `output.comA.messages` enables, at their triggers, on the unit's clock and on the
//! trajectory its data logger records; a change of the messages takes effect at once.

use std::time::Duration;

use svc_emulator::device::outputs::trajectory_at;
use svc_emulator::device::{DeviceConfig, DeviceEmulator};
use svc_logs::{LogReader, Record};
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

async fn unit() -> DeviceEmulator {
    DeviceEmulator::start(DeviceConfig {
        pty: false,
        ..DeviceConfig::default()
    })
    .await
    .expect("the unit starts")
}

/// What the link carries for `millis`, nothing being asked.
async fn listen(link: &mut TcpStream, millis: u64) -> Vec<u8> {
    let mut bytes = Vec::new();
    let until = tokio::time::Instant::now() + Duration::from_millis(millis);
    let mut buf = [0u8; 8192];
    while let Ok(read) = tokio::time::timeout_at(until, link.read(&mut buf)).await {
        let n = read.expect("read");
        assert!(n > 0, "the unit closed the link");
        bytes.extend_from_slice(&buf[..n]);
    }
    bytes
}

fn records(bytes: &[u8]) -> Vec<Record> {
    let mut reader = LogReader::new(bytes);
    let mut out = Vec::new();
    while let Some(record) = reader.next_record().expect("decodes") {
        out.push(record);
    }
    assert_eq!(reader.stats().bad_crc, 0);
    out
}

#[tokio::test]
async fn port_a_streams_its_messages_on_the_units_clock_and_trajectory() {
    let device = unit().await;
    let mut link = TcpStream::connect(device.serial_tcp())
        .await
        .expect("bridge");
    // Skip what a partly written first tick may hold; then listen.
    let _ = listen(&mut link, 100).await;
    let got = records(&listen(&mut link, 700).await);
    let navs: Vec<_> = got
        .iter()
        .filter_map(|r| match r {
            Record::EkfNav(nav) => Some(nav),
            _ => None,
        })
        .collect();
    // The defaults: ekfNav and ekfEuler every 50 ms.
    assert!((10..=16).contains(&navs.len()), "{} ekfNav", navs.len());
    for pair in navs.windows(2) {
        assert_eq!(pair[1].timestamp - pair[0].timestamp, 50_000);
    }
    for nav in &navs {
        let (position, _, _) = trajectory_at(f64::from(nav.timestamp) / 1e6);
        assert!((nav.position[0] - position[0]).abs() < 1e-9);
        assert!((nav.position[1] - position[1]).abs() < 1e-9);
    }
    assert!(got.iter().any(|r| matches!(r, Record::EkfEuler(_))));

    // imuData every millisecond and ekfNav every 10 ms, the others off: at once.
    let body = br#"{"output":{"comA":{"messages":{"imuData":"1ms","ekfNav":"10ms","ekfEuler":"off","status":"off","utcTime":"off","gps1Pos":"off"}}}}"#;
    let (status, answer) = device
        .handle("POST", "/api/v1/settings", "", body)
        .expect("answer");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let _ = listen(&mut link, 100).await;
    let got = records(&listen(&mut link, 500).await);
    let imu = got
        .iter()
        .filter(|r| matches!(r, Record::ImuData(_)))
        .count();
    let navs = got
        .iter()
        .filter(|r| matches!(r, Record::EkfNav(_)))
        .count();
    assert!((400..=600).contains(&imu), "{imu} imuData in 500 ms");
    assert!((40..=60).contains(&navs), "{navs} ekfNav in 500 ms");
    assert!(
        got.iter()
            .all(|r| matches!(r, Record::ImuData(_) | Record::EkfNav(_))),
        "only the messages enabled"
    );

    // Everything off: the link falls silent.
    let body = br#"{"output":{"comA":{"messages":{"imuData":"off","ekfNav":"off"}}}}"#;
    assert_eq!(
        device
            .handle("POST", "/api/v1/settings", "", body)
            .expect("answer")
            .0,
        200
    );
    let _ = listen(&mut link, 50).await;
    assert!(listen(&mut link, 300).await.is_empty());
}

/// An Ethernet port set to UDP sends its messages as datagrams to its destination once
/// the unit rebooted (`ports` settings need a reboot; `output` ones do not).
#[tokio::test]
async fn an_ethernet_port_in_udp_sends_datagrams_after_the_reboot() {
    let device = DeviceEmulator::start(DeviceConfig {
        pty: false,
        reboot_time: Duration::from_millis(200),
        ..DeviceConfig::default()
    })
    .await
    .expect("the unit starts");
    let receiver = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = receiver.local_addr().expect("addr").port();
    // The unit sends from its input port, as the vendor's tools expect.
    let in_port = std::net::UdpSocket::bind("127.0.0.1:0")
        .and_then(|s| s.local_addr())
        .expect("a free port")
        .port();
    let body = format!(
        r#"{{"ports":{{"eth1":{{"protocol":"udp","udpIp":"127.0.0.1","udpOutPort":{port},"udpInPort":{in_port}}}}},"output":{{"eth1":{{"messages":{{"ekfNav":"10ms","utcTime":"100ms"}}}}}}}}"#
    );
    let (status, answer) = device
        .handle("POST", "/api/v1/settings", "", body.as_bytes())
        .expect("answer");
    assert_eq!(status, 200, "{}", String::from_utf8_lossy(&answer));
    let answer: serde_json::Value = serde_json::from_slice(&answer).expect("JSON");
    assert_eq!(answer["needReboot"], true, "{answer}");

    let mut buf = vec![0u8; 65_536];
    // Not before the reboot: the port is still what it was at power-on.
    let early = tokio::time::timeout(Duration::from_millis(300), receiver.recv(&mut buf)).await;
    assert!(early.is_err(), "a datagram before the reboot");

    assert_eq!(
        device
            .handle("POST", "/api/v1/reboot", "", b"")
            .expect("answer")
            .0,
        200
    );
    let mut bytes = Vec::new();
    let mut datagrams = 0;
    let until = tokio::time::Instant::now() + Duration::from_millis(1500);
    while let Ok(received) = tokio::time::timeout_at(until, receiver.recv_from(&mut buf)).await {
        let (n, from) = received.expect("recv");
        assert_eq!(from.port(), in_port, "sent from udpInPort");
        // Each datagram holds whole frames.
        assert!(!records(&buf[..n]).is_empty());
        bytes.extend_from_slice(&buf[..n]);
        datagrams += 1;
    }
    let got = records(&bytes);
    let navs = got
        .iter()
        .filter(|r| matches!(r, Record::EkfNav(_)))
        .count();
    let utc = got
        .iter()
        .filter(|r| matches!(r, Record::UtcTime(_)))
        .count();
    // 1.5 s less the reboot: about 130 ekfNav and 13 utcTime.
    assert!(
        (80..=150).contains(&navs),
        "{navs} ekfNav in {datagrams} datagrams"
    );
    assert!((8..=15).contains(&utc), "{utc} utcTime");
    // The unit's clock restarted at the reboot.
    let first = got.iter().find_map(|r| match r {
        Record::EkfNav(nav) => Some(nav.timestamp),
        _ => None,
    });
    assert!(first.is_some_and(|t| t < 1_000_000), "{first:?}");
}
