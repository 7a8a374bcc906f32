//! End to end: unit sessions (`svc_core::unit`) against the emulated unit
//! (`svc_emulator::device`), each scenario over the three links — HTTP, the TCP serial
//! bridge and the pseudo-terminal opened as a serial port — plus the serial link's
//! rules against a fake unit written here.
//!
//! Every scenario is written once, as a function of the [`Link`]; `over_links!` makes
//! one test per scenario and link (`unit::http::…`, `unit::tcp::…`, `unit::pty::…`).
//! Reboots and lock expiry use short emulator times, and waits poll with deadlines.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ins_device_api::Password;
use ins_device_api::enums::UserName;
use serde_json::{Value, json};
use svc_core::serial::{Ack, CLASS_REST, Decoder, ID_GET, ID_POST, Method, RestReply, RestRequest};
use svc_core::unit::serial_link::{DEFAULT_INTER_BYTE_TIMEOUT, SerialLink, SerialOptions};
use svc_core::unit::{
    ApplyOptions, Exchange, ExchangeFuture, ExchangeRequest, Unit, UnitError, rights,
};
use svc_emulator::device::{DeviceConfig, DeviceEmulator};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

// ------------------------------------------------------------------------------ rig

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

over_links!(
    info_and_whole_tree,
    login_logout_and_the_default_user,
    rights_of_each_user_logged_in,
    rights_of_each_user_as_the_default_user,
    invalid_write_is_refused_whole,
    lock_between_two_sessions,
    lock_expires_when_idle,
    reboot_mid_session_logs_in_again,
    own_reboot_then_a_write_without_waiting_runs_as_the_user,
    default_user_is_chosen_again_at_reboot,
    delta_compares_numbers_by_value,
    apply_wanted_tree,
);

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

// ------------------------------------------------------------- 1. info and the tree

async fn info_and_whole_tree(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;

    let info = unit.info().await.unwrap();
    let (status, raw_info) = rig.raw("GET", "/api/v1/info");
    assert_eq!(status, 200);
    assert_eq!(serde_json::to_value(&info).unwrap(), raw_info);
    assert!(!info.product_code.is_empty());
    assert!(!info.serial_number.is_empty());
    let (major, minor) = info
        .api_version
        .split_once('.')
        .expect("apiVersion is Major.Minor");
    assert!(
        major.parse::<u32>().is_ok() && minor.parse::<u32>().is_ok(),
        "apiVersion {:?}",
        info.api_version
    );

    let tree = unit.settings().await.unwrap();
    let typed = unit.settings_typed().await.unwrap();
    // The typed tree and the untyped one agree, and both are the unit's tree.
    assert_eq!(serde_json::to_value(&typed).unwrap(), tree);
    assert_eq!(svc_core::settings::to_value(&typed).unwrap(), tree);
    assert_eq!(tree, rig.tree(), "{link:?}: the tree as the SDK reads it");
    // Over serial the whole tree does not fit one standard frame: large frames carried it.
    let size = serde_json::to_vec(&tree).unwrap().len();
    assert!(size > 4086, "the tree is {size} bytes");
    for module in ["aiding", "output", "network", "ports", "localParam"] {
        assert!(tree.get(module).is_some(), "module {module}");
    }

    assert_eq!(unit.export().await.unwrap(), tree);
    assert_eq!(
        unit.node("aiding/gnss1").await.unwrap(),
        tree["aiding"]["gnss1"]
    );
    assert_eq!(
        unit.node("/aiding/gnss1/leverArmPrimary/").await.unwrap(),
        tree["aiding"]["gnss1"]["leverArmPrimary"]
    );
    assert_eq!(
        unit.node("output/comA/messages/imuShort").await.unwrap(),
        tree["output"]["comA"]["messages"]["imuShort"]
    );
    let missing = unit.node("aiding/gnss9").await.unwrap_err();
    assert_eq!(missing.status(), Some(404), "{missing}");

    // Nothing changed yet: the delta is empty; after one change it holds only that.
    assert_eq!(unit.settings_delta().await.unwrap(), json!({}));
    let outcome = unit
        .write_node("output/comA/messages/imuShort", &json!("10ms"), false)
        .await
        .unwrap();
    assert!(!outcome.need_reboot);
    assert_eq!(
        unit.settings_delta().await.unwrap(),
        json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}})
    );
}

// -------------------------------------------------- 2. login, logout, default user

