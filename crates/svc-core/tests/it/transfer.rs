//! End to end: `svc_core::transfer` against the in-process emulator's real object
//! storage (which checks every form field, their order, the signature, the expiry, the
//! exact length, `file` last and `Content-Length`).
//!
//! Files are registered with plain reqwest calls to the emulator's cloud API (this
//! module does not depend on `svc_core::cloud`). Deterministic failures come from a
//! small TCP proxy written here, which the client uses as its HTTP proxy (so the `Host`
//! of signed addresses is unchanged) and which answers, cuts or stalls connection
//! number N as planned; each request opens its own connection (no idle pool). The
//! emulator's own fault injection (`FaultConfig`) gives a random soak on top.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use reqwest::{Client, Method, StatusCode};
use serde_json::{Value, json};
use svc_cloud_api::cloud::types::{OutputFile, UploadInfo};
use svc_core::retry::RetryPolicy;
use svc_core::transfer::{
    FileState, Progress, TransferError, TransferOptions, Transfers, UPLOAD_REFUSED_REASON,
    UploadJob,
};
use svc_emulator::{Emulator, EmulatorConfig, EmulatorInfo, FaultConfig};
use svc_test_support::nmea::nmea_track;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::{TcpListener, TcpStream};

// ------------------------------------------------------------------------------ rig

/// How long any wait in these tests may last before the test fails.
const DEADLINE: Duration = Duration::from_secs(30);
const MIB: u64 = 1024 * 1024;

/// Quick retries for tests.
fn quick_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(40),
        max_elapsed: Duration::from_secs(60),
    }
}

fn options(max_attempts: u32) -> TransferOptions {
    TransferOptions {
        retry: quick_retry(max_attempts),
        ..TransferOptions::default()
    }
}

fn emulator_config(faults: FaultConfig) -> EmulatorConfig {
    EmulatorConfig {
        processing_time: Duration::from_millis(300),
        device: None,
        faults,
        ..EmulatorConfig::default()
    }
}

/// A started emulator, a token, and cloud calls that ride out injected faults.
struct Rig {
    emu: Emulator,
    info: EmulatorInfo,
    http: Client,
    token: String,
}

impl Rig {
    async fn start() -> Self {
        Self::with(emulator_config(FaultConfig::default())).await
    }

    async fn with(config: EmulatorConfig) -> Self {
        let emu = Emulator::start(config).await.expect("the emulator starts");
        let info = emu.info().clone();
        let http = Client::builder()
            .timeout(Duration::from_secs(20))
            .build()
            .expect("http client");
        let mut rig = Self {
            emu,
            info,
            http,
            token: String::new(),
        };
        rig.token = rig.fetch_token().await;
        rig
    }

