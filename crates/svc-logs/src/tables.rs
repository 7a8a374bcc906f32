//! The records as Arrow tables: one table per message, built in bounded batches.
//!
//! [`Tables`] takes records ([`push`](Tables::push)) and hands out a finished
//! [`RecordBatch`] of a message every [`batch_rows`](Tables::batch_rows) rows
//! ([`DEFAULT_BATCH_ROWS`] unless told otherwise), and the rest at
//! [`finish`](Tables::finish): memory holds at most one batch per message, whatever
//! the input's size. [`TableReader`] does the same from any [`Read`], decoding each
//! payload straight into its table's row (the same batches, without making the
//! records: the faster way from a log to tables).
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

use arrow_array::types::{
    ArrowPrimitiveType, Float32Type, Float64Type, Int64Type, UInt8Type, UInt16Type, UInt32Type,
    UInt64Type,
};
use arrow_array::{ArrayRef, Int64Array, PrimitiveArray, RecordBatch, TimestampMicrosecondArray};
use arrow_buffer::{
    ArrowNativeType, BooleanBuffer, BooleanBufferBuilder, NullBuffer, ScalarBuffer,
};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef, TimeUnit};

use crate::columns::{self, Column};
use crate::kind::{DecodeError, Visitor};
use crate::reader::{Chunks, Framing};
use crate::records::{
    AirData, Depth, Diag, Dvl, EkfEuler, EkfNav, EkfQuat, EkfRotAccel, EkfVelBody, Event, GnssHdt,
    GnssPos, GnssSat, GnssVel, ImuData, ImuShort, Mag, MagCalib, OdoVel, Payload, PtpStatus,
    RawData, SessionInfo, ShipMotion, Status, Usbl, UtcStatus, UtcTime,
};
use crate::{DEFAULT_CHUNK_LEN, Fault, MessageKind, Record, Stats};

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
    let payload = vec![0u8; kind.min_payload_len()];
    let record = crate::decode_kind(kind, &payload).ok()?;
    Some(record.visit(SchemaOf))
}

/// The schema of the table of a payload's message.
struct SchemaOf;

impl Visitor for SchemaOf {
    type Output = SchemaRef;
    fn visit<T: Payload + TableRow>(self, kind: MessageKind, _: &T) -> SchemaRef {
        Table::new::<T>(kind).schema
    }
}

/// The timestamp a record holds (µs since power-up); `None` for the messages that
/// have none (raw data, session information).
#[must_use]
pub fn record_timestamp(record: &Record) -> Option<u32> {
    struct Timestamp;
    impl Visitor for Timestamp {
        type Output = Option<u32>;
        fn visit<T: Payload + TableRow>(self, _: MessageKind, payload: &T) -> Option<u32> {
            payload.timestamp()
        }
    }
    record.visit(Timestamp)
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
    #[inline]
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

    /// Takes a row: extends its timestamp and, for a valid `utcTime`, sets the UTC
    /// offset; the extended timestamp and its UTC.
    #[inline]
    fn row<T: TableRow>(&mut self, payload: &T) -> Option<(i64, Option<i64>)> {
        let extended = self.extend(payload.timestamp()?);
        if let Some(micros) = payload.utc_micros() {
            self.utc_offset = Some(micros - extended);
        }
        Some((extended, self.utc(extended)))
    }

    /// UTC of an extended timestamp, µs since 1970, once known.
    #[must_use]
    #[inline]
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
/// # Ok::<(), arrow_schema::ArrowError>(())
/// ```
#[derive(Debug)]
pub struct Tables {
    batch_rows: usize,
    /// By the kind's index in [`MessageKind::ALL`]: `None` for a message of no
    /// table, `Some(None)` until its first row.
    tables: Vec<Option<Option<Table>>>,
    clock: Clock,
    ready: VecDeque<(MessageKind, RecordBatch)>,
    /// The first Arrow error finishing a batch, not yet reported.
    error: Option<ArrowError>,
}

/// Pushes a payload as a row of its table ([`Tables::push`]).
struct Push<'a>(&'a mut Tables);

