//! From dated sentences to a trajectory: each file's sentences dated and merged by epoch
//! as they are read ([`Epochs`]), then the epochs of every file merged into one fix per
//! epoch, with velocities and distances (see the parent module for the rules).
//!
//! A [`Fix`] (56 bytes) is all that is kept per epoch: while the files are read, one per
//! run of sentences of a file at the same time (a GGA and the RMC of its epoch make one),
//! then, sorted and merged in place, one per fix of the trajectory.

use super::nmea::{Record, Sentence};

pub(super) const DAY_MS: i64 = 86_400_000;
const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;
/// Mean Earth radius (IUGG) for great-circle distances.
const EARTH_RADIUS_M: f64 = 6_371_008.8;

/// [`Fix::flags`]: it holds a GGA (position, height, quality).
const HAS_GGA: u8 = 1;
/// It holds an RMC.
const HAS_RMC: u8 = 2;
/// Its RMC gave a velocity (`velocity` holds it).
const HAS_VELOCITY: u8 = 4;
/// Its GGA came from an inertial solution (`attitude` and `sigma` hold what it gave).
const HAS_INERTIAL: u8 = 8;

/// One epoch: the first GGA and the first RMC of a run of sentences while the files are
/// read, then a trajectory point.
#[derive(Clone, Copy, Debug)]
pub(super) struct Fix {
    /// UTC milliseconds since 1970-01-01; the time of day for the sentences of a file
    /// still waiting for their date (before its first RMC).
    pub(super) time_ms: i64,
    /// The GGA's position when there is one, otherwise the RMC's.
    pub(super) lat: f64,
    pub(super) lon: f64,
    /// Ellipsoidal height: the GGA's (for a fix without GGA, the last known one).
    pub(super) height: f64,
    /// North and east velocity in m/s: the RMC's (when [`HAS_VELOCITY`]) while reading,
    /// the fix's (from the RMC or finite differences) once built.
    velocity: [f32; 2],
    /// Reading order (file, then line): the first GGA and RMC of an epoch win.
    seq: u32,
    /// The GGA's fix quality (1..=9); 0 without GGA.
    quality: u8,
    flags: u8,
    /// An inertial solution's roll, pitch and heading (within ±180°), hundredths of a
    /// degree ([`HAS_INERTIAL`]).
    attitude: [i16; 3],
    /// An inertial solution's horizontal position 1σ (mm) and heading 1σ (hundredths
    /// of a degree), both saturating.
    sigma: [u16; 2],
}

/// Degrees as hundredths of a degree within ±180°.
fn centidegrees(degrees: f32) -> i16 {
    let wrapped = (degrees + 180.0).rem_euclid(360.0) - 180.0;
    (wrapped * 100.0).round() as i16
}

/// A non-negative value in `unit`s, saturating at `u16::MAX`.
fn saturating(value: f32, per_unit: f32) -> u16 {
    (value * per_unit).round().clamp(0.0, f32::from(u16::MAX)) as u16
}

impl Fix {
    /// A sentence as an epoch of its own; an RMC is dated by itself, a GGA's time is its
    /// time of day until dated.
    fn of(record: &Record, seq: u32) -> Self {
        let mut fix = Self {
            time_ms: record.tod_ms,
            lat: 0.0,
            lon: 0.0,
            height: 0.0,
            velocity: [0.0; 2],
            seq,
            quality: 0,
            flags: 0,
            attitude: [0; 3],
            sigma: [0; 2],
        };
        match record.sentence {
            Sentence::Gga(gga) => {
                (fix.lat, fix.lon, fix.height, fix.quality) =
                    (gga.lat, gga.lon, gga.height, gga.quality);
                fix.flags = HAS_GGA;
                if let Some(inertial) = gga.inertial {
                    fix.attitude = inertial.attitude.map(centidegrees);
                    fix.sigma = [
                        saturating(inertial.sigma[0], 1000.0),
                        saturating(inertial.sigma[1], 100.0),
                    ];
                    fix.flags |= HAS_INERTIAL;
                }
            }
            Sentence::Rmc(rmc) => {
                fix.time_ms = rmc.day * DAY_MS + record.tod_ms;
                (fix.lat, fix.lon) = (rmc.lat, rmc.lon);
                fix.flags = HAS_RMC;
                if let Some(velocity) = rmc.velocity {
                    fix.velocity = velocity.map(|v| v as f32);
                    fix.flags |= HAS_VELOCITY;
                }
            }
        }
        fix
    }

