//! The emulated unit's data logger and its FTP server: logins per user and right,
//! refusals, and a session recorded while logging that grows and decodes into
//! records following the emulated trajectory.

use std::time::Duration;

use suppaftp::FtpError;
use suppaftp::tokio::AsyncFtpStream;
use suppaftp::types::FileType;
use svc_emulator::device::outputs::trajectory_at;
use svc_emulator::device::{DeviceConfig, DeviceEmulator};
use svc_logs::{LogReader, Record};
use tokio::io::AsyncReadExt;

async fn unit() -> DeviceEmulator {
    DeviceEmulator::start(DeviceConfig {
        pty: false,
        ..DeviceConfig::default()
    })
    .await
    .expect("the unit starts")
}

fn post(unit: &DeviceEmulator, path: &str, body: &str) -> u16 {
    let (status, _) = unit
        .handle("POST", path, "", body.as_bytes())
        .expect("an answer");
    status
}

async fn login(
    unit: &DeviceEmulator,
    user: &str,
    password: &str,
) -> Result<AsyncFtpStream, FtpError> {
    let mut ftp = AsyncFtpStream::connect(unit.ftp_address()).await?;
    ftp.login(user, password).await?;
    ftp.transfer_type(FileType::Binary).await?;
    Ok(ftp)
}

fn code(e: &FtpError) -> u32 {
    match e {
        FtpError::UnexpectedResponse(r) => r.status.code(),
        other => panic!("not a refusal: {other}"),
    }
}

async fn size_of(ftp: &mut AsyncFtpStream, path: &str) -> u64 {
    ftp.size(path).await.expect("SIZE") as u64
}

async fn retr(ftp: &mut AsyncFtpStream, path: &str) -> Result<Vec<u8>, FtpError> {
    let mut stream = ftp.retr_as_stream(path).await?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.expect("read");
    stream.finish().await?;
    Ok(bytes)
}

#[tokio::test]
async fn logins_follow_the_users_and_their_ftp_right() {
    let unit = unit().await;
    assert_eq!(post(&unit, "/api/v1/dataLogger/start", ""), 200);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(post(&unit, "/api/v1/dataLogger/stop", ""), 200);

    // Users without a password log in with an empty one; factory with its own.
    for (user, password) in [
        ("viewer", ""),
        ("operator", ""),
        ("setup", ""),
        ("factory", "factory"),
    ] {
        let mut ftp = login(&unit, user, password).await.expect(user);
        let listed = ftp.nlst(Some("/")).await.expect("NLST");
        assert_eq!(listed, vec!["session".to_owned()], "{user}");
        let _ = ftp.quit().await;
    }
    // Wrong password, unknown user, anonymous: 530.
    for (user, password) in [
        ("factory", "nope"),
        ("viewer", "x"),
        ("anonymous", "me@example.com"),
        ("ftp", ""),
    ] {
        let e = login(&unit, user, password).await.err().expect("refused");
        assert_eq!(code(&e), 530, "{user}");
    }
    // A password changed through the REST API applies.
    let (status, body) = unit
        .handle(
            "POST",
            "/api/v1/user/login",
            "",
            br#"{"user":"setup","password":""}"#,
        )
        .expect("login");
    assert_eq!(status, 200);
    let token: serde_json::Value = serde_json::from_slice(&body).expect("json");
    let token = token["token"].as_str().expect("token");
    let (status, _) = unit
        .handle(
            "POST",
            "/api/v1/user/password",
            &format!("auth={token}"),
            br#"{"user":"viewer","password":"s3cret"}"#,
        )
        .expect("answer");
    assert_eq!(status, 200);
    assert_eq!(
        code(&login(&unit, "viewer", "").await.err().expect("refused")),
        530
    );
    login(&unit, "viewer", "s3cret")
        .await
        .expect("new password");
}

