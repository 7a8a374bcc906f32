//! A unit's data-logger session (sbgECom binary output logs, decoded by `svc-logs`) as
//! GNSS input, read as the NMEA is: each position of the unit's navigation solution
//! becomes an epoch, dated in UTC.
//!
//! - A file is a binary log when the first [`SNIFF_BYTES`] bytes hold a valid sbgECom
//!   log frame (a session's later files may start in the middle of a frame).
//! - Positions: each `ekfNav` record whose solution mode is `NavPosition` (latitude,
//!   longitude, ellipsoidal height = altitude + undulation, north and east velocity); a
//!   file without any such record is read again for its `gps1Pos` records with a
//!   position (no velocity: the trajectory's finite differences give it).
//! - Time: the unit stamps records with its time since power-up (µs, a u32 that wraps
//!   every 71.6 minutes). The latest `utcTime` record whose UTC is known with its
//!   leap seconds (`Initialized`) maps it to UTC: a record's UTC time is that record's
//!   UTC plus the difference of their timestamps. Positions before the first such
//!   `utcTime` have no date and are skipped (counted).
//! - Frames that are not valid (bad CRC, garbage, a truncated end) are skipped; their
//!   count goes to the file's notes.

use std::io::{BufRead, Read};

use svc_logs::records::{GnssPos, GnssPosType, SolutionMode, UtcTime, solution_mode};
use svc_logs::{LogDecoder, LogReader, Record as LogRecord};

use super::nmea::{FileScan, Gga, Inertial, Record, Rmc, Sentence};
use super::solution::LeverArmEstimate;
use super::trajectory::DAY_MS;

/// How many bytes at the start of a file decide whether it is a binary log.
pub(super) const SNIFF_BYTES: usize = 16 * 1024;

/// Whether `start` (the first bytes of a file) holds a valid sbgECom log frame.
pub(super) fn is_binary_log(start: &[u8]) -> bool {
    let mut decoder = LogDecoder::new();
    decoder.feed(start);
    decoder.next_record().is_some()
}

/// Which records give the positions.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Nav,
    Gnss,
}

/// Reads the binary log `open()` gives (once, or twice when it has no `ekfNav`
/// position), handing each dated position to `found`.
pub(super) fn scan_log<R: BufRead>(
    path: &str,
    mut open: impl FnMut() -> std::io::Result<R>,
    warnings: &mut Vec<String>,
    mut found: impl FnMut(Record),
) -> FileScan {
    let mut scan = FileScan::new(path);
    for source in [Source::Nav, Source::Gnss] {
        let reader = match open() {
            Ok(reader) => reader,
            Err(e) => {
                warnings.push(format!("cannot read {path}: {e}; file skipped"));
                return scan;
            }
        };
        let (used, undated, stats) = read_positions(
            reader,
            source,
            &mut found,
            &mut scan.lever_arm,
            warnings,
            path,
        );
        scan.sentences += used + undated;
        if undated > 0 {
            scan.notes.push(format!(
                "{undated} positions before the first UTC time of the log skipped"
            ));
        }
        let bad = stats.bad_crc + stats.truncated + stats.unknown + stats.invalid_payload;
        if bad > 0 || stats.skipped_bytes > 0 {
            scan.notes.push(format!(
                "{bad} frames and {} bytes of the log skipped (bad CRC, unknown, truncated)",
                stats.skipped_bytes
            ));
        }
        if used > 0 || source == Source::Gnss {
            if used == 0 {
                scan.notes.push("no position in the binary log".to_owned());
            }
            return scan;
        }
        // No navigation position at all: read the GNSS positions instead.
        scan.notes.clear();
        scan.sentences = 0;
        scan.lever_arm = LeverArmEstimate::default();
    }
    scan
}

/// The UTC time (ms since 1970-01-01) of a `utcTime` record whose UTC is known, as
/// the recordings' tables read it ([`svc_logs::tables::utc_micros`]).
fn utc_ms(utc: &UtcTime) -> Option<i64> {
    svc_logs::tables::utc_micros(utc).map(|micros| micros.div_euclid(1000))
}

/// The GNSS antenna's and the navigation's positions of one instant, paired for the
/// lever-arm estimate whichever the unit logs first.
#[derive(Default)]
struct Pairing {
    /// The latest `gps1Pos` with a fix: its timestamp, latitude, longitude, ellipsoidal
    /// height.
    antenna: Option<(u32, [f64; 3])>,
    /// The latest navigation position with its attitude: timestamp, position, attitude.
    nav: Option<(u32, [f64; 3], [f64; 3])>,
}

