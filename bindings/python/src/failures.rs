//! The svc-core errors of the cloud, workflow, transfer and unit subsystems as Python
//! exceptions: the class from the error's `ErrorKind` (and subsystem), the attributes
//! from its fields. No logic of its own: every classification is svc-core's.

use pyo3::prelude::*;
use pyo3::types::PyList;
use svc_core::cloud::CloudError;
use svc_core::transfer::TransferError;
use svc_core::unit::{LoggerError, UnitError};
use svc_core::workflow::WorkflowError;

use crate::errors::SvcErr;

fn id_text(id: Option<uuid::Uuid>) -> Option<String> {
    id.map(|id| id.to_string())
}

/// The fields of a service error: status, problem, retry, side and operation.
fn with_cloud<'py>(py: Python<'py>, error: SvcErr<'py>, e: &CloudError) -> SvcErr<'py> {
    let mut error = error
        .status(e.status())
        .problem(e.title().map(str::to_owned), e.details().map(str::to_owned))
        .retryable(e.is_retryable())
        .side(e.side());
    if let Some(operation) = e.operation()
        && let Ok(value) = operation.into_pyobject(py)
    {
        error = error.attr("operation", value.into_any());
    }
    error
}

/// A cloud service error.
pub(crate) fn cloud(py: Python<'_>, e: CloudError) -> PyErr {
    with_cloud(py, SvcErr::new(e.kind().as_str(), e.to_string()), &e).into_pyerr(py)
}

/// A transfer error (a `TransferError` of its kind), naming the failed files.
pub(crate) fn transfer(py: Python<'_>, e: TransferError) -> PyErr {
    let failed: Vec<String> = e.failures().iter().map(ToString::to_string).collect();
    let mut error = SvcErr::new(e.kind().as_str(), e.to_string())
        .subsystem("transfer")
        .retryable(e.kind().is_retryable())
        .side(e.side());
    if let Some(cloud) = e.cloud_error() {
        error = with_cloud(py, error, cloud);
    }
    error = with_local_file(py, error, e.local_file());
    if let Ok(list) = PyList::new(py, failed) {
        error = error.attr("failures", list.into_any());
    }
    error.into_pyerr(py)
}

/// A workflow error (a `WorkflowError` of its kind), with the container and processing
/// it had created.
pub(crate) fn workflow(py: Python<'_>, e: WorkflowError) -> PyErr {
    match workflow_error(py, e) {
        Ok(error) | Err(error) => error,
    }
}

/// `errno`, `strerror` and `filename` of a failure on a local file, so that Python
/// raises its OS error class too (`FileNotFoundError`...).
fn with_local_file<'py>(
    py: Python<'py>,
    mut error: SvcErr<'py>,
    file: Option<(&std::path::Path, &std::io::Error)>,
) -> SvcErr<'py> {
    let Some((path, source)) = file else {
        return error;
    };
    if let Some(code) = source.raw_os_error()
        && let Ok(value) = code.into_pyobject(py)
    {
        error = error.attr("errno", value.into_any());
    }
    let strerror = pyo3::types::PyString::new(py, &source.kind().to_string());
    error = error.attr("strerror", strerror.into_any());
    let filename = pyo3::types::PyString::new(py, &path.to_string_lossy());
    error.attr("filename", filename.into_any())
}

fn workflow_error(py: Python<'_>, e: WorkflowError) -> PyResult<PyErr> {
    let mut error = SvcErr::new(e.kind().as_str(), e.to_string())
        .subsystem("workflow")
        .side(e.side());
    error = with_local_file(py, error, e.local_file());
    if let Some(cloud) = e.cloud_error() {
        error = with_cloud(py, error, cloud);
    }
    for (name, id) in [
        ("container_id", id_text(e.container_id())),
        ("processing_id", id_text(e.processing_id())),
    ] {
        let value = id.into_pyobject(py)?;
        error = error.attr(name, value.into_any());
    }
    let cleaned_up = pyo3::types::PyBool::new(py, e.cleanup().deleted());
    error = error.attr("cleaned_up", cleaned_up.to_owned().into_any());
    Ok(error.into_pyerr(py))
}

/// A unit error, with the nodes a refused settings write named.
pub(crate) fn unit(py: Python<'_>, e: UnitError) -> PyErr {
    let mut error = SvcErr::new(e.kind().as_str(), e.to_string())
        .status(e.status())
        .retryable(e.is_retryable())
        .side(e.side());
    if let UnitError::Api { title, detail, .. } = &e {
        error = error.problem(Some(title.clone()), Some(detail.clone()));
    }
    let nodes: Vec<(String, String)> = e
        .node_errors()
        .iter()
        .map(|n| (n.path.clone(), n.message.clone()))
        .collect();
    if !nodes.is_empty()
        && let Ok(list) = node_errors(py, &nodes)
    {
        error = error.attr("node_errors", list);
    }
    if let UnitError::NotApplied { paths } = &e
        && let Ok(list) = PyList::new(py, paths)
    {
        error = error.attr("paths", list.into_any());
    }
    if let UnitError::NotReady(not) = &e
        && let Ok(list) = PyList::new(py, &not.missing)
    {
        error = error.attr("missing", list.into_any());
    }
    error.into_pyerr(py)
}

/// An error of a live stream of output logs (its source failed or closed).
pub(crate) fn live(py: Python<'_>, e: svc_core::live::LiveError) -> PyErr {
    SvcErr::new(e.kind().as_str(), e.to_string())
        .retryable(false)
        .side(e.side())
        .into_pyerr(py)
}

/// An error of the unit's logger files (FTP): the class from its kind, the FTP reply
/// code as `status` when the server refused a command, the OS error of a local file.
pub(crate) fn logger(py: Python<'_>, e: LoggerError) -> PyErr {
    let e = match e {
        LoggerError::Unit(e) => return unit(py, e),
        e => e,
    };
    let code = e.code().and_then(|code| u16::try_from(code).ok());
    let mut error = SvcErr::new(e.kind().as_str(), e.to_string())
        .status(code)
        .retryable(e.kind().is_retryable())
        .side(e.side());
    if let LoggerError::Io { path, source } = &e {
        error = with_local_file(py, error, Some((path, source)));
    }
    error.into_pyerr(py)
}

/// `[svc_sdk.errors.NodeError(path, message), ...]`.
fn node_errors<'py>(py: Python<'py>, nodes: &[(String, String)]) -> PyResult<Bound<'py, PyAny>> {
    let class = py.import("svc_sdk.errors")?.getattr("NodeError")?;
    let items = nodes
        .iter()
        .map(|(path, message)| class.call1((path.as_str(), message.as_str())))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any())
}
