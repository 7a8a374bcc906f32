//! The unit's data logger files over FTP: list the sessions, download them, delete them.
//!
//! A unit's data logger writes sessions, each a folder `<session>` of files
//! `<session>.001`, `<session>.002`, … (sbgECom frames, read with `svc-logs`), served
//! by the unit's FTP server (plain FTP, passive mode) to the unit's users: the `FTP`
//! right of the rights matrix lets `READ` list and download and `WRITE` also delete.
//!
//! Built on `suppaftp` (tokio): it speaks passive FTP, `REST` and `SIZE`, and parses
//! the POSIX `LIST` lines the unit sends; what this module adds is the resume loop, the
//! `.part` files, the size check and typed errors.
//!
//! ```no_run
//! # async fn run() -> Result<(), svc_core::unit::LoggerError> {
//! use svc_core::unit::{LoggerFiles, Password};
//!
//! let ftp = LoggerFiles::new("192.168.1.1:21", "viewer", Password::new(""));
//! for session in ftp.sessions().await? {
//!     println!("{} {} bytes", session.name, session.size());
//! }
//! ftp.download("session", "logs".as_ref()).await?;
//! # Ok(()) }
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use suppaftp::list::File as ListedFile;
use suppaftp::tokio::AsyncFtpStream;
use suppaftp::types::FileType;
use suppaftp::{FtpError, Status};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::Password;
use crate::error::ErrorKind;

/// How long connecting and each command may take.
pub const FTP_TIMEOUT: Duration = Duration::from_secs(20);
/// How many times a download is resumed after its connection dropped.
pub const DOWNLOAD_ATTEMPTS: u32 = 5;

/// What went wrong with the logger files. Never holds the password.
#[non_exhaustive]
#[derive(Debug, thiserror::Error)]
pub enum LoggerError {
    /// The FTP server could not be reached, the connection dropped, or the server did
    /// not answer within [`FTP_TIMEOUT`] (`timed_out`: kind
    /// [`Timeout`](ErrorKind::Timeout), as every request without an answer in time).
    #[error("{address}: {}: {message}", if *.timed_out { "the unit's FTP server did not answer in time" } else { "cannot reach the unit's FTP server" })]
    Unreachable {
        /// `host:port`.
        address: String,
        /// What failed.
        message: String,
        /// Whether the server stayed silent until the deadline.
        timed_out: bool,
    },
    /// The server refused a command (530 wrong user or password, 550 no such file or
    /// permission denied, ...).
    #[error("{command}: the unit's FTP server answered {code} {message}")]
    Refused {
        /// The FTP command (`PASS`, `RETR`, `DELE`, ...).
        command: &'static str,
        /// The reply code.
        code: u32,
        /// The reply text.
        message: String,
    },
    /// No such session or file in the listing.
    #[error("no logger session or file `{0}`")]
    NotFound(String),
    /// A name that is not a session (`NAME`) or a file of one (`NAME/FILE`).
    #[error("`{0}` is not a session name or SESSION/FILE")]
    InvalidName(String),
    /// A password FTP cannot carry (it holds a line break).
    #[error("the password cannot be sent over FTP: it holds a line break")]
    InvalidPassword,
    /// A downloaded file's size differs from the listing.
    #[error("{file}: downloaded {got} bytes, the unit lists {expected}")]
    SizeMismatch {
        /// The file (`session/file`).
        file: String,
        /// The size the listing gave.
        expected: u64,
        /// The size downloaded.
        got: u64,
    },
    /// A local file could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The local path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The unit's files differ from what was downloaded (the session gained a file, a
    /// file grew): nothing was deleted.
    #[error("{name}: not deleted: it changed on the unit since the download ({what})")]
    ChangedSinceDownload {
        /// The session or `SESSION/FILE`.
        name: String,
        /// What differs.
        what: String,
    },
    /// No FTP address was given and the unit's link names none (a serial link).
    #[error("{0}: say where the unit's FTP server is (HOST:PORT)")]
    NoAddress(String),
    /// The server answered something that is not FTP.
    #[error("the unit's FTP server answered something unexpected: {0}")]
    InvalidResponse(String),
    /// The unit's REST interface failed (reading the data logger's status).
    #[error(transparent)]
    Unit(#[from] super::UnitError),
}

impl LoggerError {
    /// The kind of failure, as every error of the SDK has: 530 → `Authentication`,
    /// 550 → `NotFound` (or `PermissionDenied` when the server says so), a dropped or
    /// refused connection → `Unreachable`, no answer within the timeout → `Timeout`, a size mismatch → `Verification`.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Self::Unreachable {
                timed_out: true, ..
            } => ErrorKind::Timeout,
            Self::Unreachable { .. } => ErrorKind::Unreachable,
            Self::Refused { code, message, .. } => match code {
                530 | 331 | 332 => ErrorKind::Authentication,
                550 if message.to_ascii_lowercase().contains("permission") => {
                    ErrorKind::PermissionDenied
                }
                550 => ErrorKind::NotFound,
                400..=499 => ErrorKind::Transient,
                _ => ErrorKind::InvalidInput,
            },
            Self::NotFound(_) => ErrorKind::NotFound,
            Self::InvalidName(_) | Self::InvalidPassword | Self::NoAddress(_) => {
                ErrorKind::InvalidInput
            }
            Self::SizeMismatch { .. } => ErrorKind::Verification,
            Self::ChangedSinceDownload { .. } => ErrorKind::Conflict,
            Self::Io { .. } => ErrorKind::Io,
            Self::InvalidResponse(_) => ErrorKind::InvalidResponse,
            Self::Unit(e) => e.kind(),
        }
    }

    /// Which side failed: the unit (its FTP server or REST interface), except for a
    /// name, password or address refused before connecting and a local file (`None`).
    pub fn side(&self) -> Option<crate::Side> {
        match self {
            Self::InvalidName(_) | Self::InvalidPassword | Self::NoAddress(_) | Self::Io { .. } => {
                None
            }
            Self::Unit(e) => e.side(),
            _ => Some(crate::Side::Unit),
        }
    }

    /// The FTP reply code, when the server refused a command.
    pub fn code(&self) -> Option<u32> {
        match self {
            Self::Refused { code, .. } => Some(*code),
            _ => None,
        }
    }
}

