//! The records as Arrow tables: one table per message, built in bounded batches.
//!
//! [`Tables`] takes records ([`push`](Tables::push)) and hands out a finished
//! [`RecordBatch`] of a message every [`batch_rows`](Tables::batch_rows) rows
//! ([`DEFAULT_BATCH_ROWS`] unless told otherwise), and the rest at
//! [`finish`](Tables::finish): memory holds at most one batch per message, whatever
//! the input's size. [`TableReader`] does the same from any [`Read`].
//!
//! Each table (see [`schema`]):
//!
//! - `timestamp` (`Int64`, µs): the unit's time since power-up. The records carry it
//!   as a u32 that wraps every 71.6 minutes; the tables extend it: each timestamp is
//!   taken as the value nearest to the previous record's (of any message), so a
//!   wrap adds 2³² µs and records slightly out of order stay in order;
//! - then the columns `sbgBasicLogger` writes for the message
//!   ([`columns`](crate::columns::columns)), with its titles, the unit as field
//!   metadata `{"unit": "deg"}`; values as it writes them (angles and rates in
//!   degrees, the clock values of `utcTime` scaled), but in full precision: a real
//!   the record holds as f32 and that the logger writes unconverted is `Float32`,
//!   a value converted (degrees, scaled, the fixed point of `imuShort`) or held as
//!   f64 is `Float64`; status words and counts are unsigned integers of their
//!   width; fields of newer protocol versions that a record lacks are null;
//! - last, `utcTime` (`Timestamp(µs, "UTC")`), null until a `utcTime` record with a
//!   valid UTC (status [`UtcStatus::Initialized`](crate::records::UtcStatus), leap
//!   seconds known) was seen: then `timestamp + (utc − timestamp of that record)`
//!   with the latest such record, i.e. the unit's clock stepped to UTC at each valid
//!   `utcTime` record (rows before the first one stay null).
//!
//! Messages the logger does not write as a table (`diag`, `sessionInfo`,
//! `magCalib`, raw data, satellite lists) have none here either ([`has_table`]):
//! [`Tables::push`] skips them (they still set the clock's wrap tracking).

use std::collections::{HashMap, VecDeque};
use std::io::Read;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, Float32Builder, Float64Builder, Int64Builder, TimestampMicrosecondBuilder,
    UInt8Builder, UInt16Builder, UInt32Builder, UInt64Builder,
};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;

use crate::columns::{self, Column};
use crate::records::{GnssPos, UtcStatus, UtcTime};
use crate::{Fault, LogReader, MessageKind, Record, Stats};

/// Rows of a batch, unless told otherwise.
pub const DEFAULT_BATCH_ROWS: usize = 65_536;

/// Title of the UTC column, the last of every table.
pub const UTC_COLUMN: &str = "utcTime";

const RAD_TO_DEG: f64 = 180.0 / std::f64::consts::PI;

/// Whether the message has a table (the logger writes it as one).
#[must_use]
pub fn has_table(kind: MessageKind) -> bool {
    !columns::columns(kind).is_empty()
}

/// The schema of a message's table; `None` for a message of no table.
#[must_use]
pub fn schema(kind: MessageKind) -> Option<SchemaRef> {
    if !has_table(kind) {
        return None;
    }
    let mut payload = vec![0u8; kind.min_payload_len()];
    // The shortest payload of zeros decodes for every tabled message; make the
    // optional groups present so that every column is declared.
    payload.resize(kind.min_payload_len() + 64, 0);
    let record = crate::decode_kind(kind, &payload).ok()?;
    let mut table = Table::new(kind);
    table.push_row(&record, 0, None);
    Some(table.make_schema())
}

