//! `svc device` never turns a node path into another route, and a signal in the middle
//! of `settings apply --lock` still ends the session and releases the lock.

use std::time::{Duration, Instant};

use serde_json::json;
use svc_emulator::device::DeviceConfig;

use crate::support::{TestUnit, command, svc, svc_with, write_json};

/// `settings set default '{}'` would have restored every default, `../reboot` rebooted
/// the unit, `get ../info` read the unit's identity: each is refused before sending
/// (exit 5), over HTTP and the serial bridge, and the unit is as it was.
#[test]
fn node_paths_that_name_no_node_are_refused_over_every_link() {
    let unit = TestUnit::start(&[]);
    let changed = svc(&[
        "device",
        "--url",
        &unit.url(),
        "settings",
        "set",
        "output/comA/messages/imuShort",
        "10ms",
    ]);
    assert_eq!(changed.code, 0, "{changed:?}");
    let before = unit.tree();
    let writes = unit.applied_writes();
    for link in [["--url", &unit.url()], ["--serial-tcp", &unit.serial_tcp()]] {
        for (verb, path) in [
            ("set", "default"),
            ("set", "import"),
            ("set", "../reboot"),
            ("set", "aiding/../../reboot"),
            ("get", "../info"),
            ("get", "lock"),
        ] {
            let mut args = vec!["device", link[0], link[1], "settings", verb, path];
            if verb == "set" {
                args.push("{}");
            }
            let run = svc(&args);
            assert_eq!(run.code, 5, "{args:?}: {run:?}");
            assert!(
                run.stdout.is_empty(),
                "{args:?}: nothing reported as written"
            );
            assert!(run.stderr.contains(path), "{args:?}: {}", run.stderr);
            assert!(!unit.is_rebooting(), "{args:?} rebooted the unit");
        }
    }
    assert_eq!(unit.applied_writes(), writes, "no write was applied");
    assert_eq!(unit.tree(), before);
}

/// A unit address that reaches a route of the unit (`…/api/v1/settings/default#` turned
/// every write into a restore of the factory defaults, `…/api/v1/reboot#` into a
/// reboot) or carries a query is refused before a byte is sent: exit 5, nothing
/// printed on stdout, the unit as it was; in a fleet file too.
#[test]
fn unit_addresses_that_reach_a_route_are_refused() {
    let unit = TestUnit::start(&[]);
    svc(&[
        "device",
        "--url",
        &unit.url(),
        "settings",
        "set",
        "oem/label",
        "kept",
    ])
    .ok();
    let before = unit.tree();
    let writes = unit.applied_writes();
    let base = unit.url();
    let dir = tempfile::tempdir().unwrap();
    let wanted = dir.path().join("wanted.json");
    write_json(&wanted, &json!({"oem": {"label": "changed"}}));
    let wanted = wanted.to_str().unwrap().to_owned();
    for route in [
        "/api/v1/settings/default",
        "/api/v1/reboot",
        "/api/v1/system/reboot",
    ] {
        for tail in ["#", "?", "?checkOnly=false", ""] {
            let address = format!("{base}{route}{tail}");
            for command in [
                vec!["settings", "set", "oem/label", "X"],
                vec!["settings", "save"],
                vec!["settings", "apply", &wanted],
                vec!["info"],
            ] {
                let mut args = vec!["device", "--url", &address];
                args.extend(command.iter().copied());
                let run = svc(&args);
                assert_eq!(run.code, 5, "{args:?}: {run:?}");
                assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
                assert!(
                    run.stderr.contains("not a unit address"),
                    "{args:?}: {}",
                    run.stderr
                );
                assert!(!unit.is_rebooting(), "{args:?} rebooted the unit");
            }
            let fleet = dir.path().join("units.txt");
            std::fs::write(&fleet, format!("{base}\n{address}\n")).unwrap();
            let fleet = fleet.to_str().unwrap();
            let run = svc(&["device", "fleet", "--units", fleet, "apply", &wanted]);
            assert_eq!(run.code, 5, "fleet with {address}: {run:?}");
            assert!(run.stderr.contains("line 2"), "{}", run.stderr);
        }
    }
    assert_eq!(unit.applied_writes(), writes, "no write was applied");
    assert_eq!(unit.tree(), before);
}