/// One file of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggerFile {
    /// `<session>.NNN`.
    pub name: String,
    /// Its size now, in bytes.
    pub size: u64,
}

/// One session of the data logger.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoggerSession {
    /// The session's folder name.
    pub name: String,
    /// Its files, in order.
    pub files: Vec<LoggerFile>,
    /// Whether the logger is still writing it: `None` when FTP alone cannot tell (see
    /// [`LoggerFiles::sessions`]).
    pub recording: Option<bool>,
}

impl LoggerSession {
    /// The bytes of all its files.
    pub fn size(&self) -> u64 {
        self.files.iter().map(|f| f.size).sum()
    }
}

/// What a download wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Downloaded {
    /// The files written, in order (`dest/<session>/<file>`).
    pub files: Vec<PathBuf>,
    /// Their bytes.
    pub bytes: u64,
    /// How many times a dropped transfer was resumed with `REST`.
    pub resumed: u32,
    /// Whether what was downloaded was then deleted from the unit
    /// ([`LoggerFiles::download_then_delete`]).
    pub deleted: bool,
}

/// The unit's FTP server of its data logger files, with a user's credentials. Each
/// call opens its own connection. `Debug` never shows the password.
#[derive(Clone)]
pub struct LoggerFiles {
    address: String,
    user: String,
    password: Password,
    timeout: Duration,
}

impl fmt::Debug for LoggerFiles {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoggerFiles")
            .field("address", &self.address)
            .field("user", &self.user)
            .field("password", &self.password)
            .finish()
    }
}

fn refused(command: &'static str, e: FtpError, address: &str) -> LoggerError {
    match e {
        FtpError::UnexpectedResponse(response) => LoggerError::Refused {
            command,
            code: response.status.code(),
            message: String::from_utf8_lossy(&response.body).trim().to_owned(),
        },
        FtpError::ConnectionError(e) => LoggerError::Unreachable {
            address: address.to_owned(),
            message: e.to_string(),
            timed_out: false,
        },
        FtpError::BadResponse => LoggerError::InvalidResponse(format!("{command}: bad reply")),
        other => LoggerError::InvalidResponse(format!("{command}: {other}")),
    }
}

/// The FTP user of a session that is not logged in: the lowest role, whose `FTP`
/// `READ` right lists and downloads.
pub const FTP_DEFAULT_USER: &str = "viewer";

