//! What the emulated unit outputs, on its ports and into its data logger: the messages
//! an output enables (`output.<port>.messages`, `output.dataLogger.messages`: message
//! name → trigger) at their triggers ([`Schedule`]), with values from one trajectory
//! ([`record_at`], [`trajectory_at`]): a circle of [`RADIUS_M`] around [`ORIGIN`]
//! driven at [`SPEED_M_S`] from power-on, so that `ekfNav`, `gps1Pos`, `ekfEuler`,
//! `ekfQuat`, `utcTime`, `imuData` and `imuShort` agree with each other, and a port's
//! stream with a session recorded at the same time.
//!
//! Triggers: `Nms` every N ms (at least the output's shortest period), `onChange` every
//! [`ON_CHANGE_MS`] (the emulated values change constantly), `off` never. Messages the
//! emulator has no values for (e.g. `diag`, `sessionInfo`, `mag`) are not output.

use std::time::Duration;

use chrono::{DateTime, Datelike, Timelike, Utc};
use serde_json::Value;
use svc_logs::records::{EkfEuler, EkfNav, EkfQuat, GnssPos, ImuData, ImuShort, Status, UtcTime};
use svc_logs::{MessageKind, Record};

/// How often an `onChange` message is output.
pub const ON_CHANGE_MS: u64 = 200;
/// The centre of the emulated trajectory: latitude, longitude (degrees), ellipsoidal
/// height (m) — the sample survey's area.
pub const ORIGIN: (f64, f64, f64) = (48.8566, 2.3522, 35.0);
/// Radius of the emulated circle, in metres.
pub const RADIUS_M: f64 = 50.0;
/// Speed along it, in m/s.
pub const SPEED_M_S: f64 = 5.0;

const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;

/// The messages of one output and when each is next due, in ms from a start.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule {
    /// Message and period in ms.
    messages: Vec<(MessageKind, u64)>,
    /// The next time to look at (ms from the start).
    next_ms: u64,
}

impl Schedule {
    /// The messages `messages` (an output's `messages` object) enables that the
    /// emulator has values for, with periods of at least `min_period_ms`, due from 0.
    pub fn from_messages(messages: Option<&Value>, min_period_ms: u64) -> Self {
        let messages = messages
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(name, trigger)| {
                        let kind = MessageKind::from_name(name)?;
                        let period = period_ms(trigger.as_str()?, min_period_ms.max(1))?;
                        supported(kind).then_some((kind, period))
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            messages,
            next_ms: 0,
        }
    }

    /// Whether no message is output.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    /// The messages and their periods (ms).
    pub fn messages(&self) -> &[(MessageKind, u64)] {
        &self.messages
    }

    /// The time up to which every due message was given (exclusive), in ms.
    pub fn next_ms(&self) -> u64 {
        self.next_ms
    }

    /// The first time (ms) at or after [`next_ms`](Self::next_ms) when a message is
    /// due; `None` without messages.
    pub fn next_due_ms(&self) -> Option<u64> {
        self.messages
            .iter()
            .map(|(_, period)| self.next_ms.div_ceil(*period) * period)
            .min()
    }

    /// Goes on from `ms` exactly (the first messages due are those at `ms` or after).
    pub fn start_at(&mut self, ms: u64) {
        self.next_ms = ms;
    }

    /// Goes on from `ms` (older times are skipped), rounded down to a whole second so
    /// that every period stays on its multiples.
    pub fn skip_to(&mut self, ms: u64) {
        if ms > self.next_ms {
            self.next_ms = ms / 1000 * 1000;
        }
    }

    /// Calls `due(kind, t)` for every message due at a time `t` (ms) up to `until_ms`
    /// included, in time order (messages due together in the order of the settings).
    pub fn run_until(&mut self, until_ms: u64, mut due: impl FnMut(MessageKind, u64)) {
        if self.messages.is_empty() {
            self.next_ms = self.next_ms.max(until_ms.saturating_add(1));
            return;
        }
        let mut t = self.next_ms;
        while t <= until_ms {
            for (kind, period) in &self.messages {
                if t.is_multiple_of(*period) {
                    due(*kind, t);
                }
            }
            t += self
                .messages
                .iter()
                .map(|(_, period)| period - t % period)
                .min()
                .unwrap_or(1000);
        }
        self.next_ms = t;
    }
}

