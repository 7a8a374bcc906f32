//! The tables as files: CSV ([`CsvWriter`]) and, with the `parquet` feature,
//! Parquet; one file per message, `DIR/<message>.csv` or `DIR/<message>.parquet`
//! ([`TableFiles`]), each written as `<name>.part` and renamed once complete, each
//! batch made into its file's bytes on a thread of its own.
//!
//! CSV: comma separated, `\n` line ends; line 1 the titles, line 2 the units in
//! parentheses (`(us)`, `(deg)`, as `sbgBasicLogger` writes its second line), then a
//! line per row. Numbers in the shortest form that reads back to the same value
//! (`zmij`, `itoa`): a Float32 column as an f32, NaN as `NaN`; a null is an empty
//! field; `utcTime` in ISO 8601 (`2026-11-29T04:24:20.123456Z`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError, mpsc};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_array::{
    Array, Float32Array, Float64Array, Int64Array, TimestampMicrosecondArray, UInt8Array,
    UInt16Array, UInt32Array, UInt64Array,
};
use arrow_schema::{DataType, TimeUnit};

use crate::MessageKind;

/// Writes batches of one table as CSV (see the [module](self)).
#[derive(Debug)]
pub struct CsvWriter<W: Write> {
    out: BufWriter<W>,
    header: bool,
    text: Vec<u8>,
}

