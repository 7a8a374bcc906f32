//! Unit sessions over HTTP, the serial bridge over TCP and a byte link implemented on
//! the foreign side; the unit's errors.

use std::sync::Arc;
use std::time::Duration;

use super::{kind, rig};
use futures::executor::block_on;
use svc_ffi::*;

/// A ByteLink implemented in Rust over a TCP socket, as an app implements one over USB.
struct TcpLink {
    read: tokio::sync::Mutex<tokio::net::tcp::OwnedReadHalf>,
    write: tokio::sync::Mutex<tokio::net::tcp::OwnedWriteHalf>,
}

#[async_trait::async_trait]
impl ByteLink for TcpLink {
    async fn read(&self, max_bytes: u32) -> Result<Vec<u8>, LinkError> {
        use tokio::io::AsyncReadExt;
        let mut buffer = vec![0; max_bytes as usize];
        let n = self
            .read
            .lock()
            .await
            .read(&mut buffer)
            .await
            .map_err(|e| LinkError::Io {
                reason: e.to_string(),
            })?;
        buffer.truncate(n);
        Ok(buffer)
    }

    async fn write(&self, data: Vec<u8>) -> Result<(), LinkError> {
        use tokio::io::AsyncWriteExt;
        self.write
            .lock()
            .await
            .write_all(&data)
            .await
            .map_err(|e| LinkError::Io {
                reason: e.to_string(),
            })
    }
}

fn configure(unit: &InsUnit, label: &str) {
    block_on(unit.login(UserName::Setup, String::new())).expect("login");
    let info = block_on(unit.info()).expect("info");
    assert!(!info.serial_number.is_empty());
    let outcome = block_on(unit.write(format!(r#"{{"oem":{{"label":"{label}"}}}}"#).into(), false))
        .expect("write");
    assert!(!outcome.need_reboot);
    assert_eq!(
        block_on(unit.node("oem/label".into())).expect("node"),
        format!("\"{label}\"")
    );
    let tree: serde_json::Value =
        serde_json::from_str(&block_on(unit.settings()).expect("settings")).expect("json");
    assert_eq!(tree["oem"]["label"], label);
}

#[test]
fn a_unit_over_http_serial_tcp_and_a_byte_link() {
    let rig = rig(Duration::from_millis(200));
    let url = rig.info.device_url.clone().expect("device");
    let bridge = rig.info.device_serial_tcp.clone().expect("bridge");

    configure(&InsUnit::http(url.clone()).expect("http"), "over http");
    configure(
        &block_on(InsUnit::serial_tcp(bridge.clone(), None)).expect("tcp"),
        "over tcp",
    );

    // The link's socket lives on a runtime of its own, as an app's I/O would.
    let io = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let stream = io
        .block_on(tokio::net::TcpStream::connect(&bridge))
        .expect("connect");
    let (read, write) = stream.into_split();
    let link = Arc::new(TcpLink {
        read: tokio::sync::Mutex::new(read),
        write: tokio::sync::Mutex::new(write),
    });
    let _guard = io.enter();
    let unit = InsUnit::over_link(link, "test link".into(), None);
    assert_eq!(unit.link(), "test link");
    configure(&unit, "over a byte link");
    let tree = block_on(unit.export()).expect("export");
    assert!(tree.len() > 1000);
}

#[test]
fn unit_errors_carry_status_and_node_errors() {
    let rig = rig(Duration::from_millis(200));
    let url = rig.info.device_url.clone().expect("device");
    let a = InsUnit::http(url.clone()).expect("a");
    let b = InsUnit::http(url).expect("b");
    block_on(a.login(UserName::Setup, String::new())).expect("login a");
    block_on(b.login(UserName::Setup, String::new())).expect("login b");

    // 422: every invalid node, nothing applied.
    let patch = r#"{"output":{"comA":{"messages":{"imuShort":"10ms","noSuchMessage":"10ms"}},"comB":{"messages":{"ekfNav":"7ms"}}}}"#;
    let (name, e) = kind(block_on(a.write(patch.into(), false)));
    assert_eq!(name, "invalid_input", "{e}");
    assert_eq!(e.status(), Some(422));
    let mut paths: Vec<&str> = e.node_errors().iter().map(|n| n.path.as_str()).collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "output/comA/messages/noSuchMessage",
            "output/comB/messages/ekfNav"
        ]
    );

    // 409: the lock of another session.
    block_on(a.lock()).expect("lock");
    let (name, e) = kind(block_on(b.write(r#"{"oem":{"label":"b"}}"#.into(), false)));
    assert_eq!(name, "conflict", "{e}");
    assert_eq!(e.status(), Some(409));
    assert!(matches!(e, SvcError::Conflict { .. }));
    block_on(a.unlock()).expect("unlock");

    // 401: a wrong password.
    let c = InsUnit::http(rig.info.device_url.clone().expect("device")).expect("c");
    let (name, e) = kind(block_on(c.login(UserName::Factory, "p4ss-xyz".into())));
    assert_eq!(name, "authentication", "{e}");
    assert_eq!(e.status(), Some(401));
    assert!(!format!("{e:?}").contains("p4ss-xyz"), "{e:?}");

    // Refused before sending: JSON that is not JSON.
    assert_eq!(
        kind(block_on(a.write("{".into(), false))).0,
        "invalid_input"
    );
}
