//! The output logs a unit streams, live (`svc_core::live`): a [`LiveStream`] from the
//! unit's serial link ([`InsUnit::subscribe`](crate::unit::InsUnit::subscribe)), from
//! UDP datagrams or from a growing file, read with `next()` (Kotlin: `asFlow()`, Swift:
//! `items`). Records cross as [`LiveRecord`]s: the message, its timestamp and its
//! values keyed as the columns of its table (the same titles and units as the tables
//! of the other bindings).

use std::sync::Arc;
use std::time::Duration;

use svc_core::live::{self as sl, LiveError, LogStream};

use crate::error::SvcError;
use crate::runtime::run;
use crate::types::{LongCount, signed};

/// One record of a unit's output logs.
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct LiveRecord {
    /// The message, as the unit's settings name it (`ekfNav`, `utcTime`, ...).
    pub message: String,
    /// The unit's time since power-up (to the µs); `None` for the messages that have
    /// none.
    pub timestamp: Option<Duration>,
    /// The values by column title (`latitude`, `velN`, `status`...), in the units of
    /// the tables (angles in degrees); `None` for an absent optional field or a value
    /// that is not finite. Messages of no table (`diag`, raw data) have none.
    pub values: Vec<LiveValue>,
    /// The text of a `diag` message.
    pub text: Option<String>,
}

impl LiveRecord {
    fn of(record: &sl::Record) -> Self {
        Self {
            message: record.kind().name().to_owned(),
            timestamp: sl::record_timestamp(record).map(|us| Duration::from_micros(u64::from(us))),
            values: sl::record_values(record)
                .into_iter()
                .map(|(name, value)| LiveValue {
                    name: name.to_owned(),
                    value,
                })
                .collect(),
            text: match record {
                sl::Record::Diag(diag) => Some(diag.message.clone()),
                _ => None,
            },
        }
    }
}

/// One value of a [`LiveRecord`].
#[derive(Clone, Debug, PartialEq, uniffi::Record)]
pub struct LiveValue {
    /// Its column title.
    pub name: String,
    /// The value; `None` when absent or not finite.
    pub value: Option<f64>,
}

/// What [`LiveStream::next`] gives.
#[derive(Clone, Debug, PartialEq, uniffi::Enum)]
pub enum LiveItem {
    /// A record.
    Record { record: LiveRecord },
    /// `frames` frames were dropped here: the app did not keep up (its buffer of
    /// `capacity` frames was full). The stream goes on.
    Dropped { frames: LongCount },
}

/// What a stream received and missed so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Record)]
pub struct LiveStats {
    pub frames: LongCount,
    pub records: LongCount,
    pub dropped: LongCount,
    pub unknown: LongCount,
    pub undecodable: LongCount,
}

/// The messages named (as the unit's settings name them; empty: all).
pub(crate) fn subscribe_of(
    messages: Vec<String>,
    capacity: Option<u32>,
) -> Result<sl::Subscribe, SvcError> {
    let messages = sl::Subscribe::named(&messages).map_err(SvcError::invalid)?;
    let capacity = match capacity {
        Some(0) => return Err(SvcError::invalid("capacity must be at least 1")),
        Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
        None => sl::DEFAULT_CAPACITY,
    };
    Ok(sl::Subscribe { messages, capacity })
}

fn closed(e: LiveError) -> SvcError {
    SvcError::of(e.kind(), e.to_string())
}

/// A subscription to a unit's output logs: `next()` until `None` (the end). Each
/// stream has a bounded buffer: an app that falls behind never slows the unit's other
/// calls; what it missed arrives as [`LiveItem::Dropped`]. `stop()` ends it (a `next`
/// under way returns `None`); so does freeing it (Kotlin `close()`).
#[derive(uniffi::Object)]
pub struct LiveStream {
    stream: Arc<tokio::sync::Mutex<LogStream>>,
    closer: sl::Closer,
    source: String,
    local_address: Option<String>,
}

impl LiveStream {
    pub(crate) fn new(stream: LogStream) -> Arc<Self> {
        Arc::new(Self {
            closer: stream.closer(),
            source: stream.source().to_owned(),
            local_address: stream.local_addr().map(|a| a.to_string()),
            stream: Arc::new(tokio::sync::Mutex::new(stream)),
        })
    }
}

#[uniffi::export]
impl LiveStream {
    /// Listens on a UDP address (`0.0.0.0:5600`; port 0 for any: see `localAddress`)
    /// for the datagrams of a unit's Ethernet output.
    ///
    /// Errors: `Unreachable` when the address cannot be bound; `InvalidInput` for an
    /// unknown message name.
    #[uniffi::constructor(default(messages = [], capacity = None))]
    pub async fn udp(
        address: String,
        messages: Vec<String>,
        capacity: Option<u32>,
    ) -> Result<Arc<Self>, SvcError> {
        let subscribe = subscribe_of(messages, capacity)?;
        run(async move {
            Ok(Self::new(
                LogStream::udp(&address, subscribe).await.map_err(closed)?,
            ))
        })
        .await
    }

