//! The service's limits, checked before a request is sent.
//!
//! The service answers 422 to a request over these limits; checking first gives a
//! clearer error, naming the offending key or path, without a round trip. The
//! functions are pure, and the emulator uses them too (answering 422 with the error's
//! text as `details`), so the SDK and the emulator refuse the same inputs with the
//! same reasons.
//!
//! Lengths in *characters* count Unicode scalar values: Rust `char`s, Python
//! `len(str)`, Kotlin `codePointCount` (not `String.length`, which counts UTF-16
//! units). The container file path limit counts UTF-8 *bytes*.
//!
//! ```
//! use svc_protocol::limits::{check_container_path, check_metadata, LimitError};
//! use svc_cloud_api::Metadata;
//!
//! let mut metadata = Metadata::new();
//! metadata.insert("project".into(), "survey-2024-07".into());
//! check_metadata(&metadata)?;
//! check_container_path("rover/2024-07-02/gnss.ubx")?;
//!
//! let error = check_container_path("../outside.ubx").unwrap_err();
//! assert_eq!(
//!     error.to_string(),
//!     r#"invalid container file path "../outside.ubx": it must not contain a ".." component"#
//! );
//! # Ok::<(), LimitError>(())
//! ```

use std::fmt;

use svc_cloud_api::Metadata;

/// Most keys a metadata object may hold.
pub const MAX_METADATA_KEYS: usize = 50;

/// Longest metadata key name, in characters (Unicode scalar values).
pub const MAX_METADATA_KEY_CHARS: usize = 40;

/// Longest metadata value, in characters (Unicode scalar values).
pub const MAX_METADATA_VALUE_CHARS: usize = 500;

/// Longest container file path, in bytes of UTF-8.
pub const MAX_CONTAINER_PATH_BYTES: usize = 1024;

/// First page of a list (pages are numbered from 0).
pub const MIN_PAGE: i64 = 0;

/// Fewest items a page may be asked for (`perPage`).
pub const MIN_PER_PAGE: i64 = 1;

/// Most items a page may be asked for (`perPage`).
pub const MAX_PER_PAGE: i64 = 100;

/// How much of a key or path an error message shows (the fields keep it whole).
const SHOWN_CHARS: usize = 64;

/// A value over one of the service's limits. The service would answer 422; retrying
/// the same request cannot help.
///
/// Messages are meant for end users; they quote the offending key or path (shortened
/// past 64 characters, control characters escaped), and the fields carry it whole.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LimitError {
    /// The metadata has more keys than [`MAX_METADATA_KEYS`].
    #[error("metadata has {count} keys; at most {MAX_METADATA_KEYS} are allowed")]
    MetadataTooManyKeys {
        /// How many keys it has.
        count: usize,
    },
    /// A metadata key name is longer than [`MAX_METADATA_KEY_CHARS`] characters.
    #[error(
        "metadata key {} is {length} characters long; at most {MAX_METADATA_KEY_CHARS} are allowed",
        Shown(.key)
    )]
    MetadataKeyTooLong {
        /// The key.
        key: String,
        /// Its length in characters.
        length: usize,
    },
    /// A metadata value is longer than [`MAX_METADATA_VALUE_CHARS`] characters.
    #[error(
        "the value of metadata key {} is {length} characters long; at most {MAX_METADATA_VALUE_CHARS} are allowed",
        Shown(.key)
    )]
    MetadataValueTooLong {
        /// The key whose value is too long.
        key: String,
        /// The value's length in characters.
        length: usize,
    },
    /// A container file path is not a valid relative POSIX path.
    #[error("invalid container file path {}: {reason}", Shown(.path))]
    InvalidPath {
        /// The path.
        path: String,
        /// What is wrong with it.
        reason: PathProblem,
    },
    /// A page number below [`MIN_PAGE`].
    #[error("page {page} does not exist; pages are numbered from {MIN_PAGE}")]
    InvalidPage {
        /// The page asked for.
        page: i64,
    },
    /// A page size outside [`MIN_PER_PAGE`]..=[`MAX_PER_PAGE`].
    #[error(
        "perPage {per_page} is out of range; it must be between {MIN_PER_PAGE} and {MAX_PER_PAGE}"
    )]
    InvalidPerPage {
        /// The page size asked for.
        per_page: i64,
    },
}

impl LimitError {
    /// Always [`ErrorKind::InvalidInput`](crate::error::ErrorKind::InvalidInput): the
    /// service would answer 422.
    #[must_use]
    pub fn kind(&self) -> crate::error::ErrorKind {
        crate::error::ErrorKind::InvalidInput
    }
}

