//! Settings trees: configuration management of the inertial navigation unit.
//!
//! The unit's settings are one JSON object (`GET /settings`); each node is also a route
//! under `/settings` ([`NodePath`]: `aiding/gnss1/leverArmPrimary`). A write
//! (`POST /settings`) carries a *partial* tree and is merged into the unit's tree
//! recursively: objects key by key, everything else (arrays, scalars, null) replaced
//! whole. This module works on that untyped JSON tree ([`serde_json::Value`]), and
//! converts it to and from the generated typed tree
//! ([`ins_device_api::types::Settings`]: [`to_value`], [`from_value`]).
//!
//! - [`diff`]: the minimal [`Patch`] between two trees — the partial tree to write,
//!   the changed node paths, and the removed nodes (which a write cannot express, so
//!   they are reported, never dropped);
//! - [`apply`] / [`apply_in_place`]: a partial tree written into a tree, as the unit
//!   does it;
//! - [`merge`]: three-way merge (ancestor, ours, theirs), reporting every node both
//!   sides changed differently as a [`Conflict`];
//! - [`get`], [`set`], [`leaf_paths`]: the nodes of a tree by path;
//! - [`SettingsTree`]: a tree laid out for comparing many trees of one schema (a fleet
//!   against a reference): trees of one shape share it, and diff by comparing their
//!   leaves as two flat arrays, with the same result as [`diff`].
//!
//! The semantics, as the unit writes settings:
//!
//! - **Objects** are compared and written key by key. Everything else is a **leaf**:
//!   strings, numbers, booleans, null, and arrays (an array is compared item by item
//!   and replaced whole).
//! - **A change** is a key of the new tree whose node differs from the old one's: a
//!   leaf not equal to the old node, a node of another kind (an object replaced by
//!   a leaf or the reverse: one change, at that node), or a key the old tree lacks (an
//!   added node). Changes come in the new tree's document order; the partial tree holds
//!   each changed node as the new tree has it, with the objects on its path.
//! - **A removal** is a key of the old tree that the new one lacks: reported (a write
//!   cannot express it), the top of the removed sub-tree only, each object's removed
//!   keys in the old tree's order after those found deeper in its kept children.
//! - **Equality** is JSON's: kinds first (`true` is not `1`, `1` is not `1.0`), then
//!   values; objects whatever their key order, arrays item by item.
//! - **A write** merges an object into an object key by key (keys it lacks are kept,
//!   keys the tree lacks are added); anything else replaces the node whole, an object
//!   written over a leaf included. Null is a value like any other (unlike a JSON merge
//!   patch, RFC 7386, it removes nothing).
//!
//! Four ways to diff, one semantics: [`diff`] of two values, [`diff_json`] of two texts
//! (read without building what is the same in both), [`SettingsTree::diff`] and
//! [`SettingsTree::diff_json`] against a tree kept for repeated diffs, and
//! [`diff_files`] of a fleet of files against a reference. What a change, a removal, an
//! equal leaf and a write are is written once, in a private walk over node access that
//! each representation gives (values, the nodes of a text, a tree's shape); the fast
//! paths that stay, for fleets (trees of one shape compared as arrays of leaves, texts
//! compared with a kept reference text), are held to it by property tests and a fuzz
//! target.
//!
//! ```
//! use serde_json::json;
//! use svc_core::settings::{apply, diff, merge, NodePath};
//!
//! let unit = json!({
//!     "aiding": {"gnss1": {"model": "internal", "leverArmPrimary": [0.0, 0.0, 0.0]}},
//!     "output": {"comA": {"messages": {"imuShort": "off", "ekfNav": "off"}}}
//! });
//! let mut wanted = unit.clone();
//! wanted["output"]["comA"]["messages"]["imuShort"] = json!("10ms");
//!
//! let patch = diff(&unit, &wanted);
//! assert_eq!(patch.changed, [NodePath::parse("output/comA/messages/imuShort")?]);
//! let body = patch.into_write()?; // the body of POST /settings
//! assert_eq!(body, json!({"output": {"comA": {"messages": {"imuShort": "10ms"}}}}));
//! assert_eq!(apply(&unit, &body), wanted);
//!
//! // Someone else changed the lever arm meanwhile: both changes merge.
//! let mut theirs = unit.clone();
//! theirs["aiding"]["gnss1"]["leverArmPrimary"] = json!([0.5, 0.0, -1.2]);
//! let merged = merge(&unit, &wanted, &theirs);
//! assert!(merged.is_clean());
//! assert_eq!(merged.tree["aiding"]["gnss1"]["leverArmPrimary"], json!([0.5, 0.0, -1.2]));
//! # Ok::<(), svc_core::settings::SettingsError>(())
//! ```
//!
//! Secrets: the tree holds the NTRIP caster's password (`network/ntrip/password`).
//! The `Debug` output of [`Patch`], [`Merge`] and [`Conflict`] shows `[redacted]` in
//! place of the value of any key whose name contains `password`; error messages carry
//! paths, not values (except the deserializer's own message in
//! [`SettingsError::Schema`], which may quote a value of the wrong type).

