//! `InsUnit`: a session with an inertial navigation unit over HTTP, a serial-over-TCP
//! bridge, or a [`ByteLink`] the app implements (Android USB serial, iOS External
//! Accessory, BLE), carried in sbgECom frames by svc-core's serial link.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use svc_core::http::HttpClientConfig;
use svc_core::unit as su;
use svc_core::unit::Password;
use svc_core::unit::serial_link::{SerialLink, SerialOptions as CoreSerialOptions};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::cloud::TlsRoots;
use crate::error::SvcError;
use crate::runtime::run;
use crate::types::Count;
use crate::types::{
    ApplyOptions, ApplyReport, DataLoggerStatus, DeviceInfo, Downloaded, JsonText, LoggerSession,
    UserName, WriteOutcome, at_least, json_in,
};

/// Why a [`ByteLink`] read or write failed.
#[derive(Clone, Debug, thiserror::Error, uniffi::Error)]
pub enum LinkError {
    /// The link is closed for good (unplugged, disconnected, closed by the app): the
    /// request in progress fails and the session needs a new link.
    #[error("the link is closed")]
    Closed,
    /// The link failed; `reason` says how.
    #[error("{reason}")]
    Io { reason: String },
}

impl From<uniffi::UnexpectedUniFFICallbackError> for LinkError {
    fn from(e: uniffi::UnexpectedUniFFICallbackError) -> Self {
        Self::Io { reason: e.reason }
    }
}

/// A byte stream to the unit that the app owns: a USB serial port, an External
/// Accessory session, a BLE characteristic pair. The SDK frames the unit's REST API
/// over it (sbgECom); the app only moves bytes.
///
/// The contract, made for what USB and BLE stacks do:
///
/// - `read` returns the bytes that arrived, between 0 and `maxBytes` of them. **0 bytes
///   means "nothing yet"**, not the end (a USB serial driver's read returns empty every
///   16 ms or so while the unit is silent): the SDK calls again after a short pause. The
///   bytes of one frame may come in any number of reads.
/// - The end is explicit: `read` (or `write`) throws `LinkError.Closed` once the link is
///   gone, `LinkError.Io` when it failed. The request in progress then fails with
///   `Unreachable`, naming the link; a request cut off while being sent is discarded by
///   the unit (every frame carries its length and a CRC), so nothing is half-applied.
/// - `write` sends all of `data` before returning; `data` is at most
///   `SerialOptions.maxWriteBytes` long (64 KiB by default), so the app may set that to
///   what its stack sends at once (a BLE characteristic: the MTU minus 3) or split the
///   bytes itself. The SDK never writes from two calls at once.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait ByteLink: Send + Sync {
    /// Waits for bytes from the unit and returns up to `maxBytes` of them (0: nothing
    /// yet).
    async fn read(&self, max_bytes: Count) -> Result<Vec<u8>, LinkError>;
    /// Sends all of `data` to the unit.
    async fn write(&self, data: Vec<u8>) -> Result<(), LinkError>;
}

type Pending<T> = Pin<Box<dyn Future<Output = Result<T, LinkError>> + Send>>;

/// The pause after a read that gave nothing, before the next one.
const EMPTY_READ_PAUSE: Duration = Duration::from_millis(5);

/// The most bytes asked for or sent in one foreign call by default.
const CHUNK: usize = 64 * 1024;

/// Tokio's `AsyncRead` + `AsyncWrite` over a [`ByteLink`]: each poll drives one foreign
/// call, kept across polls (a read given up by a timeout goes on and its bytes are
/// kept for the next read).
struct LinkIo {
    link: Arc<dyn ByteLink>,
    reading: Option<Pending<Vec<u8>>>,
    /// After an empty read: the pause before the next one.
    paused: Option<Pin<Box<tokio::time::Sleep>>>,
    unread: Vec<u8>,
    writing: Option<(Pending<()>, usize)>,
    /// The most bytes given to one `write`.
    max_write: usize,
}

fn io_error(e: &LinkError) -> io::Error {
    match e {
        LinkError::Closed => io::Error::new(io::ErrorKind::BrokenPipe, "the link is closed"),
        LinkError::Io { reason } => io::Error::other(reason.clone()),
    }
}

