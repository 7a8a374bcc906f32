//! A fleet: many units kept at one reference configuration.
//!
//! Operators who run many vehicles keep one wanted tree (whole, or the nodes that
//! matter) and need every unit to match it. [`Fleet`] reaches every unit of a list
//! (over HTTP or a serial-over-IP bridge, each with its own user if it needs one) a
//! bounded number at a time and:
//!
//! - [`status`](Fleet::status): which nodes of each unit differ from the wanted tree
//!   (nothing written; an empty list is a unit in sync);
//! - [`apply`](Fleet::apply): [`Unit::apply_wanted`] on each unit (validated, written,
//!   read back), optionally holding each unit's lock or only checking;
//! - [`export`](Fleet::export): each unit's whole tree into a folder, one file per unit
//!   named by its serial number.
//!
//! A unit that cannot be reached, is locked by another session or refuses a node never
//! stops the others: each unit has its own [`UnitResult`], reported as it completes
//! and returned in the order of the list.

use std::collections::HashSet;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use futures::stream::{self, StreamExt};
use ins_device_api::Password;
use ins_device_api::enums::UserName;
use serde_json::Value;

use crate::error::ErrorKind;
use crate::unit::{ApplyOptions, ApplyReport, Unit, UnitError};

/// Where a unit is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnitAddress {
    /// Its HTTP interface, e.g. `http://192.168.1.1`.
    Http(String),
    /// A serial-over-IP bridge carrying the sbgECom protocol, `HOST:PORT`.
    SerialTcp(String),
}

impl UnitAddress {
    /// An address as written in a fleet file: `http://…` (units speak plain HTTP; a
    /// unit address as [`unit_address`](crate::unit::unit_address) checks it), or
    /// `tcp://HOST:PORT` for a serial-over-IP bridge.
    ///
    /// # Errors
    /// [`FleetError::Address`] for anything else, with the reason.
    pub fn parse(text: &str) -> Result<Self, FleetError> {
        if text.starts_with("http://") {
            crate::unit::unit_address(text)
                .map(|_| Self::Http(text.to_owned()))
                .map_err(|reason| FleetError::Address {
                    address: crate::shown_address(text),
                    reason,
                })
        } else if let Some(address) = text.strip_prefix("tcp://")
            && address.rsplit_once(':').is_some_and(|(host, port)| {
                !host.is_empty() && port.parse::<u16>().is_ok_and(|p| p > 0)
            })
        {
            Ok(Self::SerialTcp(address.to_owned()))
        } else {
            Err(FleetError::Address {
                address: crate::shown_address(text),
                reason: format!(
                    "`{}` is not a unit address (http://HOST[:PORT] or tcp://HOST:PORT)",
                    crate::shown_address(text)
                ),
            })
        }
    }

    /// A session with the unit, over `http` when given (one client, and so one
    /// connection pool, for a whole fleet).
    async fn connect(&self, http: Option<&reqwest::Client>) -> Result<Unit, UnitError> {
        match (self, http) {
            (Self::Http(url), Some(http)) => Unit::http_with_client(url, http.clone()),
            (Self::Http(url), None) => Unit::http(url),
            (Self::SerialTcp(address), _) => Unit::serial_tcp(address).await,
        }
    }
}

impl fmt::Display for UnitAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Http(url) => f.write_str(url),
            Self::SerialTcp(address) => write!(f, "tcp://{address}"),
        }
    }
}

/// One unit of a fleet: where it is, and the user to log in as (`None`: the unit's
/// default user, no login).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// Where the unit is.
    pub address: UnitAddress,
    /// Who logs in.
    pub user: Option<UserName>,
}

/// A list of units that cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// Not an address of a unit.
    #[error("{reason}")]
    Address {
        /// The text given as an address (without a password it may carry).
        address: String,
        /// Why it is not one.
        reason: String,
    },
    /// A line of a fleet file that cannot be used.
    #[error("line {line}: {reason}")]
    Line {
        /// The line's number, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A fleet file without any unit.
    #[error("the list names no unit")]
    Empty,
}

