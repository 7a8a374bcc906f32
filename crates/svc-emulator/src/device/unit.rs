//! The unit's state and the one request handler that both transports call:
//! [`Unit::handle`] takes a method, a path (with `/api/v1`), a query string (without
//! `?`) and a body, and answers a status and a JSON body, or [`Outcome::Silent`] while
//! the unit reboots.
//!
//! Order of the checks: path (400 for a `.` or `..` segment; a path without its
//! leading `/` is read with it), route (404 unknown path, 405 other method), authentication
//! (401), rights (403), settings node (404), settings lock (409), body syntax (400),
//! values (422).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use ins_device_api::AuthToken;
use ins_device_api::enums::DataLoggerState;
use ins_device_api::types::{
    ActionResult, ChangePasswordRequest, DataLoggerStatus, DeviceInfo, Error as ErrorBody,
    LoginRequest, LoginResponse, SettingsValidationError, WriteResult,
};
use percent_encoding::percent_decode_str;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio::sync::watch;

use super::defaults::default_settings;
use super::spec::{Method, Operation, Route, Spec};

/// The detail of the 409 answered while another token holds the settings lock.
pub const LOCK_CONFLICT: &str = "another user is already editing the settings";

/// The user who may change other users' passwords.
const PASSWORD_ADMIN: &str = "setup";

/// `title` of every success body.
const SUCCESS: &str = "request successful";

/// The API prefix of every path.
const PREFIX: &str = "/api/v1";

/// Capacity of the emulated logger storage.
const LOGGER_CAPACITY: u64 = 8 << 30;

/// An answer: status, JSON body, and for downloads the file name
/// (`Content-Disposition: attachment` over HTTP).
#[derive(Clone, Debug, PartialEq)]
pub struct Reply {
    pub status: u16,
    pub body: Vec<u8>,
    pub attachment: Option<&'static str>,
}

/// What the unit does with a request.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Reply(Reply),
    /// The unit is rebooting: no answer at all.
    Silent,
}

