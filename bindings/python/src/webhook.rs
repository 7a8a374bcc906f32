//! `svc_sdk.Webhook` and `svc_sdk.webhook.sign`: verify webhook deliveries
//! (`svc_core::webhook`), from the headers of any Python web framework.

use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};
use serde_json::Value;
use svc_core::WebhookSecret;
use svc_core::webhook::{self as core, SIGNATURE_HEADER, TIMESTAMP_HEADER, WebhookError};

use crate::convert::{to_python, type_name};
use crate::errors::SvcErr;

/// The exception for a refused delivery: a `WebhookVerificationError` with its `code`
/// (an `InvalidResponseError` too for a signed body that is not an event, an
/// `InvalidInputError` too for a verifier without a secret).
/// A signed event this SDK cannot type carries its JSON as `raw`.
fn verification_error(py: Python<'_>, error: &WebhookError) -> PyErr {
    let kind = match error {
        WebhookError::InvalidPayload(_) | WebhookError::UntypedEvent { .. } => "invalid_response",
        WebhookError::NoSecret => "invalid_input",
        _ => "verification",
    };
    let mut err = SvcErr::new(kind, error.to_string())
        .subsystem("webhook")
        .attr("code", PyString::new(py, error.code()).into_any());
    if let WebhookError::UntypedEvent { raw, .. } = error {
        match to_python(py, raw) {
            Ok(raw) => err = err.attr("raw", raw),
            Err(e) => return e,
        }
    }
    err.into_pyerr(py)
}

/// The secrets given as one `str` or a sequence of them.
fn secrets(secret: &Bound<'_, PyAny>) -> PyResult<Vec<WebhookSecret>> {
    if let Ok(text) = secret.cast::<PyString>() {
        return Ok(vec![WebhookSecret::new(text.to_cow()?.into_owned())]);
    }
    if secret.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err("a webhook secret is a str, not bytes"));
    }
    let mut all = Vec::new();
    for item in secret.try_iter().map_err(|_| {
        PyTypeError::new_err(format!(
            "expected a secret (str) or a list of secrets, not {}",
            type_name(secret)
        ))
    })? {
        let item = item?;
        let text = item.cast::<PyString>().map_err(|_| {
            PyTypeError::new_err(format!(
                "a webhook secret is a str, not {}",
                type_name(&item)
            ))
        })?;
        all.push(WebhookSecret::new(text.to_cow()?.into_owned()));
    }
    Ok(all)
}

/// A header value as text; bytes that are not ASCII, or another type, make a value that
/// fails its check (as a value that is not visible ASCII does in Rust).
fn header_text(value: &Bound<'_, PyAny>) -> String {
    if let Ok(text) = value.cast::<PyString>() {
        return text.to_string_lossy().into_owned();
    }
    if let Ok(bytes) = value.cast::<PyBytes>()
        && let Ok(text) = std::str::from_utf8(bytes.as_bytes())
    {
        return text.to_owned();
    }
    String::new()
}

/// The values of one header among `values`: `None` when absent, the value when sent
/// once, an empty value (which fails its check) when sent more than once.
fn single(values: Vec<String>) -> Option<String> {
    let mut values = values.into_iter();
    let first = values.next()?;
    Some(if values.next().is_some() {
        String::new()
    } else {
        first
    })
}

/// Whether a header name (`str` or `bytes`) is `name`, whatever the case.
fn name_is(key: &Bound<'_, PyAny>, name: &str) -> bool {
    if let Ok(text) = key.cast::<PyString>() {
        text.to_string_lossy().eq_ignore_ascii_case(name)
    } else if let Ok(bytes) = key.cast::<PyBytes>() {
        bytes.as_bytes().eq_ignore_ascii_case(name.as_bytes())
    } else {
        false
    }
}

