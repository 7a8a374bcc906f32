//! The unit's settings: reading the tree or a node, writing a partial tree or a node,
//! export and import, and [`Unit::apply_wanted`], which writes only what differs from
//! a wanted tree and confirms it by reading back.

use ins_device_api::types;
use serde_json::Value;

use super::error::loggable;
use super::{NodeError, Unit, UnitError};

/// How [`Unit::apply_wanted`] applies a wanted tree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ApplyOptions {
    /// Only validate the change on the unit (`checkOnly`); apply nothing.
    pub check_only: bool,
    /// Hold the settings lock while reading, writing and reading back (needs a login);
    /// it is released afterwards, also on failure.
    pub lock: bool,
    /// When the written change needs a reboot (`needReboot`), save the settings
    /// ([`Unit::save`]; a unit without the save route keeps them anyway) and reboot the
    /// unit ([`Unit::reboot`]) once they are confirmed. The unit is not waited for:
    /// [`Unit::wait_until_back`] does that.
    pub reboot: bool,
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
    /// that needs it).
    pub rebooted: bool,
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
    /// then reads the tree back and confirms every changed node. With
    /// [`ApplyOptions::reboot`], a change that needs a reboot is saved and the unit
    /// rebooted (the lock, if taken, released first).
    ///
    /// # Errors
    /// [`UnitError::InvalidRequest`] for a wanted tree with unknown nodes or values of the
    /// wrong shape (nothing sent); [`UnitError::Api`] (409 locked by another session, 422
    /// invalid nodes, 403 no right); [`UnitError::NotApplied`] when the read-back differs.
    pub async fn apply_wanted(
        &self,
        wanted: &Value,
        options: ApplyOptions,
    ) -> Result<ApplyReport, UnitError> {
        // Refuse a wanted tree the settings schema does not describe before anything else.
        typed_tree("updateSettings", wanted)?;
        if options.lock {
            self.lock().await?;
        }
        let mut result = self.apply_unlocked(wanted, options.check_only).await;
        let reboot = options.reboot
            && result
                .as_ref()
                .is_ok_and(|report| report.written && report.need_reboot);
        if reboot {
            // Saved under the lock, so that no other write slips in before the reboot.
            if let Err(e) = self.save_if_served().await {
                result = Err(e);
            }
        }
        if options.lock {
            let unlocked = self.unlock().await;
            if result.is_ok() {
                unlocked?;
            }
        }
        if reboot && let Ok(report) = &mut result {
            self.reboot().await?;
            report.rebooted = true;
        }
        match &result {
            Ok(report) => tracing::info!(
                changed = report.changed.len(),
                nodes = %report.changed.join(", "),
                written = report.written,
                need_reboot = report.need_reboot,
                rebooted = report.rebooted,
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
    ) -> Result<ApplyReport, UnitError> {
        let (target, patch) = self.plan(wanted).await?;
        let changed: Vec<String> = patch
            .changed
            .iter()
            .map(|p| p.as_str().to_owned())
            .collect();
        if changed.is_empty() {
            return Ok(ApplyReport {
                changed,
                need_reboot: false,
                written: false,
                rebooted: false,
            });
        }
        let body = patch.tree;
        let checked = self.check(&body).await?;
        if check_only {
            return Ok(ApplyReport {
                changed,
                need_reboot: checked.need_reboot,
                written: false,
                rebooted: false,
            });
        }
        let written = self.write(&body, false).await?;
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
        Ok(ApplyReport {
            changed,
            need_reboot: written.need_reboot || checked.need_reboot,
            written: true,
            rebooted: false,
        })
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
