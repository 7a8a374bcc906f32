//! The payload of each message, as the vendor documents it (`doc/binaryMessages.md`
//! and `src/logs/*.c` of SBG-Systems/sbgECom, release 5.2): field order, types and
//! the optional trailing fields of newer protocol versions.
//!
//! Every multi-byte field is little endian. A payload shorter than the fields every
//! version has is refused ([`DecodeError::TooShort`](crate::DecodeError::TooShort));
//! an optional trailing field is read when the payload holds it whole (else `None`),
//! and bytes after the last known field (fields of a newer version) are ignored.
//! Encoding writes the optional fields up to the last one present; one absent before
//! it is written as the vendor's "not available" value.

use crate::wire::{Cursor, Short, put};

/// Why a payload could not be read (the kind is added by [`crate::decode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PayloadError {
    /// Fewer bytes than the layout needs.
    Short,
    /// A length or count field inconsistent with the payload.
    Invalid(&'static str),
}

impl From<Short> for PayloadError {
    fn from(_: Short) -> Self {
        PayloadError::Short
    }
}

/// A message payload: read from and written to its bytes.
pub(crate) trait Payload: Sized {
    /// Length of the shortest payload accepted (every field of the oldest version).
    const MIN_LEN: usize;
    /// Reads the payload.
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError>;
    /// Appends the payload.
    fn write(&self, out: &mut Vec<u8>);
}

/// Implements [`Payload`] for a struct whose fields are all mandatory, in wire order.
macro_rules! fixed_payload {
    ($t:ident, $min:expr, [$($f:ident),* $(,)?]) => {
        impl Payload for $t {
            const MIN_LEN: usize = $min;
            #[inline(always)]
            fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
                Ok($t { $($f: c.get()?,)* })
            }
            fn write(&self, out: &mut Vec<u8>) {
                $(put(out, &self.$f);)*
            }
        }
    };
}

/// Defines a fieldless enum of documented values, with `from_raw`.
macro_rules! raw_enum {
    ($(#[$m:meta])* $name:ident : $raw:ty { $($(#[$vm:meta])* $v:ident = $n:expr),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $($(#[$vm])* $v = $n,)*
        }

        impl $name {
            /// The value of this raw number, `None` if the vendor documents none.
            #[must_use]
            pub fn from_raw(raw: $raw) -> Option<$name> {
                match raw {
                    $($n => Some($name::$v),)*
                    _ => None,
                }
            }
        }
    };
}

/// `(raw >> shift) & mask` as a u8.
fn bits(raw: u32, shift: u32, mask: u32) -> u8 {
    // The masks used are at most 6 bits wide.
    ((raw >> shift) & mask) as u8
}

// ---------------------------------------------------------------------------------
// Status and time
// ---------------------------------------------------------------------------------

/// `SBG_ECOM_LOG_STATUS` (id 1): device, communication and aiding status.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// General status (power supplies, settings, temperature, data logger, CPU): see
    /// the `GENERAL_*` constants.
    pub general_status: u16,
    /// Additional communication status (Ethernet), since sbgECom 4.0: `COM2_*`.
    pub com_status2: u16,
    /// Communication status (ports, CAN): `COM_*` and [`Status::can_bus_status`].
    pub com_status: u32,
    /// Aiding data received: `AIDING_*`.
    pub aiding_status: u32,
    /// Reserved.
    pub reserved2: u32,
    /// Reserved.
    pub reserved3: u16,
    /// Time since power on, s (since sbgECom 1.7; the vendor writes 0 when absent).
    pub uptime: Option<u32>,
    /// Main CPU usage, % (since sbgECom 5.0; 0xFF: not available).
    pub cpu_usage: Option<u8>,
}

impl Status {
    /// `general_status`: the main power supply is OK.
    pub const GENERAL_MAIN_POWER_OK: u16 = 1 << 0;
    /// `general_status`: the IMU power supply is OK.
    pub const GENERAL_IMU_POWER_OK: u16 = 1 << 1;
    /// `general_status`: the GNSS power supply is OK.
    pub const GENERAL_GPS_POWER_OK: u16 = 1 << 2;
    /// `general_status`: the settings were loaded.
    pub const GENERAL_SETTINGS_OK: u16 = 1 << 3;
    /// `general_status`: the temperature is within limits.
    pub const GENERAL_TEMPERATURE_OK: u16 = 1 << 4;
    /// `general_status`: the data logger works.
    pub const GENERAL_DATALOGGER_OK: u16 = 1 << 5;
    /// `general_status`: the CPU headroom is correct.
    pub const GENERAL_CPU_OK: u16 = 1 << 6;
    /// `com_status`: port A..E valid (bits 0-4): `COM_PORTA_VALID << n`.
    pub const COM_PORTA_VALID: u32 = 1 << 0;
    /// `com_status`: port A input not saturated; port n RX is bit `5 + 2n`, TX `6 + 2n`.
    pub const COM_PORTA_RX_OK: u32 = 1 << 5;
    /// `com_status`: port A output not saturated.
    pub const COM_PORTA_TX_OK: u32 = 1 << 6;
    /// `com_status`: Ethernet interface 0 valid; interface n is bit `15 + n` (n < 5).
    pub const COM_ETH0_VALID: u32 = 1 << 15;
    /// `com_status`: the CAN interface is valid.
    pub const COM_CAN_VALID: u32 = 1 << 25;
    /// `com_status`: CAN input not saturated.
    pub const COM_CAN_RX_OK: u32 = 1 << 26;
    /// `com_status`: CAN output not saturated.
    pub const COM_CAN_TX_OK: u32 = 1 << 27;
    /// `com_status2`: ETH0 input OK; interface n RX is bit `2n`, TX `2n + 1` (n < 5).
    pub const COM2_ETH0_RX_OK: u16 = 1 << 0;
    /// `com_status2`: ETH0 output OK.
    pub const COM2_ETH0_TX_OK: u16 = 1 << 1;
    /// `aiding_status`: GNSS 1 position received.
    pub const AIDING_GPS1_POS_RECV: u32 = 1 << 0;
    /// `aiding_status`: GNSS 1 velocity received.
    pub const AIDING_GPS1_VEL_RECV: u32 = 1 << 1;
    /// `aiding_status`: GNSS 1 true heading received.
    pub const AIDING_GPS1_HDT_RECV: u32 = 1 << 2;
    /// `aiding_status`: GNSS 1 UTC time received.
    pub const AIDING_GPS1_UTC_RECV: u32 = 1 << 3;
    /// `aiding_status`: GNSS 2 position received.
    pub const AIDING_GPS2_POS_RECV: u32 = 1 << 4;
    /// `aiding_status`: GNSS 2 velocity received.
    pub const AIDING_GPS2_VEL_RECV: u32 = 1 << 5;
    /// `aiding_status`: GNSS 2 true heading received.
    pub const AIDING_GPS2_HDT_RECV: u32 = 1 << 6;
    /// `aiding_status`: GNSS 2 UTC time received.
    pub const AIDING_GPS2_UTC_RECV: u32 = 1 << 7;
    /// `aiding_status`: magnetometer data received.
    pub const AIDING_MAG_RECV: u32 = 1 << 8;
    /// `aiding_status`: odometer pulse received.
    pub const AIDING_ODO_RECV: u32 = 1 << 9;
    /// `aiding_status`: DVL data received.
    pub const AIDING_DVL_RECV: u32 = 1 << 10;
    /// `aiding_status`: USBL data received.
    pub const AIDING_USBL_RECV: u32 = 1 << 11;
    /// `aiding_status`: depth data received.
    pub const AIDING_DEPTH_RECV: u32 = 1 << 12;
    /// `aiding_status`: air data received.
    pub const AIDING_AIR_DATA_RECV: u32 = 1 << 13;
    /// `aiding_status`: user position received.
    pub const AIDING_USER_POS_RECV: u32 = 1 << 14;
    /// `aiding_status`: user velocity received.
    pub const AIDING_USER_VEL_RECV: u32 = 1 << 15;
    /// `aiding_status`: user heading received.
    pub const AIDING_USER_HEADING_RECV: u32 = 1 << 16;

    /// Whether every bit of `mask` is set in `general_status`.
    #[must_use]
    pub fn general(&self, mask: u16) -> bool {
        self.general_status & mask == mask
    }

    /// Whether every bit of `mask` is set in `aiding_status`.
    #[must_use]
    pub fn aiding(&self, mask: u32) -> bool {
        self.aiding_status & mask == mask
    }

