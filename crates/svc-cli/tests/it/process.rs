//! `svc process`: the real binary, without `SVC_BASE_URL`, so it runs against its
//! embedded emulator.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use svc_emulator::EmulatorConfig;
use uuid::Uuid;

use crate::resources::Cloud;
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

/// The vendor's project form from a file: every export and report it names is written
/// where it says, and the SBET export reads back through svc-core at its rate.
#[test]
fn the_vendor_form_sample_writes_its_exports() {
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("results");
    let run = process(
        &repository(),
        &[
            "samples/rover.nmea",
            "--config",
            "samples/project.json",
            "--out",
            dir.to_str().unwrap(),
        ],
    );
    run.ok();
    for name in [
        "export/export_sbet.sbet",
        "export/export_ascii.txt",
        "export/track.kml",
        "reports/json_report.json",
        "reports/html_report.html",
    ] {
        assert!(
            std::fs::metadata(dir.join(name)).is_ok_and(|m| m.len() > 0),
            "{name}: {run:#?}"
        );
    }
    let csv = svc_core::trajectory::read_points(std::io::BufReader::new(
        std::fs::File::open(dir.join("trajectory.csv")).unwrap(),
    ))
    .unwrap();
    let sbet = svc_core::trajectory::read_sbet(
        std::fs::File::open(dir.join("export/export_sbet.sbet")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        sbet.len(),
        (csv.len() - 1) * 10 + 1,
        "10 Hz over 1 Hz fixes"
    );
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

/// `--json` says which service ran the processing, so that a script cannot take the
/// embedded emulator's results for the cloud's: `emulator` without `SVC_BASE_URL`,
/// `cloud` with it.
#[test]
fn json_names_the_service_that_ran_the_processing() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let rover = samples.join("rover.nmea");
    let config = samples.join("processing.json");
    let args = [
        "process",
        rover.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--json",
    ];

    let run = process(cwd.path(), &args[1..]);
    let outcome = run.json();
    assert_eq!(outcome["service"], "emulator", "{outcome}");
    assert_eq!(outcome["processing"]["status"], "processed", "{outcome}");

    let cloud = Cloud::with(EmulatorConfig {
        processing_time: Duration::from_millis(500),
        device: None,
        ..EmulatorConfig::default()
    });
    let run = cloud.svc_in(&args, &cloud.env(), Some(cwd.path()));
    let outcome = run.json();
    assert_eq!(outcome["service"], "cloud", "{outcome}");
    assert_eq!(outcome["processing"]["status"], "processed", "{outcome}");
    assert!(!run.stderr.contains("emulator"), "{run:#?}");
}

/// The embedded emulator runs only when no service variable is set at all: a forgotten
/// `SVC_BASE_URL` beside the others is an error naming it, and nothing is sent anywhere
/// (the service the other variables name sees no container).
#[test]
fn a_partial_configuration_is_an_error_not_the_emulator() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let rover = samples.join("rover.nmea");
    let config = samples.join("processing.json");
    let args = [
        "process",
        rover.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--out",
        "results",
    ];
    let cloud = Cloud::start();
    let without_base: Vec<(&str, String)> = cloud
        .env()
        .into_iter()
        .filter(|(name, _)| *name != "SVC_BASE_URL")
        .collect();
    let run = cloud.svc_in(&args, &without_base, Some(cwd.path()));
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(run.stderr.contains("SVC_BASE_URL is not set"), "{run:#?}");
    assert!(!run.stderr.contains("emulator"), "{run:#?}");
    assert!(!cwd.path().join("results").exists());
    // Two missing: both named.
    let only_key: Vec<(&str, String)> = cloud
        .env()
        .into_iter()
        .filter(|(name, _)| !matches!(*name, "SVC_BASE_URL" | "SVC_AUTH_URL"))
        .collect();
    let run = cloud.svc_in(&args, &only_key, Some(cwd.path()));
    assert_eq!(run.code, 2, "{run:#?}");
    assert!(
        run.stderr.contains("SVC_BASE_URL") && run.stderr.contains("SVC_AUTH_URL"),
        "{run:#?}"
    );
    let containers = cloud.svc(&["containers", "list"]);
    assert_eq!(containers.code, 0, "{containers:#?}");
    assert_eq!(containers.stdout.trim(), "", "{containers:#?}");

    // With none set, the emulator runs, and its report says it made it.
    let run = process(cwd.path(), &args[1..]);
    assert_eq!(run.code, 0, "{run:#?}");
    assert!(run.stderr.contains("embedded local emulator"), "{run:#?}");
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(cwd.path().join("results/report.json")).unwrap())
            .unwrap();
    let produced_by = report["producedBy"].as_str().unwrap_or_default();
    assert!(
        produced_by.contains("the local emulator, not the cloud service"),
        "{report}"
    );
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

