//! The settings diff of two JSON texts, without building either tree: what the bindings
//! and the fleet comparison of files call, where the trees arrive as text.
//!
//! [`diff_json`] reads both texts into flat lists of nodes (keys and values borrowed
//! from the texts) that the settings walk ([`walk`](super::walk)) compares, as it
//! compares any two trees; when a document has a key twice in one object, both are
//! parsed into `Value`s (`serde_json` keeps the last value, at the place of the first).
//! [`Reference`] keeps one text indexed for comparing many with it (a fleet's exports):
//! byte by byte, the values where they differ compared by the walk's equality.

mod nodes;
mod reference;
mod scan;

pub(crate) use reference::Reference;

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde_json::Value;

use super::{Patch, SettingsError, diff};

/// The minimal patch from the JSON text `old` to the JSON text `new` (each a `str`,
/// `String`, `&[u8]` or `Vec<u8>`, as read or received; JSON is UTF-8): the same
/// [`Patch`] as [`diff`] of the two parsed trees, found without parsing what is the
/// same in both.
///
/// ```
/// use svc_core::settings::diff_json;
///
/// let old = r#"{"aiding": {"gnss1": {"model": "internal", "leverArmPrimary": [0.0, 0.0, 0.0]}}}"#;
/// let new = r#"{"aiding": {"gnss1": {"model": "internal", "leverArmPrimary": [0.5, 0.0, -1.2]}}}"#;
/// let patch = diff_json(old, new)?;
/// assert_eq!(patch.changed[0].as_str(), "aiding/gnss1/leverArmPrimary");
/// assert_eq!(patch.tree.to_string(), r#"{"aiding":{"gnss1":{"leverArmPrimary":[0.5,0.0,-1.2]}}}"#);
/// # Ok::<(), svc_core::settings::SettingsError>(())
/// ```
///
/// # Errors
///
/// [`SettingsError::NotJson`] when a text is not JSON (or not UTF-8): which one, and
/// where (never a value of it).
pub fn diff_json(old: impl AsRef<[u8]>, new: impl AsRef<[u8]>) -> Result<Patch, SettingsError> {
    let (old, new) = (old.as_ref(), new.as_ref());
    let (Ok(old_text), Ok(new_text)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        // The parser names where the text stops being UTF-8.
        return through_values(old, new);
    };
    match nodes::diff(old_text, new_text) {
        Ok(Some(patch)) => Ok(patch),
        Ok(None) => through_values(old, new),
        Err(error) => Err(error.into()),
    }
}

/// The new text of a diff parsed into a `Value` (its error names "the new tree").
pub(crate) fn parse_new(new: &[u8]) -> Result<Value, SettingsError> {
    serde_json::from_slice(new).map_err(|error| NotJson::new(Which::New, &error).into())
}

/// [`diff`] of the two texts parsed into `Value`s.
fn through_values(old: &[u8], new: &[u8]) -> Result<Patch, SettingsError> {
    let old: Value =
        serde_json::from_slice(old).map_err(|error| NotJson::new(Which::Old, &error))?;
    let new: Value =
        serde_json::from_slice(new).map_err(|error| NotJson::new(Which::New, &error))?;
    Ok(diff(&old, &new))
}

/// Which of the two texts.
#[derive(Clone, Copy)]
enum Which {
    Old,
    New,
}

/// Why a text is not JSON: which one, and the parser's position.
struct NotJson {
    which: Which,
    line: usize,
    column: usize,
}

impl NotJson {
    fn new(which: Which, error: &serde_json::Error) -> Self {
        Self {
            which,
            line: error.line(),
            column: error.column(),
        }
    }
}

impl From<NotJson> for SettingsError {
    fn from(e: NotJson) -> Self {
        SettingsError::NotJson {
            document: match e.which {
                Which::Old => "the old tree",
                Which::New => "the new tree",
            }
            .to_owned(),
            line: e.line,
            column: e.column,
        }
    }
}

/// An object key of a JSON text, borrowed from the text unless it has escapes: what
/// the readers of texts that build no `Value` take a key as (the flat nodes of
/// [`diff_json`], a tree read into a known shape).
pub(crate) struct Key<'a>(pub(crate) Cow<'a, str>);

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }

            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_owned())))
            }

            fn visit_string<E: de::Error>(self, key: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key)))
            }
        }

        deserializer.deserialize_str(KeyVisitor)
    }
}

#[cfg(test)]
mod tests;