impl FleetError {
    /// Always [`ErrorKind::InvalidInput`]: the list is wrong, no unit was reached.
    #[must_use]
    pub fn kind(&self) -> ErrorKind {
        ErrorKind::InvalidInput
    }
}

/// Reads a fleet file: one unit per line, `ADDRESS [USER]` (see [`UnitAddress::parse`];
/// USER is one of the unit's users: viewer, operator, powerUser, setup, factory);
/// blank lines and lines starting with `#` are skipped.
///
/// ```
/// use svc_core::fleet::{UnitAddress, parse_members};
///
/// let members = parse_members("# the yard\nhttp://10.0.0.11 setup\ntcp://10.0.0.12:2000\n")?;
/// assert_eq!(members.len(), 2);
/// assert_eq!(members[1].address, UnitAddress::SerialTcp("10.0.0.12:2000".into()));
/// assert!(members[1].user.is_none());
/// # Ok::<(), svc_core::fleet::FleetError>(())
/// ```
///
/// # Errors
/// [`FleetError::Line`] naming the first line that cannot be used, [`FleetError::Empty`]
/// when no line names a unit.
pub fn parse_members(text: &str) -> Result<Vec<Member>, FleetError> {
    let mut members = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_number = index + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let mut words = line.split_whitespace();
        let (Some(address), user, None) = (words.next(), words.next(), words.next()) else {
            return Err(FleetError::Line {
                line: line_number,
                reason: "expected `ADDRESS [USER]`".to_owned(),
            });
        };
        let address = UnitAddress::parse(address).map_err(|e| FleetError::Line {
            line: line_number,
            reason: e.to_string(),
        })?;
        let user = match user {
            None => None,
            Some(name) => {
                let user = UserName::from(name);
                if !user.is_known() {
                    return Err(FleetError::Line {
                        line: line_number,
                        reason: format!("unknown user `{name}`"),
                    });
                }
                Some(user)
            }
        };
        members.push(Member { address, user });
    }
    if members.is_empty() {
        return Err(FleetError::Empty);
    }
    Ok(members)
}

/// What happened on one unit.
#[derive(Debug)]
pub struct UnitResult<T> {
    /// The unit's place in the list.
    pub index: usize,
    /// Where the unit is.
    pub address: UnitAddress,
    /// The unit's serial number, once it answered.
    pub serial_number: Option<String>,
    /// What the operation gave, or why it failed on this unit.
    pub outcome: Result<T, UnitError>,
}

/// Many units, reached a bounded number at a time, logging in with one password.
pub struct Fleet {
    members: Vec<Member>,
    password: Password,
    concurrency: usize,
    /// The HTTP client of every unit reached over HTTP (`None` if it could not be
    /// built: then each unit builds its own).
    http: Option<reqwest::Client>,
}

impl fmt::Debug for Fleet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Fleet")
            .field("members", &self.members)
            .field("password", &"[redacted]")
            .field("concurrency", &self.concurrency)
            .finish()
    }
}

impl Fleet {
    /// How many units are reached at once by default.
    pub const DEFAULT_CONCURRENCY: usize = 16;

    /// The fleet of `members`, each logging in (when it names a user) with an empty
    /// password (users have none by default; see [`with_password`](Self::with_password)).
    pub fn new(members: Vec<Member>) -> Self {
        let http = crate::http::HttpClientConfig::unit(crate::unit::HTTP_TIMEOUT)
            .build()
            .ok();
        Self {
            members,
            password: Password::new(""),
            concurrency: Self::DEFAULT_CONCURRENCY,
            http,
        }
    }

    /// The password of the members' users.
    #[must_use]
    pub fn with_password(mut self, password: Password) -> Self {
        self.password = password;
        self
    }

    /// How many units are reached at once (at least 1).
    #[must_use]
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// The units, in the list's order.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The nodes of each unit that differ from `wanted` (a whole or partial tree):
    /// empty for a unit in sync. Nothing is written.
    pub async fn status(
        &self,
        wanted: &Value,
        each: impl FnMut(&UnitResult<Vec<String>>),
    ) -> Vec<UnitResult<Vec<String>>> {
        self.on_every_unit(
            each,
            |unit| async move { unit.pending_changes(wanted).await },
        )
        .await
    }