impl AsyncRead for LinkIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.unread.is_empty() {
            if let Some(pause) = this.paused.as_mut() {
                if pause.as_mut().poll(cx).is_pending() {
                    return Poll::Pending;
                }
                this.paused = None;
            }
            let max = i32::try_from(buf.remaining().clamp(1, CHUNK)).unwrap_or(1);
            let link = &this.link;
            let reading = this.reading.get_or_insert_with(|| {
                let link = link.clone();
                Box::pin(async move { link.read(Count(max)).await })
            });
            let data = match reading.as_mut().poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(result) => {
                    this.reading = None;
                    match result {
                        Ok(data) => data,
                        // The end of the stream: nothing read into `buf`.
                        Err(LinkError::Closed) => return Poll::Ready(Ok(())),
                        Err(e) => return Poll::Ready(Err(io_error(&e))),
                    }
                }
            };
            if data.is_empty() {
                // Nothing yet: ask again after a pause (a link that answers at once
                // would otherwise be asked in a busy loop).
                this.paused = Some(Box::pin(tokio::time::sleep(EMPTY_READ_PAUSE)));
            }
            this.unread = data;
        }
        let n = this.unread.len().min(buf.remaining());
        buf.put_slice(&this.unread[..n]);
        this.unread.drain(..n);
        Poll::Ready(Ok(()))
    }
}

impl LinkIo {
    fn poll_written(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<usize>> {
        let Some((writing, len)) = self.writing.as_mut() else {
            return Poll::Ready(Ok(0));
        };
        let len = *len;
        match writing.as_mut().poll(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(result) => {
                self.writing = None;
                Poll::Ready(result.map(|()| len).map_err(|e| io_error(&e)))
            }
        }
    }
}

impl AsyncWrite for LinkIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if this.writing.is_none() {
            let data = buf[..buf.len().min(this.max_write)].to_vec();
            let len = data.len();
            let link = this.link.clone();
            this.writing = Some((Box::pin(async move { link.write(data).await }), len));
        }
        this.poll_written(cx)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().poll_written(cx).map_ok(|_| ())
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

/// Deadlines, retries and write sizes of a serial link.
#[derive(Clone, Debug, uniffi::Record)]
pub struct SerialOptions {
    /// How long the link may stay silent while an answer is awaited (`None`: 3 s).
    #[uniffi(default = None)]
    pub answer_timeout: Option<Duration>,
    /// How many times a GET is sent before giving up (a POST is never repeated).
    #[uniffi(default = 3)]
    pub get_attempts: Count,
    /// The most bytes given to one `ByteLink.write` (`None`: 64 KiB), e.g. a BLE
    /// characteristic's MTU minus 3.
    #[uniffi(default = None)]
    pub max_write_bytes: Option<Count>,
}

fn serial_options(o: Option<&SerialOptions>) -> CoreSerialOptions {
    match o {
        None => CoreSerialOptions::default(),
        Some(o) => {
            let defaults = CoreSerialOptions::default();
            CoreSerialOptions {
                answer_timeout: o
                    .answer_timeout
                    .unwrap_or(defaults.answer_timeout)
                    .max(Duration::from_millis(1)),
                get_attempts: at_least(o.get_attempts, 1),
                ..defaults
            }
        }
    }
}

/// A session with one inertial navigation unit (svc-core's `Unit`, named so that it
/// shadows neither Kotlin's `Unit` nor Foundation's): login (and re-login after a
/// reboot), settings as JSON strings, actions. Every operation is `async`.
#[derive(Debug, uniffi::Object)]
pub struct InsUnit {
    inner: su::Unit,
}

fn wrap(inner: su::Unit) -> Arc<InsUnit> {
    Arc::new(InsUnit { inner })
}

#[uniffi::export]
impl InsUnit {
    /// A session with the unit's REST interface at `url` (`http://…`, without
    /// `/api/v1`), e.g. over the unit's Wi-Fi.
    ///
    /// Errors: `InvalidInput` for a URL that is not `http://`.
    #[uniffi::constructor]
    pub fn http(url: String) -> Result<Arc<Self>, SvcError> {
        // Plain HTTP: the TLS roots only matter for building the client.
        // Plain HTTP: the roots are never used (the bundled ones build everywhere).
        let client = TlsRoots::Bundled.client(HttpClientConfig::unit(su::HTTP_TIMEOUT))?;
        Ok(wrap(su::Unit::http_with_client(&url, client)?))
    }

