//! `svc_sdk.logs`: a unit's recordings (sbgECom binary logs) decoded into Arrow tables,
//! one per message type, handed to Python through the Arrow C stream interface
//! (`__arrow_c_stream__`: pyarrow, pandas and polars take them without a copy).
//!
//! Decoding runs with the GIL released, in `svc_logs`' bounded chunks; the batches of a
//! recording are kept until it is dropped.

use std::collections::BTreeMap;
use std::sync::Arc;

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator};
use arrow_schema::SchemaRef;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyDict};

use crate::errors::SvcErr;

/// The decoded tables of a recording, and the decoder's counters.
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct Recording {
    tables: BTreeMap<String, (SchemaRef, Vec<RecordBatch>)>,
    stats: BTreeMap<&'static str, u64>,
}

/// One table as an Arrow C stream (consumed once, as the protocol wants).
#[pyclass(module = "svc_sdk._native")]
pub(crate) struct ArrowTable {
    schema: SchemaRef,
    batches: Option<Vec<RecordBatch>>,
}

#[pymethods]
impl ArrowTable {
    /// The Arrow C stream interface: a capsule holding an `ArrowArrayStream` of the
    /// table's batches. `requested_schema` is not honoured (the table's own schema is
    /// given), as the protocol allows.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &mut self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = self.batches.take().ok_or_else(|| {
            SvcErr::new("invalid_input", "this table's stream was already consumed").into_pyerr(py)
        })?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

#[pymethods]
impl Recording {
    /// The message types recorded, by the unit's names (`ekfNav`, `imuData`, ...).
    fn names(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    /// The table of one message type as an Arrow C stream.
    fn table(&self, py: Python<'_>, name: &str) -> PyResult<ArrowTable> {
        match self.tables.get(name) {
            Some((schema, batches)) => Ok(ArrowTable {
                schema: schema.clone(),
                batches: Some(batches.clone()),
            }),
            None => Err(SvcErr::new(
                "not_found",
                format!(
                    "no `{name}` records in this recording (it holds: {})",
                    self.names().join(", ")
                ),
            )
            .into_pyerr(py)),
        }
    }

    /// The decoder's counters.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for (name, value) in &self.stats {
            dict.set_item(*name, *value)?;
        }
        Ok(dict)
    }
}

/// Decodes a recording from a path (`str`), the paths of a session's files (a `list`
/// of `str`, read one after the other as one stream) or its bytes, with the GIL
/// released.
#[pyfunction]
fn read_recording(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Recording> {
    let decoded = if let Ok(bytes) = source.cast::<PyBytes>() {
        let data: Arc<[u8]> = Arc::from(bytes.as_bytes());
        py.detach(move || decode(std::io::Cursor::new(data.as_ref())))
    } else {
        let paths: Vec<std::path::PathBuf> = match source.extract() {
            Ok(path) => vec![path],
            Err(_) => source.extract()?,
        };
        py.detach(move || {
            // Every file opened first: a missing one fails before anything is decoded.
            let mut chained: Box<dyn std::io::Read + Send> = Box::new(std::io::empty());
            for path in &paths {
                match std::fs::File::open(path) {
                    Ok(file) => chained = Box::new(std::io::Read::chain(chained, file)),
                    Err(e) => {
                        return Err(Failed::Open(format!("{}: {e}", path.display()), e.kind()));
                    }
                }
            }
            decode(std::io::BufReader::with_capacity(1 << 16, chained))
        })
    };
    decoded.map_err(|failed| match failed {
        Failed::Open(message, std::io::ErrorKind::NotFound) => {
            SvcErr::new("not_found", message).into_pyerr(py)
        }
        Failed::Open(message, _) => SvcErr::new("io", message).into_pyerr(py),
        Failed::NotALog(message) => SvcErr::new("invalid_input", message).into_pyerr(py),
    })
}

enum Failed {
    Open(String, std::io::ErrorKind),
    NotALog(String),
}

fn decode(reader: impl std::io::Read) -> Result<Recording, Failed> {
    let mut tables = svc_logs::tables::TableReader::new(reader);
    let mut by_name: BTreeMap<String, (SchemaRef, Vec<RecordBatch>)> = BTreeMap::new();
    loop {
        match tables.next_batch() {
            Ok(Some((kind, batch))) => {
                by_name
                    .entry(kind.name().to_owned())
                    .or_insert_with(|| (batch.schema(), Vec::new()))
                    .1
                    .push(batch);
            }
            Ok(None) => break,
            Err(e) => return Err(Failed::NotALog(e.to_string())),
        }
    }
    let stats = tables.stats();
    if stats.bytes > 0 && stats.frames == 0 {
        return Err(Failed::NotALog(format!(
            "not an sbgECom log: no valid frame in {} bytes",
            stats.bytes
        )));
    }
    let counters = BTreeMap::from([
        ("bytes", stats.bytes),
        ("frames", stats.frames),
        ("records", stats.records),
        ("bad_crc", stats.bad_crc),
        ("unknown", stats.unknown),
        ("truncated", stats.truncated),
        ("skipped_bytes", stats.skipped_bytes),
        ("invalid_payload", stats.invalid_payload),
    ]);
    Ok(Recording {
        tables: by_name,
        stats: counters,
    })
}

impl Recording {
    /// The batches `tables` holds (finishing the ones being built), by message name,
    /// with these counters: a batch of a live stream.
    pub(crate) fn take_from(
        tables: &mut svc_logs::tables::Tables,
        stats: BTreeMap<&'static str, u64>,
    ) -> Result<Recording, String> {
        tables.finish().map_err(|e| e.to_string())?;
        let mut by_name: BTreeMap<String, (SchemaRef, Vec<RecordBatch>)> = BTreeMap::new();
        while let Some((kind, batch)) = tables.next_batch() {
            by_name
                .entry(kind.name().to_owned())
                .or_insert_with(|| (batch.schema(), Vec::new()))
                .1
                .push(batch);
        }
        Ok(Recording {
            tables: by_name,
            stats,
        })
    }
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Recording>()?;
    module.add_class::<ArrowTable>()?;
    module.add_function(wrap_pyfunction!(read_recording, module)?)?;
    Ok(())
}