async fn login_logout_and_the_default_user(link: Link) {
    let setup_pw = password_of("setup");
    let rig = Rig::start(link, config(&[("setup", &setup_pw)])).await;
    // The highest role without a password: powerUser (setup and factory have one).
    let expected = rights::default_user(|u| matches!(u.as_str(), "setup" | "factory"));
    assert_eq!(expected, Some(UserName::PowerUser));
    assert_eq!(rig.dev.default_user().as_deref(), Some("powerUser"));

    let unit = rig.session().await;
    assert_eq!(unit.user(), None);
    // Without a login the default user acts: powerUser may write settings...
    unit.info().await.unwrap();
    unit.write_node("oem/label", &json!("default user"), false)
        .await
        .unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "default user");
    // ...but the lock and password changes need a token.
    assert_eq!(unit.lock().await.unwrap_err().status(), Some(401));
    let e = unit
        .change_password(None, pw("whatever-1"))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");

    // A wrong password: 401, the session stays as it was, the password is not quoted.
    let wrong = "wrong-pw-Zz81";
    let e = unit
        .login(UserName::Setup, pw(wrong))
        .await
        .expect_err("a wrong password is refused");
    assert!(
        matches!(e, UnitError::Api { status: 401, .. }),
        "{link:?}: {e:?}"
    );
    assert!(!e.is_retryable());
    assert!(!format!("{e} {e:?}").contains(wrong));
    assert_eq!(unit.user(), None);
    let e = unit
        .login(UserName::from("nobody"), pw(""))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401), "an unknown user: {e}");

    // The right password: logged in; the lock works with the token.
    unit.login(UserName::Setup, pw(&setup_pw)).await.unwrap();
    assert_eq!(unit.user(), Some(UserName::Setup));
    unit.lock().await.unwrap();
    unit.unlock().await.unwrap();
    assert!(!format!("{unit:?}").contains(&setup_pw));

    // setup changes operator's password; powerUser may not change another's.
    unit.change_password(Some(UserName::Operator), pw("pw-op-new-55"))
        .await
        .unwrap();
    let power = rig.login(UserName::PowerUser, "").await;
    let e = power
        .change_password(Some(UserName::Operator), pw("pw-op-evil"))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
    let operator = rig.login(UserName::Operator, "pw-op-new-55").await;
    assert_eq!(operator.user(), Some(UserName::Operator));
    let e = rig
        .session()
        .await
        .login(UserName::Operator, pw(""))
        .await
        .unwrap_err();
    assert_eq!(
        e.status(),
        Some(401),
        "operator's old (empty) password: {e}"
    );

    // Changing one's own password: the old one stops working, the new one works.
    unit.change_password(None, pw("pw-setup-new-77"))
        .await
        .unwrap();
    let e = rig
        .session()
        .await
        .login(UserName::Setup, pw(&setup_pw))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(401));
    rig.login(UserName::Setup, "pw-setup-new-77").await;

    // Logout: back to the default user (the lock needs a token again).
    unit.logout().await.unwrap();
    assert_eq!(unit.user(), None);
    assert_eq!(unit.lock().await.unwrap_err().status(), Some(401));
    unit.info().await.unwrap();

    // Every user has a password: no default user, a request without a token is 401.
    let all: Vec<(String, String)> = USERS
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let all: Vec<(&str, &str)> = all.iter().map(|(u, p)| (u.as_str(), p.as_str())).collect();
    let locked = Rig::start(link, config(&all)).await;
    assert_eq!(rights::default_user(|_| true), None);
    assert_eq!(locked.dev.default_user(), None);
    let anonymous = locked.session().await;
    let e = anonymous.info().await.unwrap_err();
    assert_eq!(e.status(), Some(401), "{e}");
    let viewer = locked.login(UserName::Viewer, &password_of("viewer")).await;
    viewer.info().await.unwrap();

    // Only viewer without a password: viewer is the default user and may not write.
    let some: Vec<(&str, &str)> = all
        .iter()
        .copied()
        .filter(|(u, _)| *u != "viewer")
        .collect();
    let viewing = Rig::start(link, config(&some)).await;
    assert_eq!(viewing.dev.default_user().as_deref(), Some("viewer"));
    let anonymous = viewing.session().await;
    anonymous.settings().await.unwrap();
    let e = anonymous
        .write_node("oem/label", &json!("x"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
}

/// `delta=true` lists "only settings changed from default": a number written as `1`
/// where the default is `1.0` is the same setting value, not a change.
async fn delta_compares_numbers_by_value(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;
    assert_eq!(
        rig.tree()["insFilter"]["validityThresholds"]["heading"],
        json!(1.0)
    );
    unit.write_node("insFilter/validityThresholds/heading", &json!(1), false)
        .await
        .unwrap();
    unit.write_node("aiding/gnss1/leverArmPrimary", &json!([0, 0, -1]), false)
        .await
        .unwrap();
    assert_eq!(
        unit.settings_delta().await.unwrap(),
        json!({}),
        "{link:?}: values equal to the defaults are not changes"
    );
}

// ------------------------------------------------------------------------ 3. rights

/// Runs a representative set of operations through `Unit` and checks each answer
/// (success, or the refusal) against `rights::may`. Reboot comes last.
async fn check_rights(
    rig: &Rig,
    unit: &Unit,
    user: &UserName,
    own_password: &str,
    logged_in: bool,
) {
    let tree = rig.tree();
    let mut mismatches = Vec::new();
    let mut check = |op: &str, result: Result<(), UnitError>| {
        let right = rights::required(op).unwrap_or_else(|| panic!("{op} is in the matrix"));
        let may = rights::may(user, op, logged_in).expect("a known user and operation");
        let refusal = if right.requires_login && !logged_in {
            401
        } else {
            403
        };
        let ok = match (&result, may) {
            (Ok(()), true) => true,
            (Err(e), false) => e.status() == Some(refusal),
            _ => false,
        };
        if !ok {
            mismatches.push(format!(
                "{op}: rights::may = {may}, the unit: {}",
                match &result {
                    Ok(()) => "ok".to_owned(),
                    Err(e) => e.to_string(),
                }
            ));
        }
    };
    check("getDeviceInfo", unit.info().await.map(drop));
    check("getSettings", unit.settings().await.map(drop));
    check("getSettingsNode", unit.node("aiding/gnss1").await.map(drop));
    check("exportSettings", unit.export().await.map(drop));
    check(
        "updateSettingsNode",
        unit.write_node("output/comA/messages/imuShort", &json!("10ms"), false)
            .await
            .map(drop),
    );
    check(
        "updateSettings",
        unit.write(&json!({"oem": {"label": "rights"}}), false)
            .await
            .map(drop),
    );
    check("importSettings", unit.import(&tree, false).await.map(drop));
    check(
        "restoreDefaultSettings",
        unit.restore_defaults(false).await.map(drop),
    );
    check("lockSettings", unit.lock().await);
    check("unlockSettings", unit.unlock().await);
    check("getDataLoggerStatus", unit.logger_status().await.map(drop));
    check("startDataLogger", unit.logger_start().await);
    check("stopDataLogger", unit.logger_stop().await);
    check(
        "changePassword",
        unit.change_password(None, pw(own_password)).await,
    );
    check("reboot", unit.reboot().await);
    assert!(
        mismatches.is_empty(),
        "{:?} as {user} ({}): {mismatches:#?}",
        rig.link,
        if logged_in {
            "logged in"
        } else {
            "default user"
        }
    );
}

async fn rights_of_each_user_logged_in(link: Link) {
    let all: Vec<(String, String)> = USERS
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let all: Vec<(&str, &str)> = all.iter().map(|(u, p)| (u.as_str(), p.as_str())).collect();
    for user in USERS {
        // A fresh unit per user: the last operation reboots it.
        let rig = Rig::start(link, config(&all)).await;
        let unit = rig.login(UserName::from(user), &password_of(user)).await;
        check_rights(&rig, &unit, &UserName::from(user), &password_of(user), true).await;
    }
}

async fn rights_of_each_user_as_the_default_user(link: Link) {
    for (rank, user) in USERS.iter().enumerate() {
        // Every user above `user` has a password, `user` and those below have none:
        // `user` is the default user.
        let above: Vec<(String, String)> = USERS[rank + 1..]
            .iter()
            .map(|u| ((*u).to_owned(), password_of(u)))
            .chain((*user == "factory").then(|| ("factory".to_owned(), String::new())))
            .collect();
        let above: Vec<(&str, &str)> = above
            .iter()
            .map(|(u, p)| (u.as_str(), p.as_str()))
            .collect();
        let rig = Rig::start(link, config(&above)).await;
        assert_eq!(rig.dev.default_user().as_deref(), Some(*user));
        let unit = rig.session().await;
        check_rights(&rig, &unit, &UserName::from(*user), "", false).await;
    }
}

// --------------------------------------------------------------- 4. invalid writes

async fn invalid_write_is_refused_whole(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.session().await;
    let before = unit.export().await.unwrap();

    // Three invalid nodes the typed tree can hold (an unknown message name, a CAN id out
    // of range, a trigger outside the set) beside two valid changes.
    let patch = json!({
        "output": {
            "comA": {"messages": {"imuShort": "10ms", "noSuchMessage": "10ms"}},
            "comB": {"messages": {"ekfNav": "7ms"}},
            "can": {"messages": {"status01": {"id": 536_870_912_i64}}},
        },
        "localParam": {"height": 12.5},
    });
    for check_only in [true, false] {
        let e = unit.write(&patch, check_only).await.unwrap_err();
        assert!(
            matches!(e, UnitError::Api { status: 422, .. }),
            "{link:?}: {e:?}"
        );
        assert_eq!(e.status(), Some(422));
        assert!(!e.is_retryable());
        assert_eq!(
            paths(&e),
            set_of(&[
                "output/comA/messages/noSuchMessage",
                "output/comB/messages/ekfNav",
                "output/can/messages/status01/id",
            ]),
            "{link:?}: {e}"
        );
        for node in e.node_errors() {
            assert!(!node.message.is_empty(), "{node:?}");
        }
        assert_eq!(unit.export().await.unwrap(), before, "nothing applied");
    }

    // One node: the same refusal, naming it.
    let e = unit
        .write_node("output/comA/messages/imuShort", &json!("7ms"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "{e}");
    assert_eq!(paths(&e), set_of(&["output/comA/messages/imuShort"]), "{e}");
    let e = unit
        .write_node("localParam/date", &json!("2024/05/01"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "{e}");
    assert_eq!(paths(&e), set_of(&["localParam/date"]), "{e}");
    assert_eq!(unit.export().await.unwrap(), before, "nothing applied");

    // Refused before sending: an unknown key, a date not matching YYYY-MM-DD, a vector
    // of the wrong length (the typed tree cannot hold them).
    let sent = rig.sent();
    for wanted in [
        json!({"aiding": {"gnss1": {"leverArmTertiary": [0.0, 0.0, 0.0]}}}),
        json!({"noSuchModule": {"x": 1}}),
        json!({"localParam": {"date": "2024/05/01"}}),
        json!({"aiding": {"gnss1": {"leverArmPrimary": [0.1, 0.2]}}}),
    ] {
        let e = unit.write(&wanted, false).await.unwrap_err();
        assert!(
            matches!(e, UnitError::InvalidRequest { .. }),
            "{wanted}: {e:?}"
        );
        let e = unit
            .apply_wanted(&wanted, ApplyOptions::default())
            .await
            .unwrap_err();
        assert!(
            matches!(e, UnitError::InvalidRequest { .. }),
            "{wanted}: {e:?}"
        );
        let e = unit.import(&wanted, true).await.unwrap_err();
        assert!(
            matches!(e, UnitError::InvalidRequest { .. }),
            "{wanted}: {e:?}"
        );
    }
    let e = unit
        .write(
            &json!({"aiding": {"gnss1": {"leverArmTertiary": [0.0, 0.0, 0.0]}}}),
            false,
        )
        .await
        .unwrap_err();
    assert!(
        e.to_string().contains("aiding/gnss1/leverArmTertiary"),
        "the unknown node is named: {e}"
    );
    if link != Link::Http {
        assert_eq!(rig.sent(), sent, "refused requests were not sent");
    }
    assert_eq!(rig.tree(), before, "the tree is unchanged");
}

// ------------------------------------------------------------------------- 5. lock

async fn lock_between_two_sessions(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let a = rig.login(UserName::Setup, "").await;
    let b = rig.login(UserName::Setup, "").await;
    let write = |n: u32| json!({"oem": {"label": format!("write {n}")}});

    a.lock().await.unwrap();
    a.lock().await.expect("locking again is harmless");
    let e = b.write(&write(1), false).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "{link:?}: {e}");
    assert!(!e.is_retryable());
    match &e {
        UnitError::Api { title, detail, .. } => {
            assert!(!title.is_empty(), "{e:?}");
            assert!(
                detail.contains("another user is already editing the settings"),
                "{e:?}"
            );
        }
        other => panic!("{other:?}"),
    }
    let e = b
        .write_node("oem/label", &json!("b"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    assert_eq!(b.lock().await.unwrap_err().status(), Some(409));
    assert_eq!(b.unlock().await.unwrap_err().status(), Some(409));
    let anonymous = rig.session().await;
    let e = anonymous.write(&write(2), false).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "the default user too: {e}");
    // Every kind of settings write.
    let tree = rig.tree();
    assert_eq!(
        b.import(&tree, false).await.unwrap_err().status(),
        Some(409)
    );
    assert_eq!(
        b.restore_defaults(false).await.unwrap_err().status(),
        Some(409)
    );
    let e = b.write(&write(2), true).await.unwrap_err();
    assert_eq!(e.status(), Some(409), "checkOnly too: {e}");
    let e = b
        .apply_wanted(&write(2), ApplyOptions::default())
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    // Reading is not refused.
    b.settings().await.unwrap();
    // The holder writes.
    a.write(&write(3), false).await.unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "write 3");

    a.unlock().await.unwrap();
    b.write(&write(4), false).await.unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "write 4");

    // A logout ends the lock it held.
    b.lock().await.unwrap();
    assert_eq!(
        a.write(&write(5), false).await.unwrap_err().status(),
        Some(409)
    );
    b.logout().await.unwrap();
    a.write(&write(6), false).await.unwrap();
    assert_eq!(rig.tree()["oem"]["label"], "write 6");
}

async fn lock_expires_when_idle(link: Link) {
    let idle = Duration::from_millis(500);
    let rig = Rig::start(
        link,
        DeviceConfig {
            lock_idle: idle,
            ..config(&[])
        },
    )
    .await;
    let a = rig.login(UserName::Setup, "").await;
    let b = rig.login(UserName::Setup, "").await;

    // The holder's requests keep the lock alive past `lock_idle`.
    a.lock().await.unwrap();
    let start = Instant::now();
    while start.elapsed() < idle * 2 {
        a.info().await.unwrap();
        tokio::time::sleep(Duration::from_millis(40)).await;
    }
    let e = b
        .write_node("oem/label", &json!("b"), false)
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "the lock is alive: {e}");

    // Left idle, it ends after `lock_idle`.
    let locked_at = Instant::now();
    a.lock().await.unwrap();
    let freed = poll(Duration::from_secs(5), "the idle lock ends", || async {
        match b.write_node("oem/label", &json!("b"), false).await {
            Ok(_) => Some(Instant::now()),
            Err(e) => {
                assert_eq!(e.status(), Some(409), "{e}");
                None
            }
        }
    })
    .await;
    assert!(
        freed.duration_since(locked_at) >= idle,
        "the lock ended after {:?}",
        freed.duration_since(locked_at)
    );
    assert_eq!(rig.tree()["oem"]["label"], "b");
    // The former holder has no lock any more: B can take it.
    b.lock().await.unwrap();
    assert_eq!(
        a.write_node("oem/label", &json!("a"), false)
            .await
            .unwrap_err()
            .status(),
        Some(409)
    );
}

