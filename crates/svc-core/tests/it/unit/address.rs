//! A unit address is a scheme, a host, a port and at most a proxy's base path: nothing
//! in it can reach one of the unit's routes, since every route is appended to it.

use svc_core::ErrorKind;
use svc_core::fleet::{FleetError, UnitAddress, parse_members};
use svc_core::unit::{Unit, UnitError, unit_address};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};

/// Addresses that would have sent a settings write to `/settings/default` (every
/// default restored), a write to `/reboot`, or a request carrying someone's query.
fn hostile(base: &str) -> Vec<String> {
    let mut all = Vec::new();
    for route in [
        "/api/v1/settings/default",
        "/api/v1/reboot",
        "/api/v1/system/reboot",
        "/api/v1/settings/import",
    ] {
        for tail in ["#", "?", "?x=1", "#/", "?checkOnly=true#"] {
            all.push(format!("{base}{route}{tail}"));
        }
        all.push(format!("{base}{route}"));
        all.push(format!("{base}{route}/"));
    }
    all.extend([
        format!("{base}/API/v1/reboot"),
        format!("{base}/proxy/api"),
        format!("{base}/x/../api/v1/reboot"),
        format!("{base}/x/%2e%2e/api/v1/reboot"),
        format!("{base}/%61pi/v1/reboot"),
        format!("{base}\\api\\v1\\reboot"),
        format!("{base}//api/v1/reboot"),
        format!("{base}/units/7?"),
        format!("{base}#"),
        format!("{base}?"),
        format!("{base}/units;reboot"),
    ]);
    all
}

#[test]
fn addresses_reaching_a_route_or_carrying_a_query_are_refused() {
    for address in hostile("http://192.0.2.1") {
        let e = Unit::http(&address).expect_err(&address);
        assert!(
            matches!(
                e,
                UnitError::InvalidRequest {
                    operation: "connect",
                    ..
                }
            ),
            "{address}: {e:?}"
        );
        assert_eq!(e.kind(), ErrorKind::InvalidInput, "{address}");
        assert!(
            e.to_string().contains("not a unit address"),
            "{address}: {e}"
        );
        assert!(unit_address(&address).is_err(), "{address}");
    }
    for address in [
        "https://192.0.2.1",
        "ftp://192.0.2.1",
        "http://setup:secret@192.0.2.1",
        "http://",
        "192.0.2.1",
    ] {
        let e = Unit::http(address).expect_err(address);
        assert!(!e.to_string().contains("secret"), "{e}");
        assert!(
            matches!(e, UnitError::InvalidRequest { .. }),
            "{address}: {e:?}"
        );
    }
}

#[test]
fn a_host_a_port_and_a_proxy_base_path_are_addresses() {
    for (address, link) in [
        ("http://192.0.2.1", "http://192.0.2.1"),
        ("http://192.0.2.1/", "http://192.0.2.1"),
        ("http://unit-7.local:8080", "http://unit-7.local:8080"),
        (
            "http://gateway/units/unit-7/",
            "http://gateway/units/unit-7",
        ),
        ("http://[::1]:80", "http://[::1]"),
    ] {
        let unit = Unit::http(address).expect(address);
        assert_eq!(unit.link(), link);
    }
}

/// A fleet file with one such address is refused whole, naming the line: no unit of
/// it is reached.
#[test]
fn fleet_files_refuse_them_too() {
    for address in hostile("http://10.0.0.11") {
        let text = format!("http://10.0.0.10 setup\n{address} setup\n");
        let e = parse_members(&text).expect_err(&address);
        assert!(
            matches!(e, FleetError::Line { line: 2, .. }),
            "{address}: {e:?}"
        );
        assert!(
            e.to_string().contains("not a unit address"),
            "{address}: {e}"
        );
        assert!(matches!(
            UnitAddress::parse(&address),
            Err(FleetError::Address { .. })
        ));
    }
}

/// Against a unit: nothing reaches it, so nothing is reset or rebooted.
#[tokio::test]
async fn nothing_reaches_the_unit() {
    let device = DeviceEmulator::start(DeviceConfig::default())
        .await
        .expect("unit");
    let unit = Unit::http(device.url()).expect("unit");
    unit.write_node("oem/label", &serde_json::json!("kept"), false)
        .await
        .expect("write");
    let writes = device.applied_writes();
    for address in hostile(device.url()) {
        assert!(Unit::http(&address).is_err(), "{address}");
    }
    assert_eq!(device.applied_writes(), writes);
    assert!(!device.is_rebooting());
    assert_eq!(
        unit.node("oem/label").await.expect("read"),
        serde_json::json!("kept")
    );
}