/// A problem with the unit's configuration.
#[derive(Debug, thiserror::Error)]
pub enum UnitError {
    #[error(transparent)]
    Spec(#[from] super::spec::SpecError),
    #[error("unknown user `{0}` in the passwords (users: {1})")]
    UnknownUser(String, String),
    #[error("cannot create the data logger's storage: {0}")]
    LoggerStorage(#[from] std::io::Error),
}

/// An error answer.
#[derive(Debug)]
struct ApiError {
    status: u16,
    detail: String,
    errors: Vec<SettingsValidationError>,
}

type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    fn new(status: u16, detail: impl Into<String>) -> Self {
        Self {
            status,
            detail: detail.into(),
            errors: Vec::new(),
        }
    }

    fn reply(self) -> Reply {
        let title = match self.status {
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            405 => "Method Not Allowed",
            409 => "Conflict",
            422 => "Unprocessable Entity",
            _ => "Internal Server Error",
        };
        let body = ErrorBody {
            status: i64::from(self.status),
            title: title.to_owned(),
            detail: self.detail,
            errors: self.errors,
        };
        json_reply(self.status, &body, false)
    }
}

/// The path a request is routed by: percent-decoded, with its leading `/` (the
/// vendor's serial tool writes `api/v1/settings`: both forms name the same resource)
/// and without a trailing one.
///
/// # Errors
/// 400 for a `.` or `..` segment, refused as it is, never resolved: the unit does not
/// let `/settings/../reboot` reach its reboot route, nor a node path climb out of the
/// settings tree.
fn route_path(path: &str) -> ApiResult<String> {
    let decoded = percent_decode_str(path).decode_utf8_lossy();
    let mut path = if decoded.starts_with('/') {
        decoded.into_owned()
    } else {
        format!("/{decoded}")
    };
    if path
        .split('/')
        .any(|segment| segment == "." || segment == "..")
    {
        return Err(ApiError::new(
            400,
            format!("{path}: a path segment cannot be `.` or `..`"),
        ));
    }
    if path.len() > PREFIX.len() + 1 && path.ends_with('/') {
        path.pop();
    }
    Ok(path)
}

fn json_reply<T: Serialize>(status: u16, body: &T, pretty: bool) -> Reply {
    let encoded = if pretty {
        serde_json::to_vec_pretty(body)
    } else {
        serde_json::to_vec(body)
    };
    match encoded {
        Ok(body) => Reply {
            status,
            body,
            attachment: None,
        },
        Err(e) => Reply {
            status: 500,
            body: format!(
                r#"{{"status":500,"title":"Internal Server Error","detail":"cannot encode the answer: {}"}}"#,
                e.to_string().replace(['"', '\\'], "'")
            )
            .into_bytes(),
            attachment: None,
        },
    }
}

fn ok<T: Serialize>(body: &T) -> ApiResult<Reply> {
    Ok(json_reply(200, body, false))
}

fn action() -> ApiResult<Reply> {
    ok(&ActionResult {
        title: SUCCESS.to_owned(),
    })
}

/// Who sends a request.
struct Caller {
    user: String,
    /// `None`: the default user (no `auth`).
    token: Option<String>,
}

struct Lock {
    token: String,
    last_seen: Instant,
}

struct State {
    settings: Value,
    /// User → password; empty means no password.
    passwords: BTreeMap<String, String>,
    /// Chosen at power-on and at each reboot.
    default_user: Option<String>,
    /// Token → user.
    tokens: HashMap<String, String>,
    lock: Option<Lock>,
    booting_until: Option<Instant>,
    logging_since: Option<Instant>,
    /// The data logger's sessions on disk and the running one.
    logger: super::logger::Logger,
    /// Test fault: the next FTP download is cut after this many bytes.
    ftp_cut: Option<u64>,
    /// Settings writes applied (not `checkOnly`), for tests that a write is never
    /// applied twice.
    applied_writes: u64,
    /// Saves of the settings (`POST /settings/save`) answered with success.
    saves: u64,
    /// Exchanges still to lose (their counts go down as they are lost).
    lost_exchanges: Vec<crate::faults::LostExchange>,
    /// When the unit last powered on (or finished rebooting), on the clock and in UTC:
    /// the outputs' timestamps count from it.
    powered_on: (Instant, chrono::DateTime<chrono::Utc>),
    /// The settings as they were at that power-on: what a setting that needs a reboot
    /// still does until the next one.
    booted_settings: Value,
}

impl State {
    /// The bytes the logger's sessions hold, once what the elapsed time implies is
    /// written.
    fn used_bytes(&mut self, now: Instant) -> u64 {
        // A failed write leaves the files as they are; the status reports what is there.
        let _ = self.logger.catch_up(now);
        self.logger.used_bytes().min(LOGGER_CAPACITY)
    }
}

/// What one output of the unit sends ([`Unit::port_output`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PortOutput {
    /// The reboots so far: a new count restarts the output's clock.
    pub boot: u64,
    /// When the unit powered on, on the clock and in UTC.
    pub powered_on: (Instant, chrono::DateTime<chrono::Utc>),
    /// `output.<port>.messages`: message name → trigger.
    pub messages: Value,
    /// `ports.<port>` as booted (an Ethernet port's mode and UDP destination).
    pub port: Value,
    /// How long after power-on the solutions take to be ready.
    pub startup: Duration,
}

/// The emulated unit: settings, users, tokens, lock, data logger.
pub struct Unit {
    spec: Arc<Spec>,
    defaults: Value,
    info: DeviceInfo,
    /// See [`Identity::missing_operations`].
    missing_operations: Vec<String>,
    reboot_time: Duration,
    lock_idle: Duration,
    /// How long after power-on the solutions take to be ready.
    startup: Duration,
    state: Mutex<State>,
    /// Counts reboots; the HTTP server closes its connections when it changes.
    boots: watch::Sender<u64>,
}

/// The settings a write targets and the body it carries.
struct Write<'a> {
    node: &'a str,
    body: WriteBody<'a>,
}

enum WriteBody<'a> {
    Json(&'a [u8]),
    Defaults,
}

/// What tells one emulated unit from another: its identity in `/info`, and the
/// operations its firmware lacks.
pub struct Identity {
    pub serial_number: String,
    pub mac_address: String,
    /// `operationId`s this unit does not serve: their routes answer 404 as an unknown
    /// path does (firmware without a route, e.g. the vendor's `/system/reboot`).
    pub missing_operations: Vec<String>,
    /// Requests or answers lost on the way (a fault of the link, kept with the unit so
    /// that every link loses them alike).
    pub lost_exchanges: Vec<crate::faults::LostExchange>,
    /// How long after power-on its solutions take to be ready
    /// ([`DeviceConfig::startup`](super::DeviceConfig::startup)).
    pub startup: Duration,
}

