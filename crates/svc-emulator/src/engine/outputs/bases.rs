//! Base stations (`processing.bases[].data`): the time their RINEX observation files
//! cover, read from the header (`TIME OF FIRST OBS`, `TIME OF LAST OBS`) and, without
//! the latter, from the epoch lines of plain RINEX 2 and 3 (a Hatanaka-compressed file,
//! `.d`/`.crx`, gives only what its header says). A base whose data does not cover the
//! rover's time, a file that is not a RINEX observation file, or one not among the
//! inputs is a warning of the processing, as the service reports it; the processing
//! goes on.

use std::io::{BufRead, BufReader};

use super::InputFile;
use super::writers::iso_time;

/// GPS time − UTC, ms (RINEX times are GPS time unless the header says otherwise).
const GPS_UTC_MS: i64 = 18_000;

/// What a base file covers, UTC ms; the end `None` when the file does not say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Span {
    pub(super) first: i64,
    pub(super) last: Option<i64>,
}

/// The warnings about the bases `paths` (container paths) for a rover from `first` to
/// `last` (UTC ms).
pub(super) fn warnings(inputs: &[InputFile], paths: &[&str], first: i64, last: i64) -> Vec<String> {
    let mut warnings = Vec::new();
    for path in paths {
        let Some(input) = inputs.iter().find(|i| i.path == *path) else {
            warnings.push(format!(
                "base data {path} is not among the inputs; base not used"
            ));
            continue;
        };
        match span_of(input) {
            Err(reason) => warnings.push(format!("base data {path}: {reason}; base not used")),
            Ok(span) => {
                let end = span
                    .last
                    .map_or_else(|| "an end it does not say".to_owned(), iso_time);
                let misses = span.first > first || span.last.is_some_and(|end| end < last);
                if misses {
                    warnings.push(format!(
                        "base data {path} covers {} to {end}, the rover {} to {}: the base does not cover the rover's time",
                        iso_time(span.first),
                        iso_time(first),
                        iso_time(last)
                    ));
                }
            }
        }
    }
    warnings
}

/// The time the input file `input` covers, when it is a RINEX observation file.
pub(super) fn span_of(input: &InputFile) -> Result<Span, String> {
    std::fs::File::open(&input.location)
        .map_err(|e| e.to_string())
        .and_then(|file| span(BufReader::new(file)))
}

/// The time a RINEX observation file covers.
pub(super) fn span(reader: impl BufRead) -> Result<Span, String> {
    let mut observation = false;
    let mut compressed = false;
    let mut offset = GPS_UTC_MS;
    let mut first = None;
    let mut last = None;
    let mut lines = reader.lines();
    let mut in_header = true;
    let mut count = 0_usize;
    for line in lines.by_ref() {
        let line = line.map_err(|e| format!("cannot be read: {e}"))?;
        count += 1;
        if in_header {
            let label = line.get(60..).unwrap_or_default().trim();
            match label {
                "CRINEX VERS   / TYPE" => compressed = true,
                "RINEX VERSION / TYPE" => {
                    observation = line.get(20..21) == Some("O");
                }
                "TIME OF FIRST OBS" => {
                    first = header_time(&line);
                    let system = line.get(48..51).unwrap_or_default().trim();
                    if system == "UTC" || system == "GLO" {
                        offset = 0;
                    }
                }
                "TIME OF LAST OBS" => last = header_time(&line),
                "END OF HEADER" => {
                    in_header = false;
                    if !observation {
                        return Err("not a RINEX observation file".to_owned());
                    }
                    if compressed || last.is_some() {
                        break;
                    }
                }
                _ => {}
            }
            if count > 500 && in_header {
                return Err("no END OF HEADER in its first 500 lines".to_owned());
            }
            continue;
        }
        if let Some(time) = epoch_time(&line) {
            first.get_or_insert(time);
            last = Some(time);
        }
    }
    if in_header {
        return Err("not a RINEX observation file (no END OF HEADER)".to_owned());
    }
    let first = first.ok_or("no TIME OF FIRST OBS and no epoch")?;
    Ok(Span {
        first: first - offset,
        last: last.map(|t| t - offset),
    })
}

/// Milliseconds since 1970 of a calendar time.
fn millis(year: i32, month: u32, day: u32, hour: u32, minute: u32, second: f64) -> Option<i64> {
    let date = chrono::NaiveDate::from_ymd_opt(year, month, day)?;
    let time = date.and_hms_opt(hour, minute, 0)?;
    let seconds = (second * 1000.0).round() as i64;
    Some(time.and_utc().timestamp_millis() + seconds)
}

