//! `svc device fleet`: many units against one wanted tree (`svc_core::fleet`).
//!
//! The units come from a file, one per line: `ADDRESS [USER]` (`http://…`
//! or `tcp://HOST:PORT` for a serial-over-IP bridge; `#` comments). `--user` is the user
//! of the lines that name none; the password (`SVC_DEVICE_PASSWORD`, `--password-stdin`
//! or a prompt) is the same for every unit. Each unit's result is printed as it
//! completes (a line on a terminal with a progress bar, or a JSON object per line with
//! `--json`), then a summary. The exit code: 0 when every unit is in sync (status),
//! brought to the wanted tree (apply) or exported (export); the code of the first
//! failure's kind when a unit failed (6 unreachable, 4 locked…); 1 when units only
//! differ (status, or apply with `--check-only`).

use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use svc_core::fleet::{Fleet, Member, UnitResult, parse_members};
use svc_core::unit::{ApplyOptions, UnitError};

use crate::credentials::{read_secret, user_name};
use crate::exit::{FAILURE, Failure, code_for};

/// The units, and what to do with them.
#[derive(Args, Debug)]
pub struct FleetArgs {
    /// The units: one per line, `ADDRESS [USER]` (http://… or
    /// tcp://HOST:PORT; `#` starts a comment).
    #[arg(long, value_name = "FILE")]
    units: PathBuf,
    /// How many units are reached at once.
    #[arg(long, default_value_t = Fleet::DEFAULT_CONCURRENCY)]
    concurrency: usize,
    /// One JSON object per unit as it completes, then one with the summary.
    #[arg(long)]
    json: bool,
    #[command(subcommand)]
    command: FleetCommand,
}

#[derive(Subcommand, Debug)]
enum FleetCommand {
    /// Which nodes of each unit differ from WANTED (a whole or partial tree); nothing
    /// is written.
    Status { wanted: PathBuf },
    /// Bring every unit to WANTED, writing only what differs on each.
    Apply {
        wanted: PathBuf,
        /// Only validate on the units.
        #[arg(long)]
        check_only: bool,
        /// Hold each unit's settings lock while applying (needs a user).
        #[arg(long)]
        lock: bool,
    },
    /// Save every unit's whole tree into DIR, as SERIAL.json. A name already taken in
    /// this run (a serial number met again) gets the first free suffix, SERIAL-2.json,
    /// SERIAL-3.json…: each unit has its own file.
    Export { dir: PathBuf },
}

/// How one unit ended, for the output and the exit code.
enum Verdict {
    Done,
    Differs,
    Failed(u8),
}

pub async fn run(
    args: &FleetArgs,
    default_user: Option<&str>,
    password_stdin: bool,
) -> Result<(), Failure> {
    let text = std::fs::read_to_string(&args.units)
        .map_err(|e| Failure::other(format!("reading {}: {e}", args.units.display())))?;
    let mut members = parse_members(&text)
        .map_err(|e| Failure::invalid(format!("{}: {e}", args.units.display())))?;
    if let Some(name) = default_user {
        let user = user_name(name)?;
        for member in members.iter_mut().filter(|m| m.user.is_none()) {
            member.user = Some(user.clone());
        }
    }
    let mut fleet = Fleet::new(members.clone()).with_concurrency(args.concurrency);
    if members.iter().any(|m: &Member| m.user.is_some()) {
        let password = read_secret(
            "SVC_DEVICE_PASSWORD",
            password_stdin,
            "Password of the units' users: ",
            false,
        )?;
        if let Some(password) = password {
            fleet = fleet.with_password(password);
        }
    }
    let mut output = Output::new(args.json, members.len());
    let verdicts = match &args.command {
        FleetCommand::Status { wanted } => {
            let wanted = read_tree(wanted)?;
            let results = fleet
                .status(&wanted, |r| {
                    output.unit(r, |pending| {
                        if pending.is_empty() {
                            ("in sync".to_owned(), json!({"status": "inSync"}))
                        } else {
                            (
                                format!("differs at {}", pending.join(", ")),
                                json!({"status": "differs", "changed": pending}),
                            )
                        }
                    });
                })
                .await;
            verdicts(&results, |pending| pending.is_empty())
        }
        FleetCommand::Apply {
            wanted,
            check_only,
            lock,
        } => {
            let wanted = read_tree(wanted)?;
            let options = ApplyOptions {
                check_only: *check_only,
                lock: *lock,
                ..ApplyOptions::default()
            };
            let results = fleet
                .apply(&wanted, options, |r| {
                    output.unit(r, |report| {
                        let status = match (report.changed.is_empty(), report.written) {
                            (true, _) => "inSync",
                            (false, true) => "applied",
                            (false, false) => "checked",
                        };
                        let mut shown = match status {
                            "inSync" => "in sync".to_owned(),
                            "applied" => format!("applied {}", report.changed.join(", ")),
                            _ => format!("would change {}", report.changed.join(", ")),
                        };
                        if report.unlock_unconfirmed {
                            shown.push_str(
                                " (unlock not confirmed: the unit ends the lock after 60 s)",
                            );
                        }
                        (
                            shown,
                            json!({"status": status, "changed": report.changed,
                                   "needReboot": report.need_reboot,
                                   "unlockConfirmed": !report.unlock_unconfirmed}),
                        )
                    });
                })
                .await;
            verdicts(&results, |report| {
                report.written || report.changed.is_empty()
            })
        }
        FleetCommand::Export { dir } => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::other(format!("creating {}: {e}", dir.display())))?;
            let results = fleet
                .export(dir, |r| {
                    output.unit(r, |path: &PathBuf| {
                        (
                            format!("saved to {}", path.display()),
                            json!({"status": "exported", "file": path.display().to_string()}),
                        )
                    });
                })
                .await;
            verdicts(&results, |_| true)
        }
    };
    output.summary(&verdicts);
    let failed = verdicts.iter().find_map(|v| match v {
        Verdict::Failed(code) => Some(*code),
        _ => None,
    });
    match failed {
        Some(code) => Err(Failure {
            code,
            message: "some units failed (see above)".to_owned(),
        }),
        None if verdicts.iter().any(|v| matches!(v, Verdict::Differs)) => Err(Failure {
            code: FAILURE,
            message: "some units differ from the wanted tree".to_owned(),
        }),
        None => Ok(()),
    }
}

