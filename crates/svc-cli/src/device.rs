//! `svc device`: configure an inertial navigation unit.
//!
//! Passwords never come from a command-line argument (other users of the machine can
//! read those): the login password is read from `SVC_DEVICE_PASSWORD`, from stdin with
//! `--password-stdin`, or at a prompt on a terminal; without any of them the login uses
//! an empty password (users have none by default). A new password (`password`) is read
//! from `SVC_DEVICE_NEW_PASSWORD`, from stdin with `--new-password-stdin`, or at a prompt
//! (asked twice).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use serde_json::{Value, json};
use svc_core::unit::{ApplyOptions, Journal, Password, Unit};

use crate::credentials::{read_secret, user_name};
use crate::exit::Failure;

/// Where the unit is, who acts, and what to do.
#[derive(Args, Debug)]
#[command(group(clap::ArgGroup::new("link").required(false).args(["url", "serial", "serial_tcp"])))]
pub struct DeviceArgs {
    /// The unit's address over HTTP, e.g. http://192.168.1.1 (or SVC_DEVICE_URL).
    #[arg(long, global = true, env = "SVC_DEVICE_URL")]
    url: Option<String>,
    /// A serial port carrying the sbgECom protocol, e.g. /dev/ttyUSB0.
    #[arg(long, global = true)]
    serial: Option<String>,
    /// Baud rate of --serial.
    #[arg(long, global = true, default_value_t = 115_200)]
    baud: u32,
    /// A serial-over-IP bridge, HOST:PORT.
    #[arg(long, global = true)]
    serial_tcp: Option<String>,
    /// Log in as this user (viewer, operator, powerUser, setup, factory); without it,
    /// requests act as the unit's default user.
    #[arg(long, global = true)]
    user: Option<String>,
    /// Read the login password from the first line of stdin.
    #[arg(long, global = true)]
    password_stdin: bool,
    #[command(subcommand)]
    command: DeviceCommand,
}

#[derive(Subcommand, Debug)]
enum DeviceCommand {
    /// Product, serial number, firmware and API versions.
    Info,
    /// Read, write, compare and apply settings.
    #[command(subcommand)]
    Settings(SettingsCommand),
    /// Reboot the unit (every session token and the settings lock end).
    Reboot {
        /// Wait until the unit answers again.
        #[arg(long)]
        wait: bool,
    },
    /// The on-board data logger.
    #[command(subcommand)]
    Logger(LoggerCommand),
    /// Many units against one wanted tree: status, apply, export (`--units FILE`).
    Fleet(crate::fleet::FleetArgs),
    /// The output logs the unit streams, as JSON Lines (one object per record) or into
    /// a session file (`--record`), until interrupted (or `--count`, `--seconds`): from
    /// its serial link (`--serial`, `--serial-tcp`), from UDP (`--udp`) or a growing
    /// file (`--follow`).
    Stream(crate::stream::StreamArgs),
    /// Wait until the unit's output logs say it is ready to log (a GNSS fix, the filter
    /// aligned, UTC valid); prints what they said. Exit 1 when the time runs out.
    WaitReady(crate::stream::WaitReadyArgs),
    /// Change a password: your own, or another user's when logged in as setup.
    Password {
        /// Whose password (default: the logged-in user's).
        #[arg(long = "for")]
        target: Option<String>,
        /// Read the new password from stdin instead of a prompt.
        #[arg(long)]
        new_password_stdin: bool,
    },
}

#[derive(Subcommand, Debug)]
enum SettingsCommand {
    /// Print the settings tree, or one node of it (e.g. aiding/gnss1/leverArmPrimary).
    Get {
        path: Option<String>,
        /// Only the settings changed from the defaults.
        #[arg(long)]
        delta: bool,
        /// Indented JSON.
        #[arg(long)]
        pretty: bool,
    },
    /// Write one node: VALUE is JSON (`[0.1,0,-1.2]`, `true`, `"10ms"`) or else a string.
    Set {
        path: String,
        value: String,
        /// Only validate on the unit.
        #[arg(long)]
        check_only: bool,
    },
    /// Compare settings files offline: the changed nodes and the partial tree that turns
    /// REFERENCE into FILE. Several files (a fleet's exports against one reference): a
    /// JSON array with one entry per file, each naming its file.
    Diff {
        reference: PathBuf,
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
    },
    /// Bring the unit to the wanted (whole or partial) tree, writing only what differs.
    Apply {
        wanted: PathBuf,
        /// Only validate on the unit.
        #[arg(long)]
        check_only: bool,
        /// Hold the settings lock while applying (needs --user).
        #[arg(long)]
        lock: bool,
        /// When the change takes effect only after a reboot: save the settings, reboot
        /// the unit and wait until it answers again.
        #[arg(long)]
        reboot: bool,
    },
    /// Save the settings to the unit's permanent memory (the vendor client's
    /// /settings/save; a unit without that route keeps applied settings anyway).
    Save,
    /// Save the whole tree to FILE (`-` for stdout).
    Export { file: PathBuf },
    /// Load a whole tree from FILE (`-` for stdin).
    Import {
        file: PathBuf,
        #[arg(long)]
        check_only: bool,
    },
    /// Restore the factory defaults.
    Default {
        #[arg(long)]
        check_only: bool,
    },
}

