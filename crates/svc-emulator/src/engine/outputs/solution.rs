//! The navigation solution the outputs write: at each epoch, time, position, velocity,
//! attitude, their standard deviations and a solution quality, computed from the
//! trajectory's fixes and the processing configuration ([`Settings`]).
//!
//! Nothing more than the fixes is kept: a [`State`] is computed when it is written,
//! from the fixes around it (the smoothing window of the motion profile), and the
//! exports at a rate of their own interpolate between the states of two fixes.
//!
//! - **Attitude**: an inertial solution's own (a unit's `ekfEuler`); otherwise derived
//!   from the motion, over the motion profile's smoothing window: heading from the
//!   horizontal velocity (held while the speed is under 0.5 m/s), pitch from the climb
//!   (automotive, railway, airborne, UAV; 0 for marine and pedestrian), roll of a
//!   coordinated turn (speed × turn rate / g), bounded by the profile.
//! - **Lever arm**: the reported point is the IMU's: the antenna's position minus the
//!   lever arm (from the IMU to the GNSS antenna, body frame: x forward, y right,
//!   z down, metres) turned by the attitude.
//! - **Standard deviations** (1σ): position and velocity from the fix quality (or an
//!   inertial solution's own position σ), scaled by the elevation mask (a mask above 10°
//!   leaves fewer satellites: × (1 + (mask − 10°)/30°)); heading from the velocity σ
//!   over the speed (an inertial solution's own), roll and pitch 0.5° when derived.
//! - **Quality** (per epoch, 1 best to 6): 1 RTK fixed, 2 RTK float, 3 differential,
//!   4 single point, 5 dead reckoning or unknown, 6 an epoch more than 2 s from any fix
//!   (interpolated across an outage).
//! - **Mode**: `kinematic` (default); `static`: every epoch at the mean position of the
//!   fixes, velocity 0; `auto`: static when every fix lies within [`AUTO_STATIC_M`] of
//!   their mean position, kinematic otherwise.

use svc_protocol::processing_config::ProcessingConfig;

use super::trajectory::{Fix, velocity};

const WGS84_A: f64 = 6_378_137.0;
const WGS84_E2: f64 = 6.694_379_990_14e-3;
const GRAVITY: f64 = 9.806_65;
/// Under this horizontal speed (m/s) the heading of the motion is not trusted.
const MIN_HEADING_SPEED: f64 = 0.5;
/// An output epoch further than this from any fix is quality 6.
const OUTAGE_MS: f64 = 2000.0;
/// `mode: auto` is static when no fix is further than this (m, horizontally) from the
/// mean position.
pub(crate) const AUTO_STATIC_M: f64 = 1.0;

/// How the rover moved, as `mode` says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Kinematic,
    Static,
    Auto,
}

/// The vehicle's motion, as `processing.motionProfile` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Profile {
    Automotive,
    Railway,
    Airborne,
    Uav,
    Marine,
    Pedestrian,
}

impl Profile {
    /// Every profile, by the name the configuration gives.
    pub(crate) const NAMES: [(&'static str, Profile); 6] = [
        ("automotive", Profile::Automotive),
        ("railway", Profile::Railway),
        ("airborne", Profile::Airborne),
        ("uav", Profile::Uav),
        ("marine", Profile::Marine),
        ("pedestrian", Profile::Pedestrian),
    ];

    /// The profile named `name` (case does not matter).
    pub(crate) fn parse(name: &str) -> Option<Profile> {
        Self::NAMES
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name.trim()))
            .map(|(_, profile)| *profile)
    }

    /// The fixes on each side averaged to derive the attitude.
    fn half_window(self) -> usize {
        match self {
            Profile::Airborne | Profile::Uav => 1,
            Profile::Automotive | Profile::Railway => 2,
            Profile::Pedestrian => 3,
            Profile::Marine => 5,
        }
    }

    /// The largest roll a turn gives, degrees.
    fn max_roll(self) -> f64 {
        match self {
            Profile::Airborne => 60.0,
            Profile::Uav => 45.0,
            Profile::Automotive => 30.0,
            Profile::Railway => 10.0,
            Profile::Marine | Profile::Pedestrian => 0.0,
        }
    }

    /// Whether the vehicle pitches with its climb.
    fn pitches_with_climb(self) -> bool {
        !matches!(self, Profile::Marine | Profile::Pedestrian)
    }
}