/// The `Svc-Timestamp` and `Svc-Signature` values of a headers object, names matched
/// case-insensitively. Takes a `dict`, any mapping with `getlist` (Werkzeug/Flask,
/// Starlette/FastAPI), `getall` (aiohttp) or `get_all` (`email.message.Message`,
/// `http.client.HTTPMessage`), any other mapping (Django's `request.headers`,
/// `requests`' headers), or an iterable of `(name, value)` pairs (an ASGI scope's
/// `headers`).
fn header_values(headers: &Bound<'_, PyAny>) -> PyResult<(Option<String>, Option<String>)> {
    let names = [TIMESTAMP_HEADER, SIGNATURE_HEADER];
    let mut found: [Vec<String>; 2] = [Vec::new(), Vec::new()];
    let lists = if headers.is_instance_of::<pyo3::types::PyDict>() {
        None
    } else if let Ok(getlist) = headers.getattr("getlist") {
        Some((getlist, false))
    } else if let Ok(getall) = headers.getattr("getall") {
        Some((getall, true))
    } else if let Ok(get_all) = headers.getattr("get_all") {
        Some((get_all, false))
    } else {
        None
    };
    if let Some((method, with_default)) = lists {
        for (index, name) in names.iter().enumerate() {
            let values = if with_default {
                method.call1((*name, PyList::empty(headers.py())))?
            } else {
                method.call1((*name,))?
            };
            if !values.is_none() {
                for value in values.try_iter()? {
                    found[index].push(header_text(&value?));
                }
            }
        }
    } else {
        let pairs = if headers.hasattr("items")? {
            headers.call_method0("items")?
        } else {
            headers.clone()
        };
        for pair in pairs.try_iter()? {
            let pair = pair?;
            let pair = pair.cast::<PyTuple>().map_err(|_| {
                PyTypeError::new_err(
                    "headers must be a mapping or an iterable of (name, value) pairs",
                )
            })?;
            if pair.len() != 2 {
                return Err(PyTypeError::new_err(
                    "headers must be a mapping or an iterable of (name, value) pairs",
                ));
            }
            let key = pair.get_item(0)?;
            for (index, name) in names.iter().enumerate() {
                if name_is(&key, name) {
                    found[index].push(header_text(&pair.get_item(1)?));
                }
            }
        }
    }
    let [timestamp, signature] = found;
    Ok((single(timestamp), single(signature)))
}

/// The body as bytes: `bytes`, `bytearray` or `memoryview` (a `str` is refused: the
/// signature covers the raw bytes as received).
fn body_bytes<'py>(body: &Bound<'py, PyAny>) -> PyResult<BodyBytes<'py>> {
    if let Ok(bytes) = body.cast::<PyBytes>() {
        return Ok(BodyBytes::Borrowed(bytes.clone()));
    }
    if body.is_instance_of::<PyString>() {
        return Err(PyTypeError::new_err(
            "the body must be the raw bytes received (bytes), not str",
        ));
    }
    body.extract::<Vec<u8>>()
        .map(BodyBytes::Owned)
        .map_err(|_| {
            PyTypeError::new_err(format!("the body must be bytes, not {}", type_name(body)))
        })
}

enum BodyBytes<'py> {
    Borrowed(Bound<'py, PyBytes>),
    Owned(Vec<u8>),
}

impl BodyBytes<'_> {
    fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Borrowed(bytes) => bytes.as_bytes(),
            Self::Owned(bytes) => bytes,
        }
    }
}

/// Verifies webhook deliveries of the cloud service: the `Svc-Signature` HMAC with one
/// of the secrets (several during a rotation), the `Svc-Timestamp` within `tolerance`
/// seconds of the clock, then the body decoded as an event.
#[pyclass(frozen, module = "svc_sdk.webhook")]
pub(crate) struct Webhook {
    inner: core::Webhook,
}

