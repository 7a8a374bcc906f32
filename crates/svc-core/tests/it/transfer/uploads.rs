//! Uploads: in parallel with progress, streamed from disk, refused sizes and forms,
//! retries from the start of the file, fail-fast, cancel; jobs from a container.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::proxy::{Plan, Proxy};
use super::{DEADLINE, MIB, Rig, options, record, registered, restarted, write_file};
use reqwest::Client;
use serde_json::json;
use svc_core::transfer::{
    FileState, Progress, TransferError, TransferOptions, Transfers, UPLOAD_REFUSED_REASON,
    UploadJob,
};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_files_upload_in_parallel_with_progress() {
    // Large enough to be sent in many chunks, so that the observers below see it
    // part-way even on a busy machine.
    const BIG: u64 = 8 * MIB;
    let rig = Rig::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let sizes = [
        ("empty.bin", 0),
        ("small/one-kib.bin", 1024),
        ("big/eight-mib.bin", BIG),
    ];
    let (container, jobs) = registered(&rig, dir.path(), &sizes).await;
    rig.assert_all(&container, "pending").await;

    let calls = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let sink = calls.clone();
    let transfers = Transfers::new(
        Client::new(),
        TransferOptions {
            on_progress: Some(Arc::new(move |p: &Progress| {
                sink.lock().expect("lock").push(p.clone());
            })),
            progress_interval: Duration::from_millis(1),
            ..options(3)
        },
    );
    let handle = transfers.upload(jobs);
    let seen = record(&handle);
    let report = handle.wait().await.expect("every file uploads");
    let seen = seen.await.expect("recorder");

    assert_eq!(report.files.len(), 3);
    for (file, (name, size)) in report.files.iter().zip(sizes) {
        assert_eq!(file.name, name);
        assert_eq!(file.state, FileState::Done, "{file:?}");
        assert_eq!((file.bytes, file.attempts), (size, 1), "{file:?}");
    }
    assert_eq!(report.bytes(), BIG + 1024);
    rig.assert_all(&container, "ready").await;

    // Progress reached the total of each file and of the whole transfer.
    let last = seen.last().expect("snapshots");
    assert!(last.finished);
    assert_eq!(last.total_bytes, Some(BIG + 1024));
    assert_eq!(last.done_bytes, BIG + 1024);
    for (f, (_, size)) in last.files.iter().zip(sizes) {
        assert_eq!(
            (f.done_bytes, f.total_bytes, f.state),
            (size, Some(size), FileState::Done)
        );
    }
    // The big file was seen part-way (by the subscriber or the callback: two tasks
    // of their own, either of which a busy machine may leave unscheduled for a while),
    // and the overall count never went past the total.
    let calls = calls.lock().expect("lock");
    let part_way = |p: &Progress| p.files[2].done_bytes > 0 && p.files[2].done_bytes < BIG;
    assert!(
        seen.iter().any(part_way) || calls.iter().any(part_way),
        "progress is reported while the file is sent"
    );
    assert!(
        seen.iter()
            .chain(calls.iter())
            .all(|p| p.done_bytes <= BIG + 1024)
    );
    // The callback ran, and last with the final snapshot, before `wait` returned.
    assert!(!calls.is_empty());
    assert_eq!(calls.last(), Some(last));
}

