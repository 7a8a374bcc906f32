//! Fleets, each group against its alternative in the same run:
//!
//! - `fleet_diff`: 1,000 exported unit files (the emulated unit's default tree, 1% of
//!   its leaves changed in each, written indented as `svc device fleet export` writes
//!   them, about 30 KB each) compared against one reference file:
//!   `svc_core::settings::diff_files` (every core, each text compared with the
//!   reference's text: only the values that differ are parsed) against reading each
//!   file into a `serde_json::Value` (`read_tree`), then a `SettingsTree`, one after
//!   the other,
//!   and against a Python loop of `json.load` + `json_merge_patch.create_patch`
//!   (`benches/fleet_diff.py`; only its loop is timed, as it reports it). Python is
//!   `$SVC_BENCH_PYTHON`, else `target/python-venv/bin/python`, else `python3`: the first
//!   that has `json_merge_patch`; without one that entry is skipped, with a note.
//! - `fleet_apply`: 50 units of an in-process emulator: `Unit::apply_wanted` on one
//!   unit (a `Unit` made once) against `Fleet::apply` on all 50 (all at once;
//!   it reaches each unit afresh: a new `Unit`, `info`, then `apply_wanted`). The
//!   wanted tree alternates between two values, so that every apply writes. Run twice:
//!   units answering at once (`fleet_apply`: CPU-bound, the machine's cores are the
//!   limit) and units answering after 20 ms, a Wi-Fi round trip
//!   (`fleet_apply_20ms_latency`: I/O-bound, as real units are).
//! - `upload_many`: 500 files of 1 MiB to the emulator's storage forms:
//!   `svc_core::transfer` (`Transfers::upload` with the default options, as `svc
//!   process` uploads its files) against `curl -F` run 8 at a time (`xargs -P 8`).
//!   Peak memory is printed after the group, as in the `upload` bench: the growth of
//!   this process's peak RSS during one upload of the 500 files (client and in-process
//!   storage), and the peak RSS of one curl process (measured in a child process of
//!   this bench whose only children are the `xargs` and its curls).
//!
//! `cargo bench -p svc-benches --bench fleet` (about 3 minutes in all; `upload_many`
//! runs first). Under `cargo test` (no `--bench` argument) each entry runs once on
//! small inputs, as a smoke test.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use serde_json::{Value, json};
use svc_core::cloud::{
    ContainerFileType, ContainerRegion, CreateContainerFile, CreateContainerRequest,
};
use svc_core::fleet::{Fleet, Member, UnitAddress};
use svc_core::settings::{self, SettingsTree};
use svc_core::transfer::{TransferOptions, Transfers, UploadJob};
use svc_core::unit::{ApplyOptions, Unit};
use svc_emulator::{Emulator, EmulatorConfig};
use svc_test_support::settings as testing;

use common::{children_peak_kib, storage_emulator, vm_kib};

/// Fixed seed: the same leaves change on every run (file `i` uses `SEED + i`).
const SEED: u64 = 0x5e77_1265;

/// Set in the environment of the child that measures curl's peak memory: the list of
/// curl configuration files to upload.
const CURL_PEAK_LIST: &str = "SVC_BENCH_CURL_PEAK_LIST";

/// How many curl processes upload at once.
const CURL_PARALLEL: &str = "8";

/// Sizes of the inputs: the issue's, or small ones for the smoke test.
struct Sizes {
    diff_files: usize,
    units: usize,
    upload_files: usize,
    upload_file_size: u64,
}

const BENCH_SIZES: Sizes = Sizes {
    diff_files: 1_000,
    units: 50,
    upload_files: 500,
    upload_file_size: 1 << 20,
};

const SMOKE_SIZES: Sizes = Sizes {
    diff_files: 20,
    units: 4,
    upload_files: 8,
    upload_file_size: 64 << 10,
};