use std::fmt;

use serde_json::{Map, Value};

mod diff;
mod files;
#[cfg(test)]
mod fixture_checks;
mod merge;
mod path;
mod strict;
mod text;
mod tree;
pub(crate) mod typed;
#[cfg(feature = "unstable-settings-walk")]
#[doc(hidden)]
pub mod walk;
#[cfg(not(feature = "unstable-settings-walk"))]
pub(crate) mod walk;

pub use diff::{Patch, apply, apply_in_place, diff};
pub use files::{FileDiff, diff_files, parse_tree, read_tree};
pub use merge::{Conflict, Merge, merge};
pub use path::{ACTION_ROUTES, NodePath, get, leaf_paths, set};
pub use text::diff_json;
pub use tree::{ChangedPaths, SettingsTree, TreePatch};
pub use typed::{from_value, from_value_lossy, to_value};

/// Why a settings operation failed.
///
/// Messages name nodes by their paths; they do not quote setting values (but see
/// [`SettingsError::Schema`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SettingsError {
    /// A node path has an empty segment (a leading, trailing or double `/`).
    #[error("invalid node path {path:?}: a segment is empty")]
    EmptySegment {
        /// The path as written (for a segment added to a path: that path and a `/`).
        path: String,
    },
    /// A path segment (an object key) contains `/`, which separates segments.
    #[error("invalid node path segment {segment:?}: a key cannot contain '/'")]
    SlashInSegment {
        /// The segment.
        segment: String,
    },
    /// A path segment that cannot name a settings node: `.` or `..` (an address would
    /// read them as "this level" and "the level above", leaving the settings), a key
    /// holding `\` (read as `/` in an address) or a control character, or, as the first
    /// segment, the name of one of the unit's settings actions ([`ACTION_ROUTES`]:
    /// `default`, `lock`, `import`, ...), whose route would run the action instead of
    /// reaching a node.
    #[error("invalid node path {path:?}: {reason}")]
    ReservedSegment {
        /// The path as written (for a segment added to a path: that path and the segment).
        path: String,
        /// Why the segment cannot be used.
        reason: String,
    },
    /// [`set`] met a node on the way that is not an object, so it cannot hold the key
    /// below it. The tree is unchanged.
    #[error("cannot set {}: {} is not an object", Shown(.path), Shown(.node))]
    NotAnObject {
        /// The path being set.
        path: NodePath,
        /// The node that is not an object.
        node: NodePath,
    },
    /// A [`Patch`] with removals was to be written: the unit merges a write into its
    /// tree and has no delete, so the removed nodes would stay.
    #[error(
        "the write cannot remove nodes {} (a settings write only adds and changes)",
        List(.removed)
    )]
    RemovalNotExpressible {
        /// The nodes the new tree lacks ([`Patch::removed`]).
        removed: Vec<NodePath>,
    },
    /// A number of a typed tree is NaN or infinite: JSON has no such number.
    #[error("the number at {} is not finite", Shown(.path))]
    NonFiniteNumber {
        /// The node holding it (the array, for a vector).
        path: NodePath,
    },
    /// Nodes of a JSON tree that the typed tree cannot hold: keys the schema does not
    /// define, or null values. [`from_value_lossy`] leaves them out instead.
    #[error(
        "the typed settings tree cannot hold {} (unknown keys or null values)",
        List(.paths)
    )]
    UnknownNodes {
        /// The nodes.
        paths: Vec<NodePath>,
    },
    /// A JSON tree does not fit the typed settings tree (a node of the wrong type, a
    /// vector of the wrong length, a root that is not an object).
    #[error("the tree does not fit the typed settings tree: {message}")]
    Schema {
        /// The node and what it takes (never the value).
        message: String,
    },
    /// A settings file cannot be read.
    #[error("cannot read {path}: {reason}")]
    ReadFile {
        /// The file.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// A settings file is not a settings tree: not JSON, or JSON whose root is not an
    /// object (a settings tree always is one).
    #[error("{path} is not a settings tree: {reason}")]
    NotATree {
        /// The file.
        path: String,
        /// What is wrong (the parser's line and column, never the file's values).
        reason: String,
    },
    /// A settings file writes a key twice in one object: a JSON parser would keep the
    /// last one silently, so the file is refused.
    #[error(
        "{path} writes the key `{key}` twice in one object (node {node}, line {line}); keep one"
    )]
    DuplicateKey {
        /// The file.
        path: String,
        /// The node the key names, e.g. `oem/label`.
        node: String,
        /// The key.
        key: String,
        /// The line (from 1) of its second occurrence.
        line: usize,
    },
    /// A text given as a settings tree is not JSON (see
    /// [`diff_json`]): which one, and where.
    #[error("{document} is not JSON (line {line}, column {column})")]
    NotJson {
        /// Which text: "the old tree", "the new tree".
        document: String,
        /// The parser's line (from 1).
        line: usize,
        /// The parser's column (from 1).
        column: usize,
    },
}

