//! A record as one line of JSON, with the keys, values and units of a row of its
//! message's table ([`tables`](crate::tables)): what `svc device stream` prints.

use arrow_array::types::ArrowPrimitiveType;
use arrow_schema::DataType;

use crate::columns::{self, Column};
use crate::kind::Visitor;
use crate::records::Payload;
use crate::tables::{ColType, Row, TableRow, Value};
use crate::{MessageKind, Record};

/// A record as one JSON object on one line, with the same keys, values and units as a
/// row of its message's table: `message` (its name), `timestamp` (µs since power-up),
/// then its columns ([`columns`](crate::columns::columns)) under their titles; a null
/// for an absent optional field or a value that is not finite. The messages that have
/// no table carry what identifies them: `diag` its `type`, `errorCode` and `text`, the
/// raw and satellite messages the `bytes` or `satellites` they hold.
///
/// ```
/// use svc_logs::{Record, json::record_json, records::EkfNav};
///
/// let nav = EkfNav { timestamp: 1_000, position: [48.8, 2.3, 35.0], ..EkfNav::default() };
/// let json = record_json(&Record::EkfNav(nav));
/// assert!(json.starts_with(r#"{"message":"ekfNav","timestamp":1000,"#), "{json}");
/// assert!(json.contains(r#""latitude":48.8,"#), "{json}");
/// ```
#[must_use]
pub fn record_json(record: &Record) -> String {
    struct Json(String);
    impl Visitor for Json {
        type Output = String;
        fn visit<T: Payload + TableRow>(self, kind: MessageKind, payload: &T) -> String {
            let mut out = self.0;
            out.push_str("{\"message\":\"");
            out.push_str(kind.name());
            out.push('"');
            if let Some(t) = payload.timestamp() {
                out.push_str(",\"timestamp\":");
                out.push_str(itoa::Buffer::new().format(t));
            }
            let mut row = JsonRow {
                out,
                titles: columns::columns(kind),
                at: 1,
            };
            payload.write_row(&mut row);
            row.out
        }
    }
    let mut out = record.visit(Json(String::with_capacity(256)));
    match record {
        Record::Diag(diag) => {
            out.push_str(",\"type\":");
            out.push_str(itoa::Buffer::new().format(diag.kind));
            out.push_str(",\"errorCode\":");
            out.push_str(itoa::Buffer::new().format(diag.error_code));
            out.push_str(",\"text\":");
            json_string(&mut out, &diag.message);
        }
        Record::Gps1Raw(raw) | Record::Gps2Raw(raw) | Record::RtcmRaw(raw) => {
            out.push_str(",\"bytes\":");
            out.push_str(itoa::Buffer::new().format(raw.data.len()));
        }
        Record::Gps1Sat(sat) | Record::Gps2Sat(sat) => {
            out.push_str(",\"satellites\":");
            out.push_str(itoa::Buffer::new().format(sat.satellites.len()));
        }
        _ => {}
    }
    out.push('}');
    out
}

/// Appends `text` as a JSON string.
fn json_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Writes a row's values as `"title":value` pairs.
struct JsonRow {
    out: String,
    titles: &'static [Column],
    /// The column of the next value (0 is the timestamp).
    at: usize,
}

impl JsonRow {
    fn key(&mut self) {
        self.out.push_str(",\"");
        match self.titles.get(self.at) {
            Some(column) => self.out.push_str(column.title),
            None => {
                self.out.push('c');
                self.out.push_str(itoa::Buffer::new().format(self.at));
            }
        }
        self.out.push_str("\":");
        self.at += 1;
    }

    fn value<T: Value>(&mut self, v: T) {
        let slot = v.to_slot();
        let mut buf = itoa::Buffer::new();
        match (T::TYPE, <T::Arrow as ArrowPrimitiveType>::DATA_TYPE) {
            (ColType::F32, _) => {
                let v = f32::from_slot(slot);
                if v.is_finite() {
                    self.out.push_str(zmij::Buffer::new().format_finite(v));
                } else {
                    self.out.push_str("null");
                }
            }
            (ColType::F64, _) => self.float(f64::from_slot(slot)),
            (_, DataType::Int64) => self.out.push_str(buf.format(i64::from_slot(slot))),
            _ => self.out.push_str(buf.format(slot)),
        }
    }

    fn float(&mut self, v: f64) {
        if v.is_finite() {
            self.out.push_str(zmij::Buffer::new().format_finite(v));
        } else {
            self.out.push_str("null");
        }
    }
}

impl Row for JsonRow {
    fn put<T: Value>(&mut self, v: T) {
        self.key();
        self.value(v);
    }
    fn put_opt<T: Value>(&mut self, v: Option<T>) {
        self.key();
        match v {
            Some(v) => self.value(v),
            None => self.out.push_str("null"),
        }
    }
}

/// A record's values as (column title, value) pairs, in the order and units of its
/// table's columns after the timestamp (see [`record_json`]); `None` for an absent
/// optional field or a value that is not finite. For bindings that hand records over
/// as maps (the mobile SDK).
///
/// ```
/// use svc_logs::{Record, json::record_values, records::EkfNav};
///
/// let nav = EkfNav { timestamp: 1_000, position: [48.8, 2.3, 35.0], ..EkfNav::default() };
/// let values = record_values(&Record::EkfNav(nav));
/// assert_eq!(values[7], ("latitude", Some(48.8)));
/// ```
#[must_use]
pub fn record_values(record: &Record) -> Vec<(&'static str, Option<f64>)> {
    struct Values;
    impl Visitor for Values {
        type Output = Vec<(&'static str, Option<f64>)>;
        fn visit<T: Payload + TableRow>(self, kind: MessageKind, payload: &T) -> Self::Output {
            let mut row = ValuesRow {
                values: Vec::new(),
                titles: columns::columns(kind),
                at: 1,
            };
            payload.write_row(&mut row);
            row.values
        }
    }
    record.visit(Values)
}

/// Collects a row's values as `f64`s under their titles.
struct ValuesRow {
    values: Vec<(&'static str, Option<f64>)>,
    titles: &'static [Column],
    at: usize,
}

impl ValuesRow {
    fn title(&mut self) -> &'static str {
        let title = self.titles.get(self.at).map_or("unnamed", |c| c.title);
        self.at += 1;
        title
    }

    #[allow(clippy::cast_precision_loss)] // status words and counts are far below 2^53
    fn number<T: Value>(v: T) -> Option<f64> {
        let slot = v.to_slot();
        let value = match (T::TYPE, <T::Arrow as ArrowPrimitiveType>::DATA_TYPE) {
            (ColType::F32, _) => f64::from(f32::from_slot(slot)),
            (ColType::F64, _) => f64::from_slot(slot),
            (_, DataType::Int64) => i64::from_slot(slot) as f64,
            _ => slot as f64,
        };
        value.is_finite().then_some(value)
    }
}

impl Row for ValuesRow {
    fn put<T: Value>(&mut self, v: T) {
        let title = self.title();
        self.values.push((title, Self::number(v)));
    }
    fn put_opt<T: Value>(&mut self, v: Option<T>) {
        let title = self.title();
        self.values.push((title, v.and_then(Self::number)));
    }
}