    /// A fix at a position, at time 0 (tests).
    #[cfg(test)]
    pub(super) fn at(lat: f64, lon: f64) -> Self {
        Self {
            time_ms: 0,
            lat,
            lon,
            height: 0.0,
            velocity: [0.0; 2],
            seq: 0,
            quality: 0,
            flags: 0,
            attitude: [0; 3],
            sigma: [0; 2],
        }
    }

    fn has(&self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    /// Adds what `later` (of the same epoch, read after this one) brings: its GGA when
    /// this one has none (the GGA's position wins over an RMC's), its RMC when this one
    /// has none.
    fn absorb(&mut self, later: &Self) {
        if later.has(HAS_GGA) && !self.has(HAS_GGA) {
            (self.lat, self.lon, self.height, self.quality) =
                (later.lat, later.lon, later.height, later.quality);
            (self.attitude, self.sigma) = (later.attitude, later.sigma);
            self.flags |= later.flags & (HAS_GGA | HAS_INERTIAL);
        }
        if later.has(HAS_RMC) && !self.has(HAS_RMC) {
            self.velocity = later.velocity;
            self.flags |= later.flags & (HAS_RMC | HAS_VELOCITY);
        }
    }

    /// The GGA fix quality; `None` for a fix from an RMC alone.
    pub(super) fn quality(&self) -> Option<u8> {
        self.has(HAS_GGA).then_some(self.quality)
    }

    /// An inertial solution's attitude (roll, pitch, heading within ±180°, degrees)
    /// and its horizontal position 1σ (m) and heading 1σ (degrees).
    pub(super) fn inertial(&self) -> Option<([f64; 3], [f64; 2])> {
        self.has(HAS_INERTIAL).then(|| {
            (
                self.attitude.map(|a| f64::from(a) / 100.0),
                [
                    f64::from(self.sigma[0]) / 1000.0,
                    f64::from(self.sigma[1]) / 100.0,
                ],
            )
        })
    }
}

/// The epochs of every input file, collected as the sentences are read.
#[derive(Default)]
pub(super) struct Epochs {
    entries: Vec<Fix>,
    files: Vec<FileEpochs>,
    first_rmc_day: Option<i64>,
}

/// Where a file's entries start, and the time of its last sentence once it is dated
/// (from its first RMC on).
struct FileEpochs {
    start: usize,
    reference: Option<i64>,
}

impl Epochs {
    /// The sentences added next belong to a new file.
    pub(super) fn start_file(&mut self) {
        self.files.push(FileEpochs {
            start: self.entries.len(),
            reference: None,
        });
    }

    /// Dates a usable sentence of the current file (see the module documentation of the
    /// parent) and adds it to its epoch.
    pub(super) fn add(&mut self, record: &Record) {
        if self.files.is_empty() {
            self.start_file();
        }
        let seq = u32::try_from(self.entries.len()).unwrap_or(u32::MAX);
        let mut entry = Fix::of(record, seq);
        let Some(file) = self.files.last_mut() else {
            return;
        };
        let own = &mut self.entries[file.start..];
        match (record.sentence, file.reference) {
            (Sentence::Rmc(rmc), reference) => {
                self.first_rmc_day.get_or_insert(rmc.day);
                if reference.is_none() {
                    // The file's first RMC dates the GGAs read before it.
                    date(own, entry.time_ms);
                }
                file.reference = Some(entry.time_ms);
            }
            (Sentence::Gga(_), Some(reference)) => {
                entry.time_ms = nearest_time(reference, record.tod_ms);
                file.reference = Some(entry.time_ms);
            }
            // Not dated yet: a GGA at the same time of day as the one before it gets its
            // date, so they share an epoch.
            (Sentence::Gga(_), None) => {}
        }
        match own.last_mut() {
            Some(last) if last.time_ms == entry.time_ms => last.absorb(&entry),
            _ => self.entries.push(entry),
        }
    }

