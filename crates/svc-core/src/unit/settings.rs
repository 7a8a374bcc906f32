//! The unit's settings: reading the tree or a node, writing a partial tree or a node,
//! export and import, and [`Unit::apply_wanted`], which writes only what differs from
//! a wanted tree and confirms it by reading back.

use ins_device_api::types;
use serde_json::Value;

use super::error::loggable;
use super::{NodeError, Pending, Unit, UnitError};

/// How [`Unit::apply_wanted`] applies a wanted tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Only validate the change on the unit (`checkOnly`); apply nothing.
    pub check_only: bool,
    /// Hold the settings lock while reading, writing and reading back (needs a login);
    /// it is released afterwards, also on failure.
    pub lock: bool,
    /// When the written change needs a reboot (`needReboot`), or an earlier apply left
    /// a save or a reboot owed (see [`Journal`](super::Journal)), save the settings
    /// ([`Unit::save`]; a unit without the save route keeps them anyway) and reboot the
    /// unit ([`Unit::reboot`]) once they are confirmed.
    pub reboot: bool,
    /// After that reboot, wait until the unit answers again (at most this long, as
    /// [`Unit::wait_until_back`]), so that the next call finds it up; `None`: return
    /// as soon as the reboot was asked for.
    pub wait_until_back: Option<std::time::Duration>,
}

/// What [`Unit::apply_wanted`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApplyReport {
    /// The nodes that differed from the wanted values (and were written, unless
    /// `check_only`), e.g. `aiding/gnss1/leverArmPrimary`.
    pub changed: Vec<String>,
    /// Whether the change takes effect only after a reboot.
    pub need_reboot: bool,
    /// Whether anything was written (false for `check_only` or when nothing differed).
    pub written: bool,
    /// Whether the unit was saved and rebooted ([`ApplyOptions::reboot`] and a change
    /// that needs it, now or owed by an earlier apply).
    pub rebooted: bool,
    /// A reboot was asked for and needed, and is not confirmed: its answer was lost
    /// and the unit was not seen to reboot ([`UnitError::RebootNotConfirmed`] says
    /// why). The change is written and saved; with a [`Journal`](super::Journal) a
    /// later apply reboots it.
    pub reboot_pending: bool,
    /// The settings lock was released without confirmation: the unlock's answer was
    /// lost (the change itself is written and confirmed). The unit ends the lock after
    /// 60 s without a request from its holder, or at a reboot.
    pub unlock_unconfirmed: bool,
}

/// The answer of a settings write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOutcome {
    /// Whether the change takes effect only after a reboot (network, ports).
    pub need_reboot: bool,
}

impl From<types::WriteResult> for WriteOutcome {
    fn from(result: types::WriteResult) -> Self {
        Self {
            need_reboot: result.need_reboot,
        }
    }
}

impl Unit {
    /// The whole settings tree, untyped (node paths: see [`crate::settings`]).
    pub async fn settings(&self) -> Result<Value, UnitError> {
        let typed = self
            .call(
                "getSettings",
                |c| async move { c.get_settings().send().await },
            )
            .await?;
        serde_json::to_value(typed).map_err(|e| UnitError::InvalidResponse {
            operation: "getSettings",
            reason: e.to_string(),
        })
    }

    /// The whole settings tree as the generated typed structure.
    pub async fn settings_typed(&self) -> Result<types::Settings, UnitError> {
        self.call(
            "getSettings",
            |c| async move { c.get_settings().send().await },
        )
        .await
    }

    /// Only the settings that differ from the defaults, as a partial tree.
    pub async fn settings_delta(&self) -> Result<Value, UnitError> {
        let typed = self
            .call("getSettings", |c| async move {
                c.get_settings().delta(true).send().await
            })
            .await?;
        serde_json::to_value(typed).map_err(|e| UnitError::InvalidResponse {
            operation: "getSettings",
            reason: e.to_string(),
        })
    }