// ----------------------------------------------------------------------- 6. reboot

/// After its own `reboot()`, a session that does not call `wait_until_back` still acts
/// as its user: its next request logs in again first instead of going out without a
/// token (as the default user, here the viewer, who may not write).
async fn own_reboot_then_a_write_without_waiting_runs_as_the_user(link: Link) {
    let passwords: Vec<(String, String)> = ["operator", "powerUser", "setup"]
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let passwords: Vec<(&str, &str)> = passwords
        .iter()
        .map(|(u, p)| (u.as_str(), p.as_str()))
        .collect();
    let serial = SerialOptions {
        answer_timeout: Duration::from_millis(500),
        get_attempts: 1,
        ..SERIAL
    };
    let rig = Rig::start_with(link, config(&passwords), serial).await;
    let a = rig
        .login(UserName::PowerUser, &password_of("powerUser"))
        .await;
    a.reboot().await.unwrap();
    let written = poll(Duration::from_secs(10), "the unit is back", || async {
        match a
            .write_node("oem/label", &json!("after my own reboot"), false)
            .await
        {
            Err(e) if e.status().is_none() => None, // unreachable while it reboots
            other => Some(other),
        }
    })
    .await;
    written.expect("the write runs as powerUser, not as the default viewer");
    assert_eq!(rig.tree()["oem"]["label"], "after my own reboot");
    assert_eq!(a.user(), Some(UserName::PowerUser));
}