impl Visitor for Push<'_> {
    type Output = ();
    #[inline(always)]
    fn visit<T: Payload + TableRow>(self, kind: MessageKind, payload: &T) {
        self.0.push_row(kind, payload);
    }
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
            tables: MessageKind::ALL
                .iter()
                .map(|&kind| has_table(kind).then_some(None))
                .collect(),
            clock: Clock::new(),
            ready: VecDeque::new(),
            error: None,
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
        record.visit(Push(self));
        self.take_error()
    }

    /// Decodes a payload of this kind straight into its table's row, without making
    /// a [`Record`] (see [`push`](Self::push)). An Arrow error is kept for
    /// [`take_error`](Self::take_error).
    ///
    /// # Errors
    ///
    /// As [`decode_kind`](crate::decode_kind): the payload does not decode (nothing
    /// is added).
    pub fn push_payload(&mut self, kind: MessageKind, payload: &[u8]) -> Result<(), DecodeError> {
        crate::kind::decode_visit(kind, payload, Push(self))
    }

    /// The first Arrow error of [`push_payload`](Self::push_payload), taken.
    ///
    /// # Errors
    ///
    /// That error.
    pub fn take_error(&mut self) -> Result<(), ArrowError> {
        self.error.take().map_or(Ok(()), Err)
    }

    #[inline(always)]
    fn push_row<T: TableRow>(&mut self, kind: MessageKind, payload: &T) {
        let Some((extended, utc)) = self.clock.row(payload) else {
            return;
        };
        let Some(Some(slot)) = self.tables.get_mut(kind as usize) else {
            return;
        };
        let table = slot.get_or_insert_with(|| Table::new::<T>(kind));
        table.push_row(payload, extended, utc);
        if table.rows >= self.batch_rows {
            self.batch_full(kind);
        }
    }

    /// Finishes the batch of a table that is full; a message that fills batches gets
    /// room for the next one at once.
    #[cold]
    fn batch_full(&mut self, kind: MessageKind) {
        let Some(Some(Some(table))) = self.tables.get_mut(kind as usize) else {
            return;
        };
        match table.finish() {
            Ok(batch) => self.ready.push_back((kind, batch)),
            Err(error) => {
                self.error.get_or_insert(error);
            }
        }
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
            if let Some(Some(table)) = slot
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
    chunks: Chunks<R>,
    framing: Framing,
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
            chunks: Chunks::new(inner, DEFAULT_CHUNK_LEN),
            framing: Framing::new(),
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
            let tables = &mut self.tables;
            let take = |_, kind, payload: &[u8]| tables.push_payload(kind, payload);
            match self.chunks.next_chunk()? {
                Some(bytes) => self.framing.feed(bytes, take),
                None => {
                    self.framing.finish(take);
                    self.finished = true;
                    self.tables.finish()?;
                }
            }
            self.tables.take_error()?;
        }
    }

    /// The decoder's counters.
    #[must_use]
    pub fn stats(&self) -> Stats {
        self.framing.stats()
    }

    /// The decoder's faults (the first [`MAX_FAULTS`](crate::MAX_FAULTS)).
    #[must_use]
    pub fn faults(&self) -> &[Fault] {
        self.framing.faults()
    }

    /// Faults not kept.
    #[must_use]
    pub fn faults_dropped(&self) -> u64 {
        self.framing.faults_dropped()
    }

    /// The tables being built.
    #[must_use]
    pub fn tables(&self) -> &Tables {
        &self.tables
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.chunks.into_inner()
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

/// The type of a column's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColType {
    F32,
    F64,
    U8,
    U16,
    U32,
    U64,
}

impl ColType {
    fn data_type(self) -> DataType {
        match self {
            ColType::F32 => DataType::Float32,
            ColType::F64 => DataType::Float64,
            ColType::U8 => DataType::UInt8,
            ColType::U16 => DataType::UInt16,
            ColType::U32 => DataType::UInt32,
            ColType::U64 => DataType::UInt64,
        }
    }
}

/// A column of a table: the type of its values and whether it may be null.
#[derive(Debug, Clone, Copy)]
struct Col {
    ty: ColType,
    nullable: bool,
}

/// A type of column value, held in a table as the 64 bits of a slot.
pub(crate) trait Value: ArrowNativeType + Default {
    /// Its column type.
    const TYPE: ColType;
    /// Its Arrow type.
    type Arrow: ArrowPrimitiveType<Native = Self>;
    /// Its slot.
    fn to_slot(self) -> u64;
    /// The value of a slot.
    fn from_slot(slot: u64) -> Self;
}