    /// A session over a serial-over-TCP bridge at `host:port` (sbgECom frames).
    ///
    /// Errors: `Unreachable` when no connection can be made within 10 s.
    #[uniffi::constructor(default(options = None))]
    pub async fn serial_tcp(
        address: String,
        options: Option<SerialOptions>,
    ) -> Result<Arc<Self>, SvcError> {
        let options = serial_options(options.as_ref());
        run(async move { Ok(wrap(su::Unit::serial_tcp_with(&address, options).await?)) }).await
    }

    /// A session over a byte stream the app implements; `describe` names it in errors
    /// (e.g. `USB serial`).
    #[uniffi::constructor(default(options = None))]
    pub fn over_link(
        link: Arc<dyn ByteLink>,
        describe: String,
        options: Option<SerialOptions>,
    ) -> Arc<Self> {
        let max_write = options
            .as_ref()
            .and_then(|o| o.max_write_bytes)
            .and_then(|n| usize::try_from(n.0).ok())
            .map_or(CHUNK, |n| n.clamp(1, CHUNK));
        let io = LinkIo {
            link,
            reading: None,
            paused: None,
            unread: Vec::new(),
            writing: None,
            max_write,
        };
        let serial = SerialLink::new(io, describe.clone(), serial_options(options.as_ref()));
        wrap(su::Unit::over_serial(serial, describe))
    }

    /// Where the unit is (its URL or link); never holds the token.
    pub fn link(&self) -> String {
        self.inner.link().to_owned()
    }

    /// The logged-in user, or `None` (the unit's default user).
    pub fn user(&self) -> Option<UserName> {
        self.inner.user().map(Into::into)
    }

