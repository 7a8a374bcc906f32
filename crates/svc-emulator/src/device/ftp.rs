//! The unit's FTP server for its data logger files (libunftp, plain FTP, passive mode).
//!
//! - **Login**: the unit's users and passwords as they are now (an empty password logs
//!   in a user who has none; passwords changed through the REST API apply at the next
//!   login); `anonymous` and unknown users are refused, as is a wrong password: 530.
//! - **Rights**: the `FTP` category of the rights matrix: `READ` lists and downloads,
//!   `WRITE` also deletes (files with `DELE`, an emptied session folder with `RMD`).
//!   Uploads, renames and `MKD` are refused to everyone (550), as is deleting a file of
//!   the session the logger is writing.
//! - **Files**: `/<session>/<session>.NNN`; a listing or a download first writes what
//!   the logger's elapsed time implies (see [`super::logger`]). `REST` resumes downloads.

use std::fmt;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use async_trait::async_trait;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::TcpListener;
use tokio::sync::watch;
use unftp_core::auth::{
    AuthenticationError, Authenticator, Credentials, Principal, UserDetail, UserDetailError,
    UserDetailProvider,
};
use unftp_core::storage::{Error, ErrorKind, Fileinfo, Result, StorageBackend};
use unftp_sbe_fs::{Filesystem, Meta};

use super::unit::Unit;

/// A logged-in FTP user: the unit's user and whether the `FTP` right lets it delete.
#[derive(Clone, Debug)]
pub struct FtpUser {
    name: String,
    write: bool,
}

impl fmt::Display for FtpUser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl UserDetail for FtpUser {}

/// Checks a login against the unit's users (the password is compared, never kept).
struct UnitAuthenticator {
    unit: Arc<Unit>,
}

impl Debug for UnitAuthenticator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnitAuthenticator")
    }
}

#[async_trait]
impl Authenticator for UnitAuthenticator {
    async fn authenticate(
        &self,
        username: &str,
        creds: &Credentials,
    ) -> std::result::Result<Principal, AuthenticationError> {
        let password = creds.password.as_deref().unwrap_or_default();
        match self.unit.ftp_login(username, password) {
            Some(_) => Ok(Principal {
                username: username.to_owned(),
            }),
            None => Err(AuthenticationError::BadPassword),
        }
    }
}

/// Gives the logged-in user its `FTP` right.
struct UnitUsers {
    unit: Arc<Unit>,
}

impl Debug for UnitUsers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("UnitUsers")
    }
}

#[async_trait]
impl UserDetailProvider for UnitUsers {
    type User = FtpUser;

    async fn provide_user_detail(
        &self,
        principal: &Principal,
    ) -> std::result::Result<FtpUser, UserDetailError> {
        let write = self
            .unit
            .ftp_right(&principal.username)
            .ok_or_else(|| UserDetailError::new("the user has no FTP right"))?;
        Ok(FtpUser {
            name: principal.username.clone(),
            write,
        })
    }
}

/// The logger's folder, read-only but for deletes by users with `FTP` `WRITE`.
struct SessionStore {
    unit: Arc<Unit>,
    /// `None` when the logger's folder cannot be opened (every command answers 451).
    files: Option<Filesystem>,
}

impl SessionStore {
    fn files(&self) -> Result<&Filesystem> {
        self.files.as_ref().ok_or_else(|| {
            Error::new(
                ErrorKind::LocalError,
                std::io::Error::other("the logger storage cannot be opened"),
            )
        })
    }
}

impl Debug for SessionStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SessionStore")
    }
}

fn denied(what: &str) -> Error {
    Error::new(
        ErrorKind::PermissionDenied,
        std::io::Error::other(format!("{what}: the logger files are read-only")),
    )
}

#[async_trait]
impl StorageBackend<FtpUser> for SessionStore {
    type Metadata = Meta;

    fn supported_features(&self) -> u32 {
        unftp_core::storage::FEATURE_RESTART
    }

    async fn metadata<P: AsRef<Path> + Send + Debug>(
        &self,
        user: &FtpUser,
        path: P,
    ) -> Result<Meta> {
        self.unit.logger_catch_up();
        self.files()?.metadata(user, path).await
    }

    async fn list<P: AsRef<Path> + Send + Debug>(
        &self,
        user: &FtpUser,
        path: P,
    ) -> Result<Vec<Fileinfo<PathBuf, Meta>>> {
        self.unit.logger_catch_up();
        self.files()?.list(user, path).await
    }

