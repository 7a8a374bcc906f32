//! Hand-built frames checked field by field against the vendor's layouts
//! (`doc/binaryMessages.md`, `src/logs/*.c` of SBG-Systems/sbgECom 5.2).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is a failure

use svc_logs::records::{
    Diag, DiagType, EkfEuler, EkfNav, EkfQuat, GnssIfmStatus, GnssOsnmaStatus, GnssPos,
    GnssPosStatus, GnssPosType, GnssSat, ImuData, ImuShort, RawData, SatHealthStatus,
    SatTrackingStatus, SessionInfo, ShipMotion, SolutionMode, Status, UtcStatus, UtcTime,
    imu_status, solution_mode, solution_status,
};
use svc_logs::{
    DecodeError, Fault, LogDecoder, LogReader, MessageKind, Record, SessionInfoAssembler, decode,
    encode, encode_frame,
};
use svc_protocol::serial::{CLASS_REST, SerialError, encode_message};

/// A payload written field by field.
#[derive(Default)]
struct Payload(Vec<u8>);

impl Payload {
    fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    fn i8(self, v: i8) -> Self {
        self.u8(v as u8)
    }
    fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn i16(mut self, v: i16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn i32(mut self, v: i32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f32(mut self, v: f32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f64(mut self, v: f64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn bytes(mut self, v: &[u8]) -> Self {
        self.0.extend_from_slice(v);
        self
    }
}

/// The one record of a frame of class 0, through the streaming decoder.
fn one_record(id: u8, payload: &[u8]) -> Record {
    let frame = encode_message(id, 0x00, payload, 0);
    let mut decoder = LogDecoder::new();
    decoder.feed(&frame);
    decoder.finish();
    let record = decoder.next_record().expect("a record");
    assert!(decoder.next_record().is_none());
    assert_eq!(decoder.stats().records, 1, "{:?}", decoder.faults());
    // The inverse gives the same bytes back.
    let (class, back_id, back) = encode(&record);
    assert_eq!((class, back_id), (0, id));
    assert_eq!(back, payload, "{record:?}");
    record
}

#[test]
fn imu_data() {
    let p = Payload::default()
        .u32(123_456)
        .u16(0x03FF)
        .f32(0.1)
        .f32(-0.2)
        .f32(9.81)
        .f32(0.01)
        .f32(0.02)
        .f32(-0.03)
        .f32(35.5)
        .f32(1.1)
        .f32(1.2)
        .f32(1.3)
        .f32(2.1)
        .f32(2.2)
        .f32(2.3);
    assert_eq!(p.0.len(), 58);
    let Record::ImuData(imu) = one_record(3, &p.0) else {
        panic!("not imuData")
    };
    assert_eq!(
        imu,
        ImuData {
            timestamp: 123_456,
            status: 0x03FF,
            accelerometers: [0.1, -0.2, 9.81],
            gyroscopes: [0.01, 0.02, -0.03],
            temperature: 35.5,
            delta_velocity: [1.1, 1.2, 1.3],
            delta_angle: [2.1, 2.2, 2.3],
        }
    );
    assert_ne!(imu.status & imu_status::GYROS_IN_RANGE, 0);
}

#[test]
fn imu_short_scales() {
    let p = Payload::default()
        .u32(7)
        .u16(imu_status::GYROS_USE_HIGH_SCALE)
        .i32(1_048_576)
        .i32(-2_097_152)
        .i32(0)
        .i32(12_304_174)
        .i32(0)
        .i32(-12_304_174)
        .i16(256 * 25);
    assert_eq!(p.0.len(), 32);
    let Record::ImuShort(imu) = one_record(44, &p.0) else {
        panic!("not imuShort")
    };
    assert_eq!(imu.delta_velocity, [1_048_576, -2_097_152, 0]);
    assert_eq!(imu.accelerations(), [1.0, -2.0, 0.0]);
    assert_eq!(imu.rates(), [1.0, 0.0, -1.0]);
    assert_eq!(imu.temperature_celsius(), 25.0);
    let standard = ImuShort {
        status: 0,
        delta_angle: [67_108_864, 0, 0],
        ..imu
    };
    assert_eq!(standard.rates()[0], 1.0);
}

#[test]
fn ekf_nav() {
    let p = Payload::default()
        .u32(1_000_000)
        .f32(1.0)
        .f32(2.0)
        .f32(-0.5)
        .f32(0.1)
        .f32(0.2)
        .f32(0.3)
        .f64(48.858_37)
        .f64(2.294_48)
        .f64(35.25)
        .f32(44.5)
        .f32(0.01)
        .f32(0.02)
        .f32(0.03)
        .u32(4 | solution_status::POSITION_VALID | solution_status::GPS1_POS_USED);
    assert_eq!(p.0.len(), 72);
    let Record::EkfNav(nav) = one_record(8, &p.0) else {
        panic!("not ekfNav")
    };
    assert_eq!(
        nav,
        EkfNav {
            timestamp: 1_000_000,
            velocity: [1.0, 2.0, -0.5],
            velocity_std: [0.1, 0.2, 0.3],
            position: [48.858_37, 2.294_48, 35.25],
            undulation: 44.5,
            position_std: [0.01, 0.02, 0.03],
            status: 4 | (1 << 7) | (1 << 11),
        }
    );
    assert_eq!(solution_mode(nav.status), Some(SolutionMode::NavPosition));
}

#[test]
fn ekf_euler_both_versions() {
    let base = Payload::default()
        .u32(5)
        .f32(0.1)
        .f32(-0.2)
        .f32(3.0)
        .f32(0.001)
        .f32(0.002)
        .f32(0.003)
        .u32(2);
    assert_eq!(base.0.len(), 32);
    let Record::EkfEuler(old) = one_record(6, &base.0) else {
        panic!("not ekfEuler")
    };
    assert_eq!(
        old,
        EkfEuler {
            timestamp: 5,
            euler: [0.1, -0.2, 3.0],
            euler_std: [0.001, 0.002, 0.003],
            status: 2,
            mag_declination: None,
            mag_inclination: None,
        }
    );
    assert_eq!(solution_mode(old.status), Some(SolutionMode::Ahrs));
    let full = base.f32(0.05).f32(1.1);
    assert_eq!(full.0.len(), 40);
    let Record::EkfEuler(new) = one_record(6, &full.0) else {
        panic!("not ekfEuler")
    };
    assert_eq!(
        (new.mag_declination, new.mag_inclination),
        (Some(0.05), Some(1.1))
    );
}

#[test]
fn ekf_quat() {
    let p = Payload::default()
        .u32(9)
        .f32(1.0)
        .f32(0.0)
        .f32(0.5)
        .f32(-0.5)
        .f32(0.1)
        .f32(0.2)
        .f32(0.3)
        .u32(0x31)
        .f32(-0.01)
        .f32(0.9);
    assert_eq!(p.0.len(), 44);
    let Record::EkfQuat(q) = one_record(7, &p.0) else {
        panic!("not ekfQuat")
    };
    assert_eq!(
        q,
        EkfQuat {
            timestamp: 9,
            quaternion: [1.0, 0.0, 0.5, -0.5],
            euler_std: [0.1, 0.2, 0.3],
            status: 0x31,
            mag_declination: Some(-0.01),
            mag_inclination: Some(0.9),
        }
    );
}

#[test]
fn utc_time_both_versions() {
    // Clock valid (3 << 1), UTC initialized (2 << 6), PPS present.
    let status = 1 | (3 << 1) | (1 << 5) | (2 << 6);
    let base = Payload::default()
        .u32(77)
        .u16(status)
        .u16(2024)
        .u8(2)
        .u8(29)
        .u8(23)
        .u8(59)
        .u8(60)
        .u32(999_999_999)
        .u32(345_600_000);
    assert_eq!(base.0.len(), 21);
    let Record::UtcTime(old) = one_record(2, &base.0) else {
        panic!("not utcTime")
    };
    assert_eq!(
        old,
        UtcTime {
            timestamp: 77,
            status,
            year: 2024,
            month: 2,
            day: 29,
            hour: 23,
            minute: 59,
            second: 60,
            nanosecond: 999_999_999,
            gps_tow: 345_600_000,
            clk_bias_std: None,
            clk_sf_error_std: None,
            clk_residual_error: None,
        }
    );
    assert_eq!(old.utc_status(), Some(UtcStatus::Initialized));
    assert_eq!(
        old.clock_state(),
        Some(svc_logs::records::ClockState::Valid)
    );
    let full = base.f32(1e-7).f32(0.5).f32(-2e-8);
    assert_eq!(full.0.len(), 33);
    let Record::UtcTime(new) = one_record(2, &full.0) else {
        panic!("not utcTime")
    };
    assert_eq!(
        (
            new.clk_bias_std,
            new.clk_sf_error_std,
            new.clk_residual_error
        ),
        (Some(1e-7), Some(0.5), Some(-2e-8))
    );
}

#[test]
fn gnss_pos_three_versions() {
    // Solution computed, RTK integer, GPS L1 and Galileo E1 used.
    let status = (7 << 6) | GnssPos::GPS_L1_USED | GnssPos::GAL_E1_USED;
    let base = Payload::default()
        .u32(100)
        .u32(status)
        .u32(200_000)
        .f64(45.5)
        .f64(-73.25)
        .f64(120.5)
        .f32(-30.0)
        .f32(0.02)
        .f32(0.03)
        .f32(0.05);
    assert_eq!(base.0.len(), 52);
    for id in [14, 17] {
        let (Record::Gps1Pos(old) | Record::Gps2Pos(old)) = one_record(id, &base.0) else {
            panic!("not gpsPos")
        };
        assert_eq!(old.pos_status(), Some(GnssPosStatus::SolComputed));
        assert_eq!(old.pos_type(), Some(GnssPosType::RtkInt));
        assert_eq!(
            (old.latitude, old.longitude, old.altitude),
            (45.5, -73.25, 120.5)
        );
        assert_eq!(old.num_sv_used, None);
        assert_eq!(old.ifm_status(), Some(GnssIfmStatus::Unknown));
    }
    let v14 = base.u8(17).u16(42).u16(150);
    assert_eq!(v14.0.len(), 57);
    let Record::Gps1Pos(mid) = one_record(14, &v14.0) else {
        panic!("not gps1Pos")
    };
    assert_eq!(
        (mid.num_sv_used, mid.base_station_id, mid.differential_age),
        (Some(17), Some(42), Some(150))
    );
    assert_eq!((mid.num_sv_tracked, mid.status_ext), (None, None));
    // Interference clean (2), spoofing clean (2), OSNMA valid (4).
    let v40 = v14.u8(24).u32(2 | (2 << 4) | (4 << 8));
    assert_eq!(v40.0.len(), 62);
    let Record::Gps1Pos(new) = one_record(14, &v40.0) else {
        panic!("not gps1Pos")
    };
    assert_eq!(
        new,
        GnssPos {
            timestamp: 100,
            status,
            time_of_week: 200_000,
            latitude: 45.5,
            longitude: -73.25,
            altitude: 120.5,
            undulation: -30.0,
            latitude_acc: 0.02,
            longitude_acc: 0.03,
            altitude_acc: 0.05,
            num_sv_used: Some(17),
            base_station_id: Some(42),
            differential_age: Some(150),
            num_sv_tracked: Some(24),
            status_ext: Some(0x422),
        }
    );
    assert_eq!(new.osnma_status(), Some(GnssOsnmaStatus::Valid));
}

#[test]
fn gnss_sat_list() {
    // Two satellites: GPS 5 (constellation 0) with two signals, Galileo 11
    // (constellation 2, say) with none. Tracking used (5), healthy (1), rising (2).
    let flags = 5 | (1 << 3) | (2 << 5) | (2 << 7);
    let p = Payload::default()
        .u32(555)
        .u32(0)
        .u8(2)
        .u8(5)
        .i8(-3)
        .u16(270)
        .u16(flags)
        .u8(2)
        .bytes(&[1, 5 | (1 << 3) | (1 << 5), 45])
        .bytes(&[2, 3, 0])
        .u8(11)
        .i8(89)
        .u16(0)
        .u16(0)
        .u8(0);
    let Record::Gps2Sat(list) = one_record(51, &p.0) else {
        panic!("not gps2Sat")
    };
    assert_eq!(list.timestamp, 555);
    assert_eq!(list.satellites.len(), 2);
    let sat = &list.satellites[0];
    assert_eq!((sat.id, sat.elevation, sat.azimuth), (5, -3, 270));
    assert_eq!(sat.tracking_status(), Some(SatTrackingStatus::TrackingUsed));
    assert_eq!(sat.health_status(), Some(SatHealthStatus::Healthy));
    assert_eq!(
        sat.elevation_status(),
        Some(svc_logs::records::SatElevationStatus::Rising)
    );
    assert_eq!(sat.constellation_id(), 2);
    assert_eq!(sat.signals.len(), 2);
    assert_eq!((sat.signals[0].id, sat.signals[0].snr), (1, 45));
    assert!(sat.signals[0].snr_valid());
    assert!(!sat.signals[1].snr_valid());
    assert_eq!(
        sat.signals[1].tracking_status(),
        Some(SatTrackingStatus::TrackingNotUsed)
    );
    assert_eq!(
        (list.satellites[1].id, list.satellites[1].elevation),
        (11, 89)
    );
    assert!(list.satellites[1].signals.is_empty());

    // A list cut inside a satellite is refused, not read short.
    let cut = &p.0[..p.0.len() - 2];
    assert!(matches!(
        decode(0, 51, cut),
        Err(DecodeError::Invalid {
            kind: MessageKind::Gps2Sat,
            ..
        })
    ));
    assert_eq!(
        decode(0, 50, &p.0[..8]),
        Err(DecodeError::TooShort {
            kind: MessageKind::Gps1Sat,
            len: 8,
            min: 9
        })
    );
    let _ = GnssSat::default();
}

#[test]
fn diag_text() {
    let p = Payload::default()
        .u32(31)
        .u8(1)
        .u8(4)
        .bytes(b"GNSS antenna disconnected\0");
    let Record::Diag(diag) = one_record(48, &p.0) else {
        panic!("not diag")
    };
    assert_eq!(
        diag,
        Diag {
            timestamp: 31,
            kind: 1,
            error_code: 4,
            message: "GNSS antenna disconnected".into(),
        }
    );
    assert_eq!(diag.diag_type(), Some(DiagType::Warning));
    // Without its NUL, and with bytes after it: the text up to the NUL.
    let Ok(Record::Diag(bare)) = decode(0, 48, &p.0[..p.0.len() - 1]) else {
        panic!("not diag")
    };
    assert_eq!(bare.message, "GNSS antenna disconnected");
    let mut after = p.0.clone();
    after.extend_from_slice(b"junk");
    let Ok(Record::Diag(cut)) = decode(0, 48, &after) else {
        panic!("not diag")
    };
    assert_eq!(cut.message, "GNSS antenna disconnected");
}

#[test]
fn status_versions() {
    let base = Payload::default()
        .u32(1)
        .u16(0x7F)
        .u16(0x3)
        .u32((2 << 28) | 1)
        .u32(0x1)
        .u32(0)
        .u16(0);
    assert_eq!(base.0.len(), 22);
    let Record::Status(old) = one_record(1, &base.0) else {
        panic!("not status")
    };
    assert_eq!((old.uptime, old.cpu_usage), (None, None));
    assert!(old.general(Status::GENERAL_MAIN_POWER_OK | Status::GENERAL_CPU_OK));
    assert!(old.aiding(Status::AIDING_GPS1_POS_RECV));
    assert_eq!(
        old.can_bus_status(),
        Some(svc_logs::records::CanBusStatus::Ok)
    );
    let full = base.u32(3600).u8(42);
    let Record::Status(new) = one_record(1, &full.0) else {
        panic!("not status")
    };
    assert_eq!((new.uptime, new.cpu_usage), (Some(3600), Some(42)));
}

#[test]
fn ship_motion_versions() {
    let base = Payload::default()
        .u32(1)
        .f32(8.0)
        .f32(0.1)
        .f32(0.2)
        .f32(-0.3)
        .f32(0.0)
        .f32(0.0)
        .f32(0.5);
    assert_eq!(base.0.len(), 32);
    let Record::ShipMotionHp(old) = one_record(32, &base.0) else {
        panic!("not shipMotionHp")
    };
    assert_eq!((old.ship_vel, old.status), (None, None));
    let full = base
        .f32(0.0)
        .f32(0.0)
        .f32(0.25)
        .u16(ShipMotion::HEAVE_VALID);
    assert_eq!(full.0.len(), 46);
    let Record::ShipMotion(new) = one_record(9, &full.0) else {
        panic!("not shipMotion")
    };
    assert_eq!(new.ship_vel, Some([0.0, 0.0, 0.25]));
    assert_eq!(new.status, Some(ShipMotion::HEAVE_VALID));
}

#[test]
fn session_info_pages_assemble() {
    let json = br#"{"device":{"serialNumber":"000123"},"settings":{"output":{}}}"#;
    let pages: Vec<&[u8]> = json.chunks(20).collect();
    let mut assembler = SessionInfoAssembler::new();
    let mut document = None;
    for (index, piece) in pages.iter().enumerate() {
        let p = Payload::default()
            .u16(index as u16)
            .u16(pages.len() as u16)
            .u16(piece.len() as u16)
            .bytes(piece);
        let Record::SessionInfo(page) = one_record(55, &p.0) else {
            panic!("not sessionInfo")
        };
        assert_eq!(
            page,
            SessionInfo {
                page_index: index as u16,
                page_count: pages.len() as u16,
                data: piece.to_vec(),
            }
        );
        document = assembler.push(&page);
    }
    assert_eq!(document.as_deref(), Some(&json[..]));
    // A size over the payload, an index not below the count: refused.
    let bad = Payload::default().u16(0).u16(1).u16(10).bytes(b"short");
    assert!(matches!(
        decode(0, 55, &bad.0),
        Err(DecodeError::Invalid { .. })
    ));
    let bad = Payload::default().u16(2).u16(2).u16(0);
    assert!(matches!(
        decode(0, 55, &bad.0),
        Err(DecodeError::Invalid { .. })
    ));
}

#[test]
fn every_kind_min_length() {
    assert_eq!(MessageKind::ALL.len(), 41);
    for &kind in MessageKind::ALL {
        assert_eq!(MessageKind::from_name(kind.name()), Some(kind));
        assert_eq!(kind.name().parse::<MessageKind>(), Ok(kind));
        assert_eq!(MessageKind::from_ids(0, kind.id()), Some(kind));
        assert_eq!(MessageKind::from_ids(1, kind.id()), None);
        let min = kind.min_payload_len();
        // The oldest version, zeros (a session page of count 0 is invalid: count 1).
        let mut payload = vec![0; min];
        if kind == MessageKind::SessionInfo {
            payload[2] = 1;
        }
        let record = decode(0, kind.id(), &payload).unwrap_or_else(|e| panic!("{kind}: {e}"));
        assert_eq!(record.kind(), kind);
        if min > 0 {
            assert_eq!(
                decode(0, kind.id(), &payload[..min - 1]),
                Err(DecodeError::TooShort {
                    kind,
                    len: min - 1,
                    min
                })
            );
        }
    }
    // Ids are distinct.
    let mut ids: Vec<u8> = MessageKind::ALL.iter().map(|k| k.id()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 41);
    assert_eq!(MessageKind::from_name("fastImu"), None);
}

#[test]
fn unknown_invalid_and_truncated_are_counted_and_located() {
    let good = encode_frame(&Record::EventB(Default::default()), 0).unwrap();
    let rest = encode_message(48, CLASS_REST, b"/api/v1/info\0\0", 0);
    let short = encode_message(8, 0, &[0; 71], 0);
    let mut bad = good.clone();
    let crc = bad.len() - 3;
    bad[crc] ^= 0x55;
    let mut stream = Vec::new();
    stream.extend_from_slice(&good);
    let rest_at = stream.len() as u64;
    stream.extend_from_slice(&rest);
    let short_at = stream.len() as u64;
    stream.extend_from_slice(&short);
    let bad_at = stream.len() as u64;
    stream.extend_from_slice(&bad);
    let second_at = stream.len() as u64;
    stream.extend_from_slice(&good);
    let tail_at = stream.len() as u64;
    stream.extend_from_slice(&good[..10]);

    let mut reader = LogReader::with_chunk_len(stream.as_slice(), 7);
    let mut offsets = Vec::new();
    while let Some(located) = reader.next_located().unwrap() {
        assert_eq!(located.record.kind(), MessageKind::EventB);
        offsets.push(located.offset);
    }
    assert_eq!(offsets, vec![0, second_at]);
    let s = reader.stats();
    assert_eq!(
        (
            s.records,
            s.unknown,
            s.invalid_payload,
            s.bad_crc,
            s.truncated
        ),
        (2, 1, 1, 1, 1)
    );
    assert_eq!(s.skipped_bytes, bad.len() as u64 + 10);
    assert_eq!(s.bytes, stream.len() as u64);
    assert_eq!(s.frame_bytes + s.skipped_bytes + s.buffered_bytes, s.bytes);
    assert_eq!(s.buffered_bytes, 0);
    assert_eq!(
        reader.faults(),
        &[
            Fault::Unknown {
                offset: rest_at,
                class: CLASS_REST,
                id: 48
            },
            Fault::InvalidPayload {
                offset: short_at,
                error: DecodeError::TooShort {
                    kind: MessageKind::EkfNav,
                    len: 71,
                    min: 72
                }
            },
            reader.faults()[2].clone(),
            Fault::Skipped {
                offset: bad_at,
                len: bad.len() as u64
            },
            Fault::BadFrame {
                offset: tail_at,
                error: SerialError::Truncated {
                    needed: good.len(),
                    found: 10
                }
            },
            Fault::Skipped {
                offset: tail_at,
                len: 10
            },
        ]
    );
    assert!(matches!(
        reader.faults()[2],
        Fault::BadFrame {
            offset,
            error: SerialError::BadCrc { .. }
        } if offset == bad_at
    ));
}

#[test]
fn large_raw_messages_over_several_pages() {
    let raw: Vec<u8> = (0..10_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let rtcm: Vec<u8> = (0..4_087u32).map(|i| (i % 256) as u8).collect();
    let mut stream = encode_frame(&Record::Gps1Raw(RawData { data: raw.clone() }), 3).unwrap();
    // Three large-frame pages of 14 bytes of overhead each.
    assert_eq!(stream.len(), 10_000 + 3 * 14);
    stream.extend(encode_frame(&Record::RtcmRaw(RawData { data: rtcm.clone() }), 4).unwrap());
    let records: Vec<Record> = LogReader::with_chunk_len(stream.as_slice(), 1000)
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        records,
        vec![
            Record::Gps1Raw(RawData { data: raw }),
            Record::RtcmRaw(RawData { data: rtcm })
        ]
    );
}
