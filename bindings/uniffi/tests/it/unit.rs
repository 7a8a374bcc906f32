//! Unit sessions over HTTP, the serial bridge over TCP and a byte link implemented on
//! the foreign side; the unit's errors.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    async fn read(&self, max_bytes: Count) -> Result<Vec<u8>, LinkError> {
        use tokio::io::AsyncReadExt;
        let mut buffer = vec![0; usize::try_from(max_bytes.0).unwrap_or(1)];
        let n = self
            .read
            .lock()
            .await
            .read(&mut buffer)
            .await
            .map_err(|e| LinkError::Io {
                reason: e.to_string(),
            })?;
        if n == 0 {
            return Err(LinkError::Closed);
        }
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

/// A TCP link on a runtime of its own, as an app's I/O would be.
fn tcp_link(bridge: &str) -> (tokio::runtime::Runtime, Arc<TcpLink>) {
    let io = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let stream = io
        .block_on(tokio::net::TcpStream::connect(bridge))
        .expect("connect");
    let (read, write) = stream.into_split();
    let link = Arc::new(TcpLink {
        read: tokio::sync::Mutex::new(read),
        write: tokio::sync::Mutex::new(write),
    });
    (io, link)
}

/// A link as USB and BLE stacks behave: every third read gives nothing ("nothing yet",
/// as a USB serial driver's read every 16 ms or so), the others give pieces of 7 or 512
/// bytes of what arrived; writes arrive in pieces of at most `SerialOptions.maxWriteBytes`. Once
/// armed, a write sends a few bytes and the link is gone (unplugged mid-request).
struct UsbLike {
    inner: Arc<TcpLink>,
    pending: tokio::sync::Mutex<Vec<u8>>,
    reads: AtomicUsize,
    empty_reads: AtomicUsize,
    largest_write: AtomicUsize,
    unplug_at_next_write: AtomicBool,
    unplugged: AtomicBool,
}

impl UsbLike {
    fn new(inner: Arc<TcpLink>) -> Self {
        Self {
            inner,
            pending: tokio::sync::Mutex::new(Vec::new()),
            reads: AtomicUsize::new(0),
            empty_reads: AtomicUsize::new(0),
            largest_write: AtomicUsize::new(0),
            unplug_at_next_write: AtomicBool::new(false),
            unplugged: AtomicBool::new(false),
        }
    }
}

#[async_trait::async_trait]
impl ByteLink for UsbLike {
    async fn read(&self, max_bytes: Count) -> Result<Vec<u8>, LinkError> {
        if self.unplugged.load(Ordering::SeqCst) {
            return Err(LinkError::Closed);
        }
        let read = self.reads.fetch_add(1, Ordering::SeqCst);
        if read.is_multiple_of(3) {
            self.empty_reads.fetch_add(1, Ordering::SeqCst);
            return Ok(Vec::new());
        }
        let mut pending = self.pending.lock().await;
        if pending.is_empty() {
            *pending = self.inner.read(max_bytes).await?;
        }
        let piece = [1, 7, 512][read % 3];
        let n = pending
            .len()
            .min(piece)
            .min(usize::try_from(max_bytes.0).unwrap_or(1));
        Ok(pending.drain(..n).collect())
    }

    async fn write(&self, data: Vec<u8>) -> Result<(), LinkError> {
        self.largest_write.fetch_max(data.len(), Ordering::SeqCst);
        if self.unplugged.load(Ordering::SeqCst) {
            return Err(LinkError::Closed);
        }
        if self.unplug_at_next_write.load(Ordering::SeqCst) {
            // Part of the request leaves, then the cable is pulled.
            self.inner.write(data[..data.len().min(6)].to_vec()).await?;
            use tokio::io::AsyncWriteExt;
            let _ = self.inner.write.lock().await.shutdown().await;
            self.unplugged.store(true, Ordering::SeqCst);
            return Err(LinkError::Io {
                reason: "USB device detached".into(),
            });
        }
        self.inner.write(data).await
    }
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

    let (io, link) = tcp_link(&bridge);
    let _guard = io.enter();
    let unit = InsUnit::over_link(link, "test link".into(), None);
    assert_eq!(unit.link(), "test link");
    configure(&unit, "over a byte link");
    let tree = block_on(unit.export()).expect("export");
    assert!(tree.len() > 1000);
}

#[test]
fn a_byte_link_with_empty_and_fragmented_reads_and_small_writes() {
    let rig = rig(Duration::from_millis(200));
    let bridge = rig.info.device_serial_tcp.clone().expect("bridge");
    let (io, tcp) = tcp_link(&bridge);
    let _guard = io.enter();
    let link = Arc::new(UsbLike::new(tcp));
    let options = SerialOptions {
        answer_timeout: None,
        get_attempts: Count(3),
        max_write_bytes: Some(Count(20)),
    };
    let unit = InsUnit::over_link(link.clone(), "usb".into(), Some(options));
    configure(&unit, "through a usb-like link");
    assert!(block_on(unit.export()).expect("export").len() > 1000);
    assert!(link.empty_reads.load(Ordering::SeqCst) > 10);
    assert_eq!(link.largest_write.load(Ordering::SeqCst), 20);
}