async fn reboot_mid_session_logs_in_again(link: Link) {
    // Only viewer has no password: a write succeeds only as a logged-in user.
    let passwords: Vec<(String, String)> = ["operator", "powerUser", "setup"]
        .iter()
        .map(|u| ((*u).to_owned(), password_of(u)))
        .collect();
    let passwords: Vec<(&str, &str)> = passwords
        .iter()
        .map(|(u, p)| (u.as_str(), p.as_str()))
        .collect();
    let serial = SerialOptions {
        answer_timeout: Duration::from_secs(1),
        get_attempts: 2,
        ..SERIAL
    };
    let rig = Rig::start_with(link, config(&passwords), serial).await;
    let a = rig.login(UserName::Setup, &password_of("setup")).await;
    let b = rig
        .login(UserName::PowerUser, &password_of("powerUser"))
        .await;
    a.write_node("oem/label", &json!("before"), false)
        .await
        .unwrap();
    a.logger_start().await.unwrap();
    a.lock().await.unwrap();

    let token = rig.raw_token();
    assert_eq!(rig.raw_as(&token, "GET", "/api/v1/info").0, 200);

    // A reboots and waits: back within 5 s, logged in again by itself.
    let started = Instant::now();
    a.reboot().await.unwrap();
    let info = a.wait_until_back(Duration::from_secs(5)).await.unwrap();
    assert!(!info.product_code.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(300));
    assert!(!rig.dev.is_rebooting());
    assert_eq!(a.user(), Some(UserName::Setup));
    let (status, body) = rig.raw_as(&token, "GET", "/api/v1/info");
    assert_eq!(status, 401, "a token of before the reboot is dead: {body}");
    a.write_node("oem/label", &json!("after A's reboot"), false)
        .await
        .expect("A writes without calling login again");
    assert_eq!(rig.tree()["oem"]["label"], "after A's reboot");
    // The reboot ended the lock and stopped the data logger.
    b.write_node("oem/label", &json!("B after the reboot"), false)
        .await
        .expect("the lock ended with the reboot (B logs in again by itself)");
    let status = a.logger_status().await.unwrap();
    assert_eq!(
        serde_json::to_value(&status.state).unwrap(),
        json!("idle"),
        "{status:?}"
    );

    // B reboots; A does not know: its token is dead, its next write logs in again.
    b.reboot().await.unwrap();
    b.wait_until_back(Duration::from_secs(5)).await.unwrap();
    a.write_node("oem/label", &json!("after B's reboot"), false)
        .await
        .expect("A's dead token is replaced by a new login");
    assert_eq!(rig.tree()["oem"]["label"], "after B's reboot");

    // A session without a login: the unit acts as the default user again after the
    // reboot (viewer), wait_until_back works without credentials.
    let anonymous = rig.session().await;
    anonymous.reboot().await.expect_err("viewer may not reboot");
    a.reboot().await.unwrap();
    anonymous
        .wait_until_back(Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(anonymous.user(), None);
}

async fn default_user_is_chosen_again_at_reboot(link: Link) {
    let serial = SerialOptions {
        answer_timeout: Duration::from_secs(1),
        get_attempts: 2,
        ..SERIAL
    };
    let power = password_of("powerUser");
    let rig = Rig::start_with(link, config(&[("powerUser", &power)]), serial).await;
    assert_eq!(rig.dev.default_user().as_deref(), Some("setup"));
    let a = rig.login(UserName::Setup, "").await;
    let anonymous = rig.session().await;
    anonymous
        .write_node("oem/label", &json!("as setup"), false)
        .await
        .unwrap();

    // setup and powerUser now have passwords; the default user stays setup until the
    // next reboot.
    a.change_password(None, pw("pw-setup-new-31"))
        .await
        .unwrap();
    assert_eq!(rig.dev.default_user().as_deref(), Some("setup"));
    anonymous
        .write_node("oem/label", &json!("still setup"), false)
        .await
        .expect("the default user changes at the next reboot only");

    // After the reboot: operator. A logs in again with its new password by itself.
    a.reboot().await.unwrap();
    a.wait_until_back(Duration::from_secs(5)).await.unwrap();
    assert_eq!(rig.dev.default_user().as_deref(), Some("operator"));
    a.write_node("oem/label", &json!("A with the new password"), false)
        .await
        .unwrap();
    let e = anonymous
        .write_node("oem/label", &json!("as operator"), false)
        .await
        .unwrap_err();
    assert_eq!(
        e.status(),
        Some(403),
        "operator may not write settings: {e}"
    );
    anonymous
        .logger_start()
        .await
        .expect("operator uses the logger");
    anonymous.logger_stop().await.unwrap();

    // Only setup changes other users' passwords: not factory.
    let factory = rig.login(UserName::Factory, FACTORY_PASSWORD).await;
    let e = factory
        .change_password(Some(UserName::Operator), pw("pw-by-factory"))
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");

    // An empty password clears it: setup logs in without one, and after a reboot it is
    // the default user again.
    a.change_password(None, pw("")).await.unwrap();
    rig.login(UserName::Setup, "").await;
    a.reboot().await.unwrap();
    a.wait_until_back(Duration::from_secs(5)).await.unwrap();
    assert_eq!(rig.dev.default_user().as_deref(), Some("setup"));
    anonymous
        .write_node("oem/label", &json!("setup again"), false)
        .await
        .unwrap();
}

// ------------------------------------------------------------------- 7. apply_wanted

async fn apply_wanted_tree(link: Link) {
    let rig = Rig::start(link, config(&[])).await;
    let unit = rig.login(UserName::Setup, "").await;
    let original = rig.tree();

    let wanted = json!({
        "aiding": {"gnss1": {"leverArmPrimary": [0.1, 0.0, -1.2], "model": original["aiding"]["gnss1"]["model"]}},
        "output": {"comA": {"messages": {"imuShort": "10ms", "status": original["output"]["comA"]["messages"]["status"]}}},
        "network": {"ntp": {"enabled": true}},
        "localParam": {"latitude": 0},
    });
    let changes = set_of(&[
        "aiding/gnss1/leverArmPrimary",
        "output/comA/messages/imuShort",
        "network/ntp/enabled",
    ]);

    // check_only: the changes are listed, nothing is written.
    let report = unit
        .apply_wanted(
            &wanted,
            ApplyOptions {
                check_only: true,
                lock: false,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        report.changed.iter().cloned().collect::<BTreeSet<_>>(),
        changes
    );
    assert_eq!(report.changed.len(), 3);
    assert!(!report.written);
    assert!(
        report.need_reboot,
        "the unit's checkOnly answer: network needs a reboot"
    );
    assert_eq!(rig.tree(), original, "check_only changed nothing");

    // Applied: exactly those three nodes; `network` needs a reboot.
    let report = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .unwrap();
    assert_eq!(
        report.changed.iter().cloned().collect::<BTreeSet<_>>(),
        changes
    );
    assert_eq!(report.changed.len(), 3);
    assert!(report.need_reboot);
    assert!(report.written);
    let after = rig.tree();
    assert_eq!(
        after["aiding"]["gnss1"]["leverArmPrimary"],
        json!([0.1, 0.0, -1.2])
    );
    assert_eq!(after["output"]["comA"]["messages"]["imuShort"], "10ms");
    assert_eq!(after["network"]["ntp"]["enabled"], true);
    let changed_paths = svc_core::settings::diff(&original, &after);
    assert_eq!(
        changed_paths
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect::<BTreeSet<_>>(),
        changes,
        "nothing else changed"
    );

    // Again: nothing to do, nothing written.
    let report = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .unwrap();
    assert!(report.changed.is_empty(), "{report:?}");
    assert!(!report.written);
    assert!(!report.need_reboot);

    // `1` and `1.0` of a number node are the same value.
    let numbers = json!({
        "insFilter": {"validityThresholds": {"heading": 1}},
        "aiding": {"odometer": {"gain": 4096}},
        "mechanicalSetup": {"leverArms": {"cog": [0, 0, 0]}},
    });
    assert_eq!(
        original["insFilter"]["validityThresholds"]["heading"],
        json!(1.0)
    );
    let report = unit
        .apply_wanted(&numbers, ApplyOptions::default())
        .await
        .unwrap();
    assert!(report.changed.is_empty(), "{report:?}");
    assert!(!report.written);
    assert_eq!(rig.tree(), after);

    // With the lock: applied, and the lock released afterwards.
    let wanted = json!({"localParam": {"height": 42.5}, "oem": {"label": "locked apply"}});
    let report = unit
        .apply_wanted(
            &wanted,
            ApplyOptions {
                check_only: false,
                lock: true,
            },
        )
        .await
        .unwrap();
    assert_eq!(
        report.changed.iter().cloned().collect::<BTreeSet<_>>(),
        set_of(&["localParam/height", "oem/label"])
    );
    assert!(report.written);
    assert!(!report.need_reboot);
    let other = rig.login(UserName::Setup, "").await;
    other
        .write_node("oem/label", &json!("other session"), false)
        .await
        .expect("the lock was released");
    assert_eq!(rig.tree()["localParam"]["height"], json!(42.5));

    // While another session holds the lock: 409, nothing applied.
    other.lock().await.unwrap();
    let before = rig.tree();
    let e = unit
        .apply_wanted(
            &json!({"localParam": {"height": 1.5}}),
            ApplyOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    let e = unit
        .apply_wanted(
            &json!({"localParam": {"height": 1.5}}),
            ApplyOptions {
                check_only: false,
                lock: true,
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(409), "{e}");
    assert_eq!(rig.tree(), before);
    other.unlock().await.unwrap();

    // An invalid wanted value: the unit's 422, nothing applied.
    let e = unit
        .apply_wanted(
            &json!({"output": {"comA": {"messages": {"imuShort": "3ms", "ekfNav": "10ms"}}}}),
            ApplyOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(e.status(), Some(422), "{e}");
    assert_eq!(paths(&e), set_of(&["output/comA/messages/imuShort"]));
    assert_eq!(rig.tree(), before);
}

// --------------------------------------------------- 8. serial rules, a fake unit

/// What the fake unit does with each request it decodes.
#[derive(Clone, Copy)]
enum Fake {
    /// Never answers.
    Silent,
    /// Answers an ACK with this error code.
    AckError(u16),
    /// Answers garbage, a frame with a bad CRC, then the valid reply.
    GarbageThenReply,
    /// Answers an ACK of another message (a POST, code 0), then the valid reply.
    OtherAckThenReply,
    /// Sends a corrupt header whose length is in range (4086) and a little junk, then,
    /// after [`LINE_PAUSE`] of silence, the valid reply.
    CorruptHeaderPauseThenReply,
    /// Sends a corrupt header whose length is in range, a little junk and the valid
    /// reply in one write.
    CorruptHeaderThenReply,
}

/// A header whose length is in range (4086) but that starts no real frame: the
/// sequence of issue #11.
const CORRUPT_HEADER: [u8; 6] = [0xff, 0x5a, 0x30, 0x10, 0xf6, 0x0f];

/// The silence of [`Fake::CorruptHeaderPauseThenReply`]: longer than the link's
/// inter-byte timeout, much shorter than its answer timeout.
const LINE_PAUSE: Duration = Duration::from_millis(600);

const INFO_BODY: &str = r#"{"productCode":"FAKE-1","serialNumber":"F0001","hwRevision":"1","mnfVersion":"1","mnfDate":"2024-01-01","macAddress":"02:00:00:00:00:01","productType":"INS","fmwVersion":"9.9","btVersion":"1","eComVersion":"5","apiVersion":"1.3"}"#;

/// A TCP serial bridge to a fake unit; returns its address and the requests it decoded.
async fn fake_unit(behaviour: Fake) -> (String, tokio::sync::mpsc::UnboundedReceiver<RestRequest>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap().to_string();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let mut decoder = Decoder::new();
        let mut buffer = vec![0u8; 8192];
        loop {
            let n = match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            decoder.push(&buffer[..n]);
            while let Some(message) = decoder.next_message() {
                let request = RestRequest::decode(&message).expect("a REST request");
                let id = request.id();
                let _ = tx.send(request);
                let reply = || RestReply::new(200, INFO_BODY.as_bytes()).encode(id, 0);
                let corrupt = || {
                    let mut bytes = CORRUPT_HEADER.to_vec();
                    bytes.extend_from_slice(b"junk\x00\x01");
                    bytes
                };
                let answer = match behaviour {
                    Fake::Silent => continue,
                    Fake::CorruptHeaderPauseThenReply => {
                        if stream.write_all(&corrupt()).await.is_err() {
                            return;
                        }
                        // The silence is the point of this fake: the line is idle.
                        tokio::time::sleep(LINE_PAUSE).await;
                        reply()
                    }
                    Fake::CorruptHeaderThenReply => {
                        let mut bytes = corrupt();
                        bytes.extend_from_slice(&reply());
                        bytes
                    }
                    Fake::AckError(code) => Ack {
                        id,
                        class: CLASS_REST,
                        error: code,
                    }
                    .encode(),
                    Fake::GarbageThenReply => {
                        let reply = RestReply::new(200, INFO_BODY.as_bytes()).encode(id, 0);
                        let mut broken = reply.clone();
                        let crc = broken.len() - 2;
                        broken[crc] ^= 0x55;
                        let mut bytes = b"noise\x00\x33\x5a\x10 more noise".to_vec();
                        bytes.extend_from_slice(&broken);
                        bytes.extend_from_slice(&[0x00, 0x5a, 0x33]);
                        bytes.extend_from_slice(&reply);
                        bytes
                    }
                    Fake::OtherAckThenReply => {
                        let other = if id == ID_POST { ID_GET } else { ID_POST };
                        let mut bytes = Ack {
                            id: other,
                            class: CLASS_REST,
                            error: 0,
                        }
                        .encode();
                        bytes.extend(RestReply::new(200, INFO_BODY.as_bytes()).encode(id, 0));
                        bytes
                    }
                };
                if stream.write_all(&answer).await.is_err() {
                    return;
                }
            }
        }
    });
    (address, rx)
}

/// Receives the requests the fake unit decoded until `count` arrived (deadline 5 s),
/// then checks that no more follow shortly.
async fn received(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<RestRequest>,
    count: usize,
) -> Vec<RestRequest> {
    let mut got = Vec::new();
    while got.len() < count {
        match tokio::time::timeout(Duration::from_secs(5), rx.recv()).await {
            Ok(Some(r)) => got.push(r),
            _ => panic!(
                "only {} of {count} requests reached the fake unit",
                got.len()
            ),
        }
    }
    // Absence can only be shown by waiting: a short while.
    if let Ok(Some(extra)) = tokio::time::timeout(Duration::from_millis(150), rx.recv()).await {
        panic!("an extra request reached the fake unit: {extra:?}");
    }
    got
}

const FAST: SerialOptions = SerialOptions {
    answer_timeout: Duration::from_millis(200),
    get_attempts: 3,
    inter_byte_timeout: Duration::from_millis(100),
};

#[tokio::test]
async fn serial_get_is_sent_again_on_timeout_post_never() {
    let (address, mut rx) = fake_unit(Fake::Silent).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());

    let started = Instant::now();
    let e = unit.info().await.unwrap_err();
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "3 × 200 ms"
    );
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    assert!(e.is_retryable());
    let text = e.to_string();
    assert!(text.contains("attempt 3 of 3"), "{text}");
    let requests = received(&mut rx, 3).await;
    for r in &requests {
        assert_eq!(r.method, Method::Get);
        assert_eq!(r.path, "/api/v1/info");
    }

    let e = unit
        .write_node("oem/label", &json!("once"), false)
        .await
        .unwrap_err();
    assert!(matches!(e, UnitError::Unreachable { .. }), "{e:?}");
    let text = e.to_string();
    assert!(
        text.contains("not sent again") || text.contains("not repeated"),
        "the error says the POST was not repeated: {text}"
    );
    let requests = received(&mut rx, 1).await;
    assert_eq!(requests[0].method, Method::Post);
    assert_eq!(requests[0].path, "/api/v1/settings/oem/label");
    assert_eq!(requests[0].body.as_deref(), Some(&b"\"once\""[..]));

    // A reboot (a POST) is not repeated either.
    unit.reboot().await.unwrap_err();
    let requests = received(&mut rx, 1).await;
    assert_eq!(requests[0].path, "/api/v1/reboot");
}

#[tokio::test]
async fn serial_ack_with_an_error_code_is_reported_with_the_code() {
    let (address, mut rx) = fake_unit(Fake::AckError(7)).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    let e = unit.info().await.unwrap_err();
    let text = e.to_string();
    assert!(text.contains("error code 7"), "{text}");
    // An ACK is an answer: the GET is not sent again.
    assert_eq!(received(&mut rx, 1).await.len(), 1);
    let e = unit
        .write(&json!({"oem": {"label": "x"}}), false)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("error code 7"), "{e}");
    received(&mut rx, 1).await;
}