macro_rules! value {
    ($($t:ty => $variant:ident, $arrow:ty, |$v:ident| $to:expr, |$s:ident| $from:expr;)*) => {$(
        impl Value for $t {
            const TYPE: ColType = ColType::$variant;
            type Arrow = $arrow;
            #[inline(always)]
            fn to_slot(self) -> u64 {
                let $v = self;
                $to
            }
            #[inline(always)]
            #[allow(clippy::cast_possible_truncation)] // slots hold values of the type
            fn from_slot($s: u64) -> Self {
                $from
            }
        }
    )*};
}

value! {
    f32 => F32, Float32Type, |v| u64::from(v.to_bits()), |s| f32::from_bits(s as u32);
    f64 => F64, Float64Type, |v| v.to_bits(), |s| f64::from_bits(s);
    u8 => U8, UInt8Type, |v| u64::from(v), |s| s as u8;
    u16 => U16, UInt16Type, |v| u64::from(v), |s| s as u16;
    u32 => U32, UInt32Type, |v| u64::from(v), |s| s as u32;
    u64 => U64, UInt64Type, |v| v, |s| s;
    i64 => U64, Int64Type, |v| v.cast_unsigned(), |s| s.cast_signed();
}

/// Where a row's values go, one after the other in the order of the columns: the
/// columns of a new table ([`Declare`]: their types and nullability), or the
/// table's slots ([`Append`]).
pub(crate) trait Row {
    /// The next value.
    fn put<T: Value>(&mut self, v: T);
    /// The next value of a nullable column.
    fn put_opt<T: Value>(&mut self, v: Option<T>);

    #[inline(always)]
    fn u8(&mut self, v: u8) {
        self.put(v);
    }
    #[inline(always)]
    fn u16(&mut self, v: u16) {
        self.put(v);
    }
    #[inline(always)]
    fn u32(&mut self, v: u32) {
        self.put(v);
    }
    #[inline(always)]
    fn u64(&mut self, v: u64) {
        self.put(v);
    }
    #[inline(always)]
    fn f32(&mut self, v: f32) {
        self.put(v);
    }
    #[inline(always)]
    fn f64(&mut self, v: f64) {
        self.put(v);
    }
    #[inline(always)]
    fn opt_u8(&mut self, v: Option<u8>) {
        self.put_opt(v);
    }
    #[inline(always)]
    fn opt_u16(&mut self, v: Option<u16>) {
        self.put_opt(v);
    }
    #[inline(always)]
    fn opt_u32(&mut self, v: Option<u32>) {
        self.put_opt(v);
    }
    #[inline(always)]
    fn opt_u64(&mut self, v: Option<u64>) {
        self.put_opt(v);
    }
    #[inline(always)]
    fn opt_f32(&mut self, v: Option<f32>) {
        self.put_opt(v);
    }
    #[inline(always)]
    fn opt_f64(&mut self, v: Option<f64>) {
        self.put_opt(v);
    }
    #[inline(always)]
    fn f32s(&mut self, v: &[f32]) {
        for &x in v {
            self.put(x);
        }
    }
    /// An angle or a rate in radians, written in degrees.
    #[inline(always)]
    fn deg(&mut self, rad: f32) {
        self.put(f64::from(rad) * RAD_TO_DEG);
    }
    #[inline(always)]
    fn degs(&mut self, rad: &[f32]) {
        for &x in rad {
            self.deg(x);
        }
    }
    #[inline(always)]
    fn opt_deg(&mut self, rad: Option<f32>) {
        self.put_opt(rad.map(|x| f64::from(x) * RAD_TO_DEG));
    }
}

/// Makes the columns of a new table.
struct Declare<'a>(&'a mut Vec<Col>);

impl Row for Declare<'_> {
    fn put<T: Value>(&mut self, _: T) {
        self.0.push(Col {
            ty: T::TYPE,
            nullable: false,
        });
    }
    fn put_opt<T: Value>(&mut self, _: Option<T>) {
        self.0.push(Col {
            ty: T::TYPE,
            nullable: true,
        });
    }
}

/// Writes a row's values in the table's slots.
struct Append<'a> {
    slots: &'a mut [u64],
    valid: &'a mut [bool],
    /// The slot of the next value: its column's first, plus the row.
    at: usize,
    /// Slots of a column.
    room: usize,
}

