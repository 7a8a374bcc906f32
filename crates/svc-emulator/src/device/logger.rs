//! The emulated unit's data logger: sessions of sbgECom frames written to disk.
//!
//! While the logger runs (`POST /dataLogger/start` … `/stop`), it records the messages
//! enabled in `output.dataLogger.messages` (as the settings were when it started) at
//! their triggers, as sbgECom frames ([`svc_logs::encode_frame`]), into the files of a
//! session: a folder named by `dataLogger.sessionName` (or, when empty, the start time
//! `YYYYMMDD_HHMMSS` in UTC), holding `<session>.001`, `<session>.002`, … each at most
//! [`SPLIT_BYTES`] long (files end on a frame boundary).
//!
//! Nothing runs in the background: the frames the elapsed time implies are written when
//! something looks (the data logger's status, an FTP listing or download) and when the
//! logger stops. Periods shorter than [`MIN_PERIOD_MS`] are written at that period;
//! `onChange` messages every [`ON_CHANGE_MS`]; messages the emulator has no values for
//! (e.g. `diag`, `sessionInfo`, `mag`) are not written.
//!
//! The values follow one trajectory, [`trajectory_at`]: a circle of [`RADIUS_M`] around
//! [`ORIGIN`] driven at [`SPEED_M_S`], so that `ekfNav`, `gps1Pos`, `ekfEuler`,
//! `ekfQuat`, `utcTime`, `imuData` and `imuShort` agree with each other.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde_json::Value;
use svc_logs::records::{EkfEuler, EkfNav, EkfQuat, GnssPos, ImuData, ImuShort, Status, UtcTime};
use svc_logs::{MessageKind, Record};

/// The size at which a session's file is closed and the next one opened.
pub const SPLIT_BYTES: u64 = 1 << 20;
/// The shortest period written (faster triggers are written at this period).
pub const MIN_PERIOD_MS: u64 = 10;
/// How often an `onChange` message is written (the emulated values change constantly).
pub const ON_CHANGE_MS: u64 = 200;
/// The centre of the emulated trajectory: latitude, longitude (degrees), ellipsoidal
/// height (m) — the sample survey's area.
pub const ORIGIN: (f64, f64, f64) = (48.8566, 2.3522, 35.0);
/// Radius of the emulated circle, in metres.
pub const RADIUS_M: f64 = 50.0;
/// Speed along it, in m/s.
pub const SPEED_M_S: f64 = 5.0;
/// At most this much elapsed time is written at once (older time is skipped): a
/// session left running for days does not fill the disk the first time it is looked at.
const MAX_CATCH_UP: Duration = Duration::from_secs(600);

const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;

/// Where the emulated unit is `seconds` after the logger started: latitude, longitude
/// (degrees), height (m), velocity north, east, down (m/s) and heading (degrees, 0 =
/// north, clockwise).
#[must_use]
pub fn trajectory_at(seconds: f64) -> ([f64; 3], [f64; 3], f64) {
    let omega = SPEED_M_S / RADIUS_M;
    let angle = omega * seconds;
    let north = RADIUS_M * angle.cos();
    let east = RADIUS_M * angle.sin();
    let lat0 = ORIGIN.0.to_radians();
    let w = (1.0 - WGS84_E2 * lat0.sin().powi(2)).sqrt();
    let meridian = WGS84_A * (1.0 - WGS84_E2) / (w * w * w);
    let prime_vertical = WGS84_A / w;
    let lat = ORIGIN.0 + (north / (meridian + ORIGIN.2)).to_degrees();
    let lon = ORIGIN.1 + (east / ((prime_vertical + ORIGIN.2) * lat0.cos())).to_degrees();
    let v_north = -RADIUS_M * omega * angle.sin();
    let v_east = RADIUS_M * omega * angle.cos();
    let heading = v_east.atan2(v_north).to_degrees().rem_euclid(360.0);
    ([lat, lon, ORIGIN.2], [v_north, v_east, 0.0], heading)
}

/// One file of a session, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFile {
    pub name: String,
    pub size: u64,
}

struct Running {
    session: String,
    started: Instant,
    started_utc: DateTime<Utc>,
    /// Message and period in ms.
    messages: Vec<(MessageKind, u64)>,
    /// Elapsed ms up to which the frames are written (exclusive).
    written_ms: u64,
    file_index: u32,
    file_size: u64,
    transfer_id: u8,
}

/// The logger's storage and the running session.
pub struct Logger {
    root: tempfile::TempDir,
    /// When the unit powered on: frame timestamps count from it.
    power_on: Instant,
    running: Option<Running>,
    split_bytes: u64,
}