/// The FTP server of the unit at `url` (a unit address, see
/// [`unit_address`](super::unit_address)): its host on port 21, `host:21`.
///
/// # Errors
///
/// Why `url` is not a unit address, or has no host.
pub fn ftp_address_of(url: &str) -> Result<String, String> {
    let parsed = super::unit_address(url)?;
    // `host_str` keeps the brackets of an IPv6 address.
    let host = parsed
        .host_str()
        .ok_or_else(|| format!("{url} has no host"))?;
    Ok(format!("{host}:21"))
}

/// A session (`NAME`) or one of its files (`NAME/FILE`), checked: no empty, `.` or
/// `..` part, no other `/`, no control characters.
fn split_name(name: &str) -> Result<(&str, Option<&str>), LoggerError> {
    let invalid = || LoggerError::InvalidName(name.to_owned());
    let name_ok = |part: &str| {
        !part.is_empty() && part != "." && part != ".." && !part.chars().any(char::is_control)
    };
    let mut parts = name.trim_matches('/').splitn(2, '/');
    let session = parts.next().filter(|s| name_ok(s)).ok_or_else(invalid)?;
    match parts.next() {
        None => Ok((session, None)),
        Some(file) if name_ok(file) && !file.contains('/') => Ok((session, Some(file))),
        Some(_) => Err(invalid()),
    }
}

/// Whether the unit still lists what was downloaded (`local`): the one file with its
/// size, or (a whole session) the same files with the same sizes.
fn unchanged_since_download(
    name: &str,
    one_file: bool,
    listed: &[LoggerFile],
    local: &[LoggerFile],
) -> Result<(), LoggerError> {
    let same = if one_file {
        local.iter().all(|l| listed.contains(l))
    } else {
        listed == local
    };
    if same {
        return Ok(());
    }
    let bytes = |files: &[LoggerFile]| files.iter().map(|f| f.size).sum::<u64>();
    Err(LoggerError::ChangedSinceDownload {
        name: name.to_owned(),
        what: format!(
            "the unit lists {} file(s) of {} bytes, {} of {} bytes were downloaded",
            listed.len(),
            bytes(listed),
            local.len(),
            bytes(local)
        ),
    })
}

impl LoggerFiles {
    /// The FTP server at `address` (`host:port`), as `user`.
    pub fn new(address: impl Into<String>, user: impl Into<String>, password: Password) -> Self {
        Self {
            address: address.into(),
            user: user.into(),
            password,
            timeout: FTP_TIMEOUT,
        }
    }

    /// How long connecting and each command may take ([`FTP_TIMEOUT`] by default).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// `host:port` of the server.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// The FTP user.
    pub fn user(&self) -> &str {
        &self.user
    }

    async fn timed<T>(
        &self,
        command: &'static str,
        future: impl Future<Output = Result<T, FtpError>>,
    ) -> Result<T, LoggerError> {
        match tokio::time::timeout(self.timeout, future).await {
            Ok(result) => result.map_err(|e| refused(command, e, &self.address)),
            Err(_) => Err(LoggerError::Unreachable {
                address: self.address.clone(),
                message: format!("{command}: no answer within {:?}", self.timeout),
                timed_out: true,
            }),
        }
    }

