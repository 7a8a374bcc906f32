//! Reading NMEA 0183: line by line with a cap on the line length, checksums, and the
//! GGA and RMC fields the trajectory needs (see the parent module for the rules).

use std::fs::File;
use std::io::{self, BufRead, BufReader};

use super::{InputFile, MAX_LINE_BYTES, MAX_WARNINGS_PER_FILE, plural};

const KNOT_MS: f64 = 1852.0 / 3600.0;

/// Bytes read from a file at a time.
pub(super) const READ_BUFFER: usize = 64 * 1024;

/// Largest altitude or geoid separation accepted, in metres: far beyond any receiver's
/// range, and small enough that heights and vertical velocities stay finite.
const MAX_HEIGHT_M: f64 = 1.0e6;
/// The fastest speed over ground an RMC may give, knots (a fix keeps its velocity in
/// single precision).
const MAX_SPEED_KNOTS: f64 = 1.0e6;

/// A valid GGA: position, ellipsoidal height and fix quality (1..=9).
#[derive(Clone, Copy, Debug)]
pub(super) struct Gga {
    pub(super) lat: f64,
    pub(super) lon: f64,
    pub(super) height: f64,
    pub(super) quality: u8,
    /// What an inertial solution adds (a unit's `ekfNav` with its `ekfEuler`); `None`
    /// for NMEA.
    pub(super) inertial: Option<Inertial>,
}

/// An inertial solution's attitude and accuracy at a position.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Inertial {
    /// Roll, pitch, heading, degrees.
    pub(super) attitude: [f32; 3],
    /// Horizontal position 1σ (the larger of north and east), m; heading 1σ, degrees.
    pub(super) sigma: [f32; 2],
}

/// A valid RMC with status `A`: position, date (days since 1970-01-01) and north/east velocity.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rmc {
    pub(super) lat: f64,
    pub(super) lon: f64,
    pub(super) day: i64,
    pub(super) velocity: Option<[f64; 2]>,
}

#[derive(Clone, Copy, Debug)]
pub(super) enum Sentence {
    Gga(Gga),
    Rmc(Rmc),
}

/// A usable sentence with its UTC time of day in milliseconds.
#[derive(Clone, Copy, Debug)]
pub(super) struct Record {
    pub(super) tod_ms: i64,
    pub(super) sentence: Sentence,
}

/// What one input file yielded (its usable sentences go to the caller as they are read).
#[derive(Debug)]
pub(super) struct FileScan {
    pub(super) path: String,
    pub(super) sentences: u64,
    pub(super) skipped: u64,
    pub(super) notes: Vec<String>,
    pub(super) valid_fixes: usize,
    /// The antenna's offsets a unit's session gives (binary logs only).
    pub(super) lever_arm: super::solution::LeverArmEstimate,
}

/// Reads one input file line by line ([`scan`]), handing each usable sentence to `found`.
pub(super) fn scan_file(
    input: &InputFile,
    warnings: &mut Vec<String>,
    found: impl FnMut(Record),
) -> FileScan {
    match File::open(&input.location) {
        Ok(file) => {
            let mut reader = BufReader::with_capacity(READ_BUFFER, file);
            // A unit's binary session, or text: told apart by its first bytes.
            let binary = reader.fill_buf().is_ok_and(|start| {
                super::binary::is_binary_log(&start[..start.len().min(super::binary::SNIFF_BYTES)])
            });
            if binary {
                let location = input.location.clone();
                return super::binary::scan_log(
                    &input.path,
                    || {
                        Ok(BufReader::with_capacity(
                            READ_BUFFER,
                            File::open(&location)?,
                        ))
                    },
                    warnings,
                    found,
                );
            }
            scan(&input.path, reader, warnings, found)
        }
        Err(e) => {
            warnings.push(format!("cannot open {}: {e}; file skipped", input.path));
            let mut scan = FileScan::new(&input.path);
            scan.notes.push(format!("cannot be opened: {e}"));
            scan
        }
    }
}