impl Row for Append<'_> {
    #[inline(always)]
    fn put<T: Value>(&mut self, v: T) {
        if let Some(slot) = self.slots.get_mut(self.at) {
            *slot = v.to_slot();
        }
        self.at += self.room;
    }
    #[inline(always)]
    fn put_opt<T: Value>(&mut self, v: Option<T>) {
        if let Some(slot) = self.slots.get_mut(self.at) {
            *slot = v.unwrap_or_default().to_slot();
        }
        if let Some(valid) = self.valid.get_mut(self.at) {
            *valid = v.is_some();
        }
        self.at += self.room;
    }
}

/// A message's table being built: [`room`](Self::room) slots of 64 bits per
/// column, one column after the other (the timestamps, the UTC times, then the
/// columns), and as many validity flags when a column may be null. A row is written
/// in place, a slot per value, whatever the value's type; a batch's arrays are made
/// from the slots when it is finished. The table grows as needed and keeps its room
/// from one batch to the next.
#[derive(Debug)]
struct Table {
    cols: Vec<Col>,
    slots: Vec<u64>,
    /// Empty when no column may be null.
    valid: Vec<bool>,
    /// Rows of the batch without UTC: the first ones (once the clock has a UTC
    /// offset, it keeps one).
    utc_nulls: usize,
    schema: SchemaRef,
    rows: usize,
    room: usize,
}

/// Slots before the columns': the timestamps, then the UTC times.
const HEAD_COLUMNS: usize = 2;

impl Table {
    /// The table of a message whose payloads are `T`s.
    fn new<T: TableRow>(kind: MessageKind) -> Table {
        let mut cols = Vec::new();
        T::default().write_row(&mut Declare(&mut cols));
        let schema = make_schema(kind, &cols);
        Table {
            cols,
            slots: Vec::new(),
            valid: Vec::new(),
            utc_nulls: 0,
            schema,
            rows: 0,
            room: 0,
        }
    }

    #[inline]
    fn push_row<T: TableRow>(&mut self, payload: &T, timestamp: i64, utc: Option<i64>) {
        let row = self.rows;
        if row >= self.room {
            self.grow();
        }
        let mut append = Append {
            slots: &mut self.slots,
            valid: &mut self.valid,
            at: row,
            room: self.room,
        };
        append.put(timestamp);
        append.put(utc.unwrap_or_default());
        self.utc_nulls += usize::from(utc.is_none());
        payload.write_row(&mut append);
        self.rows += 1;
    }

    /// Room for twice as many rows (the columns' slots moved apart).
    #[cold]
    fn grow(&mut self) {
        let room = (self.room * 2).max(64);
        let columns = self.cols.len() + HEAD_COLUMNS;
        let mut slots = vec![0; columns * room];
        for (new, old) in slots
            .chunks_exact_mut(room)
            .zip(self.slots.chunks_exact(self.room.max(1)))
        {
            new[..self.rows].copy_from_slice(&old[..self.rows]);
        }
        self.slots = slots;
        if self.cols.iter().any(|col| col.nullable) {
            let mut valid = vec![false; columns * room];
            for (new, old) in valid
                .chunks_exact_mut(room)
                .zip(self.valid.chunks_exact(self.room.max(1)))
            {
                new[..self.rows].copy_from_slice(&old[..self.rows]);
            }
            self.valid = valid;
        }
        self.room = room;
    }

    /// The first `rows` values of a column (index in the slots).
    fn values<T: Value>(&self, column: usize) -> ScalarBuffer<T> {
        let start = column * self.room;
        let slots = self.slots.get(start..start + self.rows).unwrap_or_default();
        let values: Vec<T> = slots.iter().map(|&slot| T::from_slot(slot)).collect();
        values.into()
    }

    /// The array of a column (index in the slots).
    fn array<T: Value>(&self, column: usize, nullable: bool) -> Result<ArrayRef, ArrowError> {
        let nulls = if nullable {
            let start = column * self.room;
            let valid = self.valid.get(start..start + self.rows).unwrap_or_default();
            let bits = BooleanBuffer::collect_bool(self.rows, |i| valid.get(i) == Some(&true));
            Some(NullBuffer::new(bits)).filter(|nulls| nulls.null_count() > 0)
        } else {
            None
        };
        Ok(Arc::new(PrimitiveArray::<T::Arrow>::try_new(
            self.values::<T>(column),
            nulls,
        )?))
    }