/// The one JSON object a failed `svc process --json` prints on stdout.
fn failure_json(run: &Run) -> Value {
    assert_ne!(run.code, 0, "{run:#?}");
    let value: Value = serde_json::from_str(run.stdout.trim())
        .unwrap_or_else(|e| panic!("stdout is one JSON object: {e}: {run:#?}"));
    for key in [
        "kind",
        "message",
        "containerId",
        "processingId",
        "cleanedUp",
    ] {
        assert!(value.get(key).is_some(), "`{key}` in {value}");
    }
    value
}

/// A start refused (403, no processing credit left) names the container it leaves
/// behind, on stderr and in the `--json` object; `--cleanup-on-failure` deletes it.
#[test]
fn a_refused_start_names_its_container_and_cleanup_on_failure_deletes_it() {
    let cloud = Cloud::with(EmulatorConfig {
        processing_time: Duration::from_millis(500),
        credits: 0,
        device: None,
        ..EmulatorConfig::default()
    });
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let rover = samples.join("rover.nmea");
    let config = samples.join("processing.json");
    let args = [
        "process",
        rover.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
        "--json",
    ];

    let run = cloud.svc_in(&args, &cloud.env(), Some(cwd.path()));
    run.fails_with(3);
    let failure = failure_json(&run);
    assert_eq!(failure["kind"], "permission_denied", "{failure}");
    assert_eq!(failure["processingId"], Value::Null);
    assert_eq!(failure["cleanedUp"], false);
    let kept = failure["containerId"]
        .as_str()
        .expect("the container is named");
    assert!(
        failure["message"].as_str().unwrap().contains(kept),
        "{failure}"
    );
    assert!(run.stderr.contains(kept), "{run:#?}");
    let kept: Uuid = kept.parse().unwrap();
    cloud
        .block_on(cloud.client.get_container(kept))
        .expect("the container remains");

    let mut with_cleanup = args.to_vec();
    with_cleanup.push("--cleanup-on-failure");
    let run = cloud.svc_in(&with_cleanup, &cloud.env(), Some(cwd.path()));
    run.fails_with(3);
    let failure = failure_json(&run);
    assert_eq!(failure["cleanedUp"], true, "{failure}");
    let deleted = failure["containerId"].as_str().expect("named");
    assert!(
        run.stderr
            .contains(&format!("container {deleted} was deleted")),
        "{run:#?}"
    );
    let deleted: Uuid = deleted.parse().unwrap();
    let gone = cloud
        .block_on(cloud.client.get_container(deleted))
        .unwrap_err();
    assert_eq!(gone.status(), Some(404), "{gone}");
    let left: Vec<Uuid> = cloud
        .block_on(cloud.client.list_containers_all())
        .unwrap()
        .into_iter()
        .map(|c| c.id)
        .collect();
    assert_eq!(left, [kept]);
}

/// `--out` in a folder where no file can be created is refused before anything is
/// started or sent: a read-only folder (when the tests do not run as root, whom
/// permissions do not stop) and `/proc`, where not even root creates files.
#[test]
fn an_out_folder_that_cannot_be_written_is_refused_before_anything_is_sent() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let config = samples.join("processing.json");
    let rover = samples.join("rover.nmea");
    let read_only = cwd.path().join("read-only");
    std::fs::create_dir(&read_only).unwrap();
    let mut outs = Vec::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&read_only, std::fs::Permissions::from_mode(0o555)).unwrap();
        if std::fs::write(read_only.join("probe"), "").is_err() {
            outs.push(read_only.join("results"));
        }
    }
    if cfg!(target_os = "linux") {
        outs.push("/proc/svc-results/{processing_id}".into());
    }
    for out in &outs {
        let run = process(
            cwd.path(),
            &[
                rover.to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--out",
                out.to_str().unwrap(),
                "--json",
            ],
        );
        run.fails_with(5);
        assert!(run.stderr.contains("cannot be written"), "{run:#?}");
        assert!(run.stderr.contains("nothing was sent"), "{run:#?}");
        assert!(
            !run.stderr.contains("emulator"),
            "nothing was started: {run:#?}"
        );
        assert_eq!(failure_json(&run)["containerId"], Value::Null);
    }
    assert!(!outs.is_empty() || !cfg!(target_os = "linux"));
}