    /// The entries held (tests).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether any usable sentence was read.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The date (days since 1970-01-01) of the first RMC read.
    pub(super) fn first_rmc_day(&self) -> Option<i64> {
        self.first_rmc_day
    }

    /// The trajectory: files without RMC dated from `fallback_day`, one fix per epoch over
    /// all files in time order, with velocities; and the number of distinct epochs of each
    /// file, in the order the files were started.
    pub(super) fn into_fixes(self, fallback_day: i64) -> (Vec<Fix>, Vec<usize>) {
        let Self {
            mut entries, files, ..
        } = self;
        let mut valid_fixes = Vec::with_capacity(files.len());
        for (i, file) in files.iter().enumerate() {
            let end = files.get(i + 1).map_or(entries.len(), |next| next.start);
            let own = &mut entries[file.start..end];
            if file.reference.is_none()
                && let Some(first) = own.first()
            {
                date(own, fallback_day * DAY_MS + first.time_ms);
            }
            own.sort_unstable_by_key(|e| (e.time_ms, e.seq));
            let changes = own.windows(2).filter(|w| w[0].time_ms != w[1].time_ms);
            valid_fixes.push(if own.is_empty() {
                0
            } else {
                1 + changes.count()
            });
        }
        entries.sort_unstable_by_key(|e| (e.time_ms, e.seq));
        let mut height = entries
            .iter()
            .find(|e| e.has(HAS_GGA))
            .map_or(0.0, |e| e.height);
        let (mut read, mut written) = (0, 0);
        while let Some(&first) = entries.get(read) {
            let mut fix = first;
            read += 1;
            while let Some(later) = entries.get(read).filter(|e| e.time_ms == fix.time_ms) {
                fix.absorb(later);
                read += 1;
            }
            if fix.has(HAS_GGA) {
                height = fix.height;
            } else {
                fix.height = height;
            }
            entries[written] = fix;
            written += 1;
        }
        entries.truncate(written);
        entries.shrink_to_fit();
        for i in 0..entries.len() {
            if entries[i].has(HAS_VELOCITY) {
                continue;
            }
            entries[i].velocity = match i {
                0 => entries
                    .get(1)
                    .map_or([0.0, 0.0], |next| horizontal_velocity(&entries[0], next)),
                _ => horizontal_velocity(&entries[i - 1], &entries[i]),
            }
            .map(|v| v as f32);
        }
        (entries, valid_fixes)
    }
}

/// Dates the entries of a file read before its first RMC (or of a file without RMC),
/// which hold their time of day, from `reference`: each is the time nearest to the one
/// before it.
fn date(entries: &mut [Fix], mut reference: i64) {
    for entry in entries {
        entry.time_ms = nearest_time(reference, entry.time_ms);
        reference = entry.time_ms;
    }
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

/// The velocity of fix `i` of a trajectory, north, east and up in m/s: north and east as
/// built; up from the height difference with the fix before (0 for the first).
pub(super) fn velocity(fixes: &[Fix], i: usize) -> [f64; 3] {
    let Some(fix) = fixes.get(i) else {
        return [0.0; 3];
    };
    let up = match i.checked_sub(1).and_then(|p| fixes.get(p)) {
        Some(prev) => (fix.height - prev.height) / seconds_between(prev, fix),
        None => 0.0,
    };
    [f64::from(fix.velocity[0]), f64::from(fix.velocity[1]), up]
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
