//! `svc logs`: the unit's recordings (sbgECom binary logs) as tables, and what is in
//! them.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, IsTerminal, Read};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use svc_logs::files::{Format, TableFiles};
use svc_logs::records::GnssPosType;
use svc_logs::tables::{Clock, TableError, TableReader, record_timestamp, utc_micros};
use svc_logs::{Fault, LogReader, MessageKind, Record, Stats};

use crate::exit::{self, Failure, Signals};

/// Inputs at least this large get a progress bar (on a terminal).
const PROGRESS_MIN_BYTES: u64 = 16 * 1024 * 1024;
/// Faults listed by `inspect`.
const FAULTS_SHOWN: usize = 20;
/// Periods of a message from which its median period is taken.
const MEDIAN_PERIODS: usize = 4096;

#[derive(Args, Debug)]
pub struct LogsArgs {
    #[command(subcommand)]
    command: LogsCommand,
}

#[derive(Subcommand, Debug)]
enum LogsCommand {
    /// Convert logs to one table per message: DIR/<message>.csv or .parquet.
    Convert(ConvertArgs),
    /// What a log holds: messages, rates, gaps, UTC, GNSS fixes, faults.
    Inspect(InspectArgs),
}

#[derive(Args, Debug)]
struct ConvertArgs {
    /// The log files of one session, read one after the other as one stream.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// The folder of the tables (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// The tables' format.
    #[arg(long, value_enum, default_value_t = FormatArg::Csv)]
    format: FormatArg,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum FormatArg {
    Csv,
    Parquet,
}

#[derive(Args, Debug)]
struct InspectArgs {
    /// The log files of one session, read one after the other as one stream.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: LogsArgs) -> ExitCode {
    let mut signals = Signals::listen();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    let work = tokio::task::spawn_blocking(move || match args.command {
        LogsCommand::Convert(args) => convert(&args, &flag),
        LogsCommand::Inspect(args) => inspect(&args, &flag),
    });
    let (result, interrupt) = exit::until_done_or_interrupted(&mut signals, work, || {
        cancel.store(true, Ordering::SeqCst);
    })
    .await;
    if let Some(interrupt) = interrupt {
        return Failure {
            code: interrupt.code(),
            message: format!("interrupted by {}: no table written", interrupt.name()),
        }
        .report("svc logs");
    }
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(failure)) => failure.report("svc logs"),
        Err(e) => Failure::other(format!("the conversion stopped: {e}")).report("svc logs"),
    }
}

/// The input files as one stream, counting the bytes read, stopping when canceled.
struct Input {
    files: Vec<(PathBuf, u64)>,
    current: usize,
    open: Option<File>,
    read: u64,
    bar: Option<ProgressBar>,
    cancel: Arc<AtomicBool>,
}

impl Input {
    fn open(paths: &[PathBuf], cancel: &Arc<AtomicBool>) -> Result<Input, Failure> {
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let meta = std::fs::metadata(path).map_err(|e| open_failure(path, &e))?;
            if !meta.is_file() {
                return Err(Failure::invalid(format!("{}: not a file", path.display())));
            }
            files.push((path.clone(), meta.len()));
        }
        let total: u64 = files.iter().map(|(_, len)| len).sum();
        let bar = (std::io::stderr().is_terminal() && total >= PROGRESS_MIN_BYTES).then(|| {
            let style = ProgressStyle::with_template(
                "reading      {bar:30} {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar());
            ProgressBar::new(total).with_style(style)
        });
        Ok(Input {
            files,
            current: 0,
            open: None,
            read: 0,
            bar,
            cancel: cancel.clone(),
        })
    }

    /// The file and offset in it of an offset of the stream.
    fn locate(&self, offset: u64) -> (String, u64) {
        let mut start = 0;
        for (path, len) in &self.files {
            if offset < start + len {
                return (path.display().to_string(), offset - start);
            }
            start += len;
        }
        let last = self
            .files
            .last()
            .map(|(p, _)| p.display().to_string())
            .unwrap_or_default();
        (last, offset.saturating_sub(start))
    }

    fn total(&self) -> u64 {
        self.files.iter().map(|(_, len)| len).sum()
    }