/// `--out` naming an existing file is refused before anything is started or sent (it
/// used to be found only after the processing, and its credit, were spent).
#[test]
fn an_existing_file_as_out_is_refused_before_anything_is_sent() {
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("results"), "a file").unwrap();
    let samples = repository().join("samples");
    let config = samples.join("processing.json");
    let rover = samples.join("rover.nmea");
    for out in ["results", "results/{processing_id}"] {
        let run = process(
            cwd.path(),
            &[
                rover.to_str().unwrap(),
                "--config",
                config.to_str().unwrap(),
                "--out",
                out,
                "--json",
            ],
        );
        run.fails_with(5);
        assert!(run.stderr.contains("results"), "{run:#?}");
        assert!(run.stderr.contains("nothing was sent"), "{run:#?}");
        assert!(
            !run.stderr.contains("emulator"),
            "nothing was started: {run:#?}"
        );
        let failure = failure_json(&run);
        assert_eq!(failure["kind"], "invalid_input");
        assert_eq!(failure["containerId"], Value::Null);
        assert_eq!(failure["cleanedUp"], false);
    }
}

/// Ctrl-C (SIGINT) or SIGTERM while the embedded emulator runs the processing: the
/// command stops, exits with the signal's code (130, 143), and the message says what is
/// true — the emulator stops with the command, so the processing ends with it — and
/// not that it "goes on in the cloud".
#[cfg(unix)]
#[test]
fn a_signal_with_the_embedded_emulator_says_the_processing_ends() {
    for (signal, code) in [("-INT", 130), ("-TERM", 143)] {
        interrupted_with_the_embedded_emulator(signal, code);
    }
}

#[cfg(unix)]
/// `svc ARGS` in `cwd` without the caller's `SVC_*` settings, signalled with `signal`
/// once a stderr line contains `needle`: its exit status, its stderr lines and its
/// stdout.
fn signalled_after(
    cwd: &Path,
    args: &[&str],
    needle: &str,
    signal: &str,
) -> (std::process::ExitStatus, String, String) {
    use std::io::{BufRead as _, Read as _};
    use std::time::Instant;

    let mut command = command(args);
    for name in svc_core::cloud::ENV_VARS {
        command.env_remove(name);
    }
    command.current_dir(cwd);
    let mut child = command.spawn().expect("svc starts");
    let stderr = child.stderr.take().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.contains(needle)) {
        let left = deadline.saturating_duration_since(Instant::now());
        match received.recv_timeout(left) {
            Ok(line) => seen.push(line),
            Err(_) => {
                let _ = child.kill();
                panic!("no `{needle}` line: {seen:#?}");
            }
        }
    }
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let status = crate::support::wait(&mut child, Duration::from_secs(30))
        .expect("svc ends after the signal");
    reader.join().unwrap();
    seen.extend(received.try_iter());
    let mut out = String::new();
    stdout.read_to_string(&mut out).unwrap();
    (status, seen.join("\n"), out)
}

fn interrupted_with_the_embedded_emulator(signal: &str, code: i32) {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let rover = samples.join("rover.nmea");
    let config = samples.join("processing.json");
    let args = [
        "process",
        rover.to_str().unwrap(),
        "--config",
        config.to_str().unwrap(),
    ];
    let (status, text, _) = signalled_after(cwd.path(), &args, "started", signal);
    assert_eq!(status.code(), Some(code), "{signal}: {text}");
    assert!(text.contains("canceled"), "{text}");
    assert!(text.contains("embedded emulator"), "{text}");
    assert!(text.contains("ends with it"), "{text}");
    assert!(!text.contains("goes on in the cloud"), "{text}");
}

