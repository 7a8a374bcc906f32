//! The data logger's files over FTP (`svc_core::unit::LoggerFiles`) against the
//! emulated unit: list, download (resumed after a dropped data connection, size
//! checked, `.part` renamed), delete with the right and refused without.

use std::time::Duration;

use ins_device_api::Password;
use svc_core::error::ErrorKind;
use svc_core::unit::{LoggerFiles, Unit};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};

async fn unit_with_a_session(millis: u64) -> DeviceEmulator {
    let device = DeviceEmulator::start(DeviceConfig {
        pty: false,
        ..DeviceConfig::default()
    })
    .await
    .expect("the unit starts");
    let post = |path: &str| device.handle("POST", path, "", b"").expect("answer").0;
    assert_eq!(post("/api/v1/dataLogger/start"), 200);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    assert_eq!(post("/api/v1/dataLogger/stop"), 200);
    device
}

fn files(device: &DeviceEmulator, user: &str, password: &str) -> LoggerFiles {
    LoggerFiles::new(device.ftp_address(), user, Password::new(password))
}

#[tokio::test]
async fn lists_and_downloads_a_session() {
    let device = unit_with_a_session(300).await;
    let ftp = files(&device, "viewer", "");
    let sessions = ftp.sessions().await.expect("sessions");
    assert_eq!(sessions.len(), 1);
    let session = &sessions[0];
    assert_eq!(session.name, "session");
    assert_eq!(session.files[0].name, "session.001");
    assert!(session.size() > 0);

    let dest = tempfile::tempdir().expect("tempdir");
    let done = ftp
        .download("session", dest.path())
        .await
        .expect("download");
    assert_eq!(done.bytes, session.size());
    assert_eq!(done.resumed, 0);
    let path = dest.path().join("session/session.001");
    let local = std::fs::read(&path).expect("downloaded file");
    let remote =
        std::fs::read(device.logger_root().join("session/session.001")).expect("unit file");
    assert_eq!(local, remote);
    assert!(!dest.path().join("session/session.001.part").exists());

    // One file by name; a missing one is NotFound.
    let other = tempfile::tempdir().expect("tempdir");
    ftp.download("session/session.001", other.path())
        .await
        .expect("one file");
    let e = ftp
        .download("nope", other.path())
        .await
        .expect_err("missing");
    assert_eq!(e.kind(), ErrorKind::NotFound);
    let e = ftp
        .download("../etc", other.path())
        .await
        .expect_err("invalid");
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
}

#[tokio::test]
async fn a_dropped_download_is_resumed() {
    let device = unit_with_a_session(500).await;
    let size = device.logger_sessions()[0].1[0].size;
    assert!(size > 8_000, "{size}");
    device.cut_next_ftp_download(4_000);
    let ftp = files(&device, "viewer", "");
    let dest = tempfile::tempdir().expect("tempdir");
    let done = ftp
        .download("session", dest.path())
        .await
        .expect("download");
    assert_eq!(done.resumed, 1);
    assert_eq!(done.bytes, size);
    let local = std::fs::read(dest.path().join("session/session.001")).expect("file");
    let remote = std::fs::read(device.logger_root().join("session/session.001")).expect("unit");
    assert_eq!(local, remote);
}

#[tokio::test]
async fn a_part_file_left_behind_is_resumed_or_started_again() {
    let device = unit_with_a_session(300).await;
    let remote = std::fs::read(device.logger_root().join("session/session.001")).expect("unit");
    let dest = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(dest.path().join("session")).expect("dir");
    let part = dest.path().join("session/session.001.part");
    std::fs::write(&part, &remote[..remote.len() / 2]).expect("part");
    let ftp = files(&device, "viewer", "");
    ftp.download("session", dest.path()).await.expect("resumed");
    assert_eq!(
        std::fs::read(dest.path().join("session/session.001")).expect("file"),
        remote
    );

    // A `.part` longer than the file is not its beginning: downloaded again.
    std::fs::write(&part, vec![0u8; remote.len() + 10]).expect("part");
    ftp.download("session", dest.path()).await.expect("again");
    assert_eq!(
        std::fs::read(dest.path().join("session/session.001")).expect("file"),
        remote
    );
}

#[tokio::test]
async fn delete_needs_the_write_right() {
    let device = unit_with_a_session(100).await;
    let viewer = files(&device, "viewer", "");
    let e = viewer
        .delete("session")
        .await
        .expect_err("viewer lacks FTP WRITE");
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    assert_eq!(e.code(), Some(550));
    assert_eq!(device.logger_sessions().len(), 1);

    let operator = files(&device, "operator", "");
    operator.delete("session").await.expect("operator deletes");
    assert!(device.logger_sessions().is_empty());
    let e = operator.delete("session").await.expect_err("gone");
    assert_eq!(e.kind(), ErrorKind::NotFound);
}