impl Logger {
    /// An empty logger storage in a temporary folder (removed on drop).
    pub fn new(power_on: Instant) -> std::io::Result<Self> {
        Ok(Self {
            root: tempfile::Builder::new()
                .prefix("svc-unit-logger")
                .tempdir()?,
            power_on,
            running: None,
            split_bytes: SPLIT_BYTES,
        })
    }

    /// The folder holding the sessions.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The running session's name.
    pub fn running_session(&self) -> Option<&str> {
        self.running.as_ref().map(|r| r.session.as_str())
    }

    /// Starts a session with the messages and name of `settings`.
    pub fn start(&mut self, settings: &Value, now: Instant) -> std::io::Result<()> {
        let started_utc = Utc::now();
        let name = settings
            .pointer("/dataLogger/sessionName")
            .and_then(Value::as_str)
            .map(sanitize)
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| started_utc.format("%Y%m%d_%H%M%S").to_string());
        let folder = self.root().join(&name);
        fs::create_dir_all(&folder)?;
        // A session started again under the same name continues its numbering.
        let last = fs::read_dir(&folder)?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let file = entry.file_name().to_string_lossy().into_owned();
                file.strip_prefix(&format!("{name}."))?.parse::<u32>().ok()
            })
            .max()
            .unwrap_or(0);
        let messages = settings
            .pointer("/output/dataLogger/messages")
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(name, trigger)| {
                        let kind = MessageKind::from_name(name)?;
                        let period = period_ms(trigger.as_str()?)?;
                        supported(kind).then_some((kind, period))
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.running = Some(Running {
            session: name,
            started: now,
            started_utc,
            messages,
            written_ms: 0,
            file_index: last + 1,
            file_size: 0,
            transfer_id: 0,
        });
        Ok(())
    }

    /// Writes what the elapsed time implies, then stops.
    pub fn stop(&mut self, now: Instant) -> std::io::Result<()> {
        let result = self.catch_up(now);
        self.running = None;
        result
    }

    /// Writes the frames the time elapsed since the last call implies.
    pub fn catch_up(&mut self, now: Instant) -> std::io::Result<()> {
        let power_on = self.power_on;
        let split = self.split_bytes;
        let root = self.root.path().to_path_buf();
        let Some(running) = self.running.as_mut() else {
            return Ok(());
        };
        let elapsed = u64::try_from(now.saturating_duration_since(running.started).as_millis())
            .unwrap_or(u64::MAX);
        let max = u64::try_from(MAX_CATCH_UP.as_millis()).unwrap_or(u64::MAX);
        if elapsed.saturating_sub(running.written_ms) > max {
            // Skip ahead to the next multiple of every period.
            running.written_ms = (elapsed - max) / 1000 * 1000;
        }
        let mut out = Vec::new();
        let mut t = running.written_ms;
        while t <= elapsed {
            let due: Vec<MessageKind> = running
                .messages
                .iter()
                .filter(|(_, period)| t % period == 0)
                .map(|(kind, _)| *kind)
                .collect();
            for kind in due {
                let record = record_at(kind, running, power_on, t);
                if let Some(record) = record
                    && let Ok(frame) = svc_logs::encode_frame(&record, running.transfer_id)
                {
                    running.transfer_id = running.transfer_id.wrapping_add(1);
                    out.push(frame);
                }
            }
            t += next_gap(&running.messages, t);
        }
        running.written_ms = t;
        let folder = root.join(&running.session);
        let mut file = None;
        for frame in out {
            let len = frame.len() as u64;
            if running.file_size > 0 && running.file_size + len > split {
                running.file_index += 1;
                running.file_size = 0;
                file = None;
            }
            if file.is_none() {
                let path = folder.join(file_name(&running.session, running.file_index));
                file = Some(OpenOptions::new().create(true).append(true).open(path)?);
            }
            if let Some(file) = file.as_mut() {
                file.write_all(&frame)?;
            }
            running.file_size += len;
        }
        Ok(())
    }

    /// Bytes held by every session.
    pub fn used_bytes(&self) -> u64 {
        fn size(path: &Path) -> u64 {
            let Ok(entries) = fs::read_dir(path) else {
                return 0;
            };
            entries
                .filter_map(Result::ok)
                .map(|entry| match entry.metadata() {
                    Ok(meta) if meta.is_dir() => size(&entry.path()),
                    Ok(meta) => meta.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        size(self.root())
    }

    /// The sessions and their files, names in order.
    pub fn sessions(&self) -> Vec<(String, Vec<SessionFile>)> {
        let mut sessions: Vec<(String, Vec<SessionFile>)> = fs::read_dir(self.root())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let mut files: Vec<SessionFile> = fs::read_dir(entry.path())
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .map(|file| SessionFile {
                        name: file.file_name().to_string_lossy().into_owned(),
                        size: file.metadata().map_or(0, |m| m.len()),
                    })
                    .collect();
                files.sort_by(|a, b| a.name.cmp(&b.name));
                (name, files)
            })
            .collect();
        sessions.sort_by(|a, b| a.0.cmp(&b.0));
        sessions
    }

    /// Whether `path` (relative to the root) is in the running session.
    pub fn is_running(&self, path: &Path) -> bool {
        let Some(running) = &self.running else {
            return false;
        };
        let relative = path.strip_prefix("/").unwrap_or(path);
        relative
            .components()
            .next()
            .is_some_and(|first| first.as_os_str() == running.session.as_str())
    }

    /// Shortens the file size: test hook, next file split size.
    #[cfg(test)]
    pub fn set_split_bytes(&mut self, bytes: u64) {
        self.split_bytes = bytes;
    }
}

