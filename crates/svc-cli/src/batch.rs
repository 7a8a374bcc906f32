//! `svc process --batch DIR|LIST`: many missions, one processing at a time per
//! organization, first come first served, the next mission uploading while one
//! processes (`svc_core::workflow::Workflow::run_many`).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use serde_json::json;
use svc_core::workflow::{
    BatchJournal, BatchOptions, JobKey, ProcessingJob, Workflow, WorkflowError, WorkflowOptions,
    WorkflowOutcome, WorkflowProgress,
};

use crate::exit;
use crate::process::{PROCESSING_FAILED, ProcessFailure};

/// One mission of a batch: its name (its folder's or file's name) and its input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mission {
    pub name: String,
    pub input: PathBuf,
}

/// The missions of `source`: each folder (not hidden) of a folder, in the order of
/// their names; or, from a text file, each line naming a mission's folder or file
/// (relative to the list's folder; empty lines and `#` comments skipped).
pub fn missions(source: &Path) -> Result<Vec<Mission>, String> {
    let meta = std::fs::metadata(source)
        .map_err(|e| format!("cannot read `{}`: {e}", source.display()))?;
    let paths: Vec<PathBuf> = if meta.is_dir() {
        let entries = std::fs::read_dir(source)
            .map_err(|e| format!("cannot list `{}`: {e}", source.display()))?;
        let mut folders = Vec::new();
        for entry in entries {
            let entry = entry.map_err(|e| format!("cannot list `{}`: {e}", source.display()))?;
            let hidden = entry.file_name().to_string_lossy().starts_with('.');
            if !hidden && entry.path().is_dir() {
                folders.push(entry.path());
            }
        }
        folders.sort();
        folders
    } else {
        let text = std::fs::read_to_string(source)
            .map_err(|e| format!("cannot read the list `{}`: {e}", source.display()))?;
        let base = source.parent().unwrap_or(Path::new("."));
        text.lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(|line| base.join(line))
            .collect()
    };
    if paths.is_empty() {
        return Err(format!(
            "`{}` names no mission (a folder of mission folders, or a list of them, one per line)",
            source.display()
        ));
    }
    let mut missions: Vec<Mission> = Vec::with_capacity(paths.len());
    for input in paths {
        if !input.exists() {
            return Err(format!("mission `{}` does not exist", input.display()));
        }
        let name = input
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .ok_or_else(|| format!("mission `{}` has no name", input.display()))?;
        if missions.iter().any(|m| m.name == name) {
            return Err(format!(
                "two missions are named `{name}`: each writes its outputs to a folder of its name"
            ));
        }
        missions.push(Mission { name, input });
    }
    Ok(missions)
}

/// What the batch needs from the command line besides its missions.
pub struct BatchRun {
    pub missions: Vec<Mission>,
    pub template: ProcessingJob,
    pub out: PathBuf,
    pub max_wait: std::time::Duration,
    pub cleanup_on_failure: bool,
    pub json: bool,
    pub embedded: bool,
    pub journal: Option<Arc<BatchJournal>>,
}

/// Runs the batch; the exit code: 0 every mission succeeded, 8 every other one ended
/// with a failed processing, else the code of the first other failure.
pub async fn run(
    workflow: Workflow,
    batch: BatchRun,
    signals: &mut exit::Signals,
) -> Result<ExitCode, ProcessFailure> {
    let names: Vec<String> = batch.missions.iter().map(|m| m.name.clone()).collect();
    let jobs: Vec<ProcessingJob> = batch
        .missions
        .iter()
        .map(|m| ProcessingJob {
            inputs: vec![m.input.clone()],
            name: Some(match &batch.template.name {
                Some(name) => format!("{name}: {}", m.name),
                None => m.name.clone(),
            }),
            output_folder: Some(batch.out.join(&m.name)),
            // One key per mission: a given one is the batch's, named per mission.
            key: match &batch.template.key {
                Some(JobKey::Given(key)) => Some(JobKey::Given(format!("{key}/{}", m.name))),
                other => other.clone(),
            },
            ..batch.template.clone()
        })
        .collect();
    for job in &jobs {
        if let Some(folder) = &job.output_folder {
            svc_core::workflow::check_output_folder(folder)
                .map_err(|e| ProcessFailure::invalid(format!("--out: {e}")))?;
        }
    }
    let width = names.iter().map(String::len).max().unwrap_or(0);
    let labels = Arc::new(names.clone());
    let cleanup = batch.cleanup_on_failure;
    let max_wait = batch.max_wait;
    let options = BatchOptions {
        options: Arc::new(move |index, _job| {
            let labels = labels.clone();
            let last = std::sync::Mutex::new(String::new());
            WorkflowOptions {
                max_wait,
                cleanup_on_failure: cleanup,
                on_progress: Some(Arc::new(move |p: &WorkflowProgress| {
                    let Some(stage) = stage(p) else { return };
                    let Ok(mut last) = last.lock() else { return };
                    if *last != stage {
                        let name = labels.get(index).map_or("", String::as_str);
                        eprintln!("svc process: {name:<width$}  {stage}");
                        *last = stage;
                    }
                })),
                ..WorkflowOptions::default()
            }
        }),
        journal: batch.journal.clone(),
        ..BatchOptions::default()
    };
    let handles = workflow.start_many(jobs, options);
    let cancelers: Vec<_> = handles.iter().map(|h| h.canceler()).collect();
    let (results, interrupted) = exit::until_done_or_interrupted(
        signals,
        futures::future::join_all(handles.iter().map(|h| h.wait())),
        // Every mission not done stops; each result then says what it left.
        move || cancelers.iter().for_each(|c| c.cancel()),
    )
    .await;
    if batch.json {
        let items: Vec<serde_json::Value> = names
            .iter()
            .zip(&results)
            .map(|(name, result)| mission_json(name, result, batch.embedded))
            .collect();
        println!("{}", json!({ "missions": items }));
    } else {
        print_table(&names, &results);
    }
    if let Some(signal) = interrupted {
        // The report above (table or JSON) says what each mission leaves.
        eprintln!(
            "svc process: {}: the missions not done were stopped; each one's result says what it leaves in the cloud",
            signal.name()
        );
        return Ok(ExitCode::from(signal.code()));
    }
    Ok(exit_code(&results))
}