enum Col<'a> {
    I64(&'a Int64Array),
    F32(&'a Float32Array),
    F64(&'a Float64Array),
    U8(&'a UInt8Array),
    U16(&'a UInt16Array),
    U32(&'a UInt32Array),
    U64(&'a UInt64Array),
    Utc(&'a TimestampMicrosecondArray),
    Other,
}

impl<W: Write> CsvWriter<W> {
    /// A writer to `out` (buffered here).
    pub fn new(out: W) -> CsvWriter<W> {
        CsvWriter {
            out: BufWriter::with_capacity(256 * 1024, out),
            header: false,
            text: Vec::new(),
        }
    }

    /// Writes a batch; the header lines before the first.
    ///
    /// # Errors
    ///
    /// Writing failed.
    pub fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        self.text.clear();
        if !self.header {
            csv_header(batch, &mut self.text);
            self.header = true;
        }
        csv_rows(batch, &mut self.text);
        self.out.write_all(&self.text)
    }

    /// Flushes and returns the inner writer.
    ///
    /// # Errors
    ///
    /// Flushing failed.
    pub fn finish(self) -> io::Result<W> {
        self.out
            .into_inner()
            .map_err(io::IntoInnerError::into_error)
    }
}

/// The two header lines of a batch's table: titles, then units in parentheses.
fn csv_header(batch: &RecordBatch, out: &mut Vec<u8>) {
    let schema = batch.schema();
    for (i, field) in schema.fields().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(field.name().as_bytes());
    }
    out.push(b'\n');
    for (i, field) in schema.fields().iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        let unit = field.metadata().get("unit").map_or("na", String::as_str);
        out.push(b'(');
        out.extend_from_slice(unit.as_bytes());
        out.push(b')');
    }
    out.push(b'\n');
}

/// The lines of a batch's rows.
fn csv_rows(batch: &RecordBatch, out: &mut Vec<u8>) {
    let cols: Vec<Col<'_>> = batch.columns().iter().map(|a| col(a.as_ref())).collect();
    let mut ints = itoa::Buffer::new();
    let mut floats = zmij::Buffer::new();
    let mut iso = Iso::default();
    // About as many bytes as the numbers' shortest forms take.
    out.reserve(batch.num_rows() * (cols.len() * 12 + 16));
    for row in 0..batch.num_rows() {
        for (i, c) in cols.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            match c {
                Col::I64(a) => push_int(out, &mut ints, a, row),
                Col::U8(a) => push_int(out, &mut ints, a, row),
                Col::U16(a) => push_int(out, &mut ints, a, row),
                Col::U32(a) => push_int(out, &mut ints, a, row),
                Col::U64(a) => push_int(out, &mut ints, a, row),
                Col::F32(a) => {
                    if a.is_valid(row) {
                        push_f32(out, &mut floats, a.value(row));
                    }
                }
                Col::F64(a) => {
                    if a.is_valid(row) {
                        push_f64(out, &mut floats, a.value(row));
                    }
                }
                Col::Utc(a) => {
                    if a.is_valid(row) {
                        iso.push(out, a.value(row));
                    }
                }
                Col::Other => {}
            }
        }
        out.push(b'\n');
    }
}

fn col(array: &dyn Array) -> Col<'_> {
    let any = array.as_any();
    let found = match array.data_type() {
        DataType::Int64 => any.downcast_ref().map(Col::I64),
        DataType::Float32 => any.downcast_ref().map(Col::F32),
        DataType::Float64 => any.downcast_ref().map(Col::F64),
        DataType::UInt8 => any.downcast_ref().map(Col::U8),
        DataType::UInt16 => any.downcast_ref().map(Col::U16),
        DataType::UInt32 => any.downcast_ref().map(Col::U32),
        DataType::UInt64 => any.downcast_ref().map(Col::U64),
        DataType::Timestamp(TimeUnit::Microsecond, _) => any.downcast_ref().map(Col::Utc),
        _ => None,
    };
    found.unwrap_or(Col::Other)
}

fn push_int<T>(
    line: &mut Vec<u8>,
    buf: &mut itoa::Buffer,
    a: &arrow_array::PrimitiveArray<T>,
    row: usize,
) where
    T: arrow_array::types::ArrowPrimitiveType,
    T::Native: itoa::Integer,
{
    if a.is_valid(row) {
        line.extend_from_slice(buf.format(a.value(row)).as_bytes());
    }
}

fn push_f32(line: &mut Vec<u8>, buf: &mut zmij::Buffer, v: f32) {
    if v.is_finite() {
        line.extend_from_slice(trim(buf.format_finite(v)).as_bytes());
    } else {
        line.extend_from_slice(non_finite(f64::from(v)));
    }
}

fn push_f64(line: &mut Vec<u8>, buf: &mut zmij::Buffer, v: f64) {
    if v.is_finite() {
        line.extend_from_slice(trim(buf.format_finite(v)).as_bytes());
    } else {
        line.extend_from_slice(non_finite(v));
    }
}

/// `1.0` as `1`.
fn trim(s: &str) -> &str {
    s.strip_suffix(".0").unwrap_or(s)
}

fn non_finite(v: f64) -> &'static [u8] {
    if v.is_nan() {
        b"NaN"
    } else if v > 0.0 {
        b"inf"
    } else {
        b"-inf"
    }
}

/// Writes µs since 1970 as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, remembering the text of
/// the last second written (rows come many to a second).
#[derive(Default)]
struct Iso {
    /// The second and its text up to the `.`, once one was written.
    last: Option<(i64, [u8; 20])>,
}

impl Iso {
    fn push(&mut self, line: &mut Vec<u8>, micros: i64) {
        let seconds = micros.div_euclid(1_000_000);
        let head = match self.last {
            Some((second, head)) if second == seconds => head,
            _ => {
                let Some(head) = second_text(seconds) else {
                    push_iso8601(line, micros);
                    return;
                };
                self.last = Some((seconds, head));
                head
            }
        };
        let mut frac = *b"000000Z";
        put_digits(&mut frac[..6], micros.rem_euclid(1_000_000).unsigned_abs());
        line.extend_from_slice(&head);
        line.extend_from_slice(&frac);
    }
}

/// `YYYY-MM-DDTHH:MM:SS.` of a second since 1970; `None` for a year outside 0-9999.
fn second_text(seconds: i64) -> Option<[u8; 20]> {
    let days = seconds.div_euclid(86_400);
    let sod = seconds.rem_euclid(86_400).unsigned_abs();
    let (y, m, d) = civil_from_days(days);
    let year @ 0..=9999 = u64::try_from(y).ok()? else {
        return None;
    };
    let mut text = *b"0000-00-00T00:00:00.";
    // Every value is within its field (the date's by `civil_from_days`).
    let fields = [
        (0..4, year),
        (5..7, m.unsigned_abs()),
        (8..10, d.unsigned_abs()),
        (11..13, sod / 3600),
        (14..16, (sod / 60) % 60),
        (17..19, sod % 60),
    ];
    for (range, value) in fields {
        put_digits(text.get_mut(range).unwrap_or_default(), value);
    }
    Some(text)
}

/// µs since 1970 as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (a year outside 0-9999 as many
/// digits as it takes, with its sign).
fn push_iso8601(line: &mut Vec<u8>, micros: i64) {
    let seconds = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
    if let Some(head) = second_text(seconds) {
        let mut frac_text = *b"000000Z";
        put_digits(&mut frac_text[..6], frac.unsigned_abs());
        line.extend_from_slice(&head);
        line.extend_from_slice(&frac_text);
        return;
    }
    let days = seconds.div_euclid(86_400);
    let sod = seconds.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let text = format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}Z",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    );
    line.extend_from_slice(text.as_bytes());
}