#[derive(Subcommand, Debug)]
enum LoggerCommand {
    Status,
    Start,
    Stop,
    /// The recorded sessions and their files, over FTP: one JSON object per line.
    Sessions {
        #[command(flatten)]
        ftp: FtpArgs,
    },
    /// Download a session (SESSION) or one of its files (SESSION/FILE) over FTP into
    /// OUT/SESSION/, resumed after a dropped connection, sizes checked.
    Download {
        /// The session, or SESSION/FILE.
        session: String,
        /// The folder to write into.
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// Delete the session from the unit once every file is downloaded and its
        /// size checked (needs the FTP WRITE right: operator and above).
        #[arg(long)]
        delete_after: bool,
        #[command(flatten)]
        ftp: FtpArgs,
    },
    /// Delete a session over FTP (the FTP WRITE right: operator and above).
    Delete {
        /// The session.
        session: String,
        #[command(flatten)]
        ftp: FtpArgs,
    },
}

/// Where the unit's FTP server is.
#[derive(Args, Debug)]
struct FtpArgs {
    /// The unit's FTP server, HOST:PORT (default: the host of --url on port 21).
    #[arg(long, value_name = "HOST:PORT")]
    ftp: Option<String>,
}

impl From<svc_core::unit::LoggerError> for Failure {
    fn from(e: svc_core::unit::LoggerError) -> Self {
        Self {
            code: crate::exit::code_for(e.kind()),
            message: e.to_string(),
        }
    }
}

/// The FTP address: `--ftp`, else the host of `--url` on port 21.
fn ftp_address(args: &DeviceArgs, ftp: &FtpArgs) -> Result<String, Failure> {
    if let Some(address) = &ftp.ftp {
        return Ok(address.clone());
    }
    let url = args.url.as_deref().ok_or_else(|| {
        Failure::usage("say where the unit's FTP server is: --ftp HOST:PORT (or --url URL)")
    })?;
    svc_core::unit::ftp_address_of(url).map_err(Failure::usage)
}

/// `svc device logger sessions|download|delete`: over FTP, without a REST session.
async fn logger_files(args: &DeviceArgs, command: &LoggerCommand) -> Result<(), Failure> {
    let ftp = match command {
        LoggerCommand::Sessions { ftp }
        | LoggerCommand::Download { ftp, .. }
        | LoggerCommand::Delete { ftp, .. } => ftp,
        _ => return Ok(()),
    };
    let address = ftp_address(args, ftp)?;
    let user = args
        .user
        .as_deref()
        .unwrap_or(svc_core::unit::FTP_DEFAULT_USER);
    user_name(user)?;
    let password = read_secret(
        "SVC_DEVICE_PASSWORD",
        args.password_stdin,
        &format!("Password for {user}: "),
        false,
    )?
    .unwrap_or_else(|| Password::new(""));
    // With --url, `sessions` also reads the data logger's status to say which session
    // is being recorded (as the same user, with the same password).
    let rest = match (&args.url, command) {
        (Some(url), LoggerCommand::Sessions { .. }) => Some((url.clone(), password.clone())),
        _ => None,
    };
    let files = svc_core::unit::LoggerFiles::new(address, user, password);
    let mut signals = crate::exit::Signals::listen();
    interruptible(&mut signals, async {
        match command {
            LoggerCommand::Sessions { .. } => {
                let sessions = match rest {
                    Some((url, password)) => {
                        let unit = Unit::http(&url)?;
                        if args.user.is_some() {
                            unit.login(user_name(user)?, password).await?;
                        }
                        let sessions = unit.logger_sessions(&files).await;
                        if args.user.is_some() {
                            let _ = unit.logout().await;
                        }
                        sessions?
                    }
                    None => files.sessions().await?,
                };
                for session in sessions {
                    let listed = json!({
                        "session": session.name,
                        "size": session.size(),
                        "recording": session.recording,
                        "files": session.files.iter().map(|f| json!({"name": f.name, "size": f.size})).collect::<Vec<_>>(),
                    });
                    print_json(&listed, false)?;
                }
                Ok(())
            }
            LoggerCommand::Download {
                session,
                out,
                delete_after,
                ..
            } => {
                // With --delete-after, only what was downloaded and checked is deleted.
                let done = if *delete_after {
                    files.download_then_delete(session, out).await?
                } else {
                    files.download(session, out).await?
                };
                print_json(
                    &json!({
                        "session": session,
                        "files": done.files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
                        "bytes": done.bytes,
                        "resumed": done.resumed,
                        "deleted": done.deleted,
                    }),
                    false,
                )
            }
            LoggerCommand::Delete { session, .. } => {
                files.delete(session).await?;
                eprintln!("svc device: session {session} deleted");
                Ok(())
            }
            _ => Ok(()),
        }
    })
    .await
}

