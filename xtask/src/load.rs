//! `cargo xtask load`: a bounded load generator against the emulator binary.
//!
//! Starts `svc-emulator` (the release build by default, from a release build of this
//! generator; `--debug`: both debug builds, as CI runs them),
//! obtains an access token from its identity provider as the SDK does (OpenID discovery,
//! then the password grant with the API key), and runs three scenarios one after the
//! other, each with `--clients` concurrent clients (one HTTP connection each) for a
//! warm-up and then `--seconds`:
//!
//! - `list containers`: `GET /api/v2/organizations/{org}/containers` (one page of 50
//!   containers, each with pending files and their upload forms);
//! - `upload 64 KiB`: each client creates a container with 8 files, uploads each to the
//!   emulated object storage with its POST policy form (as the SDK does), then deletes the
//!   container, so the storage does not grow; latency is that of the uploads;
//! - `unit GET /settings`: each client logs in to the emulated unit once, then reads the
//!   whole settings tree.
//!
//! For each: requests per second, errors (a transport error or any status but the one
//! expected), p50/p99/max latency, and the emulator's resident memory (`VmRSS`) sampled
//! every second after the warm-up (first, last, max) with its CPU use, which tells
//! whether the emulator or this generator was the limit (both share the machine).
//!
//! `--check` (CI) fails on any error and when the emulator's memory at the end of a
//! scenario is more than twice what it was after the warm-up.

use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};
use tokio::time::Instant;

/// What one run does.
#[derive(Clone, Debug)]
pub struct Options {
    /// Measured seconds per scenario (after the warm-up).
    pub seconds: f64,
    pub clients: usize,
    /// Unmeasured seconds before each scenario's measurement.
    pub warmup: f64,
    /// Fail on errors or on memory growth.
    pub check: bool,
    /// Use the debug build of the emulator instead of the release one.
    pub debug: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            seconds: 60.0,
            clients: 64,
            warmup: 2.0,
            check: false,
            debug: false,
        }
    }
}

/// Containers present while the listing runs (all on the one page asked for).
const LISTED_CONTAINERS: usize = 50;
/// Files registered (pending) in each listed container.
const LISTED_FILES: usize = 2;
/// Size of each uploaded file.
const UPLOAD_SIZE: usize = 64 * 1024;
/// Files uploaded per container before it is deleted.
const FILES_PER_CONTAINER: usize = 8;
/// Allowed growth of the emulator's memory over a scenario, after its warm-up.
const MAX_RSS_GROWTH: f64 = 2.0;
/// Error messages kept per scenario, to show what failed.
const KEPT_ERRORS: usize = 5;

/// `cargo xtask load [--seconds N] [--clients N] [--warmup S] [--check] [--debug]`.
pub fn run(root: &Path, args: &[&str]) -> Result<()> {
    let options = parse(args)?;
    if cfg!(debug_assertions) && !options.debug {
        return release_generator(root, args);
    }
    load(root, &options)
}

/// Runs this task from a release build of xtask: a debug build of the generator spends
/// most of the machine's CPU itself (on 2 cores, several times what the release emulator
/// needs), and its figures would be its own rather than the emulator's.
fn release_generator(root: &Path, args: &[&str]) -> Result<()> {
    let build = ["build", "--quiet", "--release", "-p", "xtask", "--locked"];
    println!("==> load generator: cargo {}", build.join(" "));
    let status = Command::new("cargo")
        .args(build)
        .current_dir(root)
        .status()
        .context("could not run cargo")?;
    if !status.success() {
        bail!("building xtask in release failed ({status})");
    }
    let status = Command::new(root.join("target/release/xtask"))
        .arg("load")
        .args(args)
        .current_dir(root)
        .status()
        .context("running the release xtask")?;
    if !status.success() {
        bail!("the load run failed ({status})");
    }
    Ok(())
}

/// The bounded run CI does, as `cargo xtask load --seconds 3 --warmup 2 --debug --check`:
/// the debug builds, 64 clients, 2 s warm-up and 3 s per scenario (about 20 s in all).
pub fn ci(root: &Path) -> Result<()> {
    load(
        root,
        &Options {
            seconds: 3.0,
            clients: 64,
            warmup: 2.0,
            check: true,
            debug: true,
        },
    )
}

