//! The messages: their names, ids, and the [`Record`] each decodes to.

use crate::records::{
    AirData, Depth, Diag, Dvl, EkfEuler, EkfNav, EkfQuat, EkfRotAccel, EkfVelBody, Event, GnssHdt,
    GnssPos, GnssSat, GnssVel, ImuData, ImuShort, Mag, MagCalib, OdoVel, Payload, PayloadError,
    PtpStatus, RawData, SessionInfo, ShipMotion, Status, Usbl, UtcTime,
};
use crate::tables::TableRow;
use crate::wire::Cursor;

/// Class of the sbgECom binary output logs (`SBG_ECOM_CLASS_LOG_ECOM_0`).
pub const CLASS_LOG_ECOM_0: u8 = 0x00;

/// Why a payload could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The class and id name none of the [`MessageKind`]s.
    #[error("unknown message: class {class:#04x}, id {id}")]
    Unknown {
        /// The message class.
        class: u8,
        /// The message id.
        id: u8,
    },
    /// The payload is shorter than the fields every version of the message has.
    #[error("{kind} payload too short: {len} bytes, at least {min} needed")]
    TooShort {
        /// The message.
        kind: MessageKind,
        /// The payload length.
        len: usize,
        /// The shortest payload accepted.
        min: usize,
    },
    /// A length or count in the payload does not fit it (a truncated satellite list,
    /// a session information page index or size out of range).
    #[error("{kind} payload invalid: {reason}")]
    Invalid {
        /// The message.
        kind: MessageKind,
        /// What is wrong.
        reason: &'static str,
    },
}