pub async fn run(args: DeviceArgs) -> ExitCode {
    match execute(args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => failure.report("svc device"),
    }
}

/// How long the session's logout may take after a signal.
const LOGOUT_AFTER_SIGNAL: Duration = Duration::from_secs(10);

/// Runs a unit command until it ends or SIGINT/SIGTERM arrives; on a signal the
/// command is stopped (a request in flight may or may not have been applied by the
/// unit: a write is applied whole or not at all) and the caller's logout still runs,
/// which ends the session and releases a settings lock it held.
async fn interruptible<T>(
    signals: &mut crate::exit::Signals,
    work: impl std::future::Future<Output = Result<T, Failure>>,
) -> Result<T, Failure> {
    tokio::select! {
        result = work => result,
        signal = signals.next() => Err(Failure {
            code: signal.code(),
            message: format!(
                "interrupted by {}: a request in flight may or may not have been applied \
                 (read the settings back with `svc device settings get`)",
                signal.name()
            ),
        }),
    }
}

fn print_json(value: &Value, pretty: bool) -> Result<(), Failure> {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    }
    .map_err(|e| Failure::other(e.to_string()))?;
    println!("{text}");
    Ok(())
}

/// A settings file (a wanted tree, an export to import; `-` for stdin), refused when it
/// is not a settings tree or writes a key twice in one object (naming the key, its node
/// and its line: a JSON parser would keep the last one silently).
pub(crate) fn read_settings_file(path: &Path) -> Result<Value, Failure> {
    let (text, name) = if path == Path::new("-") {
        let mut s = String::new();
        std::io::stdin()
            .read_to_string(&mut s)
            .map_err(|e| Failure::other(format!("reading stdin: {e}")))?;
        (s, "stdin".to_owned())
    } else {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Failure::other(format!("reading {}: {e}", path.display())))?;
        (text, path.display().to_string())
    };
    svc_core::settings::parse_tree(&text, &name).map_err(|e| Failure {
        code: crate::exit::code_for(e.kind()),
        message: e.to_string(),
    })
}

/// `settings diff`: every file read first (one that is not a settings tree fails the
/// command before anything is printed), then each diffed against the reference.
fn diff_files(reference: &Path, files: &[PathBuf]) -> Result<Value, Failure> {
    let diffs = svc_core::settings::diff_files(reference, files).map_err(|e| Failure {
        code: crate::exit::code_for(e.kind()),
        message: e.to_string(),
    })?;
    let mut entries = Vec::with_capacity(diffs.len());
    for diff in &diffs {
        let patch = &diff.patch;
        let changed: Vec<&str> = patch.changed.iter().map(|path| path.as_str()).collect();
        let removed: Vec<&str> = patch.removed.iter().map(|path| path.as_str()).collect();
        let mut entry = json!({"changed": changed, "removed": removed, "patch": patch.tree});
        if files.len() > 1 {
            entry["file"] = Value::String(diff.file.display().to_string());
        }
        entries.push(entry);
    }
    Ok(match <[Value; 1]>::try_from(entries) {
        Ok([single]) => single,
        Err(entries) => Value::Array(entries),
    })
}

/// Writes a file whole or not at all (a temporary file renamed into place).
fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    if path == Path::new("-") {
        println!("{text}");
        return Ok(());
    }
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            Failure::other(format!("writing {}: {e}", path.display()))
        })
}

/// Where `svc` keeps what units owe after an interrupted `settings apply` (a save, a
/// reboot), one file per unit named by its serial number: `$SVC_STATE_DIR/units`, else
/// `$XDG_STATE_HOME/svc/units`, else `~/.local/state/svc/units` (`%LOCALAPPDATA%\svc\units`
/// on Windows). `None` when none of them is known.
fn journal_dir() -> Option<PathBuf> {
    let var = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    let base = var("SVC_STATE_DIR")
        .or_else(|| var("XDG_STATE_HOME").map(|d| d.join("svc")))
        .or_else(|| var("LOCALAPPDATA").map(|d| d.join("svc")))
        .or_else(|| var("HOME").map(|d| d.join(".local/state/svc")))?;
    Some(base.join("units"))
}

