//! `CloudClient`: every operation of the cloud service and its notification service,
//! a line or two each over `svc_core::cloud::CloudClient`. Records cross as JSON
//! (dicts with the wire's field names); the Python facade (`svc_sdk/cloud.py`) wraps
//! them in typed record classes.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::BoxStream;
use pyo3::prelude::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use svc_core::cloud::{ApiSecret, CloudClient as Core, CloudConfig, CloudError, ListFilter};
use svc_core::transfer::{TransferOptions, TransferReport, Transfers};
use uuid::Uuid;

use crate::call::{Call, Output, output};
use crate::convert::{ToValue, py_repr, to_python};
use crate::errors::SvcErr;
use crate::failures;

/// A record (or `()`, as `None`) as Python objects.
pub(crate) fn json<T: Serialize>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>> {
    let value = serde_json::to_value(value).map_err(|e| {
        SvcErr::new("internal", format!("a record could not be converted: {e}")).into_pyerr(py)
    })?;
    Ok(to_python(py, &value)?.unbind())
}

/// An identifier argument.
pub(crate) fn uuid_arg(py: Python<'_>, name: &str, text: &str) -> PyResult<Uuid> {
    Uuid::parse_str(text.trim()).map_err(|_| {
        SvcErr::new("invalid_input", format!("{name} is not a UUID: {text:?}")).into_pyerr(py)
    })
}

/// A request body given as a dict with the wire's field names.
pub(crate) fn body<T: DeserializeOwned>(
    py: Python<'_>,
    what: &str,
    object: &Bound<'_, PyAny>,
) -> PyResult<T> {
    let value = ToValue::new(py).value(object)?;
    serde_json::from_value(value)
        .map_err(|e| SvcErr::new("invalid_input", format!("{what}: {e}")).into_pyerr(py))
}

/// Runs a cloud operation as a [`Call`] whose result is the record as JSON.
fn run<T, F>(future: F) -> PyResult<Call>
where
    T: Serialize + Send + 'static,
    F: Future<Output = Result<T, CloudError>> + Send + 'static,
{
    Call::spawn(async move { output(future.await, json, failures::cloud) })
}

/// An iterator over every item of a list, page after page (svc-core's paging).
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct Pager {
    items: Arc<tokio::sync::Mutex<BoxStream<'static, Result<Value, CloudError>>>>,
}

impl Pager {
    fn new<T: Serialize + Send + 'static>(
        stream: BoxStream<'static, Result<T, CloudError>>,
    ) -> Self {
        let items = stream
            .map(|item| {
                item.and_then(|record| {
                    serde_json::to_value(record).map_err(|e| CloudError::InvalidResponse {
                        operation: "list",
                        reason: e.to_string(),
                    })
                })
            })
            .boxed();
        Self {
            items: Arc::new(tokio::sync::Mutex::new(items)),
        }
    }
}

#[pymethods]
impl Pager {
    /// The next item as a [`Call`] whose result is the item, or `None` after the last.
    fn next_call(&self) -> PyResult<Call> {
        let items = Arc::clone(&self.items);
        Call::spawn(async move {
            let next = items.lock().await.next().await;
            let result: Output = Box::new(move |py| match next {
                None => Ok(py.None()),
                Some(Ok(value)) => Ok(to_python(py, &value)?.unbind()),
                Some(Err(e)) => Err(failures::cloud(py, e)),
            });
            result
        })
    }
}

/// A client of the cloud service for one organization. Thread-safe; share one.
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct CloudClient {
    pub(crate) core: Core,
    /// How long its workflows wait out the service or its identity provider being
    /// away (`WorkflowOptions::outage_tolerance`).
    pub(crate) outage_tolerance: Duration,
}

/// A number of seconds longer than zero.
pub(crate) fn positive_seconds(py: Python<'_>, name: &str, seconds: f64) -> PyResult<Duration> {
    match Duration::try_from_secs_f64(seconds) {
        Ok(duration) if !duration.is_zero() => Ok(duration),
        _ => Err(SvcErr::new(
            "invalid_input",
            format!("{name} must be a finite number of seconds > 0, not {seconds}"),
        )
        .into_pyerr(py)),
    }
}

