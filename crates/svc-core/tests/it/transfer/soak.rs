//! A random soak: the emulator's fault injection on every server, ridden out.

use std::time::Duration;

use super::{Rig, emulator_config, entries, options, record, registered, restarted};
use reqwest::Client;
use svc_core::transfer::{FileState, Transfers};
use svc_emulator::FaultConfig;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_faults_on_every_server_are_ridden_out() {
    // (upload attempts beyond the first, download attempts beyond the first, uploads
    // that restarted from byte 0 after having sent some)
    let mut retries = (0, 0, 0);
    for seed in [0x7a3f_0042, 2, 3] {
        let (uploads, downloads, restarts) = soak(seed).await;
        retries.0 += uploads;
        retries.1 += downloads;
        retries.2 += restarts;
    }
    eprintln!(
        "under faults: {} upload retries ({} from byte 0 after sending), {} download retries",
        retries.0, retries.2, retries.1
    );
    assert!(
        retries.0 > 0 && retries.1 > 0,
        "the faults caused retries: {retries:?}"
    );
}

/// Uploads 8 files and downloads a processing's outputs with half the requests to
/// every server faulty (a third fail: 500s and cut answers; a sixth are delayed).
async fn soak(seed: u64) -> (u32, u32, usize) {
    let rig = Rig::with(emulator_config(FaultConfig {
        rate: 0.5,
        seed,
        delay: Duration::from_millis(20),
        ..FaultConfig::default()
    }))
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let sizes: Vec<(String, u64)> = (0..8)
        .map(|i| (format!("inputs/file-{i}.bin"), 100_000 + i * 150_000))
        .collect();
    let sizes_ref: Vec<(&str, u64)> = sizes.iter().map(|(n, s)| (n.as_str(), *s)).collect();
    let (container, jobs) = registered(&rig, dir.path(), &sizes_ref).await;
    let handle = Transfers::new(Client::new(), options(30)).upload(jobs);
    let seen = record(&handle);
    let report = handle
        .wait()
        .await
        .expect("the uploads ride out the faults");
    let seen = seen.await.expect("recorder");
    assert!(report.files.iter().all(|f| f.state == FileState::Done));
    rig.assert_all(&container, "ready").await;
    let upload_retries: u32 = report.files.iter().map(|f| f.attempts - 1).sum();
    let restarts = (0..sizes.len()).filter(|i| restarted(&seen, *i)).count();

    let (id, outputs) = rig.processed(200).await;
    let out = tempfile::tempdir().expect("temp dir");
    let report = Transfers::new(Client::new(), options(30))
        .download(outputs, out.path().to_owned())
        .wait()
        .await
        .expect("the downloads ride out the faults");
    let download_retries: u32 = report.files.iter().map(|f| f.attempts - 1).sum();
    let stored = rig.emu.stored_outputs(id);
    for (path, bytes) in &stored {
        let written = std::fs::read(out.path().join(path)).expect("written");
        assert!(written == *bytes, "{path} differs");
    }
    assert_eq!(
        entries(out.path()).len(),
        stored.len(),
        "no temporary file is left"
    );
    (upload_retries, download_retries, restarts)
}