/// A line's worth of where a mission stands, when it changes stage.
fn stage(p: &WorkflowProgress) -> Option<String> {
    Some(match p {
        WorkflowProgress::CreatingContainer => "creating the container".to_owned(),
        WorkflowProgress::Uploading(_) => "uploading".to_owned(),
        WorkflowProgress::Starting { .. } => "uploaded, starting".to_owned(),
        WorkflowProgress::WaitingForOrganization { behind, ahead, .. } => match behind {
            Some(mission) => format!(
                "in line for the organization behind {mission} ({ahead} ahead, one processing at a time)"
            ),
            None => "waiting for a processing of the organization started elsewhere".to_owned(),
        },
        WorkflowProgress::Queued { processing_id } => format!("processing {processing_id} pending"),
        WorkflowProgress::Running { processing_id, .. } => {
            format!("processing {processing_id} running")
        }
        WorkflowProgress::Downloading(_) => "downloading the outputs".to_owned(),
        WorkflowProgress::Done { status, result, .. } => format!(
            "done: {status}, {}",
            result
                .as_ref()
                .map_or_else(|| "no result".to_owned(), ToString::to_string)
        ),
        _ => return None,
    })
}

fn exit_code(results: &[Result<WorkflowOutcome, WorkflowError>]) -> ExitCode {
    let mut code = None;
    for result in results {
        let this = match result {
            Ok(outcome) if outcome.succeeded() => continue,
            Ok(outcome) if outcome.failed() => PROCESSING_FAILED,
            Ok(_) => exit::FAILURE,
            Err(e) => exit::code_for(e.kind()),
        };
        code = match code {
            None | Some(PROCESSING_FAILED) => Some(this),
            kept => kept,
        };
    }
    code.map_or(ExitCode::SUCCESS, ExitCode::from)
}

fn print_table(names: &[String], results: &[Result<WorkflowOutcome, WorkflowError>]) {
    let width = names.iter().map(String::len).max().unwrap_or(0).max(7);
    println!(
        "{:<width$}  {:<9}  {:<9}  {:<36}  result",
        "mission", "status", "outcome", "processing"
    );
    for (name, result) in names.iter().zip(results) {
        match result {
            Ok(o) => {
                let p = &o.processing;
                let outcome = p
                    .processing_result
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), ToString::to_string);
                println!(
                    "{name:<width$}  {:<9}  {outcome:<9}  {:<36}  {} error(s), {} warning(s), {} file(s)",
                    p.status.to_string(),
                    p.id.to_string(),
                    o.error_messages().count(),
                    o.warnings().count(),
                    o.downloaded.len()
                );
            }
            Err(e) => println!(
                "{name:<width$}  {:<9}  {:<9}  {:<36}  {e}",
                "-", "error", "-"
            ),
        }
    }
}

fn mission_json(
    name: &str,
    result: &Result<WorkflowOutcome, WorkflowError>,
    embedded: bool,
) -> serde_json::Value {
    match result {
        Ok(o) => json!({
            "mission": name,
            "service": if embedded { "emulator" } else { "cloud" },
            "processing": o.processing,
            "containerId": o.container_id,
            "errors": o.errors,
            "outputs": o.outputs,
            "downloaded": o.downloaded,
            "reused": o.reused,
        }),
        Err(e) => json!({
            "mission": name,
            "error": {
                "kind": e.kind().as_str(),
                "message": e.to_string(),
                "containerId": e.container_id(),
                "processingId": e.processing_id(),
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missions_of_a_folder_and_of_a_list() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b-mission", "a-mission", ".hidden"] {
            std::fs::create_dir(dir.path().join(name)).unwrap();
        }
        std::fs::write(dir.path().join("notes.txt"), "not a mission").unwrap();
        let found = missions(dir.path()).unwrap();
        let names: Vec<&str> = found.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["a-mission", "b-mission"]);

        let list = dir.path().join("list.txt");
        std::fs::write(&list, "# today\nb-mission\n\n  a-mission  \n").unwrap();
        let found = missions(&list).unwrap();
        assert_eq!(found[0].input, dir.path().join("b-mission"));
        assert_eq!(found[1].name, "a-mission");

        std::fs::write(&list, "a-mission\nmissing\n").unwrap();
        assert!(missions(&list).unwrap_err().contains("missing"));
        std::fs::write(&list, "a-mission\n./a-mission\n").unwrap();
        assert!(missions(&list).unwrap_err().contains("two missions"));
        std::fs::write(&list, "# nothing\n").unwrap();
        assert!(missions(&list).unwrap_err().contains("no mission"));
    }
}
