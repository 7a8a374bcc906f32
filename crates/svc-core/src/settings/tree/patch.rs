//! [`TreePatch`]: what turns one [`SettingsTree`] into another, read from the new
//! tree's leaves when asked for (its partial tree assembled as the text fast paths
//! assemble theirs).

use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;

#[cfg(doc)]
use super::SettingsTree;
use super::leaves::Leaves;
use super::shape::Shape;
use crate::settings::diff::ChangeList;
use crate::settings::path::NodePath;
use crate::settings::{Patch, SettingsError};

/// What turns one [`SettingsTree`] into another ([`SettingsTree::diff`]): the changed
/// nodes, and the partial tree to write, read from the new tree's leaves when asked
/// for. It serializes as that partial tree (the body of `POST /settings`);
/// [`to_patch`](Self::to_patch) gives the [`Patch`] that
/// [`diff`](crate::settings::diff()) gives for the two trees' values.
///
/// `Debug` shows the changed and removed paths, not the values.
#[derive(Clone)]
pub struct TreePatch {
    pub(super) inner: PatchInner,
}

#[derive(Clone)]
pub(super) enum PatchInner {
    /// Trees of one shape: the new tree's leaves and which of them changed (ascending).
    Leaves {
        shape: Arc<Shape>,
        leaves: Arc<Leaves>,
        changed: Vec<usize>,
    },
    /// Trees of different shapes: the patch of their values.
    Values(Patch),
}

impl TreePatch {
    /// Whether the two trees were equal: nothing changed and nothing was removed.
    pub fn is_empty(&self) -> bool {
        match &self.inner {
            PatchInner::Leaves { changed, .. } => changed.is_empty(),
            PatchInner::Values(patch) => patch.is_empty(),
        }
    }

    /// The changed nodes, in document order (see [`Patch::changed`]).
    pub fn changed(&self) -> ChangedPaths<'_> {
        ChangedPaths {
            inner: match &self.inner {
                PatchInner::Leaves { shape, changed, .. } => ChangedInner::Leaves {
                    shape,
                    leaves: changed.iter(),
                },
                PatchInner::Values(patch) => ChangedInner::Paths(patch.changed.iter()),
            },
        }
    }

    /// The nodes of the old tree that the new one lacks (see [`Patch::removed`]);
    /// always empty for trees of one shape.
    pub fn removed(&self) -> &[NodePath] {
        match &self.inner {
            PatchInner::Leaves { .. } => &[],
            PatchInner::Values(patch) => &patch.removed,
        }
    }

    /// Whether the old tree had nodes that the new one lacks.
    pub fn has_removals(&self) -> bool {
        !self.removed().is_empty()
    }

    /// The patch as [`diff`](crate::settings::diff()) gives it for the two trees' values: the
    /// partial tree as a JSON value, the changed and the removed paths.
    pub fn to_patch(&self) -> Patch {
        match &self.inner {
            PatchInner::Leaves {
                shape,
                leaves,
                changed,
            } => {
                let mut list = ChangeList::default();
                for &leaf in changed {
                    let node = shape.leaf_nodes.get(leaf).copied().unwrap_or(0);
                    if node == 0 {
                        // The root is the leaf: the new tree is the patch.
                        return Patch {
                            tree: leaves.value(leaf),
                            changed: vec![NodePath::root()],
                            removed: Vec::new(),
                        };
                    }
                    // Leaves of one shape are distinct nodes in document order: they
                    // always make one tree.
                    let added = list.add(&shape.keys_of(node), leaves.value(leaf));
                    debug_assert!(added.is_some(), "the changed leaves make one tree");
                }
                list.finish()
            }
            PatchInner::Values(patch) => patch.clone(),
        }
    }

    /// The body of the write (`POST /settings`) that turns the old tree into the new
    /// one, as [`Patch::into_write`].
    ///
    /// # Errors
    ///
    /// [`SettingsError::RemovalNotExpressible`] when the patch has removals.
    pub fn into_write(self) -> Result<Value, SettingsError> {
        Patch::from(self).into_write()
    }
}

impl From<TreePatch> for Patch {
    fn from(patch: TreePatch) -> Self {
        match patch.inner {
            PatchInner::Values(patch) => patch,
            PatchInner::Leaves { .. } => patch.to_patch(),
        }
    }
}

impl fmt::Debug for TreePatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TreePatch")
            .field("changed", &self.changed().collect::<Vec<_>>())
            .field("removed", &self.removed())
            .finish()
    }
}

/// Serializes as the partial tree (see [`Patch::tree`]).
impl Serialize for TreePatch {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.inner {
            PatchInner::Leaves { .. } => self.to_patch().tree.serialize(serializer),
            PatchInner::Values(patch) => patch.tree.serialize(serializer),
        }
    }
}

/// The changed paths of a [`TreePatch`], in document order.
pub struct ChangedPaths<'a> {
    inner: ChangedInner<'a>,
}

enum ChangedInner<'a> {
    Leaves {
        shape: &'a Shape,
        leaves: std::slice::Iter<'a, usize>,
    },
    Paths(std::slice::Iter<'a, NodePath>),
}

impl<'a> Iterator for ChangedPaths<'a> {
    type Item = &'a NodePath;

    fn next(&mut self) -> Option<&'a NodePath> {
        match &mut self.inner {
            ChangedInner::Leaves { shape, leaves } => {
                let &leaf = leaves.next()?;
                shape.leaf_paths.get(leaf)
            }
            ChangedInner::Paths(paths) => paths.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            ChangedInner::Leaves { leaves, .. } => leaves.size_hint(),
            ChangedInner::Paths(paths) => paths.size_hint(),
        }
    }
}

impl ExactSizeIterator for ChangedPaths<'_> {}

impl fmt::Debug for ChangedPaths<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChangedPaths")
            .field("remaining", &self.len())
            .finish()
    }
}
