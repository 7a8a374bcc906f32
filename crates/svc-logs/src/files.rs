//! The tables as files: CSV ([`CsvWriter`]) and, with the `parquet` feature,
//! Parquet; one file per message, `DIR/<message>.csv` or `DIR/<message>.parquet`
//! ([`TableFiles`]), each written as `<name>.part` and renamed once complete.
//!
//! CSV: comma separated, `\n` line ends; line 1 the titles, line 2 the units in
//! parentheses (`(us)`, `(deg)`, as `sbgBasicLogger` writes its second line), then a
//! line per row. Numbers in the shortest form that reads back to the same value
//! (`ryu`, `itoa`): a Float32 column as an f32, NaN as `NaN`; a null is an empty
//! field; `utcTime` in ISO 8601 (`2026-11-29T04:24:20.123456Z`).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use arrow::array::{
    Array, Float32Array, Float64Array, Int64Array, TimestampMicrosecondArray, UInt8Array,
    UInt16Array, UInt32Array, UInt64Array,
};
use arrow::datatypes::{DataType, TimeUnit};
use arrow::record_batch::RecordBatch;

use crate::MessageKind;

/// Writes batches of one table as CSV (see the [module](self)).
#[derive(Debug)]
pub struct CsvWriter<W: Write> {
    out: BufWriter<W>,
    header: bool,
    line: Vec<u8>,
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
            line: Vec::with_capacity(1024),
        }
    }

    /// Writes a batch; the header lines before the first.
    ///
    /// # Errors
    ///
    /// Writing failed.
    pub fn write(&mut self, batch: &RecordBatch) -> io::Result<()> {
        let schema = batch.schema();
        if !self.header {
            let titles: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            writeln!(self.out, "{}", titles.join(","))?;
            let units: Vec<String> = schema
                .fields()
                .iter()
                .map(|f| {
                    format!(
                        "({})",
                        f.metadata().get("unit").map_or("na", String::as_str)
                    )
                })
                .collect();
            writeln!(self.out, "{}", units.join(","))?;
            self.header = true;
        }
        let cols: Vec<Col<'_>> = batch.columns().iter().map(|a| col(a.as_ref())).collect();
        let mut ints = itoa::Buffer::new();
        let mut floats = ryu::Buffer::new();
        for row in 0..batch.num_rows() {
            self.line.clear();
            for (i, c) in cols.iter().enumerate() {
                if i > 0 {
                    self.line.push(b',');
                }
                let line = &mut self.line;
                match c {
                    Col::I64(a) => push_int(line, &mut ints, a, row),
                    Col::U8(a) => push_int(line, &mut ints, a, row),
                    Col::U16(a) => push_int(line, &mut ints, a, row),
                    Col::U32(a) => push_int(line, &mut ints, a, row),
                    Col::U64(a) => push_int(line, &mut ints, a, row),
                    Col::F32(a) => {
                        if a.is_valid(row) {
                            push_f32(line, &mut floats, a.value(row));
                        }
                    }
                    Col::F64(a) => {
                        if a.is_valid(row) {
                            push_f64(line, &mut floats, a.value(row));
                        }
                    }
                    Col::Utc(a) => {
                        if a.is_valid(row) {
                            push_iso8601(line, a.value(row));
                        }
                    }
                    Col::Other => {}
                }
            }
            self.line.push(b'\n');
            self.out.write_all(&self.line)?;
        }
        Ok(())
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
    a: &arrow::array::PrimitiveArray<T>,
    row: usize,
) where
    T: arrow::datatypes::ArrowPrimitiveType,
    T::Native: itoa::Integer,
{
    if a.is_valid(row) {
        line.extend_from_slice(buf.format(a.value(row)).as_bytes());
    }
}

fn push_f32(line: &mut Vec<u8>, buf: &mut ryu::Buffer, v: f32) {
    if v.is_finite() {
        line.extend_from_slice(trim(buf.format_finite(v)).as_bytes());
    } else {
        line.extend_from_slice(non_finite(f64::from(v)));
    }
}