/// The settings every constructor of [`CloudClient`] takes beside the addresses and
/// credentials; `None`: the default.
struct Tuning {
    request_timeout: Option<f64>,
    connect_timeout: Option<f64>,
    max_attempts: Option<u32>,
    page_size: Option<i64>,
    outage_tolerance: Option<f64>,
}

impl Tuning {
    /// The client of `config` with these settings (checked: 0 attempts, a timeout of
    /// zero or a page size out of range are refused).
    fn client(self, py: Python<'_>, mut config: CloudConfig) -> PyResult<CloudClient> {
        if let Some(seconds) = self.request_timeout {
            config.request_timeout = positive_seconds(py, "request_timeout", seconds)?;
        }
        if let Some(seconds) = self.connect_timeout {
            config.connect_timeout = positive_seconds(py, "connect_timeout", seconds)?;
        }
        if let Some(attempts) = self.max_attempts {
            config.retry.max_attempts = attempts;
        }
        if let Some(size) = self.page_size {
            config.page_size = size;
        }
        let outage_tolerance = match self.outage_tolerance {
            Some(seconds) => Duration::try_from_secs_f64(seconds).map_err(|_| {
                SvcErr::new(
                    "invalid_input",
                    format!(
                        "outage_tolerance must be a finite number of seconds >= 0, not {seconds}"
                    ),
                )
                .into_pyerr(py)
            })?,
            None => svc_core::workflow::DEFAULT_OUTAGE_TOLERANCE,
        };
        let core = Core::new(config).map_err(|e| failures::cloud(py, e))?;
        Ok(CloudClient {
            core,
            outage_tolerance,
        })
    }
}