fn parse(args: &[&str]) -> Result<Options> {
    let mut options = Options::default();
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .copied()
                .with_context(|| format!("{name} needs a value"))
        };
        match *arg {
            "--seconds" => options.seconds = seconds(value(arg)?, arg, false)?,
            "--warmup" => options.warmup = seconds(value(arg)?, arg, true)?,
            "--clients" => {
                options.clients = value(arg)?.parse().context("--clients: a count")?;
                if options.clients == 0 {
                    bail!("--clients must be at least 1");
                }
            }
            "--check" => options.check = true,
            "--debug" => options.debug = true,
            other => bail!(
                "unknown argument `{other}`\nusage: cargo xtask load [--seconds N] [--clients N] [--warmup S] [--check] [--debug]"
            ),
        }
    }
    Ok(options)
}

/// A finite number of seconds, more than 0 (or 0 too with `zero`).
fn seconds(text: &str, name: &str, zero: bool) -> Result<f64> {
    let value: f64 = text
        .parse()
        .with_context(|| format!("{name}: a number of seconds"))?;
    let least = if zero { "0 or more" } else { "more than 0" };
    if !value.is_finite() || value < 0.0 || (value == 0.0 && !zero) || value > 86_400.0 {
        bail!("{name} must be {least} seconds (at most a day)");
    }
    Ok(value)
}

fn load(root: &Path, options: &Options) -> Result<()> {
    let binary = build_emulator(root, options.debug)?;
    let emulator = Emulator::start(&binary)?;
    println!(
        "==> load: {} clients, {} s warm-up + {} s per scenario, emulator {} (pid {})",
        options.clients,
        options.warmup,
        options.seconds,
        binary.display(),
        emulator.pid
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    let reports = runtime.block_on(scenarios(&emulator, options))?;
    drop(emulator);
    if options.check {
        let mut failures = Vec::new();
        for report in &reports {
            failures.extend(report.problems());
        }
        if !failures.is_empty() {
            bail!("load check failed:\n  {}", failures.join("\n  "));
        }
        println!("load check passed: no errors, memory within {MAX_RSS_GROWTH}x after warm-up");
    }
    Ok(())
}

fn build_emulator(root: &Path, debug: bool) -> Result<PathBuf> {
    let mut args = vec![
        "build",
        "--quiet",
        "-p",
        "svc-emulator",
        "--bin",
        "svc-emulator",
        "--locked",
    ];
    if !debug {
        args.push("--release");
    }
    println!("==> emulator binary: cargo {}", args.join(" "));
    let status = Command::new("cargo")
        .args(&args)
        .current_dir(root)
        .status()
        .context("could not run cargo")?;
    if !status.success() {
        bail!("building the emulator failed ({status})");
    }
    let profile = if debug { "debug" } else { "release" };
    Ok(root.join("target").join(profile).join("svc-emulator"))
}

/// The emulator process, ended when dropped.
struct Emulator {
    child: Child,
    pid: u32,
    info: Value,
    /// Kept open: the emulator must not meet a closed pipe if it writes again.
    _stdout: Option<BufReader<ChildStdout>>,
}

impl Emulator {
    fn start(binary: &Path) -> Result<Self> {
        let mut child = Command::new(binary)
            // Tokens outlive the run, as the SDK would renew them; no serial pty.
            .args(["--no-device-pty", "--token-lifetime-seconds", "3600"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting {}", binary.display()))?;
        let mut stdout = child.stdout.take().map(BufReader::new);
        // From here on, dropping `emulator` ends the process.
        let mut emulator = Self {
            pid: child.id(),
            child,
            info: Value::Null,
            _stdout: None,
        };
        let mut line = String::new();
        if let Some(out) = stdout.as_mut() {
            out.read_line(&mut line)
                .context("reading the emulator's JSON line")?;
        }
        if line.trim().is_empty() {
            bail!("the emulator printed nothing");
        }
        emulator.info =
            serde_json::from_str(&line).context("the emulator's first line is not JSON")?;
        emulator._stdout = stdout;
        Ok(emulator)
    }

    fn field(&self, name: &str) -> Result<String> {
        self.info
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_owned)
            .with_context(|| format!("the emulator's JSON line has no `{name}`"))
    }

    /// Resident memory in KiB (`VmRSS` of `/proc/<pid>/status`).
    fn rss_kib(&self) -> Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid))
            .context("reading the emulator's /proc status")?;
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS in the emulator's /proc status")
    }

    /// CPU time used so far, in clock ticks (`utime + stime` of `/proc/<pid>/stat`).
    fn cpu_ticks(&self) -> Result<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid))
            .context("reading the emulator's /proc stat")?;
        // The command name (field 2) is in parentheses and may hold spaces: count
        // fields from the last `)`; utime and stime are fields 14 and 15.
        let after = stat
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .context("unexpected /proc stat")?;
        let fields: Vec<&str> = after.split_whitespace().collect();
        let tick = |i: usize| -> Result<u64> {
            fields
                .get(i)
                .and_then(|f| f.parse().ok())
                .context("unexpected /proc stat")
        };
        Ok(tick(11)? + tick(12)?)
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        // Already ended or not: either way nothing more can be done here.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the clients of a scenario share.
#[derive(Clone)]
struct Shared {
    cloud: String,
    organization: String,
    token: String,
    device: String,
}