    async fn get<P: AsRef<Path> + Send + Debug>(
        &self,
        user: &FtpUser,
        path: P,
        start_pos: u64,
    ) -> Result<Box<dyn AsyncRead + Send + Sync + Unpin>> {
        self.unit.logger_catch_up();
        let reader = self.files()?.get(user, path, start_pos).await?;
        Ok(match self.unit.take_ftp_cut() {
            Some(after) => Box::new(CutAfter {
                inner: reader,
                left: after,
            }),
            None => reader,
        })
    }

    async fn put<P: AsRef<Path> + Send + Debug, R: AsyncRead + Send + Sync + Unpin + 'static>(
        &self,
        _user: &FtpUser,
        _input: R,
        _path: P,
        _start_pos: u64,
    ) -> Result<u64> {
        Err(denied("upload"))
    }

    async fn del<P: AsRef<Path> + Send + Debug>(&self, user: &FtpUser, path: P) -> Result<()> {
        self.may_delete(user, path.as_ref())?;
        self.files()?.del(user, path).await
    }

    async fn mkd<P: AsRef<Path> + Send + Debug>(&self, _user: &FtpUser, _path: P) -> Result<()> {
        Err(denied("mkdir"))
    }

    async fn rename<P: AsRef<Path> + Send + Debug>(
        &self,
        _user: &FtpUser,
        _from: P,
        _to: P,
    ) -> Result<()> {
        Err(denied("rename"))
    }

    async fn rmd<P: AsRef<Path> + Send + Debug>(&self, user: &FtpUser, path: P) -> Result<()> {
        self.may_delete(user, path.as_ref())?;
        self.files()?.rmd(user, path).await
    }

    async fn cwd<P: AsRef<Path> + Send + Debug>(&self, user: &FtpUser, path: P) -> Result<()> {
        self.unit.logger_catch_up();
        self.files()?.cwd(user, path).await
    }
}

impl SessionStore {
    /// Whether `user` may delete `path` (a file or a session folder): the FTP WRITE
    /// right, and not the session the data logger is writing.
    fn may_delete(&self, user: &FtpUser, path: &Path) -> Result<()> {
        if !user.write {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                std::io::Error::other(format!("user {} lacks the FTP WRITE right", user.name)),
            ));
        }
        if self.unit.logger_is_running(path) {
            return Err(Error::new(
                ErrorKind::PermissionDenied,
                std::io::Error::other("the data logger is writing this session"),
            ));
        }
        Ok(())
    }
}

/// A download cut after `left` bytes (a test fault: the data connection drops).
struct CutAfter {
    inner: Box<dyn AsyncRead + Send + Sync + Unpin>,
    left: u64,
}

impl AsyncRead for CutAfter {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.left == 0 {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::ConnectionReset,
                "emulated fault: the data connection is cut",
            )));
        }
        let max = usize::try_from(self.left)
            .unwrap_or(usize::MAX)
            .min(buf.remaining());
        let mut limited = buf.take(max);
        match Pin::new(&mut self.inner).poll_read(cx, &mut limited) {
            Poll::Ready(Ok(())) => {
                let n = limited.filled().len();
                buf.advance(n);
                self.left -= n as u64;
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

/// Serves FTP on `listener` until `stopped` turns true.
pub async fn serve(listener: TcpListener, unit: Arc<Unit>, mut stopped: watch::Receiver<bool>) {
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stopped.changed() => return,
        };
        let Ok((stream, _)) = accepted else {
            continue;
        };
        let root = unit.logger_root();
        let store_unit = unit.clone();
        let server = libunftp::ServerBuilder::<SessionStore, FtpUser>::with_user_detail_provider(
            Box::new(move || SessionStore {
                unit: store_unit.clone(),
                files: Filesystem::new(root.clone()).ok(),
            }),
            Arc::new(UnitUsers { unit: unit.clone() }),
        )
        .authenticator(Arc::new(UnitAuthenticator { unit: unit.clone() }))
        .greeting("Welcome to the emulated unit's data logger")
        .passive_host(libunftp::options::PassiveHost::FromConnection)
        .build();
        match server {
            Ok(server) => {
                tokio::spawn(async move {
                    let _ = server.service(stream).await;
                });
            }
            Err(_) => drop(stream),
        }
    }
}
