//! `uniffi-bindgen generate --library <libsvc_ffi.so> --language kotlin|swift
//! --out-dir <dir>`, run from the main workspace's root (it reads `cargo metadata` and
//! `bindings/uniffi/uniffi.toml`): uniffi's own generator, unchanged. The foreign code
//! is used as uniffi writes it; what uniffi does not do is done in the Rust library
//! (`bindings/uniffi/src`) or documented (`docs/mobile.md`).

fn main() {
    uniffi::uniffi_bindgen_main();
}
