//! One unit behind every transport, its end, and the identities of a fleet's units.

use super::*;

#[cfg(unix)]
#[tokio::test]
async fn http_and_serial_share_one_unit() {
    let unit = start(DeviceConfig {
        pty: true,
        ..config()
    })
    .await;
    let mut http = connect(&unit, Via::Http).await;
    let mut tcp = connect(&unit, Via::SerialTcp).await;
    let mut pty = connect(&unit, Via::Pty).await;
    let token = tcp.login("setup", "").await;
    assert_eq!(
        http.post("/settings/lock", &auth(&token), &json!({}))
            .await
            .status,
        200
    );
    assert_eq!(
        pty.post("/settings/oem/label", "", &json!("x"))
            .await
            .status,
        409
    );
    assert_eq!(
        pty.post("/settings/oem/label", &auth(&token), &json!("pty"))
            .await
            .status,
        200
    );
    assert_eq!(http.get("/settings/oem/label", "").await.body, "pty");
    assert_eq!(tcp.get("/settings/oem/label", "").await.body, "pty");
    // The core answers the same bytes as the transports.
    let (status, body) = unit
        .handle("GET", "/api/v1/settings/oem", "", b"")
        .expect("an answer");
    assert_eq!(status, 200);
    assert_eq!(body, http.get("/settings/oem", "").await.raw);
    unit.shutdown().await;
}

#[tokio::test]
async fn dropping_the_emulator_stops_it() {
    let unit = start(config()).await;
    let url = unit.url().to_owned();
    let serial = unit.serial_tcp().to_owned();
    drop(unit);
    let deadline = Instant::now() + ANSWER_WAIT;
    loop {
        let http_down = reqwest::get(format!("{url}/api/v1/info")).await.is_err();
        let serial_down = tokio::net::TcpStream::connect(&serial).await.is_err();
        if http_down && serial_down {
            break;
        }
        assert!(Instant::now() < deadline, "still serving");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

// ------------------------------------------------------------------ fleets

#[test]
fn fleet_units_count_on_from_the_first_identity() {
    use crate::device::{nth_mac_address, nth_serial_number};
    assert_eq!(nth_serial_number("EMU00000001", 0), "EMU00000001");
    assert_eq!(nth_serial_number("EMU00000001", 1), "EMU00000002");
    assert_eq!(nth_serial_number("EMU00000001", 255), "EMU00000256");
    assert_eq!(nth_serial_number("EMU99999999", 1), "EMU100000000");
    assert_eq!(nth_serial_number("A9", 1), "A10");
    assert_eq!(nth_serial_number("unit", 0), "unit");
    assert_eq!(nth_serial_number("unit", 2), "unit-3");
    let mac = |first: &str, index| nth_mac_address(first, index);
    assert_eq!(
        mac("02:00:5e:10:00:01", 0).as_deref(),
        Ok("02:00:5e:10:00:01")
    );
    assert_eq!(
        mac("02:00:5e:10:00:01", 1).as_deref(),
        Ok("02:00:5e:10:00:02")
    );
    assert_eq!(
        mac("02:00:5e:10:00:ff", 1).as_deref(),
        Ok("02:00:5e:10:01:00")
    );
    assert_eq!(
        mac("02:00:5e:ff:ff:ff", 1).as_deref(),
        Ok("02:00:5e:00:00:00")
    );
    assert_eq!(mac("not a mac", 0).as_deref(), Ok("not a mac"));
    assert!(mac("not a mac", 1).is_err());
    assert!(mac("02:00:5e:10:00", 1).is_err());
    assert!(mac("02:00:5e:10:00:1", 1).is_err());
}

#[tokio::test]
async fn a_configured_identity_is_reported() {
    let unit = start(DeviceConfig {
        serial_number: "SN-42".to_owned(),
        mac_address: "02:00:00:00:00:2a".to_owned(),
        ..config()
    })
    .await;
    assert_eq!(unit.serial_number(), "SN-42");
    let mut c = connect(&unit, Via::Http).await;
    let info = c.get("/info", "").await;
    assert_eq!(info.status, 200);
    assert_eq!(info.body["serialNumber"], "SN-42");
    assert_eq!(info.body["macAddress"], "02:00:00:00:00:2a");
    unit.shutdown().await;
}