    /// The CAN bus state (`com_status` bits 28-30).
    #[must_use]
    pub fn can_bus_status(&self) -> Option<CanBusStatus> {
        CanBusStatus::from_raw(bits(self.com_status, 28, 0x7))
    }
}

raw_enum! {
    /// CAN bus state of [`Status::can_bus_status`].
    CanBusStatus: u8 {
        /// Bus off after too many errors.
        Off = 0,
        /// Transmit or receive error.
        TxRxError = 1,
        /// The bus works.
        Ok = 2,
        /// A general error.
        Error = 3,
    }
}

impl Payload for Status {
    const MIN_LEN: usize = 22;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let mut s = Status {
            timestamp: c.get()?,
            general_status: c.get()?,
            com_status2: c.get()?,
            com_status: c.get()?,
            aiding_status: c.get()?,
            reserved2: c.get()?,
            reserved3: c.get()?,
            uptime: c.opt(),
            cpu_usage: None,
        };
        if s.uptime.is_some() {
            s.cpu_usage = c.opt();
        }
        Ok(s)
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.general_status);
        put(out, &self.com_status2);
        put(out, &self.com_status);
        put(out, &self.aiding_status);
        put(out, &self.reserved2);
        put(out, &self.reserved3);
        if self.uptime.is_some() || self.cpu_usage.is_some() {
            put(out, &self.uptime.unwrap_or(0));
        }
        if let Some(cpu) = self.cpu_usage {
            put(out, &cpu);
        }
    }
}

/// `SBG_ECOM_LOG_DIAG` (id 48): an error, warning, information or debug message.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Diag {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Message type: see [`Diag::diag_type`].
    pub kind: u8,
    /// The `SbgErrorCode` reported, if any (0: no error).
    pub error_code: u8,
    /// The text, up to its terminating NUL (bytes that are not UTF-8 replaced).
    pub message: String,
}

raw_enum! {
    /// Type of a [`Diag`] message.
    DiagType: u8 {
        /// An error.
        Error = 0,
        /// A warning.
        Warning = 1,
        /// Information.
        Info = 2,
        /// Debug information.
        Debug = 3,
    }
}

impl Diag {
    /// The documented type of `kind`.
    #[must_use]
    pub fn diag_type(&self) -> Option<DiagType> {
        DiagType::from_raw(self.kind)
    }
}

impl Payload for Diag {
    const MIN_LEN: usize = 6;
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let timestamp = c.get()?;
        let kind = c.get()?;
        let error_code = c.get()?;
        let text = c.rest();
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        Ok(Diag {
            timestamp,
            kind,
            error_code,
            message: String::from_utf8_lossy(&text[..end]).into_owned(),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.kind);
        put(out, &self.error_code);
        // Up to a NUL the text may hold, and within a standard frame.
        let text = self.message.as_bytes();
        let end = text.iter().position(|&b| b == 0).unwrap_or(text.len());
        let end = end.min(svc_protocol::serial::MAX_PAYLOAD - Self::MIN_LEN - 1);
        out.extend_from_slice(&text[..end]);
        out.push(0);
    }
}

/// `SBG_ECOM_LOG_SESSION_INFO` (id 55): one page of the session information, a JSON
/// document (device information and settings) sent in pages every minute. See
/// [`SessionInfoAssembler`](crate::SessionInfoAssembler) to put the pages together.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SessionInfo {
    /// Index of this page, from 0.
    pub page_index: u16,
    /// Number of pages of the document.
    pub page_count: u16,
    /// This page's piece of the JSON text.
    pub data: Vec<u8>,
}

impl Payload for SessionInfo {
    const MIN_LEN: usize = 6;
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let page_index: u16 = c.get()?;
        let page_count: u16 = c.get()?;
        let size: u16 = c.get()?;
        if page_index >= page_count {
            return Err(PayloadError::Invalid("page index not below the page count"));
        }
        let data = c
            .take(usize::from(size))
            .map_err(|_| PayloadError::Invalid("data size over the payload"))?;
        Ok(SessionInfo {
            page_index,
            page_count,
            data: data.to_vec(),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        let len = self.data.len().min(usize::from(u16::MAX));
        put(out, &self.page_index);
        put(out, &self.page_count);
        put(out, &u16::try_from(len).unwrap_or(u16::MAX));
        out.extend_from_slice(&self.data[..len]);
    }
}

/// `SBG_ECOM_LOG_UTC_TIME` (id 2): UTC and GPS time of a timestamp, and the internal
/// clock's estimation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct UtcTime {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Clock and UTC status: [`UtcTime::clock_state`], [`UtcTime::utc_status`], `HAS_*`.
    pub status: u16,
    /// Year.
    pub year: u16,
    /// Month, 1-12.
    pub month: u8,
    /// Day of month, 1-31.
    pub day: u8,
    /// Hour, 0-23.
    pub hour: u8,
    /// Minute, 0-59.
    pub minute: u8,
    /// Second, 0-60 (60 during a leap second).
    pub second: u8,
    /// Nanosecond of the second.
    pub nanosecond: u32,
    /// GPS time of week, ms.
    pub gps_tow: u32,
    /// Clock bias 1σ, s (since sbgECom 4.0; NaN when absent for the vendor).
    pub clk_bias_std: Option<f32>,
    /// Clock scale factor error 1σ, % (since sbgECom 4.0).
    pub clk_sf_error_std: Option<f32>,
    /// Error between the GNSS PPS and the internal clock, s (since sbgECom 4.0).
    pub clk_residual_error: Option<f32>,
}

impl UtcTime {
    /// `status`: a valid input clock (PPS) is detected.
    pub const HAS_CLOCK_INPUT: u16 = 1 << 0;
    /// `status`: the UTC time is accurate (aligned with the PPS).
    pub const UTC_IS_ACCURATE: u16 = 1 << 5;

    /// The internal clock state (`status` bits 1-4).
    #[must_use]
    pub fn clock_state(&self) -> Option<ClockState> {
        ClockState::from_raw(bits(u32::from(self.status), 1, 0xF))
    }

    /// The UTC validity (`status` bits 6-9).
    #[must_use]
    pub fn utc_status(&self) -> Option<UtcStatus> {
        UtcStatus::from_raw(bits(u32::from(self.status), 6, 0xF))
    }
}

raw_enum! {
    /// Internal clock state of [`UtcTime::clock_state`].
    ClockState: u8 {
        /// The clock estimation failed.
        Error = 0,
        /// Free running on the internal crystal.
        FreeRunning = 1,
        /// Converging to the PPS.
        Steering = 2,
        /// Converged to the PPS.
        Valid = 3,
    }
}

raw_enum! {
    /// UTC validity of [`UtcTime::utc_status`].
    UtcStatus: u8 {
        /// UTC unknown.
        Invalid = 0,
        /// UTC known but not the leap seconds (default leap seconds used).
        NoLeapSec = 1,
        /// UTC known, with the leap seconds.
        Initialized = 2,
    }
}

impl Payload for UtcTime {
    const MIN_LEN: usize = 21;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let mut t = UtcTime {
            timestamp: c.get()?,
            status: c.get()?,
            year: c.get()?,
            month: c.get()?,
            day: c.get()?,
            hour: c.get()?,
            minute: c.get()?,
            second: c.get()?,
            nanosecond: c.get()?,
            gps_tow: c.get()?,
            ..UtcTime::default()
        };
        if c.remaining() >= 12 {
            t.clk_bias_std = c.opt();
            t.clk_sf_error_std = c.opt();
            t.clk_residual_error = c.opt();
        }
        Ok(t)
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.status);
        put(out, &self.year);
        put(out, &self.month);
        put(out, &self.day);
        put(out, &self.hour);
        put(out, &self.minute);
        put(out, &self.second);
        put(out, &self.nanosecond);
        put(out, &self.gps_tow);
        let clock = [
            self.clk_bias_std,
            self.clk_sf_error_std,
            self.clk_residual_error,
        ];
        if clock.iter().any(Option::is_some) {
            for value in clock {
                put(out, &value.unwrap_or(f32::NAN));
            }
        }
    }
}

