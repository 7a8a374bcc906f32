//! `svc process`: the real binary, without `SVC_BASE_URL`, so it runs against its
//! embedded emulator.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::{Run, command, finish};

fn repository() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// `svc process ARGS` in `cwd`, with none of the caller's `SVC_*` service settings.
fn process(cwd: &Path, args: &[&str]) -> Run {
    let mut all = vec!["process"];
    all.extend_from_slice(args);
    let mut command: Command = command(&all);
    for name in svc_core::cloud::ENV_VARS {
        command.env_remove(name);
    }
    command.current_dir(cwd);
    finish(
        command.spawn().expect("svc starts"),
        Duration::from_secs(90),
        &all,
    )
}

const OUTPUTS: [&str; 3] = ["trajectory.csv", "trajectory.geojson", "report.json"];

#[test]
fn the_readme_command_writes_the_outputs() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("results");
    let run = process(
        &repository(),
        &[
            "samples/rover.nmea",
            "samples/imu.csv",
            "--config",
            "samples/processing.json",
            "--out",
            dir.to_str().unwrap(),
        ],
    );
    run.ok();
    assert!(run.stderr.contains("emulator"), "{run:#?}");
    for name in OUTPUTS {
        let file = dir.join(name);
        assert!(
            std::fs::metadata(&file).is_ok_and(|m| m.len() > 0),
            "{} written: {run:#?}",
            file.display()
        );
        assert!(run.stdout.contains(name), "{run:#?}");
    }
    assert!(run.stdout.contains("succeeded"), "{run:#?}");
}

#[test]
fn json_lists_the_outputs_and_the_default_folder_is_per_processing() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let arg = |name: &str| samples.join(name).to_str().unwrap().to_owned();
    let run = process(
        cwd.path(),
        &[
            &arg("rover.nmea"),
            &arg("imu.csv"),
            "--config",
            &arg("processing.json"),
            "--name",
            "json run",
            "--metadata",
            "project=cli-tests",
            "--json",
        ],
    );
    run.ok();
    let outcome = run.json();
    let processing = &outcome["processing"];
    assert_eq!(processing["status"], "processed");
    assert_eq!(processing["processingResult"], "succeeded");
    assert_eq!(processing["name"], "json run");
    assert_eq!(processing["metadata"]["project"], "cli-tests");
    let id = processing["id"].as_str().unwrap();
    let outputs: Vec<&str> = outcome["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    for name in OUTPUTS {
        assert!(outputs.contains(&name), "{outputs:?}");
        assert!(
            cwd.path().join("svc-output").join(id).join(name).is_file(),
            "{name} in ./svc-output/{id}/"
        );
    }
    assert_eq!(
        outcome["downloaded"].as_array().unwrap().len(),
        outputs.len()
    );
    assert!(outcome["errors"].is_array());
}

#[test]
fn a_missing_input_is_refused_before_anything_is_sent() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let run = process(
        cwd.path(),
        &[
            "nowhere/rover.nmea",
            "--config",
            samples.join("processing.json").to_str().unwrap(),
        ],
    );
    run.fails_with(5);
    assert!(run.stderr.contains("nowhere/rover.nmea"), "{run:#?}");
    assert!(run.stderr.contains("nothing was sent"), "{run:#?}");
    assert!(
        !run.stderr.contains("emulator"),
        "nothing was started: {run:#?}"
    );
    assert!(run.stdout.is_empty());
}

#[test]
fn no_wait_prints_the_started_processing() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let arg = |name: &str| samples.join(name).to_str().unwrap().to_owned();
    let run = process(
        cwd.path(),
        &[
            &arg("rover.nmea"),
            "--config",
            &arg("processing.json"),
            "--no-wait",
            "--json",
        ],
    );
    run.ok();
    let outcome = run.json();
    let status = outcome["processing"]["status"].as_str().unwrap();
    assert!(matches!(status, "pending" | "processing"), "{outcome}");
    assert!(outcome["outputs"].as_array().unwrap().is_empty());
    assert!(!cwd.path().join("svc-output").exists());

    let run = process(
        cwd.path(),
        &[
            &arg("rover.nmea"),
            "--config",
            &arg("processing.json"),
            "--no-wait",
        ],
    );
    run.ok();
    assert!(run.stdout.contains("started"), "{run:#?}");
}

#[test]
fn a_failed_processing_exits_with_8_and_its_errors() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("notes.txt"), "no GNSS here\n").unwrap();
    let config = repository().join("samples/processing.json");
    let run = process(
        cwd.path(),
        &["notes.txt", "--config", config.to_str().unwrap()],
    );
    assert_eq!(run.code, 8, "{run:#?}");
    assert!(run.stdout.contains("failed"), "{run:#?}");
    assert!(run.stdout.contains("[error]"), "{run:#?}");
}
