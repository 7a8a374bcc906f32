//! An apply with a reboot is never left half done: a save, unlock or reboot whose
//! answer is lost, and an apply stopped after its write, end with the settings saved
//! and rebooted into (now, or by the next apply through the session's journal), and a
//! reboot is reported done only when the unit is seen to have rebooted.

use std::time::Duration;

use super::{Link, Rig, config};
use ins_device_api::enums::UserName;
use serde_json::{Value, json};
use svc_core::unit::{ApplyOptions, Journal, Pending, Unit, UnitError};
use svc_emulator::device::DeviceConfig;
use svc_emulator::{Lost, LostExchange};

over_links!(
    a_lost_reboot_answer_is_confirmed_by_the_token_of_before,
    a_lost_reboot_request_is_reported_not_confirmed,
    a_lost_save_or_unlock_answer_still_ends_saved_and_rebooted,
    a_rerun_finishes_what_an_interrupted_apply_owed,
    a_lost_write_answer_is_read_back,
);

fn losing(lost: &[(&str, Lost)]) -> DeviceConfig {
    DeviceConfig {
        lost_exchanges: lost
            .iter()
            .map(|(operation, lost)| LostExchange {
                operation: (*operation).to_owned(),
                lost: *lost,
                count: 1,
            })
            .collect(),
        ..config(&[])
    }
}

/// A change that takes effect only after a reboot.
fn needs_reboot(rig: &Rig) -> Value {
    let enabled = rig.tree()["network"]["ntp"]["enabled"]
        .as_bool()
        .expect("a boolean");
    json!({"network": {"ntp": {"enabled": !enabled}}})
}

const WITH_REBOOT: ApplyOptions = ApplyOptions {
    check_only: false,
    lock: true,
    reboot: true,
    wait_until_back: None,
};

async fn a_lost_reboot_answer_is_confirmed_by_the_token_of_before(link: Link) {
    // Logged in: the session's own token tells.
    let rig = Rig::start(link, losing(&[("reboot", Lost::Answer)])).await;
    let unit = rig.login(UserName::Setup, "").await;
    unit.reboot().await.expect("seen to have rebooted");
    assert_eq!(rig.dev.reboots(), 1);
    unit.wait_until_back(Duration::from_secs(20))
        .await
        .expect("back");

    // Not logged in (the unit's default user): a token taken for the purpose tells.
    let rig = Rig::start(link, losing(&[("reboot", Lost::Answer)])).await;
    let unit = rig.session().await;
    unit.reboot().await.expect("seen to have rebooted");
    assert_eq!(rig.dev.reboots(), 1);
    assert!(
        unit.user().is_none(),
        "the session itself stays without a login"
    );
}