/// One kind of request the clients repeat.
#[derive(Clone, Copy, Debug)]
enum Scenario {
    ListContainers,
    Upload,
    UnitSettings,
}

impl Scenario {
    fn title(self) -> String {
        match self {
            Self::ListContainers => format!(
                "list containers (GET one page of {LISTED_CONTAINERS} containers with {LISTED_FILES} pending files each)"
            ),
            Self::Upload => format!(
                "upload {} KiB (POST policy form to the object storage; {FILES_PER_CONTAINER} per container, then DELETE it)",
                UPLOAD_SIZE / 1024
            ),
            Self::UnitSettings => {
                "unit GET /api/v1/settings (whole tree, after a login)".to_owned()
            }
        }
    }
}

/// What one client measured.
#[derive(Default)]
struct Tally {
    /// Latencies of the measured requests, in microseconds.
    latencies: Vec<u32>,
    /// Requests that are not measured (registrations, deletions, logins).
    other: u64,
    errors: u64,
    messages: Vec<String>,
}

impl Tally {
    fn error(&mut self, message: String) {
        self.errors += 1;
        if self.messages.len() < KEPT_ERRORS {
            self.messages.push(message);
        }
    }
}

/// What the check needs of one scenario.
struct Report {
    scenario: Scenario,
    /// The emulator's highest memory during the warm-up (or at its end).
    baseline_kib: u64,
    /// Its memory once the clients have stopped.
    last_kib: u64,
    errors: u64,
}

impl Report {
    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let name = self.scenario.title();
        if self.errors > 0 {
            problems.push(format!("{name}: {} errors", self.errors));
        }
        if self.last_kib as f64 > self.baseline_kib as f64 * MAX_RSS_GROWTH {
            problems.push(format!(
                "{name}: emulator memory grew from {} (warm-up) to {}",
                mib(self.baseline_kib),
                mib(self.last_kib)
            ));
        }
        problems
    }
}

async fn scenarios(emulator: &Emulator, options: &Options) -> Result<Vec<Report>> {
    let http = client()?;
    let shared = Shared {
        cloud: emulator.field("base_url")?,
        organization: emulator.field("organization_id")?,
        token: access_token(&http, emulator).await?,
        device: emulator.field("device_url")?,
    };
    prepare_listing(&http, &shared).await?;
    // Built before any measurement: each client is one connection per server, kept
    // across its requests as an SDK client keeps it.
    let clients = (0..options.clients)
        .map(|_| client())
        .collect::<Result<Vec<_>>>()?;
    let mut reports = Vec::new();
    for scenario in [
        Scenario::ListContainers,
        Scenario::Upload,
        Scenario::UnitSettings,
    ] {
        reports.push(measure(emulator, options, &shared, &clients, scenario).await?);
    }
    Ok(reports)
}