impl Pairing {
    fn antenna(&mut self, timestamp: u32, position: [f64; 3], estimate: &mut LeverArmEstimate) {
        if let Some((at, nav, attitude)) = self.nav
            && at.abs_diff(timestamp) <= SAME_INSTANT_US
        {
            estimate.add(attitude, position, nav);
        }
        self.antenna = Some((timestamp, position));
    }

    fn nav(&mut self, p: &Position, estimate: &mut LeverArmEstimate) {
        let Some(inertial) = p.inertial.filter(|_| p.is_valid()) else {
            return;
        };
        let attitude = inertial.attitude.map(f64::from);
        let position = [p.lat, p.lon, p.height];
        if let Some((at, antenna)) = self.antenna
            && at.abs_diff(p.timestamp) <= SAME_INSTANT_US
        {
            estimate.add(attitude, antenna, position);
        }
        self.nav = Some((p.timestamp, position, attitude));
    }
}

/// Reads one pass of the log: (positions handed out, positions without UTC, stats).
/// In the navigation pass, the antenna's offsets of the instants with both positions go
/// to `lever_arm`.
fn read_positions(
    reader: impl Read,
    source: Source,
    found: &mut impl FnMut(Record),
    lever_arm: &mut LeverArmEstimate,
    warnings: &mut Vec<String>,
    path: &str,
) -> (u64, u64, svc_logs::Stats) {
    let mut pairing = Pairing::default();
    let mut log = LogReader::new(reader);
    // The unit's timestamp and the UTC time of the latest utcTime with a known UTC.
    let mut clock: Option<(u32, i64)> = None;
    let (mut used, mut undated) = (0_u64, 0_u64);
    // The latest ekfEuler: its timestamp and what it gives a position of its time.
    let mut euler: Option<(u32, Inertial)> = None;
    // A navigation position waiting for the ekfEuler of its instant, which a unit may
    // log just after it, with the clock of when it was logged.
    let mut pending: Option<(Position, Option<(u32, i64)>)> = None;
    let mut emit = |position: Position, clock: Option<(u32, i64)>| match dated(position, clock) {
        Some(records) => {
            for record in records {
                found(record);
            }
            used += 1;
        }
        None if clock.is_none() && position.is_valid() => undated += 1,
        None => {}
    };
    loop {
        let record = match log.next_record() {
            Ok(Some(record)) => record,
            Ok(None) => break,
            Err(e) => {
                warnings.push(format!("read error in {path}: {e}"));
                break;
            }
        };
        match (&record, source) {
            (LogRecord::UtcTime(utc), _) => {
                if let Some(ms) = utc_ms(utc) {
                    clock = Some((utc.timestamp, ms));
                }
            }
            (LogRecord::EkfEuler(e), Source::Nav) => {
                let degrees = |rad: f32| rad.to_degrees();
                let inertial = Inertial {
                    attitude: [
                        degrees(e.euler[0]),
                        degrees(e.euler[1]),
                        degrees(e.euler[2]).rem_euclid(360.0),
                    ],
                    sigma: [0.0, degrees(e.euler_std[2])],
                };
                euler = Some((e.timestamp, inertial));
                if let Some((mut waiting, its_clock)) = pending.take() {
                    if waiting.timestamp.abs_diff(e.timestamp) <= SAME_INSTANT_US {
                        waiting.attach(inertial);
                    }
                    emit(waiting, its_clock);
                    pairing.nav(&waiting, lever_arm);
                }
            }
            (LogRecord::EkfNav(nav), Source::Nav)
                if solution_mode(nav.status) == Some(SolutionMode::NavPosition) =>
            {
                if let Some((waiting, its_clock)) = pending.take() {
                    emit(waiting, its_clock);
                }
                let horizontal = nav.position_std[0].max(nav.position_std[1]);
                let mut position = Position {
                    timestamp: nav.timestamp,
                    lat: nav.position[0],
                    lon: nav.position[1],
                    height: nav.position[2] + f64::from(nav.undulation),
                    velocity: Some([f64::from(nav.velocity[0]), f64::from(nav.velocity[1])]),
                    quality: inertial_quality(horizontal),
                    horizontal_sigma: Some(horizontal),
                    inertial: None,
                };
                // The attitude of the same instant, logged before the position.
                match euler.filter(|(at, _)| nav.timestamp.abs_diff(*at) <= SAME_INSTANT_US) {
                    Some((_, inertial)) => {
                        position.attach(inertial);
                        emit(position, clock);
                        pairing.nav(&position, lever_arm);
                    }
                    None => pending = Some((position, clock)),
                }
            }
            (LogRecord::Gps1Pos(pos), Source::Nav) if quality(pos).is_some() => {
                let height = pos.altitude + f64::from(pos.undulation);
                pairing.antenna(
                    pos.timestamp,
                    [pos.latitude, pos.longitude, height],
                    lever_arm,
                );
            }
            (LogRecord::Gps1Pos(pos), Source::Gnss) => {
                if let Some(quality) = quality(pos) {
                    let position = Position {
                        timestamp: pos.timestamp,
                        lat: pos.latitude,
                        lon: pos.longitude,
                        height: pos.altitude + f64::from(pos.undulation),
                        velocity: None,
                        quality,
                        horizontal_sigma: None,
                        inertial: None,
                    };
                    emit(position, clock);
                }
            }
            _ => {}
        }
    }
    if let Some((waiting, its_clock)) = pending.take() {
        emit(waiting, its_clock);
    }
    (used, undated, log.stats())
}

