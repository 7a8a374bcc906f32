//! An emulated inertial navigation unit: the on-device REST configuration interface of
//! `openapi/ins-device.yaml` (the specification with its open points decided), served over
//! HTTP and over the sbgECom serial protocol (a pseudo-terminal and a TCP serial-over-IP
//! bridge) at once, all three sharing one unit state.
//!
//! ```no_run
//! # async fn demo() -> anyhow::Result<()> {
//! use svc_emulator::device::{DeviceConfig, DeviceEmulator};
//!
//! let unit = DeviceEmulator::start(DeviceConfig::default()).await?;
//! println!("HTTP {}/api/v1, serial {:?}, serial over TCP {}",
//!     unit.url(), unit.serial_path(), unit.serial_tcp());
//! unit.shutdown().await;
//! # Ok(()) }
//! ```
//!
//! # Design
//!
//! - **One core.** `Unit::handle` (module `unit`) takes a method, a path (with
//!   `/api/v1`), a query string and a body and answers a status and a JSON body (or
//!   nothing while rebooting); the HTTP server and the serial links only move bytes,
//!   so both transports behave identically. [`DeviceEmulator::handle`] exposes it.
//! - **The OpenAPI document is the data.** `openapi/ins-device.yaml` is embedded (from
//!   the crate's byte-identical copy `src/device/ins-device.yaml`, which `cargo xtask
//!   generate` writes and `--check` compares) and read at start ([`spec`]): routes and their `x-required-right` /
//!   `x-requires-login`, the `x-role-order` and `x-access-rights` matrix, and the
//!   `Settings` schemas that validate every node of a write (`x-closed`,
//!   `x-message-names`, array lengths, patterns, enumerations, integer ranges) and
//!   say which changes need a reboot (`x-need-reboot`). Bodies are the generated types
//!   of `ins-device-api` (`Error`, `WriteResult`, `ActionResult`, `DeviceInfo`,
//!   `DataLoggerStatus`, `LoginRequest`, ...). The settings tree itself is kept as
//!   JSON in the schema's key order (the generated `Settings` type would reorder
//!   keys); a test checks it decodes into `ins_device_api::types::Settings`.
//! - **Defaults** (module `defaults`): a realistic value for every field; every
//!   output port lists every message name of `x-message-names`, the CAN output every
//!   CAN name with its identifier.
//! - **Writes** are validated completely first (a 422 lists every invalid node, with
//!   paths from the settings root), then merged (objects key by key, arrays and
//!   scalars replaced whole) into a copy that replaces the tree only when
//!   `checkOnly` is not set: all or nothing. `needReboot` is true when the write
//!   changes a value under an `x-need-reboot` schema (writing a value equal to the
//!   current one changes nothing). `delta=true` answers the partial tree of what
//!   differs from the defaults (`{}` for an object node without change, `null` for an
//!   unchanged leaf).
//! - **Users and rights**: passwords empty except `factory`'s ([`DeviceConfig`]); the
//!   default user (highest role without a password) is chosen at start and at each
//!   reboot only. A request with `auth` acts as the token's user (an unknown or dead
//!   token answers 401, even where the default user could act); without `auth` the
//!   default user acts (401 when there is none, and on the `x-requires-login`
//!   routes). A level satisfies a required level when the first role (in role order)
//!   holding it comes at or after the first role holding the required one, so the
//!   matrix needs no hand-kept level order. Only `setup` changes other users'
//!   passwords, as the specification says (`factory` too changes only its own).
//! - **Lock**: held by one token; writes by anyone else answer 409; it ends on unlock,
//!   logout, reboot, or after [`DeviceConfig::lock_idle`] without a request carrying
//!   its token (checked lazily at each request: no timer task).
//! - **Reboot**: ends every token and the lock, stops the data logger, chooses the
//!   default user again; for [`DeviceConfig::reboot_time`] the unit answers nothing:
//!   HTTP connections are closed without an answer (open ones after the answer in
//!   flight), serial frames get no reply. Then it answers again.
//! - **Serial**: sbgECom frames through `svc_protocol::serial` (standard and large frames
//!   both ways); invalid frames (bad CRC, ETX, length) are skipped silently; a valid
//!   frame that is not a well-formed REST request is answered by an ACK with an
//!   sbgECom error code ([`ACK_INVALID_FRAME`], [`ACK_INVALID_PARAMETER`]). A frame
//!   left incomplete while the line is silent for
//!   [`DeviceConfig::serial_inter_byte_timeout`] is abandoned and the bytes after its
//!   start are searched for the next sync at once. The pty
//!   (Unix only; needs `/dev/ptmx`) is opened with `nix`'s safe API, its slave in raw
//!   mode; the TCP bridge treats each connection as one serial line.
//! - **Data logger and FTP** ([`logger`], module `ftp`): while the data logger runs it
//!   records the messages enabled in `output.dataLogger.messages` as sbgECom frames
//!   (`svc-logs`) into `<session>/<session>.NNN`, written lazily from the elapsed time
//!   (at a status, a listing, a download, the stop), the values following
//!   [`outputs::trajectory_at`]; `usedBytes` counts them. A libunftp server (plain FTP,
//!   passive, [`DeviceEmulator::ftp_address`]) serves them to the unit's users with
//!   their current passwords, the `FTP` right deciding (`READ` lists and downloads,
//!   `WRITE` also deletes); uploads, renames and `MKD` are refused; a test fault cuts
//!   the next download ([`DeviceEmulator::cut_next_ftp_download`]).
//! - **Other statuses**: an unknown path answers 404, a known path with another
//!   method 405, an invalid `format`/`delta`/`checkOnly` value 422, a body that is not
//!   JSON (or not the expected object, for login and password) 400.