    /// One node of the tree, e.g. `aiding/gnss1/leverArmPrimary` (slashes sent
    /// literally; a leading or trailing `/` is ignored).
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`], before anything is sent, for a path that is not a
    /// node's (the root, or not a
    /// [`NodePath`](crate::settings::NodePath): `.` or `..`, an action such as
    /// `default`); 404 for
    /// a path that is not in the tree.
    pub async fn node(&self, path: &str) -> Result<Value, UnitError> {
        let path = node_route("getSettingsNode", path)?;
        self.call("getSettingsNode", |c| {
            let path = path.clone();
            async move { c.get_settings_node().path(path).send().await }
        })
        .await
        .map(Value::from)
    }

    /// Writes a partial tree (merged recursively by the unit); with `check_only` the unit
    /// only validates it.
    ///
    /// # Errors
    /// 422 with every invalid node ([`UnitError::node_errors`]) — nothing is applied;
    /// 409 while another session holds the settings lock; 403 without the Setting WRITE right.
    pub async fn write(&self, patch: &Value, check_only: bool) -> Result<WriteOutcome, UnitError> {
        let body = typed_tree("updateSettings", patch)?;
        let outcome = self
            .call("updateSettings", |c| {
                let body = body.clone();
                async move {
                    c.update_settings()
                        .check_only(check_only)
                        .body(body)
                        .send()
                        .await
                }
            })
            .await
            .map(WriteOutcome::from)?;
        tracing::debug!(
            nodes = leaf_count(patch),
            check_only,
            need_reboot = outcome.need_reboot,
            "settings written"
        );
        Ok(outcome)
    }

    /// Writes one node (`POST /settings/<path>`).
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`], before anything is sent, for a path that is not a
    /// node's (as for [`node`](Self::node)); the unit's errors (404 no such node, 422 an invalid
    /// value, 409 locked by another session).
    pub async fn write_node(
        &self,
        path: &str,
        value: &Value,
        check_only: bool,
    ) -> Result<WriteOutcome, UnitError> {
        let path = node_route("updateSettingsNode", path)?;
        let value = value.clone();
        let outcome = self
            .call("updateSettingsNode", |c| {
                let (path, value) = (path.clone(), value.clone());
                async move {
                    c.update_settings_node()
                        .path(path)
                        .check_only(check_only)
                        .body(value)
                        .send()
                        .await
                }
            })
            .await
            .map(WriteOutcome::from)?;
        // The node's path only: its value may be a secret (a password node).
        tracing::debug!(
            node = %path,
            check_only,
            need_reboot = outcome.need_reboot,
            "settings node written"
        );
        Ok(outcome)
    }

    /// Restores the factory default settings.
    pub async fn restore_defaults(&self, check_only: bool) -> Result<WriteOutcome, UnitError> {
        self.call("restoreDefaultSettings", |c| async move {
            c.restore_default_settings()
                .check_only(check_only)
                .send()
                .await
        })
        .await
        .map(WriteOutcome::from)
    }

    /// The whole tree as the unit exports it (`GET /settings/export`), every node kept.
    pub async fn export(&self) -> Result<Value, UnitError> {
        // Untyped on purpose: a backup keeps every node the unit holds, including those
        // the settings schema does not describe.
        let file = self
            .call("exportSettings", |c| async move {
                c.export_settings().send().await
            })
            .await?;
        Ok(Value::Object(file.0))
    }

    /// Imports a whole tree (`POST /settings/import`).
    pub async fn import(&self, tree: &Value, check_only: bool) -> Result<WriteOutcome, UnitError> {
        let body = typed_tree("importSettings", tree)?;
        self.call("importSettings", |c| {
            let body = body.clone();
            async move {
                c.import_settings()
                    .check_only(check_only)
                    .body(body)
                    .send()
                    .await
            }
        })
        .await
        .map(WriteOutcome::from)
    }

    /// Brings the unit's settings to `wanted` (a whole or partial tree) and writes only
    /// what differs: reads the tree, computes the minimal patch, validates it with
    /// `checkOnly` (a 422 lists every invalid node and nothing is applied), writes it,
    /// then reads the tree back and confirms every changed node. A write whose answer
    /// is lost is read back: it succeeds when the unit holds the change, and is sent
    /// again when the unit holds none of it (a write is applied whole or not at all).
    /// With [`ApplyOptions::reboot`], a change that needs a reboot is saved and the
    /// unit rebooted (the lock, if taken, released first).
    ///
    /// With a [`Journal`](super::Journal) ([`Unit::with_journal`]), a change that needs
    /// a reboot is recorded as owing a save and a reboot before it is written, and the
    /// record cleared as they are done: a later apply (the same tree or another) with
    /// `reboot` finishes what an interrupted one left, and one without reports
    /// `need_reboot`.
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] for a wanted tree with unknown nodes or values of the
    /// wrong shape (nothing sent); [`UnitError::Api`] (409 locked by another session, 422
    /// invalid nodes, 403 no right); [`UnitError::NotApplied`] when the read-back differs;
    /// [`UnitError::Io`] when the journal cannot be read or written.
    pub async fn apply_wanted(
        &self,
        wanted: &Value,
        options: ApplyOptions,
    ) -> Result<ApplyReport, UnitError> {
        // Refuse a wanted tree the settings schema does not describe before anything else.
        typed_tree("updateSettings", wanted)?;
        let owner = self.journal_owner().await?;
        let owed = match &owner {
            Some((journal, serial)) => journal.pending(serial)?,
            None => Pending::default(),
        };
        if !owed.is_empty() {
            tracing::info!(
                save = owed.save,
                reboot = owed.reboot,
                "an earlier apply left the unit owing a save or a reboot"
            );
        }
        if options.lock {
            self.lock().await?;
        }
        let mut result = self
            .apply_unlocked(wanted, options.check_only, owner.as_ref(), owed)
            .await;
        // What the unit owes now: this change's and an earlier apply's.
        let mut owing = owed;
        if let Ok(report) = &mut result {
            if report.written && report.need_reboot {
                owing = Pending {
                    save: true,
                    reboot: true,
                };
            }
            report.need_reboot |= owed.reboot;
        }
        let finish = options.reboot && !options.check_only && result.is_ok() && !owing.is_empty();
        if finish && owing.save {
            // Saved under the lock, so that no other write slips in before the reboot.
            // The journal forgets the save as it is done (`Unit::save`).
            if let Err(e) = self.save_repeated().await {
                result = Err(e);
            }
        }
        if options.lock {
            match self.unlock().await {
                Ok(()) => {}
                // The answer was lost: the change is written and confirmed; the unit
                // ends the lock at the reboot, or after 60 s without a request.
                Err(e @ UnitError::Unreachable { .. }) if result.is_ok() => {
                    tracing::info!(error = %loggable(&e), "the unlock's answer was lost");
                    if let Ok(report) = &mut result {
                        report.unlock_unconfirmed = true;
                    }
                }
                Err(e) => {
                    if result.is_ok() {
                        result = Err(e);
                    }
                }
            }
        }
        if finish
            && owing.reboot
            && let Ok(report) = &mut result
        {
            match self.reboot().await {
                Ok(()) => {
                    report.rebooted = true;
                    report.unlock_unconfirmed = false;
                    if let Some(limit) = options.wait_until_back
                        && let Err(e) = self.wait_until_back(limit).await
                    {
                        result = Err(e);
                    }
                }
                Err(e @ UnitError::RebootNotConfirmed { .. }) => {
                    tracing::info!(error = %loggable(&e), "the reboot is not confirmed");
                    report.reboot_pending = true;
                }
                Err(e) => result = Err(e),
            }
        }
        match &result {
            Ok(report) => tracing::info!(
                changed = report.changed.len(),
                nodes = %report.changed.join(", "),
                written = report.written,
                need_reboot = report.need_reboot,
                rebooted = report.rebooted,
                reboot_pending = report.reboot_pending,
                unlock_unconfirmed = report.unlock_unconfirmed,
                check_only = options.check_only,
                "wanted settings applied"
            ),
            Err(e) => tracing::info!(error = %loggable(e), "applying the wanted settings failed"),
        }
        result
    }

    /// What [`apply_wanted`](Self::apply_wanted) would change on the unit, without
    /// changing anything: the nodes whose values differ from `wanted` (a whole or
    /// partial tree), read with the viewer's rights. Empty: the unit is in sync.
    ///
    /// # Errors
    /// As [`apply_wanted`](Self::apply_wanted) for a wanted tree the schema does not
    /// describe (nothing sent), and the errors of reading the settings.
    pub async fn pending_changes(&self, wanted: &Value) -> Result<Vec<String>, UnitError> {
        typed_tree("updateSettings", wanted)?;
        let (_, patch) = self.plan(wanted).await?;
        Ok(patch
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect())
    }

    /// The unit's tree made `wanted` (normalized), and the patch from the current tree.
    async fn plan(&self, wanted: &Value) -> Result<(Value, crate::settings::Patch), UnitError> {
        let current = self.settings().await?;
        // Both trees pass through the typed tree, so `1` and `1.0` of a number node
        // compare equal and only real differences are written.
        let target = normalized("updateSettings", &crate::settings::apply(&current, wanted))?;
        let patch = crate::settings::diff(&current, &target);
        Ok((target, patch))
    }

    async fn apply_unlocked(
        &self,
        wanted: &Value,
        check_only: bool,
        owner: Option<&(std::sync::Arc<super::Journal>, String)>,
        owed: Pending,
    ) -> Result<ApplyReport, UnitError> {
        let (target, patch) = self.plan(wanted).await?;
        let changed: Vec<String> = patch
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
        let mut report = ApplyReport {
            changed,
            need_reboot: false,
            written: false,
            rebooted: false,
            reboot_pending: false,
            unlock_unconfirmed: false,
        };
        if report.changed.is_empty() {
            return Ok(report);
        }
        let body = patch.tree;
        let checked = self.check(&body).await?;
        report.need_reboot = checked.need_reboot;
        if check_only {
            return Ok(report);
        }
        // Recorded before the write: a signal right after it must not lose the save
        // and the reboot it makes owed.
        let recorded = match owner {
            Some((journal, serial)) if checked.need_reboot => {
                journal.record(
                    serial,
                    Pending {
                        save: true,
                        reboot: true,
                    },
                )?;
                Some((journal, serial))
            }
            _ => None,
        };
        let written = match self.write_confirmed(&body, &patch.changed, &target).await {
            Ok(written) => written,
            Err(e) => {
                // Refused by the unit: nothing was written, nothing more is owed.
                if let (Some((journal, serial)), UnitError::Api { .. }) = (recorded, &e) {
                    journal.record(serial, owed)?;
                }
                return Err(e);
            }
        };
        let after = self.settings().await?;
        let differing: Vec<String> = patch
            .changed
            .iter()
            .filter(|p| crate::settings::get(&after, p) != crate::settings::get(&target, p))
            .map(|p| p.as_str().to_owned())
            .collect();
        if !differing.is_empty() {
            return Err(UnitError::NotApplied { paths: differing });
        }
        report.need_reboot |= written.need_reboot;
        report.written = true;
        Ok(report)
    }

    /// Writes `body`; when the answer is lost, reads the tree back: the unit holds
    /// the change (it was applied), or none of it (it was not: sent again, up to
    /// [`WRITE_ATTEMPTS`] times), or part of it (someone else wrote meanwhile:
    /// [`UnitError::NotApplied`]).
    async fn write_confirmed(
        &self,
        body: &Value,
        changed: &[crate::settings::NodePath],
        target: &Value,
    ) -> Result<WriteOutcome, UnitError> {
        let mut attempt = 1;
        loop {
            let lost = match self.write(body, false).await {
                Err(e @ UnitError::Unreachable { .. }) => e,
                other => return other,
            };
            tracing::info!(
                attempt,
                error = %loggable(&lost),
                "the write's answer was lost: reading the settings back"
            );
            let Ok(now) = self.settings_repeated().await else {
                return Err(lost);
            };
            let held = changed
                .iter()
                .filter(|p| crate::settings::get(&now, p) == crate::settings::get(target, p))
                .count();
            if held == changed.len() {
                tracing::info!("the unit holds the change: the write was applied");
                // The check-only answer said whether it needs a reboot.
                return Ok(WriteOutcome { need_reboot: false });
            }
            if held > 0 || attempt >= WRITE_ATTEMPTS {
                return Err(lost);
            }
            attempt += 1;
        }
    }
}

