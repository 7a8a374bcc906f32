//! Objects on disk: the file name of a key (never a path) and temporary upload files.

use std::path::{Path, PathBuf};

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use sha2::{Digest as _, Sha256};

/// Longest percent-encoded file name before falling back to a hash.
const MAX_ENCODED_NAME: usize = 200;

/// Characters encoded in file names (everything except letters, digits, `-`, `_`).
const FILE_NAME_SET: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'_');

/// A temporary file in a bucket folder, removed when dropped unless persisted.
pub(super) struct TempFile {
    path: PathBuf,
    keep: bool,
}

impl TempFile {
    pub(super) fn new(dir: &Path) -> Self {
        Self {
            path: dir.join(format!(".tmp-{}", uuid::Uuid::new_v4())),
            keep: false,
        }
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Moves the file into place (a synchronous rename: quick, and never left half-done
    /// by a cancelled request).
    pub(super) fn persist(&mut self, to: &Path) -> std::io::Result<()> {
        std::fs::rename(&self.path, to)?;
        self.keep = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The file name an object key is stored under (never a path: see the module docs).
pub(super) fn object_file_name(key: &str) -> String {
    let encoded = utf8_percent_encode(key, FILE_NAME_SET).to_string();
    if encoded.len() <= MAX_ENCODED_NAME {
        format!("k.{encoded}")
    } else {
        format!(
            "h.{}",
            hex::encode(Sha256::digest(key.as_bytes()).as_slice())
        )
    }
}

pub(super) fn valid_bucket_name(bucket: &str) -> bool {
    (1..=63).contains(&bucket.len())
        && bucket
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        && !bucket.starts_with('.')
        && !bucket.contains("..")
}

pub(super) fn invalid_bucket(bucket: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("invalid bucket name {bucket:?}"),
    )
}