    /// Reads a log file from its start, then as it grows; with `idleEnd`, the stream
    /// ends once the file has not grown for that long.
    ///
    /// Errors: `Unreachable` when the file cannot be opened.
    #[uniffi::constructor(default(messages = [], capacity = None, idle_end = None))]
    pub async fn follow(
        path: String,
        messages: Vec<String>,
        capacity: Option<u32>,
        idle_end: Option<Duration>,
    ) -> Result<Arc<Self>, SvcError> {
        let subscribe = subscribe_of(messages, capacity)?;
        run(async move {
            Ok(Self::new(
                LogStream::follow(&path, subscribe, idle_end)
                    .await
                    .map_err(closed)?,
            ))
        })
        .await
    }

    /// Where the records come from (a serial link, `udp 127.0.0.1:5600`, a file).
    pub fn source(&self) -> String {
        self.source.clone()
    }

    /// For a UDP stream, the address it listens on (`host:port`).
    pub fn local_address(&self) -> Option<String> {
        self.local_address.clone()
    }

    /// The next record (or the report of frames dropped), waiting for it; `None` once
    /// the stream has ended. Cancelling the wait takes nothing from the stream.
    ///
    /// Errors: `Unreachable` when the source failed or closed (the link was lost).
    pub async fn next(&self) -> Result<Option<LiveItem>, SvcError> {
        let stream = Arc::clone(&self.stream);
        run(async move {
            let mut stream = stream.lock().await;
            match stream.next_record().await {
                None => Ok(None),
                Some(Ok(record)) => Ok(Some(LiveItem::Record {
                    record: LiveRecord::of(&record),
                })),
                Some(Err(LiveError::Dropped { frames })) => Ok(Some(LiveItem::Dropped {
                    frames: signed(frames),
                })),
                Some(Err(e)) => Err(closed(e)),
            }
        })
        .await
    }

    /// What the stream received and missed so far (once a `next()` under way has
    /// returned). Like every `async` call it can be cancelled: that is its only error.
    pub async fn stats(&self) -> Result<LiveStats, SvcError> {
        let stats = self.stream.lock().await.stats();
        Ok(LiveStats {
            frames: signed(stats.frames),
            records: signed(stats.records),
            dropped: signed(stats.dropped),
            unknown: signed(stats.unknown),
            undecodable: signed(stats.undecodable),
        })
    }

    /// Ends the subscription: a `next()` under way returns `None`.
    pub fn stop(&self) {
        self.closer.close();
    }
}

/// What "ready to log" asks (see `InsUnit.waitReady`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, uniffi::Record)]
pub struct ReadyCriteria {
    /// A GNSS fix at least this good; `None`: no GNSS condition.
    pub min_fix: Option<FixLevel>,
    /// The navigation filter aligned.
    pub aligned: bool,
    /// UTC valid.
    pub utc: bool,
}

/// How good a GNSS position is, lowest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, uniffi::Enum)]
pub enum FixLevel {
    Single,
    Differential,
    RtkFloat,
    RtkFixed,
}

impl From<FixLevel> for sl::FixLevel {
    fn from(level: FixLevel) -> Self {
        match level {
            FixLevel::Single => Self::Single,
            FixLevel::Differential => Self::Differential,
            FixLevel::RtkFloat => Self::RtkFloat,
            FixLevel::RtkFixed => Self::RtkFixed,
        }
    }
}

impl From<sl::FixLevel> for FixLevel {
    fn from(level: sl::FixLevel) -> Self {
        match level {
            sl::FixLevel::Single => Self::Single,
            sl::FixLevel::Differential => Self::Differential,
            sl::FixLevel::RtkFloat => Self::RtkFloat,
            sl::FixLevel::RtkFixed => Self::RtkFixed,
        }
    }
}

impl From<ReadyCriteria> for sl::ReadyCriteria {
    fn from(c: ReadyCriteria) -> Self {
        Self {
            min_fix: c.min_fix.map(Into::into),
            aligned: c.aligned,
            utc: c.utc,
        }
    }
}

/// What the output logs last said of a unit's readiness.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct Readiness {
    /// Whether a GNSS position message was received.
    pub gnss_received: bool,
    /// The best GNSS fix (`None`: no solution, or none received).
    pub fix: Option<FixLevel>,
    /// The filter's mode (`NavPosition` once aligned), `None` when none was received.
    pub filter: Option<String>,
    /// Whether UTC was valid (`None`: no `utcTime` received).
    pub utc_valid: Option<bool>,
}

impl From<sl::Readiness> for Readiness {
    fn from(r: sl::Readiness) -> Self {
        Self {
            gnss_received: r.fix.is_some(),
            fix: r.fix.flatten().map(Into::into),
            filter: r.filter.map(|mode| format!("{mode:?}")),
            utc_valid: r.utc_valid,
        }
    }
}
