//! Reading a processing's trajectory and comparing two of them.
//!
//! - [`read_sbet`]: an `SBET` export (Smoothed Best Estimate of Trajectory): records of
//!   17 little-endian doubles — GPS seconds of the week, latitude and longitude
//!   (radians), ellipsoidal height (m), velocity x (north), y (east), z (down) (m/s),
//!   roll, pitch, heading (radians), wander angle, body acceleration x, y, z (m/s²) and
//!   angular rate x, y, z (rad/s).
//! - [`read_points`]: `trajectory.csv` (comma-separated, its header first) or an
//!   `ASCII` export (space-separated, `#` lines first, the last of them naming the
//!   columns), as [`TrajectoryPoint`]s: the columns are found by name, those a file
//!   lacks are `None` (time and position are required).
//! - [`compare`]: two trajectories aligned in time, their differences along the track,
//!   across it and vertically, with summary statistics.
//!
//! Bad input is a [`TrajectoryError`] naming the record or line, never a panic.

use std::io::{BufRead, Read};

use chrono::{DateTime, Utc};

/// What went wrong reading a trajectory.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrajectoryError {
    /// The file could not be read.
    #[error("reading the trajectory: {0}")]
    Io(#[from] std::io::Error),
    /// An SBET file whose length is not a whole number of records.
    #[error(
        "SBET: {trailing} bytes after record {records} do not make a record of {RECORD_BYTES} bytes"
    )]
    TruncatedSbet {
        /// Whole records read.
        records: u64,
        /// Bytes left over.
        trailing: usize,
    },
    /// A text trajectory that is not what it should be.
    #[error("line {line}: {reason}")]
    Invalid {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

impl TrajectoryError {
    /// Always [`ErrorKind::InvalidInput`](crate::ErrorKind::InvalidInput) for a file that
    /// is not a trajectory, [`ErrorKind::Io`](crate::ErrorKind::Io) for one that cannot be read.
    #[must_use]
    pub fn kind(&self) -> crate::ErrorKind {
        match self {
            Self::Io(_) => crate::ErrorKind::Io,
            _ => crate::ErrorKind::InvalidInput,
        }
    }
}

/// Bytes per SBET record.
pub const RECORD_BYTES: usize = 17 * 8;

/// One SBET record, as the file holds it (radians, metres, seconds).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SbetRecord {
    /// GPS seconds of the week.
    pub time: f64,
    /// Radians.
    pub latitude: f64,
    /// Radians.
    pub longitude: f64,
    /// Ellipsoidal, m.
    pub height: f64,
    /// North, east, down, m/s (wander angle 0).
    pub velocity: [f64; 3],
    /// Radians.
    pub roll: f64,
    /// Radians.
    pub pitch: f64,
    /// Radians, from north, clockwise.
    pub heading: f64,
    /// Radians.
    pub wander_angle: f64,
    /// Body frame, m/s².
    pub acceleration: [f64; 3],
    /// Body frame, rad/s.
    pub angular_rate: [f64; 3],
}

impl SbetRecord {
    fn from_values(v: &[f64; 17]) -> Self {
        Self {
            time: v[0],
            latitude: v[1],
            longitude: v[2],
            height: v[3],
            velocity: [v[4], v[5], v[6]],
            roll: v[7],
            pitch: v[8],
            heading: v[9],
            wander_angle: v[10],
            acceleration: [v[11], v[12], v[13]],
            angular_rate: [v[14], v[15], v[16]],
        }
    }
}

/// Reads every record of an SBET file.
///
/// # Errors
/// [`TrajectoryError::TruncatedSbet`] when the length is not a whole number of
/// records (the records before are not returned: a cut file is not a trajectory);
/// [`TrajectoryError::Io`] when reading fails.
pub fn read_sbet(mut reader: impl Read) -> Result<Vec<SbetRecord>, TrajectoryError> {
    let mut records = Vec::new();
    let mut buffer = [0_u8; RECORD_BYTES];
    loop {
        let mut filled = 0;
        while filled < RECORD_BYTES {
            match reader.read(&mut buffer[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e.into()),
            }
        }
        match filled {
            0 => return Ok(records),
            RECORD_BYTES => {
                let mut values = [0.0; 17];
                for (value, bytes) in values.iter_mut().zip(buffer.chunks_exact(8)) {
                    let mut word = [0_u8; 8];
                    word.copy_from_slice(bytes);
                    *value = f64::from_le_bytes(word);
                }
                records.push(SbetRecord::from_values(&values));
            }
            trailing => {
                return Err(TrajectoryError::TruncatedSbet {
                    records: records.len() as u64,
                    trailing,
                });
            }
        }
    }
}

