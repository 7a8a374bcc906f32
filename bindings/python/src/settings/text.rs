//! JSON documents given as text (`str`, `bytes`, `bytearray`, `memoryview`), and the
//! error of one that is not JSON.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::convert;
use crate::errors::SvcErr;

/// A JSON document given as `str` or `bytes` (or `bytearray`, `memoryview`).
pub(super) enum Text<'py> {
    Bytes(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

impl<'py> Text<'py> {
    pub(super) fn from_object(object: &Bound<'py, PyAny>) -> PyResult<Self> {
        if let Ok(bytes) = object.cast::<PyBytes>() {
            return Ok(Self::Bytes(bytes.clone()));
        }
        if let Ok(text) = object.cast::<PyString>() {
            // A lone surrogate has no UTF-8 form: such a text is not JSON.
            let text = text.to_cow().map_err(|_| {
                SvcErr::new(
                    "invalid_input",
                    "a text is not JSON: it holds a lone surrogate, which UTF-8 cannot encode",
                )
                .subsystem("settings")
                .into_pyerr(object.py())
            })?;
            return Ok(Self::Owned(text.into_owned().into_bytes()));
        }
        object.extract::<Vec<u8>>().map(Self::Owned).map_err(|_| {
            PyTypeError::new_err(format!(
                "expected JSON as str or bytes, not {}",
                convert::type_name(object)
            ))
        })
    }

    pub(super) fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Bytes(bytes) => bytes.as_bytes(),
            Self::Owned(bytes) => bytes,
        }
    }
}

/// The error of a text that is not JSON: which one, and where (never its content).
pub(super) fn not_json_text(py: Python<'_>, which: &str, error: &serde_json::Error) -> PyErr {
    SvcErr::new(
        "invalid_input",
        format!(
            "{which} is not JSON (line {}, column {})",
            error.line(),
            error.column()
        ),
    )
    .subsystem("settings")
    .into_pyerr(py)
}