    /// A logged-in connection in binary mode.
    async fn connect(&self) -> Result<AsyncFtpStream, LoggerError> {
        let mut ftp = self
            .timed("connect", AsyncFtpStream::connect(self.address.as_str()))
            .await?;
        ftp.set_passive_nat_workaround(true);
        let user = self
            .timed(
                "USER",
                ftp.custom_command(
                    format!("USER {}", self.user),
                    &[Status::NeedPassword, Status::LoggedIn],
                ),
            )
            .await?;
        if user.status == Status::NeedPassword {
            // PASS goes straight to the socket: suppaftp traces every command it sends
            // (the password included) through the `log` crate.
            let password = self.password.expose_secret();
            if password.contains(['\r', '\n']) {
                return Err(LoggerError::InvalidPassword);
            }
            let line = format!("PASS {password}\r\n");
            let sent = tokio::time::timeout(self.timeout, async {
                let socket = ftp.get_ref().await;
                let mut rest = line.as_bytes();
                while !rest.is_empty() {
                    socket.writable().await?;
                    match socket.try_write(rest) {
                        Ok(n) => rest = &rest[n..],
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                        Err(e) => return Err(e),
                    }
                }
                Ok(())
            })
            .await;
            match sent {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    return Err(LoggerError::Unreachable {
                        address: self.address.clone(),
                        message: format!("PASS: {e}"),
                        timed_out: false,
                    });
                }
                Err(_) => {
                    return Err(LoggerError::Unreachable {
                        address: self.address.clone(),
                        message: format!("PASS: not sent within {:?}", self.timeout),
                        timed_out: true,
                    });
                }
            }
            self.timed("PASS", ftp.read_response(Status::LoggedIn))
                .await?;
        }
        self.timed("TYPE", ftp.transfer_type(FileType::Binary))
            .await?;
        Ok(ftp)
    }

    async fn list(
        &self,
        ftp: &mut AsyncFtpStream,
        path: &str,
    ) -> Result<Vec<ListedFile>, LoggerError> {
        let lines = self.timed("LIST", ftp.list(Some(path))).await?;
        lines
            .iter()
            .filter(|line| !line.trim().is_empty())
            .map(|line| {
                line.parse::<ListedFile>()
                    .map_err(|e| LoggerError::InvalidResponse(format!("LIST line `{line}`: {e}")))
            })
            .collect()
    }

    async fn list_sessions(
        &self,
        ftp: &mut AsyncFtpStream,
    ) -> Result<Vec<LoggerSession>, LoggerError> {
        let mut sessions = Vec::new();
        for entry in self.list(ftp, "/").await? {
            if !entry.is_directory() {
                continue;
            }
            let name = entry.name().to_owned();
            let mut files: Vec<LoggerFile> = self
                .list(ftp, &format!("/{name}"))
                .await?
                .into_iter()
                .filter(ListedFile::is_file)
                .map(|file| LoggerFile {
                    name: file.name().to_owned(),
                    size: file.size() as u64,
                })
                .collect();
            files.sort_by(|a, b| a.name.cmp(&b.name));
            sessions.push(LoggerSession {
                name,
                files,
                recording: None,
            });
        }
        sessions.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(sessions)
    }

    /// The session `session` as listed now; [`LoggerError::NotFound`] naming `asked`
    /// (the session or `SESSION/FILE` asked for) when it is not there.
    async fn find_session(
        &self,
        ftp: &mut AsyncFtpStream,
        session: &str,
        asked: &str,
    ) -> Result<LoggerSession, LoggerError> {
        self.list_sessions(ftp)
            .await?
            .into_iter()
            .find(|s| s.name == session)
            .ok_or_else(|| LoggerError::NotFound(asked.to_owned()))
    }

    /// The sessions and their files, names in order, sizes as the unit lists them now.
    /// FTP does not say which session the logger is writing: `recording` is `None`
    /// ([`Unit::logger_sessions`](super::Unit::logger_sessions) fills it from the
    /// data logger's status).
    ///
    /// # Errors
    ///
    /// [`LoggerError`]: 530 wrong user or password, connection failures.
    pub async fn sessions(&self) -> Result<Vec<LoggerSession>, LoggerError> {
        let mut ftp = self.connect().await?;
        let sessions = self.list_sessions(&mut ftp).await;
        let _ = ftp.quit().await;
        sessions
    }

    /// Downloads a session (`NAME`: every file) or one file (`NAME/FILE`) into
    /// `dest/<session>/`. Each file is written to `<file>.part`, resumed with `REST`
    /// after a dropped connection (up to [`DOWNLOAD_ATTEMPTS`] times), its size checked
    /// against the listing (a file the logger is still writing may have grown: the
    /// server's `SIZE` must then be at least what was read), then renamed. A `.part` left by an
    /// earlier attempt is resumed.
    ///
    /// # Errors
    ///
    /// [`LoggerError::NotFound`] for a name not listed, a size mismatch, refusals
    /// (530, 550), local write failures.
    pub async fn download(&self, name: &str, dest: &Path) -> Result<Downloaded, LoggerError> {
        let (session, file) = split_name(name)?;
        let mut ftp = self.connect().await?;
        let found = self.find_session(&mut ftp, session, name).await?;
        let files: Vec<LoggerFile> = match file {
            None => found.files,
            Some(file) => vec![
                found
                    .files
                    .into_iter()
                    .find(|f| f.name == file)
                    .ok_or_else(|| LoggerError::NotFound(name.to_owned()))?,
            ],
        };
        let folder = dest.join(session);
        tokio::fs::create_dir_all(&folder)
            .await
            .map_err(|source| LoggerError::Io {
                path: folder.clone(),
                source,
            })?;
        let mut done = Downloaded::default();
        let mut connection = Some(ftp);
        for file in files {
            let remote = format!("/{session}/{}", file.name);
            let target = folder.join(&file.name);
            let (bytes, resumed) = self
                .download_file(&mut connection, &remote, file.size, &target)
                .await?;
            done.bytes += bytes;
            done.resumed += resumed;
            done.files.push(target);
        }
        if let Some(mut ftp) = connection {
            let _ = ftp.quit().await;
        }
        Ok(done)
    }

    /// One file, resumed as needed: its bytes and how many resumptions.
    async fn download_file(
        &self,
        connection: &mut Option<AsyncFtpStream>,
        remote: &str,
        listed: u64,
        target: &Path,
    ) -> Result<(u64, u32), LoggerError> {
        let mut part_name = target.as_os_str().to_owned();
        part_name.push(".part");
        let part = PathBuf::from(part_name);
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| LoggerError::Io { path, source }
        };
        let mut out = tokio::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&part)
            .await
            .map_err(io(&part))?;
        let mut have = out.metadata().await.map_err(io(&part))?.len();
        if have > listed {
            // Not this file's beginning: start again.
            out.set_len(0).await.map_err(io(&part))?;
            have = 0;
        }
        let mut resumed = 0;
        let mut attempts = 0;
        let mut last_error = None;
        while have < listed || attempts == 0 {
            if attempts > DOWNLOAD_ATTEMPTS {
                return Err(last_error.unwrap_or_else(|| LoggerError::Unreachable {
                    address: self.address.clone(),
                    message: format!("{remote}: the transfer kept dropping"),
                    timed_out: false,
                }));
            }
            if attempts > 0 {
                resumed += 1;
            }
            attempts += 1;
            let mut ftp = match connection.take() {
                Some(ftp) => ftp,
                None => match self.connect().await {
                    Ok(ftp) => ftp,
                    Err(e @ LoggerError::Unreachable { .. }) => {
                        last_error = Some(e);
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        continue;
                    }
                    Err(e) => return Err(e),
                },
            };
            match self.transfer(&mut ftp, remote, have, &mut out).await {
                Ok(()) => *connection = Some(ftp),
                // A refusal of the file itself is final; a dropped transfer is resumed on
                // a new connection.
                Err(
                    e @ LoggerError::Refused {
                        code: 500..=599, ..
                    },
                ) => return Err(e),
                Err(e @ LoggerError::Io { .. }) => return Err(e),
                Err(e) => last_error = Some(e),
            }
            out.flush().await.map_err(io(&part))?;
            have = out.metadata().await.map_err(io(&part))?.len();
        }
        out.sync_all().await.map_err(io(&part))?;
        drop(out);
        if have != listed {
            // A file being written grows: what was read must be a prefix of what it
            // holds now (its size now at least what was read).
            let now = match connection.as_mut() {
                Some(ftp) => self.timed("SIZE", ftp.size(remote)).await.ok(),
                None => None,
            };
            if have < listed || now.is_none_or(|now| (now as u64) < have) {
                return Err(LoggerError::SizeMismatch {
                    file: remote.trim_start_matches('/').to_owned(),
                    expected: listed,
                    got: have,
                });
            }
        }
        tokio::fs::rename(&part, target).await.map_err(io(target))?;
        Ok((have, resumed))
    }

    /// `RETR` from `offset`, appended to `out`.
    async fn transfer(
        &self,
        ftp: &mut AsyncFtpStream,
        remote: &str,
        offset: u64,
        out: &mut tokio::fs::File,
    ) -> Result<(), LoggerError> {
        if offset > 0 {
            let offset = usize::try_from(offset)
                .map_err(|_| LoggerError::InvalidResponse("offset too large".to_owned()))?;
            self.timed("REST", ftp.resume_transfer(offset)).await?;
        }
        let mut stream = self.timed("RETR", ftp.retr_as_stream(remote)).await?;
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let read = tokio::time::timeout(self.timeout, stream.read(&mut buffer)).await;
            let n = match read {
                Ok(Ok(n)) => n,
                Ok(Err(e)) => {
                    return Err(LoggerError::Unreachable {
                        address: self.address.clone(),
                        message: format!("RETR {remote}: {e}"),
                        timed_out: false,
                    });
                }
                Err(_) => {
                    return Err(LoggerError::Unreachable {
                        address: self.address.clone(),
                        message: format!("RETR {remote}: no data within {:?}", self.timeout),
                        timed_out: true,
                    });
                }
            };
            if n == 0 {
                break;
            }
            out.write_all(&buffer[..n])
                .await
                .map_err(|source| LoggerError::Io {
                    path: PathBuf::from(remote),
                    source,
                })?;
        }
        match self.timed("RETR", stream.finish()).await {
            Ok(()) => Ok(()),
            // The server ended the transfer early (426, 451): resumed by the caller.
            Err(LoggerError::Refused { code, message, .. }) if (400..500).contains(&code) => {
                Err(LoggerError::Unreachable {
                    address: self.address.clone(),
                    message: format!("RETR {remote}: {code} {message}"),
                    timed_out: false,
                })
            }
            Err(e) => Err(e),
        }
    }

    /// Downloads as [`download`](Self::download), then deletes from the unit exactly
    /// what was downloaded: one file (`NAME/FILE`), or a whole session (`NAME`: its
    /// files, then its folder). Nothing is deleted unless every file is downloaded,
    /// its size checked, and the unit still lists what was downloaded, file for file and
    /// byte for byte (a session that gained or changed a file since is left whole:
    /// [`LoggerError::ChangedSinceDownload`]). Deleting needs the `FTP` `WRITE` right.
    ///
    /// # Errors
    ///
    /// As [`download`](Self::download) and [`delete`](Self::delete);
    /// [`LoggerError::ChangedSinceDownload`]. The downloaded files are kept in every
    /// case.
    pub async fn download_then_delete(
        &self,
        name: &str,
        dest: &Path,
    ) -> Result<Downloaded, LoggerError> {
        let (session, file) = split_name(name)?;
        let mut done = self.download(name, dest).await?;
        let mut local = Vec::with_capacity(done.files.len());
        for path in &done.files {
            let size = tokio::fs::metadata(path)
                .await
                .map_err(|source| LoggerError::Io {
                    path: path.clone(),
                    source,
                })?
                .len();
            let file_name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            local.push(LoggerFile {
                name: file_name,
                size,
            });
        }
        let mut ftp = self.connect().await?;
        let listed = self.find_session(&mut ftp, session, name).await?;
        if let Err(e) = unchanged_since_download(name, file.is_some(), &listed.files, &local) {
            let _ = ftp.quit().await;
            return Err(e);
        }
        for file in &local {
            self.timed("DELE", ftp.rm(format!("/{session}/{}", file.name)))
                .await?;
        }
        if file.is_none() {
            self.timed("RMD", ftp.rmdir(format!("/{session}"))).await?;
        }
        let _ = ftp.quit().await;
        done.deleted = true;
        Ok(done)
    }

    /// Deletes a session: its files, then its folder (the `FTP` `WRITE` right).
    ///
    /// # Errors
    ///
    /// [`LoggerError::NotFound`] for a session not listed; 550 (permission denied)
    /// without the right or for the session the logger is writing.
    pub async fn delete(&self, session: &str) -> Result<(), LoggerError> {
        let (session, None) = split_name(session)? else {
            return Err(LoggerError::InvalidName(session.to_owned()));
        };
        let mut ftp = self.connect().await?;
        let found = self.find_session(&mut ftp, session, session).await?;
        for file in &found.files {
            self.timed("DELE", ftp.rm(format!("/{session}/{}", file.name)))
                .await?;
        }
        self.timed("RMD", ftp.rmdir(format!("/{session}"))).await?;
        let _ = ftp.quit().await;
        Ok(())
    }
}