/// One epoch of a text trajectory (degrees, metres, m/s).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TrajectoryPoint {
    /// UTC.
    pub time: DateTime<Utc>,
    /// Degrees.
    pub latitude: f64,
    /// Degrees.
    pub longitude: f64,
    /// Ellipsoidal.
    pub height: f64,
    /// North, east, up.
    pub velocity: Option<[f64; 3]>,
    /// Roll, pitch, heading.
    pub attitude: Option<[f64; 3]>,
    /// 1σ north, east, up.
    pub position_std: Option<[f64; 3]>,
    /// 1 (RTK fixed) to 6 (an outage).
    pub quality: Option<u8>,
}

/// Reads `trajectory.csv` or an `ASCII` export (see the [module](self)).
///
/// # Errors
/// [`TrajectoryError::Invalid`] for a file without the time and position columns, a
/// line with another number of fields than the header, or a value that is not a
/// number (naming the line and column); [`TrajectoryError::Io`].
pub fn read_points(reader: impl BufRead) -> Result<Vec<TrajectoryPoint>, TrajectoryError> {
    let mut header: Option<(Vec<String>, char)> = None;
    let mut last_comment: Option<String> = None;
    let mut points = Vec::new();
    let mut index = Columns::default();
    for (n, line) in reader.lines().enumerate() {
        let line = line?;
        let number = n + 1;
        let line = line.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if header.is_none() {
            if let Some(comment) = line.strip_prefix('#') {
                last_comment = Some(comment.trim().to_owned());
                continue;
            }
            let (names, separator) = match last_comment.take() {
                // An ASCII export: the last `#` line names the columns.
                Some(names) => (names, ' '),
                // trajectory.csv: this line is the header.
                None => (line.to_owned(), ','),
            };
            let names: Vec<String> = split(&names, separator).map(str::to_owned).collect();
            index = Columns::of(&names).map_err(|reason| TrajectoryError::Invalid {
                line: number,
                reason,
            })?;
            header = Some((names, separator));
            // A CSV header is not data; the first line after an export's `#` lines is.
            if separator == ',' {
                continue;
            }
        }
        let Some((names, separator)) = &header else {
            continue;
        };
        let fields: Vec<&str> = split(line, *separator).collect();
        if fields.len() != names.len() {
            return Err(TrajectoryError::Invalid {
                line: number,
                reason: format!("{} fields, the header names {}", fields.len(), names.len()),
            });
        }
        points.push(
            index
                .point(&fields, names)
                .map_err(|reason| TrajectoryError::Invalid {
                    line: number,
                    reason,
                })?,
        );
    }
    Ok(points)
}

fn split(line: &str, separator: char) -> Box<dyn Iterator<Item = &str> + '_> {
    if separator == ' ' {
        Box::new(line.split_whitespace())
    } else {
        Box::new(line.split(separator).map(str::trim))
    }
}

/// Where each known column is.
#[derive(Default)]
struct Columns {
    time: usize,
    position: [usize; 3],
    velocity: Option<[usize; 3]>,
    attitude: Option<[usize; 3]>,
    position_std: Option<[usize; 3]>,
    quality: Option<usize>,
}

impl Columns {
    fn of(names: &[String]) -> Result<Columns, String> {
        let find = |name: &str| names.iter().position(|n| n == name);
        let need = |name: &str| find(name).ok_or_else(|| format!("no `{name}` column"));
        let three = |a: &str, b: &str, c: &str| Some([find(a)?, find(b)?, find(c)?]);
        Ok(Columns {
            time: find("time")
                .or_else(|| find("utc_time"))
                .ok_or("no `time` column")?,
            position: [need("latitude")?, need("longitude")?, need("height")?],
            velocity: three("velocity_north", "velocity_east", "velocity_up"),
            attitude: three("roll", "pitch", "heading"),
            position_std: three("std_north", "std_east", "std_up"),
            quality: find("quality"),
        })
    }