#[tokio::test]
async fn serial_garbage_before_a_reply_is_skipped() {
    let (address, mut rx) = fake_unit(Fake::GarbageThenReply).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    for _ in 0..3 {
        let info = unit.info().await.unwrap();
        assert_eq!(info.product_code, "FAKE-1");
        assert_eq!(info.api_version, "1.3");
    }
    assert_eq!(received(&mut rx, 3).await.len(), 3, "each GET sent once");
}

/// An ACK names the message it acknowledges: one for another message (e.g. the late
/// ACK of an earlier POST) is not the answer to this request, which still comes.
/// (`decode_reply`'s contract: "an ACK of another command … a transport may skip it
/// and keep waiting".)
#[tokio::test]
async fn serial_ack_of_another_message_is_not_the_answer() {
    let (address, mut rx) = fake_unit(Fake::OtherAckThenReply).await;
    let link = SerialLink::tcp(&address, FAST).await.unwrap();
    let unit = Unit::over(Arc::new(link), "fake".to_owned());
    let info = unit.info().await.expect("the reply after the other ACK");
    assert_eq!(info.product_code, "FAKE-1");
    assert_eq!(received(&mut rx, 1).await.len(), 1);
}

/// A corrupt header announcing 4086 bytes no longer swallows the answer behind it:
/// the link gives the partial frame up once the line has been idle for the inter-byte
/// timeout and finds the answer at once, well within the answer timeout. GETs are not
/// sent again here, so a swallowed answer would fail the call.
#[tokio::test]
async fn serial_corrupt_header_is_abandoned_after_the_inter_byte_timeout() {
    let options = SerialOptions {
        answer_timeout: Duration::from_secs(3),
        get_attempts: 1,
        ..SerialOptions::default()
    };
    for fake in [
        Fake::CorruptHeaderPauseThenReply,
        Fake::CorruptHeaderThenReply,
    ] {
        let (address, mut rx) = fake_unit(fake).await;
        let link = SerialLink::tcp(&address, options).await.unwrap();
        let unit = Unit::over(Arc::new(link), "fake".to_owned());
        for _ in 0..2 {
            let started = Instant::now();
            let info = unit
                .info()
                .await
                .expect("the answer behind the corrupt header");
            assert_eq!(info.product_code, "FAKE-1");
            assert!(
                started.elapsed() < LINE_PAUSE + Duration::from_secs(2),
                "answered promptly: {:?}",
                started.elapsed()
            );
        }
        assert_eq!(received(&mut rx, 2).await.len(), 2, "each GET sent once");
    }
}