    /// Logs in; the session logs in again by itself after a reboot.
    ///
    /// Errors: `Authentication` (401) for a wrong user or password.
    pub async fn login(&self, user: UserName, password: String) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.login(user.into(), Password::new(password)).await?) }).await
    }

    /// Logs out (releasing a lock the session held).
    pub async fn logout(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.logout().await?) }).await
    }

    /// Changes a password: the logged-in user's own (`user` = `None`) or, for `setup`,
    /// another user's. An empty password clears it.
    pub async fn change_password(
        &self,
        user: Option<UserName>,
        password: String,
    ) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move {
            Ok(
                u.change_password(user.map(Into::into), Password::new(password))
                    .await?,
            )
        })
        .await
    }

    /// The unit's identity and versions.
    pub async fn info(&self) -> Result<DeviceInfo, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.info().await?.into()) }).await
    }

    /// The whole settings tree, as JSON.
    pub async fn settings(&self) -> Result<String, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.settings().await?.to_string()) }).await
    }

    /// Only the settings that differ from the defaults, as a partial tree in JSON.
    pub async fn settings_delta(&self) -> Result<String, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.settings_delta().await?.to_string()) }).await
    }

    /// One node, e.g. `aiding/gnss1/leverArmPrimary`, as JSON.
    pub async fn node(&self, path: String) -> Result<String, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.node(&path).await?.to_string()) }).await
    }

    /// Writes a partial tree (JSON); with `checkOnly` the unit only validates it.
    ///
    /// Errors: `InvalidInput` (422) with every invalid node in `nodeErrors`;
    /// `Conflict` (409) while another session holds the lock.
    pub async fn write(&self, patch: JsonText, check_only: bool) -> Result<WriteOutcome, SvcError> {
        let patch = json_in("patch", &patch)?;
        let u = self.inner.clone();
        run(async move { Ok(u.write(&patch, check_only).await?.into()) }).await
    }

    /// Writes one node (its value as JSON).
    pub async fn write_node(
        &self,
        path: String,
        value: String,
        check_only: bool,
    ) -> Result<WriteOutcome, SvcError> {
        let value = json_in("value", &value)?;
        let u = self.inner.clone();
        run(async move { Ok(u.write_node(&path, &value, check_only).await?.into()) }).await
    }

    /// Restores the factory default settings.
    pub async fn restore_defaults(&self, check_only: bool) -> Result<WriteOutcome, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.restore_defaults(check_only).await?.into()) }).await
    }

    /// The whole tree as the unit exports it, as JSON.
    pub async fn export(&self) -> Result<String, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.export().await?.to_string()) }).await
    }

    /// Imports a whole tree (JSON).
    pub async fn import(&self, tree: JsonText, check_only: bool) -> Result<WriteOutcome, SvcError> {
        let tree = json_in("tree", &tree)?;
        let u = self.inner.clone();
        run(async move { Ok(u.import(&tree, check_only).await?.into()) }).await
    }

    /// Brings the unit's settings to `wanted` (a whole or partial tree in JSON),
    /// writing only what differs, validated first and read back after.
    pub async fn apply_wanted(
        &self,
        wanted: JsonText,
        options: ApplyOptions,
    ) -> Result<ApplyReport, SvcError> {
        let wanted = json_in("wanted", &wanted)?;
        let u = self.inner.clone();
        run(async move { Ok(u.apply_wanted(&wanted, options.into()).await?.into()) }).await
    }

    /// Takes the settings lock for this session.
    pub async fn lock(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.lock().await?) }).await
    }

    /// Releases the settings lock.
    pub async fn unlock(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.unlock().await?) }).await
    }

    /// Saves the settings to the unit's permanent memory (the vendor client's
    /// `/settings/save`; a unit without that route answers 404 and keeps applied
    /// settings anyway).
    pub async fn save(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.save().await?) }).await
    }

    /// Reboots the unit (`/reboot`, or the vendor client's `/system/reboot` on a unit
    /// without it).
    pub async fn reboot(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.reboot().await?) }).await
    }

    /// Waits until the unit answers again after a reboot (logging in again if the
    /// session was logged in).
    pub async fn wait_until_back(&self, timeout: Duration) -> Result<DeviceInfo, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.wait_until_back(timeout).await?.into()) }).await
    }

    /// The data logger's state.
    pub async fn logger_status(&self) -> Result<DataLoggerStatus, SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.logger_status().await?.into()) }).await
    }

    /// Starts the data logger.
    pub async fn logger_start(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.logger_start().await?) }).await
    }

    /// Stops the data logger.
    pub async fn logger_stop(&self) -> Result<(), SvcError> {
        let u = self.inner.clone();
        run(async move { Ok(u.logger_stop().await?) }).await
    }

    /// The output logs the unit streams on its serial link (the messages enabled on
    /// that port), as a [`LiveStream`](crate::live::LiveStream); only `messages` (as
    /// the unit's settings name them; empty: all), with a buffer of `capacity` frames
    /// (default 8192). The session's other calls go on beside it.
    ///
    /// Errors: `InvalidInput` over HTTP (a unit sends its Ethernet outputs as UDP
    /// datagrams: `LiveStream.udp`), or for an unknown message name.
    #[uniffi::method(default(messages = [], capacity = None))]
    pub fn subscribe(
        &self,
        messages: Vec<String>,
        capacity: Option<u32>,
    ) -> Result<Arc<crate::live::LiveStream>, SvcError> {
        let subscribe = crate::live::subscribe_of(messages, capacity)?;
        let stream = crate::runtime::enter(|| self.inner.subscribe(subscribe))??;
        Ok(crate::live::LiveStream::new(stream))
    }

    /// Waits until the unit's output logs on its serial link say it is ready to log
    /// (by default a GNSS fix of any kind, the filter aligned, UTC valid), at most
    /// `timeout`; what they last said.
    ///
    /// Errors: `Timeout` when the time ran out, its `details` saying what was missing;
    /// `InvalidInput` over HTTP.
    #[uniffi::method(default(criteria = None))]
    pub async fn wait_ready(
        &self,
        timeout: Duration,
        criteria: Option<crate::live::ReadyCriteria>,
    ) -> Result<crate::live::Readiness, SvcError> {
        let u = self.inner.clone();
        let criteria = criteria.map_or_else(svc_core::live::ReadyCriteria::default, Into::into);
        run(async move { Ok(u.wait_ready(&criteria, timeout).await?.into()) }).await
    }

    /// The sessions the unit's data logger recorded, over its FTP server at `ftp`
    /// (`host:port`; by default port 21 of the unit's host), as `user` with
    /// `password`, or as this session's user and password (`viewer`, which may list
    /// and download, when the session is not logged in).
    ///
    /// Errors: `InvalidInput` without `ftp` for a unit over a serial link, or for a
    /// password without its user.
    #[uniffi::method(default(ftp = None, user = None, password = None))]
    pub fn logger_files(
        &self,
        ftp: Option<String>,
        user: Option<UserName>,
        password: Option<String>,
    ) -> Result<Arc<LoggerFiles>, SvcError> {
        let files = match user {
            None if password.is_some() => {
                return Err(SvcError::invalid("a password needs its user".to_owned()));
            }
            None => self.inner.session_logger_files(ftp.as_deref())?,
            Some(user) => {
                let address = match ftp {
                    Some(address) => address,
                    None => self.inner.session_logger_files(None)?.address().to_owned(),
                };
                let user: su::UserName = user.into();
                self.inner.logger_files(
                    address,
                    user.to_string(),
                    Password::new(password.unwrap_or_default()),
                )
            }
        };
        Ok(Arc::new(LoggerFiles {
            unit: self.inner.clone(),
            files,
        }))
    }
}