    fn point(&self, fields: &[&str], names: &[String]) -> Result<TrajectoryPoint, String> {
        let number = |i: usize| -> Result<f64, String> {
            fields[i]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| format!("`{}` is not a number: {:?}", names[i], fields[i]))
        };
        let three = |columns: Option<[usize; 3]>| -> Result<Option<[f64; 3]>, String> {
            columns
                .map(|[a, b, c]| Ok([number(a)?, number(b)?, number(c)?]))
                .transpose()
        };
        let time = DateTime::parse_from_rfc3339(fields[self.time])
            .map_err(|e| {
                format!(
                    "`{}` is not a time: {:?} ({e})",
                    names[self.time], fields[self.time]
                )
            })?
            .with_timezone(&Utc);
        let quality = self
            .quality
            .map(|i| {
                fields[i]
                    .parse::<u8>()
                    .map_err(|_| format!("`quality` is not 1 to 6: {:?}", fields[i]))
            })
            .transpose()?;
        let [lat, lon, height] = self.position;
        Ok(TrajectoryPoint {
            time,
            latitude: number(lat)?,
            longitude: number(lon)?,
            height: number(height)?,
            velocity: three(self.velocity)?,
            attitude: three(self.attitude)?,
            position_std: three(self.position_std)?,
            quality,
        })
    }
}

/// The difference of two trajectories at one epoch of the first.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Difference {
    /// The epoch (of the first trajectory).
    pub time: DateTime<Utc>,
    /// Along the first trajectory's direction of travel, m (positive: the second is ahead).
    pub along_track: f64,
    /// Across it, m (positive: the second is to the right).
    pub cross_track: f64,
    /// Vertical, m (positive: the second is higher).
    pub vertical: f64,
    /// Horizontal distance, m.
    pub horizontal: f64,
}

/// Summary statistics of one difference, m.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Statistics {
    /// The mean.
    pub mean: f64,
    /// The standard deviation about the mean.
    pub std: f64,
    /// The root mean square.
    pub rms: f64,
    /// The largest absolute value.
    pub max_abs: f64,
}

impl Statistics {
    fn of(values: impl Iterator<Item = f64> + Clone) -> Statistics {
        let n = values.clone().count();
        if n == 0 {
            return Statistics::default();
        }
        let n_f = n as f64;
        let mean = values.clone().sum::<f64>() / n_f;
        let variance = values.clone().map(|v| (v - mean).powi(2)).sum::<f64>() / n_f;
        let rms = (values.clone().map(|v| v * v).sum::<f64>() / n_f).sqrt();
        let max_abs = values.map(f64::abs).fold(0.0, f64::max);
        Statistics {
            mean,
            std: variance.sqrt(),
            rms,
            max_abs,
        }
    }
}

/// Two trajectories compared ([`compare`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// At each epoch of the first within the time both cover.
    pub differences: Vec<Difference>,
    /// Of [`Difference::along_track`].
    pub along_track: Statistics,
    /// Of [`Difference::cross_track`].
    pub cross_track: Statistics,
    /// Of [`Difference::vertical`].
    pub vertical: Statistics,
    /// Of [`Difference::horizontal`].
    pub horizontal: Statistics,
}

const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;

