//! `Unit`: a session with an inertial navigation unit over HTTP, a serial port or a
//! serial-over-IP bridge, a line or two per operation over `svc_core::unit::Unit`.
//! Settings trees cross as dicts (key order kept, `True` is not `1`).

use std::time::Duration;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde_json::Value;
use svc_core::unit::serial_link::SerialOptions;
use svc_core::unit::{
    ApplyOptions, ApplyReport, Password, Unit as Core, UnitError, UserName, WriteOutcome,
};

use crate::call::{Call, output};
use crate::cloud::{json, positive_seconds};
use crate::convert::{ToValue, py_repr};
use crate::errors::SvcErr;
use crate::failures;
use crate::runtime::{block_on, runtime};

/// Runs a unit operation as a [`Call`] whose result is converted with `convert`.
fn run<T, F, C>(future: F, convert: C) -> PyResult<Call>
where
    T: Send + 'static,
    F: Future<Output = Result<T, UnitError>> + Send + 'static,
    C: FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
{
    Call::spawn(async move { output(future.await, convert, failures::unit) })
}

/// How long to wait for a unit to be back, from seconds.
fn back_timeout(py: Python<'_>, seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        SvcErr::new(
            "invalid_input",
            "timeout must be a finite number of seconds >= 0",
        )
        .into_pyerr(py)
    })
}

fn record<T: serde::Serialize>(py: Python<'_>, value: T) -> PyResult<Py<PyAny>> {
    json(py, value)
}

fn written(py: Python<'_>, outcome: WriteOutcome) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    d.set_item("need_reboot", outcome.need_reboot)?;
    Ok(d.into_any().unbind())
}

fn applied(py: Python<'_>, report: ApplyReport) -> PyResult<Py<PyAny>> {
    let d = PyDict::new(py);
    d.set_item("changed", report.changed)?;
    d.set_item("need_reboot", report.need_reboot)?;
    d.set_item("written", report.written)?;
    d.set_item("rebooted", report.rebooted)?;
    d.set_item("reboot_pending", report.reboot_pending)?;
    d.set_item("unlock_unconfirmed", report.unlock_unconfirmed)?;
    Ok(d.into_any().unbind())
}

fn user_name(py: Python<'_>, name: &str) -> PyResult<UserName> {
    let user = UserName::from(name);
    if user.is_known() {
        Ok(user)
    } else {
        Err(SvcErr::new(
            "invalid_input",
            format!(
                "unknown user {name:?}; users are {}",
                UserName::KNOWN.join(", ")
            ),
        )
        .into_pyerr(py))
    }
}

fn tree(py: Python<'_>, object: &Bound<'_, PyAny>) -> PyResult<Value> {
    ToValue::new(py).value(object)
}

/// A session with one unit. Thread-safe; clones share the login.
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct Unit {
    core: Core,
}

/// The serial link's options with `timeout` (seconds of silence) as its answer timeout.
fn serial_options(py: Python<'_>, timeout: Option<f64>) -> PyResult<SerialOptions> {
    let mut options = SerialOptions::default();
    if let Some(seconds) = timeout {
        options.answer_timeout = positive_seconds(py, "timeout", seconds)?;
    }
    Ok(options)
}

#[pymethods]
impl Unit {
    /// A session with the unit at `url` (e.g. `http://192.168.1.1`); each request may
    /// take `timeout` seconds, answer included. A unit address is `http://HOST[:PORT]`,
    /// optionally with the base path of a proxy in front of the unit; a query, a
    /// fragment or a path reaching `/api/…` raises `InvalidInputError` before anything
    /// is sent.
    #[staticmethod]
    #[pyo3(signature = (url, *, timeout=None))]
    fn http(py: Python<'_>, url: &str, timeout: Option<f64>) -> PyResult<Self> {
        let timeout = match timeout {
            Some(seconds) => positive_seconds(py, "timeout", seconds)?,
            None => svc_core::unit::HTTP_TIMEOUT,
        };
        let core = Core::http_with_timeout(url, timeout).map_err(|e| failures::unit(py, e))?;
        Ok(Self { core })
    }