/// `<session>.NNN`.
pub fn file_name(session: &str, index: u32) -> String {
    format!("{session}.{index:03}")
}

/// Folder-safe session name: characters other than letters, digits, `-`, `_` and `.`
/// become `_`; a name of dots alone is refused (empty).
fn sanitize(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.chars().all(|c| c == '.') {
        String::new()
    } else {
        clean
    }
}

/// The period of a trigger in ms (`off`: none).
fn period_ms(trigger: &str) -> Option<u64> {
    match trigger {
        "onChange" => Some(ON_CHANGE_MS),
        "off" => None,
        other => {
            let ms: u64 = other.strip_suffix("ms")?.parse().ok()?;
            (ms > 0).then(|| ms.max(MIN_PERIOD_MS))
        }
    }
}

/// The step to the next due time.
fn next_gap(messages: &[(MessageKind, u64)], t: u64) -> u64 {
    messages
        .iter()
        .map(|(_, period)| period - t % period)
        .min()
        .unwrap_or(1000)
}

fn supported(kind: MessageKind) -> bool {
    matches!(
        kind.name(),
        "status"
            | "utcTime"
            | "imuData"
            | "imuShort"
            | "ekfEuler"
            | "ekfQuat"
            | "ekfNav"
            | "gps1Pos"
    )
}

fn record_at(kind: MessageKind, running: &Running, power_on: Instant, t_ms: u64) -> Option<Record> {
    let since_power_on =
        running.started.saturating_duration_since(power_on) + Duration::from_millis(t_ms);
    let timestamp = (since_power_on.as_micros() % (1u128 << 32)) as u32;
    let seconds = t_ms as f64 / 1000.0;
    let (position, velocity, heading) = trajectory_at(seconds);
    let omega = SPEED_M_S / RADIUS_M;
    // Turning right (clockwise seen from above) around the centre: yaw rate +omega,
    // centripetal acceleration toward the centre, to the right of the vehicle.
    let centripetal = (SPEED_M_S * omega) as f32;
    let yaw = heading.to_radians() as f32;
    Some(match kind.name() {
        "status" => Record::Status(Status {
            timestamp,
            general_status: 0x00ff,
            ..Status::default()
        }),
        "utcTime" => {
            let utc = running.started_utc
                + chrono::Duration::milliseconds(i64::try_from(t_ms).unwrap_or(i64::MAX));
            Record::UtcTime(UtcTime {
                timestamp,
                // A PPS input, the clock converged to it (state 3), UTC accurate and
                // initialized with the leap seconds (UTC status 2): as a unit with a
                // GNSS fix logs it.
                status: UtcTime::HAS_CLOCK_INPUT | (3 << 1) | UtcTime::UTC_IS_ACCURATE | (2 << 6),
                year: u16::try_from(utc.year()).unwrap_or(0),
                month: utc.month() as u8,
                day: utc.day() as u8,
                hour: utc.hour() as u8,
                minute: utc.minute() as u8,
                second: utc.second() as u8,
                nanosecond: utc.nanosecond(),
                gps_tow: 0,
                ..UtcTime::default()
            })
        }
        "imuData" => Record::ImuData(ImuData {
            timestamp,
            accelerometers: [0.0, centripetal, -9.81],
            gyroscopes: [0.0, 0.0, omega as f32],
            temperature: 25.0,
            ..ImuData::default()
        }),
        "imuShort" => Record::ImuShort(ImuShort {
            timestamp,
            // Deltas per sample scaled as the vendor documents (2^20 per m/s², 2^26 per rad/s).
            delta_velocity: [
                0,
                (centripetal as f64 * 1_048_576.0) as i32,
                (-9.81 * 1_048_576.0) as i32,
            ],
            delta_angle: [0, 0, (omega * 67_108_864.0) as i32],
            temperature: 25 * 256,
            ..ImuShort::default()
        }),
        "ekfEuler" => Record::EkfEuler(EkfEuler {
            timestamp,
            euler: [0.0, 0.0, wrap_pi(yaw)],
            euler_std: [0.01, 0.01, 0.05],
            status: NAV_POSITION,
            ..EkfEuler::default()
        }),
        "ekfQuat" => Record::EkfQuat(EkfQuat {
            timestamp,
            quaternion: [(yaw / 2.0).cos(), 0.0, 0.0, (yaw / 2.0).sin()],
            euler_std: [0.01, 0.01, 0.05],
            status: NAV_POSITION,
            ..EkfQuat::default()
        }),
        "ekfNav" => Record::EkfNav(EkfNav {
            timestamp,
            velocity: velocity.map(|v| v as f32),
            velocity_std: [0.02; 3],
            position,
            position_std: [0.05, 0.05, 0.1],
            // Solution mode NavPosition (4): attitude, velocity and position.
            status: NAV_POSITION,
            ..EkfNav::default()
        }),
        "gps1Pos" => Record::Gps1Pos(GnssPos {
            timestamp,
            latitude: position[0],
            longitude: position[1],
            altitude: position[2],
            latitude_acc: 0.02,
            longitude_acc: 0.02,
            altitude_acc: 0.04,
            // Solution computed (0), an RTK fixed position (type 7).
            status: 7 << 6,
            ..GnssPos::default()
        }),
        _ => return None,
    })
}