/// What makes a container file path invalid. Its `Display` is the user-facing reason
/// (the end of a [`LimitError::InvalidPath`] message).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathProblem {
    /// The path is empty.
    Empty,
    /// The path is longer than [`MAX_CONTAINER_PATH_BYTES`] bytes.
    TooLong {
        /// Its length in bytes.
        bytes: usize,
    },
    /// The path contains a NUL character.
    ContainsNul,
    /// The path starts with `/`.
    Absolute,
    /// The path has a `..` component.
    ParentComponent,
}

impl fmt::Display for PathProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Empty => f.write_str("it is empty"),
            Self::TooLong { bytes } => write!(
                f,
                "it is {bytes} bytes long; at most {MAX_CONTAINER_PATH_BYTES} bytes are allowed"
            ),
            Self::ContainsNul => f.write_str("it must not contain a NUL character"),
            Self::Absolute => {
                f.write_str("it must be relative to the container, without a leading \"/\"")
            }
            Self::ParentComponent => f.write_str("it must not contain a \"..\" component"),
        }
    }
}

/// Checks a metadata object against the service's limits: at most
/// [`MAX_METADATA_KEYS`] keys, key names of at most [`MAX_METADATA_KEY_CHARS`]
/// characters, values of at most [`MAX_METADATA_VALUE_CHARS`] characters (characters
/// are Unicode scalar values, not bytes).
///
/// # Errors
/// The first problem found: [`LimitError::MetadataTooManyKeys`], then, key by key in
/// the map's order, [`LimitError::MetadataKeyTooLong`] or
/// [`LimitError::MetadataValueTooLong`].
pub fn check_metadata(metadata: &Metadata) -> Result<(), LimitError> {
    if metadata.len() > MAX_METADATA_KEYS {
        return Err(LimitError::MetadataTooManyKeys {
            count: metadata.len(),
        });
    }
    for (key, value) in metadata {
        let length = key.chars().count();
        if length > MAX_METADATA_KEY_CHARS {
            return Err(LimitError::MetadataKeyTooLong {
                key: key.clone(),
                length,
            });
        }
        let length = value.chars().count();
        if length > MAX_METADATA_VALUE_CHARS {
            return Err(LimitError::MetadataValueTooLong {
                key: key.clone(),
                length,
            });
        }
    }
    Ok(())
}

/// Checks that `path` is a valid container file path: a relative POSIX path, not
/// empty, at most [`MAX_CONTAINER_PATH_BYTES`] bytes of UTF-8, without NUL, not
/// starting with `/`, without a `..` component (`a..b` is a fine name; `../a`, `a/..`
/// and `a/../b` are not). Other names are left alone (`./a`, `a//b`, `dir/`, spaces,
/// backslashes), as the service does.
///
/// # Errors
/// [`LimitError::InvalidPath`] with the first [`PathProblem`] in this order: empty, too
/// long, NUL, absolute, `..` component.
pub fn check_container_path(path: &str) -> Result<(), LimitError> {
    let problem = if path.is_empty() {
        Some(PathProblem::Empty)
    } else if path.len() > MAX_CONTAINER_PATH_BYTES {
        Some(PathProblem::TooLong { bytes: path.len() })
    } else if path.contains('\0') {
        Some(PathProblem::ContainsNul)
    } else if path.starts_with('/') {
        Some(PathProblem::Absolute)
    } else if path.split('/').any(|component| component == "..") {
        Some(PathProblem::ParentComponent)
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(reason) => Err(LimitError::InvalidPath {
            path: path.to_owned(),
            reason,
        }),
    }
}

/// Checks list paging parameters: `page` at least [`MIN_PAGE`], `per_page` between
/// [`MIN_PER_PAGE`] and [`MAX_PER_PAGE`].
///
/// # Errors
/// [`LimitError::InvalidPage`], checked first, or [`LimitError::InvalidPerPage`].
pub fn check_page(page: i64, per_page: i64) -> Result<(), LimitError> {
    if page < MIN_PAGE {
        return Err(LimitError::InvalidPage { page });
    }
    if !(MIN_PER_PAGE..=MAX_PER_PAGE).contains(&per_page) {
        return Err(LimitError::InvalidPerPage { per_page });
    }
    Ok(())
}

/// A key or path in a message: quoted with escapes (so a NUL or a newline shows as
/// `\0`, `\n`), shortened to its first 64 characters followed by `…`.
struct Shown<'a>(&'a str);

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.char_indices().nth(SHOWN_CHARS) {
            None => write!(f, "{:?}", self.0),
            Some((end, _)) => write!(f, "{:?}…", &self.0[..end]),
        }
    }
}