mod defaults;
mod ftp;
mod http;
pub mod logger;
pub mod outputs;
#[cfg(unix)]
mod pty;
mod serial;
pub mod spec;
mod stream;
mod unit;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

#[cfg(unix)]
pub use pty::FdStream;
pub use serial::{ACK_BUFFER_OVERFLOW, ACK_INVALID_FRAME, ACK_INVALID_PARAMETER};
pub use unit::{LOCK_CONFLICT, UnitError};

/// The emulated unit's settings tree at power-on (and after `/settings/default`): the
/// whole tree of the document's `Settings` schema with the emulator's defaults.
///
/// # Errors
///
/// When the embedded document cannot be read (a build defect; tests check it).
pub fn default_settings() -> Result<serde_json::Value, spec::SpecError> {
    let spec = spec::Spec::load()?;
    Ok(defaults::default_settings(&spec.settings))
}

/// How the emulated unit runs.
#[derive(Clone, Debug)]
pub struct DeviceConfig {
    /// Address of the HTTP server, of the serial-over-TCP bridge and of the FTP server.
    pub host: IpAddr,
    /// HTTP port; 0 takes any free port.
    pub http_port: u16,
    /// Port of the serial-over-TCP bridge; 0 takes any free port.
    pub serial_tcp_port: u16,
    /// Port of the FTP server of the data logger's files (plain FTP, passive mode);
    /// 0 takes any free port.
    pub ftp_port: u16,
    /// Also serve the serial protocol on a pseudo-terminal (Unix only: elsewhere this
    /// is ignored, there is no pty and the TCP bridge is the serial line).
    pub pty: bool,
    /// Initial passwords, user → password (users not named have none; an entry for
    /// `factory` wins over `factory_password`). An unknown user fails the start.
    pub passwords: BTreeMap<String, String>,
    /// The `factory` user's password (held by the manufacturer).
    pub factory_password: String,
    /// How long a reboot keeps the unit silent (the specification: about 2 s).
    pub reboot_time: Duration,
    /// How long the settings lock lasts without a request from its holder (60 s).
    pub lock_idle: Duration,
    /// Serial links: how long the line may stay silent in the middle of a frame before
    /// the unit abandons that frame and looks for the next sync in the bytes after its
    /// start (250 ms). Without it, a corrupt header announcing a length in range would
    /// hold every following frame until that many bytes had arrived.
    pub serial_inter_byte_timeout: Duration,
    /// HTTP: the request head must arrive within `header` (else the connection is
    /// closed); a body that stops arriving for `body` is answered 408 (default 10 s
    /// each). Within an [`Emulator`](crate::Emulator), the emulator's own
    /// `read_timeouts` apply.
    pub http_read_timeouts: crate::server::ReadTimeouts,
    /// The unit's serial number in `/info` (`EMU00000001`). Within an
    /// [`Emulator`](crate::Emulator) with several units, the first unit keeps it and
    /// the others count on from it ([`nth_serial_number`]).
    pub serial_number: String,
    /// The unit's Ethernet MAC address in `/info` (`02:00:5e:10:00:01`); with several
    /// units the others count on from it ([`nth_mac_address`]).
    pub mac_address: String,
    /// How long every HTTP answer waits before it is sent (zero by default): the
    /// round trip of a unit reached over Wi-Fi or a cellular link, so that an app or a
    /// fleet tool meets the latency it will meet in the field.
    pub latency: Duration,
    /// A noisy serial line: the share of the chunks crossing the serial links (TCP
    /// bridge and pty, both ways) that lose bytes or have one corrupted (none by
    /// default). Its handle counts them.
    pub serial_faults: crate::faults::SerialFaultConfig,
    /// `operationId`s of `openapi/ins-device.yaml` this unit's firmware lacks: their
    /// routes answer 404 as an unknown path does (none by default). A client's
    /// fallbacks are tested with them, e.g. a unit serving only the vendor's
    /// `/system/reboot` (`["reboot"]`), or without `/settings/save`.
    pub missing_operations: Vec<String>,
    /// Requests or answers lost on the way, per operation (none by default): what a
    /// client does when it cannot know whether a save, an unlock or a reboot was
    /// applied is tested with them.
    pub lost_exchanges: Vec<crate::faults::LostExchange>,
    /// How long after each power-on the unit takes to be ready to log (zero by
    /// default: ready at once). During the first half its GNSS has no solution, UTC is
    /// unknown and the filter gives roll and pitch only; during the second, a single
    /// point fix, UTC known and a full attitude; then an RTK fixed position and a
    /// navigation solution, as [`outputs::record_at`] streams them.
    pub startup: Duration,
}