async fn connect(args: &DeviceArgs) -> Result<Unit, Failure> {
    let unit = match (&args.url, &args.serial, &args.serial_tcp) {
        (Some(url), None, None) => Unit::http(url)?,
        (None, Some(path), None) => Unit::serial(path, args.baud)?,
        (None, None, Some(address)) => Unit::serial_tcp(address).await?,
        _ => {
            return Err(Failure::usage(
                "say where the unit is: --url URL, --serial PATH or --serial-tcp HOST:PORT",
            ));
        }
    };
    let unit = match journal_dir() {
        Some(dir) => unit.with_journal(Journal::at(dir)),
        None => unit,
    };
    if let Some(name) = &args.user {
        let user = user_name(name)?;
        let password = read_secret(
            "SVC_DEVICE_PASSWORD",
            args.password_stdin,
            &format!("Password for {name}: "),
            false,
        )?
        .unwrap_or_else(|| Password::new(""));
        unit.login(user, password).await?;
    }
    Ok(unit)
}

/// A command-line value: JSON when it parses, otherwise the text as a string
/// (`10ms` needs no quotes).
fn cli_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

async fn execute(args: DeviceArgs) -> Result<(), Failure> {
    // Offline work first: `settings diff` needs no unit.
    if let DeviceCommand::Settings(SettingsCommand::Diff { reference, files }) = &args.command {
        return print_json(&diff_files(reference, files)?, true);
    }
    if let DeviceCommand::Fleet(fleet) = &args.command {
        return crate::fleet::run(fleet, args.user.as_deref(), args.password_stdin).await;
    }
    // The logger's files are on the unit's FTP server: no REST session.
    if let DeviceCommand::Logger(
        command @ (LoggerCommand::Sessions { .. }
        | LoggerCommand::Download { .. }
        | LoggerCommand::Delete { .. }),
    ) = &args.command
    {
        return logger_files(&args, command).await;
    }
    // Before the first request (a login, `/info`): a signal at any moment is answered
    // with its code.
    let mut signals = crate::exit::Signals::listen();
    if let DeviceCommand::Stream(stream) = &args.command
        && stream.needs_no_unit()
    {
        return crate::stream::run(None, stream, &mut signals).await;
    }
    if let DeviceCommand::WaitReady(wait) = &args.command
        && wait.needs_no_unit()
    {
        return crate::stream::wait_ready(None, wait, &mut signals).await;
    }
    let unit = signals
        .unless_interrupted(
            connect(&args),
            "while connecting: nothing was sent but a login",
        )
        .await??;
    let result = match &args.command {
        // Ends on a signal by itself, after writing what it received.
        DeviceCommand::Stream(stream) => {
            crate::stream::run(Some(&unit), stream, &mut signals).await
        }
        DeviceCommand::WaitReady(wait) => {
            crate::stream::wait_ready(Some(&unit), wait, &mut signals).await
        }
        command_ => interruptible(&mut signals, command(&unit, command_)).await,
    };
    if args.user.is_some() {
        // End the session so the unit does not keep the token (and any lock) alive,
        // also after a failure or a signal.
        match tokio::time::timeout(LOGOUT_AFTER_SIGNAL, unit.logout()).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) if result.is_err() => {
                eprintln!(
                    "svc device: logging out failed ({e}); a lock it held ends after 60 s without requests"
                );
            }
            _ => {}
        }
    }
    result
}

