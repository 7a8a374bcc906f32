//! JSON documents given as text (`str`, `bytes`, `bytearray`, `memoryview`).

use std::borrow::Cow;

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::convert;
use crate::errors::SvcErr;

/// The bytes of a JSON document given as `str` or `bytes` (or `bytearray`,
/// `memoryview`); those of a `bytes` object borrowed.
pub(super) fn json_bytes<'a>(object: &'a Bound<'_, PyAny>) -> PyResult<Cow<'a, [u8]>> {
    if let Ok(bytes) = object.cast::<PyBytes>() {
        return Ok(Cow::Borrowed(bytes.as_bytes()));
    }
    if let Ok(text) = object.cast::<PyString>() {
        // A lone surrogate has no UTF-8 form: such a text is not JSON.
        return match text.to_cow() {
            Ok(text) => Ok(Cow::Owned(text.into_owned().into_bytes())),
            Err(_) => Err(SvcErr::new(
                "invalid_input",
                "a text is not JSON: it holds a lone surrogate, which UTF-8 cannot encode",
            )
            .subsystem("settings")
            .into_pyerr(object.py())),
        };
    }
    object.extract::<Vec<u8>>().map(Cow::Owned).map_err(|_| {
        let name = convert::type_name(object);
        PyTypeError::new_err(format!("expected JSON as str or bytes, not {name}"))
    })
}
