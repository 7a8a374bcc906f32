//! A session with an inertial navigation unit, over HTTP or over the serial link.
//!
//! Both links run the same generated client (`ins-device-api`): over HTTP it talks to
//! `{device_url}/api/v1`; over the serial link each request is carried in sbgECom frames
//! by an [`Exchange`] (see [`serial_link`]). A [`Unit`]
//! adds what a session needs on top:
//!
//! - login, logout and password changes, the token kept out of every log and error;
//! - automatic re-login when a reboot has ended the token (the unit answers 401 to a
//!   token it no longer knows): the request is repeated once after logging in again;
//! - one typed [`UnitError`] carrying the unit's `status`, `title`, `detail` and, for a
//!   refused settings write, the list of invalid nodes;
//! - the rights matrix as data ([`rights`]), so a caller can ask "may this user do X"
//!   before trying.
//!
//! Its parts: [`UnitError`] (`error.rs`); opening a session over HTTP or the serial
//! link (`connect.rs`); login, the settings lock and reboots, and the call wrapper that
//! logs in again after a reboot (`session.rs`); reading, writing and applying settings
//! (`settings.rs`); the serial link itself ([`serial_link`]) and the rights matrix
//! ([`rights`]).

pub(crate) mod connect;
mod error;
pub mod journal;
pub mod logger;
pub mod rights;
pub mod serial_link;
mod session;
mod settings;

use std::sync::{Arc, Mutex};

use ins_device_api::types::DeviceInfo;
use ins_device_api::{Client, DeviceState};

pub use connect::{HTTP_POOL_IDLE, HTTP_TIMEOUT, unit_address};
pub use error::{NodeError, UnitError};
/// The unit's own types, so that a program (the CLI, a binding) needs no other crate:
/// its secrets ([`Password`], [`AuthToken`]: `Debug` prints `[redacted]`), its value
/// sets ([`enums`]: [`UserName`]...) and its records and typed settings tree
/// ([`types`]: `DeviceInfo`, `Settings`...).
pub use ins_device_api::enums::UserName;
pub use ins_device_api::hooks::{
    Exchange, ExchangeError, ExchangeFuture, ExchangeReply, ExchangeRequest,
};
pub use ins_device_api::{AuthToken, Password, enums, types};
pub use journal::{Journal, Pending};
pub use logger::{
    Downloaded, FTP_DEFAULT_USER, LoggerError, LoggerFile, LoggerFiles, LoggerSession,
    ftp_address_of,
};
pub use session::REBOOT_CONFIRMATION;
pub use settings::{ApplyOptions, ApplyReport, WriteOutcome};

/// A session with one unit. Cheap to clone; clones share the login and the settings
/// lock.
#[derive(Clone)]
pub struct Unit {
    client: Client,
    state: DeviceState,
    credentials: Arc<Mutex<Option<(UserName, Password)>>>,
    link: Arc<str>,
    /// The session's holds of the settings lock (see [`Unit::lock`]).
    locks: Arc<LockHolds>,
    /// Where what the unit owes after an interrupted apply is kept (see [`journal`]).
    journal: Option<Arc<Journal>>,
    /// The serial link, whose output logs may be subscribed to.
    serial: Option<Arc<serial_link::SerialLink>>,
}

/// How many times a session took the settings lock without giving it back (0: it does
/// not hold it), whether the unit ended the lock meanwhile (a logout, a reboot), and the
/// gate that lets one lock or unlock of the session talk to the unit at a time.
#[derive(Default)]
struct LockHolds {
    gate: tokio::sync::Mutex<()>,
    held: Mutex<Holds>,
}

#[derive(Clone, Copy, Default)]
struct Holds {
    depth: u32,
    /// The unit ended the lock while holds were out: they are given back without a
    /// request, and the next `lock` takes it again.
    ended: bool,
}

impl LockHolds {
    fn with<T>(&self, f: impl FnOnce(&mut Holds) -> T) -> T {
        match self.held.lock() {
            Ok(mut held) => f(&mut held),
            Err(poisoned) => f(&mut poisoned.into_inner()),
        }
    }
}

impl std::fmt::Debug for Unit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Unit")
            .field("link", &self.link)
            .field("user", &self.user())
            .finish()
    }
}

impl Unit {
    /// A session over another link (the serial one: see [`serial_link`]).
    pub fn over(exchange: Arc<dyn Exchange>, describe: String) -> Self {
        let state = DeviceState::with_exchange(exchange);
        Self::from_parts(Client::new("serial://unit", state.clone()), state, describe)
    }

    /// A session over a serial link, whose output logs can also be subscribed to
    /// ([`subscribe`](Self::subscribe)).
    pub fn over_serial(link: serial_link::SerialLink, describe: String) -> Self {
        let link = Arc::new(link);
        let mut unit = Self::over(Arc::clone(&link) as Arc<dyn Exchange>, describe);
        unit.serial = Some(link);
        unit
    }

    fn from_parts(client: Client, state: DeviceState, link: String) -> Self {
        Self {
            client,
            state,
            credentials: Arc::new(Mutex::new(None)),
            link: link.into(),
            locks: Arc::new(LockHolds::default()),
            journal: None,
            serial: None,
        }
    }