/// `TIME OF FIRST OBS` / `TIME OF LAST OBS`: year, month, day, hour, minute (I6 each),
/// seconds (F13.7).
fn header_time(line: &str) -> Option<i64> {
    let fields: Vec<&str> = line.get(..43)?.split_whitespace().collect();
    let [year, month, day, hour, minute, second] = fields[..] else {
        return None;
    };
    millis(
        year.parse().ok()?,
        month.parse().ok()?,
        day.parse().ok()?,
        hour.parse().ok()?,
        minute.parse().ok()?,
        second.parse().ok()?,
    )
}

/// An epoch line's time: RINEX 3 (`> 2020 06 15 10 30  0.0000000  0 12`) or RINEX 2
/// (` 20  6 15 10 30  0.0000000  0 12G01…`, two-digit year: 80–99 → 19xx), epoch flag
/// 0 or 1 (an observation epoch).
fn epoch_time(line: &str) -> Option<i64> {
    if let Some(rest) = line.strip_prefix('>') {
        let fields: Vec<&str> = rest.split_whitespace().collect();
        if fields.len() < 7 || !matches!(fields[6], "0" | "1") {
            return None;
        }
        return millis(
            fields[0].parse().ok()?,
            fields[1].parse().ok()?,
            fields[2].parse().ok()?,
            fields[3].parse().ok()?,
            fields[4].parse().ok()?,
            fields[5].parse().ok()?,
        );
    }
    let bytes = line.as_bytes();
    let spaced = [0, 3, 6, 9, 12]
        .iter()
        .all(|&i| bytes.get(i) == Some(&b' '));
    if !spaced
        || !matches!(bytes.get(28), Some(b'0' | b'1'))
        || line.get(15..26)?.find('.').is_none()
    {
        return None;
    }
    let number = |range: std::ops::Range<usize>| line.get(range).map(str::trim);
    let year: i32 = number(1..3)?.parse().ok()?;
    let year = if year >= 80 { 1900 + year } else { 2000 + year };
    millis(
        year,
        number(4..6)?.parse().ok()?,
        number(7..9)?.parse().ok()?,
        number(10..12)?.parse().ok()?,
        number(13..15)?.parse().ok()?,
        number(15..26)?.parse().ok()?,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(lines: &[(&str, &str)]) -> String {
        lines
            .iter()
            .map(|(content, label)| format!("{content:<60}{label}\n"))
            .collect()
    }

    const VERSION2: (&str, &str) = (
        "     2.11           OBSERVATION DATA    M (MIXED)",
        "RINEX VERSION / TYPE",
    );
    const FIRST: (&str, &str) = (
        "  2020     6    15    10    30    0.0000000     GPS",
        "TIME OF FIRST OBS",
    );
    const END: (&str, &str) = ("", "END OF HEADER");

    #[test]
    fn rinex_2_epochs_give_the_span_in_utc() {
        let mut text = header(&[VERSION2, FIRST, END]);
        text.push_str(" 20  6 15 10 30  0.0000000  0  2G01G02\n  23619095.450 7  23619097.240 7\n");
        text.push_str(" 20  6 15 11 45 30.0000000  0  2G01G02\n  23619095.450 7  23619097.240 7\n");
        let span = span(text.as_bytes()).expect("a span");
        let start = millis(2020, 6, 15, 10, 30, 0.0).expect("a time") - GPS_UTC_MS;
        assert_eq!(span.first, start);
        assert_eq!(span.last, Some(start + 75 * 60_000 + 30_000));
    }

    #[test]
    fn rinex_3_epochs_and_the_last_obs_header() {
        let version3 = (
            "     3.04           OBSERVATION DATA    M",
            "RINEX VERSION / TYPE",
        );
        let mut text = header(&[version3, FIRST, END]);
        text.push_str("> 2020 06 15 12 00  0.0000000  0 12\nG01  23619095.450\n");
        let covered = span(text.as_bytes()).expect("a span");
        assert_eq!(
            covered.last,
            Some(millis(2020, 6, 15, 12, 0, 0.0).expect("a time") - GPS_UTC_MS)
        );
        let last = (
            "  2020     6    15    13     0    0.0000000     GPS",
            "TIME OF LAST OBS",
        );
        let compressed = (
            "1.0                 COMPACT RINEX FORMAT",
            "CRINEX VERS   / TYPE",
        );
        let text = header(&[compressed, VERSION2, FIRST, last, END])
            + "&20  6 15 10 30  0.0000000  0  2G01G02\n";
        assert_eq!(
            span(text.as_bytes()).expect("a span").last,
            Some(millis(2020, 6, 15, 13, 0, 0.0).expect("a time") - GPS_UTC_MS)
        );
    }

    #[test]
    fn other_files_are_refused() {
        let nav = (
            "     2.11           NAVIGATION DATA     G",
            "RINEX VERSION / TYPE",
        );
        assert_eq!(
            span(header(&[nav, END]).as_bytes()).unwrap_err(),
            "not a RINEX observation file"
        );
        assert!(
            span("$GPGGA,...\n".as_bytes())
                .unwrap_err()
                .contains("no END OF HEADER")
        );
    }
}