/// How many times [`Unit::apply_wanted`] sends a write whose answer was lost and which
/// the unit, read back, does not hold.
const WRITE_ATTEMPTS: u32 = 5;

/// How many times a read or a save (safe to repeat: it changes nothing, or writes what
/// is already there) is sent when its answer is lost, on top of what the link repeats.
const SAFE_ATTEMPTS: u32 = 3;

impl Unit {
    /// [`Unit::settings`], repeated when the answer is lost (see [`SAFE_ATTEMPTS`]).
    async fn settings_repeated(&self) -> Result<Value, UnitError> {
        let mut attempt = 1;
        loop {
            match self.settings().await {
                Err(UnitError::Unreachable { .. }) if attempt < SAFE_ATTEMPTS => attempt += 1,
                other => return other,
            }
        }
    }

    /// [`Unit::save`] where the unit serves it, repeated when the answer is lost (a
    /// save writes what is already there: repeating it is harmless).
    async fn save_repeated(&self) -> Result<(), UnitError> {
        let mut attempt = 1;
        loop {
            match self.save_if_served().await {
                Err(e @ UnitError::Unreachable { .. }) if attempt < SAFE_ATTEMPTS => {
                    tracing::info!(attempt, error = %loggable(&e), "the save's answer was lost: saving again");
                    attempt += 1;
                }
                other => return other,
            }
        }
    }
}

