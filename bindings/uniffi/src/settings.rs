//! Settings trees as JSON strings: diff, apply, three-way merge, and the
//! `SettingsTree` layout made for comparing many trees of one schema.

use std::sync::Arc;

use svc_core::settings as ss;

use crate::error::SvcError;
use crate::types::LongCount;
use crate::types::{JsonText, json_in};

/// The minimal change between two trees.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct SettingsPatch {
    /// The partial tree to write (JSON): only the changed nodes and the objects on
    /// their paths.
    pub tree: String,
    /// The changed nodes, in document order.
    pub changed: Vec<String>,
    /// The nodes of the old tree that the new one lacks (a write cannot remove them).
    pub removed: Vec<String>,
}

fn paths(paths: &[ss::NodePath]) -> Vec<String> {
    paths.iter().map(ToString::to_string).collect()
}

impl From<ss::Patch> for SettingsPatch {
    fn from(p: ss::Patch) -> Self {
        Self {
            tree: p.tree.to_string(),
            changed: paths(&p.changed),
            removed: paths(&p.removed),
        }
    }
}

/// A node both sides changed, differently; each version as JSON, `None` where that
/// tree lacks the node.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct SettingsConflict {
    pub path: String,
    pub base: Option<String>,
    pub ours: Option<String>,
    pub theirs: Option<String>,
}

/// The result of a three-way merge.
#[derive(Clone, Debug, PartialEq, Eq, uniffi::Record)]
pub struct SettingsMerge {
    /// The merged tree (JSON); at a conflict it holds ours.
    pub tree: String,
    pub conflicts: Vec<SettingsConflict>,
}

/// The minimal patch from `old` to `new` (both JSON trees), found without parsing
/// what is the same in both texts.
#[uniffi::export]
pub fn settings_diff(old: JsonText, new: JsonText) -> Result<SettingsPatch, SvcError> {
    Ok(ss::diff_json(old.as_ref(), new.as_ref())?.into())
}

/// `patch` (a partial tree) written into `tree`, as the unit merges a write (JSON in,
/// JSON out).
#[uniffi::export]
pub fn settings_apply(tree: JsonText, patch: JsonText) -> Result<String, SvcError> {
    let (tree, patch) = (json_in("tree", &tree)?, json_in("patch", &patch)?);
    Ok(ss::apply(&tree, &patch).to_string())
}

/// Three-way merge of `ours` and `theirs` from their common ancestor `base`.
#[uniffi::export]
pub fn settings_merge(
    base: JsonText,
    ours: JsonText,
    theirs: JsonText,
) -> Result<SettingsMerge, SvcError> {
    let base = json_in("base", &base)?;
    let ours = json_in("ours", &ours)?;
    let theirs = json_in("theirs", &theirs)?;
    let merged = ss::merge(&base, &ours, &theirs);
    let text = |v: &Option<serde_json::Value>| v.as_ref().map(ToString::to_string);
    Ok(SettingsMerge {
        tree: merged.tree.to_string(),
        conflicts: merged
            .conflicts
            .iter()
            .map(|c| SettingsConflict {
                path: c.path.to_string(),
                base: text(&c.base),
                ours: text(&c.ours),
                theirs: text(&c.theirs),
            })
            .collect(),
    })
}

/// A settings tree laid out for fast diffs of many trees of one schema (a fleet
/// against a reference): trees of one shape share it and diff leaf by leaf.
#[derive(Debug, uniffi::Object)]
pub struct SettingsTree {
    inner: ss::SettingsTree,
}

#[uniffi::export]
impl SettingsTree {
    /// A tree from its JSON.
    ///
    /// Errors: `InvalidInput` for text that is not JSON.
    #[uniffi::constructor]
    pub fn from_json(json: JsonText) -> Result<Arc<Self>, SvcError> {
        Ok(Arc::new(Self {
            inner: ss::SettingsTree::from_json_bytes(json.as_ref())?,
        }))
    }

    /// The tree as JSON.
    pub fn to_json(&self) -> String {
        self.inner.to_value().to_string()
    }

    /// How many leaves it has.
    pub fn leaf_count(&self) -> LongCount {
        LongCount(i64::try_from(self.inner.leaf_count()).unwrap_or(i64::MAX))
    }

    /// Whether both trees have the same keys and nesting.
    pub fn same_shape(&self, other: Arc<SettingsTree>) -> bool {
        self.inner.same_shape(&other.inner)
    }

    /// One node as JSON, or `None` when the tree lacks it.
    ///
    /// Errors: `InvalidInput` for an invalid path.
    pub fn get(&self, path: String) -> Result<Option<String>, SvcError> {
        let path = ss::NodePath::parse(&path)?;
        Ok(self.inner.get(&path).map(|v| v.to_string()))
    }

    /// What turns this tree into `new`.
    pub fn diff(&self, new: Arc<SettingsTree>) -> Arc<TreePatch> {
        Arc::new(TreePatch {
            inner: self.inner.diff(&new.inner),
        })
    }

    /// What turns this tree into the tree of `new` (JSON), in one call: the fleet
    /// case, a reference kept as a `SettingsTree` and each unit's export as text (one
    /// crossing instead of `fromJson`, `diff` and `toJson`). A compact text with the
    /// reference's key order is compared byte by byte (see svc-core's
    /// `SettingsTree::diff_json`).
    ///
    /// Errors: `InvalidInput` for text that is not JSON.
    pub fn diff_json(&self, new: JsonText) -> Result<SettingsPatch, SvcError> {
        Ok(self.inner.diff_json(new.as_ref())?.into())
    }
}

/// What turns one `SettingsTree` into another.
#[derive(Debug, uniffi::Object)]
pub struct TreePatch {
    inner: ss::TreePatch,
}

#[uniffi::export]
impl TreePatch {
    /// Whether the two trees were equal.
    pub fn is_empty(&self) -> bool {
        self.inner.is_empty()
    }

    /// The changed nodes, in document order.
    pub fn changed(&self) -> Vec<String> {
        self.inner.changed().map(ToString::to_string).collect()
    }

    /// The nodes of the old tree that the new one lacks.
    pub fn removed(&self) -> Vec<String> {
        paths(self.inner.removed())
    }

    /// The partial tree to write (JSON), even when there are removals.
    pub fn to_json(&self) -> Result<String, SvcError> {
        serde_json::to_string(&self.inner)
            .map_err(|e| SvcError::internal(format!("cannot serialize the patch: {e}")))
    }

    /// The whole patch: partial tree, changed and removed nodes.
    pub fn to_patch(&self) -> SettingsPatch {
        self.inner.to_patch().into()
    }

    /// The body of the write that turns the old tree into the new one.
    ///
    /// Errors: `InvalidInput` naming the removed nodes, which a write cannot remove.
    pub fn to_write(&self) -> Result<String, SvcError> {
        Ok(self.inner.clone().into_write()?.to_string())
    }
}