/// SIGTERM (what `timeout`, systemd and `docker stop` send) while `settings apply
/// --lock` holds the lock: the command stops, logs out (which releases the lock at
/// once rather than 60 s later) and exits 143; SIGINT likewise with 130.
#[cfg(unix)]
#[test]
fn a_signal_during_a_locked_apply_releases_the_lock() {
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        // Each answer takes 400 ms: the apply holds the lock for about two seconds.
        let unit = TestUnit::with(DeviceConfig {
            latency: Duration::from_millis(400),
            ..DeviceConfig::default()
        });
        let dir = tempfile::tempdir().unwrap();
        let wanted = dir.path().join("wanted.json");
        write_json(&wanted, &json!({"oem": {"label": "interrupted"}}));
        let mut child = command(&[
            "device",
            "--url",
            &unit.url(),
            "--user",
            "setup",
            "settings",
            "apply",
            wanted.to_str().unwrap(),
            "--lock",
        ])
        .env("SVC_DEVICE_PASSWORD", "")
        .spawn()
        .expect("svc starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while !unit.locked() {
            assert!(Instant::now() < deadline, "the apply never took the lock");
            assert!(child.try_wait().unwrap().is_none(), "svc ended first");
            std::thread::sleep(Duration::from_millis(20));
        }
        let sent = std::process::Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = crate::support::wait(&mut child, Duration::from_secs(30))
            .expect("svc ends after the signal");
        let mut stderr = String::new();
        std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {stderr}");
        assert!(stderr.contains("interrupted"), "{signal}: {stderr}");
        assert!(!unit.locked(), "{signal}: the lock is still held");
    }
}

/// An apply with `--reboot` interrupted after its write (SIGTERM), or whose reboot never
/// reached the unit, is finished by the rerun: saved and rebooted, though nothing differs
/// any more. A reboot not seen to happen is `rebooted: false`, exit 6, and not called
/// "unreachable" of a unit that answers.
#[cfg(unix)]
#[test]
fn a_rerun_finishes_an_interrupted_apply_with_reboot() {
    use svc_emulator::{Lost, LostExchange};

    let state = tempfile::tempdir().unwrap();
    let state_dir = state.path().to_str().unwrap().to_owned();
    let env = [
        ("SVC_STATE_DIR", state_dir.as_str()),
        ("SVC_DEVICE_PASSWORD", ""),
    ];
    let dir = tempfile::tempdir().unwrap();
    let wanted = dir.path().join("wanted.json");

    // The reboot request is lost: written and saved, the reboot not confirmed.
    let unit = TestUnit::with(DeviceConfig {
        reboot_time: Duration::from_millis(300),
        lost_exchanges: vec![LostExchange {
            operation: "reboot".to_owned(),
            lost: Lost::Request,
            count: 1,
        }],
        ..DeviceConfig::default()
    });
    let ntp = unit.tree()["network"]["ntp"]["enabled"].as_bool().unwrap();
    write_json(&wanted, &json!({"network": {"ntp": {"enabled": !ntp}}}));
    let wanted = wanted.to_str().unwrap().to_owned();
    let url = unit.url();
    let apply = [
        "device", "--url", &url, "--user", "setup", "settings", "apply", &wanted, "--lock",
        "--reboot",
    ];
    let first = svc_with(&apply, &env, None);
    assert_eq!(first.code, 6, "{first:?}");
    let report: serde_json::Value = serde_json::from_str(&first.stdout).unwrap();
    assert_eq!(report["written"], true, "{report}");
    assert_eq!(report["rebooted"], false, "{report}");
    assert_eq!(report["rebootPending"], true, "{report}");
    assert!(first.stderr.contains("not confirmed"), "{}", first.stderr);
    assert!(
        !first.stderr.contains("could not be reached"),
        "{}",
        first.stderr
    );
    assert_eq!(unit.reboots(), 0);
    assert_eq!(unit.saves(), 1);

    // The rerun reboots it, through another address of the same unit.
    let other = url.replace("127.0.0.1", "localhost");
    let mut again = apply;
    again[2] = &other;
    let rerun = svc_with(&again, &env, None);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    let report = rerun.json();
    assert_eq!(report["changed"], json!([]), "{report}");
    assert_eq!(report["rebooted"], true, "{report}");
    assert_eq!(report["needReboot"], true, "{report}");
    assert_eq!(unit.reboots(), 1);
    // Once done, nothing more is owed.
    let third = svc_with(&apply, &env, None);
    assert_eq!(third.code, 0, "{third:?}");
    assert_eq!(third.json()["rebooted"], false);
    assert_eq!(unit.reboots(), 1);

    // SIGTERM right after the write: the rerun saves and reboots.
    let unit = TestUnit::with(DeviceConfig {
        reboot_time: Duration::from_millis(300),
        latency: Duration::from_millis(300),
        ..DeviceConfig::default()
    });
    let url = unit.url();
    let apply = [
        "device", "--url", &url, "--user", "setup", "settings", "apply", &wanted, "--lock",
        "--reboot",
    ];
    let writes = unit.applied_writes();
    let mut command = command(&apply);
    for (k, v) in env {
        command.env(k, v);
    }
    let mut child = command.spawn().expect("svc starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while unit.applied_writes() == writes {
        assert!(Instant::now() < deadline, "the apply never wrote");
        assert!(child.try_wait().unwrap().is_none(), "svc ended first");
        std::thread::sleep(Duration::from_millis(5));
    }
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let status = crate::support::wait(&mut child, Duration::from_secs(30)).expect("svc ends");
    assert_eq!(status.code(), Some(143));
    assert_eq!(unit.saves(), 0, "stopped before the save");
    let rerun = svc_with(&apply, &env, None);
    assert_eq!(rerun.code, 0, "{rerun:?}");
    let report = rerun.json();
    assert_eq!(report["changed"], json!([]), "{report}");
    assert_eq!(report["rebooted"], true, "{report}");
    assert!(
        rerun.stderr.contains("finishing an earlier apply"),
        "{}",
        rerun.stderr
    );
    assert_eq!(unit.saves(), 1);
    assert_eq!(unit.reboots(), 1);
}