/// A position of the log, before it is dated.
#[derive(Clone, Copy, Debug)]
struct Position {
    timestamp: u32,
    lat: f64,
    lon: f64,
    /// Ellipsoidal.
    height: f64,
    velocity: Option<[f64; 2]>,
    /// As a GGA gives it.
    quality: u8,
    /// An inertial position's own horizontal 1σ, m.
    horizontal_sigma: Option<f32>,
    inertial: Option<Inertial>,
}

impl Position {
    fn is_valid(&self) -> bool {
        self.lat.is_finite()
            && self.lon.is_finite()
            && self.height.is_finite()
            && self.lat.abs() <= 90.0
            && self.lon.abs() <= 180.0
    }

    /// The attitude of the same instant (with this position's own σ).
    fn attach(&mut self, inertial: Inertial) {
        let inertial = Inertial {
            sigma: [self.horizontal_sigma.unwrap_or(0.0), inertial.sigma[1]],
            ..inertial
        };
        if inertial
            .attitude
            .iter()
            .chain(&inertial.sigma)
            .all(|v| v.is_finite())
        {
            self.inertial = Some(inertial);
        }
    }
}

/// The RMC and GGA records of a valid position dated by `clock` (the unit's timestamp
/// and UTC of the latest known utcTime); `None` before any or for an invalid position.
fn dated(p: Position, clock: Option<(u32, i64)>) -> Option<[Record; 2]> {
    if !p.is_valid() {
        return None;
    }
    let (at, utc) = clock?;
    // The unit's clock wraps every 2^32 µs: the difference is read as signed.
    let since = i64::from(p.timestamp.wrapping_sub(at) as i32);
    let time_ms = utc + since.div_euclid(1000);
    let (day, tod_ms) = (time_ms.div_euclid(DAY_MS), time_ms.rem_euclid(DAY_MS));
    Some([
        Record {
            tod_ms,
            sentence: Sentence::Rmc(Rmc {
                lat: p.lat,
                lon: p.lon,
                day,
                velocity: p.velocity.filter(|v| v.iter().all(|c| c.is_finite())),
            }),
        },
        Record {
            tod_ms,
            sentence: Sentence::Gga(Gga {
                lat: p.lat,
                lon: p.lon,
                height: p.height,
                quality: p.quality,
                inertial: p.inertial,
            }),
        },
    ])
}

/// How far apart (µs) an `ekfEuler` and an `ekfNav` may be stamped and still describe
/// the same instant.
const SAME_INSTANT_US: u32 = 20_000;

/// The GGA fix quality an inertial position's horizontal 1σ (m) stands for: 4 (RTK
/// fixed) to 5 cm, 5 (RTK float) to 50 cm, 2 (differential) to 1 m, else 1.
fn inertial_quality(horizontal_sigma: f32) -> u8 {
    match horizontal_sigma {
        s if s <= 0.05 => 4,
        s if s <= 0.5 => 5,
        s if s <= 1.0 => 2,
        _ => 1,
    }
}