/// Where the emulated unit is `seconds` after it powered on: latitude, longitude
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

/// The period of a trigger in ms (`off`: none), at least `min_period_ms`.
fn period_ms(trigger: &str, min_period_ms: u64) -> Option<u64> {
    match trigger {
        "onChange" => Some(ON_CHANGE_MS),
        "off" => None,
        other => {
            let ms: u64 = other.strip_suffix("ms")?.parse().ok()?;
            (ms > 0).then(|| ms.max(min_period_ms))
        }
    }
}

/// Whether the emulator has values for message `kind` ([`record_at`] gives a record).
pub fn supported(kind: MessageKind) -> bool {
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

/// How far a unit is from ready to log, `since_power_on`, for a unit that needs
/// `startup` to be ready.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// The first half: no GNSS solution (not enough observations), UTC unknown on a
    /// free-running clock, the filter giving roll and pitch only (vertical gyro).
    Acquiring,
    /// The second half: a single point GNSS fix, UTC known with the leap seconds on a
    /// clock steering to the PPS, a full attitude (AHRS).
    Coarse,
    /// From `startup` on: an RTK fixed position, the clock valid, UTC accurate, the
    /// filter giving attitude, velocity and position.
    Ready,
}

impl Phase {
    /// The phase `since_power_on`.
    #[must_use]
    pub fn at(since_power_on: Duration, startup: Duration) -> Phase {
        if since_power_on >= startup {
            Phase::Ready
        } else if since_power_on >= startup / 2 {
            Phase::Coarse
        } else {
            Phase::Acquiring
        }
    }

    /// The filter's solution status (mode in bits 0-3).
    fn solution_status(self) -> u32 {
        match self {
            Phase::Acquiring => 1,
            Phase::Coarse => 2,
            Phase::Ready => NAV_POSITION,
        }
    }
}

/// The record of message `kind` the unit outputs `since_power_on` (its timestamp, in µs,
/// wraps as the unit's 32-bit clock does) at `utc`, on the trajectory, for a unit that
/// needs `startup` to be ready ([`Phase`]); `None` for a message the emulator has no
/// values for.
pub fn record_at(
    kind: MessageKind,
    since_power_on: Duration,
    utc: DateTime<Utc>,
    startup: Duration,
) -> Option<Record> {
    let phase = Phase::at(since_power_on, startup);
    let timestamp = (since_power_on.as_micros() % (1u128 << 32)) as u32;
    let seconds = since_power_on.as_secs_f64();
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
            Record::UtcTime(UtcTime {
                timestamp,
                // Ready: a PPS input, the clock converged to it (state 3), UTC accurate
                // and initialized with the leap seconds (UTC status 2), as a unit with
                // a GNSS fix logs it. Before: free running with UTC unknown (state 1,
                // status 0), then steering to the PPS with UTC known (2, 2).
                status: match phase {
                    Phase::Acquiring => 1 << 1,
                    Phase::Coarse => UtcTime::HAS_CLOCK_INPUT | (2 << 1) | (2 << 6),
                    Phase::Ready => {
                        UtcTime::HAS_CLOCK_INPUT | (3 << 1) | UtcTime::UTC_IS_ACCURATE | (2 << 6)
                    }
                },
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
            status: phase.solution_status(),
            ..EkfEuler::default()
        }),
        "ekfQuat" => Record::EkfQuat(EkfQuat {
            timestamp,
            quaternion: [(yaw / 2.0).cos(), 0.0, 0.0, (yaw / 2.0).sin()],
            euler_std: [0.01, 0.01, 0.05],
            status: phase.solution_status(),
            ..EkfQuat::default()
        }),
        "ekfNav" => Record::EkfNav(EkfNav {
            timestamp,
            velocity: velocity.map(|v| v as f32),
            velocity_std: [0.02; 3],
            position,
            position_std: [0.05, 0.05, 0.1],
            // Solution mode NavPosition (4) once ready: attitude, velocity and position.
            status: phase.solution_status(),
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
            // Ready: solution computed (0), an RTK fixed position (type 7). Before: not
            // enough observations (1) and no solution (0), then a single point (2).
            status: match phase {
                Phase::Acquiring => 1,
                Phase::Coarse => 2 << 6,
                Phase::Ready => 7 << 6,
            },
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