#[pymethods]
impl CloudClient {
    #[new]
    #[pyo3(signature = (base_url, auth_url, notification_url, api_key, api_secret, organization_id, *, request_timeout=None, connect_timeout=None, max_attempts=None, page_size=None, outage_tolerance=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        base_url: String,
        auth_url: String,
        notification_url: String,
        api_key: String,
        api_secret: String,
        organization_id: &str,
        request_timeout: Option<f64>,
        connect_timeout: Option<f64>,
        max_attempts: Option<u32>,
        page_size: Option<i64>,
        outage_tolerance: Option<f64>,
    ) -> PyResult<Self> {
        let organization_id = uuid_arg(py, "organization_id", organization_id)?;
        let config = CloudConfig::new(
            base_url,
            auth_url,
            notification_url,
            api_key,
            ApiSecret::new(api_secret),
            organization_id,
        );
        Tuning {
            request_timeout,
            connect_timeout,
            max_attempts,
            page_size,
            outage_tolerance,
        }
        .client(py, config)
    }

    /// A client from `SVC_BASE_URL`, `SVC_AUTH_URL`, `SVC_NOTIFICATION_URL`,
    /// `SVC_API_KEY`, `SVC_API_SECRET` and `SVC_ORGANIZATION_ID`, with the same
    /// settings as the constructor.
    #[staticmethod]
    #[pyo3(signature = (*, request_timeout=None, connect_timeout=None, max_attempts=None, page_size=None, outage_tolerance=None))]
    fn from_env(
        py: Python<'_>,
        request_timeout: Option<f64>,
        connect_timeout: Option<f64>,
        max_attempts: Option<u32>,
        page_size: Option<i64>,
        outage_tolerance: Option<f64>,
    ) -> PyResult<Self> {
        let config = CloudConfig::from_env().map_err(|e| failures::cloud(py, e))?;
        Tuning {
            request_timeout,
            connect_timeout,
            max_attempts,
            page_size,
            outage_tolerance,
        }
        .client(py, config)
    }

    #[getter]
    fn organization_id(&self) -> String {
        self.core.organization_id().to_string()
    }

    #[getter]
    fn base_url(&self) -> String {
        self.core.config().base_url
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let c = self.core.config();
        Ok(format!(
            "CloudClient(base_url={}, organization_id={}, api_key={})",
            py_repr(py, &svc_core::shown_address(&c.base_url))?,
            py_repr(py, &c.organization_id.to_string())?,
            py_repr(py, &c.api_key)?,
        ))
    }

    fn server_info(&self) -> PyResult<Call> {
        let c = self.core.clone();
        run(async move { c.server_info().await })
    }

    // ----------------------------------------------------------------- containers

    fn create_container(&self, py: Python<'_>, request: &Bound<'_, PyAny>) -> PyResult<Call> {
        let request = body(py, "container", request)?;
        let c = self.core.clone();
        run(async move { c.create_container(request).await })
    }

    fn get_container(&self, py: Python<'_>, container_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "container_id", container_id)?;
        let c = self.core.clone();
        run(async move { c.get_container(id).await })
    }

    fn update_container(
        &self,
        py: Python<'_>,
        container_id: &str,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "container_id", container_id)?;
        let request = body(py, "container update", request)?;
        let c = self.core.clone();
        run(async move { c.update_container(id, request).await })
    }

    fn delete_container(&self, py: Python<'_>, container_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "container_id", container_id)?;
        let c = self.core.clone();
        run(async move { c.delete_container(id).await })
    }

    fn add_container_files(
        &self,
        py: Python<'_>,
        container_id: &str,
        files: &Bound<'_, PyAny>,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "container_id", container_id)?;
        let files = body(py, "files", files)?;
        let c = self.core.clone();
        run(async move { c.add_container_files(id, files).await })
    }

    fn update_container_file(
        &self,
        py: Python<'_>,
        container_file_id: &str,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "container_file_id", container_file_id)?;
        let request = body(py, "container file update", request)?;
        let c = self.core.clone();
        run(async move { c.update_container_file(id, request).await })
    }

    fn delete_container_file(&self, py: Python<'_>, container_file_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "container_file_id", container_file_id)?;
        let c = self.core.clone();
        run(async move { c.delete_container_file(id).await })
    }

    fn list_containers_page(&self, page: i64, per_page: i64) -> PyResult<Call> {
        let c = self.core.clone();
        run(async move { c.list_containers_page(page, per_page).await })
    }

    /// The containers that carry every `metadata` entry given (all without).
    #[pyo3(signature = (metadata=None))]
    fn list_containers(&self, metadata: Option<BTreeMap<String, String>>) -> Pager {
        match metadata {
            None => Pager::new(self.core.list_containers()),
            Some(metadata) => Pager::new(self.core.list_containers_matching(ListFilter {
                name: None,
                metadata: metadata.into_iter().collect(),
            })),
        }
    }

    // ---------------------------------------------------------------- processings

    fn start_processing(&self, py: Python<'_>, request: &Bound<'_, PyAny>) -> PyResult<Call> {
        let request = body(py, "processing", request)?;
        let c = self.core.clone();
        run(async move { c.start_processing(request).await })
    }

    fn get_processing(&self, py: Python<'_>, processing_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let c = self.core.clone();
        run(async move { c.get_processing(id).await })
    }

    fn cancel_processing(&self, py: Python<'_>, processing_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let c = self.core.clone();
        run(async move { c.cancel_processing(id).await })
    }

    fn archive_processing(&self, py: Python<'_>, processing_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let c = self.core.clone();
        run(async move { c.archive_processing(id).await })
    }

    fn list_processing_outputs(&self, py: Python<'_>, processing_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let c = self.core.clone();
        run(async move { c.list_processing_outputs(id).await })
    }

    fn list_processing_errors(&self, py: Python<'_>, processing_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let c = self.core.clone();
        run(async move { c.list_processing_errors(id).await })
    }

    fn list_processings_page(&self, page: i64, per_page: i64) -> PyResult<Call> {
        let c = self.core.clone();
        run(async move { c.list_processings_page(page, per_page).await })
    }

    /// The processings of that `name` and every `metadata` entry given (all without).
    #[pyo3(signature = (name=None, metadata=None))]
    fn list_processings(
        &self,
        name: Option<String>,
        metadata: Option<BTreeMap<String, String>>,
    ) -> Pager {
        if name.is_none() && metadata.is_none() {
            return Pager::new(self.core.list_processings());
        }
        Pager::new(self.core.list_processings_matching(ListFilter {
            name,
            metadata: metadata.unwrap_or_default().into_iter().collect(),
        }))
    }

    // ------------------------------------------------------------------ transfers

    /// Uploads local files to the registered files of a container: `files` pairs
    /// each container path with its local file. Streamed, in parallel, retried.
    #[pyo3(signature = (container_id, files, parallelism=4))]
    fn upload(
        &self,
        py: Python<'_>,
        container_id: &str,
        files: Vec<(String, PathBuf)>,
        parallelism: usize,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "container_id", container_id)?;
        let transfers = transfers(py, parallelism)?;
        let c = self.core.clone();
        Call::spawn(async move {
            let result = transfers.upload_to_container(&c, id, files).await;
            output(result, report, failures::transfer)
        })
    }

    /// Downloads every output of a processed processing into `folder` (each output
    /// path checked so that none escapes it).
    #[pyo3(signature = (processing_id, folder, parallelism=4))]
    fn download_outputs(
        &self,
        py: Python<'_>,
        processing_id: &str,
        folder: PathBuf,
        parallelism: usize,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "processing_id", processing_id)?;
        let transfers = transfers(py, parallelism)?;
        let c = self.core.clone();
        Call::spawn(async move {
            let result = transfers.download_outputs(&c, id, folder).await;
            output(result, report, failures::transfer)
        })
    }

    // ---------------------------------------------------------- webhook endpoints

    fn list_webhook_endpoints_page(&self, page: i64, per_page: i64) -> PyResult<Call> {
        let c = self.core.clone();
        run(async move { c.list_webhook_endpoints_page(page, per_page).await })
    }

    fn list_webhook_endpoints(&self) -> Pager {
        Pager::new(self.core.list_webhook_endpoints())
    }

    fn create_webhook_endpoint(
        &self,
        py: Python<'_>,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<Call> {
        let request = body(py, "webhook endpoint", request)?;
        let c = self.core.clone();
        run(async move { c.create_webhook_endpoint(request).await })
    }

    fn update_webhook_endpoint(
        &self,
        py: Python<'_>,
        webhook_endpoint_id: &str,
        request: &Bound<'_, PyAny>,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "webhook_endpoint_id", webhook_endpoint_id)?;
        let request = body(py, "webhook endpoint update", request)?;
        let c = self.core.clone();
        run(async move { c.update_webhook_endpoint(id, request).await })
    }

    fn delete_webhook_endpoint(&self, py: Python<'_>, webhook_endpoint_id: &str) -> PyResult<Call> {
        let id = uuid_arg(py, "webhook_endpoint_id", webhook_endpoint_id)?;
        let c = self.core.clone();
        run(async move { c.delete_webhook_endpoint(id).await })
    }

    fn list_missed_webhooks_page(
        &self,
        py: Python<'_>,
        webhook_endpoint_id: &str,
        page: i64,
        per_page: i64,
    ) -> PyResult<Call> {
        let id = uuid_arg(py, "webhook_endpoint_id", webhook_endpoint_id)?;
        let c = self.core.clone();
        run(async move { c.list_missed_webhooks_page(id, page, per_page).await })
    }

    fn list_missed_webhooks(&self, py: Python<'_>, webhook_endpoint_id: &str) -> PyResult<Pager> {
        let id = uuid_arg(py, "webhook_endpoint_id", webhook_endpoint_id)?;
        Ok(Pager::new(self.core.list_missed_webhooks(id)))
    }
}

fn transfers(py: Python<'_>, parallelism: usize) -> PyResult<Transfers> {
    Transfers::with_options(TransferOptions {
        parallelism: parallelism.max(1),
        ..TransferOptions::default()
    })
    .map_err(|e| failures::transfer(py, e))
}

/// A transfer's report: every file with its state, and the totals.
fn report(py: Python<'_>, report: TransferReport) -> PyResult<Py<PyAny>> {
    let files = pyo3::types::PyList::empty(py);
    for f in &report.files {
        let d = pyo3::types::PyDict::new(py);
        d.set_item("name", &f.name)?;
        d.set_item("local_path", f.local_path.display().to_string())?;
        d.set_item("bytes", f.bytes)?;
        d.set_item("attempts", f.attempts)?;
        d.set_item("state", format!("{:?}", f.state).to_lowercase())?;
        files.append(d)?;
    }
    let d = pyo3::types::PyDict::new(py);
    d.set_item("files", files)?;
    d.set_item("bytes", report.bytes())?;
    d.set_item("elapsed", report.elapsed.as_secs_f64())?;
    Ok(d.into_any().unbind())
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<CloudClient>()?;
    module.add_class::<Pager>()?;
    Ok(())
}
