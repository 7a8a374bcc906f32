//! `Emulator`: the local emulator of the cloud service (identity provider, storage,
//! notification service) and of a unit, in this process, on the module's runtime, so
//! notebooks and pytest suites run offline.

use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;
use svc_emulator::{EmulatorConfig, FaultConfig};

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

#[pymethods]
impl Emulator {
    /// Starts every server on 127.0.0.1 (free ports). `processing_time`: how long a
    /// processing takes; `credits`: processing credits of each organization;
    /// `device`: also emulate a unit (HTTP and a serial-over-IP bridge);
    /// `fault_rate`: share of cloud requests that get an injected fault (a 500, a
    /// delay or a cut connection), for resilience tests; `devices`: how many units
    /// (each with its own serial number, addresses and state; 1 to 256).
    #[new]
    #[pyo3(signature = (*, processing_time=1.0, token_lifetime=300.0, credits=100, device=true, fault_rate=0.0, seed=1, devices=1, device_startup=0.0))]
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
        device_startup: f64,
    ) -> PyResult<Self> {
        if !(1..=svc_emulator::MAX_DEVICES).contains(&devices) {
            return Err(SvcErr::new(
                "invalid_input",
                format!("devices must be within 1..={}", svc_emulator::MAX_DEVICES),
            )
            .into_pyerr(py));
        }
        if !(0.0..=1.0).contains(&fault_rate) {
            return Err(
                SvcErr::new("invalid_input", "fault_rate must be within 0..=1").into_pyerr(py),
            );
        }
        let mut config = EmulatorConfig {
            processing_time: duration(py, "processing_time", processing_time)?,
            token_lifetime: duration(py, "token_lifetime", token_lifetime)?,
            credits,
            faults: FaultConfig {
                rate: fault_rate,
                seed,
                ..FaultConfig::default()
            },
            devices,
            ..EmulatorConfig::default()
        };
        if !device {
            config.device = None;
        }
        if let Some(unit) = config.device.as_mut() {
            unit.startup = Duration::try_from_secs_f64(device_startup).map_err(|_| {
                SvcErr::new(
                    "invalid_input",
                    "device_startup must be a finite number of seconds >= 0",
                )
                .into_pyerr(py)
            })?;
        }
        let started = block_on(py, svc_emulator::Emulator::start(config))?.map_err(|e| {
            SvcErr::new("internal", format!("the emulator could not start: {e:#}")).into_pyerr(py)
        })?;
        let info = json(py, started.line())?;
        Ok(Self {
            running: Mutex::new(Some(started)),
            info,
        })
    }

    /// Its addresses and the credentials of its organizations (a dict; see the
    /// README's emulator section).
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
