//! `svc device` against an emulated unit: reading and writing settings, applying a
//! wanted tree, export/import, the data logger, reboot, passwords, exit codes, and
//! the three links (HTTP, serial over TCP, the pty as a serial port).

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TestUnit, closed_address, svc, svc_with, write_json};

/// `svc device --url URL ARGS...`
fn device(unit: &TestUnit, args: &[&str]) -> Vec<String> {
    let mut all = vec!["device".to_owned(), "--url".to_owned(), unit.url()];
    all.extend(args.iter().map(|s| (*s).to_owned()));
    all
}

fn refs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

fn run(unit: &TestUnit, args: &[&str]) -> crate::support::Run {
    svc(&refs(&device(unit, args)))
}

fn strings(value: &Value) -> Vec<String> {
    let mut list: Vec<String> = value
        .as_array()
        .unwrap_or_else(|| panic!("an array: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    list.sort();
    list
}

#[test]
fn info_prints_the_units_identity() {
    let unit = TestUnit::start(&[]);
    let info = run(&unit, &["info"]).json();
    for key in [
        "productCode",
        "serialNumber",
        "hwRevision",
        "fmwVersion",
        "apiVersion",
    ] {
        assert!(info[key].is_string(), "{key} in {info}");
    }
    let (status, raw) = unit.raw("GET", "/api/v1/info");
    assert_eq!(status, 200);
    assert_eq!(info, raw);
    // The address may also come from SVC_DEVICE_URL.
    let by_env = svc_with(
        &["device", "info"],
        &[("SVC_DEVICE_URL", &unit.url())],
        None,
    )
    .json();
    assert_eq!(by_env, raw);
}

#[test]
fn settings_get_set_and_delta() {
    let unit = TestUnit::start(&[]);
    let tree = unit.tree();

    let pretty = run(&unit, &["settings", "get", "aiding/gnss1", "--pretty"]);
    let node = pretty.json();
    assert!(
        pretty.stdout.contains("\n  \""),
        "indented: {}",
        pretty.stdout
    );
    assert_eq!(node, tree["aiding"]["gnss1"]);
    let compact = run(&unit, &["settings", "get", "aiding/gnss1"]);
    assert_eq!(compact.stdout.trim().lines().count(), 1);
    assert_eq!(compact.json(), node);
    assert_eq!(run(&unit, &["settings", "get"]).json(), tree);

    // Nothing changed: an empty delta.
    assert_eq!(
        run(&unit, &["settings", "get", "--delta"]).json(),
        json!({})
    );

    let set = run(
        &unit,
        &["settings", "set", "output/comA/messages/imuShort", "10ms"],
    )
    .json();
    assert_eq!(set["needReboot"], false, "{set}");
    let got = run(&unit, &["settings", "get", "output/comA/messages/imuShort"]);
    assert_eq!(got.stdout.trim(), "\"10ms\"");
    assert_eq!(
        unit.tree()["output"]["comA"]["messages"]["imuShort"],
        "10ms"
    );
    assert_eq!(
        run(&unit, &["settings", "get", "--delta"]).json(),
        json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}}),
        "only that change"
    );
    assert_eq!(
        run(
            &unit,
            &[
                "settings",
                "get",
                "output/comA/messages/imuShort",
                "--delta"
            ]
        )
        .json(),
        json!("10ms")
    );

    run(
        &unit,
        &[
            "settings",
            "set",
            "aiding/gnss1/leverArmPrimary",
            "[0.1,0,-1.2]",
        ],
    )
    .ok();
    let arm = run(&unit, &["settings", "get", "aiding/gnss1/leverArmPrimary"]).json();
    let arm: Vec<f64> = serde_json::from_value(arm).unwrap();
    assert_eq!(arm, [0.1, 0.0, -1.2]);
    // The unit keeps the numbers as sent (`0`); as numbers they are the same.
    let held: Vec<f64> =
        serde_json::from_value(unit.tree()["aiding"]["gnss1"]["leverArmPrimary"].clone()).unwrap();
    assert_eq!(held, [0.1, 0.0, -1.2]);

    // A network setting needs a reboot; --check-only validates without writing.
    let checked = run(
        &unit,
        &[
            "settings",
            "set",
            "network/ntp/enabled",
            "true",
            "--check-only",
        ],
    )
    .json();
    assert_eq!(checked["needReboot"], true, "{checked}");
    assert_eq!(unit.tree()["network"]["ntp"]["enabled"], false);
    let set = run(&unit, &["settings", "set", "network/ntp/enabled", "true"]).json();
    assert_eq!(set["needReboot"], true, "{set}");
    assert_eq!(unit.tree()["network"]["ntp"]["enabled"], true);
}