/// The timestamp a record holds (µs since power-up); `None` for the messages that
/// have none (raw data, session information).
#[must_use]
pub fn record_timestamp(record: &Record) -> Option<u32> {
    Some(match record {
        Record::Status(r) => r.timestamp,
        Record::Diag(r) => r.timestamp,
        Record::UtcTime(r) => r.timestamp,
        Record::PtpStatus(r) => r.timestamp,
        Record::ImuData(r) => r.timestamp,
        Record::ImuShort(r) => r.timestamp,
        Record::Mag(r) => r.timestamp,
        Record::MagCalib(r) => r.timestamp,
        Record::EkfEuler(r) => r.timestamp,
        Record::EkfQuat(r) => r.timestamp,
        Record::EkfNav(r) => r.timestamp,
        Record::EkfVelBody(r) => r.timestamp,
        Record::EkfRotAccelBody(r) | Record::EkfRotAccelNed(r) => r.timestamp,
        Record::ShipMotion(r) | Record::ShipMotionHp(r) => r.timestamp,
        Record::Gps1Vel(r) | Record::Gps2Vel(r) => r.timestamp,
        Record::Gps1Pos(r) | Record::Gps2Pos(r) => r.timestamp,
        Record::Gps1Hdt(r) | Record::Gps2Hdt(r) => r.timestamp,
        Record::Gps1Sat(r) | Record::Gps2Sat(r) => r.timestamp,
        Record::OdoVel(r) => r.timestamp,
        Record::DvlBottomTrack(r) | Record::DvlWaterTrack(r) => r.timestamp,
        Record::AirData(r) => r.timestamp,
        Record::Usbl(r) => r.timestamp,
        Record::Depth(r) => r.timestamp,
        Record::EventA(r)
        | Record::EventB(r)
        | Record::EventC(r)
        | Record::EventD(r)
        | Record::EventE(r)
        | Record::EventOutA(r)
        | Record::EventOutB(r) => r.timestamp,
        Record::SessionInfo(_) | Record::Gps1Raw(_) | Record::Gps2Raw(_) | Record::RtcmRaw(_) => {
            return None;
        }
    })
}

/// The UTC time of a `utcTime` record, µs since 1970-01-01 (leap seconds not
/// counted, as Unix time); `None` unless its UTC status is
/// [`UtcStatus::Initialized`] and its date is plausible.
#[must_use]
pub fn utc_micros(utc: &UtcTime) -> Option<i64> {
    if utc.utc_status() != Some(UtcStatus::Initialized) {
        return None;
    }
    if !(1..=12).contains(&utc.month) || !(1..=31).contains(&utc.day) || utc.year < 1980 {
        return None;
    }
    let days = days_from_civil(
        i64::from(utc.year),
        i64::from(utc.month),
        i64::from(utc.day),
    );
    let seconds = days * 86_400
        + i64::from(utc.hour) * 3600
        + i64::from(utc.minute) * 60
        + i64::from(utc.second);
    Some(seconds * 1_000_000 + i64::from(utc.nanosecond) / 1000)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The unit's clock: the extended timestamp and the UTC offset.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    last: Option<(u32, i64)>,
    utc_offset: Option<i64>,
}

impl Clock {
    /// A clock that saw nothing.
    #[must_use]
    pub fn new() -> Clock {
        Clock::default()
    }

    /// Extends a u32 timestamp (see the [module](self)): the value nearest to the
    /// previous one.
    pub fn extend(&mut self, raw: u32) -> i64 {
        let extended = match self.last {
            None => i64::from(raw),
            Some((last_raw, last)) => last + i64::from(raw.wrapping_sub(last_raw).cast_signed()),
        };
        self.last = Some((raw, extended));
        extended
    }

    /// Takes a `utcTime` record (its extended timestamp): a valid one sets the
    /// offset from the unit's time to UTC.
    pub fn observe_utc(&mut self, utc: &UtcTime, extended: i64) {
        if let Some(micros) = utc_micros(utc) {
            self.utc_offset = Some(micros - extended);
        }
    }

    /// UTC of an extended timestamp, µs since 1970, once known.
    #[must_use]
    pub fn utc(&self, extended: i64) -> Option<i64> {
        self.utc_offset.map(|offset| extended + offset)
    }

    /// UTC minus the unit's time, µs, once a valid `utcTime` was seen.
    #[must_use]
    pub fn utc_offset(&self) -> Option<i64> {
        self.utc_offset
    }
}