/// The GGA fix quality of a GNSS position (1 single, 2 differential, 4 RTK fixed, 5
/// RTK float; PPP and a fixed location as 1); `None` without a position.
fn quality(pos: &GnssPos) -> Option<u8> {
    match pos.pos_type()? {
        GnssPosType::NoSolution => None,
        GnssPosType::PsrDiff | GnssPosType::Sbas | GnssPosType::Omnistar => Some(2),
        GnssPosType::RtkInt => Some(4),
        GnssPosType::RtkFloat => Some(5),
        _ => Some(1),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{InputFile, process};
    use svc_logs::records::{EkfNav, GnssPos, UtcTime};
    use svc_logs::{Record, encode_frame};

    /// `utcTime` with a known UTC (status: UTC initialized), at unit time `timestamp`.
    fn utc(timestamp: u32, second: u8, nanosecond: u32) -> Record {
        Record::UtcTime(UtcTime {
            timestamp,
            status: 2 << 6,
            year: 2026,
            month: 11,
            day: 29,
            hour: 10,
            minute: 0,
            second,
            nanosecond,
            ..UtcTime::default()
        })
    }

    fn nav(timestamp: u32, lat: f64, mode: u32) -> Record {
        Record::EkfNav(EkfNav {
            timestamp,
            velocity: [1.0, 2.0, 0.0],
            position: [lat, 2.35, 35.0],
            undulation: 45.0,
            status: mode,
            ..EkfNav::default()
        })
    }

    fn log(records: &[Record]) -> Vec<u8> {
        let mut bytes = Vec::new();
        for (i, record) in records.iter().enumerate() {
            bytes.extend(encode_frame(record, (i & 0xF) as u8).expect("a frame"));
        }
        bytes
    }

    fn input(dir: &std::path::Path, name: &str, bytes: &[u8]) -> InputFile {
        let location = dir.join(name.replace('/', "_"));
        std::fs::write(&location, bytes).expect("write");
        InputFile {
            path: name.to_owned(),
            location,
        }
    }

    fn rows(outcome: &super::super::Outcome) -> Vec<String> {
        let csv = outcome
            .outputs
            .iter()
            .find(|o| o.path == "trajectory.csv")
            .expect("a trajectory");
        String::from_utf8(csv.bytes.clone())
            .expect("text")
            .lines()
            .skip(1)
            .map(str::to_owned)
            .collect()
    }

    /// A session: positions before the first UTC are skipped; each navigation position
    /// after it is an epoch at the UTC its timestamp maps to, with its ellipsoidal
    /// height and north/east velocity; positions not in NavPosition mode are left out;
    /// garbage and a truncated end change nothing.
    #[test]
    fn a_binary_session_is_read_as_the_navigation_positions() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut bytes = log(&[
            nav(500_000, 48.0, 4),
            utc(1_000_000, 0, 0),
            nav(1_200_000, 48.1, 4),
            nav(1_400_000, 48.2, 2),
            nav(1_600_000, 48.3, 4),
        ]);
        bytes.extend(b"noise between frames");
        bytes.extend(log(&[nav(2_000_000, 48.4, 4)]));
        let whole = log(&[nav(2_200_000, 48.5, 4)]);
        bytes.extend(&whole[..whole.len() - 3]);
        let file = input(dir.path(), "rover/session.001", &bytes);
        let outcome = process(&[file], &serde_json::Map::new()).expect("processed");
        let rows = rows(&outcome);
        assert_eq!(rows.len(), 3, "{rows:?}");
        assert!(
            rows[0].starts_with(
                "2026-11-29T10:00:00.200Z,48.100000000,2.350000000,80.000,1.000,2.000,"
            ),
            "{}",
            rows[0]
        );
        assert!(
            rows[1].starts_with("2026-11-29T10:00:00.600Z,48.300000000,"),
            "{}",
            rows[1]
        );
        assert!(
            rows[2].starts_with("2026-11-29T10:00:01.000Z,48.400000000,"),
            "{}",
            rows[2]
        );
    }

    /// The unit's clock wraps every 2^32 µs; a file without navigation positions gives
    /// its GNSS positions.
    #[test]
    fn the_clock_wraps_and_gnss_positions_stand_in() {
        let dir = tempfile::tempdir().expect("a folder");
        let near_wrap = u32::MAX - 100_000;
        let gnss = |timestamp: u32, lat: f64| {
            Record::Gps1Pos(GnssPos {
                timestamp,
                status: 7 << 6,
                latitude: lat,
                longitude: 2.35,
                altitude: 35.0,
                undulation: 45.0,
                ..GnssPos::default()
            })
        };
        let bytes = log(&[
            utc(near_wrap, 0, 0),
            gnss(near_wrap.wrapping_add(200_000), 48.1),
            gnss(near_wrap.wrapping_add(400_000), 48.2),
        ]);
        let file = input(dir.path(), "rover/session.002", &bytes);
        let outcome = process(&[file], &serde_json::Map::new()).expect("processed");
        let rows = rows(&outcome);
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert!(
            rows[0].starts_with("2026-11-29T10:00:00.200Z,48.100000000"),
            "{}",
            rows[0]
        );
        assert!(
            rows[1].starts_with("2026-11-29T10:00:00.400Z,48.200000000"),
            "{}",
            rows[1]
        );
    }
}