/// How many times [`Unit::apply_wanted`] sends its check-only write when the answer is
/// lost (the link may already repeat it): validating applies nothing, so it is safe.
const CHECK_ATTEMPTS: u32 = 3;

impl Unit {
    /// The check-only write of `body`, sent again when its answer is lost (see
    /// [`CHECK_ATTEMPTS`]); a real write never is.
    async fn check(&self, body: &Value) -> Result<WriteOutcome, UnitError> {
        let mut attempt = 1;
        loop {
            match self.write(body, true).await {
                Err(e @ UnitError::Unreachable { .. }) if attempt < CHECK_ATTEMPTS => {
                    tracing::info!(
                        attempt,
                        error = %loggable(&e),
                        "the check-only write got no answer: checking again (it applies nothing)"
                    );
                    attempt += 1;
                    tokio::time::sleep(std::time::Duration::from_millis(100 * u64::from(attempt)))
                        .await;
                }
                other => return other,
            }
        }
    }
}

/// The node path of a node route (`/settings/<path>`), as sent: a leading or trailing
/// `/` is dropped, then the path must be a [`NodePath`](crate::settings::NodePath) other
/// than the root. So the request can reach nothing but a node: not the whole tree, not
/// an action route (`/settings/default` would restore the defaults, `../reboot` would
/// reboot the unit), over HTTP and the serial link alike.
fn node_route(operation: &'static str, path: &str) -> Result<String, UnitError> {
    let trimmed = path.trim_matches('/');
    let invalid = |reason: String| UnitError::InvalidRequest { operation, reason };
    let node = crate::settings::NodePath::parse(trimmed).map_err(|e| invalid(e.to_string()))?;
    if node.is_root() {
        return Err(invalid(format!(
            "the node path {path:?} names no node (the whole tree is read with `settings` and written with `write`)"
        )));
    }
    Ok(node.as_str().to_owned())
}