impl FileScan {
    pub(super) fn new(path: &str) -> Self {
        Self {
            path: path.to_owned(),
            sentences: 0,
            skipped: 0,
            notes: Vec::new(),
            valid_fixes: 0,
            lever_arm: super::solution::LeverArmEstimate::default(),
        }
    }
}

/// Reads `reader` line by line (at most [`MAX_LINE_BYTES`] + 1 bytes of a line are kept,
/// in one buffer reused for every line), handing each usable sentence to `found` in
/// order; warnings about bad lines go to `warnings`. Nothing of the text is kept.
pub(super) fn scan(
    path: &str,
    mut reader: impl BufRead,
    warnings: &mut Vec<String>,
    mut found: impl FnMut(Record),
) -> FileScan {
    let mut scan = FileScan::new(path);
    let mut line = Vec::new();
    let (mut line_no, mut reported, mut unreported) = (0u64, 0usize, 0u64);
    loop {
        match read_line_capped(&mut reader, &mut line) {
            Ok(true) => line_no += 1,
            Ok(false) => break,
            Err(e) => {
                warnings.push(format!("read error in {path} after line {line_no}: {e}"));
                break;
            }
        }
        let text = line.trim_ascii();
        if text.first() != Some(&b'$') {
            continue;
        }
        scan.sentences += 1;
        let parsed = if line.len() > MAX_LINE_BYTES {
            Err(format!("line longer than {MAX_LINE_BYTES} bytes"))
        } else {
            match std::str::from_utf8(text) {
                Ok(sentence) => parse_sentence(sentence),
                Err(_) => Err("not valid UTF-8".to_string()),
            }
        };
        match parsed {
            Ok(Some(record)) => found(record),
            Ok(None) => {}
            Err(reason) => {
                scan.skipped += 1;
                if reported < MAX_WARNINGS_PER_FILE {
                    reported += 1;
                    warnings.push(format!("{path}:{line_no}: {reason}; sentence skipped"));
                } else {
                    unreported += 1;
                }
            }
        }
    }
    if unreported > 0 {
        warnings.push(format!("{unreported} more bad lines skipped in {path}"));
    }
    if scan.sentences == 0 {
        scan.notes.push(format!(
            "no GNSS sentences in {path} ({})",
            plural(line_no, "line")
        ));
    }
    scan
}

/// Reads the next line without its `\n` into `buf`, keeping at most `MAX_LINE_BYTES + 1` bytes
/// (more means "too long") and discarding the rest. Returns `Ok(false)` at the end of input.
fn read_line_capped(reader: &mut impl BufRead, buf: &mut Vec<u8>) -> io::Result<bool> {
    buf.clear();
    let mut read_any = false;
    loop {
        let chunk = match reader.fill_buf() {
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok(read_any);
        }
        read_any = true;
        let newline = chunk.iter().position(|&b| b == b'\n');
        let end = newline.unwrap_or(chunk.len());
        let room = (MAX_LINE_BYTES + 1).saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..end.min(room)]);
        reader.consume(newline.map_or(end, |n| n + 1));
        if newline.is_some() {
            return Ok(true);
        }
    }
}

