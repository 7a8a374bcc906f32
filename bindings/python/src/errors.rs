//! Python exceptions from Rust errors.
//!
//! The exception classes live in the pure-Python module `svc_sdk.errors` (a stable-ABI
//! extension cannot subclass `Exception` itself); [`SvcErr`] describes a failure and
//! [`SvcErr::into_pyerr`] builds the instance of the right class by calling
//! `svc_sdk.errors._new_error(message, kind=..., subsystem=..., **attributes)`.

use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyDict;

/// `svc_sdk.errors._new_error`, imported once.
static NEW_ERROR: PyOnceLock<Py<PyAny>> = PyOnceLock::new();

/// A failure to raise as an `svc_sdk.errors.SvcError`: its kind (the strings of
/// `svc_core::ErrorKind::as_str()`), the subsystem with details of its own
/// (`"settings"`, `"webhook"`, `"transfer"`, `"workflow"`, or none), the message, and
/// the attributes of the exception.
pub(crate) struct SvcErr<'py> {
    kind: &'static str,
    subsystem: Option<&'static str>,
    message: String,
    status: Option<u16>,
    title: Option<String>,
    details: Option<String>,
    retryable: Option<bool>,
    side: Option<svc_core::Side>,
    extra: Vec<(&'static str, Bound<'py, PyAny>)>,
}

impl<'py> SvcErr<'py> {
    /// A failure of `kind` with `message` (which must not hold a secret).
    pub(crate) fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            subsystem: None,
            message: message.into(),
            status: None,
            title: None,
            details: None,
            retryable: None,
            side: None,
            extra: Vec::new(),
        }
    }

    /// The subsystem whose exception class (also) applies.
    pub(crate) fn subsystem(mut self, subsystem: &'static str) -> Self {
        self.subsystem = Some(subsystem);
        self
    }

    /// The HTTP status of the failed answer.
    #[allow(dead_code)] // For the cloud and unit errors (next).
    pub(crate) fn status(mut self, status: Option<u16>) -> Self {
        self.status = status;
        self
    }

    /// The other side's title and details of the problem.
    #[allow(dead_code)] // For the cloud and unit errors (next).
    pub(crate) fn problem(mut self, title: Option<String>, details: Option<String>) -> Self {
        self.title = title;
        self.details = details;
        self
    }

    /// Whether repeating may help, when it is not the kind's default.
    #[allow(dead_code)] // For the cloud and unit errors (next).
    pub(crate) fn retryable(mut self, retryable: bool) -> Self {
        self.retryable = Some(retryable);
        self
    }

    /// The side that failed (`svc_core::Side`), `None` for a local failure.
    pub(crate) fn side(mut self, side: Option<svc_core::Side>) -> Self {
        self.side = side;
        self
    }

    /// An attribute of the subsystem's class (`code`, `paths`, `node_errors`, ...).
    pub(crate) fn attr(mut self, name: &'static str, value: Bound<'py, PyAny>) -> Self {
        self.extra.push((name, value));
        self
    }

    /// The exception. Should `svc_sdk.errors` fail to load (a broken installation), a
    /// `RuntimeError` with the same message, which says so.
    pub(crate) fn into_pyerr(self, py: Python<'py>) -> PyErr {
        match self.build(py) {
            Ok(error) => error,
            Err(cause) => {
                let error = PyRuntimeError::new_err(format!(
                    "{} (svc_sdk.errors could not build the exception)",
                    self.message
                ));
                error.set_cause(py, Some(cause));
                error
            }
        }
    }

    fn build(&self, py: Python<'py>) -> PyResult<PyErr> {
        let new_error = NEW_ERROR.import(py, "svc_sdk.errors", "_new_error")?;
        let kwargs = PyDict::new(py);
        kwargs.set_item("kind", self.kind)?;
        kwargs.set_item("subsystem", self.subsystem)?;
        kwargs.set_item("status", self.status)?;
        kwargs.set_item("title", self.title.as_deref())?;
        kwargs.set_item("details", self.details.as_deref())?;
        kwargs.set_item("side", self.side.map(svc_core::Side::as_str))?;
        if let Some(retryable) = self.retryable {
            kwargs.set_item("retryable", retryable)?;
        }
        for (name, value) in &self.extra {
            kwargs.set_item(*name, value)?;
        }
        let error = new_error.call((self.message.as_str(),), Some(&kwargs))?;
        Ok(PyErr::from_value(error))
    }
}