    /// Subscribes to the output logs the unit streams on its serial link (the
    /// messages enabled on that port, `output.comA.messages`...): a stream of typed
    /// records beside the session's requests, which a slow subscriber never delays
    /// (see [`crate::live`]). No login is needed: the unit streams to whoever listens.
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] for a session over HTTP (a unit streams its
    /// Ethernet outputs as UDP datagrams: [`LogStream::udp`](crate::live::LogStream::udp))
    /// or outside a Tokio runtime.
    pub fn subscribe(
        &self,
        subscribe: crate::live::Subscribe,
    ) -> Result<crate::live::LogStream, UnitError> {
        let Some(link) = &self.serial else {
            return Err(UnitError::InvalidRequest {
                operation: "subscribe",
                reason: format!(
                    "{}: only a serial link carries the unit's output logs; a unit sends its \
                     Ethernet outputs as UDP datagrams (listen with LogStream::udp)",
                    self.link
                ),
            });
        };
        link.subscribe(subscribe)
            .map_err(|reason| UnitError::InvalidRequest {
                operation: "subscribe",
                reason,
            })
    }

    /// The session keeps, in `journal`, what the unit still owes after an interrupted
    /// [`apply_wanted`](Self::apply_wanted) with [`ApplyOptions::reboot`] (a save, a
    /// reboot), keyed by its serial number, so that a later apply finishes it (see
    /// [`journal`]).
    #[must_use]
    pub fn with_journal(mut self, journal: Journal) -> Self {
        self.journal = Some(Arc::new(journal));
        self
    }

    /// The journal given with [`with_journal`](Self::with_journal).
    pub fn journal(&self) -> Option<&Journal> {
        self.journal.as_deref()
    }

    /// A second session over the same link, logged in with `token` (which it never
    /// renews): the unit's answer to that token, without touching this session's.
    fn with_token(&self, token: AuthToken) -> Self {
        use ins_device_api::ClientInfo as _;
        let state = self.state.sibling();
        state.set_token(Some(token));
        let client = Client::new_with_client(
            self.client.baseurl(),
            self.client.client().clone(),
            state.clone(),
        );
        let mut unit = Self::from_parts(client, state, self.link.to_string());
        unit.serial.clone_from(&self.serial);
        unit
    }

    /// Where the unit is (its URL or serial link); never holds the token.
    pub fn link(&self) -> &str {
        &self.link
    }

    /// The logged-in user, or `None` when requests act as the unit's default user.
    pub fn user(&self) -> Option<UserName> {
        self.credentials().as_ref().map(|(u, _)| u.clone())
    }

    pub(super) fn credentials(&self) -> std::sync::MutexGuard<'_, Option<(UserName, Password)>> {
        match self.credentials.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// The generated client, for operations this type does not wrap.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The unit's identity and versions (`GET /info`).
    pub async fn info(&self) -> Result<DeviceInfo, UnitError> {
        self.call("getDeviceInfo", |c| async move {
            c.get_device_info().send().await
        })
        .await
    }

    /// Waits until the unit's output logs on its serial link say it is ready to log
    /// (see [`ReadyCriteria`](crate::live::ReadyCriteria): by default a GNSS fix, the
    /// filter aligned, UTC valid), at most `timeout`; what they last said. The
    /// messages that tell must be enabled on the port
    /// ([`ReadyCriteria::messages`](crate::live::ReadyCriteria::messages)). For a unit
    /// streaming over UDP, [`live::wait_ready`](crate::live::wait_ready) on a
    /// [`LogStream::udp`](crate::live::LogStream::udp).
    ///
    /// # Errors
    /// [`UnitError::NotReady`] naming what was missing when the time ran out (or the
    /// stream ended); [`UnitError::InvalidRequest`] over HTTP, as
    /// [`subscribe`](Self::subscribe).
    pub async fn wait_ready(
        &self,
        criteria: &crate::live::ReadyCriteria,
        timeout: std::time::Duration,
    ) -> Result<crate::live::Readiness, UnitError> {
        let mut stream =
            self.subscribe(crate::live::Subscribe::only(criteria.messages()).with_capacity(256))?;
        crate::live::wait_ready(&mut stream, criteria, timeout)
            .await
            .map_err(|not| UnitError::NotReady(Box::new(not)))
    }

    /// The data logger's state.
    pub async fn logger_status(&self) -> Result<types::DataLoggerStatus, UnitError> {
        self.call("getDataLoggerStatus", |c| async move {
            c.get_data_logger_status().send().await
        })
        .await
    }

    /// Starts the data logger (409 when it is already logging).
    pub async fn logger_start(&self) -> Result<(), UnitError> {
        self.call("startDataLogger", |c| async move {
            c.start_data_logger().send().await
        })
        .await
        .map(|_| ())
    }

    /// Stops the data logger (409 when it is idle).
    pub async fn logger_stop(&self) -> Result<(), UnitError> {
        self.call("stopDataLogger", |c| async move {
            c.stop_data_logger().send().await
        })
        .await
        .map(|_| ())
    }
}