impl super::Unit {
    /// The sessions of `files` (this unit's FTP server), each with `recording` said:
    /// the data logger's status names the session it writes (by `sessionName`; when
    /// that is empty, the newest session named by a start time `YYYYMMDD_HHMMSS`).
    ///
    /// # Errors
    ///
    /// [`LoggerError`], and [`LoggerError::Unit`] when the status cannot be read.
    pub async fn logger_sessions(
        &self,
        files: &LoggerFiles,
    ) -> Result<Vec<LoggerSession>, LoggerError> {
        let status = self.logger_status().await?;
        let mut sessions = files.sessions().await?;
        let logging = status.state == super::enums::DataLoggerState::Logging;
        let by_time = |name: &str| {
            name.len() == 15
                && name.char_indices().all(
                    |(i, c)| {
                        if i == 8 { c == '_' } else { c.is_ascii_digit() }
                    },
                )
        };
        let running = if !logging {
            None
        } else if status.session_name.is_empty() {
            sessions
                .iter()
                .rev()
                .find(|s| by_time(&s.name))
                .map(|s| s.name.clone())
        } else {
            Some(status.session_name.clone())
        };
        for session in &mut sessions {
            session.recording = Some(running.as_deref() == Some(session.name.as_str()));
        }
        Ok(sessions)
    }

