//! End to end: unit sessions (`svc_core::unit`) against the emulated unit
//! (`svc_emulator::device`), each scenario over the three links — HTTP, the TCP serial
//! bridge and the pseudo-terminal opened as a serial port — plus the serial link's
//! rules against a fake unit (`serial_rules.rs`); one file per subject, the rig here.
//!
//! Every scenario is written once, as a function of the [`Link`]; `over_links!` makes
//! one test per scenario and link (`unit::<subject>::http::…`, `…::tcp::…`,
//! `…::pty::…`). Reboots and lock expiry use short emulator times, and waits poll with
//! deadlines.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ins_device_api::Password;
use ins_device_api::enums::UserName;
use serde_json::{Value, json};
use svc_core::unit::serial_link::{DEFAULT_INTER_BYTE_TIMEOUT, SerialLink, SerialOptions};
use svc_core::unit::{Exchange, ExchangeFuture, ExchangeRequest, Unit, UnitError};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};

/// One test per scenario and link.
macro_rules! over_links {
    ($($name:ident),* $(,)?) => {
        mod http {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Link::Http).await;
            })*
        }
        mod tcp {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Link::Tcp).await;
            })*
        }
        mod pty {
            $(#[tokio::test]
            async fn $name() {
                super::$name(super::Link::Pty).await;
            })*
        }
    };
}

// After `over_links!`: a macro by example is visible only below its definition.
mod address;
mod apply_wanted;
mod info;
mod interrupted;
mod invalid_writes;
mod live;
mod lock;
mod logger;
mod login;
mod node_paths;
mod reboot;
mod serial_rules;
mod stream;
mod user_rights;
mod vendor_routes;

/// How a session reaches the unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// `Unit::http(url)`.
    Http,
    /// The serial protocol over the emulator's TCP bridge (one connection per session).
    Tcp,
    /// The serial protocol over the emulator's pseudo-terminal, opened as a serial port
    /// at 115200 baud (one line, shared by every session of a test).
    Pty,
}

/// Serial deadlines of these tests: long enough for the whole tree on a loaded machine,
/// short enough that a request sent while the unit reboots is given up quickly.
const SERIAL: SerialOptions = SerialOptions {
    answer_timeout: Duration::from_secs(2),
    get_attempts: 2,
    inter_byte_timeout: DEFAULT_INTER_BYTE_TIMEOUT,
};

/// The factory password of every rig (never the default one).
const FACTORY_PASSWORD: &str = "pw-factory-7Qx";

/// Users in role order, lowest first.
const USERS: [&str; 5] = ["viewer", "operator", "powerUser", "setup", "factory"];

fn pw(text: &str) -> Password {
    Password::new(text)
}

/// A known password for each user.
fn password_of(user: &str) -> String {
    format!("pw-{user}-3k9")
}

/// A unit configuration: short reboot, default lock expiry, the given passwords.
fn config(passwords: &[(&str, &str)]) -> DeviceConfig {
    DeviceConfig {
        passwords: passwords
            .iter()
            .map(|(u, p)| ((*u).to_owned(), (*p).to_owned()))
            .collect::<BTreeMap<_, _>>(),
        factory_password: FACTORY_PASSWORD.to_owned(),
        reboot_time: Duration::from_millis(300),
        ..DeviceConfig::default()
    }
}

/// Counts the requests a serial session hands to its link (to prove that a refused
/// request was never sent).
struct Counting {
    inner: Arc<SerialLink>,
    sent: Arc<AtomicUsize>,
}

impl Exchange for Counting {
    fn exchange(&self, request: ExchangeRequest) -> ExchangeFuture<'_> {
        self.sent.fetch_add(1, Ordering::SeqCst);
        self.inner.exchange(request)
    }
}

/// One emulated unit reached over one link.
struct Rig {
    link: Link,
    dev: DeviceEmulator,
    pty: Option<Arc<SerialLink>>,
    serial: SerialOptions,
    /// factory's password (for [`Rig::raw`]).
    factory: String,
    /// Requests handed to the serial links of this rig's sessions.
    sent: Arc<AtomicUsize>,
}

