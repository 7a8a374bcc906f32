//! From dated sentences to a trajectory: epochs merged over every file, one fix per
//! epoch, velocities, distances (see the parent module for the rules).

use std::collections::{BTreeMap, BTreeSet};

use super::nmea::{FileScan, Gga, Rmc, Sentence};

pub(super) const DAY_MS: i64 = 86_400_000;
const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;
/// Mean Earth radius (IUGG) for great-circle distances.
const EARTH_RADIUS_M: f64 = 6_371_008.8;

#[derive(Default)]
pub(super) struct Epoch {
    gga: Option<Gga>,
    rmc: Option<Rmc>,
}

/// One trajectory point; `velocity` is north, east, up in m/s.
#[derive(Debug)]
pub(super) struct Fix {
    pub(super) time_ms: i64,
    pub(super) lat: f64,
    pub(super) lon: f64,
    pub(super) height: f64,
    pub(super) quality: Option<u8>,
    pub(super) rmc_velocity: Option<[f64; 2]>,
    pub(super) velocity: [f64; 3],
}

/// Dates every record (see the module documentation) and merges all files into epochs.
pub(super) fn merge(scans: &mut [FileScan], fallback_day: i64) -> BTreeMap<i64, Epoch> {
    let mut epochs: BTreeMap<i64, Epoch> = BTreeMap::new();
    for scan in scans.iter_mut() {
        let records = std::mem::take(&mut scan.records);
        let first_rmc = records.iter().find_map(|r| match r.sentence {
            Sentence::Rmc(rmc) => Some(rmc.day * DAY_MS + r.tod_ms),
            Sentence::Gga(_) => None,
        });
        let first = records
            .first()
            .map_or(0, |r| fallback_day * DAY_MS + r.tod_ms);
        let mut reference = first_rmc.unwrap_or(first);
        let mut own = BTreeSet::new();
        for record in &records {
            let time = match record.sentence {
                Sentence::Rmc(rmc) => rmc.day * DAY_MS + record.tod_ms,
                Sentence::Gga(_) => nearest_time(reference, record.tod_ms),
            };
            reference = time;
            own.insert(time);
            let epoch = epochs.entry(time).or_default();
            match record.sentence {
                Sentence::Gga(gga) => {
                    epoch.gga.get_or_insert(gga);
                }
                Sentence::Rmc(rmc) => {
                    epoch.rmc.get_or_insert(rmc);
                }
            }
        }
        scan.valid_fixes = own.len();
    }
    epochs
}

/// The time with time of day `tod_ms` closest to `reference` (same day, the day before or after).
pub(super) fn nearest_time(reference: i64, tod_ms: i64) -> i64 {
    let candidate = reference.div_euclid(DAY_MS) * DAY_MS + tod_ms;
    if candidate - reference > DAY_MS / 2 {
        candidate - DAY_MS
    } else if reference - candidate > DAY_MS / 2 {
        candidate + DAY_MS
    } else {
        candidate
    }
}

/// One fix per epoch with a position, in time order, with velocities.
pub(super) fn build_fixes(epochs: &BTreeMap<i64, Epoch>) -> Vec<Fix> {
    let mut height = epochs
        .values()
        .find_map(|e| e.gga.map(|g| g.height))
        .unwrap_or(0.0);
    let mut fixes = Vec::with_capacity(epochs.len());
    for (&time_ms, epoch) in epochs {
        let (lat, lon, quality) = match (epoch.gga, epoch.rmc) {
            (Some(gga), _) => {
                height = gga.height;
                (gga.lat, gga.lon, Some(gga.quality))
            }
            (None, Some(rmc)) => (rmc.lat, rmc.lon, None),
            (None, None) => continue,
        };
        let rmc_velocity = epoch.rmc.and_then(|r| r.velocity);
        fixes.push(Fix {
            time_ms,
            lat,
            lon,
            height,
            quality,
            rmc_velocity,
            velocity: [0.0; 3],
        });
    }
    for i in 0..fixes.len() {
        let [north, east] = match (fixes[i].rmc_velocity, i) {
            (Some(v), _) => v,
            (None, 0) => fixes
                .get(1)
                .map_or([0.0, 0.0], |next| horizontal_velocity(&fixes[0], next)),
            (None, _) => horizontal_velocity(&fixes[i - 1], &fixes[i]),
        };
        let up = match i.checked_sub(1).and_then(|p| fixes.get(p)) {
            Some(prev) => (fixes[i].height - prev.height) / seconds_between(prev, &fixes[i]),
            None => 0.0,
        };
        fixes[i].velocity = [north, east, up];
    }
    fixes
}

fn seconds_between(a: &Fix, b: &Fix) -> f64 {
    (b.time_ms - a.time_ms) as f64 / 1000.0
}

/// North/east velocity from `a` to `b` on the local tangent plane at their mean latitude.
fn horizontal_velocity(a: &Fix, b: &Fix) -> [f64; 2] {
    let lat = ((a.lat + b.lat) / 2.0).to_radians();
    let w = (1.0 - WGS84_E2 * lat.sin().powi(2)).sqrt();
    let meridian = WGS84_A * (1.0 - WGS84_E2) / (w * w * w);
    let prime_vertical = WGS84_A / w;
    let h = (a.height + b.height) / 2.0;
    let mut dlon = b.lon - a.lon;
    if dlon > 180.0 {
        dlon -= 360.0;
    } else if dlon < -180.0 {
        dlon += 360.0;
    }
    let dt = seconds_between(a, b);
    let north = (b.lat - a.lat).to_radians() * (meridian + h);
    let east = dlon.to_radians() * (prime_vertical + h) * lat.cos();
    [north / dt, east / dt]
}

/// Horizontal great-circle (haversine) distance in metres.
pub(super) fn great_circle(a: &Fix, b: &Fix) -> f64 {
    distance_m((a.lat, a.lon), (b.lat, b.lon))
}

/// Horizontal great-circle (haversine) distance in metres between two (latitude,
/// longitude) positions in degrees.
pub(super) fn distance_m((lat_a, lon_a): (f64, f64), (lat_b, lon_b): (f64, f64)) -> f64 {
    let (lat1, lat2) = (lat_a.to_radians(), lat_b.to_radians());
    let dlat = lat2 - lat1;
    let dlon = (lon_b - lon_a).to_radians();
    let h = (dlat / 2.0).sin().powi(2) + lat1.cos() * lat2.cos() * (dlon / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}
