//! Timestamps as the service writes them: ISO 8601, UTC, millisecond precision.

use std::fmt;
use std::ops::Deref;
use std::str::FromStr;

use chrono::{DateTime, SecondsFormat, Utc};

/// A point in time, UTC, written with exactly three fractional digits
/// (`2024-07-02T09:15:30.000Z`). Any RFC 3339 precision is accepted when reading.
/// Dereferences to [`chrono::DateTime<Utc>`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(pub DateTime<Utc>);

impl Timestamp {
    /// Now, truncated to the millisecond.
    pub fn now() -> Self {
        use chrono::SubsecRound;
        Self(Utc::now().trunc_subsecs(3))
    }
}

impl Deref for Timestamp {
    type Target = DateTime<Utc>;
    fn deref(&self) -> &DateTime<Utc> {
        &self.0
    }
}

impl From<DateTime<Utc>> for Timestamp {
    fn from(value: DateTime<Utc>) -> Self {
        Self(value)
    }
}

impl From<Timestamp> for DateTime<Utc> {
    fn from(value: Timestamp) -> Self {
        value.0
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.to_rfc3339_opts(SecondsFormat::Millis, true))
    }
}

impl FromStr for Timestamp {
    type Err = chrono::ParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        DateTime::parse_from_rfc3339(s).map(|t| Self(t.with_timezone(&Utc)))
    }
}

impl serde::Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(|e| {
            serde::de::Error::custom(format!("`{text}` is not an RFC 3339 date-time: {e}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn always_three_fractional_digits() {
        let whole: Timestamp = "2024-07-02T09:15:30Z".parse().unwrap();
        assert_eq!(whole.to_string(), "2024-07-02T09:15:30.000Z");
        let fine: Timestamp = "2024-07-02T11:15:30.123456+02:00".parse().unwrap();
        assert_eq!(
            serde_json::to_string(&fine).unwrap(),
            "\"2024-07-02T09:15:30.123Z\""
        );
        assert!(serde_json::from_str::<Timestamp>("\"yesterday\"").is_err());
    }
}