#[tokio::test]
async fn viewer_reads_operator_deletes_nobody_writes() {
    let unit = unit().await;
    assert_eq!(post(&unit, "/api/v1/dataLogger/start", ""), 200);
    tokio::time::sleep(Duration::from_millis(200)).await;

    let mut viewer = login(&unit, "viewer", "").await.expect("viewer");
    let mut operator = login(&unit, "operator", "").await.expect("operator");
    // The session being written cannot be deleted, even with the right.
    let e = operator
        .rm("/session/session.001")
        .await
        .expect_err("refused");
    assert_eq!(code(&e), 550);
    assert_eq!(post(&unit, "/api/v1/dataLogger/stop", ""), 200);

    let size = size_of(&mut viewer, "/session/session.001").await;
    let bytes = retr(&mut viewer, "/session/session.001")
        .await
        .expect("viewer downloads");
    assert_eq!(bytes.len() as u64, size);
    assert!(size > 0);
    // Missing file: 550.
    let e = retr(&mut viewer, "/session/session.999")
        .await
        .expect_err("missing");
    assert_eq!(code(&e), 550);
    // Viewer cannot delete; nobody uploads, renames or makes folders.
    let e = viewer
        .rm("/session/session.001")
        .await
        .expect_err("viewer refused");
    assert_eq!(code(&e), 550);
    let e = operator.mkdir("/other").await.expect_err("mkdir refused");
    assert_eq!(code(&e), 550);
    let e = operator
        .rename("/session/session.001", "/session/x")
        .await
        .expect_err("rename refused");
    assert!(matches!(code(&e), 550 | 553 | 503), "{e}");
    let mut data: &[u8] = b"upload";
    let e = operator
        .put_file("/session/up.bin", &mut data)
        .await
        .expect_err("upload refused");
    assert!(matches!(code(&e), 550 | 553 | 451), "{e}");
    // The operator deletes the session.
    operator
        .rm("/session/session.001")
        .await
        .expect("operator deletes");
    operator
        .rmdir("/session")
        .await
        .expect("operator removes the folder");
    assert!(unit.logger_sessions().is_empty());
}

#[tokio::test]
async fn a_session_grows_while_logging_and_follows_the_trajectory() {
    let unit = unit().await;
    assert_eq!(post(&unit, "/api/v1/dataLogger/start", ""), 200);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut ftp = login(&unit, "viewer", "").await.expect("viewer");
    let first = size_of(&mut ftp, "/session/session.001").await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let second = size_of(&mut ftp, "/session/session.001").await;
    assert!(first > 0 && second > first, "{first} then {second}");
    // The status counts the real bytes.
    let (_, status) = unit
        .handle("GET", "/api/v1/dataLogger", "", b"")
        .expect("status");
    let status: serde_json::Value = serde_json::from_slice(&status).expect("json");
    assert_eq!(status["state"], "logging");
    assert!(status["usedBytes"].as_u64().expect("usedBytes") >= second);

    let bytes = retr(&mut ftp, "/session/session.001")
        .await
        .expect("download a running session");
    assert!(bytes.len() as u64 >= second);
    let mut reader = LogReader::new(bytes.as_slice());
    let mut navs = Vec::new();
    let mut kinds = std::collections::BTreeSet::new();
    while let Some(record) = reader.next_record().expect("decodes") {
        kinds.insert(record.kind().name());
        if let Record::EkfNav(nav) = record {
            navs.push(nav);
        }
    }
    assert_eq!(reader.stats().bad_crc, 0);
    assert!(
        kinds.contains("imuShort") && kinds.contains("ekfEuler") && kinds.contains("utcTime"),
        "{kinds:?}"
    );
    assert!(navs.len() > 30, "{} ekfNav", navs.len());
    // On the trajectory as the unit's clock (µs from power-on) places it.
    for nav in &navs {
        let t = f64::from(nav.timestamp) / 1e6;
        let (position, _, _) = trajectory_at(t);
        assert!((nav.position[0] - position[0]).abs() < 1e-9, "lat at {t}");
        assert!((nav.position[1] - position[1]).abs() < 1e-9, "lon at {t}");
    }
    // 10 ms apart as the default settings ask.
    assert_eq!(navs[1].timestamp - navs[0].timestamp, 10_000);
}

#[tokio::test]
async fn the_json_line_names_each_units_ftp_server() {
    let emulator = svc_emulator::Emulator::start(svc_emulator::EmulatorConfig {
        device: Some(DeviceConfig {
            pty: false,
            ..DeviceConfig::default()
        }),
        devices: 2,
        ..svc_emulator::EmulatorConfig::default()
    })
    .await
    .expect("the emulator starts");
    let line = serde_json::to_value(emulator.line()).expect("json");
    let devices = emulator.devices();
    assert_eq!(line["device_ftp"], devices[0].ftp_address());
    for (entry, unit) in line["devices"]
        .as_array()
        .expect("devices")
        .iter()
        .zip(devices)
    {
        assert_eq!(entry["device_ftp"], unit.ftp_address());
    }
    assert_ne!(devices[0].ftp_address(), devices[1].ftp_address());
    // Each unit's FTP server serves its own sessions.
    assert_eq!(post(&devices[1], "/api/v1/dataLogger/start", ""), 200);
    let mut first = login(&devices[0], "viewer", "").await.expect("viewer");
    assert!(first.nlst(Some("/")).await.expect("NLST").is_empty());
    let mut second = login(&devices[1], "viewer", "").await.expect("viewer");
    assert_eq!(
        second.nlst(Some("/")).await.expect("NLST"),
        vec!["session".to_owned()]
    );
}