#[tokio::test]
async fn serial_bridge_that_does_not_listen_is_unreachable() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap().to_string();
    drop(listener);
    let e = SerialLink::tcp(&address, FAST).await.unwrap_err();
    assert!(e.contains(&address), "{e}");
    let e = Unit::http("https://127.0.0.1:1").unwrap_err();
    assert!(matches!(e, UnitError::InvalidRequest { .. }), "{e:?}");
}

/// An export keeps every node the unit holds, also those the settings schema does not
/// describe (a backup must not lose them).
#[tokio::test]
async fn export_keeps_nodes_the_schema_does_not_describe() {
    struct Fixed;
    impl svc_core::unit::Exchange for Fixed {
        fn exchange(
            &self,
            request: svc_core::unit::ExchangeRequest,
        ) -> svc_core::unit::ExchangeFuture<'_> {
            Box::pin(async move {
                assert_eq!(request.path, "/api/v1/settings/export");
                let body = br#"{"oem":{"label":"van","vendorExtra":7},"vendorModule":{"x":[1,2]}}"#
                    .to_vec();
                Ok(svc_core::unit::ExchangeReply { status: 200, body })
            })
        }
    }
    let unit = Unit::over(Arc::new(Fixed), "fixed".into());
    let tree = unit.export().await.unwrap();
    assert_eq!(
        tree,
        json!({"oem": {"label": "van", "vendorExtra": 7}, "vendorModule": {"x": [1, 2]}})
    );
}