    /// Sends a request until it gets an answer that is not a 5xx, a broken connection
    /// or a cut body (the emulator may inject those); returns the attempt number too.
    async fn send(
        &self,
        what: &str,
        build: impl Fn() -> reqwest::RequestBuilder,
    ) -> (StatusCode, Value, u32) {
        for attempt in 1..=40 {
            let response = match build().send().await {
                Ok(r) => r,
                Err(_) => continue,
            };
            let status = response.status();
            let Ok(text) = response.text().await else {
                continue;
            };
            if status.is_server_error() {
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            return (
                status,
                serde_json::from_str(&text).unwrap_or(Value::Null),
                attempt,
            );
        }
        panic!("{what}: no answer after 40 attempts");
    }

    async fn fetch_token(&self) -> String {
        let auth = &self.info.auth_url;
        let (_, discovery, _) = self
            .send("discovery", || {
                self.http
                    .get(format!("{auth}/.well-known/openid-configuration"))
            })
            .await;
        let endpoint = discovery["token_endpoint"]
            .as_str()
            .expect("token_endpoint")
            .to_owned();
        let form = [
            ("grant_type", "password"),
            ("client_id", "api-key"),
            ("username", self.info.api_key.as_str()),
            ("password", self.info.api_secret.as_str()),
            ("scope", "openid"),
        ];
        let (status, token, _) = self
            .send("token", || self.http.post(&endpoint).form(&form))
            .await;
        assert_eq!(status, StatusCode::OK, "{token}");
        token["access_token"]
            .as_str()
            .expect("access_token")
            .to_owned()
    }

    async fn api(
        &self,
        method: Method,
        path: &str,
        body: Option<&Value>,
    ) -> (StatusCode, Value, u32) {
        let url = format!("{}{path}", self.info.base_url);
        self.send(path, || {
            let request = self
                .http
                .request(method.clone(), &url)
                .bearer_auth(&self.token);
            match body {
                Some(b) => request.json(b),
                None => request,
            }
        })
        .await
    }

    async fn ok(&self, method: Method, path: &str, body: Option<&Value>) -> Value {
        let (status, json, _) = self.api(method, path, body).await;
        assert!(status.is_success(), "{path}: {status} {json}");
        json
    }

    /// Registers `files` (path, size) in a new container: its id and each file's form.
    async fn register(&self, files: &[(&str, u64)]) -> (String, Vec<UploadInfo>) {
        let body = json!({
            "region": "eu-west-3",
            "files": files.iter().map(|(path, size)| json!({"path": path, "type": "input", "size": size})).collect::<Vec<_>>(),
        });
        let org = self.info.organization_id;
        let container = self
            .ok(
                Method::POST,
                &format!("/api/v2/organizations/{org}/containers"),
                Some(&body),
            )
            .await;
        let id = container["id"].as_str().expect("container id").to_owned();
        let mut forms = Vec::new();
        for (path, _) in files {
            let file = container["files"]
                .as_array()
                .expect("files")
                .iter()
                .find(|f| f["path"] == *path)
                .expect("registered file");
            forms.push(serde_json::from_value(file["uploadInfo"].clone()).expect("uploadInfo"));
        }
        (id, forms)
    }

    /// Each file's status in the container, by path.
    async fn statuses(&self, container: &str) -> Vec<(String, String)> {
        let c = self
            .ok(
                Method::GET,
                &format!("/api/v2/containers/{container}"),
                None,
            )
            .await;
        c["files"]
            .as_array()
            .expect("files")
            .iter()
            .map(|f| {
                (
                    f["path"].as_str().unwrap_or_default().to_owned(),
                    f["status"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect()
    }

    async fn assert_all(&self, container: &str, status: &str) {
        for (path, s) in self.statuses(container).await {
            assert_eq!(s, status, "{path}");
        }
    }

    /// Registers and uploads an NMEA track, runs a processing to its end: its id and
    /// its outputs.
    async fn processed(&self, fixes: usize) -> (uuid::Uuid, Vec<OutputFile>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let track = nmea_track(fixes);
        let local = dir.path().join("track.nmea");
        std::fs::write(&local, &track).expect("write track");
        let (container, forms) = self
            .register(&[("rover/track.nmea", track.len() as u64)])
            .await;
        let jobs = vec![UploadJob {
            local_path: local,
            container_path: "rover/track.nmea".into(),
            size: track.len() as u64,
            upload_info: forms[0].clone(),
        }];
        Transfers::new(Client::new(), options(20))
            .upload(jobs)
            .wait()
            .await
            .expect("the track uploads");
        self.assert_all(&container, "ready").await;

        let org = self.info.organization_id;
        let body = json!({"containerId": container, "processingJson": {}});
        let path = format!("/api/v2/organizations/{org}/processings");
        let (status, started, attempt) = self.api(Method::POST, &path, Some(&body)).await;
        let id = if status.is_success() {
            started["id"].as_str().expect("id").to_owned()
        } else {
            // An answer lost to an injected cut: the processing started all the same.
            assert!(
                status == StatusCode::CONFLICT && attempt > 1,
                "{status} {started}"
            );
            let list = self
                .ok(Method::GET, &format!("{path}?page=0&perPage=100"), None)
                .await;
            list["processings"]
                .as_array()
                .expect("a processing list")
                .iter()
                .find(|p| p["containerId"] == container.as_str())
                .and_then(|p| p["id"].as_str())
                .expect("the started processing")
                .to_owned()
        };
        let deadline = Instant::now() + DEADLINE;
        loop {
            let p = self
                .ok(Method::GET, &format!("/api/v2/processings/{id}"), None)
                .await;
            if p["status"] == "processed" {
                assert_eq!(p["processingResult"], "succeeded", "{p}");
                break;
            }
            assert!(Instant::now() < deadline, "processing not done: {p}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let outputs = self
            .ok(
                Method::GET,
                &format!("/api/v2/processings/{id}/output"),
                None,
            )
            .await;
        let outputs: Vec<OutputFile> = serde_json::from_value(outputs).expect("outputs");
        assert!(!outputs.is_empty());
        (id.parse().expect("uuid"), outputs)
    }

    fn storage_addr(&self) -> SocketAddr {
        self.info
            .storage_url
            .trim_start_matches("http://")
            .parse()
            .expect("storage address")
    }
}

/// Writes `size` pseudo-random bytes, 1 MiB at a time (never the whole file in memory).
fn write_file(path: &Path, size: u64) {
    use std::io::Write as _;
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15 ^ size;
    let mut chunk = vec![0_u8; MIB as usize];
    let mut left = size;
    while left > 0 {
        for b in chunk.iter_mut() {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            *b = (state >> 56) as u8;
        }
        let n = left.min(MIB) as usize;
        file.write_all(&chunk[..n]).expect("write");
        left -= n as u64;
    }
    file.flush().expect("flush");
}

/// Local files of the given sizes, registered in one container: (container, jobs).
async fn registered(rig: &Rig, dir: &Path, sizes: &[(&str, u64)]) -> (String, Vec<UploadJob>) {
    let (container, forms) = rig.register(sizes).await;
    let jobs = sizes
        .iter()
        .zip(forms)
        .map(|((name, size), upload_info)| {
            let local_path = dir.join(name.replace('/', "_"));
            write_file(&local_path, *size);
            UploadJob {
                local_path,
                container_path: (*name).to_owned(),
                size: *size,
                upload_info,
            }
        })
        .collect();
    (container, jobs)
}

/// Every snapshot seen by a subscriber, until the transfer finished.
fn record(handle: &svc_core::transfer::TransferHandle) -> tokio::task::JoinHandle<Vec<Progress>> {
    let mut receiver = handle.subscribe();
    tokio::spawn(async move {
        let mut seen = vec![receiver.borrow_and_update().clone()];
        while receiver.changed().await.is_ok() {
            let p = receiver.borrow_and_update().clone();
            let finished = p.finished;
            seen.push(p);
            if finished {
                break;
            }
        }
        seen
    })
}

/// Whether file `index` went back to 0 bytes after having moved some (a retry from the
/// start of the file).
fn restarted(seen: &[Progress], index: usize) -> bool {
    let mut moved = false;
    for p in seen {
        let f = &p.files[index];
        if f.done_bytes > 0 {
            moved = true;
        } else if moved && f.attempts > 1 {
            return true;
        }
    }
    false
}

fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = walk(dir)
        .into_iter()
        .map(|p| p.strip_prefix(dir).unwrap_or(&p).display().to_string())
        .collect();
    names.sort();
    names
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(read) = std::fs::read_dir(dir) {
        for entry in read.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(walk(&path));
            } else {
                out.push(path);
            }
        }
    }
    out
}

// ------------------------------------------------------------------------------ proxy

/// What the proxy does with one connection.
#[derive(Clone, Copy, Debug)]
enum Plan {
    /// Forwards everything.
    Pass,
    /// Forwards this many bytes of the request, then closes both sides.
    CutRequestAfter(usize),
    /// Forwards this many bytes of the answer, then closes both sides.
    CutAnswerAfter(usize),
    /// Forwards this many bytes of the answer, then holds the connection open, silent.
    StallAnswerAfter(usize),
    /// Reads the whole request (up to its `Content-Length`), answers this status with
    /// an S3 error document, and closes.
    Answer(u16),
}

/// An HTTP proxy (the client sends absolute-form requests) in front of the storage.
struct Proxy {
    url: String,
    connections: Arc<AtomicUsize>,
    task: tokio::task::JoinHandle<()>,
}

impl Proxy {
    /// Connection N follows `plans[N]`; later ones pass.
    async fn start(target: SocketAddr, plans: Vec<Plan>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let connections = Arc::new(AtomicUsize::new(0));
        let counter = connections.clone();
        let task = tokio::spawn(async move {
            while let Ok((inbound, _)) = listener.accept().await {
                let n = counter.fetch_add(1, Ordering::SeqCst);
                let plan = plans.get(n).copied().unwrap_or(Plan::Pass);
                tokio::spawn(serve(inbound, target, plan));
            }
        });
        Self {
            url,
            connections,
            task,
        }
    }

    /// A client that goes through the proxy, one connection per request.
    fn client(&self) -> Client {
        Client::builder()
            .proxy(reqwest::Proxy::http(&self.url).expect("proxy"))
            .pool_max_idle_per_host(0)
            .build()
            .expect("client")
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut inbound: TcpStream, target: SocketAddr, plan: Plan) {
    if let Plan::Answer(status) = plan {
        answer(&mut inbound, status).await;
        return;
    }
    let Ok(mut outbound) = TcpStream::connect(target).await else {
        return;
    };
    let (mut client_read, mut client_write) = inbound.split();
    let (mut server_read, mut server_write) = outbound.split();
    let (up_limit, down_limit, stall) = match plan {
        Plan::CutRequestAfter(n) => (n, usize::MAX, false),
        Plan::CutAnswerAfter(n) => (usize::MAX, n, false),
        Plan::StallAnswerAfter(n) => (usize::MAX, n, true),
        Plan::Pass | Plan::Answer(_) => (usize::MAX, usize::MAX, false),
    };
    let up = copy_at_most(&mut client_read, &mut server_write, up_limit);
    let down = copy_at_most(&mut server_read, &mut client_write, down_limit);
    tokio::pin!(up, down);
    let mut up_done = false;
    loop {
        tokio::select! {
            cut = &mut up, if !up_done => {
                if cut { break; }
                up_done = true;
            }
            cut = &mut down => {
                if cut && stall {
                    std::future::pending::<()>().await;
                }
                break;
            }
        }
    }
    // Dropping both sides closes the connections.
}

/// Copies until the end of `from`, or until `limit` bytes: `true` when cut at the limit.
async fn copy_at_most(
    from: &mut (impl tokio::io::AsyncRead + Unpin),
    to: &mut (impl tokio::io::AsyncWrite + Unpin),
    limit: usize,
) -> bool {
    let mut buf = vec![0_u8; 16 * 1024];
    let mut copied = 0;
    loop {
        let room = (limit - copied).min(buf.len());
        if room == 0 {
            return true;
        }
        match from.read(&mut buf[..room]).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return false;
            }
            Ok(n) => {
                if to.write_all(&buf[..n]).await.is_err() {
                    return false;
                }
                copied += n;
            }
        }
    }
}

/// Reads a whole request, then answers `status`.
async fn answer(inbound: &mut TcpStream, status: u16) {
    let mut request = Vec::new();
    let mut buf = vec![0_u8; 16 * 1024];
    let header_end = loop {
        if let Some(i) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        match inbound.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    };
    let head = String::from_utf8_lossy(&request[..header_end]).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    let mut body = request.len() - header_end;
    while body < length {
        match inbound.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => body += n,
        }
    }
    let document = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>InternalError</Code><Message>injected by the test proxy</Message></Error>";
    let response = format!(
        "HTTP/1.1 {status} Injected\r\ncontent-type: application/xml\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{document}",
        document.len()
    );
    let _ = inbound.write_all(response.as_bytes()).await;
    let _ = inbound.shutdown().await;
}

// ------------------------------------------------------------------------------ uploads

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

// ------------------------------------------------------------------------------ downloads

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

// ------------------------------------------------------------------------------ soak

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
