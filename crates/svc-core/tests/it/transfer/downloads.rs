//! Downloads: byte-identical outputs into a new folder, unsafe paths and links refused,
//! retries from the start without a partial file, a modified address redacted.

use std::path::PathBuf;
use std::time::Duration;

use super::proxy::{Plan, Proxy};
use super::{DEADLINE, Rig, entries, options, record, restarted};
use reqwest::Client;
use svc_cloud_api::cloud::types::OutputFile;
use svc_core::transfer::{TransferError, TransferOptions, Transfers};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn outputs_download_byte_identical_into_a_new_folder() {
    let rig = Rig::start().await;
    let (id, outputs) = rig.processed(120).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("results/run-1");
    let handle =
        Transfers::new(Client::new(), options(3)).download(outputs.clone(), folder.clone());
    let seen = record(&handle);
    let report = handle.wait().await.expect("the outputs download");
    let seen = seen.await.expect("recorder");

    let stored = rig.emu.stored_outputs(id);
    assert_eq!(stored.len(), outputs.len());
    for (path, bytes) in &stored {
        let written = std::fs::read(folder.join(path)).expect("written output");
        assert!(
            written == *bytes,
            "{path} differs from what the engine stored"
        );
    }
    let mut written = report.written_paths();
    written.sort();
    let mut expected: Vec<PathBuf> = stored.iter().map(|(p, _)| folder.join(p)).collect();
    expected.sort();
    assert_eq!(written, expected);
    let mut names: Vec<String> = stored.iter().map(|(p, _)| p.clone()).collect();
    names.sort();
    assert_eq!(entries(&folder), names, "no temporary file is left");

    let last = seen.last().expect("snapshots");
    let total: u64 = stored.iter().map(|(_, b)| b.len() as u64).sum();
    assert_eq!((last.done_bytes, last.total_bytes), (total, Some(total)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unsafe_output_paths_are_refused_before_anything_is_written() {
    let rig = Rig::start().await;
    let (_, outputs) = rig.processed(30).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("out");
    for (evil, reason) in [
        ("../evil", "it contains `..`"),
        ("/etc/x", "it is absolute"),
        ("a/../../evil", "it contains `..`"),
        ("", "it is empty"),
        ("..\\evil", "it contains a backslash"),
        ("C:/evil", "it has a drive prefix"),
        ("a\0b", "it contains NUL"),
    ] {
        let mut list = outputs.clone();
        // A real address: were the path accepted, the download would succeed.
        list.push(OutputFile {
            path: evil.to_owned(),
            url: outputs[0].url.clone(),
        });
        let proxy = Proxy::start(rig.storage_addr(), vec![]).await;
        let error = Transfers::new(proxy.client(), options(3))
            .download(list, folder.clone())
            .wait()
            .await
            .expect_err("refused");
        match &error {
            TransferError::UnsafeOutputPath { path, reason: r } => {
                assert_eq!((path.as_str(), *r), (evil, reason));
            }
            other => panic!("{evil:?}: expected UnsafeOutputPath, got {other:?}"),
        }
        assert_eq!(proxy.connections(), 0, "{evil:?}: nothing was downloaded");
        assert!(!folder.exists(), "{evil:?}: nothing was written");
        assert_eq!(entries(dir.path()), Vec::<String>::new());
    }

    // Two outputs with the same path.
    let mut twice = outputs.clone();
    twice.push(outputs[0].clone());
    let error = Transfers::new(Client::new(), options(3))
        .download(twice, folder.clone())
        .wait()
        .await
        .expect_err("refused");
    assert!(
        matches!(error, TransferError::UnsafeOutputPath { .. }),
        "{error:?}"
    );
    assert!(!folder.exists());
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_link_out_of_the_folder_is_not_followed() {
    let rig = Rig::start().await;
    let (_, outputs) = rig.processed(30).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (folder, outside) = (dir.path().join("out"), dir.path().join("outside"));
    std::fs::create_dir_all(&folder).expect("folder");
    std::fs::create_dir_all(&outside).expect("outside");
    std::os::unix::fs::symlink(&outside, folder.join("link")).expect("symlink");
    let list = vec![OutputFile {
        path: "link/deeper/x.csv".into(),
        url: outputs[0].url.clone(),
    }];
    let error = Transfers::new(Client::new(), options(3))
        .download(list, folder.clone())
        .wait()
        .await
        .expect_err("refused");
    assert!(
        matches!(error.failures(), [TransferError::UnsafeOutputPath { path, .. }] if path == "link/deeper/x.csv"),
        "{error:?}"
    );
    assert_eq!(
        entries(&outside),
        Vec::<String>::new(),
        "nothing written outside"
    );
    assert!(!outside.join("deeper").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downloads_are_retried_from_the_start_and_failures_leave_no_partial_file() {
    let rig = Rig::start().await;
    let (id, outputs) = rig.processed(600).await;
    let stored = rig.emu.stored_outputs(id);
    let csv = outputs
        .iter()
        .find(|o| o.path == "trajectory.csv")
        .expect("trajectory.csv")
        .clone();
    let csv_bytes = &stored
        .iter()
        .find(|(p, _)| p == "trajectory.csv")
        .expect("stored")
        .1;
    assert!(
        csv_bytes.len() > 8 * 1024,
        "a body long enough to be cut in the middle"
    );

    // Cut in the middle of the body, then a 500, then it passes.
    let proxy = Proxy::start(
        rig.storage_addr(),
        vec![Plan::CutAnswerAfter(4096), Plan::Answer(500)],
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let handle = Transfers::new(proxy.client(), options(5))
        .download(vec![csv.clone()], dir.path().to_owned());
    let seen = record(&handle);
    let report = handle.wait().await.expect("the third attempt succeeds");
    let seen = seen.await.expect("recorder");
    assert_eq!(report.files[0].attempts, 3);
    assert!(restarted(&seen, 0), "the retry started again from byte 0");
    assert!(std::fs::read(dir.path().join("trajectory.csv")).expect("written") == *csv_bytes);
    assert_eq!(entries(dir.path()), ["trajectory.csv"]);

    // Every attempt cut: an error, and no file at all.
    let proxy = Proxy::start(rig.storage_addr(), vec![Plan::CutAnswerAfter(4096); 10]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let handle = Transfers::new(proxy.client(), options(2))
        .download(vec![csv.clone()], dir.path().to_owned());
    let seen = record(&handle);
    let error = handle.wait().await.expect_err("every attempt is cut");
    let seen = seen.await.expect("recorder");
    assert!(
        matches!(
            error.failures(),
            [TransferError::Network { attempts: 2, .. }
                | TransferError::Incomplete { attempts: 2, .. }]
        ),
        "{error:?}"
    );
    assert!(
        seen.iter().any(|p| p.files[0].done_bytes > 0),
        "bytes were written before the cut"
    );
    assert_eq!(entries(dir.path()), Vec::<String>::new(), "no partial file");

    // A stalled answer: abandoned after the idle timeout, retried, complete.
    let proxy = Proxy::start(rig.storage_addr(), vec![Plan::StallAnswerAfter(4096)]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let report = Transfers::new(
        proxy.client(),
        TransferOptions {
            idle_timeout: Duration::from_millis(300),
            ..options(3)
        },
    )
    .download(vec![csv.clone()], dir.path().to_owned())
    .wait()
    .await
    .expect("the second attempt succeeds");
    assert!(
        report.files[0].attempts >= 2,
        "the stalled attempt was abandoned"
    );
    assert!(std::fs::read(dir.path().join("trajectory.csv")).expect("written") == *csv_bytes);

    // A cancel while a download is stalled part-way removes the partial file.
    let proxy = Proxy::start(rig.storage_addr(), vec![Plan::StallAnswerAfter(4096)]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let handle = Transfers::new(proxy.client(), options(3))
        .download(vec![csv.clone()], dir.path().to_owned());
    let mut progress = handle.subscribe();
    tokio::time::timeout(DEADLINE, progress.wait_for(|p| p.done_bytes > 0))
        .await
        .expect("bytes arrive")
        .expect("progress");
    assert_eq!(
        entries(dir.path()).len(),
        1,
        "the temporary file exists meanwhile"
    );
    handle.cancel();
    let error = handle.wait().await.expect_err("canceled");
    assert!(matches!(error, TransferError::Canceled { .. }), "{error:?}");
    assert_eq!(
        entries(dir.path()),
        Vec::<String>::new(),
        "the partial file is removed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modified_download_address_is_refused_and_redacted() {
    let rig = Rig::start().await;
    let (_, outputs) = rig.processed(30).await;
    let mut output = outputs[0].clone();
    let signature = output
        .url
        .split("X-Amz-Signature=")
        .nth(1)
        .expect("signed address")
        .to_owned();
    output.url = output.url.replace("X-Amz-Date=", "X-Amz-Date=1");
    let dir = tempfile::tempdir().expect("temp dir");
    let error = Transfers::new(Client::new(), options(5))
        .download(vec![output], dir.path().to_owned())
        .wait()
        .await
        .expect_err("refused");
    assert!(
        matches!(error.failures(), [TransferError::DownloadRefused { .. }]),
        "{error:?}"
    );
    assert_eq!(error.report().expect("report").files[0].attempts, 1);
    let text = format!("{error} {error:?}");
    assert!(!text.contains(&signature), "{text}");
    assert_eq!(entries(dir.path()), Vec::<String>::new());
}

/// A download removes the temporary files that an earlier download of a process that
/// has ended left in the folder (killed outright, it could not remove them), and
/// leaves those of running processes and every other file alone.
#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_removes_the_temporary_files_a_killed_download_left() {
    let rig = Rig::start().await;
    let (_, outputs) = rig.processed(120).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let folder = dir.path().join("results");
    std::fs::create_dir_all(&folder).unwrap();
    // A process that has ended: its pid is free (until the system reuses it).
    let mut ended = std::process::Command::new("true").spawn().unwrap();
    let dead = ended.id();
    ended.wait().unwrap();
    let left = format!(".svc-download-{dead}-0123456789abcdef.part");
    let running = format!(".svc-download-{}-fedcba9876543210.part", std::process::id());
    for name in [
        &left,
        &running,
        &".notes.part".to_owned(),
        &"keep.txt".to_owned(),
    ] {
        std::fs::write(folder.join(name), b"partial").unwrap();
    }

    Transfers::new(Client::new(), options(3))
        .download(outputs.clone(), folder.clone())
        .wait()
        .await
        .expect("the outputs download");

    let mut expected: Vec<String> = outputs.iter().map(|o| o.path.clone()).collect();
    expected.extend([running, ".notes.part".to_owned(), "keep.txt".to_owned()]);
    expected.sort();
    assert_eq!(
        entries(&folder),
        expected,
        "only the ended process's file went"
    );
}
