//! `Emulator`: the local emulator of the cloud service (identity provider, storage,
//! notification service) and of a unit, in this process, on the module's runtime, so
//! notebooks and pytest suites run offline.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use svc_emulator::FaultConfig;

use crate::cloud::{json, uuid_arg};
use crate::errors::SvcErr;
use crate::runtime::block_on;

/// A running emulator; `close()` stops it (the Python facade is a context manager).
#[pyclass(module = "svc_sdk._native", frozen)]
pub(crate) struct Emulator {
    running: Mutex<Option<svc_emulator::Emulator>>,
    info: Py<PyAny>,
}

fn duration(py: Python<'_>, name: &str, seconds: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(seconds).map_err(|_| {
        SvcErr::new(
            "invalid_input",
            format!("{name} must be a finite number of seconds >= 0"),
        )
        .into_pyerr(py)
    })
}

/// A message of the `svc emulator` command's checks with its flags (`--device-password`)
/// named as the constructor's arguments (`device_passwords`).
fn argument_names(message: &str) -> String {
    let mut out = String::new();
    let mut rest = message;
    while let Some(at) = rest.find("--") {
        out.push_str(&rest[..at]);
        let flag_end = rest[at + 2..]
            .find(|c: char| !(c.is_ascii_lowercase() || c == '-'))
            .map_or(rest.len(), |end| at + 2 + end);
        let flag = &rest[at + 2..flag_end];
        let name = match flag {
            "device-password" => "device_passwords".to_owned(),
            "upload-extra-field" => "upload_extra_fields".to_owned(),
            "processing-seconds" => "processing_time".to_owned(),
            other => other.replace('-', "_"),
        };
        out.push_str(&name);
        rest = &rest[flag_end..];
    }
    out.push_str(rest);
    out
}

#[pymethods]
impl Emulator {
    /// Starts the emulator in this process: the cloud service, its identity provider,
    /// storage and notification service, and `devices` units (none without `device`).
    /// Every option of the `svc emulator` command, with the same checks:
    /// `processing_time` (seconds a processing takes), `token_lifetime` (seconds),
    /// `credits` (per organization), `fault_rate` (share of cloud requests answered
    /// 500, delayed or cut; `seed` makes them repeatable), `webhook_retry_base_ms`,
    /// `host` and `port` (first port; 0: free ports), `upload_extra_fields` (fields added
    /// to every upload form); for the units `device_passwords` (user → password),
    /// `device_reboot_seconds`, `device_latency_ms` (every HTTP answer waits),
    /// `device_startup_seconds` (until ready to log after each power-on),
    /// `serial_fault_rate` (a noisy serial line), `device_pty` (also a pseudo-terminal).
    #[new]
    #[pyo3(signature = (
        *,
        processing_time=1.0,
        token_lifetime=300.0,
        credits=100,
        device=true,
        fault_rate=0.0,
        seed=1,
        devices=1,
        device_startup_seconds=0.0,
        device_passwords=None,
        device_reboot_seconds=2.0,
        device_latency_ms=0,
        device_pty=true,
        serial_fault_rate=0.0,
        webhook_retry_base_ms=1000,
        host="127.0.0.1",
        port=0,
        upload_extra_fields=None,
        upload_bytes_per_second=0,
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        processing_time: f64,
        token_lifetime: f64,
        credits: u32,
        device: bool,
        fault_rate: f64,
        seed: u64,
        devices: usize,
        device_startup_seconds: f64,
        device_passwords: Option<BTreeMap<String, String>>,
        device_reboot_seconds: f64,
        device_latency_ms: u64,
        device_pty: bool,
        serial_fault_rate: f64,
        webhook_retry_base_ms: u64,
        host: &str,
        port: u16,
        upload_extra_fields: Option<BTreeMap<String, String>>,
        upload_bytes_per_second: u64,
    ) -> PyResult<Self> {
        let invalid = |message: String| SvcErr::new("invalid_input", message).into_pyerr(py);
        if !(1..=svc_emulator::MAX_DEVICES).contains(&devices) {
            return Err(invalid(format!(
                "devices must be within 1..={}",
                svc_emulator::MAX_DEVICES
            )));
        }
        let processing_time = duration(py, "processing_time", processing_time)?;
        let token_lifetime = duration(py, "token_lifetime", token_lifetime)?;
        let args = svc_emulator::cli::EmulatorArgs {
            host: host
                .parse()
                .map_err(|_| invalid(format!("host {host:?} is not an IP address")))?,
            port,
            processing_seconds: processing_time.as_secs_f64(),
            token_lifetime_seconds: token_lifetime.as_secs(),
            webhook_retry_base_ms,
            credits,
            fault_rate,
            serial_fault_rate,
            device_passwords: device_passwords
                .unwrap_or_default()
                .into_iter()
                .map(|(user, password)| format!("{user}={password}"))
                .collect(),
            device_reboot_seconds,
            device_latency_ms,
            device_startup_seconds,
            no_device_pty: !device_pty,
            no_device: !device,
            devices: if device { devices } else { 0 },
            upload_extra_fields: upload_extra_fields
                .unwrap_or_default()
                .into_iter()
                .map(|(name, value)| format!("{name}={value}"))
                .collect(),
            upload_bytes_per_second,
        };
        // The command's checks, its flags named as this constructor's arguments.
        let mut config = args
            .config()
            .map_err(|message| invalid(argument_names(&message)))?;
        config.processing_time = processing_time;
        config.token_lifetime = token_lifetime;
        config.faults = FaultConfig {
            seed,
            ..config.faults
        };
        let started = block_on(py, svc_emulator::Emulator::start(config))?.map_err(|e| {
            SvcErr::new("internal", format!("the emulator could not start: {e:#}")).into_pyerr(py)
        })?;
        let info = json(py, started.line())?;
        Ok(Self {
            running: Mutex::new(Some(started)),
            info,
        })
    }

    /// Its addresses and the credentials of its organizations (a dict; see
    /// `docs/emulator.md`).
    #[getter]
    fn info(&self, py: Python<'_>) -> Py<PyAny> {
        self.info.clone_ref(py)
    }

    /// Sets an organization's processing credits (to see the 403 "no credit left").
    fn set_credits(&self, py: Python<'_>, organization_id: &str, credits: u32) -> PyResult<()> {
        let id = uuid_arg(py, "organization_id", organization_id)?;
        match self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
        {
            Some(emulator) => {
                emulator.set_credits(id, credits);
                Ok(())
            }
            None => Err(SvcErr::new("invalid_input", "the emulator was closed").into_pyerr(py)),
        }
    }

    /// Whether it still runs.
    #[getter]
    fn running(&self) -> bool {
        self.running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Stops the servers and removes their files; a second call does nothing.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let taken = self
            .running
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(emulator) = taken {
            block_on(py, emulator.shutdown())?;
        }
        Ok(())
    }
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_class::<Emulator>()?;
    Ok(())
}