/// The last digits of `value` in `out`, zero padded.
fn put_digits(out: &mut [u8], mut value: u64) {
    for digit in out.iter_mut().rev() {
        // A decimal digit.
        *digit = b'0' + (value % 10) as u8;
        value /= 10;
    }
}

/// A proleptic Gregorian date from days since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The format of [`TableFiles`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CSV (see the [module](self)).
    Csv,
    /// Parquet, Snappy compressed (with the `parquet` feature).
    #[cfg(feature = "parquet")]
    Parquet,
}

impl Format {
    /// The file extension.
    #[must_use]
    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            #[cfg(feature = "parquet")]
            Format::Parquet => "parquet",
        }
    }
}

/// A Parquet file's writer, which takes its batches one after the other.
#[cfg(feature = "parquet")]
type ParquetWriter = Box<parquet::arrow::ArrowWriter<File>>;

/// Encoded bytes of a Parquet row group, about: a file's writer holds the row group
/// being made in memory, so this bounds its memory (its rows are as many as fit,
/// 1 Mi at most).
#[cfg(feature = "parquet")]
pub const PARQUET_ROW_GROUP_BYTES: usize = 16 << 20;

/// Bytes of a column's dictionary page in Parquet, at most, before its values are
/// written plain.
#[cfg(feature = "parquet")]
pub const PARQUET_DICTIONARY_BYTES: usize = 128 << 10;

/// Errors of [`TableFiles`].
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilesError {
    /// A file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The Parquet writer failed.
    #[cfg(feature = "parquet")]
    #[error("{path}: {source}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// Why.
        source: parquet::errors::ParquetError,
    },
}

/// How a Parquet file stands: its writer at hand, or the job writing its last
/// batch, which hands the writer back.
#[cfg(feature = "parquet")]
enum Slot {
    Idle(ParquetWriter),
    Busy(JoinHandle<Result<ParquetWriter, FilesError>>),
}

#[cfg(feature = "parquet")]
impl Slot {
    /// The writer, once the batches given to it are written.
    fn wait(self, part: &Path) -> Result<ParquetWriter, FilesError> {
        match self {
            Slot::Idle(writer) => Ok(writer),
            Slot::Busy(job) => job.join().unwrap_or_else(|_| Err(stopped(part))),
        }
    }
}

/// The error of a writing thread that panicked.
fn stopped(part: &Path) -> FilesError {
    FilesError::Io {
        path: part.to_owned(),
        source: io::Error::other("the thread writing the file stopped"),
    }
}