    /// The batch of the rows so far; the table is then empty.
    fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let mut arrays: Vec<ArrayRef> = Vec::with_capacity(self.cols.len() + HEAD_COLUMNS);
        arrays.push(Arc::new(Int64Array::try_new(self.values::<i64>(0), None)?));
        for (i, col) in self.cols.iter().enumerate() {
            let column = HEAD_COLUMNS + i;
            arrays.push(match col.ty {
                ColType::F32 => self.array::<f32>(column, col.nullable)?,
                ColType::F64 => self.array::<f64>(column, col.nullable)?,
                ColType::U8 => self.array::<u8>(column, col.nullable)?,
                ColType::U16 => self.array::<u16>(column, col.nullable)?,
                ColType::U32 => self.array::<u32>(column, col.nullable)?,
                ColType::U64 => self.array::<u64>(column, col.nullable)?,
            });
        }
        let utc_nulls = self.utc_nulls.min(self.rows);
        let nulls = (utc_nulls > 0).then(|| {
            let mut valid = BooleanBufferBuilder::new(self.rows);
            valid.append_n(utc_nulls, false);
            valid.append_n(self.rows - utc_nulls, true);
            NullBuffer::new(valid.finish())
        });
        let utc =
            TimestampMicrosecondArray::try_new(self.values::<i64>(1), nulls)?.with_timezone("UTC");
        arrays.push(Arc::new(utc));
        self.rows = 0;
        self.utc_nulls = 0;
        RecordBatch::try_new(self.schema.clone(), arrays)
    }
}

