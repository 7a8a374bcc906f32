//! `svc device fleet` against six emulated units: status, apply, export, and the
//! failures that must not stop the other units.

use std::path::Path;

use serde_json::Value;
use svc_emulator::{Emulator, EmulatorConfig};

use crate::support::svc;

/// Units emulated on their own runtime (the tests themselves are synchronous).
struct Units {
    emulator: Option<Emulator>,
    runtime: tokio::runtime::Runtime,
}

impl Units {
    fn start(count: usize) -> Units {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let emulator = runtime
            .block_on(Emulator::start(EmulatorConfig {
                devices: count,
                ..EmulatorConfig::default()
            }))
            .expect("the emulated units start");
        Units {
            emulator: Some(emulator),
            runtime,
        }
    }

    fn emulator(&self) -> &Emulator {
        self.emulator.as_ref().expect("running")
    }

    /// A fleet file: even units over HTTP, odd ones over their serial bridges.
    fn file(&self, dir: &Path, extra: &str) -> String {
        let mut text = String::from("# the test yard\n");
        for (index, device) in self.emulator().devices().iter().enumerate() {
            if index % 2 == 0 {
                text.push_str(&format!("{}\n", device.url()));
            } else {
                text.push_str(&format!("tcp://{}\n", device.serial_tcp()));
            }
        }
        text.push_str(extra);
        let path = dir.join("units.txt");
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_owned()
    }
}

impl Drop for Units {
    fn drop(&mut self) {
        let emulator = self.emulator.take();
        self.runtime.block_on(async move { drop(emulator) });
    }
}

fn lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a JSON line"))
        .collect()
}

