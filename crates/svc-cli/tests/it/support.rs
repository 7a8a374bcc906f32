//! Running `svc` and an emulated unit for the tests.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};

/// Every password the tests use contains this marker; no output of `svc` may.
pub const SECRET_MARKER: &str = "S3cr3t";

/// The factory password of every test unit.
pub const FACTORY_PASSWORD: &str = "factory-S3cr3t-pw";

/// How long one `svc` run may take.
const RUN_DEADLINE: Duration = Duration::from_secs(60);

/// An emulated unit on its own runtime (the tests themselves are synchronous).
pub struct TestUnit {
    dev: Option<DeviceEmulator>,
    runtime: tokio::runtime::Runtime,
    factory: String,
}

impl TestUnit {
    /// A unit with the given passwords, a 300 ms reboot and a pty.
    pub fn start(passwords: &[(&str, &str)]) -> TestUnit {
        let passwords: BTreeMap<String, String> = passwords
            .iter()
            .map(|(u, p)| ((*u).to_owned(), (*p).to_owned()))
            .collect();
        TestUnit::with(DeviceConfig {
            passwords,
            factory_password: FACTORY_PASSWORD.to_owned(),
            reboot_time: Duration::from_millis(300),
            ..DeviceConfig::default()
        })
    }

    pub fn with(config: DeviceConfig) -> TestUnit {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let factory = config
            .passwords
            .get("factory")
            .unwrap_or(&config.factory_password)
            .clone();
        let dev = runtime
            .block_on(DeviceEmulator::start(config))
            .expect("the emulated unit starts");
        TestUnit {
            dev: Some(dev),
            runtime,
            factory,
        }
    }

    fn dev(&self) -> &DeviceEmulator {
        self.dev.as_ref().expect("running")
    }

    pub fn url(&self) -> String {
        self.dev().url().to_owned()
    }

    pub fn serial_tcp(&self) -> String {
        self.dev().serial_tcp().to_owned()
    }

    pub fn serial_path(&self) -> String {
        let path = self.dev().serial_path().expect("the unit has a pty");
        path.to_str().unwrap().to_owned()
    }

    /// A request straight to the emulator's core as `factory` (not through `svc`).
    pub fn raw(&self, method: &str, path: &str) -> (u16, Value) {
        self.raw_with(method, path, b"")
    }

    /// A POST of `body` straight to the emulator's core as `factory`.
    pub fn raw_post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.raw_with("POST", path, body.to_string().as_bytes())
    }

    fn raw_with(&self, method: &str, path: &str, payload: &[u8]) -> (u16, Value) {
        let login = json!({"user": "factory", "password": self.factory}).to_string();
        let (status, body) = self
            .dev()
            .handle("POST", "/api/v1/user/login", "", login.as_bytes())
            .expect("the unit is not rebooting");
        assert_eq!(status, 200, "factory login");
        let token: Value = serde_json::from_slice(&body).unwrap();
        let token = token["token"].as_str().unwrap();
        let (status, body) = self
            .dev()
            .handle(method, path, &format!("auth={token}"), payload)
            .expect("the unit is not rebooting");
        (status, serde_json::from_slice(&body).unwrap())
    }

    /// Whether another session holds the settings lock: a check-only write as
    /// `factory` (which changes nothing) is refused with 409.
    pub fn locked(&self) -> bool {
        let login = json!({"user": "factory", "password": self.factory}).to_string();
        let (_, body) = self
            .dev()
            .handle("POST", "/api/v1/user/login", "", login.as_bytes())
            .expect("the unit is not rebooting");
        let token: Value = serde_json::from_slice(&body).unwrap();
        let token = token["token"].as_str().unwrap();
        let (status, _) = self
            .dev()
            .handle(
                "POST",
                "/api/v1/settings",
                &format!("auth={token}&checkOnly=true"),
                b"{}",
            )
            .expect("the unit is not rebooting");
        status == 409
    }

    /// How many settings writes the unit applied.
    pub fn applied_writes(&self) -> u64 {
        self.dev().applied_writes()
    }

    /// The unit's whole settings tree, as it holds it.
    pub fn tree(&self) -> Value {
        let (status, tree) = self.raw("GET", "/api/v1/settings");
        assert_eq!(status, 200);
        tree
    }

    pub fn is_rebooting(&self) -> bool {
        self.dev().is_rebooting()
    }

    /// How many times the unit rebooted.
    pub fn reboots(&self) -> u64 {
        self.dev().reboots()
    }

    /// How many saves the unit answered with success.
    pub fn saves(&self) -> u64 {
        self.dev().saves()
    }
}

impl Drop for TestUnit {
    fn drop(&mut self) {
        if let Some(dev) = self.dev.take() {
            self.runtime.block_on(dev.shutdown());
        }
    }
}

/// What one `svc` run did.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Asserts success and parses stdout as JSON.
    pub fn json(&self) -> Value {
        assert_eq!(self.code, 0, "{self:#?}");
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is JSON: {e}: {self:#?}"))
    }

    pub fn ok(&self) -> &Run {
        assert_eq!(self.code, 0, "{self:#?}");
        self
    }

    pub fn fails_with(&self, code: i32) -> &Run {
        assert_eq!(self.code, code, "{self:#?}");
        assert!(
            !self.stderr.trim().is_empty(),
            "an error is explained: {self:#?}"
        );
        self
    }
}

/// A `svc` command with a clean environment (no `SVC_DEVICE_*` of the caller).
pub fn command(args: &[&str]) -> Command {
    // Each run keeps what units owe in a folder of its own (the test units share
    // serial numbers); a test that reruns a command passes its own `SVC_STATE_DIR`.
    static RUNS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let state = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("svc-state-{}-{run}", std::process::id()));
    let mut command = Command::new(env!("CARGO_BIN_EXE_svc"));
    command
        .args(args)
        .env("SVC_STATE_DIR", state)
        .env_remove("SVC_DEVICE_URL")
        .env_remove("SVC_DEVICE_PASSWORD")
        .env_remove("SVC_DEVICE_NEW_PASSWORD")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Runs `svc ARGS`.
pub fn svc(args: &[&str]) -> Run {
    svc_with(args, &[], None)
}

/// Runs `svc ARGS` with extra environment variables and optional stdin text; checks that
/// no password appears in what it prints.
pub fn svc_with(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Run {
    let mut command = command(args);
    for (k, v) in env {
        command.env(k, v);
    }
    if stdin.is_some() {
        command.stdin(Stdio::piped());
    }
    let mut child = command.spawn().expect("svc starts");
    if let Some(text) = stdin {
        let mut input = child.stdin.take().unwrap();
        input.write_all(text.as_bytes()).unwrap();
    }
    let run = finish(child, RUN_DEADLINE, args);
    for text in [&run.stdout, &run.stderr] {
        assert!(
            !text.contains(SECRET_MARKER),
            "a password was printed by svc {args:?}: {run:#?}"
        );
    }
    run
}

/// Waits for a child (reading its output meanwhile), killing it after `deadline`.
pub fn finish(mut child: Child, deadline: Duration, what: &[&str]) -> Run {
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = out.read_to_string(&mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = err.read_to_string(&mut s);
        s
    });
    let status = wait(&mut child, deadline)
        .unwrap_or_else(|| panic!("svc {what:?} did not end within {deadline:?}"));
    Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// Polls a child until it exits; kills it and answers `None` after `deadline`.
pub fn wait(child: &mut Child, deadline: Duration) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + deadline;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Writes JSON to a file.
pub fn write_json(path: &Path, value: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// An address where nothing listens.
pub fn closed_address() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    address
}