    fn done(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if self.cancel.load(Ordering::Relaxed) {
                return Err(io::Error::other("canceled"));
            }
            let file = match self.open.as_mut() {
                Some(file) => file,
                None => {
                    let Some((path, _)) = self.files.get(self.current) else {
                        return Ok(0);
                    };
                    let file = File::open(path).map_err(|e| {
                        io::Error::new(e.kind(), format!("{}: {e}", path.display()))
                    })?;
                    self.open.insert(file)
                }
            };
            let n = file.read(buf)?;
            if n == 0 {
                self.open = None;
                self.current += 1;
                continue;
            }
            self.read += n as u64;
            if let Some(bar) = &self.bar {
                bar.set_position(self.read);
            }
            return Ok(n);
        }
    }
}

fn open_failure(path: &Path, e: &io::Error) -> Failure {
    Failure {
        code: if e.kind() == io::ErrorKind::NotFound {
            exit::NOT_FOUND
        } else {
            exit::FAILURE
        },
        message: format!("{}: {e}", path.display()),
    }
}

fn read_failure(e: &io::Error) -> Failure {
    Failure::other(format!("reading the logs: {e}"))
}

fn not_a_log(stats: &Stats) -> Failure {
    Failure::invalid(format!(
        "not an sbgECom log: no valid frame in {} bytes",
        stats.bytes
    ))
}

fn convert(args: &ConvertArgs, cancel: &Arc<AtomicBool>) -> Result<(), Failure> {
    let input = Input::open(&args.files, cancel)?;
    let format = match args.format {
        FormatArg::Csv => Format::Csv,
        FormatArg::Parquet => Format::Parquet,
    };
    let mut files =
        TableFiles::new(&args.out, format).map_err(|e| Failure::other(e.to_string()))?;
    // Each payload goes straight into its message's table (no `Record` in between).
    let mut reader = TableReader::new(input);
    let mut rows: BTreeMap<MessageKind, u64> = BTreeMap::new();
    loop {
        match reader.next_batch() {
            Ok(Some((kind, batch))) => {
                *rows.entry(kind).or_default() += batch.num_rows() as u64;
                files
                    .write(kind, &batch)
                    .map_err(|e| Failure::other(e.to_string()))?;
            }
            Ok(None) => break,
            Err(TableError::Io(e)) => return Err(read_failure(&e)),
            Err(e) => return Err(Failure::other(e.to_string())),
        }
    }
    let stats = reader.stats();
    reader.into_inner().done();
    if stats.frames == 0 {
        return Err(not_a_log(&stats));
    }
    let written = files.finish().map_err(|e| Failure::other(e.to_string()))?;
    for path in &written {
        let kind = path
            .file_stem()
            .and_then(|s| s.to_str())
            .and_then(MessageKind::from_name);
        let count = kind.and_then(|k| rows.get(&k)).copied().unwrap_or(0);
        println!("{}\t{count} rows", path.display());
    }
    if stats.bad_crc + stats.truncated + stats.unknown + stats.invalid_payload > 0
        || stats.skipped_bytes > 0
    {
        eprintln!(
            "svc logs: skipped {} bytes ({} bad CRC, {} truncated, {} unknown, {} invalid)",
            stats.skipped_bytes,
            stats.bad_crc,
            stats.truncated,
            stats.unknown,
            stats.invalid_payload
        );
    }
    Ok(())
}

/// What `inspect` gathers of one message.
#[derive(Default)]
struct Message {
    count: u64,
    first: Option<i64>,
    last: i64,
    periods: Vec<i64>,
    median: Option<i64>,
    gaps: u64,
    largest_gap: i64,
}

impl Message {
    fn add(&mut self, t: i64) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some(t);
            self.last = t;
            return;
        }
        let period = t - self.last;
        self.last = t;
        match self.median {
            Some(median) => self.check(period, median),
            None => {
                self.periods.push(period);
                if self.periods.len() >= MEDIAN_PERIODS {
                    self.settle();
                }
            }
        }
    }

    fn check(&mut self, period: i64, median: i64) {
        if median > 0 && period > 2 * median {
            self.gaps += 1;
            self.largest_gap = self.largest_gap.max(period);
        }
    }

    /// Takes the median of the periods held and checks them.
    fn settle(&mut self) {
        if self.median.is_some() || self.periods.is_empty() {
            return;
        }
        let mut sorted = self.periods.clone();
        sorted.sort_unstable();
        let median = sorted.get(sorted.len() / 2).copied().unwrap_or(0);
        self.median = Some(median);
        for period in std::mem::take(&mut self.periods) {
            self.check(period, median);
        }
    }

    fn rate(&self) -> Option<f64> {
        let span = self.last - self.first?;
        (span > 0 && self.count > 1).then(|| (self.count - 1) as f64 * 1e6 / span as f64)
    }
}