/// A plain-HTTP client (the emulator serves no TLS, so no root certificates are loaded).
fn client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .http1_only()
        .tls_certs_only([])
        .pool_max_idle_per_host(1)
        .timeout(Duration::from_secs(30))
        .build()
        .context("building an HTTP client")
}

/// The SDK's login: OpenID discovery, then the password grant with the API key.
async fn access_token(http: &reqwest::Client, emulator: &Emulator) -> Result<String> {
    let auth = emulator.field("auth_url")?;
    let discovery: Value = http
        .get(format!("{auth}/.well-known/openid-configuration"))
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .context("OpenID discovery")?
        .json()
        .await
        .context("OpenID discovery answer")?;
    let endpoint = discovery
        .get("token_endpoint")
        .and_then(Value::as_str)
        .context("the OpenID configuration has no token_endpoint")?;
    let (key, secret) = (emulator.field("api_key")?, emulator.field("api_secret")?);
    let answer: Value = http
        .post(endpoint)
        .form(&[
            ("grant_type", "password"),
            ("client_id", "api-key"),
            ("username", key.as_str()),
            ("password", secret.as_str()),
            ("scope", "openid"),
        ])
        .send()
        .await
        .and_then(reqwest::Response::error_for_status)
        .context("token request")?
        .json()
        .await
        .context("token answer")?;
    answer
        .get("access_token")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .context("the token answer has no access_token")
}

/// The containers the listing scenario reads.
async fn prepare_listing(http: &reqwest::Client, shared: &Shared) -> Result<()> {
    for i in 0..LISTED_CONTAINERS {
        let files: Vec<Value> = (0..LISTED_FILES)
            .map(|f| json!({"path": format!("listed/{i}/{f}.bin"), "type": "input", "size": UPLOAD_SIZE}))
            .collect();
        create_container(http, shared, files)
            .await
            .map_err(anyhow::Error::msg)
            .context("creating the listed containers")?;
    }
    Ok(())
}

/// Creates a container with `files`; answers it as JSON, or what went wrong.
async fn create_container(
    http: &reqwest::Client,
    shared: &Shared,
    files: Vec<Value>,
) -> Result<Value, String> {
    let answer = http
        .post(format!(
            "{}/api/v2/organizations/{}/containers",
            shared.cloud, shared.organization
        ))
        .bearer_auth(&shared.token)
        .json(&json!({"region": "eu-west-3", "files": files}))
        .send()
        .await
        .map_err(|e| format!("create container: {e}"))?;
    let status = answer.status();
    if !status.is_success() {
        return Err(format!("create container answered {status}"));
    }
    answer
        .json()
        .await
        .map_err(|e| format!("create container answer: {e}"))
}

async fn measure(
    emulator: &Emulator,
    options: &Options,
    shared: &Shared,
    http: &[reqwest::Client],
    scenario: Scenario,
) -> Result<Report> {
    println!("--- {}", scenario.title());
    let start = Instant::now();
    let measured_from = start + Duration::from_secs_f64(options.warmup);
    let until = measured_from + Duration::from_secs_f64(options.seconds);
    let clients: Vec<_> = http
        .iter()
        .enumerate()
        .map(|(index, http)| {
            let (shared, http) = (shared.clone(), http.clone());
            tokio::spawn(async move {
                client_loop(scenario, index, &http, &shared, measured_from, until).await
            })
        })
        .collect();

    // Memory every second: during the warm-up (the level the check compares with),
    // then from the end of the warm-up on (the figures); CPU over the measured span.
    let mut warmup_kib = vec![emulator.rss_kib()?];
    let mut tick = start;
    while tick + Duration::from_secs(1) < measured_from {
        tick += Duration::from_secs(1);
        tokio::time::sleep_until(tick).await;
        warmup_kib.push(emulator.rss_kib()?);
    }
    tokio::time::sleep_until(measured_from).await;
    let cpu_from = emulator.cpu_ticks()?;
    let mut rss_kib = vec![emulator.rss_kib()?];
    let mut tick = measured_from;
    while tick + Duration::from_secs(1) < until {
        tick += Duration::from_secs(1);
        tokio::time::sleep_until(tick).await;
        rss_kib.push(emulator.rss_kib()?);
    }
    tokio::time::sleep_until(until).await;
    let cpu = emulator.cpu_ticks()?.saturating_sub(cpu_from) as f64 / clock_ticks();
    let mut total = Tally::default();
    for client in clients {
        let tally = client.await.context("a load client panicked")?;
        total.latencies.extend(tally.latencies);
        total.other += tally.other;
        total.errors += tally.errors;
        for message in tally.messages {
            if total.messages.len() < KEPT_ERRORS {
                total.messages.push(message);
            }
        }
    }
    rss_kib.push(emulator.rss_kib()?);
    print_figures(options, &mut total, &rss_kib, cpu);
    let baseline_kib = warmup_kib
        .iter()
        .chain(rss_kib.first())
        .copied()
        .max()
        .unwrap_or_default();
    Ok(Report {
        scenario,
        baseline_kib,
        last_kib: rss_kib.last().copied().unwrap_or_default(),
        errors: total.errors,
    })
}