/// A (partial) tree as the typed `Settings` the generated client sends. Refused before
/// sending ([`UnitError::InvalidSettings`]), naming every node the settings schema
/// refuses, as the unit's own 422 does: a value of the wrong shape, and any key the
/// schema does not define (the typed tree would drop it silently, and a client never
/// sends a field the unit did not define).
fn typed_tree(operation: &'static str, tree: &Value) -> Result<types::Settings, UnitError> {
    let (typed, refused) = crate::settings::typed::refused_nodes(tree);
    match typed {
        Some(typed) if refused.is_empty() => Ok(typed),
        _ => Err(UnitError::InvalidSettings {
            operation,
            errors: refused
                .into_iter()
                .map(|(path, message)| NodeError { path, message })
                .collect(),
        }),
    }
}

/// A tree as the typed settings structure writes it back (numbers of number nodes as
/// floats, and so on), after the checks of [`typed_tree`].
fn normalized(operation: &'static str, tree: &Value) -> Result<Value, UnitError> {
    let typed = typed_tree(operation, tree)?;
    serde_json::to_value(typed).map_err(|e| UnitError::InvalidRequest {
        operation,
        reason: e.to_string(),
    })
}

/// The nodes of a (partial) tree that are not objects, for the logs.
fn leaf_count(tree: &Value) -> usize {
    match tree {
        Value::Object(map) => map.values().map(leaf_count).sum(),
        _ => 1,
    }
}
