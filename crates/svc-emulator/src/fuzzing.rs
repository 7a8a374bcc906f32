//! Entry points for the fuzz targets (`fuzz/` at the workspace root): the parts of the
//! emulator that read untrusted bytes and are private to the crate, re-exported as
//! they are. Not part of the emulator's API (hidden from its documentation).
//!
//! - The object storage: its upload route (`POST /{bucket}` of [`Storage::router`])
//!   streams the multipart form and checks it against the POST policy that
//!   [`Storage::presign_upload`] signs.
//! - The processing engine's outputs: [`process`] reads the container's NMEA 0183
//!   files.

pub use crate::engine::outputs::{
    Failure, InputFile, MAX_LINE_BYTES, MAX_WARNINGS_PER_FILE, Outcome, OutputFile, Summary,
    process,
};
pub use crate::storage::{Clock, OnUpload, REGIONS, Storage, StorageConfig, UploadEvent};
