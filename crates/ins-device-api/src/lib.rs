//! Generated client for the REST configuration interface of the inertial navigation
//! unit (`openapi/ins-device.yaml`), the whole settings tree included as typed Rust
//! structures ([`types::Settings`]).
//!
//! The code under `src/generated/` is produced by `cargo xtask generate` and committed;
//! it is private and re-exported here. Beside it:
//! - [`hooks`]: the session token as the `auth` query parameter (never shown in
//!   `Debug` or error text), and settings node paths sent with literal slashes;
//! - [`enums`]: every value set of the document as an *open* enum.
//!
//! ```
//! use ins_device_api::{Client, DeviceState};
//!
//! let unit = Client::new("http://192.168.1.1", DeviceState::new());
//! let read = unit.get_settings_node().path("aiding/gnss1");
//! # drop(read);
//! ```
#![forbid(unsafe_code)]

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, clippy::unwrap_used, unused_imports, dead_code, missing_docs)]
#[path = "generated/device.rs"]
mod device_generated;

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs)]
#[path = "generated/enums.rs"]
mod enums_generated;

#[rustfmt::skip]
#[allow(clippy::all, clippy::pedantic, missing_docs)]
#[path = "generated/rights.rs"]
mod rights_generated;

pub mod hooks;

/// The unit's rights matrix and what each operation needs, generated from the
/// document's `x-access-rights`, `x-role-order` and `x-required-right` (the data the
/// emulated unit enforces).
pub mod rights {
    pub use crate::rights_generated::*;
}

pub use device_generated::*;

/// Every value set of the document, as open enums.
pub mod enums {
    pub use crate::enums_generated::*;
}

pub use hooks::{AuthToken, DeviceState, redacted_url};

mod settings_json;
pub use settings_json::{Redacted, SettingsFile, SettingsNode, is_secret_key};

svc_secret::secret_string!(
    /// A password (a unit user's, or the NTRIP caster's in the settings tree).
    /// `Debug` prints `[redacted]`.
    Password
);