/// Builds the tables of the records pushed, a batch per message every
/// [`batch_rows`](Self::batch_rows) rows (see the [module](self)).
///
/// ```
/// use svc_logs::{Record, records::EkfNav, tables::Tables};
///
/// let mut tables = Tables::with_batch_rows(2);
/// for t in 0..5 {
///     tables.push(&Record::EkfNav(EkfNav { timestamp: t, ..EkfNav::default() }))?;
/// }
/// tables.finish()?;
/// let rows: Vec<usize> = std::iter::from_fn(|| tables.next_batch()).map(|(_, b)| b.num_rows()).collect();
/// assert_eq!(rows, [2, 2, 1]);
/// # Ok::<(), arrow::error::ArrowError>(())
/// ```
#[derive(Debug)]
pub struct Tables {
    batch_rows: usize,
    /// By the kind's index in [`MessageKind::ALL`].
    tables: Vec<Option<Table>>,
    clock: Clock,
    ready: VecDeque<(MessageKind, RecordBatch)>,
}

impl Default for Tables {
    fn default() -> Self {
        Tables::new()
    }
}

impl Tables {
    /// Tables in batches of [`DEFAULT_BATCH_ROWS`].
    #[must_use]
    pub fn new() -> Tables {
        Tables::with_batch_rows(DEFAULT_BATCH_ROWS)
    }

    /// Tables in batches of `rows` (at least 1).
    #[must_use]
    pub fn with_batch_rows(rows: usize) -> Tables {
        Tables {
            batch_rows: rows.max(1),
            tables: MessageKind::ALL.iter().map(|_| None).collect(),
            clock: Clock::new(),
            ready: VecDeque::new(),
        }
    }

    /// Rows of a full batch.
    #[must_use]
    pub fn batch_rows(&self) -> usize {
        self.batch_rows
    }

    /// The clock (extended timestamps, UTC offset).
    #[must_use]
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    /// Adds a record as a row of its message's table; a batch full is then ready
    /// ([`next_batch`](Self::next_batch)). Records of no table are skipped.
    ///
    /// # Errors
    ///
    /// An Arrow error building a batch (not expected: the columns are built
    /// together).
    pub fn push(&mut self, record: &Record) -> Result<(), ArrowError> {
        let Some(raw) = record_timestamp(record) else {
            return Ok(());
        };
        let extended = self.clock.extend(raw);
        if let Record::UtcTime(utc) = record {
            self.clock.observe_utc(utc, extended);
        }
        let kind = record.kind();
        if !has_table(kind) {
            return Ok(());
        }
        let utc = self.clock.utc(extended);
        let Some(slot) = self.tables.get_mut(kind as usize) else {
            return Ok(());
        };
        let table = slot.get_or_insert_with(|| Table::new(kind));
        table.push_row(record, extended, utc);
        if table.rows >= self.batch_rows {
            let batch = table.finish()?;
            self.ready.push_back((kind, batch));
        }
        Ok(())
    }

    /// The next finished batch, oldest first.
    pub fn next_batch(&mut self) -> Option<(MessageKind, RecordBatch)> {
        self.ready.pop_front()
    }

    /// Finishes the batches being built (of fewer rows than a full one), in the
    /// order of [`MessageKind::ALL`]; they are then ready.
    ///
    /// # Errors
    ///
    /// As [`push`](Self::push).
    pub fn finish(&mut self) -> Result<(), ArrowError> {
        for (kind, slot) in MessageKind::ALL.iter().zip(&mut self.tables) {
            if let Some(table) = slot
                && table.rows > 0
            {
                let batch = table.finish()?;
                self.ready.push_back((*kind, batch));
            }
        }
        Ok(())
    }
}

/// Why a [`TableReader`] stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TableError {
    /// Reading the input failed.
    #[error("reading the log: {0}")]
    Io(#[from] std::io::Error),
    /// Building a batch failed.
    #[error("building a table: {0}")]
    Arrow(#[from] ArrowError),
}

/// Reads a log's tables from any [`Read`]: an iterator of batches, each of one
/// message (see [`Tables`]), memory bounded by a batch per message.
///
/// ```
/// use svc_logs::{Record, encode_frame, records::ImuData, tables::TableReader};
///
/// let mut log = Vec::new();
/// for t in 0..3 {
///     log.extend(encode_frame(&Record::ImuData(ImuData { timestamp: t, ..ImuData::default() }), 0)?);
/// }
/// let mut reader = TableReader::new(log.as_slice());
/// let (kind, batch) = reader.next().expect("a batch")?;
/// assert_eq!((kind.name(), batch.num_rows()), ("imuData", 3));
/// assert_eq!(batch.schema().field(0).name(), "timestamp");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct TableReader<R> {
    reader: LogReader<R>,
    tables: Tables,
    finished: bool,
}