/// Compares `b` with `a`: at each epoch of `a` within the time both cover, `b`'s
/// position interpolated linearly in time, the difference in metres on the local
/// level at `a`'s position, split along `a`'s direction of travel (from its velocity,
/// or its motion to the next epoch), across it, and vertically. The points must be in
/// time order (as the outputs write them).
#[must_use]
pub fn compare(a: &[TrajectoryPoint], b: &[TrajectoryPoint]) -> Comparison {
    let mut differences = Vec::new();
    let mut j = 0;
    for (i, p) in a.iter().enumerate() {
        while j + 1 < b.len() && b[j + 1].time <= p.time {
            j += 1;
        }
        let (Some(b0), Some(b1)) = (b.get(j), b.get((j + 1).min(b.len().saturating_sub(1)))) else {
            break;
        };
        if p.time < b0.time || p.time > b1.time {
            continue;
        }
        let span = (b1.time - b0.time).num_microseconds().unwrap_or(0) as f64;
        let f = if span > 0.0 {
            (p.time - b0.time).num_microseconds().unwrap_or(0) as f64 / span
        } else {
            0.0
        };
        let lat = b0.latitude + (b1.latitude - b0.latitude) * f;
        let lon = b0.longitude + (b1.longitude - b0.longitude) * f;
        let height = b0.height + (b1.height - b0.height) * f;
        let (north, east) = local_offset(p.latitude, p.longitude, p.height, lat, lon);
        let direction = direction_of_travel(a, i);
        let (along, cross) = match direction {
            Some((dn, de)) => (north * dn + east * de, east * dn - north * de),
            None => (0.0, 0.0),
        };
        differences.push(Difference {
            time: p.time,
            along_track: along,
            cross_track: cross,
            vertical: height - p.height,
            horizontal: north.hypot(east),
        });
    }
    let stats = |pick: fn(&Difference) -> f64| Statistics::of(differences.iter().map(pick));
    Comparison {
        along_track: stats(|d| d.along_track),
        cross_track: stats(|d| d.cross_track),
        vertical: stats(|d| d.vertical),
        horizontal: stats(|d| d.horizontal),
        differences,
    }
}

/// North and east metres from the first position to the second.
fn local_offset(lat: f64, lon: f64, height: f64, to_lat: f64, to_lon: f64) -> (f64, f64) {
    let phi = lat.to_radians();
    let w = (1.0 - WGS84_E2 * phi.sin().powi(2)).sqrt();
    let meridian = WGS84_A * (1.0 - WGS84_E2) / (w * w * w);
    let prime_vertical = WGS84_A / w;
    let mut dlon = to_lon - lon;
    if dlon > 180.0 {
        dlon -= 360.0;
    } else if dlon < -180.0 {
        dlon += 360.0;
    }
    (
        (to_lat - lat).to_radians() * (meridian + height),
        dlon.to_radians() * (prime_vertical + height) * phi.cos(),
    )
}