#[pymethods]
impl Webhook {
    #[new]
    #[pyo3(signature = (secret, tolerance = 300.0))]
    fn new(py: Python<'_>, secret: &Bound<'_, PyAny>, tolerance: f64) -> PyResult<Self> {
        if !tolerance.is_finite() || tolerance < 0.0 {
            return Err(PyValueError::new_err(
                "tolerance must be a finite number of seconds >= 0",
            ));
        }
        let tolerance = Duration::try_from_secs_f64(tolerance)
            .map_err(|_| PyValueError::new_err("tolerance is too large"))?;
        let inner = core::Webhook::with_secrets(secrets(secret)?)
            .map_err(|e| verification_error(py, &e))?
            .with_tolerance(tolerance);
        Ok(Self { inner })
    }

    /// The timestamp tolerance in seconds (whole seconds count).
    #[getter]
    fn tolerance(&self) -> f64 {
        self.inner.tolerance().as_secs_f64()
    }

    /// Verifies a delivery and returns its event, a `dict` with the wire's field names
    /// (`id`, `eventType`, `createdAt`, `endpointMetadata`, `payload`), exactly as sent
    /// (fields this version does not know included).
    ///
    /// `headers`: the request's headers (any mapping, names in any case); `body`: the
    /// raw body bytes as received; `now`: the receiver's clock in Unix seconds (default:
    /// the system clock). Raises `WebhookVerificationError` (with `code`).
    #[pyo3(signature = (headers, body, *, now = None))]
    fn verify<'py>(
        &self,
        py: Python<'py>,
        headers: &Bound<'py, PyAny>,
        body: &Bound<'py, PyAny>,
        now: Option<i64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (timestamp, signature) = header_values(headers)?;
        let body = body_bytes(body)?;
        let bytes = body.as_bytes();
        let now = now.unwrap_or_else(core::unix_now);
        let verified = py.detach(|| {
            self.inner
                .verify_parts(timestamp.as_deref(), signature.as_deref(), bytes, now)
                .and_then(|_| event_value(bytes))
        });
        event(py, verified)
    }

    /// As `verify`, without checking how old the timestamp is (it must still be well
    /// formed and signed): for replaying stored deliveries.
    fn verify_ignoring_timestamp<'py>(
        &self,
        py: Python<'py>,
        headers: &Bound<'py, PyAny>,
        body: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let (timestamp, signature) = header_values(headers)?;
        let body = body_bytes(body)?;
        let bytes = body.as_bytes();
        let verified = py.detach(|| {
            self.inner
                .verify_parts_ignoring_timestamp(timestamp.as_deref(), signature.as_deref(), bytes)
                .and_then(|_| event_value(bytes))
        });
        event(py, verified)
    }

    fn __repr__(&self) -> String {
        // Never the secrets.
        format!("Webhook(tolerance={})", self.inner.tolerance().as_secs())
    }
}

/// The verified body as a JSON value (it decoded as an event, so it is JSON).
fn event_value(body: &[u8]) -> Result<Value, WebhookError> {
    serde_json::from_slice(body).map_err(|e| {
        WebhookError::InvalidPayload(format!("line {}, column {}", e.line(), e.column()))
    })
}

fn event<'py>(
    py: Python<'py>,
    verified: Result<Value, WebhookError>,
) -> PyResult<Bound<'py, PyAny>> {
    match verified {
        Ok(value) => to_python(py, &value),
        Err(error) => Err(verification_error(py, &error)),
    }
}

/// The `Svc-Signature` of a delivery: the lowercase hex HMAC-SHA256, keyed with the
/// UTF-8 bytes of `secret`, over `"{timestamp}." + body` (for tests and emulators).
#[pyfunction]
fn sign(secret: &str, timestamp: i64, body: &Bound<'_, PyAny>) -> PyResult<String> {
    let body = body_bytes(body)?;
    Ok(core::sign(
        &WebhookSecret::new(secret.to_owned()),
        timestamp,
        body.as_bytes(),
    ))
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Webhook>()?;
    module.add_function(wrap_pyfunction!(sign, module)?)?;
    module.add("TIMESTAMP_HEADER", TIMESTAMP_HEADER)?;
    module.add("SIGNATURE_HEADER", SIGNATURE_HEADER)?;
    Ok(())
}
