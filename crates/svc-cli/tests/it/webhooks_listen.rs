//! `svc webhooks listen` under slow clients (header and body read timeouts, a bound on
//! connections, a file-descriptor limit) and with replayed deliveries.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use svc_core::WebhookSecret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const SECRET: &str = "whsec_4b1d0c7a9e3f25688d1e6b0a3c5f7e92d4a6c8e0f2b4d6a8c0e2f4a6b8d0c2e4";

/// A valid event body (the first valid vector), with its id replaced by `id`.
fn event(id: &str) -> String {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/data/webhook_vectors.json"
    ))
    .unwrap();
    let file: Value = serde_json::from_str(&text).unwrap();
    let vector = file["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["expected"] == "valid")
        .unwrap();
    let mut body: Value = serde_json::from_str(vector["body"].as_str().unwrap()).unwrap();
    body["id"] = Value::String(id.to_owned());
    body.to_string()
}

/// A running `svc webhooks listen`: its address, and what it printed so far. Killed
/// when dropped.
struct Listener {
    child: Child,
    url: String,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Listener {
    /// `svc webhooks listen --port 0 --secret SECRET EXTRA…`, with at most `files`
    /// open file descriptors when given.
    fn start(extra: &[&str], files: Option<u32>) -> Listener {
        let svc = env!("CARGO_BIN_EXE_svc");
        let mut args = vec!["webhooks", "listen", "--port", "0", "--secret", SECRET];
        args.extend_from_slice(extra);
        let mut command = match files {
            Some(limit) => {
                let mut command = Command::new("sh");
                command
                    .arg("-c")
                    .arg(format!("ulimit -n {limit} && exec \"$0\" \"$@\""))
                    .arg(svc)
                    .args(&args);
                command
            }
            None => {
                let mut command = Command::new(svc);
                command.args(&args);
                command
            }
        };
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("svc starts");
        let mut stderr_lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = stderr_lines
            .next()
            .expect("svc says where it listens")
            .unwrap();
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("an address in {first:?}"))
            .to_owned();
        let stderr = Arc::new(Mutex::new(vec![first]));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in stderr_lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let kept = stdout.clone();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Listener {
            child,
            url,
            stdout,
            stderr,
        }
    }

    fn address(&self) -> String {
        self.url.trim_start_matches("http://").to_owned()
    }

    /// The JSON lines printed so far.
    fn printed(&self) -> Vec<Value> {
        self.stdout
            .lock()
            .unwrap()
            .iter()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect()
    }