impl SettingsError {
    /// [`ErrorKind::Io`](crate::error::ErrorKind::Io) for a file that cannot be read,
    /// otherwise [`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput): a
    /// settings tree, node path or write that cannot be used as it is.
    #[must_use]
    pub fn kind(&self) -> crate::error::ErrorKind {
        match self {
            Self::ReadFile { .. } => crate::error::ErrorKind::Io,
            _ => crate::error::ErrorKind::InvalidInput,
        }
    }

    /// The node paths the error is about (empty when it is about a file or none).
    #[must_use]
    pub fn paths(&self) -> Vec<String> {
        let all = |paths: &[NodePath]| paths.iter().map(ToString::to_string).collect();
        match self {
            Self::NotAnObject { path, .. } | Self::NonFiniteNumber { path } => {
                vec![path.to_string()]
            }
            Self::RemovalNotExpressible { removed } => all(removed),
            Self::UnknownNodes { paths } => all(paths),
            _ => Vec::new(),
        }
    }
}

/// A path in a message: the root is named, not shown as an empty string.
struct Shown<'a>(&'a NodePath);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_root() {
            f.write_str("the root")
        } else {
            fmt::Display::fmt(self.0, f)
        }
    }
}

/// A list of paths in a message: the first ten, then how many more.
struct List<'a>(&'a [NodePath]);

impl fmt::Display for List<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 10;
        for (index, path) in self.0.iter().take(SHOWN).enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", Shown(path))?;
        }
        if self.0.len() > SHOWN {
            write!(f, " and {} more", self.0.len() - SHOWN)?;
        }
        Ok(())
    }
}

/// A copy of `tree` for `Debug` output, with the value of every key whose name
/// contains `password` (any case) replaced by `"[redacted]"`.
fn redacted(tree: &Value) -> Value {
    match tree {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = if ins_device_api::is_secret_key(key) {
                        Value::String("[redacted]".to_owned())
                    } else {
                        redacted(value)
                    };
                    (key.clone(), value)
                })
                .collect::<Map<String, Value>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(redacted).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages() {
        let path = |text: &str| NodePath::parse(text).unwrap();
        assert_eq!(
            SettingsError::NotAnObject {
                path: path("a/b"),
                node: NodePath::root()
            }
            .to_string(),
            "cannot set a/b: the root is not an object"
        );
        let many: Vec<NodePath> = (0..12).map(|i| path(&format!("k{i}"))).collect();
        assert_eq!(
            SettingsError::UnknownNodes { paths: many }.to_string(),
            "the typed settings tree cannot hold k0, k1, k2, k3, k4, k5, k6, k7, k8, k9 and 2 more (unknown keys or null values)"
        );
    }
}
