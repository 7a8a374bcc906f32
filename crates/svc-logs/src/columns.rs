//! Column titles and units of each message, as the vendor's `sbgBasicLogger` writes
//! them when it converts a log to text (one tab-separated file per message: a line of
//! titles, a line of units in parentheses, then a line per record), for tables built
//! from the records.
//!
//! Source: `tools/sbgBasicLogger/src/loggerEntry/*.cpp` of SBG-Systems/sbgECom 5.2 (MIT),
//! the `writeHeaderToFile` method of the class named on each table; the first column
//! is `CLoggerContext::getTimeColTitle()` and `getTimeUnit()`
//! (`loggerManager/loggerContext.cpp`): `timestamp` in `us` (or `iso8601Time` when
//! the logger is asked for UTC times). Units are given without their parentheses;
//! `na`: no unit (a status word, a count), `au`: arbitrary unit. Where the vendor's
//! header has a slip, the table has the evident intent and the comment says what the
//! vendor writes. The logger writes some values converted (angles and rates in
//! degrees): the units are those of the text, not of the [`records`](crate::records).
//!
//! Messages the logger writes as something else than a table have no columns
//! ([`columns`] is empty): `diag` (one text line per message), `gps1Sat`/`gps2Sat`
//! (a block per list), `gps1Raw`, `gps2Raw`, `rtcmRaw` (the raw bytes), `magCalib`,
//! `sessionInfo`.

use crate::MessageKind;

/// One column of a table: its title and unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Column {
    /// The title, as the vendor writes it.
    pub title: &'static str,
    /// The unit, without parentheses (`na`: none).
    pub unit: &'static str,
}

const fn col(title: &'static str, unit: &'static str) -> Column {
    Column { title, unit }
}

/// The first column of every table: the message's timestamp, µs since power up.
pub const TIMESTAMP: Column = col("timestamp", "us");

/// Written by `CLoggerEntryStatus (loggerEntryGeneral.cpp)`.
///
/// The vendor: its unit line reads `(%%)` for cpuUsage (a printf escape written to a stream) and has one `(na)` more than its titles; `%` kept.
pub const STATUS: &[Column] = &[
    TIMESTAMP,
    col("general", "na"),
    col("com", "na"),
    col("com2", "na"),
    col("aiding", "na"),
    col("cpuUsage", "%"),
];

/// Written by `CLoggerEntryUtcTime (loggerEntryGeneral.cpp)`.
///
/// The vendor: clock values converted from s and % (bias ×1e6, scale factor ×1e9, residual ×1e6).
pub const UTC_TIME: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("gpsTimeOfWeek", "ms"),
    col("year", "yyyy"),
    col("month", "mm"),
    col("day", "dd"),
    col("hour", "hh"),
    col("minute", "mm"),
    col("second", "s"),
    col("nanosecond", "ns"),
    col("clkBiasStd", "us"),
    col("clkSfErrorStd", "ppm"),
    col("clkResidualError", "us"),
];

/// Written by `CLoggerEntryPtpStatus (loggerEntryGeneral.cpp)`.
///
/// The vendor: its rows also write the transport after the state, a column its header lacks; the frequency offsets are in Hz though written `(s)`.
pub const PTP_STATUS: &[Column] = &[
    TIMESTAMP,
    col("state", "na"),
    col("timeScale", "na"),
    col("timeScaleOffset", "s"),
    col("localClockIdentity", "na"),
    col("localClockPriority1", "na"),
    col("localClockPriority2", "na"),
    col("localClockClass", "na"),
    col("localClockAccuracy", "na"),
    col("localClockLog2Variance", "na"),
    col("localClockTimeSource", "na"),
    col("masterClockIdentity", "na"),
    col("masterClockPriority1", "na"),
    col("masterClockPriority2", "na"),
    col("masterClockClass", "na"),
    col("masterClockAccuracy", "na"),
    col("masterClockLog2Variance", "na"),
    col("masterClockTimeSource", "na"),
    col("masterIpAddress", "na"),
    col("meanPathDelay", "s"),
    col("meanPathDelayStdDev", "s"),
    col("clockOffset", "s"),
    col("clockOffsetStdDev", "s"),
    col("clockFreqOffset", "s"),
    col("clockFreqOffsetStdDev", "s"),
    col("masterMacAddress", "na"),
];