#[test]
fn a_link_unplugged_mid_request_fails_it_clearly_and_applies_nothing() {
    let rig = rig(Duration::from_millis(200));
    let url = rig.info.device_url.clone().expect("device");
    let bridge = rig.info.device_serial_tcp.clone().expect("bridge");
    let before = InsUnit::http(url.clone()).expect("http");
    block_on(before.login(UserName::Setup, String::new())).expect("login");
    let label = block_on(before.node("oem/label".into())).expect("label");

    let (io, tcp) = tcp_link(&bridge);
    let _guard = io.enter();
    let link = Arc::new(UsbLike::new(tcp));
    let unit = InsUnit::over_link(link.clone(), "usb serial".into(), None);
    block_on(unit.login(UserName::Setup, String::new())).expect("login");
    link.unplug_at_next_write.store(true, Ordering::SeqCst);
    let (name, e) = kind(block_on(
        unit.write(r#"{"oem":{"label":"half-written"}}"#.into(), false),
    ));
    assert_eq!(name, "unreachable", "{e}");
    assert_eq!(e.kind(), ErrorKind::Unreachable);
    assert!(e.reason().contains("usb serial"), "{e}");
    assert_eq!(e.side().as_deref(), Some("unit"));
    // The next request fails at once: the link is closed.
    let (name, _) = kind(block_on(unit.info()));
    assert_eq!(name, "unreachable");
    // The unit discarded the cut frame.
    assert_eq!(
        block_on(before.node("oem/label".into())).expect("label"),
        label
    );
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
    assert_eq!(e.status(), Some(Count(422)));
    let nodes = e.node_errors();
    let mut paths: Vec<&str> = nodes.iter().map(|n| n.path.as_str()).collect();
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
    assert_eq!(e.status(), Some(Count(409)));
    assert_eq!(e.kind(), ErrorKind::Conflict);
    assert!(!e.retryable());
    assert_eq!(e.operation().as_deref(), Some("updateSettings"));
    assert!(matches!(e, SvcError::Conflict { .. }));
    block_on(a.unlock()).expect("unlock");

    // 401: a wrong password.
    let c = InsUnit::http(rig.info.device_url.clone().expect("device")).expect("c");
    let (name, e) = kind(block_on(c.login(UserName::Factory, "p4ss-xyz".into())));
    assert_eq!(name, "authentication", "{e}");
    assert_eq!(e.status(), Some(Count(401)));
    assert!(!format!("{e:?}").contains("p4ss-xyz"), "{e:?}");

    // Refused before sending: JSON that is not JSON.
    assert_eq!(
        kind(block_on(a.write("{".into(), false))).0,
        "invalid_input"
    );
}

/// The unit's output logs through a byte link the app implements (a USB-like link:
/// empty and fragmented reads, small writes), beside the session's requests.
#[test]
fn live_records_through_a_byte_link_beside_requests() {
    let rig = rig(Duration::from_millis(200));
    let url = rig.info.device_url.clone().expect("device");
    let bridge = rig.info.device_serial_tcp.clone().expect("bridge");
    let http = InsUnit::http(url).expect("http");
    block_on(http.login(UserName::Setup, String::new())).expect("login");
    block_on(http.write(
        r#"{"output":{"comA":{"messages":{"ekfNav":"10ms","imuData":"2ms"}}}}"#.into(),
        false,
    ))
    .expect("messages enabled");

    let (io, tcp) = tcp_link(&bridge);
    let _guard = io.enter();
    let link = Arc::new(UsbLike::new(tcp));
    let unit = InsUnit::over_link(
        link,
        "usb".into(),
        Some(SerialOptions {
            answer_timeout: None,
            get_attempts: Count(3),
            max_write_bytes: Some(Count(20)),
        }),
    );
    let stream = unit
        .subscribe(vec!["ekfNav".into()], Some(4096))
        .expect("subscribe");
    let mut stamps = Vec::new();
    while stamps.len() < 30 {
        match block_on(stream.next()).expect("next") {
            Some(LiveItem::Record { record }) => {
                assert_eq!(record.message, "ekfNav");
                let latitude = record
                    .values
                    .iter()
                    .find(|v| v.name == "latitude")
                    .and_then(|v| v.value)
                    .expect("latitude");
                assert!((48.8..48.9).contains(&latitude), "{latitude}");
                stamps.push(record.timestamp.expect("timestamp"));
                if stamps.len() % 10 == 0 {
                    assert!(
                        !block_on(unit.info())
                            .expect("info")
                            .serial_number
                            .is_empty()
                    );
                }
            }
            Some(LiveItem::Dropped { frames }) => panic!("{} dropped with room to spare", frames.0),
            None => panic!("the stream ended"),
        }
    }
    assert!(stamps.windows(2).all(|w| w[0] < w[1]), "{stamps:?}");
    stream.stop();
    assert_eq!(block_on(stream.next()).expect("after stop"), None);
    let stats = block_on(stream.stats()).expect("stats");
    assert!(stats.records.0 >= 30 && stats.dropped.0 == 0, "{stats:?}");
}