/// The solution status of a navigation solution in mode NavPosition (4).
const NAV_POSITION: u32 = 4;

fn wrap_pi(angle: f32) -> f32 {
    let pi = std::f32::consts::PI;
    if angle > pi { angle - 2.0 * pi } else { angle }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sessions_are_named_split_in_order_and_continued() {
        let start = Instant::now();
        let mut logger = Logger::new(start).expect("storage");
        logger.set_split_bytes(4096);
        let settings = json!({
            "dataLogger": {"sessionName": "../Demo run"},
            "output": {"dataLogger": {"messages": {"ekfNav": "10ms", "status": "off", "mag": "10ms"}}},
        });
        logger.start(&settings, start).expect("start");
        assert_eq!(logger.running_session(), Some(".._Demo_run"));
        logger
            .stop(start + Duration::from_millis(1000))
            .expect("stop");
        let sessions = logger.sessions();
        assert_eq!(sessions.len(), 1);
        let (name, files) = &sessions[0];
        assert_eq!(name, ".._Demo_run");
        assert!(files.len() >= 2, "{files:?}");
        for (i, file) in files.iter().enumerate() {
            assert_eq!(file.name, file_name(name, i as u32 + 1));
            assert!(file.size <= 4096);
        }
        // 101 ekfNav frames (0 to 1000 ms), nothing for `mag` or `off`.
        let mut bytes = Vec::new();
        for file in files {
            bytes.extend(fs::read(logger.root().join(name).join(&file.name)).expect("file"));
        }
        let mut reader = svc_logs::LogReader::new(bytes.as_slice());
        let mut count = 0;
        while let Some(record) = reader.next_record().expect("decodes") {
            assert_eq!(record.kind().name(), "ekfNav");
            count += 1;
        }
        assert_eq!(count, 101);
        assert_eq!(logger.used_bytes(), bytes.len() as u64);

        // Started again under the same name: the numbering goes on.
        let again = start + Duration::from_secs(2);
        logger.start(&settings, again).expect("start");
        logger.stop(again).expect("stop");
        let files = &logger.sessions()[0].1;
        assert_eq!(
            files.last().map(|f| f.name.clone()),
            Some(file_name(".._Demo_run", files.len() as u32))
        );

        // An empty name: the start time.
        let unnamed = json!({"dataLogger": {"sessionName": ""}});
        logger.start(&unnamed, again).expect("start");
        let name = logger.running_session().expect("running").to_owned();
        assert_eq!(name.len(), 15, "{name}");
        assert_eq!(name.as_bytes()[8], b'_');
    }
}
