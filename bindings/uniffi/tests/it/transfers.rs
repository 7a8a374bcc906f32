//! Uploads from what an app is given instead of a path: a file descriptor, named by its
//! `/proc/self/fd` path (Android's `content://` URIs open as a `ParcelFileDescriptor`;
//! `docs/mobile.md`, "Files from URIs").

use std::collections::HashMap;
use std::os::fd::AsRawFd;
use std::time::Duration;

use futures::executor::block_on;
use svc_ffi::*;

use super::{config, rig};

#[test]
fn a_file_known_only_by_its_descriptor_is_uploaded() {
    let rig = rig(Duration::from_millis(200));
    let client = CloudClient::create(config(&rig.info)).expect("client");
    let dir = tempfile::tempdir().expect("temporary folder");
    let named = dir.path().join("rover.nmea");
    let content =
        b"$GPGGA,120000.00,4851.0000,N,00221.0000,E,4,12,0.8,35.0,M,47.0,M,1.0,0000*4B\r\n"
            .repeat(500);
    std::fs::write(&named, &content).expect("written");
    let file = std::fs::File::open(&named).expect("opened");
    // The name is gone: only the descriptor is left, as with a document provider's.
    std::fs::remove_file(&named).expect("removed");
    let descriptor = format!("/proc/self/fd/{}", file.as_raw_fd());

    let size = i64::try_from(content.len()).expect("small");
    let container = block_on(client.create_container(CreateContainerRequest {
        region: ContainerRegion::EuWest3,
        metadata: None,
        files: vec![CreateContainerFile {
            path: "gnss/rover.nmea".into(),
            size: LongCount(size),
            file_type: ContainerFileType::Input,
            metadata: None,
        }],
    }))
    .expect("container");
    let transfers = Transfers::new(TransferOptions::default(), None, None).expect("transfers");
    let report = block_on(transfers.upload_to_container(
        client.clone(),
        container.id.clone(),
        HashMap::from([("gnss/rover.nmea".to_owned(), descriptor)]),
    ))
    .expect("uploaded");
    assert_eq!(report.files.len(), 1);
    assert_eq!(report.files[0].bytes, LongCount(size));
    let uploaded = block_on(client.get_container(container.id)).expect("read");
    assert_eq!(uploaded.files[0].status, ContainerFileStatus::Ready);
    drop(file);
}