impl Default for DeviceConfig {
    fn default() -> Self {
        Self {
            host: IpAddr::V4(Ipv4Addr::LOCALHOST),
            http_port: 0,
            serial_tcp_port: 0,
            ftp_port: 0,
            pty: true,
            passwords: BTreeMap::new(),
            factory_password: "factory".to_owned(),
            reboot_time: Duration::from_secs(2),
            lock_idle: Duration::from_secs(60),
            serial_inter_byte_timeout: Duration::from_millis(250),
            http_read_timeouts: crate::server::ReadTimeouts::default(),
            serial_number: DEFAULT_SERIAL_NUMBER.to_owned(),
            mac_address: DEFAULT_MAC_ADDRESS.to_owned(),
            latency: Duration::ZERO,
            serial_faults: crate::faults::SerialFaultConfig::default(),
            missing_operations: Vec::new(),
            lost_exchanges: Vec::new(),
            startup: Duration::ZERO,
        }
    }
}

/// The serial number of a unit started with [`DeviceConfig::default`].
pub const DEFAULT_SERIAL_NUMBER: &str = "EMU00000001";
/// The MAC address of a unit started with [`DeviceConfig::default`].
pub const DEFAULT_MAC_ADDRESS: &str = "02:00:5e:10:00:01";

/// The serial number of the unit `index` (0-based) of a fleet whose first unit has
/// `first`: `first` itself for 0; when `first` ends in digits, that number plus
/// `index`, zero-padded to the same width (`EMU00000001` → `EMU00000002`, ...);
/// otherwise `first` followed by `-` and `index + 1`.
pub fn nth_serial_number(first: &str, index: usize) -> String {
    if index == 0 {
        return first.to_owned();
    }
    let prefix = first.trim_end_matches(|c: char| c.is_ascii_digit());
    let digits = &first[prefix.len()..];
    match digits.parse::<u128>() {
        Ok(number) if !digits.is_empty() => {
            let next = number.saturating_add(index as u128);
            format!("{prefix}{next:0width$}", width = digits.len())
        }
        _ => format!("{first}-{}", index.saturating_add(1)),
    }
}