/// What of the configuration changes the solution.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settings {
    pub(crate) profile: Profile,
    /// From the IMU to the GNSS antenna, body frame (x forward, y right, z down), m.
    pub(crate) lever_arm: [f64; 3],
    /// Elevation mask, degrees.
    pub(crate) elevation_mask: f64,
    pub(crate) mode: Mode,
    /// Whether the configuration asks for the lever arm to be estimated
    /// (`processing.estimateLeverArm` of the vendor's form): see [`LeverArmEstimate`].
    pub(crate) estimate_lever_arm: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            profile: Profile::Automotive,
            lever_arm: [0.0; 3],
            elevation_mask: 10.0,
            mode: Mode::Kinematic,
            estimate_lever_arm: false,
        }
    }
}

impl Settings {
    /// The settings of a configuration: the motion profile (`processing.motionProfile`;
    /// the shorthand has none: automotive), the lever arm (`imu.leverArm`, or
    /// `sidecar`: the vendor's rover settings), the elevation mask
    /// (`gnss.elevationMaskDegrees`) and the mode (`mode: static`).
    ///
    /// # Errors
    /// A motion profile this engine does not know, as the service records it.
    pub(crate) fn of(
        config: &ProcessingConfig,
        sidecar: Option<[f64; 3]>,
    ) -> Result<Settings, String> {
        let mut settings = Settings::default();
        match config {
            ProcessingConfig::Project(project) => {
                if let Some(name) = &project.processing.motion_profile {
                    settings.profile = Profile::parse(name).ok_or_else(|| {
                        let known: Vec<&str> = Profile::NAMES.iter().map(|(n, _)| *n).collect();
                        format!(
                            "processing.motionProfile: unknown motion profile `{name}` (known: {})",
                            known.join(", ")
                        )
                    })?;
                }
                if let Some(arm) = sidecar {
                    settings.lever_arm = arm;
                }
                settings.estimate_lever_arm = project.processing.estimate_lever_arm == Some(true);
            }
            ProcessingConfig::Shorthand(short) => {
                if let Some(arm) = short.imu.as_ref().and_then(|imu| imu.lever_arm) {
                    settings.lever_arm = arm;
                }
                if let Some(mask) = short.gnss.as_ref().and_then(|g| g.elevation_mask_degrees) {
                    if !(0.0..=90.0).contains(&mask) {
                        return Err(format!(
                            "gnss.elevationMaskDegrees: {mask} is not an elevation (0 to 90)"
                        ));
                    }
                    settings.elevation_mask = mask;
                }
                settings.mode = match short.mode.as_deref().map(str::trim) {
                    None => Mode::Kinematic,
                    Some(mode) if mode.eq_ignore_ascii_case("kinematic") => Mode::Kinematic,
                    Some(mode) if mode.eq_ignore_ascii_case("static") => Mode::Static,
                    Some(mode) if mode.eq_ignore_ascii_case("auto") => Mode::Auto,
                    Some(mode) => {
                        return Err(format!(
                            "mode: unknown mode `{mode}` (known: kinematic, static, auto)"
                        ));
                    }
                };
            }
        }
        if settings
            .lever_arm
            .iter()
            .any(|v| !v.is_finite() || v.abs() > 100.0)
        {
            return Err(format!(
                "lever arm {:?}: each component must be a distance within 100 m",
                settings.lever_arm
            ));
        }
        Ok(settings)
    }

    fn sigma_scale(&self) -> f64 {
        1.0 + (self.elevation_mask - 10.0).max(0.0) / 30.0
    }
}

