//! `svc device stream`: the output logs a unit streams, as JSON Lines or into a session
//! file of the raw frames, from its serial link, the UDP datagrams of an Ethernet
//! output, or a log file as it grows.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use svc_core::live::{DEFAULT_CAPACITY, LiveError, LogFrame, LogStream, Subscribe};
use svc_core::unit::Unit;

use crate::exit::{Failure, Signals, UNREACHABLE};

/// What to receive, from where, and where it goes.
#[derive(Args, Debug)]
pub struct StreamArgs {
    /// Only these messages, comma-separated as the unit's settings name them
    /// (`ekfNav,utcTime`); default: every message.
    #[arg(long)]
    messages: Option<String>,
    /// Write the raw frames to FILE (a new file: a session as the data logger records
    /// it, readable by `svc logs convert`) instead of printing records.
    #[arg(long, value_name = "FILE")]
    record: Option<PathBuf>,
    /// Listen on this UDP address (e.g. 0.0.0.0:5600) for the datagrams of a unit's
    /// Ethernet output, instead of the serial link.
    #[arg(long, value_name = "ADDRESS", conflicts_with = "follow")]
    udp: Option<String>,
    /// Read this log file from its start, then as it grows, instead of the serial link.
    #[arg(long, value_name = "FILE")]
    follow: Option<PathBuf>,
    /// Stop after this many records (frames with --record).
    #[arg(long)]
    count: Option<u64>,
    /// Stop after this many seconds.
    #[arg(long)]
    seconds: Option<f64>,
    /// How many frames may wait to be written before the next ones are dropped (and
    /// reported on stderr).
    #[arg(long, default_value_t = DEFAULT_CAPACITY)]
    buffer: usize,
}

impl StreamArgs {
    /// Whether the stream needs no session with the unit (UDP, a file).
    pub fn needs_no_unit(&self) -> bool {
        self.udp.is_some() || self.follow.is_some()
    }
}

/// Where the frames go.
enum Sink {
    /// One JSON object per record on stdout.
    Json(std::io::BufWriter<std::io::Stdout>),
    /// The raw frames into a session file.
    Record(std::io::BufWriter<std::fs::File>, PathBuf),
}

impl Sink {
    /// Writes a frame; whether it counts (a record printed, a frame recorded). A
    /// closed stdout (`| head`) ends the stream: `Ok(None)`.
    fn write(&mut self, frame: &LogFrame) -> Result<Option<bool>, Failure> {
        match self {
            Sink::Json(out) => {
                let Ok(record) = frame.decode() else {
                    return Ok(Some(false));
                };
                let line = svc_logs::json::record_json(&record);
                match writeln!(out, "{line}") {
                    Ok(()) => Ok(Some(true)),
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(None),
                    Err(e) => Err(Failure::other(format!("stdout: {e}"))),
                }
            }
            Sink::Record(file, path) => file
                .write_all(&frame.to_wire())
                .map(|()| Some(true))
                .map_err(|e| Failure::other(format!("{}: {e}", path.display()))),
        }
    }

    fn flush(&mut self) -> Result<bool, Failure> {
        match self {
            Sink::Json(out) => match out.flush() {
                Ok(()) => Ok(true),
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
                Err(e) => Err(Failure::other(format!("stdout: {e}"))),
            },
            Sink::Record(file, path) => file
                .flush()
                .map(|()| true)
                .map_err(|e| Failure::other(format!("{}: {e}", path.display()))),
        }
    }