/// The MAC address of the unit `index` (0-based) of a fleet whose first unit has
/// `first` (six hexadecimal octets separated by `:`): its last three octets, read as
/// one number, plus `index` (wrapping within those three octets).
///
/// # Errors
///
/// When `first` is not six hexadecimal octets separated by `:` (only for `index` > 0).
pub fn nth_mac_address(first: &str, index: usize) -> Result<String, String> {
    if index == 0 {
        return Ok(first.to_owned());
    }
    let octets: Vec<u8> = first
        .split(':')
        .map(|octet| {
            if octet.len() == 2 {
                u8::from_str_radix(octet, 16).ok()
            } else {
                None
            }
        })
        .collect::<Option<Vec<u8>>>()
        .filter(|octets| octets.len() == 6)
        .ok_or_else(|| format!("the MAC address `{first}` is not six hexadecimal octets"))?;
    let low = u64::from_be_bytes([0, 0, 0, 0, 0, octets[3], octets[4], octets[5]]);
    let [.., a, b, c] = low.wrapping_add(index as u64).to_be_bytes();
    Ok(format!(
        "{:02x}:{:02x}:{:02x}:{a:02x}:{b:02x}:{c:02x}",
        octets[0], octets[1], octets[2]
    ))
}

/// A running emulated unit. Dropping it stops every task and closes the pty;
/// [`DeviceEmulator::shutdown`] also waits for them.
pub struct DeviceEmulator {
    url: String,
    serial_tcp: String,
    ftp: String,
    serial_path: Option<PathBuf>,
    unit: Arc<unit::Unit>,
    stop: watch::Sender<bool>,
    tasks: Vec<JoinHandle<()>>,
}

impl DeviceEmulator {
    /// Starts the HTTP server, the serial-over-TCP bridge and (with `config.pty`) the
    /// pseudo-terminal; returns once all accept requests.
    pub async fn start(config: DeviceConfig) -> anyhow::Result<Self> {
        Self::start_with_spec(config, Arc::new(spec::Spec::load()?)).await
    }

    /// [`DeviceEmulator::start`] with the document already read (a fleet reads it once
    /// for all its units; the spec is never changed, each unit has its own state).
    pub(crate) async fn start_with_spec(
        config: DeviceConfig,
        spec: Arc<spec::Spec>,
    ) -> anyhow::Result<Self> {
        let mut passwords =
            BTreeMap::from([("factory".to_owned(), config.factory_password.clone())]);
        passwords.extend(config.passwords.clone());
        let unit = Arc::new(unit::Unit::new(
            spec,
            &passwords,
            unit::Identity {
                serial_number: config.serial_number.clone(),
                mac_address: config.mac_address.clone(),
                missing_operations: config.missing_operations.clone(),
                lost_exchanges: config.lost_exchanges.clone(),
                startup: config.startup,
            },
            config.reboot_time,
            config.lock_idle,
        )?);
        let http_listener =
            TcpListener::bind(SocketAddr::new(config.host, config.http_port)).await?;
        let serial_listener =
            TcpListener::bind(SocketAddr::new(config.host, config.serial_tcp_port)).await?;
        let ftp_listener = TcpListener::bind(SocketAddr::new(config.host, config.ftp_port)).await?;
        let ftp = ftp_listener.local_addr()?.to_string();
        let url = format!("http://{}", http_listener.local_addr()?);
        let serial_tcp = serial_listener.local_addr()?.to_string();
        #[cfg(unix)]
        let pty = if config.pty {
            Some(pty::Pty::open()?)
        } else {
            None
        };
        #[cfg(unix)]
        let serial_path = pty.as_ref().map(|pty| pty.path.clone());
        #[cfg(not(unix))]
        let serial_path = None;

        let (stop, stopped) = watch::channel(false);
        let gap = config.serial_inter_byte_timeout;
        // One fault sequence for every link of the unit.
        let noise = crate::faults::SerialFaults::new(config.serial_faults.clone());
        #[cfg(unix)]
        let pty_task = pty.map(|pty| {
            let unit = unit.clone();
            let stopped = stopped.clone();
            let noise = noise.clone();
            tokio::spawn(async move {
                let pty::Pty { master, slave, .. } = pty;
                serial::serve_link(master, unit, gap, noise, stopped).await;
                drop(slave);
            })
        });
        #[cfg(not(unix))]
        let pty_task = None;
        let tasks = [
            Some(tokio::spawn(http::serve(
                http_listener,
                unit.clone(),
                config.http_read_timeouts,
                config.latency,
                stopped.clone(),
            ))),
            Some(tokio::spawn(ftp::serve(
                ftp_listener,
                unit.clone(),
                stopped.clone(),
            ))),
            Some(tokio::spawn(stream::serve_udp(
                unit.clone(),
                config.host,
                stopped.clone(),
            ))),
            Some(tokio::spawn(serial::serve_tcp(
                serial_listener,
                unit.clone(),
                gap,
                noise,
                stopped,
            ))),
            pty_task,
        ]
        .into_iter()
        .flatten()
        .collect();
        Ok(Self {
            url,
            serial_tcp,
            ftp,
            serial_path,
            unit,
            stop,
            tasks,
        })
    }