/// A settings file that writes a key twice in one object is refused, naming the key,
/// its node and its line, wherever a settings file is read (apply, import, fleet,
/// diff): a parser would have kept the last occurrence silently, and `changed: []`
/// hid that the first one differed.
#[test]
fn settings_files_with_a_key_written_twice_are_refused() {
    let unit = TestUnit::start(&[]);
    let dir = tempfile::tempdir().unwrap();
    let twice = dir.path().join("twice.json");
    std::fs::write(
        &twice,
        "{\n  \"oem\": {\n    \"label\": \"wanted\",\n    \"label\": \"default\"\n  }\n}\n",
    )
    .unwrap();
    let twice = twice.to_str().unwrap().to_owned();
    let good = dir.path().join("good.json");
    write_json(&good, &json!({"oem": {"label": "x"}}));
    let good = good.to_str().unwrap().to_owned();
    let fleet = dir.path().join("units.txt");
    std::fs::write(&fleet, format!("{}\n", unit.url())).unwrap();
    let fleet = fleet.to_str().unwrap().to_owned();
    let writes = unit.applied_writes();
    let url = unit.url();
    for args in [
        vec!["device", "--url", &url, "settings", "apply", &twice],
        vec!["device", "--url", &url, "settings", "import", &twice],
        vec!["device", "fleet", "--units", &fleet, "apply", &twice],
        vec!["device", "settings", "diff", &good, &twice],
        vec!["device", "settings", "diff", &twice, &good],
    ] {
        let run = svc(&args);
        assert_eq!(run.code, 5, "{args:?}: {run:?}");
        assert!(
            run.stderr.contains("`label` twice"),
            "{args:?}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("oem/label"), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("line 4"), "{args:?}: {}", run.stderr);
    }
    // From stdin too.
    let run = crate::support::svc_with(
        &["device", "--url", &url, "settings", "apply", "-"],
        &[],
        Some("{\"oem\": {\"label\": \"a\", \"label\": \"b\"}}"),
    );
    assert_eq!(run.code, 5, "{run:?}");
    assert!(run.stderr.contains("stdin"), "{}", run.stderr);
    assert_eq!(unit.applied_writes(), writes, "nothing written");
}

/// SIGTERM or SIGINT in the first moments of a command — while `svc device` logs in,
/// while `svc processings download` asks for its token — ends it with its code (143,
/// 130) and a message, as later in its work: the handlers are installed before the
/// first request. (Before, the default action killed the process without either.)
#[cfg(unix)]
#[test]
fn a_signal_in_the_first_moments_is_answered_with_its_code() {
    // A server that accepts connections and never answers: the first request hangs.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = silent.local_addr().unwrap();
    let url = format!("http://{address}");
    // Each command, and the environment it runs in.
    type Run<'a> = (Vec<&'a str>, Vec<(&'a str, String)>);
    let commands: [Run<'_>; 2] = [
        (
            vec!["device", "--url", &url, "--user", "setup", "info"],
            vec![("SVC_DEVICE_PASSWORD", String::new())],
        ),
        (
            vec![
                "processings",
                "download",
                "0b6a3c1e-5d7f-4a2b-9c8d-1e2f3a4b5c6d",
            ],
            vec![
                ("SVC_BASE_URL", url.clone()),
                ("SVC_AUTH_URL", url.clone()),
                ("SVC_NOTIFICATION_URL", url.clone()),
                ("SVC_API_KEY", "svc_key_x".to_owned()),
                ("SVC_API_SECRET", "svc_secret_x".to_owned()),
                (
                    "SVC_ORGANIZATION_ID",
                    "e07dee6d-f951-4167-a47e-b7dfaf78d004".to_owned(),
                ),
            ],
        ),
    ];
    for (args, env) in &commands {
        for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
            let dir = tempfile::tempdir().unwrap();
            let mut command = command(args);
            command.current_dir(dir.path());
            for (k, v) in env {
                command.env(k, v);
            }
            let mut child = command.spawn().expect("svc starts");
            std::thread::sleep(Duration::from_millis(300));
            assert!(child.try_wait().unwrap().is_none(), "{args:?} ended first");
            let sent = std::process::Command::new("kill")
                .args([signal, &child.id().to_string()])
                .status()
                .unwrap();
            assert!(sent.success());
            let status = crate::support::wait(&mut child, Duration::from_secs(20))
                .expect("svc ends after the signal");
            let mut stderr = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
            assert_eq!(status.code(), Some(code), "{args:?} {signal}: {stderr}");
            assert!(
                stderr.contains("interrupted"),
                "{args:?} {signal}: {stderr}"
            );
        }
    }
    drop(silent);
}