#[test]
fn delta_ignores_a_number_written_as_an_integer() {
    let unit = TestUnit::start(&[]);
    assert_eq!(
        unit.tree()["insFilter"]["validityThresholds"]["heading"],
        json!(1.0)
    );
    // `1` is the default value 1.0: not a change from the default.
    run(
        &unit,
        &[
            "settings",
            "set",
            "insFilter/validityThresholds/heading",
            "1",
        ],
    )
    .ok();
    run(
        &unit,
        &["settings", "set", "output/comA/messages/imuShort", "10ms"],
    )
    .ok();
    assert_eq!(
        run(&unit, &["settings", "get", "--delta"]).json(),
        json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}}),
        "only the real change"
    );
}

#[test]
fn settings_diff_is_offline() {
    let dir = tempfile::tempdir().unwrap();
    let unit = TestUnit::start(&[]);
    let a = unit.tree();
    drop(unit);
    let mut b = a.clone();
    b["aiding"]["gnss1"]["leverArmPrimary"] = json!([0.5, 0.0, -1.2]);
    b["output"]["comA"]["messages"]["imuShort"] = json!("10ms");
    let (pa, pb) = (dir.path().join("A.json"), dir.path().join("B.json"));
    write_json(&pa, &a);
    write_json(&pb, &b);
    // No unit at all: neither --url nor SVC_DEVICE_URL.
    let diff = svc(&[
        "device",
        "settings",
        "diff",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
    ])
    .json();
    assert_eq!(
        strings(&diff["changed"]),
        [
            "aiding/gnss1/leverArmPrimary",
            "output/comA/messages/imuShort"
        ]
    );
    assert_eq!(
        diff["patch"],
        json!({
            "aiding": {"gnss1": {"leverArmPrimary": [0.5, 0.0, -1.2]}},
            "output": {"comA": {"messages": {"imuShort": "10ms"}}},
        })
    );
    let same = svc(&[
        "device",
        "settings",
        "diff",
        pa.to_str().unwrap(),
        pa.to_str().unwrap(),
    ])
    .json();
    assert_eq!(same["changed"], json!([]));
    // A file that is not JSON: invalid input.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{not json").unwrap();
    svc(&[
        "device",
        "settings",
        "diff",
        bad.to_str().unwrap(),
        pa.to_str().unwrap(),
    ])
    .fails_with(5);

    // A fleet against one reference: an entry per file, in the order given.
    let mut c = a.clone();
    c["oem"].as_object_mut().unwrap().remove("label");
    let pc = dir.path().join("C.json");
    write_json(&pc, &c);
    let fleet = svc(&[
        "device",
        "settings",
        "diff",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        pa.to_str().unwrap(),
        pc.to_str().unwrap(),
    ])
    .json();
    let entries = fleet.as_array().expect("an array for several files");
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0]["file"], json!(pb.to_str().unwrap()));
    assert_eq!(entries[0]["changed"], diff["changed"]);
    assert_eq!(entries[0]["patch"], diff["patch"]);
    assert_eq!(entries[1]["changed"], json!([]));
    assert_eq!(entries[1]["patch"], json!({}));
    assert_eq!(entries[2]["file"], json!(pc.to_str().unwrap()));
    assert_eq!(entries[2]["changed"], json!([]));
    assert_eq!(strings(&entries[2]["removed"]), ["oem/label"]);
    // One bad file fails the whole command before anything is printed.
    let failed = svc(&[
        "device",
        "settings",
        "diff",
        pa.to_str().unwrap(),
        pb.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    failed.fails_with(5);
    assert!(failed.stdout.trim().is_empty(), "{failed:#?}");
    // JSON that is not a settings tree (a top-level array) is refused as well.
    let array = dir.path().join("arr.json");
    std::fs::write(&array, "[1, 2]").unwrap();
    let refused = svc(&[
        "device",
        "settings",
        "diff",
        pa.to_str().unwrap(),
        array.to_str().unwrap(),
    ]);
    refused.fails_with(5);
    assert!(
        refused.stderr.contains("not a settings tree"),
        "{refused:#?}"
    );
}

#[test]
fn settings_apply_check_only_and_lock() {
    let dir = tempfile::tempdir().unwrap();
    let unit = TestUnit::start(&[]);
    let original = unit.tree();
    let wanted = dir.path().join("wanted.json");
    write_json(
        &wanted,
        &json!({
            "aiding": {"gnss1": {"leverArmPrimary": [0.1, 0.0, -1.2]}},
            "output": {"comA": {"messages": {"imuShort": "10ms"}}},
            "network": {"ntp": {"enabled": true}},
            "insFilter": {"validityThresholds": {"heading": 1}},
        }),
    );
    let wanted = wanted.to_str().unwrap();
    let expected = [
        "aiding/gnss1/leverArmPrimary",
        "network/ntp/enabled",
        "output/comA/messages/imuShort",
    ];

    let checked = run(&unit, &["settings", "apply", wanted, "--check-only"]).json();
    assert_eq!(strings(&checked["changed"]), expected);
    assert_eq!(checked["written"], false);
    assert_eq!(unit.tree(), original, "--check-only changes nothing");

    let applied = run(&unit, &["settings", "apply", wanted]).json();
    assert_eq!(strings(&applied["changed"]), expected);
    assert_eq!(applied["needReboot"], true);
    assert_eq!(applied["written"], true);
    let tree = unit.tree();
    assert_eq!(tree["network"]["ntp"]["enabled"], true);
    assert_eq!(tree["output"]["comA"]["messages"]["imuShort"], "10ms");

    let again = run(&unit, &["settings", "apply", wanted]).json();
    assert_eq!(again["changed"], json!([]));
    assert_eq!(again["written"], false);

    // With the lock (needs a login); released afterwards.
    let small = dir.path().join("small.json");
    write_json(&small, &json!({"oem": {"label": "locked"}}));
    let locked = run(
        &unit,
        &[
            "--user",
            "setup",
            "settings",
            "apply",
            small.to_str().unwrap(),
            "--lock",
        ],
    )
    .json();
    assert_eq!(strings(&locked["changed"]), ["oem/label"]);
    run(&unit, &["settings", "set", "oem/label", "after"]).ok();
    assert_eq!(
        unit.tree()["oem"]["label"],
        "after",
        "the lock was released"
    );
    // Without a login the lock cannot be taken: 401.
    run(
        &unit,
        &["settings", "apply", small.to_str().unwrap(), "--lock"],
    )
    .fails_with(3);

    // A wanted tree with an unknown node: refused before sending, named.
    let unknown = dir.path().join("unknown.json");
    write_json(
        &unknown,
        &json!({"aiding": {"gnss1": {"leverArmTertiary": [0, 0, 0]}}}),
    );
    let refused = run(&unit, &["settings", "apply", unknown.to_str().unwrap()]);
    refused.fails_with(5);
    assert!(
        refused.stderr.contains("aiding/gnss1/leverArmTertiary"),
        "{refused:#?}"
    );
}

#[test]
fn settings_export_import_and_default() {
    let dir = tempfile::tempdir().unwrap();
    let unit = TestUnit::start(&[]);
    let defaults = unit.tree();
    run(&unit, &["settings", "set", "oem/label", "exported"]).ok();
    let exported = unit.tree();

    let file = dir.path().join("settings.json");
    run(&unit, &["settings", "export", file.to_str().unwrap()]).ok();
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(saved, exported);
    let to_stdout = run(&unit, &["settings", "export", "-"]).json();
    assert_eq!(to_stdout, exported);

    run(&unit, &["settings", "set", "oem/label", "changed"]).ok();
    run(&unit, &["settings", "set", "localParam/height", "99.5"]).ok();
    let checked = run(
        &unit,
        &["settings", "import", file.to_str().unwrap(), "--check-only"],
    )
    .json();
    assert_eq!(checked["checkOnly"], true);
    assert_eq!(unit.tree()["oem"]["label"], "changed");
    run(&unit, &["settings", "import", file.to_str().unwrap()]).ok();
    assert_eq!(unit.tree(), exported);
    // From stdin.
    run(&unit, &["settings", "set", "oem/label", "changed again"]).ok();
    let text = std::fs::read_to_string(&file).unwrap();
    svc_with(
        &refs(&device(&unit, &["settings", "import", "-"])),
        &[],
        Some(&text),
    )
    .ok();
    assert_eq!(unit.tree(), exported);

    let reset = run(&unit, &["settings", "default"]).json();
    assert_eq!(reset["needReboot"], false, "{reset}");
    assert_eq!(unit.tree(), defaults);
}

#[test]
fn data_logger_start_status_stop() {
    let unit = TestUnit::start(&[]);
    let status = run(&unit, &["logger", "status"]).json();
    assert_eq!(status["state"], "idle", "{status}");
    let started = run(&unit, &["logger", "start"]).json();
    assert_eq!(started["state"], "logging", "{started}");
    assert_eq!(run(&unit, &["logger", "status"]).json()["state"], "logging");
    let twice = run(&unit, &["logger", "start"]);
    twice.fails_with(4);
    assert!(twice.stdout.is_empty(), "{twice:#?}");
    assert!(twice.stderr.contains("409"), "{twice:#?}");
    let stopped = run(&unit, &["logger", "stop"]).json();
    assert_eq!(stopped["state"], "idle");
    run(&unit, &["logger", "stop"]).fails_with(4);
}

#[test]
fn reboot_and_wait() {
    let unit = TestUnit::start(&[]);
    let started = Instant::now();
    let rebooted = run(&unit, &["reboot", "--wait"]);
    rebooted.ok();
    assert!(rebooted.stderr.contains("back"), "{rebooted:#?}");
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(!unit.is_rebooting());
    run(&unit, &["info"]).ok();
    // With a login: the session logs in again after the reboot to wait.
    run(&unit, &["--user", "setup", "reboot", "--wait"]).ok();
    run(&unit, &["info"]).ok();
    // Without --wait the command returns at once; the unit comes back by itself.
    run(&unit, &["reboot"]).ok();
    let end = Instant::now() + Duration::from_secs(5);
    while unit.is_rebooting() {
        assert!(Instant::now() < end, "the unit came back");
        std::thread::sleep(Duration::from_millis(20));
    }
    run(&unit, &["info"]).ok();
}

#[test]
fn passwords_login_and_wrong_password() {
    const NEW: &str = "new-S3cr3t-setup";
    const OPERATOR: &str = "op-S3cr3t-1";
    let unit = TestUnit::start(&[]);

    // setup (no password yet) sets its own password from SVC_DEVICE_NEW_PASSWORD.
    let changed = svc_with(
        &refs(&device(&unit, &["--user", "setup", "password"])),
        &[("SVC_DEVICE_NEW_PASSWORD", NEW)],
        None,
    );
    changed.ok();
    // Logging in with it, from SVC_DEVICE_PASSWORD...
    svc_with(
        &refs(&device(&unit, &["--user", "setup", "info"])),
        &[("SVC_DEVICE_PASSWORD", NEW)],
        None,
    )
    .json();
    // ...or from stdin.
    svc_with(
        &refs(&device(
            &unit,
            &[
                "--user",
                "setup",
                "--password-stdin",
                "settings",
                "get",
                "oem",
            ],
        )),
        &[],
        Some(&format!("{NEW}\n")),
    )
    .json();
    // The old (empty) password and a wrong one: exit 3.
    run(&unit, &["--user", "setup", "info"]).fails_with(3);
    let wrong = svc_with(
        &refs(&device(&unit, &["--user", "setup", "info"])),
        &[("SVC_DEVICE_PASSWORD", "wrong-S3cr3t")],
        None,
    );
    wrong.fails_with(3);
    assert!(wrong.stderr.contains("401"), "{wrong:#?}");
    svc_with(
        &refs(&device(
            &unit,
            &["--user", "setup", "--password-stdin", "info"],
        )),
        &[],
        Some("wrong-S3cr3t\n"),
    )
    .fails_with(3);
    // An unknown user: a usage error.
    run(&unit, &["--user", "nobody", "info"]).fails_with(2);

    // setup sets operator's password (from stdin); operator logs in with it.
    svc_with(
        &refs(&device(
            &unit,
            &[
                "--user",
                "setup",
                "password",
                "--for",
                "operator",
                "--new-password-stdin",
            ],
        )),
        &[("SVC_DEVICE_PASSWORD", NEW)],
        Some(&format!("{OPERATOR}\n")),
    )
    .ok();
    svc_with(
        &refs(&device(&unit, &["--user", "operator", "logger", "status"])),
        &[("SVC_DEVICE_PASSWORD", OPERATOR)],
        None,
    )
    .json();
    // powerUser may not change another user's password: 403, exit 3.
    svc_with(
        &refs(&device(
            &unit,
            &["--user", "powerUser", "password", "--for", "operator"],
        )),
        &[("SVC_DEVICE_NEW_PASSWORD", "evil-S3cr3t")],
        None,
    )
    .fails_with(3);
    // operator may not change settings: 403, exit 3.
    svc_with(
        &refs(&device(
            &unit,
            &["--user", "operator", "settings", "set", "oem/label", "x"],
        )),
        &[("SVC_DEVICE_PASSWORD", OPERATOR)],
        None,
    )
    .fails_with(3);
    // A password change needs a login: without --user, 401.
    svc_with(
        &refs(&device(&unit, &["password"])),
        &[("SVC_DEVICE_NEW_PASSWORD", "any-S3cr3t")],
        None,
    )
    .fails_with(3);
    // No new password given (no terminal): a usage error.
    run(&unit, &["--user", "powerUser", "password"]).fails_with(2);
}

#[test]
fn exit_codes_of_failures() {
    let unit = TestUnit::start(&[]);
    let before = unit.tree();

    // An invalid setting: 422, exit 5, the node named.
    let invalid = run(
        &unit,
        &["settings", "set", "output/comA/messages/imuShort", "7ms"],
    );
    invalid.fails_with(5);
    assert!(
        invalid.stderr.contains("output/comA/messages/imuShort"),
        "{invalid:#?}"
    );
    let invalid = run(&unit, &["settings", "set", "localParam/date", "2024/05/01"]);
    invalid.fails_with(5);
    assert!(invalid.stderr.contains("localParam/date"), "{invalid:#?}");
    let invalid = run(
        &unit,
        &["settings", "set", "aiding/gnss1/leverArmPrimary", "[1,2]"],
    );
    invalid.fails_with(5);
    assert!(
        invalid.stderr.contains("aiding/gnss1/leverArmPrimary"),
        "{invalid:#?}"
    );
    assert_eq!(unit.tree(), before, "nothing applied");

    // A bad node path: 404, exit 7.
    run(&unit, &["settings", "get", "aiding/gnss9"]).fails_with(7);
    run(&unit, &["settings", "get", "aiding/gnss1/noSuchField"]).fails_with(7);
    run(&unit, &["settings", "set", "aiding/gnss9/model", "x"]).fails_with(7);

    // An unreachable unit: exit 6, over HTTP and over the serial bridge.
    let closed = closed_address();
    let http = svc(&["device", "--url", &format!("http://{closed}"), "info"]);
    http.fails_with(6);
    svc(&["device", "--serial-tcp", &closed, "info"]).fails_with(6);
    svc(&["device", "--serial", "/nonexistent/tty-S9", "info"]).fails_with(6);

    // Usage: no link, two links, an https:// URL.
    svc(&["device", "info"]).fails_with(2);
    svc(&[
        "device",
        "--url",
        &unit.url(),
        "--serial-tcp",
        &unit.serial_tcp(),
        "info",
    ])
    .fails_with(2);
    let https = svc(&["device", "--url", "https://127.0.0.1:1", "info"]);
    assert_ne!(https.code, 0, "{https:#?}");
}

#[test]
fn the_same_json_over_the_three_links() {
    let unit = TestUnit::start(&[]);
    run(
        &unit,
        &["settings", "set", "output/comA/messages/imuShort", "10ms"],
    )
    .ok();
    let links: [Vec<String>; 3] = [
        vec!["--url".to_owned(), unit.url()],
        vec!["--serial-tcp".to_owned(), unit.serial_tcp()],
        vec!["--serial".to_owned(), unit.serial_path()],
    ];
    let reads: [&[&str]; 4] = [
        &["settings", "get", "aiding/gnss1"],
        &["settings", "get"],
        &["settings", "get", "--delta", "--pretty"],
        &["info"],
    ];
    for read in reads {
        let outputs: Vec<String> = links
            .iter()
            .map(|link| {
                let mut args = vec!["device"];
                args.extend(link.iter().map(String::as_str));
                args.extend_from_slice(read);
                let run = svc(&args);
                run.ok();
                run.stdout
            })
            .collect();
        assert!(!outputs[0].trim().is_empty());
        assert_eq!(outputs[0], outputs[1], "{read:?}: HTTP vs serial bridge");
        assert_eq!(outputs[0], outputs[2], "{read:?}: HTTP vs pty");
    }
    let whole: Value = serde_json::from_str(
        &svc(&["device", "--serial", &unit.serial_path(), "settings", "get"]).stdout,
    )
    .unwrap();
    assert_eq!(whole, unit.tree());
    assert!(
        serde_json::to_vec(&whole).unwrap().len() > 4086,
        "large frames"
    );
    // A write over the serial links.
    svc(&[
        "device",
        "--serial-tcp",
        &unit.serial_tcp(),
        "settings",
        "set",
        "oem/label",
        "over tcp",
    ])
    .ok();
    assert_eq!(unit.tree()["oem"]["label"], "over tcp");
    svc(&[
        "device",
        "--serial",
        &unit.serial_path(),
        "settings",
        "set",
        "oem/label",
        "over the pty",
    ])
    .ok();
    assert_eq!(unit.tree()["oem"]["label"], "over the pty");
}