fn push_f64(line: &mut Vec<u8>, buf: &mut ryu::Buffer, v: f64) {
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

/// µs since 1970 as `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
fn push_iso8601(line: &mut Vec<u8>, micros: i64) {
    let seconds = micros.div_euclid(1_000_000);
    let frac = micros.rem_euclid(1_000_000);
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

enum Open {
    Csv(CsvWriter<File>),
    #[cfg(feature = "parquet")]
    Parquet(Box<parquet::arrow::ArrowWriter<File>>),
}

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

/// One file per message in a folder, each written as `.part` and renamed by
/// [`finish`](Self::finish); dropped unfinished (an error, a signal), the `.part`
/// files are removed.
pub struct TableFiles {
    dir: PathBuf,
    format: Format,
    open: HashMap<MessageKind, (PathBuf, Open)>,
    order: Vec<MessageKind>,
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
        })
    }

    /// The final path of a message's file.
    #[must_use]
    pub fn path(&self, kind: MessageKind) -> PathBuf {
        self.dir
            .join(format!("{}.{}", kind.name(), self.format.extension()))
    }

    /// Appends a batch of a message's table.
    ///
    /// # Errors
    ///
    /// Writing failed.
    pub fn write(&mut self, kind: MessageKind, batch: &RecordBatch) -> Result<(), FilesError> {
        if !self.open.contains_key(&kind) {
            let part = part_path(&self.path(kind));
            let file = File::create(&part).map_err(|source| FilesError::Io {
                path: part.clone(),
                source,
            })?;
            let open = match self.format {
                Format::Csv => Open::Csv(CsvWriter::new(file)),
                #[cfg(feature = "parquet")]
                Format::Parquet => {
                    let props = parquet::file::properties::WriterProperties::builder()
                        .set_compression(parquet::basic::Compression::SNAPPY)
                        .build();
                    let writer =
                        parquet::arrow::ArrowWriter::try_new(file, batch.schema(), Some(props))
                            .map_err(|source| FilesError::Parquet {
                                path: part.clone(),
                                source,
                            })?;
                    Open::Parquet(Box::new(writer))
                }
            };
            self.open.insert(kind, (part, open));
            self.order.push(kind);
        }
        let Some((part, open)) = self.open.get_mut(&kind) else {
            return Ok(());
        };
        match open {
            Open::Csv(w) => w.write(batch).map_err(|source| FilesError::Io {
                path: part.clone(),
                source,
            }),
            #[cfg(feature = "parquet")]
            Open::Parquet(w) => w.write(batch).map_err(|source| FilesError::Parquet {
                path: part.clone(),
                source,
            }),
        }
    }

    /// Closes every file and renames it to its final name; the paths written.
    ///
    /// # Errors
    ///
    /// Writing or renaming failed (the `.part` files are then removed).
    pub fn finish(mut self) -> Result<Vec<PathBuf>, FilesError> {
        let mut written = Vec::new();
        for kind in std::mem::take(&mut self.order) {
            let Some((part, open)) = self.open.remove(&kind) else {
                continue;
            };
            let closed = match open {
                Open::Csv(w) => {
                    w.finish()
                        .and_then(|f| f.sync_all())
                        .map_err(|source| FilesError::Io {
                            path: part.clone(),
                            source,
                        })
                }
                #[cfg(feature = "parquet")]
                Open::Parquet(w) => w.close().map(|_| ()).map_err(|source| FilesError::Parquet {
                    path: part.clone(),
                    source,
                }),
            };
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
        self.open.values().map(|(part, _)| part.clone()).collect()
    }
}

impl Drop for TableFiles {
    fn drop(&mut self) {
        for (part, _) in self.open.values() {
            let _ = std::fs::remove_file(part);
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

    #[test]
    fn iso8601_of_known_instants() {
        let mut line = Vec::new();
        push_iso8601(&mut line, 0);
        line.push(b' ');
        push_iso8601(&mut line, 1_709_164_800_000_001);
        assert_eq!(
            String::from_utf8(line).unwrap(),
            "1970-01-01T00:00:00.000000Z 2024-02-29T00:00:00.000001Z"
        );
    }
}