impl Unit {
    /// A unit at power-on. `passwords` sets the initial passwords (user → password;
    /// users not named have none).
    pub fn new(
        spec: Arc<Spec>,
        passwords: &BTreeMap<String, String>,
        identity: Identity,
        reboot_time: Duration,
        lock_idle: Duration,
    ) -> Result<Self, UnitError> {
        let mut all: BTreeMap<String, String> = spec
            .rights
            .roles
            .iter()
            .map(|role| (role.clone(), String::new()))
            .collect();
        for (user, password) in passwords {
            match all.get_mut(user) {
                Some(slot) => slot.clone_from(password),
                None => {
                    return Err(UnitError::UnknownUser(
                        user.clone(),
                        spec.rights.roles.join(", "),
                    ));
                }
            }
        }
        let defaults = default_settings(&spec.settings);
        let info = DeviceInfo {
            product_code: "EMU-INS-1".to_owned(),
            serial_number: identity.serial_number,
            hw_revision: "1.0.0.0".to_owned(),
            mnf_version: "1".to_owned(),
            mnf_date: "2024-01-01".to_owned(),
            mac_address: identity.mac_address,
            product_type: "INS".to_owned(),
            fmw_version: "1.0.0-emulated".to_owned(),
            bt_version: "1.0.0".to_owned(),
            e_com_version: "5.0".to_owned(),
            api_version: spec.api_version.clone(),
        };
        let powered_on = (Instant::now(), chrono::Utc::now());
        let mut state = State {
            settings: defaults.clone(),
            booted_settings: defaults.clone(),
            powered_on,
            passwords: all,
            default_user: None,
            tokens: HashMap::new(),
            lock: None,
            booting_until: None,
            logging_since: None,
            logger: super::logger::Logger::new(powered_on.0, identity.startup)?,
            ftp_cut: None,
            applied_writes: 0,
            saves: 0,
            lost_exchanges: identity.lost_exchanges,
        };
        state.default_user = choose_default_user(&spec, &state.passwords);
        Ok(Self {
            spec,
            defaults,
            info,
            missing_operations: identity.missing_operations,
            reboot_time,
            lock_idle,
            startup: identity.startup,
            state: Mutex::new(state),
            boots: watch::channel(0).0,
        })
    }

    /// What output `port` (`comA`, `eth1`, …) sends now: `None` while the unit
    /// reboots. Its messages are the settings' now (`output` takes effect at once); the
    /// port's own settings (`ports.<port>`, which need a reboot) as they were at the
    /// last power-on.
    pub fn port_output(&self, port: &str) -> Option<PortOutput> {
        if self.is_booting() {
            return None;
        }
        let state = self.state();
        Some(PortOutput {
            boot: *self.boots.borrow(),
            powered_on: state.powered_on,
            messages: state
                .settings
                .pointer(&format!("/output/{port}/messages"))
                .cloned()
                .unwrap_or(Value::Null),
            port: state
                .booted_settings
                .pointer(&format!("/ports/{port}"))
                .cloned()
                .unwrap_or(Value::Null),
            startup: self.startup,
        })
    }

    /// `ports.<port>` as the unit booted with it.
    pub fn booted_port(&self, port: &str) -> Option<Value> {
        self.state()
            .booted_settings
            .pointer(&format!("/ports/{port}"))
            .cloned()
    }

    /// The folder of the data logger's sessions.
    pub fn logger_root(&self) -> std::path::PathBuf {
        self.state().logger.root().to_path_buf()
    }

    /// Writes the frames the running session's elapsed time implies.
    pub fn logger_catch_up(&self) {
        let _ = self.state().logger.catch_up(Instant::now());
    }

    /// Whether `path` (in the logger's folder) belongs to the session being written.
    pub fn logger_is_running(&self, path: &std::path::Path) -> bool {
        self.state().logger.is_running(path)
    }

    /// The sessions and their files (names in order, sizes now).
    pub fn logger_sessions(&self) -> Vec<(String, Vec<super::logger::SessionFile>)> {
        let mut state = self.state();
        let _ = state.logger.catch_up(Instant::now());
        state.logger.sessions()
    }

    /// An FTP login: `Some(())` when `user` is a unit user whose password is
    /// `password` (empty for a user without one) and who holds the `FTP` right.
    pub fn ftp_login(&self, user: &str, password: &str) -> Option<()> {
        let state = self.state();
        let held = state.passwords.get(user)?;
        (held == password && self.ftp_right(user).is_some()).then_some(())
    }