#[tokio::test]
async fn wrong_password_and_unreachable_are_typed_and_the_password_stays_secret() {
    let device = unit_with_a_session(50).await;
    let ftp = files(&device, "factory", "hunter2-secret");
    let e = ftp.sessions().await.expect_err("wrong password");
    assert_eq!(e.kind(), ErrorKind::Authentication);
    assert_eq!(e.code(), Some(530));
    assert!(!format!("{e} {e:?} {ftp:?}").contains("hunter2"));

    let unit = Unit::http(device.url()).expect("unit");
    let good = unit.logger_files(device.ftp_address(), "factory", Password::new("factory"));
    assert_eq!(good.sessions().await.expect("factory lists").len(), 1);

    // Nothing listens there any more.
    let address = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").to_string()
    };
    let e = LoggerFiles::new(address, "viewer", Password::new(""))
        .sessions()
        .await
        .expect_err("unreachable");
    assert_eq!(e.kind(), ErrorKind::Unreachable);
}

#[tokio::test]
async fn the_unit_says_which_session_is_recording() {
    let device = unit_with_a_session(50).await;
    let unit = Unit::http(device.url()).expect("unit");
    let files = unit.logger_files(device.ftp_address(), "viewer", Password::new(""));
    let sessions = unit.logger_sessions(&files).await.expect("sessions");
    assert_eq!(sessions[0].recording, Some(false));
    unit.logger_start().await.expect("start");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let sessions = unit.logger_sessions(&files).await.expect("sessions");
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].recording, Some(true));
    // The running session grows and can be downloaded up to its current size.
    let dest = tempfile::tempdir().expect("tempdir");
    let done = files
        .download("session", dest.path())
        .await
        .expect("download");
    assert!(done.bytes >= sessions[0].size());
    let e = unit
        .logger_files(device.ftp_address(), "operator", Password::new(""))
        .delete("session")
        .await
        .expect_err("the running session is kept");
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);
    unit.logger_stop().await.expect("stop");
}

/// The surveyor's path, offline: the unit records a session, the SDK downloads it over
/// FTP, and the cloud processes it as it is (its navigation positions, dated by its
/// UTC records) into a trajectory on the unit's path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downloaded_session_is_processed_into_a_trajectory() {
    use svc_core::workflow::{ProcessingJob, Workflow, WorkflowOptions};

    let device = unit_with_a_session(1_500).await;
    let dest = tempfile::tempdir().expect("tempdir");
    files(&device, "viewer", "")
        .download("session", dest.path())
        .await
        .expect("download");
    let session: Vec<std::path::PathBuf> = std::fs::read_dir(dest.path().join("session"))
        .expect("the session folder")
        .map(|entry| entry.expect("an entry").path())
        .collect();
    assert!(!session.is_empty());

    let cloud = crate::common::emulator(svc_emulator::EmulatorConfig {
        processing_time: Duration::from_millis(300),
        ..svc_emulator::EmulatorConfig::default()
    })
    .await;
    let client = crate::common::client_for(cloud.info());
    let out = tempfile::tempdir().expect("tempdir");
    let mut job = ProcessingJob::new(session, serde_json::Map::new());
    job.output_folder = Some(out.path().to_path_buf());
    let outcome = Workflow::new(client)
        .run(job, WorkflowOptions::default())
        .await
        .expect("the workflow runs");
    assert!(outcome.succeeded(), "{:?}", outcome.processing);
    let csv = std::fs::read_to_string(out.path().join("trajectory.csv")).expect("a trajectory");
    let rows: Vec<&str> = csv.lines().skip(1).collect();
    assert!(rows.len() >= 10, "{} rows", rows.len());
    for row in &rows {
        let fields: Vec<&str> = row.split(',').collect();
        let lat: f64 = fields[1].parse().expect("a latitude");
        let lon: f64 = fields[2].parse().expect("a longitude");
        // Within the unit's 50 m circle around its origin.
        assert!(
            (lat - 48.8566).abs() < 0.001 && (lon - 2.3522).abs() < 0.001,
            "{row}"
        );
    }
}

