//! `Transfers::upload_to_container` and `Transfers::download_outputs`: the service
//! asked what to transfer, then the transfer; a failed lookup is a
//! `TransferError::Cloud` carrying the service's error, and nothing is transferred.

use std::path::PathBuf;
use std::time::Duration;

use super::{container_request, file, processing_request, wait_for_processing};
use crate::common::{client_for, emulator};
use svc_core::ErrorKind;
use svc_core::cloud::{ContainerFileStatus, ProcessingStatus};
use svc_core::transfer::{FileState, TransferError, TransferOptions, Transfers};
use svc_emulator::EmulatorConfig;
use svc_test_support::nmea::nmea_track;
use uuid::Uuid;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_go_to_their_container_and_outputs_come_back() {
    // Processings of 2 s: the listing asked right after the start is surely early.
    let emu = emulator(EmulatorConfig {
        processing_time: Duration::from_secs(2),
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());
    let transfers = Transfers::with_options(TransferOptions::default()).expect("transfers");
    let dir = tempfile::tempdir().expect("temp dir");
    let rover = dir.path().join("rover.nmea");
    std::fs::write(&rover, nmea_track(60)).expect("written");
    let size = i64::try_from(std::fs::metadata(&rover).expect("size").len()).expect("small");

    let mut request = container_request(None);
    request.files = vec![file("gnss/rover.nmea", size)];
    let container = client.create_container(request).await.expect("created");

    // A path the container does not hold: refused before anything is sent.
    let e = transfers
        .upload_to_container(
            &client,
            container.id,
            [("gnss/other.nmea".to_owned(), rover.clone())],
        )
        .await
        .expect_err("not registered");
    assert!(
        matches!(e, TransferError::InvalidUploadForm { .. }),
        "{e:?}"
    );
    // An unknown container: the service's 404, and nothing transferred.
    let unknown = Uuid::new_v4();
    let e = transfers
        .upload_to_container(
            &client,
            unknown,
            [("gnss/rover.nmea".to_owned(), rover.clone())],
        )
        .await
        .expect_err("no such container");
    let TransferError::Cloud { source } = &e else {
        panic!("a lookup error, got {e:?}");
    };
    assert_eq!(source.status(), Some(404));
    assert_eq!(
        e.cloud_error().and_then(|c| c.operation()),
        Some("getContainer")
    );
    assert_eq!(e.kind(), ErrorKind::NotFound);
    assert_eq!(e.side(), Some(svc_core::Side::Service));
    assert!(!e.is_transient());
    assert!(e.to_string().contains("nothing was transferred"), "{e}");
    let still = client.get_container(container.id).await.expect("read");
    assert_eq!(still.files[0].status, ContainerFileStatus::Pending);

    let report = transfers
        .upload_to_container(
            &client,
            container.id,
            [("gnss/rover.nmea".to_owned(), rover)],
        )
        .await
        .expect("uploaded");
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].state, FileState::Done);
    let uploaded = client.get_container(container.id).await.expect("read");
    assert_eq!(uploaded.files[0].status, ContainerFileStatus::Ready);

    let started = client
        .start_processing(processing_request(container.id))
        .await
        .expect("started");
    let folder: PathBuf = dir.path().join("out");
    // Before the end: the service's 409 for the listing, nothing written.
    let early = transfers
        .download_outputs(&client, started.id, folder.clone())
        .await
        .expect_err("the processing has not ended");
    assert_eq!(
        early.cloud_error().and_then(|c| c.status()),
        Some(409),
        "{early}"
    );
    assert!(!folder.exists(), "nothing written");
    wait_for_processing(&client, started.id, Duration::from_secs(30), |s| {
        *s == ProcessingStatus::Processed
    })
    .await;
    let report = transfers
        .download_outputs(&client, started.id, folder.clone())
        .await
        .expect("downloaded");
    let outputs = client
        .list_processing_outputs(started.id)
        .await
        .expect("outputs");
    assert!(!outputs.is_empty());
    assert_eq!(report.files.len(), outputs.len());
    for output in &outputs {
        assert!(folder.join(&output.path).is_file(), "{}", output.path);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_upload_stops_at_the_storage() {
    // A slow uplink: 256 KiB/s, so that 1 MiB is still in flight after 200 ms.
    let emu = emulator(EmulatorConfig {
        upload_bytes_per_second: 256 * 1024,
        ..EmulatorConfig::default()
    })
    .await;
    let client = client_for(emu.info());
    let dir = tempfile::tempdir().expect("temp dir");
    let local = dir.path().join("imu.bin");
    std::fs::write(&local, vec![7u8; 1024 * 1024]).expect("written");
    let mut request = container_request(None);
    request.files = vec![file("imu.bin", 1024 * 1024)];
    let container = client.create_container(request).await.expect("created");
    let transfers = Transfers::with_options(TransferOptions::default()).expect("transfers");

    let upload = transfers.upload_to_container(
        &client,
        container.id,
        [("imu.bin".to_owned(), local.clone())],
    );
    let cut = tokio::time::timeout(Duration::from_millis(200), upload).await;
    assert!(cut.is_err(), "still uploading after 200 ms: {cut:?}");
    // Past the time the whole file would have taken: the storage never got it.
    tokio::time::sleep(Duration::from_millis(4500)).await;
    let after = client.get_container(container.id).await.expect("read");
    assert_eq!(after.files[0].status, ContainerFileStatus::Pending);

    // The same upload, left to run, ends with the file stored.
    let report = transfers
        .upload_to_container(&client, container.id, [("imu.bin".to_owned(), local)])
        .await
        .expect("uploaded");
    assert!(
        report.elapsed >= Duration::from_secs(3),
        "{:?}",
        report.elapsed
    );
    let after = client.get_container(container.id).await.expect("read");
    assert_eq!(after.files[0].status, ContainerFileStatus::Ready);
}