/// A CSV file: each batch's text is made by a job of its own and written at its place
/// in the file, which the lengths of the earlier batches' texts give, so that the texts
/// of successive batches are made and copied into the file at the same time.
struct CsvFile {
    file: Arc<File>,
    /// Where the text of the last batch given ends, once its job knows it (`Err`: that
    /// job or an earlier one failed).
    end: mpsc::Receiver<u64>,
    /// The jobs still running or not yet joined, oldest first.
    jobs: Vec<JoinHandle<Result<(), FilesError>>>,
}

impl CsvFile {
    fn new(file: File) -> CsvFile {
        let (start, end) = mpsc::sync_channel(1);
        // The first batch's text starts the file.
        let _ = start.send(0);
        CsvFile {
            file: Arc::new(file),
            end,
            jobs: Vec::new(),
        }
    }

    /// Joins the jobs that ended; the first error among them.
    fn reap(&mut self, part: &Path) -> Result<(), FilesError> {
        let mut result = Ok(());
        let mut running = Vec::with_capacity(self.jobs.len());
        for job in self.jobs.drain(..) {
            if job.is_finished() {
                let ended = job.join().unwrap_or_else(|_| Err(stopped(part)));
                if result.is_ok() {
                    result = ended;
                }
            } else {
                running.push(job);
            }
        }
        self.jobs = running;
        result
    }

    /// Waits for every job; the first error among them.
    fn wait(&mut self, part: &Path) -> Result<(), FilesError> {
        let mut result = Ok(());
        for job in self.jobs.drain(..) {
            let ended = job.join().unwrap_or_else(|_| Err(stopped(part)));
            if result.is_ok() {
                result = ended;
            }
        }
        result
    }
}

/// A message's file being written.
enum Writer {
    Csv(CsvFile),
    /// `None` only while a batch is being handed over.
    #[cfg(feature = "parquet")]
    Parquet(Option<Slot>),
}

/// A message's file being written.
struct Entry {
    part: PathBuf,
    writer: Writer,
    /// Whether the CSV header lines were written (with the first batch).
    header: bool,
}

/// How many batches may be in the jobs' hands at once (at least 2).
fn max_jobs() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2)
        * 2
}

/// Counts the batches in the jobs' hands, so that a fast reader waits for the
/// writers instead of piling batches up in memory.
#[derive(Debug, Default)]
struct Budget {
    used: Mutex<usize>,
    freed: Condvar,
}

impl Budget {
    /// Waits for room for one more batch, and takes it.
    fn take(self: &Arc<Budget>, max: usize) -> Ticket {
        let mut used = self.used.lock().unwrap_or_else(PoisonError::into_inner);
        while *used >= max {
            used = self
                .freed
                .wait(used)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *used += 1;
        Ticket(self.clone())
    }
}

/// The room of one batch, given back when its job ends (however it ends).
struct Ticket(Arc<Budget>);

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut used = self.0.used.lock().unwrap_or_else(PoisonError::into_inner);
        *used = used.saturating_sub(1);
        self.0.freed.notify_all();
    }
}

/// One file per message in a folder, each written as `.part` and renamed by
/// [`finish`](Self::finish); dropped unfinished (an error, a signal), the `.part`
/// files are removed.
///
/// Each batch is turned into its file's bytes (CSV text, Parquet pages) and written
/// on a thread of its own while the caller goes on, on every core: the CSV text of
/// the batches of one file is made at the same time and written in order; a
/// Parquet file takes its batches one after the other. At most as many batches as
/// the machine has cores (2 at least) are in hand: [`write`](Self::write) waits
/// for room beyond that. An error writing a file is returned by a later `write` to
/// it, or by `finish`.
pub struct TableFiles {
    dir: PathBuf,
    format: Format,
    open: HashMap<MessageKind, Entry>,
    order: Vec<MessageKind>,
    budget: Arc<Budget>,
    max_jobs: usize,
}