/// The solution at one epoch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct State {
    /// UTC, milliseconds since 1970-01-01 (fractional between fixes).
    pub(crate) time_ms: f64,
    /// Degrees.
    pub(crate) lat: f64,
    pub(crate) lon: f64,
    /// Ellipsoidal, m.
    pub(crate) height: f64,
    /// North, east, up, m/s.
    pub(crate) velocity: [f64; 3],
    /// Roll, pitch, heading (0 to 360), degrees.
    pub(crate) attitude: [f64; 3],
    /// North, east, up, m.
    pub(crate) position_std: [f64; 3],
    /// North, east, up, m/s.
    pub(crate) velocity_std: [f64; 3],
    /// Roll, pitch, heading, degrees.
    pub(crate) attitude_std: [f64; 3],
    /// 1 (best) to 6.
    pub(crate) quality: u8,
}

/// The solution over a trajectory's fixes.
pub(crate) struct Solution<'a> {
    fixes: &'a [Fix],
    settings: &'a Settings,
    /// The mean position, in static mode.
    mean: Option<(f64, f64, f64)>,
}

impl<'a> Solution<'a> {
    pub(crate) fn new(fixes: &'a [Fix], settings: &'a Settings) -> Self {
        let mean = (settings.mode != Mode::Kinematic && !fixes.is_empty())
            .then(|| {
                let n = fixes.len() as f64;
                let sum = fixes.iter().fold((0.0, 0.0, 0.0), |(a, b, c), f| {
                    (a + f.lat, b + f.lon, c + f.height)
                });
                (sum.0 / n, sum.1 / n, sum.2 / n)
            })
            .filter(|&(lat, lon, _)| {
                settings.mode == Mode::Static
                    || fixes.iter().all(|f| {
                        super::trajectory::distance_m((lat, lon), (f.lat, f.lon)) <= AUTO_STATIC_M
                    })
            });
        Self {
            fixes,
            settings,
            mean,
        }
    }

    /// How many fixes (and so states at them) there are.
    pub(crate) fn len(&self) -> usize {
        self.fixes.len()
    }

    /// The state at fix `i`.
    pub(crate) fn at(&self, i: usize) -> State {
        let fix = &self.fixes[i];
        let settings = self.settings;
        let scale = settings.sigma_scale();
        let (quality, horizontal, vertical, speed_sigma) = accuracy(fix);
        let mut velocity = velocity(self.fixes, i);
        let (mut attitude, mut attitude_std) = match fix.inertial() {
            Some((attitude, sigma)) => (
                [attitude[0], attitude[1], attitude[2].rem_euclid(360.0)],
                [0.05, 0.05, sigma[1].max(0.01)],
            ),
            None => {
                let attitude = self.derived_attitude(i);
                let speed = self.smoothed_velocity(i);
                let speed = speed[0].hypot(speed[1]);
                let heading_std = (speed_sigma * scale)
                    .atan2(speed.max(1e-3))
                    .to_degrees()
                    .min(180.0);
                (attitude, [0.5, 0.5, heading_std])
            }
        };
        let (mut lat, mut lon, mut height) = (fix.lat, fix.lon, fix.height);
        if let Some((mean_lat, mean_lon, mean_height)) = self.mean {
            (lat, lon, height) = (mean_lat, mean_lon, mean_height);
            velocity = [0.0; 3];
            attitude = [0.0, 0.0, 0.0];
            attitude_std = [180.0; 3];
        }
        if attitude.iter().any(|a| !a.is_finite()) {
            // Never written: an attitude that cannot be derived is unknown.
            attitude = [0.0; 3];
            attitude_std = [180.0; 3];
        }
        let offset = body_to_ned(attitude, settings.lever_arm);
        let (lat, lon, height) = moved(lat, lon, height, offset.map(|v| -v));
        State {
            time_ms: fix.time_ms as f64,
            lat,
            lon,
            height,
            velocity,
            attitude,
            position_std: [horizontal * scale, horizontal * scale, vertical * scale],
            velocity_std: [
                speed_sigma * scale,
                speed_sigma * scale,
                1.5 * speed_sigma * scale,
            ],
            attitude_std,
            quality,
        }
    }