impl<R: Read> TableReader<R> {
    /// A reader of `inner` in batches of [`DEFAULT_BATCH_ROWS`].
    pub fn new(inner: R) -> TableReader<R> {
        TableReader::with_batch_rows(inner, DEFAULT_BATCH_ROWS)
    }

    /// A reader of `inner` in batches of `rows`.
    pub fn with_batch_rows(inner: R, rows: usize) -> TableReader<R> {
        TableReader {
            reader: LogReader::new(inner),
            tables: Tables::with_batch_rows(rows),
            finished: false,
        }
    }

    /// The next batch; `None` at the end.
    ///
    /// # Errors
    ///
    /// [`TableError`].
    pub fn next_batch(&mut self) -> Result<Option<(MessageKind, RecordBatch)>, TableError> {
        loop {
            if let Some(batch) = self.tables.next_batch() {
                return Ok(Some(batch));
            }
            if self.finished {
                return Ok(None);
            }
            match self.reader.next_record()? {
                Some(record) => self.tables.push(&record)?,
                None => {
                    self.finished = true;
                    self.tables.finish()?;
                }
            }
        }
    }

    /// The decoder's counters.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.reader.stats()
    }

    /// The decoder's faults (the first [`MAX_FAULTS`](crate::MAX_FAULTS)).
    #[must_use]
    pub fn faults(&self) -> &[Fault] {
        self.reader.faults()
    }

    /// The tables being built.
    #[must_use]
    pub fn tables(&self) -> &Tables {
        &self.tables
    }
}

impl<R: Read> Iterator for TableReader<R> {
    type Item = Result<(MessageKind, RecordBatch), TableError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch().transpose()
    }
}

// ---------------------------------------------------------------------------------
// One table
// ---------------------------------------------------------------------------------

#[derive(Debug)]
enum Data {
    F32(Float32Builder),
    F64(Float64Builder),
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
}

#[derive(Debug)]
struct Col {
    data: Data,
    nullable: bool,
}

impl Col {
    fn finish(&mut self) -> ArrayRef {
        match &mut self.data {
            Data::F32(b) => Arc::new(b.finish()),
            Data::F64(b) => Arc::new(b.finish()),
            Data::U8(b) => Arc::new(b.finish()),
            Data::U16(b) => Arc::new(b.finish()),
            Data::U32(b) => Arc::new(b.finish()),
            Data::U64(b) => Arc::new(b.finish()),
        }
    }

    fn data_type(&self) -> DataType {
        match &self.data {
            Data::F32(_) => DataType::Float32,
            Data::F64(_) => DataType::Float64,
            Data::U8(_) => DataType::UInt8,
            Data::U16(_) => DataType::UInt16,
            Data::U32(_) => DataType::UInt32,
            Data::U64(_) => DataType::UInt64,
        }
    }
}

#[derive(Debug)]
struct Table {
    kind: MessageKind,
    timestamps: Int64Builder,
    utc: TimestampMicrosecondBuilder,
    cols: Vec<Col>,
    schema: Option<SchemaRef>,
    rows: usize,
}

/// Appends the values of a row, column after column; the columns are made by the
/// first row (their types are the values').
struct Row<'a> {
    cols: &'a mut Vec<Col>,
    i: usize,
}

macro_rules! put {
    ($name:ident, $opt:ident, $t:ty, $variant:ident, $builder:ident) => {
        fn $name(&mut self, v: $t) {
            self.put_option(Some(v), false);
        }
        fn $opt(&mut self, v: Option<$t>) {
            self.put_option(v, true);
        }
    };
}

trait Value: Copy {
    fn new_data() -> Data;
    fn append(v: Option<Self>, data: &mut Data);
}

macro_rules! value {
    ($t:ty, $variant:ident, $builder:ident) => {
        impl Value for $t {
            fn new_data() -> Data {
                Data::$variant($builder::new())
            }
            #[inline]
            fn append(v: Option<Self>, data: &mut Data) {
                if let Data::$variant(b) = data {
                    b.append_option(v);
                }
            }
        }
    };
}