/// A unit that acknowledges a write without applying it: `apply_wanted` does not trust
/// the 200 but reads the tree back, and names every node that is still not as wanted.
#[tokio::test]
async fn apply_wanted_reports_nodes_the_read_back_does_not_show() {
    /// One request as the fake saw it.
    #[derive(Clone)]
    struct Seen {
        method: String,
        path: String,
        query: String,
        body: Option<Value>,
    }
    /// Answers every write with the unit's success body, and every read with the tree
    /// it started with; records each request.
    struct Stale {
        tree: Value,
        seen: std::sync::Mutex<Vec<Seen>>,
    }
    impl Exchange for Stale {
        fn exchange(&self, request: ExchangeRequest) -> ExchangeFuture<'_> {
            Box::pin(async move {
                let body = request
                    .body
                    .as_deref()
                    .map(|b| serde_json::from_slice::<Value>(b).expect("a JSON body"));
                let method = request.method.as_str().to_owned();
                self.seen.lock().unwrap().push(Seen {
                    method: method.clone(),
                    path: request.path.clone(),
                    query: request.query.clone(),
                    body,
                });
                let body = match (method.as_str(), request.path.as_str()) {
                    ("GET", "/api/v1/settings") => serde_json::to_vec(&self.tree).unwrap(),
                    // updateSettings' WriteResult, for checkOnly and the real write alike.
                    ("POST", "/api/v1/settings") => {
                        br#"{"title":"request successful","needReboot":false}"#.to_vec()
                    }
                    _ => return Err(format!("the fake has no {method} {}", request.path)),
                };
                Ok(svc_core::unit::ExchangeReply { status: 200, body })
            })
        }
    }

    let original = json!({
        "oem": {"label": "van"},
        "localParam": {"height": 10.0, "latitude": 48.5, "longitude": 2.25},
    });
    let stale = Arc::new(Stale {
        tree: original.clone(),
        seen: std::sync::Mutex::new(Vec::new()),
    });
    let unit = Unit::over(stale.clone(), "stale".into());

    // Two nodes change; `latitude` is wanted as it already is and must not be reported.
    let wanted = json!({
        "oem": {"label": "stale"},
        "localParam": {"height": 42.5, "latitude": 48.5},
    });
    let e = unit
        .apply_wanted(&wanted, ApplyOptions::default())
        .await
        .expect_err("the read-back still shows the original tree");
    let UnitError::NotApplied { paths } = &e else {
        panic!("expected NotApplied, got {e:?}");
    };
    let mut paths = paths.clone();
    paths.sort();
    assert_eq!(paths, ["localParam/height", "oem/label"], "{e}");
    assert!(e.to_string().contains("oem/label"), "{e}");

    // Read, validate, write, read back: the same minimal patch both times, and the
    // write really happened (checkOnly=false) before the unit was found stale.
    let patch = json!({"localParam": {"height": 42.5}, "oem": {"label": "stale"}});
    let seen = stale.seen.lock().unwrap().clone();
    let steps: Vec<(&str, &str, &str)> = seen
        .iter()
        .map(|s| (s.method.as_str(), s.path.as_str(), s.query.as_str()))
        .collect();
    assert_eq!(
        steps,
        [
            ("GET", "/api/v1/settings", ""),
            ("POST", "/api/v1/settings", "checkOnly=true"),
            ("POST", "/api/v1/settings", "checkOnly=false"),
            ("GET", "/api/v1/settings", ""),
        ]
    );
    assert_eq!(seen[0].body, None);
    assert_eq!(seen[1].body.as_ref(), Some(&patch));
    assert_eq!(seen[2].body.as_ref(), Some(&patch));
    assert_eq!(seen[3].body, None);
}