    /// The HTTP address, `http://host:port` (the API is under `/api/v1`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The pseudo-terminal to open as the unit's serial port (with `config.pty`; always
    /// `None` off Unix).
    pub fn serial_path(&self) -> Option<&Path> {
        self.serial_path.as_deref()
    }

    /// The serial-over-TCP bridge, `host:port`.
    pub fn serial_tcp(&self) -> &str {
        &self.serial_tcp
    }

    /// The FTP server of the data logger's files, `host:port`.
    pub fn ftp_address(&self) -> &str {
        &self.ftp
    }

    /// The data logger's sessions and their files (names in order, sizes once what
    /// the running session's elapsed time implies is written).
    pub fn logger_sessions(&self) -> Vec<(String, Vec<logger::SessionFile>)> {
        self.unit.logger_sessions()
    }

    /// The folder holding the data logger's sessions (`<session>/<session>.NNN`).
    pub fn logger_root(&self) -> PathBuf {
        self.unit.logger_root()
    }

    /// Test fault: the next FTP download (`RETR`) has its data connection cut after
    /// `bytes` bytes, once; a client resumes it with `REST`.
    pub fn cut_next_ftp_download(&self, bytes: u64) {
        self.unit.cut_next_ftp_download(bytes);
    }

    /// The serial number the unit reports in `/info`.
    pub fn serial_number(&self) -> &str {
        self.unit.serial_number()
    }

    /// The default user now (chosen at start and at each reboot); `None` when every
    /// user has a password.
    pub fn default_user(&self) -> Option<String> {
        self.unit.default_user()
    }

    /// How many settings writes the unit applied since it started (`POST /settings`,
    /// `/settings/<path>`, `/settings/import`, `/settings/default`; not those with
    /// `checkOnly`, nor those refused), whether or not they changed a value: a write
    /// applied twice counts twice.
    pub fn applied_writes(&self) -> u64 {
        self.unit.applied_writes()
    }

    /// How many saves of the settings (`POST /settings/save`) the unit answered with
    /// success since it started.
    pub fn saves(&self) -> u64 {
        self.unit.saves()
    }

    /// How many times the unit rebooted since it started.
    pub fn reboots(&self) -> u64 {
        *self.unit.boots().borrow()
    }

    /// Whether the unit is rebooting (answering nothing).
    pub fn is_rebooting(&self) -> bool {
        self.unit.is_booting()
    }

    /// The core both transports call: `method` `GET` or `POST`, `path` with `/api/v1`,
    /// `query` without `?`. Answers the status and the JSON body, `None` while the
    /// unit reboots.
    pub fn handle(
        &self,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
    ) -> Option<(u16, Vec<u8>)> {
        match self.unit.handle(method, path, query, body) {
            unit::Outcome::Reply(reply) => Some((reply.status, reply.body)),
            unit::Outcome::Silent => None,
        }
    }

    /// Stops every task and waits for them (at most 5 s each); closes the pty.
    pub async fn shutdown(mut self) {
        let _ = self.stop.send(true);
        for task in std::mem::take(&mut self.tasks) {
            let _ = tokio::time::timeout(Duration::from_secs(5), task).await;
        }
    }
}

impl Drop for DeviceEmulator {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        for task in &self.tasks {
            task.abort();
        }
    }
}