    /// The states at `rate_hz` from the first fix to the last, each interpolated
    /// between the states of the fixes around it, handed to `each` in time order.
    ///
    /// # Errors
    /// The first error of `each`.
    pub(crate) fn at_rate<E>(
        &self,
        rate_hz: f64,
        mut each: impl FnMut(&State) -> Result<(), E>,
    ) -> Result<(), E> {
        let (Some(first), Some(last)) = (self.fixes.first(), self.fixes.last()) else {
            return Ok(());
        };
        let step_ms = 1000.0 / rate_hz;
        let (start, end) = (first.time_ms as f64, last.time_ms as f64);
        let count = ((end - start) / step_ms).floor() as u64 + 1;
        let mut i = 0;
        let mut pair = (self.at(0), self.at(0));
        let mut pair_of = usize::MAX;
        for n in 0..count {
            let t = start + n as f64 * step_ms;
            while i + 1 < self.fixes.len() && (self.fixes[i + 1].time_ms as f64) <= t {
                i += 1;
            }
            if pair_of != i {
                let next = (i + 1).min(self.fixes.len() - 1);
                pair = (self.at(i), self.at(next));
                pair_of = i;
            }
            let state = interpolate(&pair.0, &pair.1, t);
            each(&state)?;
        }
        Ok(())
    }

    /// The mean north, east and up velocity over the profile's window around fix `i`.
    fn smoothed_velocity(&self, i: usize) -> [f64; 3] {
        let w = self.settings.profile.half_window();
        let (from, to) = (i.saturating_sub(w), (i + w).min(self.fixes.len() - 1));
        let mut sum = [0.0; 3];
        for j in from..=to {
            let v = velocity(self.fixes, j);
            for k in 0..3 {
                sum[k] += v[k];
            }
        }
        let n = (to - from + 1) as f64;
        sum.map(|s| s / n)
    }

    /// The heading of the motion at fix `i` (degrees), held from the fixes before while
    /// slower than [`MIN_HEADING_SPEED`]; 0 when never moving.
    fn heading(&self, i: usize) -> f64 {
        for j in (i.saturating_sub(10)..=i).rev() {
            let v = self.smoothed_velocity(j);
            if v[0].hypot(v[1]) >= MIN_HEADING_SPEED {
                return v[1].atan2(v[0]).to_degrees().rem_euclid(360.0);
            }
        }
        0.0
    }

    /// Roll, pitch, heading derived from the motion (see the module documentation).
    fn derived_attitude(&self, i: usize) -> [f64; 3] {
        let profile = self.settings.profile;
        let v = self.smoothed_velocity(i);
        let speed = v[0].hypot(v[1]);
        let heading = self.heading(i);
        let pitch = if profile.pitches_with_climb() && speed >= MIN_HEADING_SPEED {
            v[2].atan2(speed).to_degrees()
        } else {
            0.0
        };
        let (before, after) = (i.saturating_sub(1), (i + 1).min(self.fixes.len() - 1));
        let dt = (self.fixes[after].time_ms - self.fixes[before].time_ms) as f64 / 1000.0;
        let roll = if dt > 0.0 && speed >= MIN_HEADING_SPEED {
            let turn = wrap180(self.heading(after) - self.heading(before)).to_radians() / dt;
            let max = profile.max_roll();
            (speed * turn / GRAVITY)
                .atan()
                .to_degrees()
                .clamp(-max, max)
        } else {
            0.0
        };
        [roll, pitch, heading]
    }
}

/// Quality (1 to 6), horizontal and vertical position σ (m) and velocity σ (m/s) of a
/// fix, from its inertial σ or its GGA fix quality.
fn accuracy(fix: &Fix) -> (u8, f64, f64, f64) {
    if let Some((_, sigma)) = fix.inertial() {
        let horizontal = sigma[0].max(0.005);
        let quality = match horizontal {
            s if s <= 0.05 => 1,
            s if s <= 0.5 => 2,
            s if s <= 1.0 => 3,
            s if s <= 5.0 => 4,
            _ => 5,
        };
        return (
            quality,
            horizontal,
            1.5 * horizontal,
            0.02 + horizontal / 10.0,
        );
    }
    match fix.quality() {
        Some(4) => (1, 0.02, 0.03, 0.02),
        Some(5) => (2, 0.3, 0.5, 0.05),
        Some(2 | 3 | 9) => (3, 0.7, 1.2, 0.1),
        Some(1) => (4, 2.0, 3.5, 0.3),
        _ => (5, 5.0, 8.0, 1.0),
    }
}