/// Two runs into one `--out`: the second is refused before anything is sent (exit 4,
/// naming the folder), so a folder never mixes two runs' files while each lists the
/// same paths as its own. The lock is the folder's `.svc-output.lock`, held here by the
/// test as another run would hold it; once it is released the run goes through.
#[test]
fn a_folder_another_run_is_writing_is_refused() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let out = cwd.path().join("results");
    std::fs::create_dir_all(&out).unwrap();
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(out.join(".svc-output.lock"))
        .unwrap();
    lock.try_lock().unwrap();
    let args = [
        samples.join("rover.nmea").to_str().unwrap().to_owned(),
        "--config".to_owned(),
        samples.join("processing.json").to_str().unwrap().to_owned(),
        "--out".to_owned(),
        out.to_str().unwrap().to_owned(),
        "--json".to_owned(),
    ];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = process(cwd.path(), &args);
    run.fails_with(4);
    assert!(run.stderr.contains("another run is writing"), "{run:#?}");
    assert!(run.stderr.contains("nothing was sent"), "{run:#?}");
    assert_eq!(failure_json(&run)["containerId"], Value::Null);
    drop(lock);
    let run = process(cwd.path(), &args);
    assert_eq!(run.code, 0, "{run:#?}");
}

/// `--batch DIR`: each folder a mission, processed one at a time in the order of
/// their names, a failed one not stopping the others; outputs per mission; progress
/// lines labelled by mission.
#[test]
fn a_batch_processes_each_mission_and_isolates_failures() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let batch = cwd.path().join("missions");
    for name in ["day1-a", "day1-c"] {
        let mission = batch.join(name);
        std::fs::create_dir_all(&mission).unwrap();
        for file in ["rover.nmea", "imu.csv"] {
            std::fs::copy(samples.join(file), mission.join(file)).unwrap();
        }
    }
    std::fs::create_dir_all(batch.join("day1-b")).unwrap();
    std::fs::write(batch.join("day1-b/rover.nmea"), "no GNSS here\n").unwrap();
    let config = samples.join("processing.json");
    let run = process(
        cwd.path(),
        &[
            "--batch",
            "missions",
            "--config",
            config.to_str().unwrap(),
            "--out",
            "results",
            "--json",
        ],
    );
    assert_eq!(run.code, 8, "a failed processing among them: {run:#?}");
    let report: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    let missions = report["missions"].as_array().unwrap();
    let names: Vec<&str> = missions
        .iter()
        .map(|m| m["mission"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["day1-a", "day1-b", "day1-c"]);
    let results: Vec<&str> = missions
        .iter()
        .map(|m| m["processing"]["processingResult"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["succeeded", "failed", "succeeded"], "{run:#?}");
    for (mission, name) in missions.iter().zip(&names) {
        assert_eq!(mission["processing"]["name"], *name);
    }
    for name in ["day1-a", "day1-c"] {
        for output in OUTPUTS {
            let file = cwd.path().join("results").join(name).join(output);
            assert!(file.is_file(), "{} written", file.display());
        }
    }
    assert!(run.stderr.contains("day1-b  "), "{run:#?}");
    assert!(run.stderr.contains("uploading"), "{run:#?}");

    // A list naming a mission that does not exist: refused before anything is sent.
    std::fs::write(
        cwd.path().join("list.txt"),
        "missions/day1-a\nmissions/nope\n",
    )
    .unwrap();
    let run = process(
        cwd.path(),
        &["--batch", "list.txt", "--config", config.to_str().unwrap()],
    );
    assert_eq!(run.code, 5, "{run:#?}");
    assert!(run.stderr.contains("nope"), "{run:#?}");
}

/// `--key auto`: a rerun of the same job follows the earlier run's processing and
/// downloads its outputs again, starting none.
#[test]
fn a_rerun_with_a_key_starts_no_second_processing() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    let rover = samples.join("rover.nmea");
    let config = samples.join("processing.json");
    let cloud = Cloud::with(EmulatorConfig {
        processing_time: Duration::from_millis(300),
        device: None,
        ..EmulatorConfig::default()
    });
    let run_into = |out: &str| {
        let args = [
            "process",
            rover.to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
            "--key",
            "auto",
            "--out",
            out,
            "--json",
        ];
        cloud.svc_in(&args, &cloud.env(), Some(cwd.path())).json()
    };
    let first = run_into("first");
    assert_eq!(first["reused"], false, "{first}");
    let second = run_into("second");
    assert_eq!(second["reused"], true, "{second}");
    assert_eq!(second["processing"]["id"], first["processing"]["id"]);
    assert!(cwd.path().join("second/trajectory.csv").is_file());
    let list = cloud.svc_in(&["processings", "list"], &cloud.env(), Some(cwd.path()));
    assert_eq!(list.stdout.lines().count(), 1, "{list:#?}");

    // The lists narrowed by the key, or by a name no processing has.
    let key = first["processing"]["metadata"]["svc-job-key"]
        .as_str()
        .unwrap();
    let entry = format!("svc-job-key={key}");
    for what in ["processings", "containers"] {
        let args = [what, "list", "--metadata", &entry];
        let list = cloud.svc_in(&args, &cloud.env(), Some(cwd.path()));
        assert_eq!(list.stdout.lines().count(), 1, "{list:#?}");
    }
    let args = ["processings", "list", "--name", "nope"];
    let list = cloud.svc_in(&args, &cloud.env(), Some(cwd.path()));
    assert_eq!(list.stdout.lines().count(), 0, "{list:#?}");
}