/// `SBG_ECOM_LOG_PTP_STATUS` (id 57): Precise Time Protocol status and metrics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PtpStatus {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// State, transport and time scale: [`PtpStatus::state`], [`PtpStatus::transport`],
    /// [`PtpStatus::time_scale`].
    pub status: u16,
    /// Internal time scale offset, s.
    pub time_scale_offset: f64,
    /// Local clock identity (`u64::MAX`: invalid).
    pub local_clock_identity: u64,
    /// Local clock priority1.
    pub local_clock_priority1: u8,
    /// Local clock priority2.
    pub local_clock_priority2: u8,
    /// Local clock class.
    pub local_clock_class: u8,
    /// Local clock accuracy.
    pub local_clock_accuracy: u8,
    /// Local clock variance, log2.
    pub local_clock_log2_variance: u16,
    /// Local clock time source.
    pub local_clock_time_source: u8,
    /// Master clock identity (`u64::MAX`: invalid).
    pub master_clock_identity: u64,
    /// Master clock priority1.
    pub master_clock_priority1: u8,
    /// Master clock priority2.
    pub master_clock_priority2: u8,
    /// Master clock class.
    pub master_clock_class: u8,
    /// Master clock accuracy.
    pub master_clock_accuracy: u8,
    /// Master clock variance, log2.
    pub master_clock_log2_variance: u16,
    /// Master clock time source.
    pub master_clock_time_source: u8,
    /// Master clock IPv4 address (`u32::MAX`: invalid).
    pub master_ip_address: u32,
    /// Mean path delay to/from the master, s (NaN: not available).
    pub mean_path_delay: f32,
    /// Mean path delay standard deviation, s.
    pub mean_path_delay_std: f32,
    /// Offset between the local and master clocks, s.
    pub clock_offset: f64,
    /// Clock offset standard deviation, s.
    pub clock_offset_std: f32,
    /// Frequency offset between the local and master clocks, Hz.
    pub clock_freq_offset: f32,
    /// Frequency offset standard deviation, Hz.
    pub clock_freq_offset_std: f32,
    /// Master clock MAC address (since sbgECom 5.2; all 0xFF: invalid).
    pub master_mac_address: Option<[u8; 6]>,
}

raw_enum! {
    /// PTP state of [`PtpStatus::state`].
    PtpState: u8 {
        /// PTP is disabled.
        Disabled = 0,
        /// Faulty.
        Faulty = 1,
        /// The unit is the domain master.
        Master = 2,
        /// Passive.
        Passive = 3,
    }
}

raw_enum! {
    /// PTP transport of [`PtpStatus::transport`].
    PtpTransport: u8 {
        /// UDP.
        Udp = 0,
        /// Ethernet (IEEE 802.3).
        Ethernet = 1,
    }
}

raw_enum! {
    /// Time scale of [`PtpStatus::time_scale`].
    PtpTimeScale: u8 {
        /// TAI.
        Tai = 0,
        /// UTC.
        Utc = 1,
        /// GPS time.
        Gps = 2,
    }
}

impl PtpStatus {
    /// `status` bits 0-2.
    #[must_use]
    pub fn state(&self) -> Option<PtpState> {
        PtpState::from_raw(bits(u32::from(self.status), 0, 0x7))
    }
    /// `status` bits 3-5 (since sbgECom 5.2).
    #[must_use]
    pub fn transport(&self) -> Option<PtpTransport> {
        PtpTransport::from_raw(bits(u32::from(self.status), 3, 0x7))
    }
    /// `status` bits 8-10.
    #[must_use]
    pub fn time_scale(&self) -> Option<PtpTimeScale> {
        PtpTimeScale::from_raw(bits(u32::from(self.status), 8, 0x7))
    }
}

impl Payload for PtpStatus {
    const MIN_LEN: usize = 76;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        Ok(PtpStatus {
            timestamp: c.get()?,
            status: c.get()?,
            time_scale_offset: c.get()?,
            local_clock_identity: c.get()?,
            local_clock_priority1: c.get()?,
            local_clock_priority2: c.get()?,
            local_clock_class: c.get()?,
            local_clock_accuracy: c.get()?,
            local_clock_log2_variance: c.get()?,
            local_clock_time_source: c.get()?,
            master_clock_identity: c.get()?,
            master_clock_priority1: c.get()?,
            master_clock_priority2: c.get()?,
            master_clock_class: c.get()?,
            master_clock_accuracy: c.get()?,
            master_clock_log2_variance: c.get()?,
            master_clock_time_source: c.get()?,
            master_ip_address: c.get()?,
            mean_path_delay: c.get()?,
            mean_path_delay_std: c.get()?,
            clock_offset: c.get()?,
            clock_offset_std: c.get()?,
            clock_freq_offset: c.get()?,
            clock_freq_offset_std: c.get()?,
            master_mac_address: c.opt(),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.status);
        put(out, &self.time_scale_offset);
        put(out, &self.local_clock_identity);
        put(out, &self.local_clock_priority1);
        put(out, &self.local_clock_priority2);
        put(out, &self.local_clock_class);
        put(out, &self.local_clock_accuracy);
        put(out, &self.local_clock_log2_variance);
        put(out, &self.local_clock_time_source);
        put(out, &self.master_clock_identity);
        put(out, &self.master_clock_priority1);
        put(out, &self.master_clock_priority2);
        put(out, &self.master_clock_class);
        put(out, &self.master_clock_accuracy);
        put(out, &self.master_clock_log2_variance);
        put(out, &self.master_clock_time_source);
        put(out, &self.master_ip_address);
        put(out, &self.mean_path_delay);
        put(out, &self.mean_path_delay_std);
        put(out, &self.clock_offset);
        put(out, &self.clock_offset_std);
        put(out, &self.clock_freq_offset);
        put(out, &self.clock_freq_offset_std);
        if let Some(mac) = &self.master_mac_address {
            put(out, mac);
        }
    }
}

// ---------------------------------------------------------------------------------
// IMU
// ---------------------------------------------------------------------------------

/// Status bits of the IMU messages ([`ImuData::status`], [`ImuShort::status`]).
pub mod imu_status {
    /// Communication with the IMU works.
    pub const COM_OK: u16 = 1 << 0;
    /// The IMU passes its built-in tests.
    pub const STATUS_BIT: u16 = 1 << 1;
    /// The X accelerometer passes its tests (Y: bit 3, Z: bit 4).
    pub const ACCEL_X_BIT: u16 = 1 << 2;
    /// The Y accelerometer passes its tests.
    pub const ACCEL_Y_BIT: u16 = 1 << 3;
    /// The Z accelerometer passes its tests.
    pub const ACCEL_Z_BIT: u16 = 1 << 4;
    /// The X gyroscope passes its tests.
    pub const GYRO_X_BIT: u16 = 1 << 5;
    /// The Y gyroscope passes its tests.
    pub const GYRO_Y_BIT: u16 = 1 << 6;
    /// The Z gyroscope passes its tests.
    pub const GYRO_Z_BIT: u16 = 1 << 7;
    /// The accelerometers are within range.
    pub const ACCELS_IN_RANGE: u16 = 1 << 8;
    /// The gyroscopes are within range.
    pub const GYROS_IN_RANGE: u16 = 1 << 9;
    /// [`ImuShort`](super::ImuShort) rates use the high range scale factor.
    pub const GYROS_USE_HIGH_SCALE: u16 = 1 << 10;
}

/// `SBG_ECOM_LOG_IMU_DATA` (id 3, deprecated): synchronous IMU data in the body frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImuData {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// IMU status: [`imu_status`].
    pub status: u16,
    /// Accelerations X, Y, Z, m/s².
    pub accelerometers: [f32; 3],
    /// Rotation rates X, Y, Z, rad/s.
    pub gyroscopes: [f32; 3],
    /// IMU temperature, °C.
    pub temperature: f32,
    /// The vendor's `deltaVelocity` (documented as `ACCEL_1_*`: the same values as
    /// `accelerometers`), m/s².
    pub delta_velocity: [f32; 3],
    /// The vendor's `deltaAngle` (documented as `GYRO_1_*`: the same values as
    /// `gyroscopes`), rad/s.
    pub delta_angle: [f32; 3],
}

fixed_payload!(
    ImuData,
    58,
    [
        timestamp,
        status,
        accelerometers,
        gyroscopes,
        temperature,
        delta_velocity,
        delta_angle
    ]
);

/// `SBG_ECOM_LOG_IMU_SHORT` (id 44): IMU data in fixed-point units (the output to
/// post-process).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ImuShort {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// IMU status: [`imu_status`].
    pub status: u16,
    /// Accelerations X, Y, Z, in LSB of 1/1048576 m/s² (see [`ImuShort::accelerations`]).
    pub delta_velocity: [i32; 3],
    /// Rotation rates X, Y, Z in LSB (see [`ImuShort::rates`]).
    pub delta_angle: [i32; 3],
    /// Temperature, in LSB of 1/256 °C.
    pub temperature: i16,
}