async fn command(unit: &Unit, command: &DeviceCommand) -> Result<(), Failure> {
    match command {
        DeviceCommand::Info => {
            let info = unit.info().await?;
            print_json(
                &serde_json::to_value(info).map_err(|e| Failure::other(e.to_string()))?,
                true,
            )
        }
        DeviceCommand::Settings(command) => settings(unit, command).await,
        // Handled above, without a single unit.
        DeviceCommand::Fleet(_) | DeviceCommand::Stream(_) | DeviceCommand::WaitReady(_) => Ok(()),
        DeviceCommand::Reboot { wait } => {
            unit.reboot().await?;
            if *wait {
                unit.wait_until_back(Duration::from_secs(120)).await?;
                eprintln!("the unit is back");
            }
            Ok(())
        }
        DeviceCommand::Logger(command) => {
            match command {
                LoggerCommand::Status => {}
                LoggerCommand::Start => unit.logger_start().await?,
                LoggerCommand::Stop => unit.logger_stop().await?,
                // Handled above, over FTP.
                LoggerCommand::Sessions { .. }
                | LoggerCommand::Download { .. }
                | LoggerCommand::Delete { .. } => return Ok(()),
            }
            let status = unit.logger_status().await?;
            print_json(
                &serde_json::to_value(status).map_err(|e| Failure::other(e.to_string()))?,
                true,
            )
        }
        DeviceCommand::Password {
            target,
            new_password_stdin,
        } => {
            let target = target.as_deref().map(user_name).transpose()?;
            let password = read_secret("SVC_DEVICE_NEW_PASSWORD", *new_password_stdin, "New password: ", true)?
                .ok_or_else(|| {
                    Failure::usage("give the new password in SVC_DEVICE_NEW_PASSWORD, with --new-password-stdin, or at a prompt")
                })?;
            unit.change_password(target, password).await?;
            eprintln!("password changed (the default user is chosen again at the next reboot)");
            Ok(())
        }
    }
}

async fn settings(unit: &Unit, command: &SettingsCommand) -> Result<(), Failure> {
    match command {
        SettingsCommand::Get {
            path,
            delta,
            pretty,
        } => {
            let value = match (path, delta) {
                (None, false) => unit.settings().await?,
                (None, true) => unit.settings_delta().await?,
                (Some(path), false) => unit.node(path).await?,
                (Some(path), true) => {
                    let node = svc_core::settings::NodePath::parse(path.trim_matches('/'))
                        .map_err(|e| Failure::usage(e.to_string()))?;
                    let tree = unit.settings_delta().await?;
                    svc_core::settings::get(&tree, &node)
                        .cloned()
                        .unwrap_or(Value::Null)
                }
            };
            print_json(&value, *pretty)
        }
        SettingsCommand::Set {
            path,
            value,
            check_only,
        } => {
            let outcome = unit
                .write_node(path, &cli_value(value), *check_only)
                .await?;
            print_json(
                &json!({"path": path, "checkOnly": check_only, "needReboot": outcome.need_reboot}),
                false,
            )
        }
        SettingsCommand::Diff { .. } => Ok(()),
        SettingsCommand::Apply {
            wanted,
            check_only,
            lock,
            reboot,
        } => {
            let wanted = read_settings_file(wanted)?;
            let report = unit
                .apply_wanted(
                    &wanted,
                    ApplyOptions {
                        check_only: *check_only,
                        lock: *lock,
                        reboot: *reboot,
                        wait_until_back: Some(Duration::from_secs(120)),
                    },
                )
                .await?;
            if report.rebooted {
                if !report.written {
                    eprintln!(
                        "svc device: finishing an earlier apply that left the unit owing a save and a reboot"
                    );
                }
                eprintln!("svc device: the unit rebooted to take the change and is back");
            }
            if report.unlock_unconfirmed {
                eprintln!(
                    "svc device: the change is written and confirmed; the unlock's answer was lost \
                     (the unit ends the lock after 60 s without a request)"
                );
            }
            print_json(
                &json!({
                    "changed": report.changed,
                    "needReboot": report.need_reboot,
                    "written": report.written,
                    "rebooted": report.rebooted,
                    "rebootPending": report.reboot_pending,
                    "unlockConfirmed": !report.unlock_unconfirmed,
                }),
                true,
            )?;
            if report.reboot_pending {
                return Err(Failure {
                    code: crate::exit::UNREACHABLE,
                    message: "the change is written and saved, but the reboot is not confirmed: \
                              its answer was lost and the unit was not seen to reboot; run the \
                              same command again to reboot it"
                        .to_owned(),
                });
            }
            Ok(())
        }
        SettingsCommand::Save => {
            unit.save().await?;
            eprintln!("svc device: settings saved");
            Ok(())
        }
        SettingsCommand::Export { file } => {
            let tree = unit.export().await?;
            let text =
                serde_json::to_string_pretty(&tree).map_err(|e| Failure::other(e.to_string()))?;
            write_file(file, &text)
        }
        SettingsCommand::Import { file, check_only } => {
            let tree = read_settings_file(file)?;
            let outcome = unit.import(&tree, *check_only).await?;
            print_json(
                &json!({"checkOnly": check_only, "needReboot": outcome.need_reboot}),
                false,
            )
        }
        SettingsCommand::Default { check_only } => {
            let outcome = unit.restore_defaults(*check_only).await?;
            print_json(
                &json!({"checkOnly": check_only, "needReboot": outcome.need_reboot}),
                false,
            )
        }
    }
}
