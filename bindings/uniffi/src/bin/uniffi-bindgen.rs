//! `uniffi-bindgen generate <library> --language kotlin|swift --out-dir <dir>`: the
//! foreign code for the built library (library mode). Used by `cargo xtask bindings`.

fn main() {
    uniffi::uniffi_bindgen_main();
}
