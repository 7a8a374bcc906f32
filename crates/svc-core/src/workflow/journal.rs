//! A batch's journal ([`BatchJournal`]): what each mission created, written as it
//! happens, so that a batch killed half-way resumes after a restart with nothing spent
//! twice and no container left behind.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::WorkflowProgress;

/// What a journal knows of one mission: the last of its lines.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct MissionRecord {
    /// The mission's name.
    pub mission: String,
    /// Its container, once created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container_id: Option<Uuid>,
    /// Its processing, once started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processing_id: Option<Uuid>,
    /// Whether its workflow ended with the processing's outputs collected.
    #[serde(default)]
    pub done: bool,
}

/// A batch's journal: a JSON Lines file, one line per step of a mission (its
/// container created, its processing started, its end), each line written whole and
/// flushed to the disk before the batch goes on. A line cut by a crash (the last one)
/// is ignored when the journal is read again.
///
/// [`Workflow::start_many`](super::Workflow::start_many) with a journal
/// ([`BatchOptions::journal`](super::BatchOptions::journal)) resumes each mission from
/// its record: one whose processing was started is followed (its outputs downloaded)
/// instead of being started again; one that has only a container gets that container
/// deleted, then runs from the start; the others run.
#[derive(Debug)]
pub struct BatchJournal {
    path: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    file: File,
    missions: HashMap<String, MissionRecord>,
}

impl BatchJournal {
    /// Opens (or creates) the journal at `path` and reads what it holds.
    ///
    /// # Errors
    /// The file cannot be read or created, or a line other than the last is not a
    /// record (not a journal of this kind).
    pub fn open(path: impl AsRef<Path>) -> std::io::Result<BatchJournal> {
        let path = path.as_ref().to_owned();
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        // A last line cut by a crash (no line end) is dropped from the file.
        let whole = match text.rfind('\n') {
            Some(end) => &text[..=end],
            None => "",
        };
        let mut missions = HashMap::new();
        for (n, line) in whole.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let record: MissionRecord = serde_json::from_str(line).map_err(|e| {
                std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "{}: line {} is not a batch journal's: {e}",
                        path.display(),
                        n + 1
                    ),
                )
            })?;
            missions.insert(record.mission.clone(), record);
        }
        let file = OpenOptions::new().create(true).append(true).open(&path)?;
        if whole.len() < text.len() {
            file.set_len(whole.len() as u64)?;
        }
        Ok(BatchJournal {
            path,
            state: Mutex::new(State { file, missions }),
        })
    }

    /// The journal's file.
    #[must_use]
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What the journal knows of `mission`.
    #[must_use]
    pub fn record(&self, mission: &str) -> Option<MissionRecord> {
        let state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        state.missions.get(mission).cloned()
    }

    /// Notes a step of `mission` from its progress report (a container created, a
    /// processing started, the end); other reports change nothing. A line is written
    /// and flushed to the disk for each change.
    pub(super) fn note(&self, mission: &str, progress: &WorkflowProgress) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut record = state
            .missions
            .get(mission)
            .cloned()
            .unwrap_or_else(|| MissionRecord {
                mission: mission.to_owned(),
                ..MissionRecord::default()
            });
        match progress {
            WorkflowProgress::Starting { container_id } => {
                record.container_id = Some(*container_id)
            }
            WorkflowProgress::Queued { processing_id }
            | WorkflowProgress::Running { processing_id, .. } => {
                record.processing_id = Some(*processing_id);
            }
            WorkflowProgress::Done { processing_id, .. } => {
                record.processing_id = Some(*processing_id);
                record.done = true;
            }
            _ => return,
        }
        if state.missions.get(mission) == Some(&record) {
            return;
        }
        if let Err(e) = write_line(&mut state.file, &record) {
            tracing::warn!(journal = %self.path.display(), reason = %e, "could not write the batch journal");
        }
        state.missions.insert(mission.to_owned(), record);
    }

    /// Notes that `mission`'s container was deleted (a fresh start).
    pub(super) fn forget_container(&self, mission: &str) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let record = MissionRecord {
            mission: mission.to_owned(),
            ..MissionRecord::default()
        };
        if let Err(e) = write_line(&mut state.file, &record) {
            tracing::warn!(journal = %self.path.display(), reason = %e, "could not write the batch journal");
        }
        state.missions.insert(mission.to_owned(), record);
    }
}

/// One whole line, then flushed to the disk.
fn write_line(file: &mut File, record: &MissionRecord) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(std::io::Error::other)?;
    line.push(b'\n');
    file.write_all(&line)?;
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_survive_a_reopen_and_a_cut_last_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("batch.jsonl");
        let container = Uuid::new_v4();
        let processing = Uuid::new_v4();
        {
            let journal = BatchJournal::open(&path).unwrap();
            journal.note(
                "a",
                &WorkflowProgress::Starting {
                    container_id: container,
                },
            );
            journal.note(
                "a",
                &WorkflowProgress::Queued {
                    processing_id: processing,
                },
            );
            journal.note(
                "b",
                &WorkflowProgress::Starting {
                    container_id: container,
                },
            );
            journal.note("b", &WorkflowProgress::CreatingContainer);
        }
        // A crash in the middle of a line.
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"mission":"c","contai"#).unwrap();
        drop(file);
        let journal = BatchJournal::open(&path).unwrap();
        let a = journal.record("a").unwrap();
        assert_eq!(
            (a.container_id, a.processing_id, a.done),
            (Some(container), Some(processing), false)
        );
        assert_eq!(journal.record("b").unwrap().processing_id, None);
        assert!(journal.record("c").is_none());
        journal.note(
            "c",
            &WorkflowProgress::Starting {
                container_id: container,
            },
        );
        drop(journal);
        let journal = BatchJournal::open(&path).unwrap();
        assert_eq!(journal.record("c").unwrap().container_id, Some(container));

        std::fs::write(&path, "not json\n{}\n").unwrap();
        assert!(BatchJournal::open(&path).is_err());
    }
}