impl Rig {
    async fn start(link: Link, config: DeviceConfig) -> Rig {
        Rig::start_with(link, config, SERIAL).await
    }

    async fn start_with(link: Link, config: DeviceConfig, serial: SerialOptions) -> Rig {
        let config = DeviceConfig {
            pty: link == Link::Pty,
            ..config
        };
        let factory = config
            .passwords
            .get("factory")
            .unwrap_or(&config.factory_password)
            .clone();
        let dev = DeviceEmulator::start(config)
            .await
            .expect("the emulated unit starts");
        let pty = match link {
            Link::Pty => {
                let path = dev.serial_path().expect("the unit has a pty");
                let path = path.to_str().expect("a UTF-8 pty path").to_owned();
                let port = SerialLink::port(&path, 115_200, serial).expect("open the pty");
                Some(Arc::new(port))
            }
            Link::Http | Link::Tcp => None,
        };
        Rig {
            link,
            dev,
            pty,
            serial,
            factory,
            sent: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// A new session, not logged in.
    async fn session(&self) -> Unit {
        let serial = match self.link {
            Link::Http => return Unit::http(self.dev.url()).expect("an http:// URL"),
            Link::Tcp => Arc::new(
                SerialLink::tcp(self.dev.serial_tcp(), self.serial)
                    .await
                    .expect("connect to the serial bridge"),
            ),
            Link::Pty => self.pty.clone().expect("the pty is open"),
        };
        let counting = Counting {
            inner: serial,
            sent: self.sent.clone(),
        };
        Unit::over(Arc::new(counting), format!("{:?} link", self.link))
    }

    /// A new session logged in as `user` (with `password`).
    async fn login(&self, user: UserName, password: &str) -> Unit {
        let unit = self.session().await;
        unit.login(user.clone(), pw(password))
            .await
            .unwrap_or_else(|e| panic!("{:?}: login as {user}: {e}", self.link));
        unit
    }

    fn sent(&self) -> usize {
        self.sent.load(Ordering::SeqCst)
    }

    /// A token of `factory`, from the emulator's core (not through the SDK).
    fn raw_token(&self) -> String {
        let login = json!({"user": "factory", "password": self.factory}).to_string();
        let (status, body) = self
            .dev
            .handle("POST", "/api/v1/user/login", "", login.as_bytes())
            .expect("the unit is not rebooting");
        assert_eq!(
            status,
            200,
            "factory login: {}",
            String::from_utf8_lossy(&body)
        );
        let token: Value = serde_json::from_slice(&body).unwrap();
        token["token"].as_str().unwrap().to_owned()
    }

    /// A request straight to the emulator's core (not through the SDK) with `token`.
    fn raw_as(&self, token: &str, method: &str, path: &str) -> (u16, Value) {
        let (status, body) = self
            .dev
            .handle(method, path, &format!("auth={token}"), b"")
            .expect("the unit is not rebooting");
        (status, serde_json::from_slice(&body).unwrap())
    }

    /// A request straight to the emulator's core (not through the SDK), as `factory`.
    fn raw(&self, method: &str, path: &str) -> (u16, Value) {
        self.raw_as(&self.raw_token(), method, path)
    }

    /// The unit's whole tree as it holds it.
    fn tree(&self) -> Value {
        let (status, tree) = self.raw("GET", "/api/v1/settings");
        assert_eq!(status, 200);
        tree
    }
}

fn paths(errors: &UnitError) -> BTreeSet<String> {
    errors
        .node_errors()
        .iter()
        .map(|e| e.path.clone())
        .collect()
}

fn set_of(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

/// Polls `probe` until it returns `Some`, at most until `within` has passed.
async fn poll<T, F, Fut>(within: Duration, what: &str, mut probe: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = Instant::now() + within;
    loop {
        if let Some(v) = probe().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