    /// A session over a local serial port (e.g. `/dev/ttyUSB0`) at `baud`; `timeout`:
    /// how long the line may stay silent while an answer is awaited.
    #[staticmethod]
    #[pyo3(signature = (path, baud=115_200, *, timeout=None))]
    fn serial(py: Python<'_>, path: &str, baud: u32, timeout: Option<f64>) -> PyResult<Self> {
        let options = serial_options(py, timeout)?;
        let runtime = runtime()?;
        let _inside = runtime.enter();
        let core = Core::serial_with(path, baud, options).map_err(|e| failures::unit(py, e))?;
        Ok(Self { core })
    }

    /// A session over a serial-over-IP bridge at `host:port`; `timeout` as for
    /// `serial`.
    #[staticmethod]
    #[pyo3(signature = (address, *, timeout=None))]
    fn serial_tcp(py: Python<'_>, address: &str, timeout: Option<f64>) -> PyResult<Self> {
        let options = serial_options(py, timeout)?;
        let address = address.to_owned();
        let core = block_on(
            py,
            async move { Core::serial_tcp_with(&address, options).await },
        )?
        .map_err(|e| failures::unit(py, e))?;
        Ok(Self { core })
    }

    /// Where the unit is (its URL or serial link).
    #[getter]
    fn link(&self) -> String {
        self.core.link().to_owned()
    }

    /// The logged-in user, or `None` (requests act as the unit's default user).
    #[getter]
    fn user(&self) -> Option<String> {
        self.core.user().map(|u| u.to_string())
    }

    fn __repr__(&self, py: Python<'_>) -> PyResult<String> {
        let user = match self.user() {
            Some(user) => py_repr(py, &user)?,
            None => "None".to_owned(),
        };
        Ok(format!(
            "Unit(link={}, user={user})",
            py_repr(py, &svc_core::shown_address(self.core.link()))?
        ))
    }

    fn login(&self, py: Python<'_>, user: &str, password: String) -> PyResult<Call> {
        let user = user_name(py, user)?;
        let u = self.core.clone();
        run(
            async move { u.login(user, Password::new(password)).await },
            record,
        )
    }