value!(f32, F32, Float32Builder);
value!(f64, F64, Float64Builder);
value!(u8, U8, UInt8Builder);
value!(u16, U16, UInt16Builder);
value!(u32, U32, UInt32Builder);
value!(u64, U64, UInt64Builder);

impl Row<'_> {
    #[inline]
    fn put_option<T: Value>(&mut self, v: Option<T>, nullable: bool) {
        if self.i == self.cols.len() {
            self.cols.push(Col {
                data: T::new_data(),
                nullable,
            });
        }
        if let Some(col) = self.cols.get_mut(self.i) {
            T::append(v, &mut col.data);
        }
        self.i += 1;
    }

    put!(f32, opt_f32, f32, F32, Float32Builder);
    put!(f64, opt_f64, f64, F64, Float64Builder);
    put!(u8, opt_u8, u8, U8, UInt8Builder);
    put!(u16, opt_u16, u16, U16, UInt16Builder);
    put!(u32, opt_u32, u32, U32, UInt32Builder);
    put!(u64, opt_u64, u64, U64, UInt64Builder);

    fn f32s(&mut self, v: &[f32]) {
        for &x in v {
            self.f32(x);
        }
    }

    fn deg(&mut self, rad: f32) {
        self.f64(f64::from(rad) * RAD_TO_DEG);
    }

    fn degs(&mut self, rad: &[f32]) {
        for &x in rad {
            self.deg(x);
        }
    }

    fn opt_deg(&mut self, rad: Option<f32>) {
        self.opt_f64(rad.map(|x| f64::from(x) * RAD_TO_DEG));
    }
}

impl Table {
    fn new(kind: MessageKind) -> Table {
        Table {
            kind,
            timestamps: Int64Builder::new(),
            utc: TimestampMicrosecondBuilder::new().with_timezone("UTC"),
            cols: Vec::new(),
            schema: None,
            rows: 0,
        }
    }

    fn push_row(&mut self, record: &Record, timestamp: i64, utc: Option<i64>) {
        self.timestamps.append_value(timestamp);
        self.utc.append_option(utc);
        let mut row = Row {
            cols: &mut self.cols,
            i: 0,
        };
        write_row(&mut row, record);
        self.rows += 1;
    }

    fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let schema = match &self.schema {
            Some(schema) => schema.clone(),
            None => {
                let schema = self.make_schema();
                self.schema = Some(schema.clone());
                schema
            }
        };
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.cols.len() + 2);
        arrays.push(Arc::new(self.timestamps.finish()));
        arrays.extend(self.cols.iter_mut().map(Col::finish));
        arrays.push(Arc::new(self.utc.finish()));
        self.rows = 0;
        RecordBatch::try_new(schema, arrays)
    }

    fn make_schema(&self) -> SchemaRef {
        let titles: &[Column] = columns::columns(self.kind);
        let unit = |c: &Column| HashMap::from([("unit".to_owned(), c.unit.to_owned())]);
        let mut fields = Vec::with_capacity(self.cols.len() + 2);
        fields.push(
            Field::new(columns::TIMESTAMP.title, DataType::Int64, false)
                .with_metadata(unit(&columns::TIMESTAMP)),
        );
        for (i, col) in self.cols.iter().enumerate() {
            let column = titles.get(i + 1).copied().unwrap_or(Column {
                title: "unnamed",
                unit: "na",
            });
            fields.push(
                Field::new(column.title, col.data_type(), col.nullable)
                    .with_metadata(unit(&column)),
            );
        }
        fields.push(
            Field::new(
                UTC_COLUMN,
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
                true,
            )
            .with_metadata(HashMap::from([("unit".to_owned(), "us".to_owned())])),
        );
        let mut metadata = HashMap::new();
        metadata.insert("message".to_owned(), self.kind.name().to_owned());
        Arc::new(Schema::new_with_metadata(fields, metadata))
    }
}