fn main() {
    if let Some(list) = std::env::var_os(CURL_PEAK_LIST) {
        curl_peak_child(Path::new(&list));
        return;
    }
    let benching = std::env::args().any(|a| a == "--bench");
    let sizes = if benching { BENCH_SIZES } else { SMOKE_SIZES };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let mut criterion = Criterion::default().configure_from_args();
    // The uploads first: the process's peak RSS printed after them is theirs, not
    // memory kept from reading a thousand files or running fifty units.
    bench_upload(&mut criterion, &runtime, &sizes, benching);
    bench_diff(&mut criterion, &sizes, benching);
    bench_apply(&mut criterion, &runtime, &sizes, benching, Duration::ZERO);
    bench_apply(&mut criterion, &runtime, &sizes, benching, FIELD_LATENCY);
    criterion.final_summary();
}

// ---------------------------------------------------------------------------------
// fleet_diff

/// The folder of the fleet's files: `reference.json` and `units/unit-NNNN.json`.
struct FleetFiles {
    _dir: tempfile::TempDir,
    reference: PathBuf,
    folder: PathBuf,
    files: Vec<PathBuf>,
}

fn fleet_files(count: usize) -> FleetFiles {
    let tree = match svc_emulator::device::default_settings() {
        Ok(tree) => tree,
        Err(error) => panic!("the emulator's default tree: {error}"),
    };
    let dir = tempfile::tempdir().expect("a temporary folder");
    let folder = dir.path().join("units");
    std::fs::create_dir(&folder).expect("the units folder");
    // Indented, as `Fleet::export` writes a unit's file.
    let write = |path: &Path, tree: &Value| {
        let text = serde_json::to_vec_pretty(tree).expect("a tree serializes");
        std::fs::write(path, text).expect("write a unit file");
    };
    let reference = dir.path().join("reference.json");
    write(&reference, &tree);
    let files: Vec<PathBuf> = (0..count)
        .map(|i| {
            let path = folder.join(format!("unit-{i:04}.json"));
            write(&path, &testing::change_leaves(&tree, 0.01, SEED + i as u64));
            path
        })
        .collect();
    FleetFiles {
        _dir: dir,
        reference,
        folder,
        files,
    }
}

/// The code path before `diff_files` compared texts: every file read into a
/// `serde_json::Value`, then a `SettingsTree`, one after the other; then the diffs.
fn diff_through_values(reference: &Path, files: &[PathBuf]) -> Vec<settings::TreePatch> {
    let read = |path: &Path| match settings::read_tree(path) {
        Ok(value) => SettingsTree::from_value(&value),
        Err(error) => panic!("a unit file: {error}"),
    };
    let reference = read(reference);
    let trees: Vec<SettingsTree> = files.iter().map(|file| read(file)).collect();
    trees.iter().map(|tree| reference.diff(tree)).collect()
}

/// An interpreter that has `json_merge_patch`: `$SVC_BENCH_PYTHON`, the project's
/// `target/python-venv`, `python3`, the first that imports it.
fn python_with_merge_patch() -> Option<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(python) = std::env::var_os("SVC_BENCH_PYTHON") {
        candidates.push(python.into());
    }
    // This bench runs as target/<profile>/deps/fleet-<hash>: look above it first.
    let mut targets: Vec<PathBuf> = std::env::current_exe()
        .ok()
        .map(|exe| exe.ancestors().skip(1).map(Path::to_path_buf).collect())
        .unwrap_or_default();
    targets.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../target"));
    candidates.extend(
        targets
            .iter()
            .map(|target| target.join("python-venv/bin/python"))
            .filter(|python| python.is_file())
            .take(1),
    );
    candidates.push("python3".into());
    candidates.into_iter().find(|python| {
        Command::new(python)
            .args(["-c", "import json_merge_patch"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success())
    })
}