impl std::fmt::Debug for TableFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TableFiles")
            .field("dir", &self.dir)
            .field("format", &self.format)
            .field("order", &self.order)
            .finish_non_exhaustive()
    }
}

impl TableFiles {
    /// Files in `dir` (created if missing).
    ///
    /// # Errors
    ///
    /// The folder could not be created.
    pub fn new(dir: &Path, format: Format) -> Result<TableFiles, FilesError> {
        std::fs::create_dir_all(dir).map_err(|source| FilesError::Io {
            path: dir.to_owned(),
            source,
        })?;
        Ok(TableFiles {
            dir: dir.to_owned(),
            format,
            open: HashMap::new(),
            order: Vec::new(),
            budget: Arc::default(),
            max_jobs: max_jobs(),
        })
    }

    /// The final path of a message's file.
    #[must_use]
    pub fn path(&self, kind: MessageKind) -> PathBuf {
        self.dir
            .join(format!("{}.{}", kind.name(), self.format.extension()))
    }

    /// Appends a batch of a message's table (written on another thread: see the
    /// [type](Self)).
    ///
    /// # Errors
    ///
    /// Creating the file failed, or writing an earlier batch to it did.
    pub fn write(&mut self, kind: MessageKind, batch: &RecordBatch) -> Result<(), FilesError> {
        if !self.open.contains_key(&kind) {
            let entry = self.create(kind, batch)?;
            self.open.insert(kind, entry);
            self.order.push(kind);
        }
        let ticket = self.budget.take(self.max_jobs);
        let Some(entry) = self.open.get_mut(&kind) else {
            return Ok(());
        };
        let header = !entry.header;
        entry.header = true;
        let part = entry.part.clone();
        let batch = batch.clone();
        match &mut entry.writer {
            Writer::Csv(csv) => {
                // An earlier job's error, now.
                csv.reap(&part)?;
                let (done, end) = mpsc::sync_channel(1);
                let start = std::mem::replace(&mut csv.end, end);
                let file = csv.file.clone();
                let job = std::thread::Builder::new()
                    .name(format!("svc-logs {kind}"))
                    .spawn(move || {
                        let _ticket = ticket;
                        write_text(&file, &batch, header, &start, &done, &part)
                    })
                    .map_err(|source| FilesError::Io {
                        path: entry.part.clone(),
                        source,
                    })?;
                csv.jobs.push(job);
            }
            #[cfg(feature = "parquet")]
            Writer::Parquet(slot) => {
                let previous = match slot.take() {
                    // A job done: its error, if any, now.
                    Some(Slot::Busy(job)) if job.is_finished() => {
                        Slot::Idle(Slot::Busy(job).wait(&part)?)
                    }
                    Some(previous) => previous,
                    None => return Ok(()),
                };
                let job = std::thread::Builder::new()
                    .name(format!("svc-logs {kind}"))
                    .spawn(move || {
                        let _ticket = ticket;
                        let mut writer = previous.wait(&part)?;
                        writer
                            .write(&batch)
                            .map_err(|source| FilesError::Parquet { path: part, source })?;
                        Ok(writer)
                    })
                    .map_err(|source| FilesError::Io {
                        path: entry.part.clone(),
                        source,
                    })?;
                *slot = Some(Slot::Busy(job));
            }
        }
        Ok(())
    }