/// The values of a record's row after its timestamp, in the order of
/// [`columns`](crate::columns::columns).
#[allow(clippy::too_many_lines)]
fn write_row(w: &mut Row<'_>, record: &Record) {
    match record {
        Record::Status(r) => {
            w.u16(r.general_status);
            w.u32(r.com_status);
            w.u16(r.com_status2);
            w.u32(r.aiding_status);
            w.opt_u8(r.cpu_usage);
        }
        Record::UtcTime(r) => {
            w.u16(r.status);
            w.u32(r.gps_tow);
            w.u16(r.year);
            w.u8(r.month);
            w.u8(r.day);
            w.u8(r.hour);
            w.u8(r.minute);
            w.u8(r.second);
            w.u32(r.nanosecond);
            w.opt_f64(r.clk_bias_std.map(|v| f64::from(v) * 1e6));
            w.opt_f64(r.clk_sf_error_std.map(|v| f64::from(v) * 1e9));
            w.opt_f64(r.clk_residual_error.map(|v| f64::from(v) * 1e6));
        }
        Record::PtpStatus(r) => {
            w.u8((r.status & 0x7) as u8);
            w.u8(((r.status >> 8) & 0x7) as u8);
            w.f64(r.time_scale_offset);
            w.u64(r.local_clock_identity);
            w.u8(r.local_clock_priority1);
            w.u8(r.local_clock_priority2);
            w.u8(r.local_clock_class);
            w.u8(r.local_clock_accuracy);
            w.u16(r.local_clock_log2_variance);
            w.u8(r.local_clock_time_source);
            w.u64(r.master_clock_identity);
            w.u8(r.master_clock_priority1);
            w.u8(r.master_clock_priority2);
            w.u8(r.master_clock_class);
            w.u8(r.master_clock_accuracy);
            w.u16(r.master_clock_log2_variance);
            w.u8(r.master_clock_time_source);
            w.u32(r.master_ip_address);
            w.f32(r.mean_path_delay);
            w.f32(r.mean_path_delay_std);
            w.f64(r.clock_offset);
            w.f32(r.clock_offset_std);
            w.f32(r.clock_freq_offset);
            w.f32(r.clock_freq_offset_std);
            w.opt_u64(
                r.master_mac_address
                    .map(|mac| mac.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b))),
            );
        }
        Record::ImuData(r) => {
            w.u16(r.status);
            w.f32s(&r.accelerometers);
            w.degs(&r.gyroscopes);
            w.f32(r.temperature);
        }
        Record::ImuShort(r) => {
            w.u16(r.status);
            for a in r.accelerations() {
                w.f64(a);
            }
            for g in r.rates() {
                w.f64(g * RAD_TO_DEG);
            }
            w.f64(r.temperature_celsius());
        }
        Record::Mag(r) => {
            w.u16(r.status);
            w.f32s(&r.magnetometers);
            w.f32s(&r.accelerometers);
        }
        Record::EkfEuler(r) => {
            w.u32(r.status);
            w.degs(&r.euler);
            w.degs(&r.euler_std);
            w.opt_f64(
                r.mag_declination
                    .map(|d| (f64::from(r.euler[2]) - f64::from(d)) * RAD_TO_DEG),
            );
            w.opt_deg(r.mag_declination);
            w.opt_deg(r.mag_inclination);
        }
        Record::EkfQuat(r) => {
            w.u32(r.status);
            w.f32s(&r.quaternion);
            w.degs(&r.euler_std);
            w.opt_deg(r.mag_declination);
            w.opt_deg(r.mag_inclination);
        }
        Record::EkfNav(r) => {
            w.u32(r.status);
            w.f32s(&r.velocity);
            w.f32s(&r.velocity_std);
            w.f64(r.position[0]);
            w.f64(r.position[1]);
            w.f64(r.position[2]);
            w.f32s(&r.position_std);
            w.f32(r.undulation);
        }
        Record::EkfVelBody(r) => {
            w.u32(r.status);
            w.f32s(&r.velocity);
            w.f32s(&r.velocity_std);
        }
        Record::EkfRotAccelBody(r) | Record::EkfRotAccelNed(r) => {
            w.u32(r.status);
            w.f32s(&r.acceleration);
            w.degs(&r.rate);
        }
        Record::ShipMotion(r) | Record::ShipMotionHp(r) => {
            w.opt_u16(r.status);
            w.f32(r.heave_period);
            w.f32s(&r.ship_motion);
            w.f32s(&r.ship_accel);
            for i in 0..3 {
                w.opt_f32(r.ship_vel.map(|v| v[i]));
            }
        }
        Record::Gps1Vel(r) | Record::Gps2Vel(r) => {
            w.u32(r.status);
            w.u32(r.time_of_week);
            w.f32s(&r.velocity);
            w.f32s(&r.velocity_acc);
            w.f32(r.course);
            w.f32(r.course_acc);
        }
        Record::Gps1Pos(r) | Record::Gps2Pos(r) => write_gnss_pos(w, r),
        Record::Gps1Hdt(r) | Record::Gps2Hdt(r) => {
            w.u16(r.status);
            w.u32(r.time_of_week);
            w.f32(r.heading);
            w.f32(r.heading_acc);
            w.f32(r.pitch);
            w.f32(r.pitch_acc);
            w.opt_f32(r.baseline);
            w.opt_u8(r.num_sv_tracked);
            w.opt_u8(r.num_sv_used);
        }
        Record::OdoVel(r) => {
            w.u16(r.status);
            w.f32(r.velocity);
        }
        Record::DvlBottomTrack(r) | Record::DvlWaterTrack(r) => {
            w.u16(r.status);
            w.f32s(&r.velocity);
            w.f32s(&r.velocity_quality);
        }
        Record::AirData(r) => {
            w.u16(r.status);
            w.f32(r.pressure_abs);
            w.f32(r.altitude);
            w.opt_f32(r.pressure_diff);
            w.opt_f32(r.true_airspeed);
            w.opt_f32(r.air_temperature);
        }
        Record::Usbl(r) => {
            w.u16(r.status);
            w.f64(r.latitude);
            w.f64(r.longitude);
            w.f32(r.depth);
            w.f32(r.latitude_acc);
            w.f32(r.longitude_acc);
            w.f32(r.depth_acc);
        }
        Record::Depth(r) => {
            w.u16(r.status);
            w.f32(r.pressure_abs);
            w.f32(r.altitude);
        }
        Record::EventA(r)
        | Record::EventB(r)
        | Record::EventC(r)
        | Record::EventD(r)
        | Record::EventE(r)
        | Record::EventOutA(r)
        | Record::EventOutB(r) => {
            w.u16(r.status);
            for &offset in &r.time_offsets {
                w.u16(offset);
            }
        }
        Record::Diag(_)
        | Record::SessionInfo(_)
        | Record::MagCalib(_)
        | Record::Gps1Raw(_)
        | Record::Gps2Raw(_)
        | Record::RtcmRaw(_)
        | Record::Gps1Sat(_)
        | Record::Gps2Sat(_) => {}
    }
}