    /// [`Unit::apply_wanted`] on every unit; one failing (locked, refusing a node,
    /// unreachable) does not stop the others.
    pub async fn apply(
        &self,
        wanted: &Value,
        options: ApplyOptions,
        each: impl FnMut(&UnitResult<ApplyReport>),
    ) -> Vec<UnitResult<ApplyReport>> {
        self.on_every_unit(each, |unit| async move {
            unit.apply_wanted(wanted, options).await
        })
        .await
    }

    /// Each unit's whole tree, written to `folder` as `SERIAL.json` (indented). Gives
    /// each file's path.
    ///
    /// No two units of one run write the same file: every name given is reserved, and
    /// a unit whose name is already taken gets the first free suffix `-2`, `-3`, …
    /// (`A`, `A` and a unit whose serial number really is `A-2` give `A.json`,
    /// `A-2.json` and `A-2-2.json`, or `A-3.json` for the second `A` when the `A-2`
    /// unit answered first: among units that share a name, the first to answer keeps
    /// it). Names that differ only in case count as the same name (they are one file
    /// on case-insensitive file systems). A file left in `folder` by an earlier run is
    /// replaced. Each file is written to `NAME.json.part` and renamed once complete; a
    /// `.part` file is removed when its writing fails (a full disk), and those an
    /// interrupted earlier run left in `folder` are removed before the first unit is
    /// reached.
    pub async fn export(
        &self,
        folder: &Path,
        each: impl FnMut(&UnitResult<PathBuf>),
    ) -> Vec<UnitResult<PathBuf>> {
        remove_stale_parts(folder);
        let names = Mutex::new(ExportNames::default());
        let names = &names;
        self.on_every_unit_named(each, true, |unit, serial| async move {
            let tree = unit.export().await?;
            let name = names
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .reserve(&file_name(&serial));
            let path = folder.join(format!("{name}.json"));
            write_file(&path, &tree).map_err(|reason| UnitError::Io {
                operation: "exportSettings",
                reason: format!("cannot write {}: {reason}", path.display()),
            })?;
            Ok(path)
        })
        .await
    }

    async fn on_every_unit<'a, T, F, Fut>(
        &'a self,
        each: impl FnMut(&UnitResult<T>),
        work: F,
    ) -> Vec<UnitResult<T>>
    where
        F: Fn(Unit) -> Fut + Copy + 'a,
        Fut: Future<Output = Result<T, UnitError>> + 'a,
    {
        self.on_every_unit_named(each, false, move |unit, _| work(unit))
            .await
    }

    /// Runs `work` on every unit, connected and logged in, at most `concurrency` at
    /// once; `each` sees every result as it comes; the results in the list's order.
    /// The unit's serial number is read before `work` when it needs it
    /// (`serial_first`), else at the same time (one round trip less per unit).
    async fn on_every_unit_named<'a, T, F, Fut>(
        &'a self,
        mut each: impl FnMut(&UnitResult<T>),
        serial_first: bool,
        work: F,
    ) -> Vec<UnitResult<T>>
    where
        F: Fn(Unit, String) -> Fut + Copy + 'a,
        Fut: Future<Output = Result<T, UnitError>> + 'a,
    {
        let mut results: Vec<UnitResult<T>> = stream::iter(self.members.iter().enumerate())
            .map(|(index, member)| async move {
                let mut serial_number = None;
                let outcome = async {
                    let unit = member.address.connect(self.http.as_ref()).await?;
                    if let Some(user) = &member.user {
                        unit.login(user.clone(), self.password.clone()).await?;
                    }
                    if serial_first {
                        let serial = unit.info().await?.serial_number;
                        serial_number = Some(serial.clone());
                        return work(unit, serial).await;
                    }
                    let (info, outcome) =
                        futures::future::join(unit.info(), work(unit.clone(), String::new())).await;
                    serial_number = info.ok().map(|info| info.serial_number);
                    outcome
                }
                .await;
                UnitResult {
                    index,
                    address: member.address.clone(),
                    serial_number,
                    outcome,
                }
            })
            .buffer_unordered(self.concurrency)
            .inspect(|result| each(result))
            .collect()
            .await;
        results.sort_by_key(|result| result.index);
        results
    }
}