fixed_payload!(
    ImuShort,
    32,
    [timestamp, status, delta_velocity, delta_angle, temperature]
);

impl ImuShort {
    /// LSB per m/s² of the accelerations.
    pub const ACCEL_LSB_PER_MS2: f64 = 1_048_576.0;
    /// LSB per rad/s of the rates, standard scale.
    pub const RATE_LSB_PER_RADS: f64 = 67_108_864.0;
    /// LSB per rad/s of the rates, high range scale
    /// ([`imu_status::GYROS_USE_HIGH_SCALE`]).
    pub const RATE_LSB_PER_RADS_HIGH: f64 = 12_304_174.0;

    /// Accelerations X, Y, Z, m/s².
    #[must_use]
    pub fn accelerations(&self) -> [f64; 3] {
        self.delta_velocity
            .map(|v| f64::from(v) / Self::ACCEL_LSB_PER_MS2)
    }

    /// Rotation rates X, Y, Z, rad/s (with the scale `status` says).
    #[must_use]
    pub fn rates(&self) -> [f64; 3] {
        let scale = if self.status & imu_status::GYROS_USE_HIGH_SCALE != 0 {
            Self::RATE_LSB_PER_RADS_HIGH
        } else {
            Self::RATE_LSB_PER_RADS
        };
        self.delta_angle.map(|v| f64::from(v) / scale)
    }

    /// Temperature, °C.
    #[must_use]
    pub fn temperature_celsius(&self) -> f64 {
        f64::from(self.temperature) / 256.0
    }
}

/// `SBG_ECOM_LOG_MAG` (id 4): magnetometer data with the accelerations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Mag {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Status: `MAG_*` constants.
    pub status: u16,
    /// Magnetic field X, Y, Z, arbitrary units (1 after calibration).
    pub magnetometers: [f32; 3],
    /// Accelerations X, Y, Z, m/s².
    pub accelerometers: [f32; 3],
}

impl Mag {
    /// `status`: the X magnetometer passes its self test (Y: bit 1, Z: bit 2).
    pub const MAG_X_BIT: u16 = 1 << 0;
    /// `status`: the Y magnetometer passes its self test.
    pub const MAG_Y_BIT: u16 = 1 << 1;
    /// `status`: the Z magnetometer passes its self test.
    pub const MAG_Z_BIT: u16 = 1 << 2;
    /// `status`: the X accelerometer passes its self test (Y: bit 4, Z: bit 5).
    pub const ACCEL_X_BIT: u16 = 1 << 3;
    /// `status`: the Y accelerometer passes its self test.
    pub const ACCEL_Y_BIT: u16 = 1 << 4;
    /// `status`: the Z accelerometer passes its self test.
    pub const ACCEL_Z_BIT: u16 = 1 << 5;
    /// `status`: the magnetometers are not saturated.
    pub const MAGS_IN_RANGE: u16 = 1 << 6;
    /// `status`: the accelerometers are not saturated.
    pub const ACCELS_IN_RANGE: u16 = 1 << 7;
    /// `status`: the magnetometer appears calibrated.
    pub const CALIBRATION_OK: u16 = 1 << 8;
}

fixed_payload!(Mag, 30, [timestamp, status, magnetometers, accelerometers]);

/// `SBG_ECOM_LOG_MAG_CALIB` (id 5): raw magnetometer calibration data.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MagCalib {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Reserved.
    pub reserved: u16,
    /// Raw calibration buffer.
    pub buffer: [u8; 16],
}

fixed_payload!(MagCalib, 22, [timestamp, reserved, buffer]);

// ---------------------------------------------------------------------------------
// EKF
// ---------------------------------------------------------------------------------

/// Bits of the INS solution status (`status` of the `ekf*` messages).
pub mod solution_status {
    /// Roll and pitch are reliable.
    pub const ATTITUDE_VALID: u32 = 1 << 4;
    /// Heading is reliable.
    pub const HEADING_VALID: u32 = 1 << 5;
    /// Velocity is reliable.
    pub const VELOCITY_VALID: u32 = 1 << 6;
    /// Position is reliable.
    pub const POSITION_VALID: u32 = 1 << 7;
    /// The vertical reference is used.
    pub const VERT_REF_USED: u32 = 1 << 8;
    /// The magnetometer is used.
    pub const MAG_REF_USED: u32 = 1 << 9;
    /// GNSS 1 velocity is used.
    pub const GPS1_VEL_USED: u32 = 1 << 10;
    /// GNSS 1 position is used.
    pub const GPS1_POS_USED: u32 = 1 << 11;
    /// GNSS 1 true heading is used.
    pub const GPS1_HDT_USED: u32 = 1 << 13;
    /// GNSS 2 velocity is used.
    pub const GPS2_VEL_USED: u32 = 1 << 14;
    /// GNSS 2 position is used.
    pub const GPS2_POS_USED: u32 = 1 << 15;
    /// GNSS 2 true heading is used.
    pub const GPS2_HDT_USED: u32 = 1 << 17;
    /// The odometer is used.
    pub const ODO_USED: u32 = 1 << 18;
    /// DVL bottom tracking is used.
    pub const DVL_BT_USED: u32 = 1 << 19;
    /// DVL water tracking is used.
    pub const DVL_WT_USED: u32 = 1 << 20;
    /// A user position is used.
    pub const USER_POS_USED: u32 = 1 << 21;
    /// A user velocity is used.
    pub const USER_VEL_USED: u32 = 1 << 22;
    /// A user heading is used.
    pub const USER_HEADING_USED: u32 = 1 << 23;
    /// USBL is used.
    pub const USBL_USED: u32 = 1 << 24;
    /// Air data is used.
    pub const AIR_DATA_USED: u32 = 1 << 25;
    /// A zero velocity update is used.
    pub const ZUPT_USED: u32 = 1 << 26;
    /// Sensor alignment has converged.
    pub const ALIGN_VALID: u32 = 1 << 27;
    /// The depth sensor is used.
    pub const DEPTH_USED: u32 = 1 << 28;
    /// A zero angular rate update is used.
    pub const ZARU_USED: u32 = 1 << 29;
}

raw_enum! {
    /// Kalman filter mode (solution status bits 0-3).
    SolutionMode: u8 {
        /// Not initialized: data invalid.
        Uninitialized = 0,
        /// Roll and pitch only.
        VerticalGyro = 1,
        /// Full orientation.
        Ahrs = 2,
        /// Deprecated.
        NavVelocity = 3,
        /// Attitude, velocity and position.
        NavPosition = 4,
    }
}

/// The solution mode of an INS solution status.
#[must_use]
pub fn solution_mode(status: u32) -> Option<SolutionMode> {
    SolutionMode::from_raw(bits(status, 0, 0xF))
}

/// `SBG_ECOM_LOG_EKF_EULER` (id 6): attitude as Euler angles.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EkfEuler {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Roll, pitch, yaw, rad.
    pub euler: [f32; 3],
    /// Roll, pitch, yaw 1σ, rad.
    pub euler_std: [f32; 3],
    /// Solution status: [`solution_status`], [`solution_mode`].
    pub status: u32,
    /// Magnetic declination, rad, positive East (NaN for the vendor when absent).
    pub mag_declination: Option<f32>,
    /// Magnetic inclination, rad, positive Down.
    pub mag_inclination: Option<f32>,
}

/// `SBG_ECOM_LOG_EKF_QUAT` (id 7): attitude as a quaternion.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EkfQuat {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Quaternion W, X, Y, Z.
    pub quaternion: [f32; 4],
    /// Roll, pitch, yaw 1σ, rad.
    pub euler_std: [f32; 3],
    /// Solution status: [`solution_status`], [`solution_mode`].
    pub status: u32,
    /// Magnetic declination, rad.
    pub mag_declination: Option<f32>,
    /// Magnetic inclination, rad.
    pub mag_inclination: Option<f32>,
}

/// Reads the optional magnetic declination and inclination (both or none).
#[inline]
fn read_mag_angles(c: &mut Cursor<'_>) -> (Option<f32>, Option<f32>) {
    if c.remaining() >= 8 {
        (c.opt(), c.opt())
    } else {
        (None, None)
    }
}