/// `--batch --journal FILE`: the same batch run again with its journal follows the
/// processings already started: nothing is started twice.
#[test]
fn a_batch_run_again_with_its_journal_starts_nothing_twice() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    for name in ["one", "two"] {
        let mission = cwd.path().join("missions").join(name);
        std::fs::create_dir_all(&mission).unwrap();
        std::fs::copy(samples.join("rover.nmea"), mission.join("rover.nmea")).unwrap();
    }
    let config = samples.join("processing.json");
    let cloud = Cloud::with(EmulatorConfig {
        processing_time: Duration::from_millis(300),
        device: None,
        ..EmulatorConfig::default()
    });
    let args = [
        "process",
        "--batch",
        "missions",
        "--config",
        config.to_str().unwrap(),
        "--journal",
        "batch.jsonl",
        "--json",
    ];
    let ids = |run: &crate::support::Run| -> Vec<String> {
        let report: Value = serde_json::from_str(&run.stdout).expect("one JSON object");
        report["missions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["processing"]["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = cloud.svc_in(&args, &cloud.env(), Some(cwd.path()));
    assert_eq!(first.code, 0, "{first:#?}");
    let journal = std::fs::read_to_string(cwd.path().join("batch.jsonl")).unwrap();
    assert!(
        journal
            .lines()
            .all(|l| serde_json::from_str::<Value>(l).is_ok())
    );
    let again = cloud.svc_in(&args, &cloud.env(), Some(cwd.path()));
    assert_eq!(again.code, 0, "{again:#?}");
    assert_eq!(ids(&again), ids(&first));
    let list = cloud.svc_in(&["processings", "list"], &cloud.env(), Some(cwd.path()));
    assert_eq!(list.stdout.lines().count(), 2, "{list:#?}");
}

/// SIGINT during a batch: every mission not done stops at once (the next one's
/// processing is never started), the report says what each left, exit 130.
#[test]
fn a_signal_stops_a_batch_and_each_mission_says_what_it_left() {
    let cwd = tempfile::tempdir().unwrap();
    let samples = repository().join("samples");
    for name in ["a", "b"] {
        let mission = cwd.path().join("missions").join(name);
        std::fs::create_dir_all(&mission).unwrap();
        std::fs::copy(samples.join("rover.nmea"), mission.join("rover.nmea")).unwrap();
    }
    let config = samples.join("processing.json");
    let args = [
        "process",
        "--batch",
        "missions",
        "--config",
        config.to_str().unwrap(),
        "--json",
    ];
    let (status, text, out) = signalled_after(cwd.path(), &args, "running", "-INT");
    assert_eq!(status.code(), Some(130), "{text}");
    assert!(text.contains("missions not done were stopped"), "{text}");
    let report: Value = serde_json::from_str(&out).expect("one JSON object");
    let missions = report["missions"].as_array().unwrap();
    let started: Vec<bool> = missions
        .iter()
        .map(|m| !m["error"]["processingId"].is_null())
        .collect();
    // One mission was processing when the signal came; the other never started one.
    assert_eq!(started.iter().filter(|s| **s).count(), 1, "{report}");
    for mission in missions {
        assert_eq!(mission["error"]["kind"], "canceled", "{report}");
    }
}