/// Written by `CLoggerEntryImu (loggerEntryImu.cpp), for imuData and imuShort`.
///
/// The vendor: rates converted to °/s.
pub const IMU: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("accelX", "m.s^-2"),
    col("accelY", "m.s^-2"),
    col("accelZ", "m.s^-2"),
    col("gyroX", "deg.s^-1"),
    col("gyroY", "deg.s^-1"),
    col("gyroZ", "deg.s^-1"),
    col("temperature", "degC"),
];

/// Written by `CLoggerEntryMag (loggerEntryMag.cpp)`.
pub const MAG: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("magX", "au"),
    col("magY", "au"),
    col("magZ", "au"),
    col("accelX", "m.s^-2"),
    col("accelY", "m.s^-2"),
    col("accelZ", "m.s^-2"),
];

/// Written by `CLoggerEntryEkfEuler (loggerEntryEkf.cpp)`.
///
/// The vendor: angles converted to °; magHeading is yaw minus the declination.
pub const EKF_EULER: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("roll", "deg"),
    col("pitch", "deg"),
    col("yaw", "deg"),
    col("rollStd", "deg"),
    col("pitchStd", "deg"),
    col("yawStd", "deg"),
    col("magHeading", "deg"),
    col("magDecl", "deg"),
    col("magIncl", "deg"),
];

/// Written by `CLoggerEntryEkfQuat (loggerEntryEkf.cpp)`.
pub const EKF_QUAT: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("qW", "au"),
    col("qX", "au"),
    col("qY", "au"),
    col("qZ", "au"),
    col("rollStd", "deg"),
    col("pitchStd", "deg"),
    col("yawStd", "deg"),
    col("magDecl", "deg"),
    col("magIncl", "deg"),
];

/// Written by `CLoggerEntryEkfNav (loggerEntryEkf.cpp)`.
pub const EKF_NAV: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("velN", "m.s^-1"),
    col("velE", "m.s^-1"),
    col("velD", "m.s^-1"),
    col("velStdN", "m.s^-1"),
    col("velStdE", "m.s^-1"),
    col("velStdD", "m.s^-1"),
    col("latitude", "deg"),
    col("longitude", "deg"),
    col("altitude", "m"),
    col("latitudeStd", "m"),
    col("longitudeStd", "m"),
    col("altitudeStd", "m"),
    col("undulation", "m"),
];

/// Written by `CLoggerEntryEkfVelBody (loggerEntryEkf.cpp)`.
pub const EKF_VEL_BODY: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("velX", "m.s^-1"),
    col("velY", "m.s^-1"),
    col("velZ", "m.s^-1"),
    col("velStdX", "m.s^-1"),
    col("velStdY", "m.s^-1"),
    col("velStdZ", "m.s^-1"),
];

/// Written by `CLoggerEntryEkfRotAccelBody (loggerEntryEkfRotAccel.cpp)`.
///
/// The vendor: accelerations first, rates converted to °/s.
pub const EKF_ROT_ACCEL_BODY: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("accelX", "m.s^-2"),
    col("accelY", "m.s^-2"),
    col("accelZ", "m.s^-2"),
    col("rateX", "deg.s^-1"),
    col("rateY", "deg.s^-1"),
    col("rateZ", "deg.s^-1"),
];

/// Written by `CLoggerEntryEkfRotAccelNed (loggerEntryEkfRotAccel.cpp)`.
pub const EKF_ROT_ACCEL_NED: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("accelN", "m.s^-2"),
    col("accelE", "m.s^-2"),
    col("accelD", "m.s^-2"),
    col("rateN", "deg.s^-1"),
    col("rateE", "deg.s^-1"),
    col("rateD", "deg.s^-1"),
];