/// VmRSS of this process, in bytes (Linux).
fn rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_big_file_is_streamed_from_disk() {
    const SIZE: u64 = 64 * MIB;
    let rig = Rig::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, jobs) = registered(&rig, dir.path(), &[("big.bin", SIZE)]).await;

    let before = rss();
    let peak = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = {
        let (peak, stop) = (peak.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                if let Some(now) = rss() {
                    peak.fetch_max(now, Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let started = Instant::now();
    let report = Transfers::new(Client::new(), options(3))
        .upload(jobs)
        .wait()
        .await
        .expect("the big file uploads");
    let elapsed = started.elapsed();
    stop.store(true, Ordering::SeqCst);
    sampler.join().expect("sampler");
    assert_eq!(report.bytes(), SIZE);
    rig.assert_all(&container, "ready").await;

    if let Some(before) = before {
        let peak = peak.load(Ordering::SeqCst).max(before);
        let growth = peak - before;
        eprintln!(
            "64 MiB upload in {elapsed:?}: VmRSS {:.1} MiB before, peak {:.1} MiB, growth {:.1} MiB",
            before as f64 / MIB as f64,
            peak as f64 / MIB as f64,
            growth as f64 / MIB as f64,
        );
        // The client and the emulator's storage share this process: both stream.
        assert!(
            growth < SIZE / 4,
            "VmRSS grew by {growth} bytes while a {SIZE}-byte file was uploaded"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_size_that_differs_from_the_registered_one_is_refused_before_sending() {
    let rig = Rig::start().await;
    let proxy = Proxy::start(rig.storage_addr(), vec![]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, mut jobs) =
        registered(&rig, dir.path(), &[("ok.bin", 2048), ("short.bin", 100)]).await;
    write_file(&jobs[1].local_path, 99);

    let error = Transfers::new(proxy.client(), options(3))
        .upload(jobs.clone())
        .wait()
        .await
        .expect_err("a short file is refused");
    match &error {
        TransferError::SizeMismatch {
            file,
            name,
            registered,
            actual,
        } => {
            assert_eq!(file, &jobs[1].local_path);
            assert_eq!(
                (name.as_str(), *registered, *actual),
                ("short.bin", 100, 99)
            );
        }
        other => panic!("expected SizeMismatch, got {other:?}"),
    }
    assert!(error.to_string().contains("short.bin"), "{error}");
    assert_eq!(
        proxy.connections(),
        0,
        "nothing was sent, not even the good file"
    );
    rig.assert_all(&container, "pending").await;

    // A missing file is refused the same way.
    jobs[1].local_path = dir.path().join("missing.bin");
    let error = Transfers::new(proxy.client(), options(3))
        .upload(jobs.clone())
        .wait()
        .await
        .expect_err("a missing file is refused");
    assert!(
        matches!(&error, TransferError::LocalFile { file, .. } if file.ends_with("missing.bin")),
        "{error:?}"
    );
    assert_eq!(proxy.connections(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modified_form_is_refused_with_the_explanation_and_not_retried() {
    let rig = Rig::start().await;
    let proxy = Proxy::start(rig.storage_addr(), vec![]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, mut jobs) = registered(&rig, dir.path(), &[("track.bin", 4096)]).await;
    let signature = jobs[0].upload_info.fields["X-Amz-Signature"].clone();
    jobs[0]
        .upload_info
        .fields
        .insert("key".into(), "someone-else/track.bin".into());

    let handle = Transfers::new(proxy.client(), options(5)).upload(jobs);
    let error = handle.wait().await.expect_err("storage refuses");
    let failures = error.failures();
    assert_eq!(failures.len(), 1, "{error:?}");
    match &failures[0] {
        TransferError::UploadRefused {
            file,
            reason,
            storage_message,
        } => {
            assert_eq!(file, "track.bin");
            assert_eq!(*reason, "the upload form was modified or has expired");
            assert_eq!(*reason, UPLOAD_REFUSED_REASON);
            assert!(storage_message.contains("key"), "{storage_message}");
        }
        other => panic!("expected UploadRefused, got {other:?}"),
    }
    let report = error.report().expect("report");
    assert_eq!(
        (report.files[0].attempts, report.files[0].state),
        (1, FileState::Failed)
    );
    assert_eq!(proxy.connections(), 1, "a 403 is not retried");
    let text = error.to_string();
    assert!(text.contains("read the container again"), "{text}");
    assert!(!text.contains(&signature), "{text}");
    assert!(!error.is_transient());
    rig.assert_all(&container, "pending").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_length_storage_refuses_is_a_400_not_retried() {
    let rig = Rig::start().await;
    let proxy = Proxy::start(rig.storage_addr(), vec![]).await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (_, mut jobs) = registered(&rig, dir.path(), &[("a.bin", 100)]).await;
    // The job claims (wrongly) the size of the local file: only storage can tell.
    write_file(&jobs[0].local_path, 99);
    jobs[0].size = 99;
    let error = Transfers::new(proxy.client(), options(5))
        .upload(jobs)
        .wait()
        .await
        .expect_err("storage refuses the length");
    match error.failures() {
        [
            TransferError::Rejected {
                file,
                status: 400,
                code,
                ..
            },
        ] => {
            assert_eq!((file.as_str(), code.as_str()), ("a.bin", "EntityTooSmall"));
        }
        other => panic!("expected a 400, got {other:?}"),
    }
    assert_eq!(proxy.connections(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_failures_are_retried_from_the_start_of_the_file() {
    let rig = Rig::start().await;
    // Attempt 1: a clean 503. Attempt 2: the connection breaks after 256 KiB of the
    // body. Attempt 3: passes.
    let proxy = Proxy::start(
        rig.storage_addr(),
        vec![Plan::Answer(503), Plan::CutRequestAfter(256 * 1024)],
    )
    .await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, jobs) = registered(&rig, dir.path(), &[("retried.bin", 2 * MIB)]).await;
    // Two observers (the subscriber and the callback, each a task of its own): on a
    // busy machine either may miss the short moments between the attempts.
    let calls = Arc::new(Mutex::new(Vec::<Progress>::new()));
    let sink = calls.clone();
    let observed = TransferOptions {
        on_progress: Some(Arc::new(move |p: &Progress| {
            sink.lock().expect("lock").push(p.clone());
        })),
        progress_interval: Duration::from_millis(1),
        ..options(5)
    };
    let handle = Transfers::new(proxy.client(), observed).upload(jobs);
    let seen = record(&handle);
    let report = handle.wait().await.expect("the third attempt succeeds");
    let seen = seen.await.expect("recorder");
    let calls = calls.lock().expect("lock").clone();
    assert_eq!(report.files[0].attempts, 3);
    assert_eq!(proxy.connections(), 3);
    assert!(
        restarted(&seen, 0) || restarted(&calls, 0),
        "the retry started again from byte 0"
    );
    assert!(
        seen.iter()
            .chain(&calls)
            .any(|p| p.files[0].state == FileState::Retrying)
    );
    rig.assert_all(&container, "ready").await;

    // When every attempt fails, the last failure is reported with the count.
    let proxy = Proxy::start(rig.storage_addr(), vec![Plan::Answer(500); 10]).await;
    let (_, jobs) = registered(&rig, dir.path(), &[("doomed.bin", 1000)]).await;
    let error = Transfers::new(proxy.client(), options(3))
        .upload(jobs)
        .wait()
        .await
        .expect_err("storage keeps failing");
    match error.failures() {
        [
            TransferError::Storage {
                file,
                status: 500,
                attempts: 3,
                storage_message,
                ..
            },
        ] => {
            assert_eq!(file, "doomed.bin");
            assert!(storage_message.contains("injected"), "{storage_message}");
        }
        other => panic!("expected Storage after 3 attempts, got {other:?}"),
    }
    assert!(error.is_transient());
    assert_eq!(proxy.connections(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fail_fast_stops_the_other_files() {
    let rig = Rig::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, mut jobs) =
        registered(&rig, dir.path(), &[("bad.bin", 10), ("later.bin", 10)]).await;
    jobs[0]
        .upload_info
        .fields
        .insert("X-Amz-Date".into(), "20000101T000000Z".into());
    let error = Transfers::new(
        Client::new(),
        TransferOptions {
            parallelism: 1,
            fail_fast: true,
            ..options(3)
        },
    )
    .upload(jobs)
    .wait()
    .await
    .expect_err("the first file fails");
    assert!(
        matches!(error.failures(), [TransferError::UploadRefused { .. }]),
        "{error:?}"
    );
    let states: Vec<FileState> = error
        .report()
        .expect("report")
        .files
        .iter()
        .map(|f| f.state)
        .collect();
    assert_eq!(states, [FileState::Failed, FileState::Skipped]);
    let statuses = rig.statuses(&container).await;
    assert!(statuses.iter().all(|(_, s)| s == "pending"), "{statuses:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_stops_a_big_upload_promptly() {
    let rig = Rig::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let (container, jobs) = registered(&rig, dir.path(), &[("huge.bin", 64 * MIB)]).await;
    let handle = Transfers::new(Client::new(), options(3)).upload(jobs);
    let mut progress = handle.subscribe();
    tokio::time::timeout(DEADLINE, progress.wait_for(|p| p.done_bytes > 0))
        .await
        .expect("the upload starts")
        .expect("progress");
    let canceled_at = Instant::now();
    handle.cancel();
    let error = handle.wait().await.expect_err("canceled");
    let took = canceled_at.elapsed();
    eprintln!("cancel took {took:?}");
    assert!(took < Duration::from_secs(2), "cancel took {took:?}");
    match &error {
        TransferError::Canceled { report } => {
            assert_eq!(report.files[0].state, FileState::Canceled);
            assert!(report.files[0].bytes < 64 * MIB);
        }
        other => panic!("expected Canceled, got {other:?}"),
    }
    let last = progress.borrow().clone();
    assert!(
        last.finished && last.files[0].state == FileState::Canceled,
        "{last:?}"
    );
    // The request was aborted: its body (which holds the progress sender) is dropped,
    // so the progress channel closes, without one more byte counted.
    tokio::time::timeout(DEADLINE, async {
        while progress.changed().await.is_ok() {}
    })
    .await
    .expect("the request body is dropped");
    assert_eq!(progress.borrow().done_bytes, last.done_bytes);
    rig.assert_all(&container, "pending").await;
}

#[test]
fn upload_jobs_come_from_the_registered_files_of_a_container() {
    let form = json!({"url": "http://storage.invalid/bucket", "fields": {"key": "k"}});
    let at = "2026-11-25T10:00:00.000Z";
    let who = "00000000-0000-4000-8000-00000000000f";
    let file = |id: &str, path: &str, size: u64, status: &str| {
        json!({"id": id, "type": "input", "status": status, "size": size, "path": path,
               "createdAt": at, "updatedAt": at, "creatorId": who, "metadata": {}})
    };
    let mut pending = file(
        "00000000-0000-4000-8000-000000000002",
        "rover.nmea",
        12,
        "pending",
    );
    pending["uploadInfo"] = form;
    let container: svc_core::cloud::Container = serde_json::from_value(json!({
        "id": "00000000-0000-4000-8000-000000000001",
        "status": "valid",
        "region": "eu-west-3",
        "expirationDate": at, "createdAt": at, "updatedAt": at,
        "creatorId": who, "organizationId": who, "metadata": {},
        "files": [pending, file("00000000-0000-4000-8000-000000000003", "done.csv", 5, "ready")]
    }))
    .expect("a container");
    let jobs = UploadJob::for_container(
        &container,
        [("rover.nmea".to_owned(), PathBuf::from("/data/rover.nmea"))],
    )
    .expect("jobs");
    assert_eq!(jobs.len(), 1);
    assert_eq!(jobs[0].size, 12, "the registered size");
    assert_eq!(jobs[0].container_path, "rover.nmea");
    assert_eq!(jobs[0].upload_info.url, "http://storage.invalid/bucket");

    for (path, why) in [("missing.nmea", "no file"), ("done.csv", "no upload form")] {
        let e = UploadJob::for_container(&container, [(path.to_owned(), PathBuf::from("x"))])
            .expect_err(path);
        assert!(
            matches!(e, TransferError::InvalidUploadForm { .. }),
            "{e:?}"
        );
        assert!(e.to_string().contains(path), "{e}");
        assert!(e.to_string().contains(why), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_clone_of_a_handle_gets_the_report_and_only_the_last_drop_cancels() {
    let rig = Rig::start().await;
    let dir = tempfile::tempdir().expect("temp dir");
    let transfers = Transfers::new(Client::new(), options(3));

    let (_, jobs) = registered(&rig, dir.path(), &[("shared.bin", 4 * MIB)]).await;
    let handle = transfers.upload(jobs);
    assert!(handle.wait_timeout(Duration::ZERO).await.is_none());
    let clone = handle.clone();
    let waiter = tokio::spawn(async move { clone.wait().await });
    let report = handle.wait().await.expect("uploaded");
    assert_eq!(waiter.await.expect("waiter").expect("the same"), report);
    assert!(handle.is_finished());
    assert_eq!(handle.wait().await.expect("again"), report);
    let at_once = handle.wait_timeout(Duration::ZERO).await;
    assert_eq!(at_once.expect("ended").expect("uploaded"), report);

    // Without `detach`, dropping the last clone cancels; with it, the upload goes on.
    for detached in [false, true] {
        let name = format!("dropped-{detached}.bin");
        let (_, jobs) = registered(&rig, dir.path(), &[(name.as_str(), 8 * MIB)]).await;
        let handle = transfers.upload(jobs);
        let mut progress = handle.subscribe();
        if detached {
            handle.detach();
        }
        drop(handle.clone());
        drop(handle);
        let last = tokio::time::timeout(DEADLINE, progress.wait_for(|p| p.finished))
            .await
            .expect("in time")
            .expect("a final snapshot")
            .clone();
        let expected = if detached {
            FileState::Done
        } else {
            FileState::Canceled
        };
        assert_eq!(last.files[0].state, expected, "{last:?}");
    }
}