/// The schema of a message's table of these columns.
fn make_schema(kind: MessageKind, cols: &[Col]) -> SchemaRef {
    let titles: &[Column] = columns::columns(kind);
    let unit = |c: &Column| HashMap::from([("unit".to_owned(), c.unit.to_owned())]);
    let mut fields = Vec::with_capacity(cols.len() + 2);
    fields.push(
        Field::new(columns::TIMESTAMP.title, DataType::Int64, false)
            .with_metadata(unit(&columns::TIMESTAMP)),
    );
    for (i, col) in cols.iter().enumerate() {
        let column = titles.get(i + 1).copied().unwrap_or(Column {
            title: "unnamed",
            unit: "na",
        });
        fields.push(
            Field::new(column.title, col.ty.data_type(), col.nullable).with_metadata(unit(&column)),
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
    metadata.insert("message".to_owned(), kind.name().to_owned());
    Arc::new(Schema::new_with_metadata(fields, metadata))
}

/// A payload as a row of its message's table: its timestamp, and the values after it
/// in the order of [`columns`](crate::columns::columns). Implemented by every payload
/// type; those of the messages of no table write no value.
pub(crate) trait TableRow: Default {
    /// The timestamp, µs since power-up; `None` for the messages that have none.
    fn timestamp(&self) -> Option<u32>;
    /// The UTC time it gives, µs since 1970: a `utcTime` of a valid UTC.
    #[inline]
    fn utc_micros(&self) -> Option<i64> {
        None
    }
    /// Appends the values of the row after its timestamp.
    fn write_row<W: Row>(&self, w: &mut W);
}

/// Implements [`TableRow`] for payloads of no table.
macro_rules! no_table {
    ($($t:ty: $timestamp:expr;)*) => {$(
        impl TableRow for $t {
            fn timestamp(&self) -> Option<u32> {
                #[allow(clippy::redundant_closure_call)]
                ($timestamp)(self)
            }
            fn write_row<W: Row>(&self, _: &mut W) {}
        }
    )*};
}

no_table! {
    Diag: |d: &Diag| Some(d.timestamp);
    MagCalib: |m: &MagCalib| Some(m.timestamp);
    GnssSat: |g: &GnssSat| Some(g.timestamp);
    SessionInfo: |_| None;
    RawData: |_| None;
}

/// Implements [`TableRow`] for payloads with a table: `|row, payload| { values }`.
macro_rules! table_row {
    ($($t:ty: |$w:ident, $r:ident| $body:block)*) => {$(
        impl TableRow for $t {
            #[inline]
            fn timestamp(&self) -> Option<u32> {
                Some(self.timestamp)
            }
            #[inline]
            fn write_row<W: Row>(&self, $w: &mut W) {
                let $r = self;
                $body
            }
        }
    )*};
}

table_row! {
    Status: |w, r| {
        w.u16(r.general_status);
        w.u32(r.com_status);
        w.u16(r.com_status2);
        w.u32(r.aiding_status);
        w.opt_u8(r.cpu_usage);
    }
    PtpStatus: |w, r| {
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
    ImuData: |w, r| {
        w.u16(r.status);
        w.f32s(&r.accelerometers);
        w.degs(&r.gyroscopes);
        w.f32(r.temperature);
    }
    ImuShort: |w, r| {
        w.u16(r.status);
        for a in r.accelerations() {
            w.f64(a);
        }
        for g in r.rates() {
            w.f64(g * RAD_TO_DEG);
        }
        w.f64(r.temperature_celsius());
    }
    Mag: |w, r| {
        w.u16(r.status);
        w.f32s(&r.magnetometers);
        w.f32s(&r.accelerometers);
    }
    EkfEuler: |w, r| {
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
    EkfQuat: |w, r| {
        w.u32(r.status);
        w.f32s(&r.quaternion);
        w.degs(&r.euler_std);
        w.opt_deg(r.mag_declination);
        w.opt_deg(r.mag_inclination);
    }
    EkfNav: |w, r| {
        w.u32(r.status);
        w.f32s(&r.velocity);
        w.f32s(&r.velocity_std);
        w.f64(r.position[0]);
        w.f64(r.position[1]);
        w.f64(r.position[2]);
        w.f32s(&r.position_std);
        w.f32(r.undulation);
    }
    EkfVelBody: |w, r| {
        w.u32(r.status);
        w.f32s(&r.velocity);
        w.f32s(&r.velocity_std);
    }
    EkfRotAccel: |w, r| {
        w.u32(r.status);
        w.f32s(&r.acceleration);
        w.degs(&r.rate);
    }
    ShipMotion: |w, r| {
        w.opt_u16(r.status);
        w.f32(r.heave_period);
        w.f32s(&r.ship_motion);
        w.f32s(&r.ship_accel);
        for i in 0..3 {
            w.opt_f32(r.ship_vel.map(|v| v[i]));
        }
    }
    GnssVel: |w, r| {
        w.u32(r.status);
        w.u32(r.time_of_week);
        w.f32s(&r.velocity);
        w.f32s(&r.velocity_acc);
        w.f32(r.course);
        w.f32(r.course_acc);
    }
    GnssPos: |w, r| {
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
    GnssHdt: |w, r| {
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
    OdoVel: |w, r| {
        w.u16(r.status);
        w.f32(r.velocity);
    }
    Dvl: |w, r| {
        w.u16(r.status);
        w.f32s(&r.velocity);
        w.f32s(&r.velocity_quality);
    }
    AirData: |w, r| {
        w.u16(r.status);
        w.f32(r.pressure_abs);
        w.f32(r.altitude);
        w.opt_f32(r.pressure_diff);
        w.opt_f32(r.true_airspeed);
        w.opt_f32(r.air_temperature);
    }
    Usbl: |w, r| {
        w.u16(r.status);
        w.f64(r.latitude);
        w.f64(r.longitude);
        w.f32(r.depth);
        w.f32(r.latitude_acc);
        w.f32(r.longitude_acc);
        w.f32(r.depth_acc);
    }
    Depth: |w, r| {
        w.u16(r.status);
        w.f32(r.pressure_abs);
        w.f32(r.altitude);
    }
    Event: |w, r| {
        w.u16(r.status);
        for &offset in &r.time_offsets {
            w.u16(offset);
        }
    }
}

/// `utcTime` also sets the clock's UTC offset.
impl TableRow for UtcTime {
    #[inline]
    fn timestamp(&self) -> Option<u32> {
        Some(self.timestamp)
    }
    #[inline]
    fn utc_micros(&self) -> Option<i64> {
        utc_micros(self)
    }
    #[inline]
    fn write_row<W: Row>(&self, w: &mut W) {
        w.u16(self.status);
        w.u32(self.gps_tow);
        w.u16(self.year);
        w.u8(self.month);
        w.u8(self.day);
        w.u8(self.hour);
        w.u8(self.minute);
        w.u8(self.second);
        w.u32(self.nanosecond);
        w.opt_f64(self.clk_bias_std.map(|v| f64::from(v) * 1e6));
        w.opt_f64(self.clk_sf_error_std.map(|v| f64::from(v) * 1e9));
        w.opt_f64(self.clk_residual_error.map(|v| f64::from(v) * 1e6));
    }
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