/// Runs `benches/fleet_diff.py` for `iterations` iterations; the time of its loop.
fn python_loop(python: &Path, fleet: &FleetFiles, iterations: u64) -> Duration {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("fleet_diff.py");
    let output = Command::new(python)
        .arg(&script)
        .arg(&fleet.reference)
        .arg(&fleet.folder)
        .arg(iterations.to_string())
        .stderr(Stdio::inherit())
        .output()
        .expect("run fleet_diff.py");
    assert!(output.status.success(), "fleet_diff.py failed");
    let text = String::from_utf8_lossy(&output.stdout);
    match text.trim().parse::<f64>() {
        Ok(seconds) => Duration::from_secs_f64(seconds),
        Err(_) => panic!("fleet_diff.py printed {text:?}, not its elapsed seconds"),
    }
}

fn bench_diff(criterion: &mut Criterion, sizes: &Sizes, benching: bool) {
    let fleet = fleet_files(sizes.diff_files);
    let bytes: u64 = fleet
        .files
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok())
        .map(|m| m.len())
        .sum();
    eprintln!(
        "fleet_diff: {} files, {} bytes on average",
        fleet.files.len(),
        bytes / fleet.files.len() as u64
    );
    // Both Rust paths give the same patches.
    let straight = match settings::diff_files(&fleet.reference, &fleet.files) {
        Ok(diffs) => diffs,
        Err(error) => panic!("diff_files: {error}"),
    };
    let through_values = diff_through_values(&fleet.reference, &fleet.files);
    assert_eq!(straight.len(), fleet.files.len());
    for (a, b) in straight.iter().zip(&through_values) {
        assert!(!a.patch.is_empty(), "every file differs from the reference");
        assert!(a.patch == b.to_patch(), "both paths agree");
    }
    let python = python_with_merge_patch();

    let mut group = criterion.benchmark_group("fleet_diff");
    group.throughput(Throughput::Elements(fleet.files.len() as u64));
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(if benching { 8 } else { 1 }));
    group.bench_function("svc_core", |b| {
        b.iter(|| settings::diff_files(&fleet.reference, &fleet.files));
    });
    group.bench_function("value_path", |b| {
        b.iter(|| diff_through_values(&fleet.reference, &fleet.files));
    });
    match &python {
        Some(python) => {
            group.bench_function("python_loop", |b| {
                b.iter_custom(|iterations| python_loop(python, &fleet, iterations));
            });
        }
        None => eprintln!(
            "fleet_diff: no Python with json_merge_patch ($SVC_BENCH_PYTHON, \
             target/python-venv/bin/python, python3): python_loop skipped"
        ),
    }
    group.finish();
}

// ---------------------------------------------------------------------------------
// fleet_apply

/// The round trip of a unit reached over Wi-Fi, for the second `fleet_apply` run: real
/// units are I/O-bound, which in-process units answering at once are not.
const FIELD_LATENCY: Duration = Duration::from_millis(20);