    /// The `FTP` right of `user`: `Some(true)` with `WRITE`, `Some(false)` with `READ`
    /// only, `None` without.
    pub fn ftp_right(&self, user: &str) -> Option<bool> {
        let right = |level: &str| super::spec::Right {
            category: "FTP".to_owned(),
            level: level.to_owned(),
        };
        if self.spec.rights.allows(user, &right("WRITE")) {
            Some(true)
        } else if self.spec.rights.allows(user, &right("READ")) {
            Some(false)
        } else {
            None
        }
    }

    /// Test fault: cut the data connection of the next FTP download after `bytes`.
    pub fn cut_next_ftp_download(&self, bytes: u64) {
        self.state().ftp_cut = Some(bytes);
    }

    /// Takes the armed download fault, once.
    pub fn take_ftp_cut(&self) -> Option<u64> {
        self.state().ftp_cut.take()
    }

    /// The serial number reported in `/info`.
    pub fn serial_number(&self) -> &str {
        &self.info.serial_number
    }

    /// Changes (with a counter) at each reboot.
    pub fn boots(&self) -> watch::Receiver<u64> {
        self.boots.subscribe()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        match self.state.lock() {
            Ok(guard) => guard,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// How many settings writes were applied (see `DeviceEmulator::applied_writes`).
    pub fn applied_writes(&self) -> u64 {
        self.state().applied_writes
    }

    /// How many saves succeeded (see `DeviceEmulator::saves`).
    pub fn saves(&self) -> u64 {
        self.state().saves
    }

    /// Whether the unit is rebooting (it answers nothing).
    pub fn is_booting(&self) -> bool {
        let now = Instant::now();
        self.state().booting_until.is_some_and(|until| now < until)
    }

    /// The default user now (the one chosen at the last power-on or reboot).
    pub fn default_user(&self) -> Option<String> {
        self.state().default_user.clone()
    }

    /// The methods `path` answers, as the `Allow` header of a 405 lists them
    /// (`GET, POST`; empty for a path that does not exist).
    pub fn allowed_methods(&self, path: &str) -> String {
        let Ok(path) = route_path(path) else {
            return String::new();
        };
        self.spec
            .methods(&path)
            .into_iter()
            .map(Method::as_str)
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Serves one request. `method` is `GET` or `POST` (others answer 405 or 404),
    /// `path` starts with `/api/v1`, `query` has no leading `?`.
    pub fn handle(&self, method: &str, path: &str, query: &str, body: &[u8]) -> Outcome {
        let now = Instant::now();
        let mut state = self.state();
        if state.booting_until.is_some_and(|until| now < until) {
            return Outcome::Silent;
        }
        state.booting_until = None;
        let lost = self.lose(&mut state, method, path);
        if lost == Some(crate::faults::Lost::Request) {
            return Outcome::Silent;
        }
        let reply = self
            .serve(&mut state, now, method, path, query, body)
            .unwrap_or_else(ApiError::reply);
        if lost == Some(crate::faults::Lost::Answer) {
            return Outcome::Silent;
        }
        Outcome::Reply(reply)
    }

    /// Whether this request (or its answer) is to be lost, counting it down.
    fn lose(&self, state: &mut State, method: &str, path: &str) -> Option<crate::faults::Lost> {
        if state.lost_exchanges.is_empty() {
            return None;
        }
        let method = match method {
            "GET" => Method::Get,
            "POST" => Method::Post,
            _ => return None,
        };
        let path = route_path(path).ok()?;
        let Route::Found(op, _) = self.spec.route(Some(method), &path) else {
            return None;
        };
        let exchange = state
            .lost_exchanges
            .iter_mut()
            .find(|e| e.operation == op.id && e.count > 0)?;
        exchange.count -= 1;
        Some(exchange.lost)
    }

    fn serve(
        &self,
        state: &mut State,
        now: Instant,
        method: &str,
        path: &str,
        query: &str,
        body: &[u8],
    ) -> ApiResult<Reply> {
        let method = match method {
            "GET" => Some(Method::Get),
            "POST" => Some(Method::Post),
            _ => None,
        };
        let path = route_path(path)?;
        let path = path.as_str();
        let (op, node) = match self.spec.route(method, path) {
            Route::Found(op, node) => (op, node),
            Route::MethodNotAllowed => {
                return Err(ApiError::new(
                    405,
                    format!("{path} answers only other methods"),
                ));
            }
            Route::NotFound => return Err(ApiError::new(404, format!("no resource at {path}"))),
        };
        if self.missing_operations.contains(&op.id) {
            return Err(ApiError::new(404, format!("no resource at {path}")));
        }
        let query: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let param = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let caller = self.authenticate(state, now, op, param("auth"))?;
        let flag = |name: &str| -> ApiResult<bool> {
            match param(name) {
                None | Some("false") => Ok(false),
                Some("true") => Ok(true),
                Some(other) => Err(ApiError::new(
                    422,
                    format!("`{name}` must be true or false, not `{other}`"),
                )),
            }
        };
        match op.id.as_str() {
            "getSettings" | "getSettingsNode" => {
                let format = param("format").unwrap_or("compact");
                if !self.spec.formats.iter().any(|f| f == format) {
                    return Err(ApiError::new(
                        422,
                        format!(
                            "`format` must be one of {}, not `{format}`",
                            self.spec.formats.join(", ")
                        ),
                    ));
                }
                let delta = flag("delta")?;
                self.read_settings(state, &node, format == "pretty", delta)
            }
            "exportSettings" => Ok(Reply {
                attachment: Some("settings.json"),
                ..json_reply(200, &state.settings, false)
            }),
            "updateSettings" | "importSettings" | "updateSettingsNode" => {
                let check_only = flag("checkOnly")?;
                let write = Write {
                    node: &node,
                    body: WriteBody::Json(body),
                };
                self.write_settings(state, &caller, write, check_only)
            }
            "restoreDefaultSettings" => {
                let check_only = flag("checkOnly")?;
                let write = Write {
                    node: "",
                    body: WriteBody::Defaults,
                };
                self.write_settings(state, &caller, write, check_only)
            }
            "lockSettings" => {
                let token = caller.token.unwrap_or_default();
                match &mut state.lock {
                    Some(lock) if lock.token != token => Err(ApiError::new(409, LOCK_CONFLICT)),
                    Some(lock) => {
                        lock.last_seen = now;
                        action()
                    }
                    None => {
                        state.lock = Some(Lock {
                            token,
                            last_seen: now,
                        });
                        action()
                    }
                }
            }
            "unlockSettings" => {
                let token = caller.token.unwrap_or_default();
                match &state.lock {
                    Some(lock) if lock.token != token => Err(ApiError::new(409, LOCK_CONFLICT)),
                    _ => {
                        state.lock = None;
                        action()
                    }
                }
            }
            "saveSettings" => {
                if let Some(lock) = &state.lock
                    && caller.token.as_deref() != Some(lock.token.as_str())
                {
                    return Err(ApiError::new(409, LOCK_CONFLICT));
                }
                // Applied settings are kept across reboots already: a save changes
                // nothing (see the operation's description in the document).
                state.saves += 1;
                action()
            }
            "reboot" | "rebootSystem" => {
                self.reboot(state, now);
                action()
            }
            "getDeviceInfo" => ok(&self.info),
            "login" => {
                let request: LoginRequest = parse_body(body)?;
                let user = request.user.as_str();
                match state.passwords.get(user) {
                    Some(password) if password == request.password.expose_secret() => {
                        let token = uuid::Uuid::new_v4().simple().to_string();
                        state.tokens.insert(token.clone(), user.to_owned());
                        ok(&LoginResponse {
                            token: AuthToken::new(token),
                        })
                    }
                    _ => Err(ApiError::new(401, "wrong user or password")),
                }
            }
            "logout" => {
                let token = caller.token.unwrap_or_default();
                state.tokens.remove(&token);
                if state.lock.as_ref().is_some_and(|lock| lock.token == token) {
                    state.lock = None;
                }
                action()
            }
            "changePassword" => {
                let request: ChangePasswordRequest = parse_body(body)?;
                let target = request
                    .user
                    .as_ref()
                    .map_or(caller.user.as_str(), |u| u.as_str())
                    .to_owned();
                if !state.passwords.contains_key(&target) {
                    return Err(ApiError::new(422, format!("unknown user `{target}`")));
                }
                if target != caller.user && caller.user != PASSWORD_ADMIN {
                    return Err(ApiError::new(
                        403,
                        format!("only {PASSWORD_ADMIN} may change another user's password"),
                    ));
                }
                state
                    .passwords
                    .insert(target, request.password.expose_secret().to_owned());
                action()
            }
            "getDataLoggerStatus" => {
                let session_name = state
                    .settings
                    .pointer("/dataLogger/sessionName")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                let used = state.used_bytes(now);
                ok(&DataLoggerStatus {
                    state: if state.logging_since.is_some() {
                        DataLoggerState::Logging
                    } else {
                        DataLoggerState::Idle
                    },
                    session_name,
                    used_bytes: i64::try_from(used).unwrap_or(i64::MAX),
                    total_bytes: i64::try_from(LOGGER_CAPACITY).unwrap_or(i64::MAX),
                })
            }
            "startDataLogger" => {
                if state.logging_since.is_some() {
                    return Err(ApiError::new(409, "the data logger is already logging"));
                }
                let settings = state.settings.clone();
                state.logger.start(&settings, now).map_err(|e| {
                    ApiError::new(500, format!("the data logger cannot write: {e}"))
                })?;
                state.logging_since = Some(now);
                action()
            }
            "stopDataLogger" => {
                if state.logging_since.is_none() {
                    return Err(ApiError::new(409, "the data logger is not logging"));
                }
                state.logging_since = None;
                state.logger.stop(now).map_err(|e| {
                    ApiError::new(500, format!("the data logger cannot write: {e}"))
                })?;
                action()
            }
            other => Err(ApiError::new(
                500,
                format!("operation {other} is not emulated"),
            )),
        }
    }

    /// Who the caller is, and whether it may run `op`. Also ends an idle lock and
    /// keeps the lock of its holder alive.
    fn authenticate(
        &self,
        state: &mut State,
        now: Instant,
        op: &Operation,
        auth: Option<&str>,
    ) -> ApiResult<Caller> {
        if state
            .lock
            .as_ref()
            .is_some_and(|lock| now.duration_since(lock.last_seen) > self.lock_idle)
        {
            state.lock = None;
        }
        let Some(right) = &op.right else {
            // Login: no authentication.
            return Ok(Caller {
                user: String::new(),
                token: None,
            });
        };
        let caller = match auth {
            Some(token) => {
                let user = state.tokens.get(token).ok_or_else(|| {
                    ApiError::new(
                        401,
                        "the token is not valid (tokens end at logout and reboot): log in again",
                    )
                })?;
                if let Some(lock) = state.lock.as_mut().filter(|lock| lock.token == token) {
                    lock.last_seen = now;
                }
                Caller {
                    user: user.clone(),
                    token: Some(token.to_owned()),
                }
            }
            None if op.requires_login => {
                return Err(ApiError::new(
                    401,
                    "this operation needs the token of a login as the `auth` query parameter",
                ));
            }
            None => match &state.default_user {
                Some(user) => Caller {
                    user: user.clone(),
                    token: None,
                },
                None => {
                    return Err(ApiError::new(
                        401,
                        "every user has a password: log in and pass the token as `auth`",
                    ));
                }
            },
        };
        if !self.spec.rights.allows(&caller.user, right) {
            return Err(ApiError::new(
                403,
                format!(
                    "user {} lacks the {} {} right",
                    caller.user, right.category, right.level
                ),
            ));
        }
        Ok(caller)
    }

    fn reboot(&self, state: &mut State, now: Instant) {
        state.tokens.clear();
        state.lock = None;
        if state.logging_since.is_some() {
            let _ = state.logger.stop(now);
            state.logging_since = None;
        }
        state.default_user = choose_default_user(&self.spec, &state.passwords);
        if !self.reboot_time.is_zero() {
            state.booting_until = Some(now + self.reboot_time);
        }
        let booted = now + self.reboot_time;
        let booted_utc =
            chrono::Utc::now() + chrono::Duration::from_std(self.reboot_time).unwrap_or_default();
        state.powered_on = (booted, booted_utc);
        state.logger.set_power_on(booted);
        state.booted_settings = state.settings.clone();
        self.boots.send_modify(|boots| *boots += 1);
    }

    fn read_settings(
        &self,
        state: &State,
        node: &str,
        pretty: bool,
        delta: bool,
    ) -> ApiResult<Reply> {
        let segments = segments(node);
        let not_found = || ApiError::new(404, format!("no settings node `{node}`"));
        if self.spec.settings.at(segments.iter().copied()).is_none() {
            return Err(not_found());
        }
        let value = lookup(&state.settings, &segments).ok_or_else(not_found)?;
        if !delta {
            return Ok(json_reply(200, value, pretty));
        }
        let default = lookup(&self.defaults, &segments).unwrap_or(&Value::Null);
        let changed = match diff(value, default) {
            Some(changed) => changed,
            None if value.is_object() => Value::Object(Map::new()),
            None => Value::Null,
        };
        Ok(json_reply(200, &changed, pretty))
    }

    fn write_settings(
        &self,
        state: &mut State,
        caller: &Caller,
        write: Write<'_>,
        check_only: bool,
    ) -> ApiResult<Reply> {
        let segments = segments(write.node);
        let schema = self
            .spec
            .settings
            .at(segments.iter().copied())
            .ok_or_else(|| ApiError::new(404, format!("no settings node `{}`", write.node)))?;
        if let Some(lock) = &state.lock
            && caller.token.as_deref() != Some(lock.token.as_str())
        {
            return Err(ApiError::new(409, LOCK_CONFLICT));
        }
        let mut tree = state.settings.clone();
        match write.body {
            WriteBody::Defaults => tree = self.defaults.clone(),
            WriteBody::Json(bytes) => {
                let mut value: Value = serde_json::from_slice(bytes)
                    .map_err(|e| ApiError::new(400, format!("the body is not valid JSON: {e}")))?;
                let mut errors = Vec::new();
                schema.validate(&value, write.node, false, &mut errors);
                if !errors.is_empty() {
                    let count = errors.len();
                    return Err(ApiError {
                        status: 422,
                        detail: format!("{count} invalid setting(s): nothing was changed"),
                        errors: errors
                            .into_iter()
                            .map(|e| SettingsValidationError {
                                path: e.path,
                                message: e.message,
                            })
                            .collect(),
                    });
                }
                schema.normalize(&mut value);
                let target = lookup_mut(&mut tree, &segments).ok_or_else(|| {
                    ApiError::new(404, format!("no settings node `{}`", write.node))
                })?;
                merge(target, &value);
            }
        }
        let need_reboot = self
            .spec
            .settings
            .changes_need_reboot(&state.settings, &tree);
        if !check_only {
            state.settings = tree;
            state.applied_writes += 1;
        }
        ok(&WriteResult {
            title: SUCCESS.to_owned(),
            need_reboot,
        })
    }
}

/// The highest-role user without a password.
fn choose_default_user(spec: &Spec, passwords: &BTreeMap<String, String>) -> Option<String> {
    spec.rights
        .roles
        .iter()
        .rev()
        .find(|role| passwords.get(*role).is_some_and(String::is_empty))
        .cloned()
}

fn parse_body<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    serde_json::from_slice(body).map_err(|e| {
        ApiError::new(
            400,
            format!("the body is not the expected JSON object: {e}"),
        )
    })
}

fn segments(node: &str) -> Vec<&str> {
    if node.is_empty() {
        Vec::new()
    } else {
        node.split('/').collect()
    }
}

fn lookup<'a>(tree: &'a Value, segments: &[&str]) -> Option<&'a Value> {
    segments
        .iter()
        .try_fold(tree, |value, segment| value.as_object()?.get(*segment))
}

fn lookup_mut<'a>(tree: &'a mut Value, segments: &[&str]) -> Option<&'a mut Value> {
    segments.iter().try_fold(tree, |value, segment| {
        value.as_object_mut()?.get_mut(*segment)
    })
}

/// Merges a write into the tree: objects key by key, arrays and scalars replaced whole.
pub fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(target), Value::Object(patch)) => {
            for (key, value) in patch {
                match target.get_mut(key) {
                    Some(slot) => merge(slot, value),
                    None => {
                        target.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (target, patch) => *target = patch.clone(),
    }
}

/// The part of `current` that differs from `default`, as a partial tree; `None` when
/// nothing differs.
pub fn diff(current: &Value, default: &Value) -> Option<Value> {
    match (current, default) {
        (Value::Object(current), Value::Object(default)) => {
            let changed: Map<String, Value> = current
                .iter()
                .filter_map(|(key, value)| {
                    let changed = match default.get(key) {
                        Some(default) => diff(value, default)?,
                        None => value.clone(),
                    };
                    Some((key.clone(), changed))
                })
                .collect();
            (!changed.is_empty()).then_some(Value::Object(changed))
        }
        (current, default) => (current != default).then(|| current.clone()),
    }
}