/// Written by `CLoggerEntryShipMotion (loggerEntryShipMotion.cpp), for shipMotion and shipMotionHp`.
///
/// The vendor: its unit line misses the `)` of swayAccel.
pub const SHIP_MOTION: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("heavePeriod", "s"),
    col("surge", "m"),
    col("sway", "m"),
    col("heave", "m"),
    col("surgeAccel", "m.s^-2"),
    col("swayAccel", "m.s^-2"),
    col("heaveAccel", "m.s^-2"),
    col("surgeVel", "m.s^-1"),
    col("swayVel", "m.s^-1"),
    col("heaveVel", "m.s^-1"),
];

/// Written by `CLoggerEntryGnssVel (loggerEntryGnss.cpp), for gps1Vel and gps2Vel`.
pub const GNSS_VEL: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("gpsTow", "ms"),
    col("velN", "m.s^-1"),
    col("velE", "m.s^-1"),
    col("velD", "m.s^-1"),
    col("velStdN", "m.s^-1"),
    col("velStdE", "m.s^-1"),
    col("velStdD", "m.s^-1"),
    col("track", "deg"),
    col("trackStd", "deg"),
];

/// Written by `CLoggerEntryGnssPos (loggerEntryGnss.cpp), for gps1Pos and gps2Pos`.
pub const GNSS_POS: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("statusExt", "na"),
    col("gpsTow", "ms"),
    col("latitude", "deg"),
    col("longitude", "deg"),
    col("altitude", "m"),
    col("undulation", "m"),
    col("latitudeStd", "m"),
    col("longitudeStd", "m"),
    col("altitudeStd", "m"),
    col("numSvTracked", "na"),
    col("numSvUsed", "na"),
    col("baseStationId", "na"),
    col("diffAge", "0.01s"),
];

/// Written by `CLoggerEntryGnssHdt (loggerEntryGnss.cpp), for gps1Hdt and gps2Hdt`.
pub const GNSS_HDT: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("gpsTow", "ms"),
    col("heading", "deg"),
    col("headingStd", "deg"),
    col("pitch", "deg"),
    col("pitchStd", "deg"),
    col("baseline", "m"),
    col("numSvTracked", "na"),
    col("numSvUsed", "na"),
];

/// Written by `CLoggerEntryOdometer (loggerEntryAidings.cpp)`.
pub const ODO_VEL: &[Column] = &[TIMESTAMP, col("status", "na"), col("velocity", "m.s^-1")];

/// Written by `CLoggerEntryDvl (loggerEntryDvl.cpp), for dvlBottomTrack and dvlWaterTrack`.
///
/// The vendor: its unit line ends with two `(deg)` of no column, left out.
pub const DVL: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("velX", "m.s^-1"),
    col("velY", "m.s^-1"),
    col("velZ", "m.s^-1"),
    col("velQualX", "m.s^-1"),
    col("velQualY", "m.s^-1"),
    col("velQualZ", "m.s^-1"),
];

/// Written by `CLoggerEntryAirData (loggerEntryAidings.cpp)`.
///
/// The vendor: its unit line writes `(ms.^-1)` for trueAirspeed.
pub const AIR_DATA: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("pressureAbs", "Pa"),
    col("altitude", "m"),
    col("pressureDiff", "Pa"),
    col("trueAirspeed", "m.s^-1"),
    col("airTemperature", "degC"),
];

/// Written by `CLoggerEntryUsbl (loggerEntryAidings.cpp)`.
pub const USBL: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("latitude", "deg"),
    col("longitude", "deg"),
    col("depth", "m"),
    col("latitudeStd", "m"),
    col("longitudeStd", "m"),
    col("depthStd", "m"),
];

/// Written by `CLoggerEntryDepth (loggerEntryAidings.cpp)`.
pub const DEPTH: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("pressureAbs", "Pa"),
    col("altitude", "m"),
];

/// Written by `CLoggerEntryEvent (loggerEntryEvent.cpp), for the seven event messages`.
pub const EVENT: &[Column] = &[
    TIMESTAMP,
    col("status", "na"),
    col("timeOffset0", "us"),
    col("timeOffset1", "us"),
    col("timeOffset2", "us"),
    col("timeOffset3", "us"),
];