/// Writes the optional magnetic declination and inclination.
fn write_mag_angles(out: &mut Vec<u8>, decl: Option<f32>, incl: Option<f32>) {
    if decl.is_some() || incl.is_some() {
        put(out, &decl.unwrap_or(f32::NAN));
        put(out, &incl.unwrap_or(f32::NAN));
    }
}

impl Payload for EkfEuler {
    const MIN_LEN: usize = 32;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let (timestamp, euler, euler_std, status) = (c.get()?, c.get()?, c.get()?, c.get()?);
        let (mag_declination, mag_inclination) = read_mag_angles(c);
        Ok(EkfEuler {
            timestamp,
            euler,
            euler_std,
            status,
            mag_declination,
            mag_inclination,
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.euler);
        put(out, &self.euler_std);
        put(out, &self.status);
        write_mag_angles(out, self.mag_declination, self.mag_inclination);
    }
}

impl Payload for EkfQuat {
    const MIN_LEN: usize = 36;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let (timestamp, quaternion, euler_std, status) = (c.get()?, c.get()?, c.get()?, c.get()?);
        let (mag_declination, mag_inclination) = read_mag_angles(c);
        Ok(EkfQuat {
            timestamp,
            quaternion,
            euler_std,
            status,
            mag_declination,
            mag_inclination,
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.quaternion);
        put(out, &self.euler_std);
        put(out, &self.status);
        write_mag_angles(out, self.mag_declination, self.mag_inclination);
    }
}

/// `SBG_ECOM_LOG_EKF_NAV` (id 8): velocity (NED) and position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EkfNav {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Velocity North, East, Down, m/s.
    pub velocity: [f32; 3],
    /// Velocity 1σ North, East, Down, m/s.
    pub velocity_std: [f32; 3],
    /// Latitude (°, positive North), longitude (°, positive East), altitude above mean
    /// sea level (m, positive up).
    pub position: [f64; 3],
    /// Geoid undulation, m (ellipsoidal height = altitude + undulation).
    pub undulation: f32,
    /// Latitude, longitude, altitude 1σ, m.
    pub position_std: [f32; 3],
    /// Solution status: [`solution_status`], [`solution_mode`].
    pub status: u32,
}

fixed_payload!(
    EkfNav,
    72,
    [
        timestamp,
        velocity,
        velocity_std,
        position,
        undulation,
        position_std,
        status
    ]
);

/// `SBG_ECOM_LOG_EKF_VEL_BODY` (id 54): velocity in the body frame.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EkfVelBody {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Solution status: [`solution_status`], [`solution_mode`].
    pub status: u32,
    /// Velocity X, Y, Z, m/s.
    pub velocity: [f32; 3],
    /// Velocity 1σ X, Y, Z, m/s.
    pub velocity_std: [f32; 3],
}

fixed_payload!(EkfVelBody, 32, [timestamp, status, velocity, velocity_std]);

/// `SBG_ECOM_LOG_EKF_ROT_ACCEL_BODY` (id 52) and `..._NED` (id 53): compensated
/// rotation rates and accelerations (body X, Y, Z or North, East, Down).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EkfRotAccel {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Solution status: [`solution_status`], [`solution_mode`].
    pub status: u32,
    /// Rotation rates, rad/s.
    pub rate: [f32; 3],
    /// Accelerations, m/s².
    pub acceleration: [f32; 3],
}

fixed_payload!(EkfRotAccel, 32, [timestamp, status, rate, acceleration]);

/// `SBG_ECOM_LOG_SHIP_MOTION` (id 9) and `..._HP` (id 32, delayed heave): surge, sway,
/// heave.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ShipMotion {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Main heave period, s.
    pub heave_period: f32,
    /// Surge (positive forward), sway (positive right), heave (positive down), m.
    pub ship_motion: [f32; 3],
    /// Accelerations along the same axes, m/s².
    pub ship_accel: [f32; 3],
    /// Velocities along the same axes, m/s (optional trailing group; the vendor writes
    /// 0 when absent).
    pub ship_vel: Option<[f32; 3]>,
    /// Status, `HEAVE_*` (optional trailing group with `ship_vel`; 0 when absent).
    pub status: Option<u16>,
}

impl ShipMotion {
    /// `status`: heave has stabilized.
    pub const HEAVE_VALID: u16 = 1 << 0;
    /// `status`: heave compensated for transient accelerations.
    pub const HEAVE_VEL_AIDED: u16 = 1 << 1;
    /// `status`: surge and sway are included.
    pub const HEAVE_SURGE_SWAY_INCLUDED: u16 = 1 << 2;
    /// `status`: the swell period is included.
    pub const HEAVE_PERIOD_INCLUDED: u16 = 1 << 3;
    /// `status`: the swell period is valid.
    pub const HEAVE_PERIOD_VALID: u16 = 1 << 4;
    /// `status`: real-time heave uses swell mode.
    pub const HEAVE_SWELL_MODE: u16 = 1 << 5;
}

impl Payload for ShipMotion {
    const MIN_LEN: usize = 32;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let mut s = ShipMotion {
            timestamp: c.get()?,
            heave_period: c.get()?,
            ship_motion: c.get()?,
            ship_accel: c.get()?,
            ship_vel: None,
            status: None,
        };
        if c.remaining() >= 14 {
            s.ship_vel = c.opt();
            s.status = c.opt();
        }
        Ok(s)
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.heave_period);
        put(out, &self.ship_motion);
        put(out, &self.ship_accel);
        if self.ship_vel.is_some() || self.status.is_some() {
            put(out, &self.ship_vel.unwrap_or([0.0; 3]));
            put(out, &self.status.unwrap_or(0));
        }
    }
}

// ---------------------------------------------------------------------------------
// GNSS
// ---------------------------------------------------------------------------------

raw_enum! {
    /// GNSS velocity status (bits 0-5 of [`GnssVel::status`]).
    GnssVelStatus: u8 {
        /// A solution was computed.
        SolComputed = 0,
        /// Not enough observations.
        InsufficientObs = 1,
        /// An internal error.
        InternalError = 2,
        /// Velocity limit exceeded.
        Limit = 3,
    }
}

raw_enum! {
    /// GNSS velocity type (bits 6-11 of [`GnssVel::status`]).
    GnssVelType: u8 {
        /// No solution.
        NoSolution = 0,
        /// Unknown type.
        Unknown = 1,
        /// Doppler velocity.
        Doppler = 2,
        /// Differential (from successive positions).
        Differential = 3,
    }
}

/// `SBG_ECOM_LOG_GPS#_VEL` (ids 13, 16): GNSS velocity.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GnssVel {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Status and type: [`GnssVel::vel_status`], [`GnssVel::vel_type`].
    pub status: u32,
    /// GPS time of week, ms.
    pub time_of_week: u32,
    /// Velocity North, East, Down, m/s.
    pub velocity: [f32; 3],
    /// Velocity 1σ North, East, Down, m/s.
    pub velocity_acc: [f32; 3],
    /// Course over ground, °.
    pub course: f32,
    /// Course 1σ, °.
    pub course_acc: f32,
}

impl GnssVel {
    /// Bits 0-5 of `status`.
    #[must_use]
    pub fn vel_status(&self) -> Option<GnssVelStatus> {
        GnssVelStatus::from_raw(bits(self.status, 0, 0x3F))
    }
    /// Bits 6-11 of `status`.
    #[must_use]
    pub fn vel_type(&self) -> Option<GnssVelType> {
        GnssVelType::from_raw(bits(self.status, 6, 0x3F))
    }
}

fixed_payload!(
    GnssVel,
    44,
    [
        timestamp,
        status,
        time_of_week,
        velocity,
        velocity_acc,
        course,
        course_acc
    ]
);

raw_enum! {
    /// GNSS position status (bits 0-5 of [`GnssPos::status`]).
    GnssPosStatus: u8 {
        /// A solution was computed.
        SolComputed = 0,
        /// Not enough observations.
        InsufficientObs = 1,
        /// An internal error.
        InternalError = 2,
        /// Height limit exceeded.
        HeightLimit = 3,
    }
}