/// Parses one `$...` line: `Ok(Some)` for a usable GGA/RMC, `Ok(None)` for another valid
/// sentence type, `Err(reason)` for a sentence to skip with a warning.
fn parse_sentence(line: &str) -> Result<Option<Record>, String> {
    let body = line.strip_prefix('$').unwrap_or(line);
    let data = match body.split_once('*') {
        None => body,
        Some((data, given)) => {
            let given = given.trim();
            let expected = match given.as_bytes() {
                [a, b] if a.is_ascii_hexdigit() && b.is_ascii_hexdigit() => {
                    u8::from_str_radix(given, 16).ok()
                }
                _ => None,
            };
            let Some(expected) = expected else {
                return Err(format!("malformed checksum {given:?}"));
            };
            let computed = data.bytes().fold(0u8, |acc, b| acc ^ b);
            if computed != expected {
                return Err(format!(
                    "checksum mismatch (computed {computed:02X}, sentence has {given})"
                ));
            }
            data
        }
    };
    let fields: Vec<&str> = data.split(',').collect();
    let address = fields.first().copied().unwrap_or("");
    let kind = if address.len() == 5 && address.is_ascii() {
        &address[2..]
    } else {
        ""
    };
    let sentence = match kind {
        "GGA" => Sentence::Gga(parse_gga(&fields)?),
        "RMC" => Sentence::Rmc(parse_rmc(&fields)?),
        _ => return Ok(None),
    };
    let tod_ms =
        parse_time(field(&fields, 1)).ok_or_else(|| invalid(kind, "time", field(&fields, 1)))?;
    Ok(Some(Record { tod_ms, sentence }))
}

/// GGA: 1 time, 2-3 latitude, 4-5 longitude, 6 quality, 7 satellites, 8 HDOP, 9 altitude,
/// 11 geoid separation.
fn parse_gga(f: &[&str]) -> Result<Gga, String> {
    let quality = field(f, 6);
    let quality = match quality.parse::<u8>() {
        Ok(0) => return Err("GGA without fix (quality 0)".to_string()),
        Ok(q) if q <= 9 && quality.len() == 1 => q,
        _ => return Err(invalid("GGA", "fix quality", quality)),
    };
    let (lat, lon) = parse_position("GGA", f, 2)?;
    let sats = field(f, 7);
    if !sats.is_empty() && unsigned(sats).is_none() {
        return Err(invalid("GGA", "satellite count", sats));
    }
    let hdop = field(f, 8);
    if !hdop.is_empty() && unsigned(hdop).is_none() {
        return Err(invalid("GGA", "HDOP", hdop));
    }
    let height = |s: &str| signed(s).filter(|v| v.abs() <= MAX_HEIGHT_M);
    let altitude = height(field(f, 9)).ok_or_else(|| invalid("GGA", "altitude", field(f, 9)))?;
    let separation = match field(f, 11) {
        "" => 0.0,
        s => height(s).ok_or_else(|| invalid("GGA", "geoid separation", s))?,
    };
    Ok(Gga {
        lat,
        lon,
        height: altitude + separation,
        quality,
        inertial: None,
    })
}

/// RMC: 1 time, 2 status, 3-4 latitude, 5-6 longitude, 7 speed (knots), 8 course, 9 date.
fn parse_rmc(f: &[&str]) -> Result<Rmc, String> {
    match field(f, 2) {
        "A" => {}
        "V" => return Err("RMC without fix (status V)".to_string()),
        s => return Err(invalid("RMC", "status", s)),
    }
    let (lat, lon) = parse_position("RMC", f, 3)?;
    let speed = match field(f, 7) {
        "" => None,
        s => Some(
            unsigned(s)
                .filter(|v| *v <= MAX_SPEED_KNOTS)
                .ok_or_else(|| invalid("RMC", "speed", s))?
                * KNOT_MS,
        ),
    };
    let course = match field(f, 8) {
        "" => None,
        s => Some(
            unsigned(s)
                .filter(|c| *c <= 360.0)
                .ok_or_else(|| invalid("RMC", "course", s))?,
        ),
    };
    let day = parse_date(field(f, 9)).ok_or_else(|| invalid("RMC", "date", field(f, 9)))?;
    let velocity = match (speed, course) {
        (Some(v), Some(c)) => Some([v * c.to_radians().cos(), v * c.to_radians().sin()]),
        (Some(0.0), None) => Some([0.0, 0.0]),
        _ => None,
    };
    Ok(Rmc {
        lat,
        lon,
        day,
        velocity,
    })
}

fn field<'a>(fields: &[&'a str], index: usize) -> &'a str {
    fields.get(index).copied().unwrap_or("")
}