    /// Waits until `count` lines are printed (or panics after `deadline`).
    async fn wait_for_lines(&self, count: usize, deadline: Duration) -> Vec<Value> {
        let end = Instant::now() + deadline;
        loop {
            let printed = self.printed();
            if printed.len() >= count {
                return printed;
            }
            assert!(
                Instant::now() < end,
                "{count} lines expected within {deadline:?}, got {printed:?}; stderr: {:?}",
                self.stderr.lock().unwrap()
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Sends `body` signed with the secret, now; the answer's status.
    async fn deliver(&self, http: &reqwest::Client, body: &str) -> reqwest::Result<u16> {
        let now = svc_core::webhook::unix_now();
        let signature = svc_core::webhook::sign(&WebhookSecret::new(SECRET), now, body.as_bytes());
        let answer = http
            .post(&self.url)
            .header("Svc-Timestamp", now.to_string())
            .header("Svc-Signature", signature)
            .body(body.to_owned())
            .send()
            .await?;
        Ok(answer.status().as_u16())
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads from `stream` until the server closes it (end of stream or reset), or panics
/// after `deadline`; gives what was read. While waiting, sends a byte of `trickle`
/// every 100 ms when given (a client that never finishes its request head).
async fn until_closed(
    stream: &mut TcpStream,
    trickle: Option<&[u8]>,
    deadline: Duration,
) -> Vec<u8> {
    let end = tokio::time::Instant::now() + deadline;
    let mut received = Vec::new();
    let mut next_byte = 0;
    loop {
        let mut buffer = [0_u8; 1024];
        let read = tokio::time::timeout(Duration::from_millis(100), stream.read(&mut buffer)).await;
        match read {
            Ok(Ok(0) | Err(_)) => return received,
            Ok(Ok(n)) => received.extend_from_slice(&buffer[..n]),
            Err(_) => {
                if let Some(bytes) = trickle {
                    let byte = bytes[next_byte % bytes.len()];
                    next_byte += 1;
                    if stream.write_all(&[byte]).await.is_err() {
                        return received;
                    }
                }
            }
        }
        assert!(
            tokio::time::Instant::now() < end,
            "the connection is still open after {deadline:?}"
        );
    }
}

/// A request head that never ends: a header line without end.
const ENDLESS_HEAD: &[u8] = b"POST / HTTP/1.1\r\nHost: localhost\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/// Connections that send their request head a byte at a time and never finish it,
/// connecting again whenever the receiver closes them, until `stop`.
fn trickle(address: String, connections: usize, stop: Arc<AtomicBool>) -> Arc<AtomicUsize> {
    let opened = Arc::new(AtomicUsize::new(0));
    for _ in 0..connections {
        let address = address.clone();
        let stop = stop.clone();
        let opened = opened.clone();
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(mut stream) = TcpStream::connect(&address).await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                opened.fetch_add(1, Ordering::Relaxed);
                for byte in ENDLESS_HEAD.iter().cycle() {
                    if stop.load(Ordering::Relaxed) || stream.write_all(&[*byte]).await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });
    }
    opened
}

/// Waits until `count` connections were opened (a deadline of 20 s).
async fn wait_opened(opened: &AtomicUsize, count: usize) {
    let end = Instant::now() + Duration::from_secs(20);
    while opened.load(Ordering::Relaxed) < count {
        assert!(Instant::now() < end, "the slow clients could not connect");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The receiver limited to 64 open files (as a process at its descriptor limit), with
/// a hundred clients trickling request heads: a valid delivery still gets through —
/// slow heads are cut after the header timeout and only 16 connections are served at
/// once. Without them, the slow clients held every descriptor and the delivery timed
/// out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_gets_through_a_hundred_slow_clients() {
    let listener = Listener::start(
        &["--header-timeout-ms", "1000", "--max-connections", "16"],
        Some(64),
    );
    let stop = Arc::new(AtomicBool::new(false));
    let opened = trickle(listener.address(), 100, stop.clone());
    wait_opened(&opened, 100).await;

    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let id = "0b6a3c1e-5d7f-4a2b-9c8d-1e2f3a4b5c6d";
    let status = listener.deliver(&http, &event(id)).await;
    stop.store(true, Ordering::Relaxed);
    assert_eq!(
        status.ok(),
        Some(200),
        "stderr: {:?}",
        listener.stderr.lock().unwrap()
    );
    let printed = listener.wait_for_lines(1, Duration::from_secs(10)).await;
    assert_eq!(printed[0]["id"], id);
    assert!(printed[0].get("duplicate").is_none(), "{:?}", printed[0]);
}

/// Connections whose head is whole and whose body comes a byte every 100 ms, never
/// stalling long enough for the idle timeout, connecting again whenever the receiver
/// closes them, until `stop`.
fn trickle_bodies(address: String, connections: usize, stop: Arc<AtomicBool>) -> Arc<AtomicUsize> {
    let opened = Arc::new(AtomicUsize::new(0));
    for _ in 0..connections {
        let address = address.clone();
        let stop = stop.clone();
        let opened = opened.clone();
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(mut stream) = TcpStream::connect(&address).await else {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                };
                let head = b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n";
                if stream.write_all(head).await.is_err() {
                    continue;
                }
                opened.fetch_add(1, Ordering::Relaxed);
                while !stop.load(Ordering::Relaxed) {
                    if stream.write_all(b" ").await.is_err() {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        });
    }
    opened
}

/// 256 clients (every connection the receiver serves at once) trickling request bodies
/// without ever stalling: each request is cut when its whole-request deadline passes
/// (408), so the receiver outlives them and a signed delivery waiting behind them gets
/// its 200. Without the deadline, the trickled bodies held every connection forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickled_bodies_end_at_the_whole_request_deadline() {
    let listener = Listener::start(
        &[
            "--header-timeout-ms",
            "1000",
            "--body-timeout-ms",
            "1000",
            "--request-timeout-ms",
            "3000",
        ],
        None,
    );
    let stop = Arc::new(AtomicBool::new(false));
    let opened = trickle_bodies(listener.address(), 256, stop.clone());
    wait_opened(&opened, 256).await;

    // One of them, watched: 408 after the deadline, then closed.
    let started = Instant::now();
    let mut watched = TcpStream::connect(listener.address()).await.unwrap();
    watched
        .write_all(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100000\r\n\r\n")
        .await
        .unwrap();
    let answer = until_closed(&mut watched, Some(b" "), Duration::from_secs(20)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive whole"), "{answer}");
    assert!(
        started.elapsed() >= Duration::from_millis(1900),
        "{:?}",
        started.elapsed()
    );

    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let id = "7e0a3c1e-5d7f-4a2b-9c8d-1e2f3a4b5c6d";
    let status = listener.deliver(&http, &event(id)).await;
    stop.store(true, Ordering::Relaxed);
    assert_eq!(
        status.ok(),
        Some(200),
        "stderr: {:?}",
        listener.stderr.lock().unwrap()
    );
    let printed = listener.wait_for_lines(1, Duration::from_secs(10)).await;
    assert_eq!(printed[0]["id"], id);
}

/// A head still trickling when the header timeout passes ends with the connection; a
/// body that stops arriving is answered 408 and its connection closed; an idle
/// kept-alive connection is closed too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_heads_and_stalled_bodies_are_cut() {
    let listener = Listener::start(
        &["--header-timeout-ms", "500", "--body-timeout-ms", "500"],
        None,
    );
    let address = listener.address();

    let started = Instant::now();
    let mut slow = TcpStream::connect(&address).await.unwrap();
    until_closed(&mut slow, Some(ENDLESS_HEAD), Duration::from_secs(10)).await;
    assert!(
        started.elapsed() >= Duration::from_millis(400),
        "closed after the timeout, not at once: {:?}",
        started.elapsed()
    );

    // Nothing sent at all: closed likewise.
    let mut silent = TcpStream::connect(&address).await.unwrap();
    until_closed(&mut silent, None, Duration::from_secs(10)).await;

    let mut stalled = TcpStream::connect(&address).await.unwrap();
    stalled
        .write_all(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{\"id\":")
        .await
        .unwrap();
    let answer = until_closed(&mut stalled, None, Duration::from_secs(10)).await;
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(listener.printed().is_empty());
}

/// The same delivery received again (the service retrying, or a replay) is printed
/// again with `"duplicate": true`, and noted on stderr; other events are not.
#[tokio::test]
async fn a_replayed_delivery_is_printed_as_a_duplicate() {
    let listener = Listener::start(&[], None);
    let http = reqwest::Client::new();
    let first = "6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b";
    let second = "7b2e1d3f-4c5e-4f60-9bac-1d2e3f4a5b6c";
    // A refused delivery of the first id does not count as received.
    let now = svc_core::webhook::unix_now();
    let refused = http
        .post(&listener.url)
        .header("Svc-Timestamp", now.to_string())
        .header("Svc-Signature", "0".repeat(64))
        .body(event(first))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 400);
    for id in [first, second, first, first] {
        assert_eq!(listener.deliver(&http, &event(id)).await.unwrap(), 200);
    }
    let printed = listener.wait_for_lines(4, Duration::from_secs(10)).await;
    let seen: Vec<(&str, bool)> = printed
        .iter()
        .map(|line| {
            (
                line["id"].as_str().unwrap(),
                line.get("duplicate") == Some(&Value::Bool(true)),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (first, false),
            (second, false),
            (first, true),
            (first, true)
        ]
    );
    // Printed as received otherwise: the same event, the field added.
    let mut replayed = printed[2].clone();
    replayed.as_object_mut().unwrap().remove("duplicate");
    assert_eq!(replayed, printed[0]);
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        let notes = listener
            .stderr
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(first) && l.contains("received before"))
            .count();
        if notes == 2 {
            break;
        }
        assert!(Instant::now() < end, "two notes on stderr, {notes} seen");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