raw_enum! {
    /// GNSS position type (bits 6-11 of [`GnssPos::status`]).
    GnssPosType: u8 {
        /// No solution.
        NoSolution = 0,
        /// Unknown type.
        Unknown = 1,
        /// Single point.
        Single = 2,
        /// Pseudorange differential (DGPS).
        PsrDiff = 3,
        /// SBAS.
        Sbas = 4,
        /// OmniSTAR.
        Omnistar = 5,
        /// RTK float.
        RtkFloat = 6,
        /// RTK integer (fixed).
        RtkInt = 7,
        /// PPP float.
        PppFloat = 8,
        /// PPP integer.
        PppInt = 9,
        /// Fixed location.
        Fixed = 10,
    }
}

raw_enum! {
    /// Interference monitoring status (bits 0-3 of [`GnssPos::status_ext`]).
    GnssIfmStatus: u8 {
        /// Error.
        Error = 0,
        /// Unknown or disabled.
        Unknown = 1,
        /// Clean.
        Clean = 2,
        /// Mitigated.
        Mitigated = 3,
        /// Critical.
        Critical = 4,
    }
}

raw_enum! {
    /// Spoofing status (bits 4-7 of [`GnssPos::status_ext`]).
    GnssSpoofingStatus: u8 {
        /// Error.
        Error = 0,
        /// Unknown or disabled.
        Unknown = 1,
        /// Clean.
        Clean = 2,
        /// Probable spoofing (one method).
        Single = 3,
        /// Confirmed spoofing (several methods).
        Multiple = 4,
    }
}

raw_enum! {
    /// Galileo OSNMA status (bits 8-11 of [`GnssPos::status_ext`]).
    GnssOsnmaStatus: u8 {
        /// Error.
        Error = 0,
        /// Disabled.
        Disabled = 1,
        /// Initializing.
        Initializing = 2,
        /// Waiting for NTP time.
        WaitingNtp = 3,
        /// Authenticating, no spoofing.
        Valid = 4,
        /// Spoofing detected.
        Spoofed = 5,
    }
}

/// `SBG_ECOM_LOG_GPS#_POS` (ids 14, 17): GNSS position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GnssPos {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Status, type and signals used: [`GnssPos::pos_status`], [`GnssPos::pos_type`],
    /// bits 12-29 the signals used (`GPS_L1_USED` ...).
    pub status: u32,
    /// GPS time of week, ms.
    pub time_of_week: u32,
    /// Latitude, °, positive North.
    pub latitude: f64,
    /// Longitude, °, positive East.
    pub longitude: f64,
    /// Altitude above mean sea level, m.
    pub altitude: f64,
    /// Geoid undulation, m.
    pub undulation: f32,
    /// Latitude 1σ, m.
    pub latitude_acc: f32,
    /// Longitude 1σ, m.
    pub longitude_acc: f32,
    /// Altitude 1σ, m.
    pub altitude_acc: f32,
    /// Satellites used (since sbgECom 1.4; 0xFF: not available).
    pub num_sv_used: Option<u8>,
    /// Base station id (since 1.4; 0xFFFF: not available).
    pub base_station_id: Option<u16>,
    /// Differential data age, 0.01 s (since 1.4; 0xFFFF: not available).
    pub differential_age: Option<u16>,
    /// Satellites tracked (since 4.0; 0xFF: not available).
    pub num_sv_tracked: Option<u8>,
    /// Interference, spoofing and OSNMA status (since 4.0).
    pub status_ext: Option<u32>,
}

impl GnssPos {
    /// `status`: GPS L1 used (then L2 bit 13, L5 bit 14).
    pub const GPS_L1_USED: u32 = 1 << 12;
    /// `status`: GPS L2 used.
    pub const GPS_L2_USED: u32 = 1 << 13;
    /// `status`: GPS L5 used.
    pub const GPS_L5_USED: u32 = 1 << 14;
    /// `status`: GLONASS L1 used.
    pub const GLO_L1_USED: u32 = 1 << 15;
    /// `status`: GLONASS L2 used.
    pub const GLO_L2_USED: u32 = 1 << 16;
    /// `status`: GLONASS L3 used.
    pub const GLO_L3_USED: u32 = 1 << 17;
    /// `status`: Galileo E1 used.
    pub const GAL_E1_USED: u32 = 1 << 18;
    /// `status`: Galileo E5a used.
    pub const GAL_E5A_USED: u32 = 1 << 19;
    /// `status`: Galileo E5b used.
    pub const GAL_E5B_USED: u32 = 1 << 20;
    /// `status`: Galileo E5 AltBOC used.
    pub const GAL_E5ALT_USED: u32 = 1 << 21;
    /// `status`: Galileo E6 used.
    pub const GAL_E6_USED: u32 = 1 << 22;
    /// `status`: BeiDou B1 used.
    pub const BDS_B1_USED: u32 = 1 << 23;
    /// `status`: BeiDou B2 used.
    pub const BDS_B2_USED: u32 = 1 << 24;
    /// `status`: BeiDou B3 used.
    pub const BDS_B3_USED: u32 = 1 << 25;
    /// `status`: QZSS L1 used.
    pub const QZSS_L1_USED: u32 = 1 << 26;
    /// `status`: QZSS L2 used.
    pub const QZSS_L2_USED: u32 = 1 << 27;
    /// `status`: QZSS L5 used.
    pub const QZSS_L5_USED: u32 = 1 << 28;
    /// `status`: QZSS L6 used.
    pub const QZSS_L6_USED: u32 = 1 << 29;

    /// Bits 0-5 of `status`.
    #[must_use]
    pub fn pos_status(&self) -> Option<GnssPosStatus> {
        GnssPosStatus::from_raw(bits(self.status, 0, 0x3F))
    }
    /// Bits 6-11 of `status`.
    #[must_use]
    pub fn pos_type(&self) -> Option<GnssPosType> {
        GnssPosType::from_raw(bits(self.status, 6, 0x3F))
    }
    /// Bits 0-3 of `status_ext` (unknown when absent, as the vendor has it).
    #[must_use]
    pub fn ifm_status(&self) -> Option<GnssIfmStatus> {
        match self.status_ext {
            Some(ext) => GnssIfmStatus::from_raw(bits(ext, 0, 0xF)),
            None => Some(GnssIfmStatus::Unknown),
        }
    }
    /// Bits 4-7 of `status_ext` (unknown when absent).
    #[must_use]
    pub fn spoofing_status(&self) -> Option<GnssSpoofingStatus> {
        match self.status_ext {
            Some(ext) => GnssSpoofingStatus::from_raw(bits(ext, 4, 0xF)),
            None => Some(GnssSpoofingStatus::Unknown),
        }
    }
    /// Bits 8-11 of `status_ext` (disabled when absent).
    #[must_use]
    pub fn osnma_status(&self) -> Option<GnssOsnmaStatus> {
        match self.status_ext {
            Some(ext) => GnssOsnmaStatus::from_raw(bits(ext, 8, 0xF)),
            None => Some(GnssOsnmaStatus::Disabled),
        }
    }
}

impl Payload for GnssPos {
    const MIN_LEN: usize = 52;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let mut p = GnssPos {
            timestamp: c.get()?,
            status: c.get()?,
            time_of_week: c.get()?,
            latitude: c.get()?,
            longitude: c.get()?,
            altitude: c.get()?,
            undulation: c.get()?,
            latitude_acc: c.get()?,
            longitude_acc: c.get()?,
            altitude_acc: c.get()?,
            ..GnssPos::default()
        };
        if c.remaining() >= 5 {
            p.num_sv_used = c.opt();
            p.base_station_id = c.opt();
            p.differential_age = c.opt();
            if c.remaining() >= 5 {
                p.num_sv_tracked = c.opt();
                p.status_ext = c.opt();
            }
        }
        Ok(p)
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.status);
        put(out, &self.time_of_week);
        put(out, &self.latitude);
        put(out, &self.longitude);
        put(out, &self.altitude);
        put(out, &self.undulation);
        put(out, &self.latitude_acc);
        put(out, &self.longitude_acc);
        put(out, &self.altitude_acc);
        let second = self.num_sv_tracked.is_some() || self.status_ext.is_some();
        let first = second
            || self.num_sv_used.is_some()
            || self.base_station_id.is_some()
            || self.differential_age.is_some();
        if first {
            put(out, &self.num_sv_used.unwrap_or(u8::MAX));
            put(out, &self.base_station_id.unwrap_or(u16::MAX));
            put(out, &self.differential_age.unwrap_or(u16::MAX));
        }
        if second {
            put(out, &self.num_sv_tracked.unwrap_or(u8::MAX));
            // Unknown interference and spoofing status, OSNMA disabled.
            put(out, &self.status_ext.unwrap_or(0x111));
        }
    }
}