/// The state at `t` between `a` and `b` (linear; the heading along the shorter way).
fn interpolate(a: &State, b: &State, t: f64) -> State {
    let span = b.time_ms - a.time_ms;
    let f = if span > 0.0 {
        ((t - a.time_ms) / span).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let mix = |x: f64, y: f64| x + (y - x) * f;
    let mix3 = |x: [f64; 3], y: [f64; 3]| [mix(x[0], y[0]), mix(x[1], y[1]), mix(x[2], y[2])];
    let mut attitude = mix3(a.attitude, b.attitude);
    attitude[2] = (a.attitude[2] + wrap180(b.attitude[2] - a.attitude[2]) * f).rem_euclid(360.0);
    let gap = (t - a.time_ms).min(b.time_ms - t).max(0.0);
    let quality = if span > 2.0 * OUTAGE_MS && gap > OUTAGE_MS {
        6
    } else {
        a.quality.max(b.quality)
    };
    State {
        time_ms: t,
        lat: mix(a.lat, b.lat),
        lon: mix(a.lon, b.lon),
        height: mix(a.height, b.height),
        velocity: mix3(a.velocity, b.velocity),
        attitude,
        position_std: mix3(a.position_std, b.position_std),
        velocity_std: mix3(a.velocity_std, b.velocity_std),
        attitude_std: mix3(a.attitude_std, b.attitude_std),
        quality,
    }
}

/// An angle difference brought within (−180°, 180°].
fn wrap180(degrees: f64) -> f64 {
    let d = degrees.rem_euclid(360.0);
    if d > 180.0 { d - 360.0 } else { d }
}

/// A body-frame vector (x forward, y right, z down) in north, east, down, for the
/// attitude (roll, pitch, heading in degrees).
pub(crate) fn body_to_ned(attitude: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    let [roll, pitch, heading] = attitude.map(f64::to_radians);
    let (sr, cr) = roll.sin_cos();
    let (sp, cp) = pitch.sin_cos();
    let (sy, cy) = heading.sin_cos();
    [
        cp * cy * v[0] + (sr * sp * cy - cr * sy) * v[1] + (cr * sp * cy + sr * sy) * v[2],
        cp * sy * v[0] + (sr * sp * sy + cr * cy) * v[1] + (cr * sp * sy - sr * cy) * v[2],
        -sp * v[0] + sr * cp * v[1] + cr * cp * v[2],
    ]
}

/// A north, east, down vector in the body frame (the transpose of [`body_to_ned`]).
pub(crate) fn ned_to_body(attitude: [f64; 3], v: [f64; 3]) -> [f64; 3] {
    let columns = [
        body_to_ned(attitude, [1.0, 0.0, 0.0]),
        body_to_ned(attitude, [0.0, 1.0, 0.0]),
        body_to_ned(attitude, [0.0, 0.0, 1.0]),
    ];
    columns.map(|c| c[0] * v[0] + c[1] * v[1] + c[2] * v[2])
}

/// A lever-arm estimate: over the instants where a unit's session gives both its GNSS
/// antenna's position (`gps1Pos`) and its navigation position and attitude (`ekfNav`,
/// `ekfEuler`), the antenna's offset from the navigation point turned into the body
/// frame (x forward, y right, z down, m). Its mean is the lever arm from the IMU to the
/// antenna; its spread, how well the data determine it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct LeverArmEstimate {
    /// How many instants.
    pub(crate) epochs: u64,
    sum: [f64; 3],
    sum_sq: [f64; 3],
}