fn bench_apply(
    criterion: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    sizes: &Sizes,
    benching: bool,
    latency: Duration,
) {
    let emulator = runtime
        .block_on(Emulator::start(EmulatorConfig {
            devices: sizes.units,
            device: Some(svc_emulator::device::DeviceConfig {
                latency,
                ..svc_emulator::device::DeviceConfig::default()
            }),
            ..EmulatorConfig::default()
        }))
        .expect("the emulator starts its units");
    let urls: Vec<String> = emulator
        .devices()
        .iter()
        .map(|d| d.url().to_owned())
        .collect();
    // Two wanted trees; each apply writes the other one, so every apply writes.
    let wanted = |second: bool| {
        let rate = if second { "20ms" } else { "10ms" };
        json!({"output": {"comA": {"messages": {"imuShort": rate}}}})
    };
    let wanted = [wanted(false), wanted(true)];
    let options = ApplyOptions::default();

    let unit = Unit::http(&urls[0]).expect("a unit");
    let apply_one = |wanted: &Value| {
        let report = runtime
            .block_on(unit.apply_wanted(wanted, options))
            .expect("apply_wanted on one unit");
        report.written
    };
    let fleet = Fleet::new(
        urls.iter()
            .map(|url| Member {
                address: UnitAddress::Http(url.clone()),
                user: None,
            })
            .collect(),
    )
    // All at once ("configured concurrently"; the default, 16, suits real networks).
    .with_concurrency(urls.len());
    let apply_all = |wanted: &Value| {
        let results = runtime.block_on(fleet.apply(wanted, options, |_| {}));
        results
            .iter()
            .filter(|r| r.outcome.as_ref().expect("apply on a unit").written)
            .count()
    };
    // Every unit at the first tree; the first apply of each entry writes the second.
    apply_all(&wanted[0]);

    let mut group = criterion.benchmark_group(if latency.is_zero() {
        "fleet_apply".to_owned()
    } else {
        format!("fleet_apply_{}ms_latency", latency.as_millis())
    });
    group
        .sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(if benching { 8 } else { 1 }));
    let mut next = 1;
    group.bench_function("one_unit", |b| {
        b.iter(|| {
            assert!(apply_one(&wanted[next]), "every apply writes");
            next = 1 - next;
        });
    });
    // Unit 0 holds `wanted[1 - next]`: bring it back to `wanted[0]` with the others
    // (the fleet entry then writes on every unit).
    if next == 0 {
        apply_one(&wanted[0]);
    }
    let mut next = 1;
    let units = urls.len();
    // Fifty units when benching (a few under `cargo test`).
    group.bench_function("fifty_units", |b| {
        b.iter(|| {
            assert_eq!(apply_all(&wanted[next]), units, "every apply writes");
            next = 1 - next;
        });
    });
    group.finish();
    runtime.block_on(emulator.shutdown());
}

// ---------------------------------------------------------------------------------
// upload_many

/// A string as curl's configuration file quotes it.
fn curl_quoted(text: &str) -> String {
    let mut quoted = String::with_capacity(text.len() + 2);
    quoted.push('"');
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                quoted.push('\\');
                quoted.push(c);
            }
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            _ => quoted.push(c),
        }
    }
    quoted.push('"');
    quoted
}

/// A curl configuration that sends `job`'s form (every field as it is, `file` last).
fn curl_config(job: &UploadJob) -> String {
    let mut config = String::new();
    for (k, v) in &job.upload_info.fields {
        config.push_str(&format!(
            "form-string = {}\n",
            curl_quoted(&format!("{k}={v}"))
        ));
    }
    config.push_str(&format!(
        "form = {}\n",
        curl_quoted(&format!("file=@{}", job.local_path.display()))
    ));
    config.push_str(&format!("url = {}\n", curl_quoted(&job.upload_info.url)));
    config
}

/// `xargs -P 8 -n 1 curl … -K` over the configuration files listed in `list`.
fn curl_many_command(list: &Path) -> Command {
    let list = std::fs::File::open(list).expect("the list of curl configurations");
    let mut command = Command::new("xargs");
    command
        .args(["-P", CURL_PARALLEL, "-n", "1"])
        .args([
            "curl",
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}\\n",
            "-K",
        ])
        .stdin(list)
        .stderr(Stdio::inherit());
    command
}

/// Uploads every file of `list` with curl; whether all were stored (204).
fn curl_many(list: &Path, files: usize) -> bool {
    match curl_many_command(list).output() {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            out.status.success()
                && text.lines().count() == files
                && text.lines().all(|code| code == "204")
        }
        Err(_) => false,
    }
}

/// In the child started by `curl_peak`: upload the list once and print the largest peak
/// RSS of the processes waited for (xargs and its curls), in KiB.
fn curl_peak_child(list: &Path) {
    let status = curl_many_command(list)
        .stdout(Stdio::null())
        .status()
        .expect("run xargs");
    assert!(status.success(), "curl uploads");
    if let Some(kib) = children_peak_kib() {
        println!("{kib}");
    }
}

/// The peak RSS of one curl process of an upload of `list`, measured in a child of
/// this bench so that no other child (Python) counts.
fn curl_peak(list: &Path) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = Command::new(exe)
        .env(CURL_PEAK_LIST, list)
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout).trim().parse().ok()
}