fn write_wanted(dir: &Path) -> String {
    let path = dir.join("wanted.json");
    std::fs::write(
        &path,
        r#"{"output": {"comA": {"messages": {"imuShort": "10ms"}}}}"#,
    )
    .unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn status_apply_status_export() {
    let units = Units::start(6);
    let dir = tempfile::tempdir().unwrap();
    let file = units.file(dir.path(), "");
    let wanted = write_wanted(dir.path());

    // Every unit differs: exit 1, one line per unit, then the summary.
    let run = svc(&[
        "device", "fleet", "--units", &file, "--json", "status", &wanted,
    ]);
    run.fails_with(1);
    let out = lines(&run.stdout);
    assert_eq!(out.len(), 7);
    for line in &out[..6] {
        assert_eq!(line["status"], "differs", "{line}");
        assert_eq!(line["changed"][0], "output/comA/messages/imuShort");
        assert!(
            line["serialNumber"]
                .as_str()
                .is_some_and(|s| s.starts_with("EMU"))
        );
    }
    assert_eq!(out[6]["summary"]["differ"], 6);

    // Only checked: every unit would change, nothing is written (exit 1: they differ).
    let run = svc(&[
        "device",
        "fleet",
        "--units",
        &file,
        "--json",
        "apply",
        &wanted,
        "--check-only",
    ]);
    run.fails_with(1);
    let out = lines(&run.stdout);
    assert!(out[..6].iter().all(|l| l["status"] == "checked"), "{out:?}");
    let run = svc(&[
        "device", "fleet", "--units", &file, "--json", "status", &wanted,
    ]);
    run.fails_with(1);

    // Applied holding each unit's lock, logged in as setup, two units at a time.
    let run = svc(&[
        "device",
        "--user",
        "setup",
        "fleet",
        "--units",
        &file,
        "--json",
        "--concurrency",
        "2",
        "apply",
        &wanted,
        "--lock",
    ]);
    run.ok();
    let out = lines(&run.stdout);
    assert!(out[..6].iter().all(|l| l["status"] == "applied"), "{out:?}");
    assert_eq!(out[6]["summary"]["done"], 6);

    // In sync now; the human form ends with the summary.
    let run = svc(&["device", "fleet", "--units", &file, "status", &wanted]);
    run.ok();
    assert!(
        run.stdout.lines().filter(|l| l.contains("in sync")).count() == 6,
        "{run:?}"
    );
    assert!(
        run.stdout
            .trim_end()
            .ends_with("6 units: 6 done, 0 differ, 0 failed"),
        "{run:?}"
    );

    let exports = dir.path().join("exports");
    let run = svc(&[
        "device",
        "fleet",
        "--units",
        &file,
        "--json",
        "export",
        exports.to_str().unwrap(),
    ]);
    run.ok();
    for device in units.emulator().devices() {
        let path = exports.join(format!("{}.json", device.serial_number()));
        let tree: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(tree["output"]["comA"]["messages"]["imuShort"], "10ms");
    }
}

#[test]
fn a_unit_that_fails_does_not_stop_the_others() {
    let units = Units::start(4);
    let dir = tempfile::tempdir().unwrap();
    let file = units.file(dir.path(), "http://127.0.0.1:1\n");
    let wanted = write_wanted(dir.path());
    let run = svc(&[
        "device", "fleet", "--units", &file, "--json", "apply", &wanted,
    ]);
    run.fails_with(6);
    let out = lines(&run.stdout);
    let failed: Vec<&Value> = out.iter().filter(|l| l["status"] == "failed").collect();
    assert_eq!(failed.len(), 1, "{out:?}");
    assert_eq!(failed[0]["error"]["kind"], "unreachable");
    assert_eq!(failed[0]["index"], 4);
    assert_eq!(out.iter().filter(|l| l["status"] == "applied").count(), 4);
    assert_eq!(out.last().unwrap()["summary"]["failed"], 1);

    // A refused node: the unit's node errors, per unit.
    let refused = dir.path().join("refused.json");
    std::fs::write(
        &refused,
        r#"{"output": {"comA": {"messages": {"imuShort": "3ms"}}}}"#,
    )
    .unwrap();
    let file = units.file(dir.path(), "");
    let run = svc(&[
        "device",
        "fleet",
        "--units",
        &file,
        "--json",
        "apply",
        refused.to_str().unwrap(),
    ]);
    run.fails_with(5);
    for line in &lines(&run.stdout)[..4] {
        assert_eq!(line["error"]["status"], 422, "{line}");
        assert_eq!(
            line["error"]["nodeErrors"][0]["path"],
            "output/comA/messages/imuShort"
        );
    }
}

#[test]
fn a_bad_list_is_refused_before_any_unit_is_reached() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("units.txt");
    std::fs::write(&file, "http://127.0.0.1:1\nftp://somewhere\n").unwrap();
    let wanted = write_wanted(dir.path());
    let run = svc(&[
        "device",
        "fleet",
        "--units",
        file.to_str().unwrap(),
        "status",
        &wanted,
    ]);
    run.fails_with(5);
    assert!(run.stderr.contains("line 2"), "{run:?}");
}

/// A full disk (here: a file-size limit of 4 KiB, a settings tree is larger): every
/// export fails with its reason, and no `.part` file is left; `.part` files an earlier
/// run left are removed by the next run, also for units that fail again.
#[cfg(unix)]
#[test]
fn a_full_disk_leaves_no_part_files() {
    let units = Units::start(2);
    let dir = tempfile::tempdir().unwrap();
    let file = units.file(dir.path(), "");
    let exports = dir.path().join("exports");
    std::fs::create_dir_all(&exports).unwrap();
    let stale = exports.join("EMU00000009.json.part");
    std::fs::write(&stale, b"{\"half\":").unwrap();
    let kept = exports.join("notes.txt");
    std::fs::write(&kept, b"not an export").unwrap();
    // The shell ignores SIGXFSZ for svc, so that a write over the limit fails (EFBIG)
    // as on a full disk instead of killing the process.
    let script = format!(
        "trap '' XFSZ; ulimit -f 4; exec \"{}\" device fleet --units \"{file}\" --json export \"{}\"",
        env!("CARGO_BIN_EXE_svc"),
        exports.display()
    );
    let output = std::process::Command::new("sh")
        .arg("-c")
        .arg(&script)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_ne!(output.status.code(), Some(0), "{stdout}");
    let out = lines(&stdout);
    let failed = out.iter().filter(|l| l["status"] == "failed").count();
    assert_eq!(failed, 2, "{out:?}");
    let left: Vec<String> = std::fs::read_dir(&exports)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["notes.txt".to_owned()],
        "only what was not ours is left"
    );
}