/// `download_then_delete` deletes exactly what was downloaded and checked: one file of
/// a session leaves the others; a session that gained a file or changed since the
/// download is left whole (Conflict), its downloaded files kept.
#[tokio::test]
async fn download_then_delete_deletes_only_what_was_downloaded() {
    let device = unit_with_a_session(100).await;
    let root = device.logger_root();
    let first = std::fs::read(root.join("session/session.001")).expect("unit file");
    std::fs::write(root.join("session/session.002"), &first[..first.len() / 2]).expect("file");
    let operator = files(&device, "operator", "");
    let dest = tempfile::tempdir().expect("tempdir");

    let done = operator
        .download_then_delete("session/session.002", dest.path())
        .await
        .expect("one file");
    assert!(done.deleted);
    assert_eq!(done.bytes, (first.len() / 2) as u64);
    let left = device.logger_sessions();
    assert_eq!(left.len(), 1, "the session stays");
    let names: Vec<&str> = left[0].1.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["session.001"]);

    // Viewer: downloaded, then refused, nothing deleted, the download kept.
    let viewer = files(&device, "viewer", "");
    let other = tempfile::tempdir().expect("tempdir");
    let e = viewer
        .download_then_delete("session", other.path())
        .await
        .expect_err("viewer lacks FTP WRITE");
    assert_eq!(e.kind(), ErrorKind::PermissionDenied, "{e}");
    assert_eq!(device.logger_sessions()[0].1.len(), 1);
    assert_eq!(
        std::fs::read(other.path().join("session/session.001")).expect("kept"),
        first
    );

    // The whole session, then its folder.
    let done = operator
        .download_then_delete("session", dest.path())
        .await
        .expect("session");
    assert!(done.deleted);
    assert_eq!(done.files.len(), 1);
    assert!(device.logger_sessions().is_empty());
    assert_eq!(
        std::fs::read(dest.path().join("session/session.001")).expect("downloaded"),
        first
    );
}

/// The session being recorded grows while it is downloaded: it is downloaded, and
/// nothing of it is deleted.
#[tokio::test]
async fn a_session_still_recording_is_downloaded_and_kept() {
    let device = unit_with_a_session(50).await;
    let unit = Unit::http(device.url()).expect("unit");
    unit.logger_start().await.expect("start");
    tokio::time::sleep(Duration::from_millis(50)).await;
    let operator = files(&device, "operator", "");
    let dest = tempfile::tempdir().expect("tempdir");
    let e = operator
        .download_then_delete("session", dest.path())
        .await
        .expect_err("kept");
    // Grown since the download (Conflict), or refused by the unit as the session it
    // writes (PermissionDenied): either way nothing is deleted.
    assert!(
        matches!(e.kind(), ErrorKind::Conflict | ErrorKind::PermissionDenied),
        "{e}"
    );
    unit.logger_stop().await.expect("stop");
    // Every file downloaded is still on the unit.
    let downloaded = std::fs::read_dir(dest.path().join("session")).expect("downloaded");
    let mut count = 0;
    for entry in downloaded {
        let name = entry.expect("entry").file_name();
        assert!(
            device.logger_root().join("session").join(&name).exists(),
            "{name:?}"
        );
        count += 1;
    }
    assert!(count >= 1);
}

/// A session's logger files act as its user (with its password), as `viewer` when it
/// is not logged in, at the unit's host by default; a serial unit needs the address.
#[tokio::test]
async fn a_sessions_logger_files_act_as_its_user() {
    let device = unit_with_a_session(50).await;
    let unit = Unit::http(device.url()).expect("unit");
    let anonymous = unit
        .session_logger_files(Some(device.ftp_address()))
        .expect("files");
    assert!(format!("{anonymous:?}").contains("\"viewer\""));
    assert_eq!(anonymous.sessions().await.expect("viewer lists").len(), 1);
    let e = anonymous.delete("session").await.expect_err("viewer");
    assert_eq!(e.kind(), ErrorKind::PermissionDenied);

    unit.login("operator".into(), Password::new(""))
        .await
        .expect("login");
    let operator = unit
        .session_logger_files(Some(device.ftp_address()))
        .expect("files");
    operator.delete("session").await.expect("operator deletes");
    assert!(device.logger_sessions().is_empty());

    // Port 21 of the unit's host by default; a serial link has no host.
    let default = unit.session_logger_files(None).expect("files");
    let host = device.ftp_address().rsplit_once(':').expect("host:port").0;
    assert_eq!(default.address(), format!("{host}:21"));
    let serial = Unit::serial_tcp(device.serial_tcp()).await.expect("bridge");
    let e = serial.session_logger_files(None).expect_err("no address");
    assert_eq!(e.kind(), ErrorKind::InvalidInput);
}