fn verdicts<T>(results: &[UnitResult<T>], done: impl Fn(&T) -> bool) -> Vec<Verdict> {
    results
        .iter()
        .map(|r| match &r.outcome {
            Ok(value) if done(value) => Verdict::Done,
            Ok(_) => Verdict::Differs,
            Err(e) => Verdict::Failed(code_for(e.kind())),
        })
        .collect()
}

fn read_tree(path: &Path) -> Result<Value, Failure> {
    crate::device::read_settings_file(path)
}

/// Where the results go: lines beside a progress bar, or JSON Lines.
struct Output {
    json: bool,
    bar: Option<ProgressBar>,
}

impl Output {
    fn new(json: bool, total: usize) -> Self {
        let bar = (!json && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::new(total as u64);
            if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} units {msg}") {
                bar.set_style(style);
            }
            bar
        });
        Self { json, bar }
    }

    /// Prints one unit's result (`describe` gives the text and the JSON of a success).
    fn unit<T>(&mut self, result: &UnitResult<T>, describe: impl Fn(&T) -> (String, Value)) {
        let serial = result.serial_number.as_deref().unwrap_or("-");
        let (text, mut object) = match &result.outcome {
            Ok(value) => describe(value),
            Err(e) => (
                format!("failed: {e}"),
                json!({"status": "failed", "error": error_json(e)}),
            ),
        };
        if self.json {
            object["index"] = json!(result.index);
            object["address"] = json!(result.address.to_string());
            object["serialNumber"] = json!(result.serial_number);
            println!("{object}");
        } else {
            let line = format!("{serial}  {}  {text}", result.address);
            match &self.bar {
                Some(bar) => {
                    bar.println(line);
                    bar.inc(1);
                }
                None => println!("{line}"),
            }
        }
    }

    fn summary(&self, verdicts: &[Verdict]) {
        let done = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::Done))
            .count();
        let differ = verdicts
            .iter()
            .filter(|v| matches!(v, Verdict::Differs))
            .count();
        let failed = verdicts.len() - done - differ;
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        if self.json {
            println!(
                "{}",
                json!({"summary": {"units": verdicts.len(), "done": done, "differ": differ, "failed": failed}})
            );
        } else {
            println!(
                "{} units: {done} done, {differ} differ, {failed} failed",
                verdicts.len()
            );
        }
    }
}

fn error_json(e: &UnitError) -> Value {
    let nodes: Vec<Value> = e
        .node_errors()
        .iter()
        .map(|n| json!({"path": n.path, "message": n.message}))
        .collect();
    json!({
        "kind": e.kind().as_str(),
        "status": e.status(),
        "message": e.to_string(),
        "nodeErrors": nodes,
    })
}
