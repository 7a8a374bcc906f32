//! What a unit still owes after an interrupted apply: a save, a reboot.
//!
//! [`Unit::apply_wanted`](super::Unit::apply_wanted) with
//! [`ApplyOptions::reboot`](super::ApplyOptions::reboot) writes the settings, saves
//! them and reboots the unit into them. A signal after the write, or a save, unlock or
//! reboot whose answer is lost, leaves the settings written but not saved or not
//! rebooted into; a rerun then finds nothing to write. The unit's API tells neither
//! (its `needReboot` answers one write, and nothing reads the saved tree), so a
//! session given a [`Journal`] records what it owes *before* the write, keyed by the
//! unit's serial number (never by the address used to reach it: one unit has many), and
//! a later apply with `reboot` finishes it: saves and reboots even when nothing
//! differs any more. Each record is written atomically (a temporary file renamed over
//! the old one) and removed once the reboot is confirmed.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::UnitError;

/// What a unit owes: a save of its settings, a reboot into them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    /// Written settings not yet saved to permanent memory.
    pub save: bool,
    /// Written settings that take effect only after a reboot not yet done.
    pub reboot: bool,
}

impl Pending {
    /// Nothing owed.
    #[must_use]
    pub fn is_empty(self) -> bool {
        !self.save && !self.reboot
    }
}

/// The file a record is kept in.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    serial_number: String,
    #[serde(flatten)]
    pending: Pending,
}

/// A folder of records of what units owe, one file per unit
/// (`<folder>/<serial number>.json`).
#[derive(Clone, Debug)]
pub struct Journal {
    dir: PathBuf,
}

impl Journal {
    /// A journal kept in `dir` (created at the first record).
    pub fn at(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The folder it is kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of the unit with this serial number: its letters, digits, `-` and `_`
    /// as they are, any other byte as `%XX`, so that two serial numbers never share a
    /// file.
    pub fn path_of(&self, serial_number: &str) -> PathBuf {
        let mut name = String::with_capacity(serial_number.len() + 5);
        for byte in serial_number.bytes() {
            if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_') {
                name.push(char::from(byte));
            } else {
                name.push_str(&format!("%{byte:02X}"));
            }
        }
        if name.is_empty() {
            name.push_str("%unit");
        }
        name.push_str(".json");
        self.dir.join(name)
    }

    /// What the unit owes (nothing when there is no record).
    ///
    /// # Errors
    /// [`UnitError::Io`] when the record cannot be read or is not one: a journal that
    /// cannot be trusted is said so, never read as "nothing owed".
    pub fn pending(&self, serial_number: &str) -> Result<Pending, UnitError> {
        let path = self.path_of(serial_number);
        let text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Pending::default()),
            Err(e) => return Err(io("readJournal", &path, &e)),
        };
        let record: Record = serde_json::from_slice(&text).map_err(|e| UnitError::Io {
            operation: "readJournal",
            reason: format!(
                "{} is not a record of this SDK ({e}); remove it to go on",
                path.display()
            ),
        })?;
        if record.serial_number != serial_number {
            return Err(UnitError::Io {
                operation: "readJournal",
                reason: format!(
                    "{} records another unit ({}); remove it to go on",
                    path.display(),
                    record.serial_number
                ),
            });
        }
        Ok(record.pending)
    }

    /// Records what the unit owes (removes the record when it owes nothing).
    ///
    /// # Errors
    /// [`UnitError::Io`] when the record cannot be written or removed.
    pub fn record(&self, serial_number: &str, pending: Pending) -> Result<(), UnitError> {
        let path = self.path_of(serial_number);
        if pending.is_empty() {
            return match std::fs::remove_file(&path) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                Err(e) => Err(io("writeJournal", &path, &e)),
            };
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| io("writeJournal", &self.dir, &e))?;
        let record = Record {
            serial_number: serial_number.to_owned(),
            pending,
        };
        let text = serde_json::to_vec_pretty(&record).map_err(|e| UnitError::Io {
            operation: "writeJournal",
            reason: e.to_string(),
        })?;
        let mut temporary = path.clone().into_os_string();
        temporary.push(format!(".{}.tmp", std::process::id()));
        let temporary = PathBuf::from(temporary);
        let written = std::fs::write(&temporary, text).and_then(|()| {
            // On disk before it replaces the old record: a power cut leaves one or the
            // other, never an empty file.
            std::fs::File::open(&temporary)?.sync_all()?;
            std::fs::rename(&temporary, &path)
        });
        written.map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            io("writeJournal", &path, &e)
        })
    }
}

fn io(operation: &'static str, path: &Path, e: &std::io::Error) -> UnitError {
    UnitError::Io {
        operation,
        reason: format!("{}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_vanish_when_nothing_is_owed() {
        let dir = tempfile::tempdir().expect("a folder");
        let journal = Journal::at(dir.path().join("units"));
        assert_eq!(journal.pending("EMU1").expect("none"), Pending::default());
        let owed = Pending {
            save: true,
            reboot: true,
        };
        journal.record("EMU1", owed).expect("recorded");
        assert_eq!(journal.pending("EMU1").expect("read"), owed);
        assert_eq!(journal.pending("EMU2").expect("other"), Pending::default());
        journal.record("EMU1", Pending::default()).expect("cleared");
        assert!(!journal.path_of("EMU1").exists());
        assert_eq!(
            std::fs::read_dir(dir.path().join("units"))
                .expect("dir")
                .count(),
            0,
            "no temporary file left"
        );
    }

    #[test]
    fn serial_numbers_never_share_a_file() {
        let journal = Journal::at("j");
        let names: std::collections::HashSet<PathBuf> = ["A/B", "AB", "A%2FB", "..", "", "a b"]
            .iter()
            .map(|s| journal.path_of(s))
            .collect();
        assert_eq!(names.len(), 6);
        for name in &names {
            assert_eq!(name.parent(), Some(Path::new("j")), "{name:?}");
        }
    }

    #[test]
    fn a_damaged_record_is_an_error_not_nothing_owed() {
        let dir = tempfile::tempdir().expect("a folder");
        let journal = Journal::at(dir.path());
        std::fs::write(journal.path_of("EMU1"), b"{not json").expect("write");
        let e = journal.pending("EMU1").expect_err("damaged");
        assert!(e.to_string().contains("remove it"), "{e}");
        journal
            .record(
                "EMU2",
                Pending {
                    save: false,
                    reboot: true,
                },
            )
            .expect("recorded");
        std::fs::copy(journal.path_of("EMU2"), journal.path_of("EMU3")).expect("copy");
        assert!(journal.pending("EMU3").is_err(), "another unit's record");
    }
}
