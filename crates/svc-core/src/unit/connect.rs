//! Opening a session: over HTTP, or over the unit's serial protocol (a serial-over-IP
//! bridge or a local serial port).

use std::time::Duration;

use ins_device_api::{Client, DeviceState};

use super::{Unit, UnitError, serial_link};
use crate::http::{HttpClientConfig, TlsRoots};

/// How long one HTTP request to the unit may take.
pub const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an idle connection to a unit is kept for the next request. Shorter than
/// an embedded server keeps an idle connection open (the emulated unit: 10 s): a
/// request sent on a connection the unit is closing at that moment fails with
/// "connection closed before message completed", and a write cannot safely be
/// repeated. A new connection on the local network costs about a millisecond.
pub const HTTP_POOL_IDLE: Duration = Duration::from_secs(4);

impl HttpClientConfig {
    /// A unit session over HTTP: `timeout` for each request
    /// ([`HTTP_TIMEOUT`] by default), 5 s (at most
    /// `timeout`) to connect, and idle connections dropped before the unit closes them
    /// ([`HTTP_POOL_IDLE`]).
    pub fn unit(timeout: Duration) -> Self {
        Self {
            roots: TlsRoots::default(),
            connect_timeout: Duration::from_secs(5).min(timeout),
            timeout: Some(timeout),
            pool_idle_timeout: Some(HTTP_POOL_IDLE),
            proxy: None,
        }
    }
}