    /// Creates a message's `.part` file and its writer.
    fn create(&self, kind: MessageKind, batch: &RecordBatch) -> Result<Entry, FilesError> {
        let part = part_path(&self.path(kind));
        let file = File::create(&part).map_err(|source| FilesError::Io {
            path: part.clone(),
            source,
        })?;
        let writer = match self.format {
            Format::Csv => Writer::Csv(CsvFile::new(file)),
            #[cfg(feature = "parquet")]
            Format::Parquet => {
                // A small dictionary page: a column of few values (status words,
                // counts, a constant) is still dictionary encoded, a measurement
                // that never repeats falls back to plain values early, so that the
                // encoders do not hold a large dictionary for each column.
                let props = parquet::file::properties::WriterProperties::builder()
                    .set_compression(parquet::basic::Compression::SNAPPY)
                    .set_max_row_group_bytes(Some(PARQUET_ROW_GROUP_BYTES))
                    .set_dictionary_page_size_limit(PARQUET_DICTIONARY_BYTES)
                    .build();
                let writer =
                    parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))
                        .map_err(|source| FilesError::Parquet {
                            path: part.clone(),
                            source,
                        })?;
                Writer::Parquet(Some(Slot::Idle(Box::new(writer))))
            }
        };
        #[cfg(not(feature = "parquet"))]
        let _ = batch;
        Ok(Entry {
            part,
            writer,
            header: false,
        })
    }

    /// Closes every file and renames it to its final name; the paths written.
    ///
    /// # Errors
    ///
    /// Writing or renaming failed (the `.part` files are then removed).
    pub fn finish(mut self) -> Result<Vec<PathBuf>, FilesError> {
        let mut written = Vec::new();
        for kind in std::mem::take(&mut self.order) {
            let Some(entry) = self.open.remove(&kind) else {
                continue;
            };
            let Entry {
                part, mut writer, ..
            } = entry;
            let closed = close(&mut writer, &part);
            let done = closed.and_then(|()| {
                let path = self.path(kind);
                std::fs::rename(&part, &path)
                    .map(|()| path)
                    .map_err(|source| FilesError::Io {
                        path: part.clone(),
                        source,
                    })
            });
            match done {
                Ok(path) => written.push(path),
                Err(error) => {
                    let _ = std::fs::remove_file(&part);
                    return Err(error);
                }
            }
        }
        Ok(written)
    }

    /// The `.part` files being written.
    #[must_use]
    pub fn part_files(&self) -> Vec<PathBuf> {
        self.open.values().map(|entry| entry.part.clone()).collect()
    }
}

/// Writes a batch's CSV text at its place in the file: made first (at the same time as
/// the earlier batches' texts), then written where the earlier batch's text ends
/// (`start`), once that is known; where this one ends goes to `done` first, so that
/// the next batch's text is copied into the file at the same time.
fn write_text(
    file: &File,
    batch: &RecordBatch,
    header: bool,
    start: &mpsc::Receiver<u64>,
    done: &mpsc::SyncSender<u64>,
    part: &Path,
) -> Result<(), FilesError> {
    let mut text = Vec::new();
    if header {
        csv_header(batch, &mut text);
    }
    csv_rows(batch, &mut text);
    // No offset: an earlier batch failed, and said so.
    let offset = start.recv().map_err(|_| FilesError::Io {
        path: part.to_owned(),
        source: io::Error::other("an earlier batch could not be written"),
    })?;
    let _ = done.send(offset + text.len() as u64);
    write_all_at(file, &text, offset).map_err(|source| FilesError::Io {
        path: part.to_owned(),
        source,
    })
}

/// Writes all of `bytes` at `offset` of `file`, whatever its cursor.
#[cfg(unix)]
fn write_all_at(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
}