async fn a_lost_reboot_request_is_reported_not_confirmed(link: Link) {
    let rig = Rig::start(link, losing(&[("reboot", Lost::Request)])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let e = unit.reboot().await.expect_err("the unit never rebooted");
    assert!(matches!(e, UnitError::RebootNotConfirmed { .. }), "{e:?}");
    assert_eq!(e.kind(), svc_core::ErrorKind::Unreachable);
    assert!(e.to_string().contains("did not reboot"), "{e}");
    assert!(!e.to_string().contains("could not be reached"), "{e}");
    assert_eq!(rig.dev.reboots(), 0);
    // The session is intact, and the next reboot goes through.
    unit.info().await.expect("still logged in");
    unit.reboot().await.expect("rebooted");
    assert_eq!(rig.dev.reboots(), 1);
}

async fn a_lost_save_or_unlock_answer_still_ends_saved_and_rebooted(link: Link) {
    for operation in ["saveSettings", "unlockSettings"] {
        let rig = Rig::start(link, losing(&[(operation, Lost::Answer)])).await;
        let unit = rig.login(UserName::Setup, "").await;
        let wanted = needs_reboot(&rig);
        let report = unit
            .apply_wanted(&wanted, WITH_REBOOT)
            .await
            .unwrap_or_else(|e| panic!("{link:?} {operation}: {e}"));
        assert!(
            report.written && report.need_reboot && report.rebooted,
            "{operation}: {report:?}"
        );
        assert!(
            !report.reboot_pending && !report.unlock_unconfirmed,
            "{report:?}"
        );
        assert!(rig.dev.saves() >= 1, "{operation}: saved");
        assert_eq!(rig.dev.reboots(), 1, "{operation}: rebooted once");
    }

    // Without a reboot to end it, a lost unlock answer is reported as such: the change
    // is written and confirmed. (Lost more often than a serial link repeats it.)
    let rig = Rig::start(
        link,
        DeviceConfig {
            lost_exchanges: vec![LostExchange {
                operation: "unlockSettings".to_owned(),
                lost: Lost::Answer,
                count: 5,
            }],
            ..config(&[])
        },
    )
    .await;
    let unit = rig.login(UserName::Setup, "").await;
    let report = unit
        .apply_wanted(
            &json!({"oem": {"label": "kept"}}),
            ApplyOptions {
                lock: true,
                ..ApplyOptions::default()
            },
        )
        .await
        .expect("applied");
    assert!(report.written && report.unlock_unconfirmed, "{report:?}");
}

async fn a_rerun_finishes_what_an_interrupted_apply_owed(link: Link) {
    let dir = tempfile::tempdir().expect("a folder");
    let journal = || Journal::at(dir.path());
    // The reboot never reaches the unit: written and saved, the reboot owed.
    let rig = Rig::start(link, losing(&[("reboot", Lost::Request)])).await;
    let serial = rig.dev.serial_number().to_owned();
    let unit = rig.login(UserName::Setup, "").await.with_journal(journal());
    let wanted = needs_reboot(&rig);
    let report = unit
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect("applied");
    assert!(
        report.written && report.reboot_pending && !report.rebooted,
        "{report:?}"
    );
    assert_eq!(rig.dev.reboots(), 0);
    assert_eq!(
        journal().pending(&serial).expect("read"),
        Pending {
            save: false,
            reboot: true
        }
    );

    // A rerun without `reboot` says a reboot is needed and leaves it owed.
    let again = rig.login(UserName::Setup, "").await.with_journal(journal());
    let report = again
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .expect("nothing to write");
    assert!(
        report.changed.is_empty() && report.need_reboot && !report.rebooted,
        "{report:?}"
    );

    // A rerun with `reboot` (any address of the unit: the record is the unit's) reboots.
    let report = again
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect("finished");
    assert!(
        report.changed.is_empty() && !report.written && report.need_reboot && report.rebooted,
        "{report:?}"
    );
    assert_eq!(rig.dev.reboots(), 1);
    assert_eq!(
        journal().pending(&serial).expect("read"),
        Pending::default()
    );
    again
        .wait_until_back(Duration::from_secs(20))
        .await
        .expect("back");
}

/// The save never reaches the unit, as many times as the apply sends it: the apply
/// fails after its write, and the rerun saves and reboots. (Over HTTP only: the serial
/// links' repetitions would only make it longer.)
#[tokio::test]
async fn a_lost_save_is_finished_by_the_rerun() {
    let link = Link::Http;
    let dir = tempfile::tempdir().expect("a folder");
    let journal = || Journal::at(dir.path());
    // The apply sends a save 3 times.
    let sends = 3;
    let rig = Rig::start(
        link,
        DeviceConfig {
            lost_exchanges: vec![LostExchange {
                operation: "saveSettings".to_owned(),
                lost: Lost::Request,
                count: sends,
            }],
            ..config(&[])
        },
    )
    .await;
    let serial = rig.dev.serial_number().to_owned();
    let unit = rig.login(UserName::Setup, "").await.with_journal(journal());
    let wanted = needs_reboot(&rig);
    let e = unit
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect_err("the save is lost");
    assert!(
        matches!(
            e,
            UnitError::Unreachable {
                operation: "saveSettings",
                ..
            }
        ),
        "{e:?}"
    );
    assert_eq!(rig.dev.saves(), 0);
    assert_eq!(
        journal().pending(&serial).expect("read"),
        Pending {
            save: true,
            reboot: true
        }
    );
    let rerun = rig.login(UserName::Setup, "").await.with_journal(journal());
    let report = rerun
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect("finished");
    assert!(
        report.rebooted && !report.written && report.changed.is_empty(),
        "{report:?}"
    );
    assert_eq!(rig.dev.saves(), 1);
    assert_eq!(rig.dev.reboots(), 1);
    assert_eq!(
        journal().pending(&serial).expect("read"),
        Pending::default()
    );
}

/// Stopped right after the write (the apply's future dropped once the unit applied it,
/// as a signal does): the save and the reboot were recorded before the write, and the
/// rerun does both.
#[tokio::test]
async fn an_apply_stopped_after_its_write_is_finished_by_the_rerun() {
    let dir = tempfile::tempdir().expect("a folder");
    let journal = || Journal::at(dir.path());
    let rig = Rig::start(
        Link::Http,
        DeviceConfig {
            latency: Duration::from_millis(150),
            ..config(&[])
        },
    )
    .await;
    let serial = rig.dev.serial_number().to_owned();
    let unit = rig.login(UserName::Setup, "").await.with_journal(journal());
    let wanted = needs_reboot(&rig);
    let writes = rig.dev.applied_writes();
    {
        let apply = unit.apply_wanted(&wanted, WITH_REBOOT);
        tokio::pin!(apply);
        loop {
            tokio::select! {
                result = &mut apply => panic!("the apply ended first: {result:?}"),
                () = tokio::time::sleep(Duration::from_millis(5)) => {}
            }
            if rig.dev.applied_writes() > writes {
                break;
            }
        }
    }
    assert_eq!(rig.dev.saves(), 0, "stopped before the save");
    assert_eq!(
        journal().pending(&serial).expect("read"),
        Pending {
            save: true,
            reboot: true
        }
    );
    // What `svc device` does on a signal: the session logs out (its lock ends).
    unit.logout().await.expect("logged out");
    let rerun = rig.login(UserName::Setup, "").await.with_journal(journal());
    let report = rerun
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect("finished");
    assert!(report.rebooted && !report.written, "{report:?}");
    assert_eq!(rig.dev.saves(), 1);
    assert_eq!(rig.dev.reboots(), 1);
    assert_eq!(
        journal().pending(&serial).expect("read"),
        Pending::default()
    );
}

async fn a_lost_write_answer_is_read_back(link: Link) {
    let rig = Rig::start(link, losing(&[("updateSettings", Lost::Answer)])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let report = unit
        .apply_wanted(
            &json!({"oem": {"label": "lost answer"}}),
            ApplyOptions::default(),
        )
        .await
        .expect("the unit holds it");
    assert!(report.written);
    assert_eq!(rig.dev.applied_writes(), 1, "written once");

    let rig = Rig::start(link, losing(&[("updateSettings", Lost::Request)])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let report = unit
        .apply_wanted(
            &json!({"oem": {"label": "lost request"}}),
            ApplyOptions::default(),
        )
        .await
        .expect("sent again");
    assert!(report.written);
    assert_eq!(rig.dev.applied_writes(), 1, "applied once");
    assert_eq!(rig.tree()["oem"]["label"], "lost request");
}

/// A session of a unit known by another address reads the same record: the journal is
/// keyed by the serial number.
#[tokio::test]
async fn the_record_is_the_units_not_the_addresss() {
    let rig = Rig::start(Link::Http, losing(&[("reboot", Lost::Request)])).await;
    let dir = tempfile::tempdir().expect("a folder");
    let unit = rig
        .login(UserName::Setup, "")
        .await
        .with_journal(Journal::at(dir.path()));
    let wanted = needs_reboot(&rig);
    let report = unit
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect("applied");
    assert!(report.reboot_pending);
    let other_address = rig.dev.url().replace("127.0.0.1", "localhost");
    let other = Unit::http(&other_address)
        .expect("an address")
        .with_journal(Journal::at(dir.path()));
    other
        .login(UserName::Setup, svc_core::unit::Password::new(""))
        .await
        .expect("login");
    let report = other
        .apply_wanted(&wanted, WITH_REBOOT)
        .await
        .expect("finished");
    assert!(report.rebooted, "{report:?}");
}

/// A unit that stays silent past the deadline is a timeout of the unit, whatever the
/// link (as a service that does not answer in time is a timeout of the service); a
/// connection refused stays an unreachable unit.
#[tokio::test]
async fn a_silent_unit_is_a_timeout_of_the_unit_over_every_link() {
    use svc_core::{ErrorKind, Side};

    // HTTP: every answer comes later than the request timeout.
    let rig = Rig::start(
        Link::Http,
        DeviceConfig {
            latency: Duration::from_millis(800),
            ..config(&[])
        },
    )
    .await;
    let unit = Unit::http_with_timeout(rig.dev.url(), Duration::from_millis(150)).unwrap();
    let e = unit.info().await.expect_err("no answer in time");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e:?}");
    assert_eq!(e.side(), Some(Side::Unit));
    assert!(e.is_retryable());
    assert!(e.to_string().contains("did not answer in time"), "{e}");

    // The serial link: every answer of getDeviceInfo lost, each attempt waits its
    // deadline.
    let silent = DeviceConfig {
        lost_exchanges: vec![LostExchange {
            operation: "getDeviceInfo".to_owned(),
            lost: Lost::Answer,
            count: 10,
        }],
        ..config(&[])
    };
    let options = svc_core::unit::serial_link::SerialOptions {
        answer_timeout: Duration::from_millis(200),
        ..super::SERIAL
    };
    let rig = Rig::start_with(Link::Tcp, silent, options).await;
    let e = rig.session().await.info().await.expect_err("no answer");
    assert_eq!(e.kind(), ErrorKind::Timeout, "{e:?}");
    assert_eq!(e.side(), Some(Side::Unit));
    assert!(e.to_string().contains("no answer"), "{e}");

    // Nothing listening: unreachable, not a timeout.
    let e = Unit::http("http://127.0.0.1:1")
        .unwrap()
        .info()
        .await
        .expect_err("refused");
    assert_eq!(e.kind(), ErrorKind::Unreachable, "{e:?}");
    assert_eq!(e.side(), Some(Side::Unit));
}