raw_enum! {
    /// GNSS true heading status (bits 0-5 of [`GnssHdt::status`]).
    GnssHdtStatus: u8 {
        /// A solution was computed.
        SolComputed = 0,
        /// Not enough observations.
        InsufficientObs = 1,
        /// An internal error.
        InternalError = 2,
        /// Height limit exceeded.
        HeightLimit = 3,
    }
}

/// `SBG_ECOM_LOG_GPS#_HDT` (ids 15, 18): GNSS true heading (dual antenna).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct GnssHdt {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Status: [`GnssHdt::hdt_status`], [`GnssHdt::BASELINE_VALID`].
    pub status: u16,
    /// GPS time of week, ms.
    pub time_of_week: u32,
    /// True heading, °.
    pub heading: f32,
    /// True heading 1σ, °.
    pub heading_acc: f32,
    /// Pitch from the main to the auxiliary antenna, °.
    pub pitch: f32,
    /// Pitch 1σ, °.
    pub pitch_acc: f32,
    /// Distance between the antennas, m (since sbgECom 1.11; 0 when absent).
    pub baseline: Option<f32>,
    /// Satellites tracked (since 4.0; 0xFF: not available).
    pub num_sv_tracked: Option<u8>,
    /// Satellites used (since 4.0; 0xFF: not available).
    pub num_sv_used: Option<u8>,
}

impl GnssHdt {
    /// `status`: the baseline field is valid.
    pub const BASELINE_VALID: u16 = 1 << 6;

    /// Bits 0-5 of `status`.
    #[must_use]
    pub fn hdt_status(&self) -> Option<GnssHdtStatus> {
        GnssHdtStatus::from_raw(bits(u32::from(self.status), 0, 0x3F))
    }
}

impl Payload for GnssHdt {
    const MIN_LEN: usize = 26;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let mut h = GnssHdt {
            timestamp: c.get()?,
            status: c.get()?,
            time_of_week: c.get()?,
            heading: c.get()?,
            heading_acc: c.get()?,
            pitch: c.get()?,
            pitch_acc: c.get()?,
            ..GnssHdt::default()
        };
        h.baseline = c.opt();
        if h.baseline.is_some() {
            h.num_sv_tracked = c.opt();
            if h.num_sv_tracked.is_some() {
                h.num_sv_used = c.opt();
            }
        }
        Ok(h)
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.status);
        put(out, &self.time_of_week);
        put(out, &self.heading);
        put(out, &self.heading_acc);
        put(out, &self.pitch);
        put(out, &self.pitch_acc);
        let used = self.num_sv_used.is_some();
        let tracked = used || self.num_sv_tracked.is_some();
        if tracked || self.baseline.is_some() {
            put(out, &self.baseline.unwrap_or(0.0));
        }
        if tracked {
            put(out, &self.num_sv_tracked.unwrap_or(u8::MAX));
        }
        if let Some(n) = self.num_sv_used {
            put(out, &n);
        }
    }
}

/// `SBG_ECOM_LOG_GPS#_RAW` (ids 31, 38) and `SBG_ECOM_LOG_RTCM_RAW` (id 49): bytes as
/// the GNSS receiver returned them, or the RTCM stream as received.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RawData {
    /// The raw bytes.
    pub data: Vec<u8>,
}

impl Payload for RawData {
    const MIN_LEN: usize = 0;
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        Ok(RawData {
            data: c.rest().to_vec(),
        })
    }
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.data);
    }
}

raw_enum! {
    /// Tracking status of a satellite or signal.
    SatTrackingStatus: u8 {
        /// Unknown.
        Unknown = 0,
        /// Being searched.
        Searching = 1,
        /// Tracked, use unknown.
        TrackingUnknown = 2,
        /// Tracked, not used.
        TrackingNotUsed = 3,
        /// Tracked, rejected.
        TrackingRejected = 4,
        /// Tracked and used.
        TrackingUsed = 5,
    }
}

raw_enum! {
    /// Health of a satellite or signal.
    SatHealthStatus: u8 {
        /// Unknown.
        Unknown = 0,
        /// Healthy.
        Healthy = 1,
        /// Unhealthy.
        Unhealthy = 2,
    }
}

raw_enum! {
    /// Elevation trend of a satellite.
    SatElevationStatus: u8 {
        /// Unknown.
        Unknown = 0,
        /// Setting.
        Setting = 1,
        /// Rising.
        Rising = 2,
    }
}

/// One signal of a [`SatEntry`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SatSignal {
    /// Signal id (`SbgEComSignalId`).
    pub id: u8,
    /// Flags: tracking (bits 0-2), health (3-4), SNR valid (bit 5).
    pub flags: u8,
    /// Signal to noise ratio, dB.
    pub snr: u8,
}

impl SatSignal {
    /// Tracking status (bits 0-2 of `flags`).
    #[must_use]
    pub fn tracking_status(&self) -> Option<SatTrackingStatus> {
        SatTrackingStatus::from_raw(self.flags & 0x7)
    }
    /// Health status (bits 3-4 of `flags`).
    #[must_use]
    pub fn health_status(&self) -> Option<SatHealthStatus> {
        SatHealthStatus::from_raw((self.flags >> 3) & 0x3)
    }
    /// Whether `snr` is valid (bit 5 of `flags`).
    #[must_use]
    pub fn snr_valid(&self) -> bool {
        self.flags & (1 << 5) != 0
    }
}

/// One satellite of a [`GnssSat`] list.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SatEntry {
    /// Satellite id (RINEX number).
    pub id: u8,
    /// Elevation, °, -90 to 90.
    pub elevation: i8,
    /// Azimuth, °, 0 to 359.
    pub azimuth: u16,
    /// Flags: tracking (bits 0-2), health (3-4), elevation trend (5-6), constellation
    /// (7-10).
    pub flags: u16,
    /// Its signals (the vendor sends at most 8).
    pub signals: Vec<SatSignal>,
}

impl SatEntry {
    /// Tracking status (bits 0-2 of `flags`).
    #[must_use]
    pub fn tracking_status(&self) -> Option<SatTrackingStatus> {
        SatTrackingStatus::from_raw(bits(u32::from(self.flags), 0, 0x7))
    }
    /// Health status (bits 3-4).
    #[must_use]
    pub fn health_status(&self) -> Option<SatHealthStatus> {
        SatHealthStatus::from_raw(bits(u32::from(self.flags), 3, 0x3))
    }
    /// Elevation trend (bits 5-6).
    #[must_use]
    pub fn elevation_status(&self) -> Option<SatElevationStatus> {
        SatElevationStatus::from_raw(bits(u32::from(self.flags), 5, 0x3))
    }
    /// Constellation id (`SbgEComConstellationId`, bits 7-10).
    #[must_use]
    pub fn constellation_id(&self) -> u8 {
        bits(u32::from(self.flags), 7, 0xF)
    }
}

/// `SBG_ECOM_LOG_GPS#_SAT` (ids 50, 51): the satellites in view and their signals.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GnssSat {
    /// Time since the unit powered up, µs.
    pub timestamp: u32,
    /// Reserved.
    pub reserved: u32,
    /// The satellites (the vendor sends at most 64).
    pub satellites: Vec<SatEntry>,
}