fn write_file(path: &Path, size: u64, index: usize) {
    let data: Vec<u8> = (0..size as usize)
        .map(|i| ((i * 31 + index) % 251) as u8)
        .collect();
    std::fs::write(path, data).expect("write an upload file");
}

fn bench_upload(
    criterion: &mut Criterion,
    runtime: &tokio::runtime::Runtime,
    sizes: &Sizes,
    benching: bool,
) {
    let (count, size) = (sizes.upload_files, sizes.upload_file_size);
    let total = count as u64 * size;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let paths: Vec<(String, PathBuf)> = (0..count)
        .map(|i| {
            let path = dir.path().join(format!("survey-{i:04}.bin"));
            write_file(&path, size, i);
            (format!("survey/{i:04}.bin"), path)
        })
        .collect();

    let (emulator, client) = storage_emulator(runtime);
    let request = CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata: None,
        files: paths
            .iter()
            .map(|(name, _)| CreateContainerFile {
                path: name.clone(),
                type_: ContainerFileType::Input,
                size: size as i64,
                metadata: None,
            })
            .collect(),
    };
    let container = runtime
        .block_on(client.create_container(request))
        .expect("a container");
    let jobs = UploadJob::for_container(&container, paths).expect("a form for every file");

    // As `svc process` uploads its files: the default options.
    let transfers = Transfers::new(reqwest::Client::new(), TransferOptions::default());
    let upload = |jobs: Vec<UploadJob>| {
        let report = runtime
            .block_on(async { transfers.upload(jobs).wait().await })
            .expect("the upload succeeds");
        assert_eq!(report.bytes(), total, "every file uploaded");
    };

    let list = dir.path().join("curl-configs.txt");
    let mut listed = String::new();
    for (i, job) in jobs.iter().enumerate() {
        let config = dir.path().join(format!("curl-{i:04}.cfg"));
        std::fs::write(&config, curl_config(job)).expect("write a curl configuration");
        listed.push_str(&format!("{}\n", config.display()));
    }
    std::fs::write(&list, listed).expect("write the list of curl configurations");
    let curl_available = curl_many(&list, count);

    {
        let mut group = criterion.benchmark_group("upload_many");
        group.throughput(Throughput::Bytes(total));
        group
            .sample_size(10)
            .sampling_mode(SamplingMode::Flat)
            .measurement_time(Duration::from_secs(if benching { 15 } else { 1 }));
        group.bench_function("svc_core", |b| b.iter(|| upload(jobs.clone())));
        if curl_available {
            group.bench_function("curl_xargs_P8", |b| {
                b.iter(|| assert!(curl_many(&list, count), "curl uploads"))
            });
        } else {
            eprintln!("upload_many: curl or xargs is not available here; only svc_core measured");
        }
        group.finish();
    }

    // Peak memory of one upload of every file each.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = vm_kib("VmRSS:");
    let started = Instant::now();
    upload(jobs.clone());
    let elapsed = started.elapsed();
    let peak = vm_kib("VmHWM:");
    match (reset, before, peak) {
        (true, Some(before), Some(peak)) => eprintln!(
            "upload_many peak memory, svc_core: process peak RSS {peak} KiB ({} KiB above the \
             RSS before) during the upload of {count} files of {} KiB in {elapsed:.2?} \
             (client and in-process storage together)",
            peak.saturating_sub(before),
            size >> 10,
        ),
        _ => eprintln!("upload_many peak memory, svc_core: not measurable on this system"),
    }
    if curl_available {
        match curl_peak(&list) {
            Some(kib) => eprintln!(
                "upload_many peak memory, curl: {kib} KiB (peak RSS of one curl process; \
                 {CURL_PARALLEL} run at once)"
            ),
            None => eprintln!("upload_many peak memory, curl: not measurable on this system"),
        }
    }
    drop(jobs);
    runtime.block_on(emulator.shutdown());
}