fn invalid(kind: &str, name: &str, value: &str) -> String {
    if value.is_empty() {
        format!("{kind} with missing {name}")
    } else {
        format!("{kind} with invalid {name} {value:?}")
    }
}

/// Latitude (`ddmm.mmmm`, `N`/`S`) at `f[at..at + 2]`, longitude (`dddmm.mmmm`, `E`/`W`) after.
fn parse_position(kind: &str, f: &[&str], at: usize) -> Result<(f64, f64), String> {
    let angle = |i: usize, name: &str, max: f64, hemispheres: [&str; 2]| {
        parse_angle(field(f, i), field(f, i + 1), max, hemispheres).ok_or_else(|| {
            let text = format!("{},{}", field(f, i), field(f, i + 1));
            invalid(kind, name, if text == "," { "" } else { &text })
        })
    };
    let lat = angle(at, "latitude", 90.0, ["N", "S"])?;
    let lon = angle(at + 2, "longitude", 180.0, ["E", "W"])?;
    Ok((lat, lon))
}

/// `[d]ddmm.mmmm` with hemisphere `[positive, negative]` → signed degrees, at most `max`.
pub(super) fn parse_angle(
    value: &str,
    hemisphere: &str,
    max: f64,
    [positive, negative]: [&str; 2],
) -> Option<f64> {
    // Split the text rather than the number so that the minutes keep their exact decimal value.
    let split = value.find('.').unwrap_or(value.len()).checked_sub(2)?;
    let degrees = match value.get(..split)? {
        "" => 0.0,
        text => unsigned(text)?,
    };
    let minutes = unsigned(value.get(split..)?)?;
    let angle = degrees + minutes / 60.0;
    if minutes >= 60.0 || angle > max {
        None
    } else if hemisphere == positive {
        Some(angle)
    } else if hemisphere == negative {
        Some(-angle)
    } else {
        None
    }
}

/// `hhmmss[.sss]` → milliseconds since midnight.
pub(super) fn parse_time(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() < 6 || !b[..6].iter().all(u8::is_ascii_digit) || b.get(6).is_some_and(|c| *c != b'.')
    {
        return None;
    }
    let two = |i: usize| i64::from(b[i] - b'0') * 10 + i64::from(b[i + 1] - b'0');
    let (hours, minutes) = (two(0), two(2));
    let seconds = unsigned(s.get(4..)?)?;
    if hours >= 24 || minutes >= 60 || seconds >= 60.0 {
        return None;
    }
    Some((hours * 3600 + minutes * 60) * 1000 + (seconds * 1000.0).round() as i64)
}

/// `ddmmyy` → days since 1970-01-01 (years 80-99 are 19xx, 00-79 are 20xx).
pub(super) fn parse_date(s: &str) -> Option<i64> {
    if s.len() != 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| s.get(range).and_then(|p| p.parse::<u32>().ok());
    let (day, month, yy) = (number(0..2)?, number(2..4)?, number(4..6)?);
    let year = if yy >= 80 { 1900 + yy } else { 2000 + yy };
    let date = chrono::NaiveDate::from_ymd_opt(i32::try_from(year).ok()?, month, day)?;
    Some(i64::from(date.to_epoch_days()))
}

/// A plain decimal number `123.45` (no sign, exponent, `inf` or `nan`), finite: more
/// digits than an `f64` can hold are refused, not read as infinity.
pub(super) fn unsigned(s: &str) -> Option<f64> {
    let digits = s.bytes().filter(u8::is_ascii_digit).count();
    let dots = s.bytes().filter(|b| *b == b'.').count();
    if digits == 0 || dots > 1 || digits + dots != s.len() {
        return None;
    }
    s.parse().ok().filter(|v: &f64| v.is_finite())
}

pub(super) fn signed(s: &str) -> Option<f64> {
    match s.strip_prefix('-') {
        Some(rest) => unsigned(rest).map(|v| -v),
        None => unsigned(s),
    }
}
