//! The emulated unit's data logger: sessions of sbgECom frames written to disk.
//!
//! While the logger runs (`POST /dataLogger/start` … `/stop`), it records the messages
//! enabled in `output.dataLogger.messages` (as the settings were when it started) at
//! their triggers, as sbgECom frames ([`svc_logs::encode_frame`]), into the files of a
//! session: a folder named by `dataLogger.sessionName` (or, when empty, the start time
//! `YYYYMMDD_HHMMSS` in UTC), holding `<session>.001`, `<session>.002`, … each at most
//! [`SPLIT_BYTES`] long (files end on a frame boundary).
//!
//! Nothing runs in the background: the frames the elapsed time implies are written when
//! something looks (the data logger's status, an FTP listing or download) and when the
//! logger stops. Periods shorter than [`MIN_PERIOD_MS`] are written at that period;
//! triggers and values are those of the unit's outputs ([`super::outputs`]), the same
//! as a port streams at the same time.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::outputs::{Schedule, record_at};

/// The size at which a session's file is closed and the next one opened.
pub const SPLIT_BYTES: u64 = 1 << 20;
/// The shortest period written (faster triggers are written at this period).
pub const MIN_PERIOD_MS: u64 = 10;
/// At most this much elapsed time is written at once (older time is skipped): a
/// session left running for days does not fill the disk the first time it is looked at.
const MAX_CATCH_UP: Duration = Duration::from_secs(600);

/// One file of a session, as listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionFile {
    pub name: String,
    pub size: u64,
}

struct Running {
    session: String,
    started: Instant,
    started_utc: DateTime<Utc>,
    /// The messages, and the elapsed ms up to which their frames are written.
    schedule: Schedule,
    file_index: u32,
    file_size: u64,
    transfer_id: u8,
}

/// The logger's storage and the running session.
pub struct Logger {
    root: tempfile::TempDir,
    /// When the unit powered on: frame timestamps count from it.
    power_on: Instant,
    /// How long after power-on the solutions take to be ready.
    startup: Duration,
    running: Option<Running>,
    split_bytes: u64,
}

impl Logger {
    /// An empty logger storage in a temporary folder (removed on drop).
    pub fn new(power_on: Instant, startup: Duration) -> std::io::Result<Self> {
        Ok(Self {
            root: tempfile::Builder::new()
                .prefix("svc-unit-logger")
                .tempdir()?,
            power_on,
            startup,
            running: None,
            split_bytes: SPLIT_BYTES,
        })
    }

    /// The folder holding the sessions.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The running session's name.
    pub fn running_session(&self) -> Option<&str> {
        self.running.as_ref().map(|r| r.session.as_str())
    }

    /// Starts a session with the messages and name of `settings`.
    pub fn start(&mut self, settings: &Value, now: Instant) -> std::io::Result<()> {
        let started_utc = Utc::now();
        let name = settings
            .pointer("/dataLogger/sessionName")
            .and_then(Value::as_str)
            .map(sanitize)
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| started_utc.format("%Y%m%d_%H%M%S").to_string());
        let folder = self.root().join(&name);
        fs::create_dir_all(&folder)?;
        // A session started again under the same name continues its numbering.
        let last = fs::read_dir(&folder)?
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let file = entry.file_name().to_string_lossy().into_owned();
                file.strip_prefix(&format!("{name}."))?.parse::<u32>().ok()
            })
            .max()
            .unwrap_or(0);
        let schedule = Schedule::from_messages(
            settings.pointer("/output/dataLogger/messages"),
            MIN_PERIOD_MS,
        );
        self.running = Some(Running {
            session: name,
            started: now,
            started_utc,
            schedule,
            file_index: last + 1,
            file_size: 0,
            transfer_id: 0,
        });
        Ok(())
    }

    /// Writes what the elapsed time implies, then stops.
    pub fn stop(&mut self, now: Instant) -> std::io::Result<()> {
        let result = self.catch_up(now);
        self.running = None;
        result
    }

    /// Writes the frames the time elapsed since the last call implies.
    pub fn catch_up(&mut self, now: Instant) -> std::io::Result<()> {
        let (power_on, startup) = (self.power_on, self.startup);
        let split = self.split_bytes;
        let root = self.root.path().to_path_buf();
        let Some(running) = self.running.as_mut() else {
            return Ok(());
        };
        let elapsed = u64::try_from(now.saturating_duration_since(running.started).as_millis())
            .unwrap_or(u64::MAX);
        let max = u64::try_from(MAX_CATCH_UP.as_millis()).unwrap_or(u64::MAX);
        if elapsed.saturating_sub(running.schedule.next_ms()) > max {
            running.schedule.skip_to(elapsed - max);
        }
        let mut out = Vec::new();
        let offset = running.started.saturating_duration_since(power_on);
        let (started_utc, transfer_id) = (running.started_utc, &mut running.transfer_id);
        running.schedule.run_until(elapsed, |kind, t| {
            let t = Duration::from_millis(t);
            let utc = started_utc + chrono::Duration::from_std(t).unwrap_or_default();
            if let Some(record) = record_at(kind, offset + t, utc, startup)
                && let Ok(frame) = svc_logs::encode_frame(&record, *transfer_id)
            {
                *transfer_id = transfer_id.wrapping_add(1);
                out.push(frame);
            }
        });
        let folder = root.join(&running.session);
        let mut file = None;
        for frame in out {
            let len = frame.len() as u64;
            if running.file_size > 0 && running.file_size + len > split {
                running.file_index += 1;
                running.file_size = 0;
                file = None;
            }
            if file.is_none() {
                let path = folder.join(file_name(&running.session, running.file_index));
                file = Some(OpenOptions::new().create(true).append(true).open(path)?);
            }
            if let Some(file) = file.as_mut() {
                file.write_all(&frame)?;
            }
            running.file_size += len;
        }
        Ok(())
    }

    /// Bytes held by every session.
    pub fn used_bytes(&self) -> u64 {
        fn size(path: &Path) -> u64 {
            let Ok(entries) = fs::read_dir(path) else {
                return 0;
            };
            entries
                .filter_map(Result::ok)
                .map(|entry| match entry.metadata() {
                    Ok(meta) if meta.is_dir() => size(&entry.path()),
                    Ok(meta) => meta.len(),
                    Err(_) => 0,
                })
                .sum()
        }
        size(self.root())
    }

    /// The sessions and their files, names in order.
    pub fn sessions(&self) -> Vec<(String, Vec<SessionFile>)> {
        let mut sessions: Vec<(String, Vec<SessionFile>)> = fs::read_dir(self.root())
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                let mut files: Vec<SessionFile> = fs::read_dir(entry.path())
                    .into_iter()
                    .flatten()
                    .filter_map(Result::ok)
                    .map(|file| SessionFile {
                        name: file.file_name().to_string_lossy().into_owned(),
                        size: file.metadata().map_or(0, |m| m.len()),
                    })
                    .collect();
                files.sort_by(|a, b| a.name.cmp(&b.name));
                (name, files)
            })
            .collect();
        sessions.sort_by(|a, b| a.0.cmp(&b.0));
        sessions
    }

    /// Whether `path` (relative to the root) is in the running session.
    pub fn is_running(&self, path: &Path) -> bool {
        let Some(running) = &self.running else {
            return false;
        };
        let relative = path.strip_prefix("/").unwrap_or(path);
        relative
            .components()
            .next()
            .is_some_and(|first| first.as_os_str() == running.session.as_str())
    }

    /// The unit powered on again (after a reboot): timestamps count from `power_on`.
    pub fn set_power_on(&mut self, power_on: Instant) {
        self.power_on = power_on;
    }

    /// Shortens the file size: test hook, next file split size.
    #[cfg(test)]
    pub fn set_split_bytes(&mut self, bytes: u64) {
        self.split_bytes = bytes;
    }
}