/// Writes all of `bytes` at `offset` of `file` (Windows moves the cursor too: no
/// writer here uses it).
#[cfg(windows)]
fn write_all_at(file: &File, mut bytes: &[u8], mut offset: u64) -> io::Result<()> {
    use std::os::windows::fs::FileExt as _;
    while !bytes.is_empty() {
        match file.seek_write(bytes, offset) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                bytes = &bytes[n..];
                offset += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Closes a file once every batch given is written: flushed to the disk.
fn close(writer: &mut Writer, part: &Path) -> Result<(), FilesError> {
    let file = match writer {
        Writer::Csv(csv) => {
            csv.wait(part)?;
            csv.file.clone()
        }
        #[cfg(feature = "parquet")]
        Writer::Parquet(slot) => {
            let Some(slot) = slot.take() else {
                return Err(FilesError::Io {
                    path: part.to_owned(),
                    source: io::Error::other("an earlier batch could not be written"),
                });
            };
            let file = slot
                .wait(part)?
                .into_inner()
                .map_err(|source| FilesError::Parquet {
                    path: part.to_owned(),
                    source,
                })?;
            Arc::new(file)
        }
    };
    file.sync_all().map_err(|source| FilesError::Io {
        path: part.to_owned(),
        source,
    })
}

impl Drop for TableFiles {
    fn drop(&mut self) {
        for entry in self.open.values_mut() {
            // The jobs still writing end first.
            match &mut entry.writer {
                Writer::Csv(csv) => {
                    let _ = csv.wait(&entry.part);
                }
                #[cfg(feature = "parquet")]
                Writer::Parquet(slot) => {
                    if let Some(slot) = slot.take() {
                        let _ = slot.wait(&entry.part);
                    }
                }
            }
            let _ = std::fs::remove_file(&entry.part);
        }
    }
}

fn part_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".part");
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::records::{EkfNav, ImuData};
    use crate::tables::TableReader;
    use crate::{Record, encode_frame};

    #[test]
    fn the_second_remembered_gives_the_same_text() {
        let mut iso = Iso::default();
        let (mut cached, mut plain) = (Vec::new(), Vec::new());
        // Across seconds, a day, a year; backwards too.
        let start = 1_798_761_598_000_000_i64;
        for micros in (0..40).map(|i| start + i * 123_457).chain([start, -1, 0]) {
            iso.push(&mut cached, micros);
            push_iso8601(&mut plain, micros);
        }
        assert_eq!(String::from_utf8(cached), String::from_utf8(plain));
    }

    #[test]
    fn table_files_write_the_batches_in_order_on_other_threads() {
        let mut log = Vec::new();
        for t in 0..50_u32 {
            let imu = ImuData {
                timestamp: t,
                temperature: t as f32,
                ..ImuData::default()
            };
            log.extend(encode_frame(&Record::ImuData(imu), 0).unwrap());
            if t % 3 == 0 {
                let nav = EkfNav {
                    timestamp: t,
                    undulation: t as f32,
                    ..EkfNav::default()
                };
                log.extend(encode_frame(&Record::EkfNav(nav), 0).unwrap());
            }
        }
        let batches: Vec<_> = TableReader::with_batch_rows(log.as_slice(), 4)
            .collect::<Result<_, _>>()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut files = TableFiles::new(dir.path(), Format::Csv).unwrap();
        let mut expected: HashMap<MessageKind, CsvWriter<Vec<u8>>> = HashMap::new();
        for (kind, batch) in &batches {
            files.write(*kind, batch).unwrap();
            let writer = expected
                .entry(*kind)
                .or_insert_with(|| CsvWriter::new(Vec::new()));
            writer.write(batch).unwrap();
        }
        assert!(!files.part_files().is_empty());
        let written = files.finish().unwrap();
        assert_eq!(written.len(), 2);
        for (kind, writer) in expected {
            let text = std::fs::read(dir.path().join(format!("{kind}.csv"))).unwrap();
            assert_eq!(text, writer.finish().unwrap(), "{kind}");
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    }

    #[test]
    fn iso8601_of_known_instants() {
        let mut line = Vec::new();
        push_iso8601(&mut line, 0);
        line.push(b' ');
        push_iso8601(&mut line, 1_709_164_800_000_001);
        line.push(b' ');
        push_iso8601(&mut line, 1_795_950_059_999_999);
        line.push(b' ');
        push_iso8601(&mut line, -1);
        line.push(b' ');
        push_iso8601(&mut line, 253_402_300_800_000_000);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "1970-01-01T00:00:00.000000Z 2024-02-29T00:00:00.000001Z \
             2026-11-29T11:00:59.999999Z 1969-12-31T23:59:59.999999Z \
             10000-01-01T00:00:00.000000Z"
        );
    }
}