/// The unit vector (north, east) of travel at point `i`: its velocity, else its motion
/// to the next point (or from the one before); `None` when standing still.
fn direction_of_travel(points: &[TrajectoryPoint], i: usize) -> Option<(f64, f64)> {
    let p = &points[i];
    let (north, east) = match p.velocity {
        Some([n, e, _]) if n.hypot(e) > 0.1 => (n, e),
        _ => {
            let (from, to) = match points.get(i + 1) {
                Some(next) => (p, next),
                None => (points.get(i.checked_sub(1)?)?, p),
            };
            local_offset(
                from.latitude,
                from.longitude,
                from.height,
                to.latitude,
                to.longitude,
            )
        }
    };
    let norm = north.hypot(east);
    (norm > 1e-6).then(|| (north / norm, east / norm))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(seconds: i64, lat: f64, lon: f64, height: f64) -> TrajectoryPoint {
        TrajectoryPoint {
            time: DateTime::from_timestamp(1_700_000_000 + seconds, 0).expect("a time"),
            latitude: lat,
            longitude: lon,
            height,
            velocity: None,
            attitude: None,
            position_std: None,
            quality: None,
        }
    }

    /// The record layout: 17 little-endian doubles, in the published order.
    #[test]
    fn sbet_records_are_seventeen_little_endian_doubles() {
        let values: Vec<f64> = (0..17).map(|i| f64::from(i) + 0.5).collect();
        let mut bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes.extend(values.iter().rev().flat_map(|v| v.to_le_bytes()));
        let records = read_sbet(bytes.as_slice()).expect("two records");
        assert_eq!(records.len(), 2);
        let r = records[0];
        assert_eq!(
            (r.time, r.latitude, r.longitude, r.height),
            (0.5, 1.5, 2.5, 3.5)
        );
        assert_eq!(r.velocity, [4.5, 5.5, 6.5]);
        assert_eq!(
            (r.roll, r.pitch, r.heading, r.wander_angle),
            (7.5, 8.5, 9.5, 10.5)
        );
        assert_eq!(r.acceleration, [11.5, 12.5, 13.5]);
        assert_eq!(r.angular_rate, [14.5, 15.5, 16.5]);
        assert_eq!(records[1].time, 16.5);
        bytes.truncate(bytes.len() - 5);
        let e = read_sbet(bytes.as_slice()).unwrap_err();
        assert!(
            matches!(
                e,
                TrajectoryError::TruncatedSbet {
                    records: 1,
                    trailing: 131
                }
            ),
            "{e}"
        );
        assert_eq!(e.kind(), crate::ErrorKind::InvalidInput);
    }

    #[test]
    fn csv_and_ascii_give_the_same_points() {
        let csv = "time,latitude,longitude,height,velocity_north,velocity_east,velocity_up,roll,pitch,heading,std_north,std_east,std_up,quality\n\
                   2026-01-02T12:00:00.000Z,48.1,11.5,500.000,1.000,2.000,0.000,0.5,1.0,63.4,0.02,0.02,0.03,1\n";
        let ascii = "# trajectory export\n# utc_time gps_week gps_seconds latitude longitude height velocity_north velocity_east velocity_up roll pitch heading std_north std_east std_up quality\n\
                     2026-01-02T12:00:00.000Z 2399 475218.000 48.1 11.5 500.000 1.000 2.000 0.000 0.5 1.0 63.4 0.02 0.02 0.03 1\n";
        let a = read_points(csv.as_bytes()).expect("csv");
        let b = read_points(ascii.as_bytes()).expect("ascii");
        assert_eq!(a, b);
        assert_eq!(a[0].attitude, Some([0.5, 1.0, 63.4]));
        assert_eq!(a[0].quality, Some(1));
        let bad = "time,latitude,longitude,height\n2026-01-02T12:00:00Z,48.1,eleven,500\n";
        let e = read_points(bad.as_bytes()).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("line 2: `longitude` is not a number"),
            "{e}"
        );
        let e = read_points("time,latitude\n".as_bytes()).unwrap_err();
        assert!(e.to_string().contains("no `longitude` column"), "{e}");
        let e =
            read_points("time,latitude,longitude,height\n2026-01-02T12:00:00Z,1,2\n".as_bytes())
                .unwrap_err();
        assert!(
            e.to_string().contains("3 fields, the header names 4"),
            "{e}"
        );
    }

    /// Going north at 1 m/s; the second trajectory 0.5 m ahead, 0.2 m to the right
    /// (east), 0.1 m higher, sampled at other times.
    #[test]
    fn the_comparison_splits_the_difference_along_and_across_the_track() {
        let metre_lat = 1.0 / 111_200.0;
        let metre_lon = 1.0 / (111_320.0 * 48_f64.to_radians().cos());
        let a: Vec<TrajectoryPoint> = (0..10)
            .map(|s| point(s, 48.0 + s as f64 * metre_lat, 11.0, 500.0))
            .collect();
        let b: Vec<TrajectoryPoint> = (0..20)
            .map(|h| {
                let t = h as f64 / 2.0 - 0.25;
                let mut p = point(
                    0,
                    48.0 + (t + 0.5) * metre_lat,
                    11.0 + 0.2 * metre_lon,
                    500.1,
                );
                p.time = DateTime::from_timestamp_micros(1_700_000_000_000_000 + (t * 1e6) as i64)
                    .expect("a time");
                p
            })
            .collect();
        let c = compare(&a, &b);
        assert_eq!(c.differences.len(), 10, "the epochs both cover");
        assert!(
            (c.along_track.mean - 0.5).abs() < 0.01,
            "{:?}",
            c.along_track
        );
        assert!(
            (c.cross_track.mean - 0.2).abs() < 0.01,
            "{:?}",
            c.cross_track
        );
        assert!((c.vertical.mean - 0.1).abs() < 1e-9);
        assert!(c.along_track.std < 0.01);
        assert!((c.horizontal.rms - 0.5_f64.hypot(0.2)).abs() < 0.01);
    }
}
