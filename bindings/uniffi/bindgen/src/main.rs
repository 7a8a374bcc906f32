//! `uniffi-bindgen generate --library <libsvc_ffi.so> --language kotlin|swift
//! --out-dir <dir>`, run from the main workspace's root (it reads `cargo metadata` and
//! `bindings/uniffi/uniffi.toml`).

fn main() {
    uniffi::uniffi_bindgen_main();
}