    /// Flushes, and puts a recording on the disk.
    fn finish(&mut self) -> Result<(), Failure> {
        self.flush()?;
        if let Sink::Record(file, path) = self {
            file.get_ref()
                .sync_all()
                .map_err(|e| Failure::other(format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }
}

/// Runs the command: from the unit's serial link (`unit`), or from `--udp` / `--follow`.
pub async fn run(
    unit: Option<&Unit>,
    args: &StreamArgs,
    signals: &mut Signals,
) -> Result<(), Failure> {
    let messages = Subscribe::parse_messages(args.messages.as_deref().unwrap_or(""))
        .map_err(Failure::usage)?;
    if args.seconds.is_some_and(|s| !(s.is_finite() && s > 0.0)) {
        return Err(Failure::usage("--seconds: a positive number of seconds"));
    }
    let subscribe = Subscribe {
        messages,
        capacity: args.buffer,
    };
    let source = |e: LiveError| Failure {
        code: crate::exit::code_for(e.kind()),
        message: e.to_string(),
    };
    let mut stream = match (&args.udp, &args.follow, unit) {
        (Some(bind), _, _) => LogStream::udp(bind, subscribe).await.map_err(source)?,
        (None, Some(path), _) => LogStream::follow(path, subscribe, None)
            .await
            .map_err(source)?,
        (None, None, Some(unit)) => unit.subscribe(subscribe)?,
        (None, None, None) => {
            return Err(Failure::usage(
                "say where the stream is: --serial PATH, --serial-tcp HOST:PORT, --udp ADDRESS or --follow FILE",
            ));
        }
    };
    let mut sink = match &args.record {
        Some(path) => {
            let file = std::fs::File::create_new(path).map_err(|e| {
                Failure::usage(format!(
                    "--record {}: {e} (a new file: an existing one is never overwritten)",
                    path.display()
                ))
            })?;
            Sink::Record(std::io::BufWriter::new(file), path.clone())
        }
        None => Sink::Json(std::io::BufWriter::new(std::io::stdout())),
    };
    let deadline = args
        .seconds
        .map(|s| tokio::time::Instant::now() + Duration::from_secs_f64(s));
    let mut written: u64 = 0;
    let outcome = loop {
        if args.count.is_some_and(|count| written >= count) {
            break Ok(());
        }
        let next = tokio::select! {
            next = stream.next_frame() => next,
            () = sleep_until(deadline) => break Ok(()),
            signal = signals.next() => break Err(Failure {
                code: signal.code(),
                message: format!("interrupted by {}", signal.name()),
            }),
        };
        // What came, then what is already waiting, then one flush.
        let mut item = next;
        let mut open = true;
        loop {
            match item {
                None => {
                    open = false;
                    break;
                }
                Some(Ok(frame)) => match sink.write(&frame)? {
                    Some(counted) => written += u64::from(counted),
                    None => {
                        open = false;
                        break;
                    }
                },
                Some(Err(LiveError::Dropped { frames })) => eprintln!(
                    "svc device stream: {frames} frames dropped: the output did not keep up \
                     (a larger --buffer, fewer --messages, or --record)"
                ),
                Some(Err(LiveError::Closed { reason })) => {
                    sink.finish()?;
                    return Err(Failure {
                        code: UNREACHABLE,
                        message: reason,
                    });
                }
            }
            if args.count.is_some_and(|count| written >= count) {
                break;
            }
            item = match stream.try_next_frame() {
                Ok(Some(frame)) => Some(Ok(frame)),
                Ok(None) if stream.is_closed() => None,
                Ok(None) => break,
                Err(e) => Some(Err(e)),
            };
        }
        if !sink.flush()? || !open {
            break Ok(());
        }
    };
    sink.finish()?;
    let stats = stream.stats();
    if stats.dropped > 0 || matches!(sink, Sink::Record(..)) || outcome.is_err() {
        eprintln!(
            "svc device stream: {written} {} written, {} frames dropped",
            if matches!(sink, Sink::Record(..)) {
                "frames"
            } else {
                "records"
            },
            stats.dropped
        );
    }
    outcome
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// What `svc device wait-ready` waits for.
#[derive(Args, Debug)]
pub struct WaitReadyArgs {
    /// The GNSS fix needed at least: single, differential, rtkFloat, rtkFixed, or none
    /// (no GNSS condition).
    #[arg(long, default_value = "single")]
    fix: String,
    /// Do not wait for the filter to be aligned.
    #[arg(long)]
    no_aligned: bool,
    /// Do not wait for a valid UTC.
    #[arg(long)]
    no_utc: bool,
    /// How long to wait, in seconds.
    #[arg(long, default_value_t = 300.0)]
    timeout: f64,
    /// Listen on this UDP address for the unit's Ethernet output instead of the serial
    /// link.
    #[arg(long, value_name = "ADDRESS")]
    udp: Option<String>,
}

impl WaitReadyArgs {
    /// Whether it needs no session with the unit (UDP).
    pub fn needs_no_unit(&self) -> bool {
        self.udp.is_some()
    }
}

/// Waits until the unit's output logs say it is ready to log; prints what they said
/// (one JSON object, also when it was not ready in time).
pub async fn wait_ready(
    unit: Option<&Unit>,
    args: &WaitReadyArgs,
    signals: &mut Signals,
) -> Result<(), Failure> {
    use svc_core::live::{FixLevel, Readiness, ReadyCriteria};
    let min_fix = match args.fix.as_str() {
        "none" => None,
        name => Some(FixLevel::from_name(name).ok_or_else(|| {
            Failure::usage(format!(
                "--fix {name}: one of single, differential, rtkFloat, rtkFixed, none"
            ))
        })?),
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        return Err(Failure::usage("--timeout: a positive number of seconds"));
    }
    let criteria = ReadyCriteria {
        min_fix,
        aligned: !args.no_aligned,
        utc: !args.no_utc,
    };
    let timeout = Duration::from_secs_f64(args.timeout.min(1e9));
    let started = std::time::Instant::now();
    let work = async {
        match (&args.udp, unit) {
            (Some(bind), _) => {
                let mut stream = LogStream::udp(bind, Subscribe::only(criteria.messages()))
                    .await
                    .map_err(|e| Failure {
                        code: crate::exit::code_for(e.kind()),
                        message: e.to_string(),
                    })?;
                Ok(svc_core::live::wait_ready(&mut stream, &criteria, timeout)
                    .await
                    .map_err(|not| svc_core::unit::UnitError::NotReady(Box::new(not))))
            }
            (None, Some(unit)) => Ok(unit.wait_ready(&criteria, timeout).await),
            (None, None) => Err(Failure::usage(
                "say where the stream is: --serial PATH, --serial-tcp HOST:PORT or --udp ADDRESS",
            )),
        }
    };
    let outcome = signals
        .unless_interrupted(work, "while waiting for the unit to be ready")
        .await??;
    let report = |readiness: &Readiness, missing: &[String]| {
        serde_json::json!({
            "ready": missing.is_empty(),
            "fix": match readiness.fix {
                None => serde_json::Value::Null,
                Some(None) => "none".into(),
                Some(Some(fix)) => fix.name().into(),
            },
            "filter": readiness.filter.map(|mode| format!("{mode:?}")),
            "utcValid": readiness.utc_valid,
            "missing": missing,
            "waitedSeconds": (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0,
        })
    };
    match outcome {
        Ok(readiness) => {
            println!("{}", report(&readiness, &[]));
            Ok(())
        }
        Err(svc_core::unit::UnitError::NotReady(not)) => {
            println!("{}", report(&not.readiness, &not.missing));
            let e = svc_core::unit::UnitError::NotReady(not);
            // Not ready within the caller's own `--timeout`: a verdict (exit 1), not a
            // side that failed to answer (6, as a stream that ended).
            let code = match e.kind() {
                svc_core::ErrorKind::Timeout => crate::exit::FAILURE,
                kind => crate::exit::code_for(kind),
            };
            Err(crate::exit::Failure {
                code,
                message: e.to_string(),
            })
        }
        Err(e) => Err(e.into()),
    }
}