fn print_figures(options: &Options, total: &mut Tally, rss_kib: &[u64], cpu_seconds: f64) {
    let seconds = options.seconds;
    total.latencies.sort_unstable();
    let count = total.latencies.len();
    let at = |q: f64| -> f64 {
        if count == 0 {
            return 0.0;
        }
        // Nearest rank: the smallest latency with at least q of them at or below it.
        let rank = ((q * count as f64).ceil() as usize).clamp(1, count);
        f64::from(total.latencies[rank - 1]) / 1000.0
    };
    println!(
        "  {count} requests ({:.0}/s), {} other requests, {} errors; latency p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        count as f64 / seconds,
        total.other,
        total.errors,
        at(0.5),
        at(0.99),
        at(1.0)
    );
    let max = rss_kib.iter().copied().max().unwrap_or_default();
    println!(
        "  emulator RSS: first {}, last {}, max {} ({} samples, 1 s apart); emulator CPU {:.0}% of one core",
        mib(rss_kib.first().copied().unwrap_or_default()),
        mib(rss_kib.last().copied().unwrap_or_default()),
        mib(max),
        rss_kib.len(),
        cpu_seconds / seconds * 100.0
    );
    let series: Vec<String> = rss_kib
        .iter()
        .map(|kib| format!("{:.1}", *kib as f64 / 1024.0))
        .collect();
    println!("  emulator RSS MiB each second: {}", series.join(" "));
    for message in &total.messages {
        println!("  error: {message}");
    }
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`; 100 on Linux).
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// One client: its own connection, repeating the scenario's requests until `until`;
/// only the requests started after `measured_from` count.
async fn client_loop(
    scenario: Scenario,
    index: usize,
    http: &reqwest::Client,
    shared: &Shared,
    measured_from: Instant,
    until: Instant,
) -> Tally {
    let mut tally = Tally::default();
    match scenario {
        Scenario::ListContainers => {
            let url = format!(
                "{}/api/v2/organizations/{}/containers?page=0&perPage={LISTED_CONTAINERS}",
                shared.cloud, shared.organization
            );
            while Instant::now() < until {
                let request = http.get(&url).bearer_auth(&shared.token);
                timed(&mut tally, measured_from, 200, request).await;
            }
        }
        Scenario::Upload => {
            upload_loop(http, &mut tally, index, shared, measured_from, until).await
        }
        Scenario::UnitSettings => {
            let login = http
                .post(format!("{}/api/v1/user/login", shared.device))
                .json(&json!({"user": "viewer", "password": ""}))
                .send()
                .await;
            tally.other += 1;
            let token = match login {
                Ok(answer) if answer.status() == 200 => answer
                    .json::<Value>()
                    .await
                    .ok()
                    .and_then(|v| v.get("token").and_then(Value::as_str).map(str::to_owned)),
                Ok(answer) => {
                    tally.error(format!("unit login answered {}", answer.status()));
                    return tally;
                }
                Err(e) => {
                    tally.error(format!("unit login: {e}"));
                    return tally;
                }
            };
            let Some(token) = token else {
                tally.error("the unit's login answer has no token".to_owned());
                return tally;
            };
            let url = format!("{}/api/v1/settings", shared.device);
            while Instant::now() < until {
                let request = http.get(&url).query(&[("auth", token.as_str())]);
                timed(&mut tally, measured_from, 200, request).await;
            }
        }
    }
    tally
}

/// Sends `request`, reads the whole answer, and counts it (latency when measured, or an
/// error when the status is not `expect`).
async fn timed(
    tally: &mut Tally,
    measured_from: Instant,
    expect: u16,
    request: reqwest::RequestBuilder,
) {
    let started = Instant::now();
    let outcome = match request.send().await {
        Ok(answer) => {
            let status = answer.status();
            match answer.bytes().await {
                Ok(_) if status == expect => Ok(()),
                Ok(body) => Err(format!(
                    "answered {status}: {}",
                    String::from_utf8_lossy(&body[..body.len().min(300)])
                )),
                Err(e) => Err(format!("reading the answer: {e}")),
            }
        }
        Err(e) => Err(e.to_string()),
    };
    match outcome {
        Ok(()) if started >= measured_from => {
            let micros = started.elapsed().as_micros();
            tally
                .latencies
                .push(u32::try_from(micros).unwrap_or(u32::MAX));
        }
        Ok(()) => tally.other += 1,
        Err(message) => tally.error(message),
    }
}

async fn upload_loop(
    http: &reqwest::Client,
    tally: &mut Tally,
    index: usize,
    shared: &Shared,
    measured_from: Instant,
    until: Instant,
) {
    let content = Arc::new(vec![0x5a_u8; UPLOAD_SIZE]);
    let mut round = 0_u64;
    while Instant::now() < until {
        round += 1;
        let files: Vec<Value> = (0..FILES_PER_CONTAINER)
            .map(|f| json!({"path": format!("load/{index}/{round}/{f}.bin"), "type": "input", "size": UPLOAD_SIZE}))
            .collect();
        tally.other += 1;
        let container = match create_container(http, shared, files).await {
            Ok(container) => container,
            Err(message) => {
                tally.error(message);
                continue;
            }
        };
        let empty = Vec::new();
        let files = container
            .get("files")
            .and_then(Value::as_array)
            .unwrap_or(&empty);
        if files.len() != FILES_PER_CONTAINER {
            tally.error(format!(
                "the new container has {} files, not {FILES_PER_CONTAINER}",
                files.len()
            ));
        }
        for file in files {
            match upload_form(http, file, &content) {
                Ok(request) => timed(tally, measured_from, 204, request).await,
                Err(message) => tally.error(message),
            }
        }
        let Some(id) = container.get("id").and_then(Value::as_str) else {
            tally.error("the new container has no id".to_owned());
            continue;
        };
        tally.other += 1;
        let deleted = http
            .delete(format!("{}/api/v2/containers/{id}", shared.cloud))
            .bearer_auth(&shared.token)
            .send()
            .await;
        match deleted {
            Ok(answer) if answer.status().is_success() => {}
            Ok(answer) => tally.error(format!("delete container answered {}", answer.status())),
            Err(e) => tally.error(format!("delete container: {e}")),
        }
    }
}

/// The upload of one registered file: its form's fields in their order, then the file.
fn upload_form(
    http: &reqwest::Client,
    file: &Value,
    content: &Arc<Vec<u8>>,
) -> Result<reqwest::RequestBuilder, String> {
    let info = file
        .get("uploadInfo")
        .context("a registered file has no uploadInfo")
        .map_err(|e| e.to_string())?;
    let url = info
        .get("url")
        .and_then(Value::as_str)
        .ok_or("an uploadInfo has no url")?;
    let fields = info
        .get("fields")
        .and_then(Value::as_object)
        .ok_or("an uploadInfo has no fields")?;
    let mut form = reqwest::multipart::Form::new();
    for (name, value) in fields {
        let value = value
            .as_str()
            .ok_or("an upload form field is not a string")?;
        form = form.text(name.clone(), value.to_owned());
    }
    let part = reqwest::multipart::Part::bytes(content.as_ref().clone()).file_name("data.bin");
    Ok(http.post(url).multipart(form.part("file", part)))
}
