//! `svc_core::fleet` against fifty emulated units: status, apply (with units locked by
//! another session, unreachable, or refusing a node), export (also of units whose
//! serial numbers repeat).

use std::collections::BTreeSet;
use std::path::PathBuf;

use ins_device_api::Password;
use ins_device_api::enums::UserName;
use serde_json::{Value, json};
use svc_core::ErrorKind;
use svc_core::fleet::{Fleet, Member, UnitAddress, parse_members};
use svc_core::unit::{ApplyOptions, Unit, UnitError};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};
use svc_emulator::{Emulator, EmulatorConfig};

const UNITS: usize = 50;

/// Emulated units on a runtime of their own, as real units are machines of their own:
/// their answers never wait for the work of the fleet under test. (The tests that use
/// it also run the fleet on a multi-thread runtime, as `svc` does.)
///
/// They shared the test's one thread with the client: each unit's answer waited while
/// that thread read, normalized and compared the trees of up to eight other units.
/// Under CPU load a settings tree sent over a serial bridge (19 KB, five frames, more
/// than the socket takes at once) stalled mid-frame past the link's 250 ms inter-byte
/// timeout; the client rightly abandoned the frame, the answer was lost, and after 3 s
/// of silence a read is sent again but a settings write, which the link never
/// repeats, fails the unit. HTTP requests took up to 6 s of their 10. The deadlines are
/// the client's real ones; the units' pace was the test's defect.
struct Yard {
    emulator: Option<Emulator>,
    runtime: Option<tokio::runtime::Runtime>,
}

impl std::ops::Deref for Yard {
    type Target = Emulator;

    fn deref(&self) -> &Emulator {
        self.emulator.as_ref().expect("running")
    }
}

impl Drop for Yard {
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            let entered = runtime.enter();
            drop(self.emulator.take());
            drop(entered);
            // Dropped inside the test's runtime: tasks are cancelled without blocking.
            runtime.shutdown_background();
        }
    }
}

async fn fifty_units() -> Yard {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("emulated-units")
        .enable_all()
        .build()
        .expect("a runtime for the units");
    let emulator = runtime
        .spawn(Emulator::start(EmulatorConfig {
            devices: UNITS,
            ..EmulatorConfig::default()
        }))
        .await
        .expect("the start ran")
        .expect("the emulator starts fifty units");
    Yard {
        emulator: Some(emulator),
        runtime: Some(runtime),
    }
}

/// Half over HTTP, half over their serial bridges, as a fleet file says.
fn members_of(emulator: &Emulator) -> Vec<Member> {
    let text: String = emulator
        .devices()
        .iter()
        .enumerate()
        .map(|(index, device)| {
            if index % 2 == 0 {
                format!("{} setup\n", device.url())
            } else {
                format!("tcp://{}\n", device.serial_tcp())
            }
        })
        .collect();
    parse_members(&text).expect("a fleet file")
}

fn wanted() -> Value {
    json!({"output": {"comA": {"messages": {"imuShort": "10ms", "ekfNav": "20ms"}}}})
}