/// The columns of a message's table (the first is [`TIMESTAMP`]); empty for the
/// messages the logger does not write as a table.
#[must_use]
pub fn columns(kind: MessageKind) -> &'static [Column] {
    use MessageKind as K;
    match kind {
        K::Status => STATUS,
        K::UtcTime => UTC_TIME,
        K::PtpStatus => PTP_STATUS,
        K::ImuData | K::ImuShort => IMU,
        K::Mag => MAG,
        K::EkfEuler => EKF_EULER,
        K::EkfQuat => EKF_QUAT,
        K::EkfNav => EKF_NAV,
        K::EkfVelBody => EKF_VEL_BODY,
        K::EkfRotAccelBody => EKF_ROT_ACCEL_BODY,
        K::EkfRotAccelNed => EKF_ROT_ACCEL_NED,
        K::ShipMotion | K::ShipMotionHp => SHIP_MOTION,
        K::Gps1Vel | K::Gps2Vel => GNSS_VEL,
        K::Gps1Pos | K::Gps2Pos => GNSS_POS,
        K::Gps1Hdt | K::Gps2Hdt => GNSS_HDT,
        K::OdoVel => ODO_VEL,
        K::DvlBottomTrack | K::DvlWaterTrack => DVL,
        K::AirData => AIR_DATA,
        K::Usbl => USBL,
        K::Depth => DEPTH,
        K::EventA | K::EventB | K::EventC | K::EventD | K::EventE | K::EventOutA | K::EventOutB => {
            EVENT
        }
        K::Diag
        | K::SessionInfo
        | K::MagCalib
        | K::Gps1Raw
        | K::Gps2Raw
        | K::RtcmRaw
        | K::Gps1Sat
        | K::Gps2Sat => &[],
    }
}

/// The file name `sbgBasicLogger` gives a message's table (`getName()` of its logger
/// entry, e.g. `euler`, `gnss1Pos`, `eventInA`), where it differs from
/// [`MessageKind::name`].
#[must_use]
pub fn basic_logger_name(kind: MessageKind) -> &'static str {
    use MessageKind as K;
    match kind {
        K::EkfEuler => "euler",
        K::EkfQuat => "quat",
        K::EkfNav => "nav",
        K::EkfVelBody => "velBody",
        K::EkfRotAccelBody => "rotAccelBody",
        K::EkfRotAccelNed => "rotAccelNed",
        K::Gps1Vel => "gnss1Vel",
        K::Gps1Pos => "gnss1Pos",
        K::Gps1Hdt => "gnss1Hdt",
        K::Gps1Raw => "gnss1Raw",
        K::Gps1Sat => "gnss1Sat",
        K::Gps2Vel => "gnss2Vel",
        K::Gps2Pos => "gnss2Pos",
        K::Gps2Hdt => "gnss2Hdt",
        K::Gps2Raw => "gnss2Raw",
        K::Gps2Sat => "gnss2Sat",
        K::RtcmRaw => "rtcm",
        K::OdoVel => "odometer",
        K::DvlBottomTrack => "dvlBottom",
        K::DvlWaterTrack => "dvlWater",
        K::EventA => "eventInA",
        K::EventB => "eventInB",
        K::EventC => "eventInC",
        K::EventD => "eventInD",
        K::EventE => "eventInE",
        other => other.name(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_starts_with_the_timestamp_and_has_distinct_titles() {
        for &kind in MessageKind::ALL {
            let cols = columns(kind);
            if cols.is_empty() {
                continue;
            }
            assert_eq!(cols[0], TIMESTAMP, "{kind}");
            let mut titles: Vec<&str> = cols.iter().map(|c| c.title).collect();
            titles.sort_unstable();
            titles.dedup();
            assert_eq!(titles.len(), cols.len(), "{kind}");
        }
        assert_eq!(EKF_NAV.len(), 15);
        assert_eq!(basic_logger_name(MessageKind::EkfNav), "nav");
        assert_eq!(basic_logger_name(MessageKind::ImuShort), "imuShort");
    }
}