fn write_gnss_pos(w: &mut Row<'_>, r: &GnssPos) {
    w.u32(r.status);
    w.opt_u32(r.status_ext);
    w.u32(r.time_of_week);
    w.f64(r.latitude);
    w.f64(r.longitude);
    w.f64(r.altitude);
    w.f32(r.undulation);
    w.f32(r.latitude_acc);
    w.f32(r.longitude_acc);
    w.f32(r.altitude_acc);
    w.opt_u8(r.num_sv_tracked);
    w.opt_u8(r.num_sv_used);
    w.opt_u16(r.base_station_id);
    w.opt_u16(r.differential_age);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tabled_message_has_a_schema_of_its_columns() {
        for &kind in MessageKind::ALL {
            let Some(schema) = schema(kind) else {
                assert!(!has_table(kind), "{kind}");
                continue;
            };
            let titles: Vec<&str> = columns::columns(kind).iter().map(|c| c.title).collect();
            let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            assert_eq!(names[..names.len() - 1], titles[..], "{kind}");
            assert_eq!(names.last(), Some(&UTC_COLUMN), "{kind}");
        }
    }

    #[test]
    fn days_from_civil_matches_known_dates() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2024, 2, 29), 19_782);
    }

    #[test]
    fn the_clock_extends_wraps_and_keeps_small_reorders() {
        let mut clock = Clock::new();
        assert_eq!(clock.extend(u32::MAX - 10), i64::from(u32::MAX - 10));
        assert_eq!(clock.extend(5), (1 << 32) + 5);
        assert_eq!(clock.extend(u32::MAX - 2), i64::from(u32::MAX - 2));
        assert_eq!(clock.extend(100), (1 << 32) + 100);
    }
}