fn pos_rank(kind: GnssPosType) -> u8 {
    match kind {
        GnssPosType::Single => 1,
        GnssPosType::Sbas => 2,
        GnssPosType::PsrDiff => 3,
        GnssPosType::Omnistar => 4,
        GnssPosType::PppFloat => 5,
        GnssPosType::RtkFloat => 6,
        GnssPosType::PppInt => 7,
        GnssPosType::RtkInt => 8,
        GnssPosType::Fixed => 9,
        _ => 0,
    }
}

fn iso(micros: i64) -> String {
    let seconds = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    let days = seconds.div_euclid(86_400);
    let sod = seconds.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    )
}

#[allow(clippy::too_many_lines)]
fn inspect(args: &InspectArgs, cancel: &Arc<AtomicBool>) -> Result<(), Failure> {
    let input = Input::open(&args.files, cancel)?;
    let total = input.total();
    let mut reader = LogReader::new(input);
    let mut clock = Clock::new();
    let mut messages: BTreeMap<MessageKind, Message> = BTreeMap::new();
    let (mut first, mut last): (Option<i64>, i64) = (None, 0);
    // UTC: the time covered by valid utcTime records (each valid one until the next).
    let mut utc_valid_since: Option<i64> = None;
    let mut utc_valid_us: i64 = 0;
    let mut first_utc: Option<i64> = None;
    // GNSS fixes of gps1Pos.
    let (mut gnss, mut gnss_fixed, mut best): (u64, u64, Option<GnssPosType>) = (0, 0, None);
    loop {
        let record = match reader.next_record() {
            Ok(Some(record)) => record,
            Ok(None) => break,
            Err(e) => return Err(read_failure(&e)),
        };
        let kind = record.kind();
        let Some(raw) = record_timestamp(&record) else {
            messages.entry(kind).or_default().count += 1;
            continue;
        };
        let t = clock.extend(raw);
        first.get_or_insert(t);
        last = last.max(t);
        messages.entry(kind).or_default().add(t);
        match &record {
            Record::UtcTime(utc) => {
                if let Some(since) = utc_valid_since.take() {
                    utc_valid_us += (t - since).max(0);
                }
                if let Some(micros) = utc_micros(utc) {
                    utc_valid_since = Some(t);
                    first_utc.get_or_insert(micros);
                }
            }
            Record::Gps1Pos(pos) => {
                gnss += 1;
                let rank = pos.pos_type().map_or(0, pos_rank);
                if rank > 0 {
                    gnss_fixed += 1;
                }
                if rank > best.map_or(0, pos_rank) {
                    best = pos.pos_type();
                }
            }
            _ => {}
        }
    }
    if let Some(since) = utc_valid_since {
        utc_valid_us += (last - since).max(0);
    }
    let stats = reader.stats();
    let faults: Vec<Fault> = reader.faults().to_vec();
    let faults_dropped = reader.faults_dropped();
    let input = reader.into_inner();
    input.done();
    if stats.frames == 0 {
        return Err(not_a_log(&stats));
    }
    for message in messages.values_mut() {
        message.settle();
    }
    let span = first.map_or(0, |f| last - f);
    let utc_share = if span > 0 {
        (utc_valid_us as f64 / span as f64).min(1.0)
    } else if first_utc.is_some() {
        1.0
    } else {
        0.0
    };
    let fault_json = |fault: &Fault| -> Value {
        let (file, offset_in_file) = input.locate(fault.offset());
        let mut value =
            json!({"offset": fault.offset(), "file": file, "file_offset": offset_in_file});
        let what = match fault {
            Fault::Skipped { len, .. } => json!({"kind": "skipped", "len": len}),
            Fault::BadFrame { error, .. } => {
                json!({"kind": "bad_frame", "error": error.to_string()})
            }
            Fault::Unknown { class, id, .. } => {
                json!({"kind": "unknown", "class": class, "id": id})
            }
            Fault::InvalidPayload { error, .. } => {
                json!({"kind": "invalid_payload", "error": error.to_string()})
            }
            _ => json!({"kind": "other"}),
        };
        if let (Some(obj), Value::Object(extra)) = (value.as_object_mut(), what) {
            obj.extend(extra);
        }
        value
    };
    let report = json!({
        "bytes": total,
        "span_s": span as f64 / 1e6,
        "messages": messages.iter().map(|(kind, m)| (kind.name().to_owned(), json!({
            "count": m.count,
            "rate_hz": m.rate(),
            "first_timestamp_us": m.first,
            "last_timestamp_us": m.first.map(|_| m.last),
            "median_period_us": m.median,
            "gaps": m.gaps,
            "largest_gap_us": (m.gaps > 0).then_some(m.largest_gap),
        }))).collect::<serde_json::Map<String, Value>>(),
        "utc": {
            "valid_share": utc_share,
            "first_valid": first_utc.map(iso),
        },
        "gnss": {
            "gps1Pos": gnss,
            "with_fix": gnss_fixed,
            "fix_share": if gnss > 0 { Some(gnss_fixed as f64 / gnss as f64) } else { None },
            "best_type": best.map(|b| format!("{b:?}")),
        },
        "faults": {
            "frames": stats.frames,
            "records": stats.records,
            "bad_crc": stats.bad_crc,
            "bad_etx": stats.bad_etx,
            "bad_length": stats.bad_length,
            "unknown": stats.unknown,
            "invalid_payload": stats.invalid_payload,
            "truncated": stats.truncated,
            "skipped_bytes": stats.skipped_bytes,
            "listed": faults.iter().take(FAULTS_SHOWN).map(fault_json).collect::<Vec<_>>(),
            "not_listed": (faults.len().saturating_sub(FAULTS_SHOWN)) as u64 + faults_dropped,
        },
    });
    if args.json {
        println!("{report}");
        return Ok(());
    }
    println!(
        "{} bytes, {} frames, {} records over {:.3} s",
        total,
        stats.frames,
        stats.records,
        span as f64 / 1e6
    );
    println!(
        "{:<18} {:>10} {:>10} {:>14} {:>14} {:>6} {:>12}",
        "message", "count", "rate Hz", "first us", "last us", "gaps", "largest us"
    );
    for (kind, m) in &messages {
        println!(
            "{:<18} {:>10} {:>10} {:>14} {:>14} {:>6} {:>12}",
            kind.name(),
            m.count,
            m.rate().map_or("-".to_owned(), |r| format!("{r:.3}")),
            m.first.map_or("-".to_owned(), |f| f.to_string()),
            m.first.map_or("-".to_owned(), |_| m.last.to_string()),
            m.gaps,
            if m.gaps > 0 {
                m.largest_gap.to_string()
            } else {
                "-".to_owned()
            },
        );
    }
    println!(
        "UTC: valid {:.1}% of the time, first valid {}",
        utc_share * 100.0,
        first_utc.map_or("never".to_owned(), iso)
    );
    if gnss > 0 {
        println!(
            "GNSS: {gnss_fixed} of {gnss} gps1Pos with a fix ({:.1}%), best {}",
            gnss_fixed as f64 * 100.0 / gnss as f64,
            best.map_or("none".to_owned(), |b| format!("{b:?}"))
        );
    } else {
        println!("GNSS: no gps1Pos");
    }
    println!(
        "faults: {} bad CRC, {} truncated, {} unknown, {} invalid, {} skipped bytes",
        stats.bad_crc, stats.truncated, stats.unknown, stats.invalid_payload, stats.skipped_bytes
    );
    for fault in faults.iter().take(FAULTS_SHOWN) {
        let (file, offset) = input.locate(fault.offset());
        let what = match fault {
            Fault::Skipped { len, .. } => format!("{len} bytes skipped"),
            Fault::BadFrame { error, .. } => format!("frame refused: {error}"),
            Fault::Unknown { class, id, .. } => {
                format!("unknown message class {class:#04x} id {id}")
            }
            Fault::InvalidPayload { error, .. } => format!("invalid payload: {error}"),
            _ => "other".to_owned(),
        };
        println!("  at {} ({file} +{offset}): {what}", fault.offset());
    }
    Ok(())
}