    fn logout(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.logout().await }, record)
    }

    #[pyo3(signature = (password, user=None))]
    fn change_password(
        &self,
        py: Python<'_>,
        password: String,
        user: Option<&str>,
    ) -> PyResult<Call> {
        let user = user.map(|u| user_name(py, u)).transpose()?;
        let u = self.core.clone();
        run(
            async move { u.change_password(user, Password::new(password)).await },
            record,
        )
    }

    fn info(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.info().await }, record)
    }

    fn settings(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.settings().await }, record)
    }

    fn settings_delta(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.settings_delta().await }, record)
    }

    fn node(&self, path: String) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.node(&path).await }, record)
    }

    #[pyo3(signature = (patch, check_only=false))]
    fn write(&self, py: Python<'_>, patch: &Bound<'_, PyAny>, check_only: bool) -> PyResult<Call> {
        let patch = tree(py, patch)?;
        let u = self.core.clone();
        run(async move { u.write(&patch, check_only).await }, written)
    }

    #[pyo3(signature = (path, value, check_only=false))]
    fn write_node(
        &self,
        py: Python<'_>,
        path: String,
        value: &Bound<'_, PyAny>,
        check_only: bool,
    ) -> PyResult<Call> {
        let value = tree(py, value)?;
        let u = self.core.clone();
        run(
            async move { u.write_node(&path, &value, check_only).await },
            written,
        )
    }

    #[pyo3(signature = (check_only=false))]
    fn restore_defaults(&self, check_only: bool) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.restore_defaults(check_only).await }, written)
    }

    fn export(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.export().await }, record)
    }

    #[pyo3(signature = (tree, check_only=false))]
    fn import_settings(
        &self,
        py: Python<'_>,
        tree: &Bound<'_, PyAny>,
        check_only: bool,
    ) -> PyResult<Call> {
        let tree = self::tree(py, tree)?;
        let u = self.core.clone();
        run(async move { u.import(&tree, check_only).await }, written)
    }

    #[pyo3(signature = (wanted, check_only=false, lock=false, reboot=false, wait=None))]
    fn apply(
        &self,
        py: Python<'_>,
        wanted: &Bound<'_, PyAny>,
        check_only: bool,
        lock: bool,
        reboot: bool,
        wait: Option<f64>,
    ) -> PyResult<Call> {
        let wanted = tree(py, wanted)?;
        let wait_until_back = wait
            .map(|seconds| positive_seconds(py, "timeout", seconds))
            .transpose()?;
        let u = self.core.clone();
        run(
            async move {
                u.apply_wanted(
                    &wanted,
                    ApplyOptions {
                        check_only,
                        lock,
                        reboot,
                        wait_until_back,
                    },
                )
                .await
            },
            applied,
        )
    }

    fn lock(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.lock().await }, record)
    }

    fn unlock(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.unlock().await }, record)
    }

    fn save(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.save().await }, record)
    }

    /// Reboots the unit; with `wait` (seconds), then waits until it is back and
    /// answers its info (else `None`).
    #[pyo3(signature = (wait=None))]
    fn reboot(&self, py: Python<'_>, wait: Option<f64>) -> PyResult<Call> {
        let wait = wait.map(|t| back_timeout(py, t)).transpose()?;
        let u = self.core.clone();
        run(
            async move {
                u.reboot().await?;
                match wait {
                    Some(timeout) => u.wait_until_back(timeout).await.map(Some),
                    None => Ok(None),
                }
            },
            record,
        )
    }

    #[pyo3(signature = (timeout=60.0))]
    fn wait_until_back(&self, py: Python<'_>, timeout: f64) -> PyResult<Call> {
        let timeout = back_timeout(py, timeout)?;
        let u = self.core.clone();
        run(async move { u.wait_until_back(timeout).await }, record)
    }

    /// Subscribes to the output logs the unit streams on its serial link.
    #[pyo3(signature = (messages=None, capacity=8192))]
    fn subscribe(
        &self,
        py: Python<'_>,
        messages: Option<Vec<String>>,
        capacity: usize,
    ) -> PyResult<crate::live::LiveStream> {
        let subscribe = crate::live::subscribe_of(py, messages, capacity)?;
        let runtime = runtime()?;
        let _inside = runtime.enter();
        let stream = self
            .core
            .subscribe(subscribe)
            .map_err(|e| failures::unit(py, e))?;
        Ok(crate::live::LiveStream::new(stream))
    }

    /// Waits until the output logs say the unit is ready to log: a GNSS fix of at
    /// least `fix` (`single`, `differential`, `rtkFloat`, `rtkFixed`; `None`: no GNSS
    /// condition), the filter `aligned`, `utc` valid; at most `timeout` seconds.
    #[pyo3(
        signature = (fix=Some("single"), aligned=true, utc=true, timeout=300.0),
        text_signature = "(self, /, fix='single', aligned=True, utc=True, timeout=300.0)"
    )]
    fn wait_ready(
        &self,
        py: Python<'_>,
        fix: Option<&str>,
        aligned: bool,
        utc: bool,
        timeout: f64,
    ) -> PyResult<Call> {
        use svc_core::live::{FixLevel, ReadyCriteria};
        let min_fix = fix
            .map(|name| {
                FixLevel::from_name(name).ok_or_else(|| {
                    SvcErr::new(
                        "invalid_input",
                        format!(
                            "fix {name:?}: one of single, differential, rtkFloat, rtkFixed, or None"
                        ),
                    )
                    .into_pyerr(py)
                })
            })
            .transpose()?;
        let timeout = positive_seconds(py, "timeout", timeout)?;
        let criteria = ReadyCriteria {
            min_fix,
            aligned,
            utc,
        };
        let u = self.core.clone();
        run(
            async move { u.wait_ready(&criteria, timeout).await },
            |py, r| crate::live::readiness_dict(py, &r),
        )
    }

    fn logger_status(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.logger_status().await }, record)
    }

    fn logger_start(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.logger_start().await }, record)
    }

    fn logger_stop(&self) -> PyResult<Call> {
        let u = self.core.clone();
        run(async move { u.logger_stop().await }, record)
    }

    /// The unit's data logger files over FTP at `ftp` (`host:port`; default: port 21
    /// of the unit's host), as `user` with `password`, or as this session's user (as
    /// `viewer` when it is not logged in).
    #[pyo3(signature = (ftp=None, user=None, password=None))]
    fn logger_files(
        &self,
        py: Python<'_>,
        ftp: Option<&str>,
        user: Option<&str>,
        password: Option<String>,
    ) -> PyResult<LoggerFiles> {
        let files = match user {
            None if password.is_some() => {
                return Err(
                    SvcErr::new("invalid_input", "a password needs its user").into_pyerr(py)
                );
            }
            None => self
                .core
                .session_logger_files(ftp)
                .map_err(|e| failures::logger(py, e))?,
            Some(user) => {
                let user = user_name(py, user)?;
                let address = match ftp {
                    Some(address) => address.to_owned(),
                    None => self
                        .core
                        .session_logger_files(None)
                        .map_err(|e| failures::logger(py, e))?
                        .address()
                        .to_owned(),
                };
                let password = Password::new(password.unwrap_or_default());
                self.core.logger_files(address, user.to_string(), password)
            }
        };
        Ok(LoggerFiles {
            unit: self.core.clone(),
            files,
        })
    }
}