impl Unit {
    /// A session with the unit at `url` (e.g. `http://192.168.1.1`; without `/api/v1`).
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`], before anything is sent, when `url` is not a unit
    /// address (see [`unit_address`]).
    pub fn http(url: &str) -> Result<Self, UnitError> {
        Self::http_with_timeout(url, HTTP_TIMEOUT)
    }

    /// As [`Unit::http`], with `timeout` for each request (answer included) instead of
    /// [`HTTP_TIMEOUT`].
    ///
    /// # Errors
    /// As [`Unit::http`]; [`UnitError::InvalidRequest`] for a zero timeout.
    pub fn http_with_timeout(url: &str, timeout: Duration) -> Result<Self, UnitError> {
        if timeout.is_zero() {
            return Err(UnitError::InvalidRequest {
                operation: "connect",
                reason: "the timeout must be longer than zero".to_owned(),
            });
        }
        let http =
            HttpClientConfig::unit(timeout)
                .build()
                .map_err(|e| UnitError::InvalidRequest {
                    operation: "connect",
                    reason: e.to_string(),
                })?;
        Self::http_with_client(url, http)
    }

    /// A session with the unit at `url` whose requests go through `http` (your own
    /// timeouts, proxy or connection pool; [`HTTP_TIMEOUT`] and [`HTTP_POOL_IDLE`] are
    /// not applied to it).
    ///
    /// # Errors
    /// As [`Unit::http`].
    pub fn http_with_client(url: &str, http: reqwest::Client) -> Result<Self, UnitError> {
        let parsed = unit_address(url).map_err(|reason| UnitError::InvalidRequest {
            operation: "connect",
            reason,
        })?;
        let state = DeviceState::new();
        let base = parsed.as_str().trim_end_matches('/').to_owned();
        tracing::debug!(link = %crate::observe::parsed_url(&parsed), "unit over HTTP");
        Ok(Self::from_parts(
            Client::new_with_client(&base, http, state.clone()),
            state,
            base,
        ))
    }

    /// A session over the unit's serial protocol through a serial-over-IP bridge at
    /// `host:port` (a TCP socket carrying the sbgECom frames), with the default
    /// [`SerialOptions`](serial_link::SerialOptions).
    ///
    /// # Errors
    /// [`UnitError::Unreachable`] when no connection can be made within 10 s.
    pub async fn serial_tcp(address: &str) -> Result<Self, UnitError> {
        Self::serial_tcp_with(address, serial_link::SerialOptions::default()).await
    }

    /// As [`Unit::serial_tcp`], with the link's deadlines and retries.
    ///
    /// # Errors
    /// As [`Unit::serial_tcp`].
    pub async fn serial_tcp_with(
        address: &str,
        options: serial_link::SerialOptions,
    ) -> Result<Self, UnitError> {
        let link = serial_link::SerialLink::tcp(address, options)
            .await
            .map_err(|reason| {
                tracing::debug!(address, %reason, "no connection to the serial bridge");
                UnitError::Unreachable {
                    operation: "connect",
                    reason,
                    timed_out: false,
                    source: None,
                }
            })?;
        tracing::info!(address, "connected to the unit's serial bridge");
        Ok(Self::over_serial(link, format!("serial bridge {address}")))
    }

    /// A session over the unit's serial protocol on a local serial port (e.g.
    /// `/dev/ttyUSB0`) at `baud` (8 data bits, no parity, 1 stop bit), with the default
    /// [`SerialOptions`](serial_link::SerialOptions).
    ///
    /// # Errors
    /// [`UnitError::Unreachable`] when the port cannot be opened;
    /// [`UnitError::InvalidRequest`] on a build or platform without serial ports (the
    /// `serial-port` feature, Unix): use [`Unit::serial_tcp`] or [`Unit::over`].
    pub fn serial(path: &str, baud: u32) -> Result<Self, UnitError> {
        Self::serial_with(path, baud, serial_link::SerialOptions::default())
    }

    /// As [`Unit::serial`], with the link's deadlines and retries.
    ///
    /// # Errors
    /// As [`Unit::serial`].
    #[cfg(all(unix, feature = "serial-port"))]
    pub fn serial_with(
        path: &str,
        baud: u32,
        options: serial_link::SerialOptions,
    ) -> Result<Self, UnitError> {
        let link = serial_link::SerialLink::port(path, baud, options).map_err(|reason| {
            tracing::debug!(path, baud, %reason, "the serial port cannot be opened");
            UnitError::Unreachable {
                operation: "connect",
                reason,
                timed_out: false,
                source: None,
            }
        })?;
        tracing::info!(path, baud, "opened the unit's serial port");
        Ok(Self::over_serial(link, format!("serial port {path}")))
    }

    /// As [`Unit::serial`], with the link's deadlines and retries.
    ///
    /// # Errors
    /// As [`Unit::serial`].
    #[cfg(not(all(unix, feature = "serial-port")))]
    pub fn serial_with(
        path: &str,
        _baud: u32,
        _options: serial_link::SerialOptions,
    ) -> Result<Self, UnitError> {
        Err(UnitError::InvalidRequest {
            operation: "connect",
            reason: format!(
                "serial ports are not supported in this build or on this platform ({path}); use a serial-over-IP bridge"
            ),
        })
    }
}

/// Checks a unit's HTTP address and gives it back parsed: `http://`, a host, an optional
/// port, and optionally a base path under which a proxy serves the unit (e.g.
/// `http://gateway.example/units/7`: requests go to `…/units/7/api/v1/…`). Nothing else:
///
/// - no query (`?`) and no fragment (`#`), not even empty ones: the SDK appends each
///   route to the address, so `http://unit/api/v1/settings/default?` would turn every
///   write into a restore of the factory defaults, and `…/api/v1/reboot#` into a reboot;
/// - no user name or password (the unit's users log in through its API);
/// - a base path of plain segments (letters, digits, `-`, `_`, `.`, `~`), none of them
///   `.`, `..` or `api` (in any case): a base path never reaches a route of the unit.
///
/// A trailing `/` is allowed and ignored.
///
/// ```
/// use svc_core::unit::unit_address;
///
/// assert!(unit_address("http://192.168.1.1").is_ok());
/// assert!(unit_address("http://gateway.local:8080/units/7/").is_ok());
/// assert!(unit_address("http://192.168.1.1/api/v1/settings/default#").is_err());
/// assert!(unit_address("http://192.168.1.1/?x").is_err());
/// ```
///
/// # Errors
/// A sentence saying what is wrong with the address (it never repeats a password the
/// address may carry).
pub fn unit_address(url: &str) -> Result<reqwest::Url, String> {
    let shown = || crate::shown_address(url);
    let refuse = |why: &str| {
        Err(format!(
            "`{}` is not a unit address: {why}; a unit address is http://HOST[:PORT], \
             optionally followed by the base path of a proxy in front of the unit",
            shown()
        ))
    };
    if url.contains('?') {
        return refuse("it has a query (`?`)");
    }
    if url.contains('#') {
        return refuse("it has a fragment (`#`)");
    }
    let parsed = match reqwest::Url::parse(url) {
        Ok(parsed) => parsed,
        Err(e) => return Err(format!("`{}` is not a unit address: {e}", shown())),
    };
    if parsed.scheme() != "http" {
        return refuse("the unit speaks plain HTTP only (port 80); use an http:// address");
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        return refuse("it carries a user name or password (log in with the unit's users instead)");
    }
    if parsed.host_str().is_none_or(str::is_empty) {
        return refuse("it names no host");
    }
    // The raw text too: the parser resolves `.` and `..` segments and `\\` before the
    // normalized path below could show them.
    let raw_path = url
        .split_once("://")
        .map(|(_, rest)| rest.find(['/', '\\']).map_or("", |i| &rest[i..]))
        .unwrap_or_default();
    for path in [raw_path, parsed.path()] {
        let trimmed = path.trim_end_matches('/');
        for segment in trimmed.split('/').skip(1) {
            if segment.is_empty() {
                return refuse("its path has an empty segment (`//`)");
            }
            if segment == "." || segment == ".." {
                return refuse("its path has a `.` or `..` segment");
            }
            if segment.eq_ignore_ascii_case("api") {
                return refuse(
                    "its path reaches the unit's routes (`/api/…`); the SDK adds `/api/v1/…` itself",
                );
            }
            if !segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~'))
            {
                return refuse(
                    "its base path may hold only letters, digits and `-`, `_`, `.`, `~` between slashes",
                );
            }
        }
    }
    Ok(parsed)
}