/// Defines [`MessageKind`], [`Record`] and the dispatch between them from one table:
/// variant, settings name, id, payload type.
macro_rules! messages {
    ($($(#[$doc:meta])* $v:ident, $name:literal, $id:literal, $t:ident;)*) => {
        /// An sbgECom binary output message (class [`CLASS_LOG_ECOM_0`]), named as the
        /// unit's settings name it (the keys of `output.*.messages`). Ids from
        /// `src/sbgEComIds.h` of SBG-Systems/sbgECom.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum MessageKind {
            $($(#[$doc])* $v,)*
        }

        impl MessageKind {
            /// Every message, in the order of this table.
            pub const ALL: &'static [MessageKind] = &[$(MessageKind::$v,)*];

            /// Its name in the unit's settings (`imuShort`, `gps1Pos`, ...).
            #[must_use]
            pub const fn name(self) -> &'static str {
                match self {
                    $(MessageKind::$v => $name,)*
                }
            }

            /// Its message id.
            #[must_use]
            pub const fn id(self) -> u8 {
                match self {
                    $(MessageKind::$v => $id,)*
                }
            }

            /// Its message class: [`CLASS_LOG_ECOM_0`] for all.
            #[must_use]
            pub const fn class(self) -> u8 {
                CLASS_LOG_ECOM_0
            }

            /// The message of this settings name (case sensitive).
            #[must_use]
            pub fn from_name(name: &str) -> Option<MessageKind> {
                match name {
                    $($name => Some(MessageKind::$v),)*
                    _ => None,
                }
            }

            /// The message of this class and id.
            #[must_use]
            pub const fn from_ids(class: u8, id: u8) -> Option<MessageKind> {
                if class != CLASS_LOG_ECOM_0 {
                    return None;
                }
                match id {
                    $($id => Some(MessageKind::$v),)*
                    _ => None,
                }
            }

            /// Length of the shortest payload accepted: every field of the oldest
            /// version the vendor documents.
            #[must_use]
            pub const fn min_payload_len(self) -> usize {
                match self {
                    $(MessageKind::$v => <$t as Payload>::MIN_LEN,)*
                }
            }
        }

        /// A decoded message: one variant per [`MessageKind`], holding its payload.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(clippy::large_enum_variant)]
        pub enum Record {
            $($(#[$doc])* $v($t),)*
        }

        impl Record {
            /// Which message it is.
            #[must_use]
            pub fn kind(&self) -> MessageKind {
                match self {
                    $(Record::$v(_) => MessageKind::$v,)*
                }
            }
        }

        impl Record {
            /// Hands the payload it holds, typed, to `visitor`.
            pub(crate) fn visit<V: Visitor>(&self, visitor: V) -> V::Output {
                match self {
                    $(Record::$v(payload) => visitor.visit(MessageKind::$v, payload),)*
                }
            }
        }

        fn read_payload(kind: MessageKind, c: &mut Cursor<'_>) -> Result<Record, PayloadError> {
            Ok(match kind {
                $(MessageKind::$v => Record::$v(<$t as Payload>::read(c)?),)*
            })
        }

        /// Reads a payload of this kind into its typed struct (on the stack: no
        /// [`Record`] is made) and hands it to `visitor`.
        fn read_visit<V: Visitor>(
            kind: MessageKind,
            c: &mut Cursor<'_>,
            visitor: V,
        ) -> Result<V::Output, PayloadError> {
            match kind {
                $(MessageKind::$v => read_then_visit::<$t, V>(kind, c, visitor),)*
            }
        }

        fn write_payload(record: &Record, out: &mut Vec<u8>) {
            match record {
                $(Record::$v(payload) => payload.write(out),)*
            }
        }
    };
}

messages! {
    /// `SBG_ECOM_LOG_STATUS`: device, communication and aiding status.
    Status, "status", 1, Status;
    /// `SBG_ECOM_LOG_DIAG`: error, warning, information and debug messages.
    Diag, "diag", 48, Diag;
    /// `SBG_ECOM_LOG_SESSION_INFO`: a page of the session information JSON.
    SessionInfo, "sessionInfo", 55, SessionInfo;
    /// `SBG_ECOM_LOG_UTC_TIME`: UTC time reference and clock status.
    UtcTime, "utcTime", 2, UtcTime;
    /// `SBG_ECOM_LOG_PTP_STATUS`: PTP status and metrics.
    PtpStatus, "ptpStatus", 57, PtpStatus;
    /// `SBG_ECOM_LOG_IMU_DATA` (deprecated): synchronous IMU data.
    ImuData, "imuData", 3, ImuData;
    /// `SBG_ECOM_LOG_IMU_SHORT`: IMU data in fixed point, to post-process.
    ImuShort, "imuShort", 44, ImuShort;
    /// `SBG_ECOM_LOG_MAG`: magnetometer data.
    Mag, "mag", 4, Mag;
    /// `SBG_ECOM_LOG_MAG_CALIB`: raw magnetometer calibration data.
    MagCalib, "magCalib", 5, MagCalib;
    /// `SBG_ECOM_LOG_EKF_EULER`: attitude as Euler angles.
    EkfEuler, "ekfEuler", 6, EkfEuler;
    /// `SBG_ECOM_LOG_EKF_QUAT`: attitude as a quaternion.
    EkfQuat, "ekfQuat", 7, EkfQuat;
    /// `SBG_ECOM_LOG_EKF_NAV`: velocity and position.
    EkfNav, "ekfNav", 8, EkfNav;
    /// `SBG_ECOM_LOG_EKF_VEL_BODY`: velocity in the body frame.
    EkfVelBody, "ekfVelBody", 54, EkfVelBody;
    /// `SBG_ECOM_LOG_EKF_ROT_ACCEL_BODY`: compensated rates and accelerations, body.
    EkfRotAccelBody, "ekfRotAccelBody", 52, EkfRotAccel;
    /// `SBG_ECOM_LOG_EKF_ROT_ACCEL_NED`: compensated rates and accelerations, NED.
    EkfRotAccelNed, "ekfRotAccelNed", 53, EkfRotAccel;
    /// `SBG_ECOM_LOG_SHIP_MOTION`: real-time surge, sway, heave.
    ShipMotion, "shipMotion", 9, ShipMotion;
    /// `SBG_ECOM_LOG_SHIP_MOTION_HP`: delayed heave.
    ShipMotionHp, "shipMotionHp", 32, ShipMotion;
    /// `SBG_ECOM_LOG_GPS1_VEL`: GNSS 1 velocity.
    Gps1Vel, "gps1Vel", 13, GnssVel;
    /// `SBG_ECOM_LOG_GPS1_POS`: GNSS 1 position.
    Gps1Pos, "gps1Pos", 14, GnssPos;
    /// `SBG_ECOM_LOG_GPS1_HDT`: GNSS 1 true heading.
    Gps1Hdt, "gps1Hdt", 15, GnssHdt;
    /// `SBG_ECOM_LOG_GPS1_RAW`: GNSS 1 raw data.
    Gps1Raw, "gps1Raw", 31, RawData;
    /// `SBG_ECOM_LOG_GPS1_SAT`: GNSS 1 satellites in view.
    Gps1Sat, "gps1Sat", 50, GnssSat;
    /// `SBG_ECOM_LOG_GPS2_VEL`: GNSS 2 velocity.
    Gps2Vel, "gps2Vel", 16, GnssVel;
    /// `SBG_ECOM_LOG_GPS2_POS`: GNSS 2 position.
    Gps2Pos, "gps2Pos", 17, GnssPos;
    /// `SBG_ECOM_LOG_GPS2_HDT`: GNSS 2 true heading.
    Gps2Hdt, "gps2Hdt", 18, GnssHdt;
    /// `SBG_ECOM_LOG_GPS2_RAW`: GNSS 2 raw data.
    Gps2Raw, "gps2Raw", 38, RawData;
    /// `SBG_ECOM_LOG_GPS2_SAT`: GNSS 2 satellites in view.
    Gps2Sat, "gps2Sat", 51, GnssSat;
    /// `SBG_ECOM_LOG_RTCM_RAW`: the RTCM correction stream received.
    RtcmRaw, "rtcmRaw", 49, RawData;
    /// `SBG_ECOM_LOG_ODO_VEL`: odometer velocity.
    OdoVel, "odoVel", 19, OdoVel;
    /// `SBG_ECOM_LOG_DVL_BOTTOM_TRACK`: DVL bottom tracking.
    DvlBottomTrack, "dvlBottomTrack", 29, Dvl;
    /// `SBG_ECOM_LOG_DVL_WATER_TRACK`: DVL water tracking.
    DvlWaterTrack, "dvlWaterTrack", 30, Dvl;
    /// `SBG_ECOM_LOG_AIR_DATA`: barometric altitude and airspeed.
    AirData, "airData", 36, AirData;
    /// `SBG_ECOM_LOG_USBL`: USBL position.
    Usbl, "usbl", 37, Usbl;
    /// `SBG_ECOM_LOG_DEPTH`: depth sensor.
    Depth, "depth", 47, Depth;
    /// `SBG_ECOM_LOG_EVENT_A`: events on Sync In A.
    EventA, "eventA", 24, Event;
    /// `SBG_ECOM_LOG_EVENT_B`: events on Sync In B.
    EventB, "eventB", 25, Event;
    /// `SBG_ECOM_LOG_EVENT_C`: events on Sync In C.
    EventC, "eventC", 26, Event;
    /// `SBG_ECOM_LOG_EVENT_D`: events on Sync In D.
    EventD, "eventD", 27, Event;
    /// `SBG_ECOM_LOG_EVENT_E`: events on Sync In E.
    EventE, "eventE", 28, Event;
    /// `SBG_ECOM_LOG_EVENT_OUT_A`: Sync Out A pulses.
    EventOutA, "eventOutA", 45, Event;
    /// `SBG_ECOM_LOG_EVENT_OUT_B`: Sync Out B pulses.
    EventOutB, "eventOutB", 46, Event;
}

impl std::fmt::Display for MessageKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for MessageKind {
    type Err = UnknownMessageName;

    fn from_str(name: &str) -> Result<MessageKind, UnknownMessageName> {
        MessageKind::from_name(name).ok_or(UnknownMessageName)
    }
}

/// A name that is none of the [`MessageKind`]s' ([`MessageKind::from_str`](std::str::FromStr)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("unknown sbgECom message name")]
pub struct UnknownMessageName;

/// What is done with a decoded payload of any type, typed: the generic path of the
/// tables, which decode each payload straight into their rows.
pub(crate) trait Visitor {
    /// What the visit gives.
    type Output;
    /// Takes a payload of this kind.
    fn visit<T: Payload + TableRow>(self, kind: MessageKind, payload: &T) -> Self::Output;
}

/// Reads a payload of type `T` and hands it to `visitor`: one function per type and
/// visitor, where the fields read go straight to the visit.
#[inline(never)]
fn read_then_visit<T: Payload + TableRow, V: Visitor>(
    kind: MessageKind,
    c: &mut Cursor<'_>,
    visitor: V,
) -> Result<V::Output, PayloadError> {
    let payload = T::read(c)?;
    Ok(visitor.visit(kind, &payload))
}

/// Decodes the payload of a message of this kind into its typed struct and hands it
/// to `visitor`: [`decode_kind`] without making a [`Record`] (the same layouts, the
/// same errors).
pub(crate) fn decode_visit<V: Visitor>(
    kind: MessageKind,
    payload: &[u8],
    visitor: V,
) -> Result<V::Output, DecodeError> {
    read_visit(kind, &mut Cursor::new(payload), visitor)
        .map_err(|error| decode_error(kind, payload.len(), error))
}

/// Decodes the payload of a message of this class and id.
///
/// # Errors
///
/// [`DecodeError::Unknown`] for a class and id of no [`MessageKind`];
/// [`DecodeError::TooShort`] for a payload shorter than the message's oldest version;
/// [`DecodeError::Invalid`] for a length or count that does not fit the payload.
pub fn decode(class: u8, id: u8, payload: &[u8]) -> Result<Record, DecodeError> {
    let kind = MessageKind::from_ids(class, id).ok_or(DecodeError::Unknown { class, id })?;
    decode_kind(kind, payload)
}

/// Decodes the payload of a message known to be of this kind (see [`decode`]).
///
/// # Errors
///
/// As [`decode`], but for [`DecodeError::Unknown`].
pub fn decode_kind(kind: MessageKind, payload: &[u8]) -> Result<Record, DecodeError> {
    let mut cursor = Cursor::new(payload);
    read_payload(kind, &mut cursor).map_err(|error| decode_error(kind, payload.len(), error))
}

/// The error of a payload of `len` bytes that could not be read.
fn decode_error(kind: MessageKind, len: usize, error: PayloadError) -> DecodeError {
    match error {
        PayloadError::Short if len < kind.min_payload_len() => DecodeError::TooShort {
            kind,
            len,
            min: kind.min_payload_len(),
        },
        PayloadError::Short => DecodeError::Invalid {
            kind,
            reason: "the payload ends inside a repeated group",
        },
        PayloadError::Invalid(reason) => DecodeError::Invalid { kind, reason },
    }
}

/// The class, id and payload of a record: the inverse of [`decode`]. Optional trailing
/// fields are written up to the last one present (see the [`records`](crate::records)
/// module). Raw data, satellite lists and session information pages may exceed 4086
/// bytes: [`svc_protocol::serial::encode_message`] then sends them in large frames.
#[must_use]
pub fn encode(record: &Record) -> (u8, u8, Vec<u8>) {
    let kind = record.kind();
    let mut payload = Vec::with_capacity(kind.min_payload_len() + 16);
    write_payload(record, &mut payload);
    (kind.class(), kind.id(), payload)
}

/// The record's bytes on the wire: one standard frame, or large-frame pages for a
/// payload over 4086 bytes (see [`svc_protocol::serial::try_encode_message`]).
///
/// # Errors
///
/// [`SerialError::TooLong`](svc_protocol::serial::SerialError::TooLong) for a raw
/// buffer over the protocol's message limit (65535 pages).
pub fn encode_frame(
    record: &Record,
    transfer_id: u8,
) -> Result<Vec<u8>, svc_protocol::serial::SerialError> {
    let (class, id, payload) = encode(record);
    svc_protocol::serial::try_encode_message(id, class, &payload, transfer_id)
}
