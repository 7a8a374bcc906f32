//! svc-core's trajectory readers and comparison (`svc_core::trajectory`) for
//! `svc_sdk.trajectory`: columns in, columns out, the work done without the GIL.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyDict;
use svc_core::trajectory::{self as core, Statistics, TrajectoryError, TrajectoryPoint};

use crate::errors::SvcErr;

fn error(py: Python<'_>, e: &TrajectoryError) -> PyErr {
    SvcErr::new(e.kind().as_str(), e.to_string()).into_pyerr(py)
}

fn invalid(py: Python<'_>, message: String) -> PyErr {
    SvcErr::new("invalid_input", message).into_pyerr(py)
}

/// The records of an SBET file as columns: `time` (GPS seconds of the week),
/// `latitude`, `longitude`, `height`, `velocity_north`, `velocity_east`,
/// `velocity_down`, `roll`, `pitch`, `heading`, `wander_angle` (radians for angles),
/// `acceleration_x` … `_z`, `angular_rate_x` … `_z`.
#[pyfunction]
fn _read_sbet(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let records = py
        .detach(|| -> Result<_, TrajectoryError> {
            let file = std::fs::File::open(&path)?;
            core::read_sbet(std::io::BufReader::new(file))
        })
        .map_err(|e| error(py, &e))?;
    type Column = (&'static str, fn(&core::SbetRecord) -> f64);
    let columns: [Column; 17] = [
        ("time", |r| r.time),
        ("latitude", |r| r.latitude),
        ("longitude", |r| r.longitude),
        ("height", |r| r.height),
        ("velocity_north", |r| r.velocity[0]),
        ("velocity_east", |r| r.velocity[1]),
        ("velocity_down", |r| r.velocity[2]),
        ("roll", |r| r.roll),
        ("pitch", |r| r.pitch),
        ("heading", |r| r.heading),
        ("wander_angle", |r| r.wander_angle),
        ("acceleration_x", |r| r.acceleration[0]),
        ("acceleration_y", |r| r.acceleration[1]),
        ("acceleration_z", |r| r.acceleration[2]),
        ("angular_rate_x", |r| r.angular_rate[0]),
        ("angular_rate_y", |r| r.angular_rate[1]),
        ("angular_rate_z", |r| r.angular_rate[2]),
    ];
    let out = PyDict::new(py);
    for (name, pick) in columns {
        let values: Vec<f64> = records.iter().map(pick).collect();
        out.set_item(name, values)?;
    }
    Ok(out)
}

/// A trajectory given as columns: `time_us` (UTC microseconds), `latitude`,
/// `longitude`, `height` (degrees, metres) and, when known, `velocity_north` and
/// `velocity_east`.
fn points(
    py: Python<'_>,
    name: &str,
    columns: &Bound<'_, PyDict>,
) -> PyResult<Vec<TrajectoryPoint>> {
    let column = |key: &str| -> PyResult<Option<Bound<'_, PyAny>>> { columns.get_item(key) };
    let required = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        column(key)?.ok_or_else(|| invalid(py, format!("{name}: no `{key}` column")))
    };
    let times: Vec<i64> = required("time_us")?.extract()?;
    let floats = |key: &str| -> PyResult<Vec<f64>> { required(key)?.extract() };
    let (lat, lon, height) = (floats("latitude")?, floats("longitude")?, floats("height")?);
    let velocity: Option<(Vec<f64>, Vec<f64>)> =
        match (column("velocity_north")?, column("velocity_east")?) {
            (Some(north), Some(east)) => Some((north.extract()?, east.extract()?)),
            _ => None,
        };
    let n = times.len();
    let lengths_agree = [lat.len(), lon.len(), height.len()]
        .iter()
        .all(|&len| len == n)
        && velocity
            .as_ref()
            .is_none_or(|(north, east)| north.len() == n && east.len() == n);
    if !lengths_agree {
        return Err(invalid(py, format!("{name}: the columns differ in length")));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let time = chrono::DateTime::from_timestamp_micros(times[i])
            .ok_or_else(|| invalid(py, format!("{name}: time {} is out of range", times[i])))?;
        if i > 0 && times[i] < times[i - 1] {
            return Err(invalid(
                py,
                format!("{name}: the times are not in order at row {i}"),
            ));
        }
        out.push(TrajectoryPoint {
            time,
            latitude: lat[i],
            longitude: lon[i],
            height: height[i],
            velocity: velocity
                .as_ref()
                .map(|(north, east)| [north[i], east[i], 0.0]),
            attitude: None,
            position_std: None,
            quality: None,
        });
    }
    Ok(out)
}

fn statistics<'py>(py: Python<'py>, s: &Statistics) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("mean", s.mean)?;
    d.set_item("std", s.std)?;
    d.set_item("rms", s.rms)?;
    d.set_item("max_abs", s.max_abs)?;
    Ok(d)
}

/// `svc_core::trajectory::compare` of two trajectories given as columns (see
/// [`points`]): the differences at `a`'s epochs as columns (`time_us`,
/// `along_track`, `cross_track`, `vertical`, `horizontal`) and `summary`, each
/// difference's statistics.
#[pyfunction]
fn _compare_trajectories<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyDict>,
    b: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let (a, b) = (points(py, "a", a)?, points(py, "b", b)?);
    let comparison = py.detach(|| core::compare(&a, &b));
    let out = PyDict::new(py);
    let d = &comparison.differences;
    out.set_item(
        "time_us",
        d.iter()
            .map(|x| x.time.timestamp_micros())
            .collect::<Vec<_>>(),
    )?;
    out.set_item(
        "along_track",
        d.iter().map(|x| x.along_track).collect::<Vec<_>>(),
    )?;
    out.set_item(
        "cross_track",
        d.iter().map(|x| x.cross_track).collect::<Vec<_>>(),
    )?;
    out.set_item("vertical", d.iter().map(|x| x.vertical).collect::<Vec<_>>())?;
    out.set_item(
        "horizontal",
        d.iter().map(|x| x.horizontal).collect::<Vec<_>>(),
    )?;
    let summary = PyDict::new(py);
    summary.set_item("along_track", statistics(py, &comparison.along_track)?)?;
    summary.set_item("cross_track", statistics(py, &comparison.cross_track)?)?;
    summary.set_item("vertical", statistics(py, &comparison.vertical)?)?;
    summary.set_item("horizontal", statistics(py, &comparison.horizontal)?)?;
    out.set_item("summary", summary)?;
    Ok(out)
}

pub(crate) fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(_read_sbet, module)?)?;
    module.add_function(wrap_pyfunction!(_compare_trajectories, module)?)?;
    Ok(())
}