impl LeverArmEstimate {
    /// Adds the instant where the antenna is at `antenna` and the navigation point at
    /// `nav` (latitude, longitude in degrees, ellipsoidal height in m) with `attitude`
    /// (roll, pitch, heading, degrees). Offsets of more than 100 m (a GNSS outlier, or
    /// positions of different instants) are left out.
    pub(crate) fn add(&mut self, attitude: [f64; 3], antenna: [f64; 3], nav: [f64; 3]) {
        let phi = nav[0].to_radians();
        let w = (1.0 - WGS84_E2 * phi.sin().powi(2)).sqrt();
        let meridian = WGS84_A * (1.0 - WGS84_E2) / (w * w * w);
        let prime_vertical = WGS84_A / w;
        let ned = [
            (antenna[0] - nav[0]).to_radians() * (meridian + nav[2]),
            (antenna[1] - nav[1]).to_radians() * (prime_vertical + nav[2]) * phi.cos(),
            nav[2] - antenna[2],
        ];
        let body = ned_to_body(attitude, ned);
        if body.iter().any(|v| !v.is_finite() || v.abs() > 100.0) {
            return;
        }
        self.epochs += 1;
        for ((sum, sum_sq), v) in self.sum.iter_mut().zip(&mut self.sum_sq).zip(body) {
            *sum += v;
            *sum_sq += v * v;
        }
    }

    /// Both estimates' instants together.
    pub(crate) fn merge(&mut self, other: &LeverArmEstimate) {
        self.epochs += other.epochs;
        for k in 0..3 {
            self.sum[k] += other.sum[k];
            self.sum_sq[k] += other.sum_sq[k];
        }
    }

    /// The lever arm (x, y, z, m) and its per-axis standard deviation over the
    /// instants; `None` without any.
    pub(crate) fn result(&self) -> Option<([f64; 3], [f64; 3])> {
        if self.epochs == 0 {
            return None;
        }
        let n = self.epochs as f64;
        let mean = self.sum.map(|s| s / n);
        let std = [0, 1, 2].map(|k| (self.sum_sq[k] / n - mean[k] * mean[k]).max(0.0).sqrt());
        Some((mean, std))
    }
}

/// The position moved by `ned` metres (north, east, down).
pub(crate) fn moved(lat: f64, lon: f64, height: f64, ned: [f64; 3]) -> (f64, f64, f64) {
    if ned == [0.0; 3] {
        return (lat, lon, height);
    }
    let phi = lat.to_radians();
    let w = (1.0 - WGS84_E2 * phi.sin().powi(2)).sqrt();
    let meridian = WGS84_A * (1.0 - WGS84_E2) / (w * w * w);
    let prime_vertical = WGS84_A / w;
    (
        lat + (ned[0] / (meridian + height)).to_degrees(),
        lon + (ned[1] / ((prime_vertical + height) * phi.cos().max(1e-9))).to_degrees(),
        height - ned[2],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_and_ned_turn_into_each_other() {
        let attitude = [10.0, -5.0, 123.0];
        let v = [1.0, 2.0, -0.5];
        let back = ned_to_body(attitude, body_to_ned(attitude, v));
        for k in 0..3 {
            assert!((back[k] - v[k]).abs() < 1e-12, "{back:?}");
        }
        // Heading east, level: forward is east, right is south.
        let east = body_to_ned([0.0, 0.0, 90.0], [1.0, 0.0, 0.0]);
        assert!((east[1] - 1.0).abs() < 1e-12 && east[0].abs() < 1e-12);
        let right = body_to_ned([0.0, 0.0, 90.0], [0.0, 1.0, 0.0]);
        assert!((right[0] + 1.0).abs() < 1e-12);
    }

    #[test]
    fn a_metre_north_moves_the_latitude_by_about_nine_micro_degrees() {
        let (lat, lon, h) = moved(45.0, 5.0, 100.0, [1.0, 0.0, -2.0]);
        assert!((lat - 45.0 - 9.0e-6).abs() < 0.1e-6, "{lat}");
        assert_eq!(lon, 5.0);
        assert_eq!(h, 102.0);
    }

    #[test]
    fn profiles_are_named_as_the_configuration_names_them() {
        assert_eq!(Profile::parse("Automotive"), Some(Profile::Automotive));
        assert_eq!(Profile::parse("marine"), Some(Profile::Marine));
        assert_eq!(Profile::parse("spaceship"), None);
        assert_eq!(wrap180(350.0 - 10.0), -20.0);
        assert_eq!(wrap180(10.0 - 350.0), 20.0);
    }
}