    /// The unit's data logger files over FTP as this session's user: the user logged
    /// in and its password, or [`FTP_DEFAULT_USER`] without a password when the session
    /// is not logged in; at `ftp_address` (`host:port`), or, when `None`, on port 21 of
    /// the unit's host ([`ftp_address_of`] its URL).
    ///
    /// # Errors
    ///
    /// [`LoggerError::NoAddress`] without `ftp_address` for a unit over a serial link.
    pub fn session_logger_files(
        &self,
        ftp_address: Option<&str>,
    ) -> Result<LoggerFiles, LoggerError> {
        let address = match ftp_address {
            Some(address) => address.to_owned(),
            None => ftp_address_of(self.link())
                .map_err(|_| LoggerError::NoAddress(self.link().to_owned()))?,
        };
        let (user, password) = match self.credentials().as_ref() {
            Some((user, password)) => (user.to_string(), password.clone()),
            None => (FTP_DEFAULT_USER.to_owned(), Password::new("")),
        };
        Ok(LoggerFiles::new(address, user, password))
    }

    /// The unit's data logger files over FTP at `ftp_address` (`host:port`; a unit
    /// serves them on port 21), as `user`.
    pub fn logger_files(
        &self,
        ftp_address: impl Into<String>,
        user: impl Into<String>,
        password: Password,
    ) -> LoggerFiles {
        LoggerFiles::new(ftp_address, user, password)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, size: u64) -> LoggerFile {
        LoggerFile {
            name: name.to_owned(),
            size,
        }
    }