async fn message_of(url: &str) -> Value {
    let unit = Unit::http(url).expect("a unit");
    let tree = unit.settings().await.expect("its settings");
    tree["output"]["comA"]["messages"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fleet_is_brought_to_the_wanted_tree_and_reported_in_sync() {
    let emulator = fifty_units().await;
    let fleet = Fleet::new(members_of(&emulator)).with_concurrency(8);

    let mut seen = 0;
    let before = fleet.status(&wanted(), |_| seen += 1).await;
    assert_eq!(seen, UNITS, "every result reported as it came");
    assert_eq!(before.len(), UNITS);
    let serials: BTreeSet<_> = before.iter().map(|r| r.serial_number.clone()).collect();
    assert_eq!(serials.len(), UNITS, "distinct units");
    for (index, result) in before.iter().enumerate() {
        assert_eq!(result.index, index, "the list's order");
        let pending = result.outcome.as_ref().expect("status");
        assert_eq!(
            pending,
            &[
                "output/comA/messages/imuShort",
                "output/comA/messages/ekfNav"
            ]
        );
    }

    let applied = fleet
        .apply(&wanted(), ApplyOptions::default(), |_| {})
        .await;
    for result in &applied {
        let report = result.outcome.as_ref().expect("applied");
        assert!(report.written && report.changed.len() == 2, "{report:?}");
    }
    for device in emulator.devices() {
        let messages = message_of(device.url()).await;
        assert_eq!(messages["imuShort"], "10ms");
        assert_eq!(messages["ekfNav"], "20ms");
    }
    let after = fleet.status(&wanted(), |_| {}).await;
    let out_of_sync: Vec<_> = after
        .iter()
        .filter(|r| !r.outcome.as_ref().is_ok_and(Vec::is_empty))
        .collect();
    assert!(out_of_sync.is_empty(), "{out_of_sync:#?}");
    // Applying again writes nothing.
    let again = fleet
        .apply(&wanted(), ApplyOptions::default(), |_| {})
        .await;
    assert!(
        again
            .iter()
            .all(|r| r.outcome.as_ref().is_ok_and(|r| !r.written))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn locked_and_unreachable_units_do_not_stop_the_others() {
    let emulator = fifty_units().await;
    let devices = emulator.devices();
    // Units 3 and 17 are locked by another session.
    let mut holders = Vec::new();
    for index in [3, 17] {
        let other = Unit::http(devices[index].url()).expect("a unit");
        other
            .login(UserName::Setup, Password::new(""))
            .await
            .expect("login");
        other.lock().await.expect("the lock");
        holders.push(other);
    }
    let mut members: Vec<Member> = devices
        .iter()
        .map(|device| Member {
            address: UnitAddress::Http(device.url().to_owned()),
            user: Some(UserName::Setup),
        })
        .collect();
    // And one more that nothing answers.
    members.push(Member {
        address: UnitAddress::Http("http://127.0.0.1:1".to_owned()),
        user: None,
    });
    let fleet = Fleet::new(members).with_concurrency(16);
    let options = ApplyOptions {
        lock: true,
        ..ApplyOptions::default()
    };
    let results = fleet.apply(&wanted(), options, |_| {}).await;
    assert_eq!(results.len(), UNITS + 1);
    for result in &results {
        match result.index {
            3 | 17 => {
                let e = result.outcome.as_ref().expect_err("locked elsewhere");
                assert_eq!(e.status(), Some(409), "{e}");
                assert_eq!(e.kind(), ErrorKind::Conflict);
            }
            UNITS => {
                let e = result.outcome.as_ref().expect_err("nothing answers");
                assert_eq!(e.kind(), ErrorKind::Unreachable, "{e}");
                assert!(result.serial_number.is_none());
            }
            _ => assert!(
                result.outcome.as_ref().is_ok_and(|r| r.written),
                "{result:?}"
            ),
        }
    }
    // The locked units kept their tree; the others hold the wanted values.
    assert_eq!(message_of(devices[3].url()).await["imuShort"], "off");
    assert_eq!(message_of(devices[4].url()).await["imuShort"], "10ms");
    for holder in holders {
        holder.unlock().await.expect("unlock");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_node_is_reported_with_its_node_errors_and_nothing_is_applied() {
    let emulator = fifty_units().await;
    let fleet = Fleet::new(members_of(&emulator));
    let before = message_of(emulator.devices()[0].url()).await;
    let refused = json!({"output": {"comA": {"messages": {"imuShort": "3ms", "ekfNav": "10ms"}}}});
    let results = fleet.apply(&refused, ApplyOptions::default(), |_| {}).await;
    for result in &results {
        let e = result.outcome.as_ref().expect_err("the unit refuses 3ms");
        assert_eq!(e.status(), Some(422), "{e}");
        let paths: Vec<&str> = e.node_errors().iter().map(|n| n.path.as_str()).collect();
        assert_eq!(paths, ["output/comA/messages/imuShort"]);
    }
    for device in emulator.devices().iter().step_by(7) {
        assert_eq!(message_of(device.url()).await, before, "nothing applied");
    }
    // A wanted tree the schema does not describe is refused before anything is sent.
    let results = fleet.status(&json!({"nope": 1}), |_| {}).await;
    assert!(
        results
            .iter()
            .all(|r| matches!(r.outcome, Err(UnitError::InvalidSettings { .. })))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_unit_is_exported_to_a_file_named_by_its_serial_number() {
    let emulator = fifty_units().await;
    let fleet = Fleet::new(members_of(&emulator));
    let folder = tempfile::tempdir().expect("a folder");
    let results = fleet.export(folder.path(), |_| {}).await;
    let mut names = BTreeSet::new();
    for (result, device) in results.iter().zip(emulator.devices()) {
        let path = result.outcome.as_ref().expect("exported");
        assert_eq!(
            path.file_name().and_then(|n| n.to_str()),
            Some(format!("{}.json", device.serial_number()).as_str())
        );
        let tree: Value =
            serde_json::from_slice(&std::fs::read(path).expect("the file")).expect("JSON");
        assert!(tree["output"]["comA"].is_object());
        names.insert(path.clone());
    }
    assert_eq!(names.len(), UNITS);
    // The exports are a fleet's files: all equal to the first here.
    let files: Vec<_> = names.into_iter().collect();
    let diffs = svc_core::settings::diff_files(&files[0], &files[1..]).expect("diffs");
    assert!(diffs.iter().all(|d| d.patch.is_empty()));
    // A folder that cannot be written: an `io` failure per unit, none lost.
    let results = fleet
        .export(&folder.path().join("missing/deeper"), |_| {})
        .await;
    assert!(
        results
            .iter()
            .all(|r| r.outcome.as_ref().is_err_and(|e| e.kind() == ErrorKind::Io))
    );
}

/// Six units whose serial numbers collide with the names the export makes up for
/// repeated ones: `A` twice, and units whose serial numbers really are `A-2` and
/// `A-3`. Each unit holds its own lever arm, so every export is told apart.
#[tokio::test]
async fn repeated_serial_numbers_never_share_an_export_file() {
    const SERIALS: [&str; 6] = ["A", "A", "A-2", "A-2", "A", "A-3"];
    let mut devices = Vec::new();
    for serial_number in SERIALS {
        devices.push(
            DeviceEmulator::start(DeviceConfig {
                serial_number: serial_number.to_owned(),
                pty: false,
                ..DeviceConfig::default()
            })
            .await
            .expect("a unit starts"),
        );
    }
    for (index, device) in devices.iter().enumerate() {
        let unit = Unit::http(device.url()).expect("a unit");
        unit.login(UserName::Setup, Password::new(""))
            .await
            .expect("login");
        let arm = json!({"aiding": {"gnss1": {"leverArmPrimary": [index as f64, 0.0, 0.0]}}});
        unit.apply_wanted(&arm, ApplyOptions::default())
            .await
            .expect("its own lever arm");
    }
    let members: Vec<Member> = devices
        .iter()
        .map(|device| Member {
            address: UnitAddress::Http(device.url().to_owned()),
            user: None,
        })
        .collect();

    // One unit at a time: the list's order decides the names.
    let one_by_one = tempfile::tempdir().expect("a folder");
    let results = Fleet::new(members.clone())
        .with_concurrency(1)
        .export(one_by_one.path(), |_| {})
        .await;
    let names: Vec<String> = results
        .iter()
        .map(|r| {
            let path = r.outcome.as_ref().expect("exported");
            path.file_name().unwrap().to_string_lossy().into_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "A.json",
            "A-2.json",
            "A-2-2.json",
            "A-2-3.json",
            "A-3.json",
            "A-3-2.json"
        ]
    );
    assert_exports_are_the_units(&results, 6);

    // All at once: whichever answers first keeps a name, but no file is shared.
    let at_once = tempfile::tempdir().expect("a folder");
    let results = Fleet::new(members)
        .with_concurrency(6)
        .export(at_once.path(), |_| {})
        .await;
    assert_exports_are_the_units(&results, 6);
    for device in devices {
        device.shutdown().await;
    }
}

/// Every unit has its own file, holding its own tree (the lever arm's x is the unit's
/// place in the list), and the folder holds nothing else.
fn assert_exports_are_the_units(results: &[svc_core::fleet::UnitResult<PathBuf>], units: usize) {
    let paths: BTreeSet<&PathBuf> = results
        .iter()
        .map(|r| r.outcome.as_ref().expect("exported"))
        .collect();
    assert_eq!(paths.len(), units, "one file per unit: {paths:?}");
    for (index, result) in results.iter().enumerate() {
        let path = result.outcome.as_ref().expect("exported");
        let tree: Value =
            serde_json::from_slice(&std::fs::read(path).expect("the file")).expect("JSON");
        assert_eq!(
            tree["aiding"]["gnss1"]["leverArmPrimary"][0],
            json!(index as f64),
            "{} holds unit {index}'s tree",
            path.display()
        );
    }
    let folder = paths
        .iter()
        .next()
        .and_then(|p| p.parent())
        .expect("a folder");
    let files = std::fs::read_dir(folder).expect("the folder").count();
    assert_eq!(files, units, "no other file in {}", folder.display());
}

/// A unit whose unlock answer is lost after its change was written and confirmed (it
/// rebooted meanwhile, or the link dropped the answer) is reported applied, with its
/// unlock not confirmed; never failed.
#[tokio::test]
async fn a_lost_unlock_answer_is_reported_as_applied() {
    use svc_emulator::{Lost, LostExchange};

    let device = DeviceEmulator::start(DeviceConfig {
        pty: false,
        lost_exchanges: vec![LostExchange {
            operation: "unlockSettings".to_owned(),
            lost: Lost::Answer,
            count: 1,
        }],
        ..DeviceConfig::default()
    })
    .await
    .expect("a unit starts");
    let steady = DeviceEmulator::start(DeviceConfig {
        pty: false,
        ..DeviceConfig::default()
    })
    .await
    .expect("a unit starts");
    let members: Vec<Member> = [&device, &steady]
        .iter()
        .map(|d| Member {
            address: UnitAddress::Http(d.url().to_owned()),
            user: Some(UserName::Setup),
        })
        .collect();
    let wanted = json!({"oem": {"label": "yard 7"}});
    let results = Fleet::new(members)
        .apply(
            &wanted,
            ApplyOptions {
                lock: true,
                ..ApplyOptions::default()
            },
            |_| {},
        )
        .await;
    let first = results[0].outcome.as_ref().expect("applied, not failed");
    assert!(first.written && first.unlock_unconfirmed, "{first:?}");
    let second = results[1].outcome.as_ref().expect("applied");
    assert!(second.written && !second.unlock_unconfirmed, "{second:?}");
    assert_eq!(device.applied_writes(), 1);
}