/// The unit's data logger sessions over FTP (its `FTP` right: `READ` lists and
/// downloads, `WRITE` also deletes), from `InsUnit.loggerFiles`. Each call opens its own
/// connection. Errors: `Authentication` (`status` 530) for a refused login,
/// `PermissionDenied` (550) without the right, `NotFound` for a session not listed.
#[derive(Debug, uniffi::Object)]
pub struct LoggerFiles {
    unit: su::Unit,
    files: su::LoggerFiles,
}

#[uniffi::export]
impl LoggerFiles {
    /// The FTP server, `host:port`.
    pub fn address(&self) -> String {
        self.files.address().to_owned()
    }

    /// The FTP user.
    pub fn user(&self) -> String {
        self.files.user().to_owned()
    }

    /// The sessions and their files (names in order, sizes now), `recording` said by
    /// the data logger's status.
    pub async fn sessions(&self) -> Result<Vec<LoggerSession>, SvcError> {
        let (unit, files) = (self.unit.clone(), self.files.clone());
        run(async move {
            let sessions = unit.logger_sessions(&files).await?;
            Ok(sessions.into_iter().map(Into::into).collect())
        })
        .await
    }

    /// Downloads a session (`NAME`) or one file (`NAME/FILE`) into `dest/<session>/`:
    /// each file written to `<file>.part`, resumed after a dropped connection, its size
    /// checked, then renamed. With `deleteAfter`, what was downloaded is then deleted
    /// from the unit, only if the unit still lists it as downloaded (else `Conflict`,
    /// nothing deleted). Cancelling leaves the `.part` files, which the next download
    /// resumes.
    #[uniffi::method(default(delete_after = false))]
    pub async fn download(
        &self,
        name: String,
        dest: String,
        delete_after: bool,
    ) -> Result<Downloaded, SvcError> {
        let files = self.files.clone();
        run(async move {
            let dest = std::path::PathBuf::from(dest);
            let done = if delete_after {
                files.download_then_delete(&name, &dest).await?
            } else {
                files.download(&name, &dest).await?
            };
            Ok(done.into())
        })
        .await
    }

    /// Deletes a session (the `FTP` `WRITE` right: operator and above; the session
    /// being recorded is refused).
    pub async fn delete(&self, session: String) -> Result<(), SvcError> {
        let files = self.files.clone();
        run(async move { Ok(files.delete(&session).await?) }).await
    }
}