/// The unit's data logger files over FTP, with a user's credentials. Each call opens
/// its own connection.
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct LoggerFiles {
    unit: Core,
    files: svc_core::unit::LoggerFiles,
}

fn session_dict<'py>(
    py: Python<'py>,
    session: &svc_core::unit::LoggerSession,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", &session.name)?;
    d.set_item("size", session.size())?;
    d.set_item("recording", session.recording)?;
    let files = pyo3::types::PyList::empty(py);
    for file in &session.files {
        let f = PyDict::new(py);
        f.set_item("name", &file.name)?;
        f.set_item("size", file.size)?;
        files.append(f)?;
    }
    d.set_item("files", files)?;
    Ok(d)
}

#[pymethods]
impl LoggerFiles {
    #[getter]
    fn address(&self) -> &str {
        self.files.address()
    }

    #[getter]
    fn user(&self) -> &str {
        self.files.user()
    }

    /// The sessions, with `recording` from the data logger's status.
    fn sessions(&self) -> PyResult<Call> {
        let (unit, files) = (self.unit.clone(), self.files.clone());
        Call::spawn(async move {
            output(
                unit.logger_sessions(&files).await,
                |py, sessions| {
                    let list = pyo3::types::PyList::empty(py);
                    for session in &sessions {
                        list.append(session_dict(py, session)?)?;
                    }
                    Ok(list.into_any().unbind())
                },
                failures::logger,
            )
        })
    }

    /// Downloads `name` (a session or `SESSION/FILE`) into `dest/<session>/`; with
    /// `delete_after`, then deletes what was downloaded and checked.
    #[pyo3(signature = (name, dest, delete_after=false))]
    fn download(
        &self,
        name: String,
        dest: std::path::PathBuf,
        delete_after: bool,
    ) -> PyResult<Call> {
        let files = self.files.clone();
        Call::spawn(async move {
            let done = if delete_after {
                files.download_then_delete(&name, &dest).await
            } else {
                files.download(&name, &dest).await
            };
            output(
                done,
                |py, done| {
                    let d = PyDict::new(py);
                    let paths: Vec<String> = done
                        .files
                        .iter()
                        .map(|p| p.to_string_lossy().into_owned())
                        .collect();
                    d.set_item("files", paths)?;
                    d.set_item("bytes", done.bytes)?;
                    d.set_item("resumed", done.resumed)?;
                    d.set_item("deleted", done.deleted)?;
                    Ok(d.into_any().unbind())
                },
                failures::logger,
            )
        })
    }

    /// Deletes a session (the `FTP` `WRITE` right).
    fn delete(&self, session: String) -> PyResult<Call> {
        let files = self.files.clone();
        Call::spawn(async move {
            output(
                files.delete(&session).await,
                |py, ()| Ok(py.None()),
                failures::logger,
            )
        })
    }

    fn __repr__(&self) -> String {
        format!(
            "LoggerFiles(address={:?}, user={:?})",
            self.files.address(),
            self.files.user()
        )
    }
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Unit>()?;
    module.add_class::<LoggerFiles>()?;
    Ok(())
}
