//! The vendor client's routes: `save()`, a reboot that falls back to `/system/reboot`
//! on a unit without `/reboot`, and `apply_wanted` saving before it reboots the unit
//! for a change that needs it.

use std::time::Duration;

use super::{Link, Rig, config};
use ins_device_api::enums::UserName;
use serde_json::json;
use svc_core::unit::ApplyOptions;
use svc_emulator::device::DeviceConfig;

over_links!(
    a_change_that_needs_a_reboot_is_saved_then_the_unit_rebooted,
    reboot_uses_the_route_the_unit_serves,
);

/// A unit's firmware without these operations.
fn lacking(operations: &[&str]) -> DeviceConfig {
    DeviceConfig {
        missing_operations: operations.iter().map(|op| (*op).to_owned()).collect(),
        ..config(&[])
    }
}

async fn a_change_that_needs_a_reboot_is_saved_then_the_unit_rebooted(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let reboot = ApplyOptions {
        reboot: true,
        lock: true,
        ..ApplyOptions::default()
    };

    // No reboot needed: nothing saved, no reboot.
    let report = unit
        .apply_wanted(&json!({"oem": {"label": "field"}}), reboot)
        .await
        .unwrap();
    assert!(report.written && !report.need_reboot && !report.rebooted);
    assert_eq!(rig.dev.saves(), 0);
    assert!(!rig.dev.is_rebooting());

    // The NTP setting takes effect after a reboot: saved (under the lock), then the
    // unit rebooted. A save after the reboot would have found the unit silent.
    let enabled = rig.tree()["network"]["ntp"]["enabled"].as_bool().unwrap();
    let report = unit
        .apply_wanted(&json!({"network": {"ntp": {"enabled": !enabled}}}), reboot)
        .await
        .unwrap();
    assert!(
        report.written && report.need_reboot && report.rebooted,
        "{report:?}"
    );
    assert_eq!(rig.dev.saves(), 1, "{link:?}: saved once");
    assert!(rig.dev.is_rebooting(), "{link:?}: rebooted");
    unit.wait_until_back(Duration::from_secs(20)).await.unwrap();
    assert_eq!(rig.tree()["network"]["ntp"]["enabled"], json!(!enabled));

    // Without `reboot`, a change that needs one is only written.
    let report = unit
        .apply_wanted(
            &json!({"network": {"ntp": {"enabled": enabled}}}),
            ApplyOptions::default(),
        )
        .await
        .unwrap();
    assert!(report.need_reboot && !report.rebooted);
    assert_eq!(rig.dev.saves(), 1);
    assert!(!rig.dev.is_rebooting());

    // A unit without the save route keeps its settings anyway: rebooted all the same;
    // `save()` itself says the unit has no such route.
    let older = Rig::start(link, lacking(&["saveSettings"])).await;
    let unit = older.login(UserName::Setup, "").await;
    assert_eq!(unit.save().await.unwrap_err().status(), Some(404));
    let report = unit
        .apply_wanted(&json!({"network": {"ntp": {"enabled": !enabled}}}), reboot)
        .await
        .unwrap();
    assert!(report.rebooted, "{report:?}");
    assert!(older.dev.is_rebooting());
}

async fn reboot_uses_the_route_the_unit_serves(link: Link) {
    for missing in [&["reboot"][..], &["rebootSystem"], &[]] {
        let rig = Rig::start(link, lacking(missing)).await;
        let unit = rig.login(UserName::Setup, "").await;
        unit.reboot()
            .await
            .unwrap_or_else(|e| panic!("{link:?} without {missing:?}: {e}"));
        assert!(rig.dev.is_rebooting(), "{link:?} without {missing:?}");
        unit.wait_until_back(Duration::from_secs(20)).await.unwrap();
    }
    // A unit with neither route: the documented route's 404 is not hidden.
    let rig = Rig::start(link, lacking(&["reboot", "rebootSystem"])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let e = unit.reboot().await.unwrap_err();
    assert_eq!(e.status(), Some(404), "{e}");
    assert!(!rig.dev.is_rebooting());
}