    #[test]
    fn a_session_is_deleted_only_as_it_was_downloaded() {
        let downloaded = [file("s.001", 10), file("s.002", 4)];
        assert!(unchanged_since_download("s", false, &downloaded, &downloaded).is_ok());
        // A file more, a file grown, a file gone: kept, Conflict.
        for listed in [
            vec![file("s.001", 10), file("s.002", 4), file("s.003", 1)],
            vec![file("s.001", 10), file("s.002", 5)],
            vec![file("s.001", 10)],
        ] {
            let e =
                unchanged_since_download("s", false, &listed, &downloaded).expect_err("changed");
            assert_eq!(e.kind(), ErrorKind::Conflict);
            assert!(e.to_string().contains("not deleted"), "{e}");
        }
        // One file: the others may change, not that one.
        let one = [file("s.002", 4)];
        let listed = [file("s.001", 99), file("s.002", 4), file("s.003", 7)];
        assert!(unchanged_since_download("s/s.002", true, &listed, &one).is_ok());
        let grown = [file("s.001", 10), file("s.002", 6)];
        assert!(unchanged_since_download("s/s.002", true, &grown, &one).is_err());
    }

    #[test]
    fn the_ftp_address_of_a_unit_is_its_host_on_port_21() {
        assert_eq!(
            ftp_address_of("http://192.168.1.1:8080").as_deref(),
            Ok("192.168.1.1:21")
        );
        assert_eq!(ftp_address_of("http://[::1]").as_deref(), Ok("[::1]:21"));
        assert!(ftp_address_of("http://unit/api/v1").is_err());
        assert!(ftp_address_of("/dev/ttyUSB0").is_err());
    }
}