/// `<session>.NNN`.
pub fn file_name(session: &str, index: u32) -> String {
    format!("{session}.{index:03}")
}

/// Folder-safe session name: characters other than letters, digits, `-`, `_` and `.`
/// become `_`; a name of dots alone is refused (empty).
fn sanitize(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.chars().all(|c| c == '.') {
        String::new()
    } else {
        clean
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sessions_are_named_split_in_order_and_continued() {
        let start = Instant::now();
        let mut logger = Logger::new(start, Duration::ZERO).expect("storage");
        logger.set_split_bytes(4096);
        let settings = json!({
            "dataLogger": {"sessionName": "../Demo run"},
            "output": {"dataLogger": {"messages": {"ekfNav": "10ms", "status": "off", "mag": "10ms"}}},
        });
        logger.start(&settings, start).expect("start");
        assert_eq!(logger.running_session(), Some(".._Demo_run"));
        logger
            .stop(start + Duration::from_millis(1000))
            .expect("stop");
        let sessions = logger.sessions();
        assert_eq!(sessions.len(), 1);
        let (name, files) = &sessions[0];
        assert_eq!(name, ".._Demo_run");
        assert!(files.len() >= 2, "{files:?}");
        for (i, file) in files.iter().enumerate() {
            assert_eq!(file.name, file_name(name, i as u32 + 1));
            assert!(file.size <= 4096);
        }
        // 101 ekfNav frames (0 to 1000 ms), nothing for `mag` or `off`.
        let mut bytes = Vec::new();
        for file in files {
            bytes.extend(fs::read(logger.root().join(name).join(&file.name)).expect("file"));
        }
        let mut reader = svc_logs::LogReader::new(bytes.as_slice());
        let mut count = 0;
        while let Some(record) = reader.next_record().expect("decodes") {
            assert_eq!(record.kind().name(), "ekfNav");
            count += 1;
        }
        assert_eq!(count, 101);
        assert_eq!(logger.used_bytes(), bytes.len() as u64);

        // Started again under the same name: the numbering goes on.
        let again = start + Duration::from_secs(2);
        logger.start(&settings, again).expect("start");
        logger.stop(again).expect("stop");
        let files = &logger.sessions()[0].1;
        assert_eq!(
            files.last().map(|f| f.name.clone()),
            Some(file_name(".._Demo_run", files.len() as u32))
        );

        // An empty name: the start time.
        let unnamed = json!({"dataLogger": {"sessionName": ""}});
        logger.start(&unnamed, again).expect("start");
        let name = logger.running_session().expect("running").to_owned();
        assert_eq!(name.len(), 15, "{name}");
        assert_eq!(name.as_bytes()[8], b'_');
    }
}
