//! NMEA 0183 sentences and a realistic GNSS track, the input files of processings.

/// `$body*hh` with the XOR checksum of the bytes of `body`.
pub fn nmea_sentence(body: &str) -> String {
    let checksum = body.bytes().fold(0u8, |acc, b| acc ^ b);
    format!("${body}*{checksum:02X}")
}

/// An angle in degrees as NMEA writes it: `degree_digits` digits of whole degrees,
/// then the minutes with six decimals (`4851.000000` for 48.85).
pub fn nmea_angle(value: f64, degree_digits: usize) -> String {
    let degrees = value.trunc();
    let minutes = (value - degrees) * 60.0;
    format!(
        "{:0width$}{minutes:09.6}",
        degrees as u32,
        width = degree_digits
    )
}

/// One GGA and one RMC sentence per second for `fixes` seconds, starting 2024-06-15
/// 10:30:00 UTC near 48.85 N, 2.35 E, moving north-east at about 3 knots; each
/// sentence ends with CR LF.
pub fn nmea_track(fixes: usize) -> String {
    let mut out = String::new();
    for i in 0..fixes {
        let t = 10 * 3600 + 30 * 60 + i;
        let time = format!("{:02}{:02}{:02}.00", t / 3600, (t / 60) % 60, t % 60);
        let lat = nmea_angle(48.85 + i as f64 * 0.000_01, 2);
        let lon = nmea_angle(2.35 + i as f64 * 0.000_015, 3);
        let height = 35.0 + i as f64 * 0.01;
        for body in [
            format!("GPGGA,{time},{lat},N,{lon},E,1,12,0.8,{height:.3},M,47.000,M,,"),
            format!("GPRMC,{time},A,{lat},N,{lon},E,3.000,45.00,150624,,,A"),
        ] {
            out.push_str(&nmea_sentence(&body));
            out.push_str("\r\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_carry_their_checksum() {
        // The checksum of a published example sentence.
        assert_eq!(
            nmea_sentence("GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
            "$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47"
        );
    }

    #[test]
    fn angles_are_degrees_then_minutes() {
        assert_eq!(nmea_angle(48.85, 2), "4851.000000");
        assert_eq!(nmea_angle(2.35, 3), "00221.000000");
    }

    #[test]
    fn a_track_has_two_sentences_a_fix() {
        let track = nmea_track(3);
        let lines: Vec<&str> = track.split_terminator("\r\n").collect();
        assert_eq!(lines.len(), 6);
        assert!(lines[0].starts_with("$GPGGA,103000.00,4851.000000,N,00221.000000,E,"));
        assert!(lines[5].starts_with("$GPRMC,103002.00,A,"));
        assert!(track.ends_with("\r\n"));
    }
}