impl Payload for GnssSat {
    const MIN_LEN: usize = 9;
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let timestamp = c.get()?;
        let reserved = c.get()?;
        let count: u8 = c.get()?;
        let mut satellites = Vec::with_capacity(usize::from(count));
        for _ in 0..count {
            let mut entry = SatEntry {
                id: c.get()?,
                elevation: c.get()?,
                azimuth: c.get()?,
                flags: c.get()?,
                signals: Vec::new(),
            };
            let signals: u8 = c.get()?;
            for _ in 0..signals {
                entry.signals.push(SatSignal {
                    id: c.get()?,
                    flags: c.get()?,
                    snr: c.get()?,
                });
            }
            satellites.push(entry);
        }
        Ok(GnssSat {
            timestamp,
            reserved,
            satellites,
        })
    }
    /// At most 255 satellites of at most 255 signals are written (the counts are u8).
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.reserved);
        let satellites = &self.satellites[..self.satellites.len().min(255)];
        put(out, &u8::try_from(satellites.len()).unwrap_or(u8::MAX));
        for sat in satellites {
            put(out, &sat.id);
            put(out, &sat.elevation);
            put(out, &sat.azimuth);
            put(out, &sat.flags);
            let signals = &sat.signals[..sat.signals.len().min(255)];
            put(out, &u8::try_from(signals.len()).unwrap_or(u8::MAX));
            for signal in signals {
                put(out, &signal.id);
                put(out, &signal.flags);
                put(out, &signal.snr);
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Aiding equipment, events
// ---------------------------------------------------------------------------------

/// `SBG_ECOM_LOG_ODO_VEL` (id 19): odometer velocity.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct OdoVel {
    /// Time of the measurement since the unit powered up, µs.
    pub timestamp: u32,
    /// Status: [`OdoVel::REAL_MEAS`], [`OdoVel::TIME_SYNC`].
    pub status: u16,
    /// Velocity along the odometer direction, m/s.
    pub velocity: f32,
}

impl OdoVel {
    /// `status`: a real pulse measurement (not a virtual zero velocity update).
    pub const REAL_MEAS: u16 = 1 << 0;
    /// `status`: correctly time synchronized.
    pub const TIME_SYNC: u16 = 1 << 1;
}

fixed_payload!(OdoVel, 10, [timestamp, status, velocity]);

/// `SBG_ECOM_LOG_DVL_BOTTOM_TRACK` (id 29) and `..._WATER_TRACK` (id 30): Doppler
/// velocity log.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Dvl {
    /// Time of the measurement since the unit powered up, µs.
    pub timestamp: u32,
    /// Status: [`Dvl::VELOCITY_VALID`], [`Dvl::TIME_SYNC`].
    pub status: u16,
    /// Velocity X, Y, Z in the DVL frame, m/s.
    pub velocity: [f32; 3],
    /// Quality of each velocity, m/s.
    pub velocity_quality: [f32; 3],
}

impl Dvl {
    /// `status`: a valid velocity was measured.
    pub const VELOCITY_VALID: u16 = 1 << 0;
    /// `status`: accurately time synchronized.
    pub const TIME_SYNC: u16 = 1 << 1;
}

fixed_payload!(Dvl, 30, [timestamp, status, velocity, velocity_quality]);

/// `SBG_ECOM_LOG_AIR_DATA` (id 36): barometric altitude and airspeed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AirData {
    /// Time of the measurement since the unit powered up, or a delay
    /// ([`AirData::TIME_IS_DELAY`]), µs.
    pub timestamp: u32,
    /// Status: `*_VALID`, [`AirData::TIME_IS_DELAY`].
    pub status: u16,
    /// Absolute pressure, Pa.
    pub pressure_abs: f32,
    /// Barometric altitude, m.
    pub altitude: f32,
    /// Differential pressure, Pa (optional trailing group; 0 when absent).
    pub pressure_diff: Option<f32>,
    /// True airspeed, m/s (same group).
    pub true_airspeed: Option<f32>,
    /// Outside air temperature, °C (same group).
    pub air_temperature: Option<f32>,
}

impl AirData {
    /// `status`: the timestamp is a delay.
    pub const TIME_IS_DELAY: u16 = 1 << 0;
    /// `status`: the absolute pressure is valid.
    pub const PRESSURE_ABS_VALID: u16 = 1 << 1;
    /// `status`: the altitude is valid.
    pub const ALTITUDE_VALID: u16 = 1 << 2;
    /// `status`: the differential pressure is valid.
    pub const PRESSURE_DIFF_VALID: u16 = 1 << 3;
    /// `status`: the airspeed is valid.
    pub const AIRSPEED_VALID: u16 = 1 << 4;
    /// `status`: the air temperature is valid.
    pub const TEMPERATURE_VALID: u16 = 1 << 5;
}

impl Payload for AirData {
    const MIN_LEN: usize = 14;
    #[inline(always)]
    fn read(c: &mut Cursor<'_>) -> Result<Self, PayloadError> {
        let mut a = AirData {
            timestamp: c.get()?,
            status: c.get()?,
            pressure_abs: c.get()?,
            altitude: c.get()?,
            ..AirData::default()
        };
        if c.remaining() >= 12 {
            a.pressure_diff = c.opt();
            a.true_airspeed = c.opt();
            a.air_temperature = c.opt();
        }
        Ok(a)
    }
    fn write(&self, out: &mut Vec<u8>) {
        put(out, &self.timestamp);
        put(out, &self.status);
        put(out, &self.pressure_abs);
        put(out, &self.altitude);
        let group = [self.pressure_diff, self.true_airspeed, self.air_temperature];
        if group.iter().any(Option::is_some) {
            for value in group {
                put(out, &value.unwrap_or(0.0));
            }
        }
    }
}

/// `SBG_ECOM_LOG_USBL` (id 37): USBL beacon position.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Usbl {
    /// Time of the measurement since the unit powered up, µs.
    pub timestamp: u32,
    /// Status: [`Usbl::TIME_SYNC`], [`Usbl::POSITION_VALID`], [`Usbl::DEPTH_VALID`].
    pub status: u16,
    /// Latitude, °, positive North.
    pub latitude: f64,
    /// Longitude, °, positive East.
    pub longitude: f64,
    /// Depth below mean sea level, m, positive down.
    pub depth: f32,
    /// Latitude 1σ, m.
    pub latitude_acc: f32,
    /// Longitude 1σ, m.
    pub longitude_acc: f32,
    /// Depth 1σ, m.
    pub depth_acc: f32,
}

impl Usbl {
    /// `status`: time synchronized.
    pub const TIME_SYNC: u16 = 1 << 0;
    /// `status`: valid 2D position.
    pub const POSITION_VALID: u16 = 1 << 1;
    /// `status`: valid depth.
    pub const DEPTH_VALID: u16 = 1 << 2;
}

fixed_payload!(
    Usbl,
    38,
    [
        timestamp,
        status,
        latitude,
        longitude,
        depth,
        latitude_acc,
        longitude_acc,
        depth_acc
    ]
);

/// `SBG_ECOM_LOG_DEPTH` (id 47): depth sensor.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Depth {
    /// Time of the measurement since the unit powered up, or a delay, µs.
    pub timestamp: u32,
    /// Status: [`Depth::TIME_IS_DELAY`], [`Depth::PRESSURE_ABS_VALID`],
    /// [`Depth::ALTITUDE_VALID`].
    pub status: u16,
    /// Absolute water pressure, Pa.
    pub pressure_abs: f32,
    /// Depth, m, positive up.
    pub altitude: f32,
}

impl Depth {
    /// `status`: the timestamp is a delay.
    pub const TIME_IS_DELAY: u16 = 1 << 0;
    /// `status`: the pressure is valid.
    pub const PRESSURE_ABS_VALID: u16 = 1 << 1;
    /// `status`: the depth is valid.
    pub const ALTITUDE_VALID: u16 = 1 << 2;
}

fixed_payload!(Depth, 14, [timestamp, status, pressure_abs, altitude]);

/// `SBG_ECOM_LOG_EVENT_*` (ids 24-28 in, 45-46 out): up to five events of the last
/// 5 ms on a sync input or output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    /// Time of the first event since the unit powered up, µs.
    pub timestamp: u32,
    /// Status: [`Event::OVERFLOW`], `OFFSET_n_VALID`.
    pub status: u16,
    /// Time of the 2nd to 5th events after the first, µs (0 when unused).
    pub time_offsets: [u16; 4],
}

impl Event {
    /// `status`: events came faster than 1 kHz.
    pub const OVERFLOW: u16 = 1 << 0;
    /// `status`: `time_offsets[0]` is valid (two events).
    pub const OFFSET_0_VALID: u16 = 1 << 1;
    /// `status`: `time_offsets[1]` is valid.
    pub const OFFSET_1_VALID: u16 = 1 << 2;
    /// `status`: `time_offsets[2]` is valid.
    pub const OFFSET_2_VALID: u16 = 1 << 3;
    /// `status`: `time_offsets[3]` is valid.
    pub const OFFSET_3_VALID: u16 = 1 << 4;

    /// The times of the valid events, µs since power up (the first, then each valid
    /// offset added to it, wrapping as the timestamp does).
    #[must_use]
    pub fn event_times(&self) -> Vec<u32> {
        let mut times = vec![self.timestamp];
        for (i, offset) in self.time_offsets.iter().enumerate() {
            if self.status & (Self::OFFSET_0_VALID << i) != 0 {
                times.push(self.timestamp.wrapping_add(u32::from(*offset)));
            }
        }
        times
    }
}

fixed_payload!(Event, 14, [timestamp, status, time_offsets]);