/// The file names of one export run. Every name handed out is reserved, the ones
/// made with a suffix too, so that no later unit (even one whose serial number is that
/// suffixed name) gets it again: each unit of a run writes its own file.
#[derive(Debug, Default)]
struct ExportNames {
    /// The names handed out, in ASCII lowercase (case-insensitive file systems).
    taken: HashSet<String>,
}

impl ExportNames {
    /// `name` if no unit of this run has it yet, else `name-2`, `name-3`, … (the first
    /// one free); the name given is reserved.
    fn reserve(&mut self, name: &str) -> String {
        if self.taken.insert(name.to_ascii_lowercase()) {
            return name.to_owned();
        }
        let mut suffix: u64 = 2;
        loop {
            let candidate = format!("{name}-{suffix}");
            if self.taken.insert(candidate.to_ascii_lowercase()) {
                return candidate;
            }
            suffix += 1;
        }
    }
}

/// A file name from a serial number: its letters, digits, `-` and `_` only.
fn file_name(serial: &str) -> String {
    let name: String = serial
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        .collect();
    if name.is_empty() {
        "unit".to_owned()
    } else {
        name
    }
}

/// Writes `tree` to `path` (indented JSON), through a temporary file renamed over it:
/// never a half-written export, and no temporary file left when writing fails.
fn write_file(path: &Path, tree: &Value) -> Result<(), String> {
    let text = serde_json::to_vec_pretty(tree).map_err(|e| e.to_string())?;
    let temporary = path.with_extension(PART_SUFFIX);
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            e.to_string()
        })
}

/// The extension of an export being written.
const PART_SUFFIX: &str = "json.part";

/// Removes the `*.json.part` files of `folder` (exports an interrupted run left
/// half-written); a folder that cannot be read is left to the writes to report.
fn remove_stale_parts(folder: &Path) {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if name.to_string_lossy().ends_with(&format!(".{PART_SUFFIX}"))
            && entry.file_type().is_ok_and(|t| t.is_file())
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleet_files_are_read_strictly() {
        let members = parse_members(
            "\n# comment\nhttp://a.example operator\n  http://b.example:8080  \ntcp://10.0.0.3:2000 setup\n",
        )
        .expect("a valid list");
        assert_eq!(members.len(), 3);
        assert_eq!(members[0].user, Some(UserName::Operator));
        assert_eq!(
            members[1].address,
            UnitAddress::Http("http://b.example:8080".into())
        );
        assert_eq!(members[2].address.to_string(), "tcp://10.0.0.3:2000");
        for (text, line) in [
            ("http://a\nftp://b", 2),
            ("https://a", 1),
            ("http://a nobody", 1),
            ("http://a setup extra", 1),
            ("tcp://host", 1),
            ("tcp://:80", 1),
            ("tcp://host:0", 1),
            ("tcp://host:99999", 1),
        ] {
            match parse_members(text) {
                Err(FleetError::Line { line: at, .. }) => assert_eq!(at, line, "{text}"),
                other => panic!("{text}: {other:?}"),
            }
        }
        assert_eq!(parse_members("# nothing\n\n"), Err(FleetError::Empty));
        assert_eq!(FleetError::Empty.kind(), ErrorKind::InvalidInput);
    }

    #[test]
    fn export_names_are_file_names() {
        assert_eq!(file_name("EMU00000001"), "EMU00000001");
        assert_eq!(file_name("../../etc/passwd"), "etcpasswd");
        assert_eq!(file_name("/"), "unit");
    }

    #[test]
    fn export_names_are_reserved_with_their_suffixes() {
        let mut names = ExportNames::default();
        let given: Vec<String> = ["A", "A", "A-2", "A", "a", "A-3", "B"]
            .iter()
            .map(|name| names.reserve(name))
            .collect();
        assert_eq!(given, ["A", "A-2", "A-2-2", "A-3", "a-4", "A-3-2", "B"]);
    }

    #[test]
    fn the_password_is_not_shown() {
        let fleet = Fleet::new(Vec::new()).with_password(Password::new("hunter2"));
        assert!(!format!("{fleet:?}").contains("hunter2"));
    }
}
