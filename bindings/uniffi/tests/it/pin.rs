//! uniffi is pinned once: the version the library is built with (the root Cargo.toml's
//! `uniffi`, exactly) is the one the bindgen generates for (`bindings/uniffi/bindgen`, a
//! workspace of its own), in both manifests and both lock files. Generated code of one
//! version calling a library of another fails at the first call (a checksum or contract
//! version mismatch) — on the user's device, not here.

use std::path::Path;

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The requirement of the `uniffi` dependency in a manifest's line `uniffi = { version
/// = "…", … }`.
fn requirement(manifest: &str) -> Option<String> {
    manifest
        .lines()
        .find(|l| l.trim_start().starts_with("uniffi = {"))?
        .split("version = \"")
        .nth(1)?
        .split('"')
        .next()
        .map(str::to_owned)
}

/// The version of the `uniffi` package a lock file resolved.
fn locked(lock: &str) -> Option<String> {
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"uniffi\"" {
            return lines
                .next()?
                .strip_prefix("version = \"")?
                .strip_suffix('"')
                .map(str::to_owned);
        }
    }
    None
}

#[test]
fn the_library_and_the_bindgen_use_one_exact_uniffi_version() {
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = here.join("../..");
    let workspace = requirement(&read(&root.join("Cargo.toml")));
    let bindgen = requirement(&read(&here.join("bindgen/Cargo.toml")));
    let Some(pinned) = workspace.as_deref().and_then(|r| r.strip_prefix('=')) else {
        panic!("the root Cargo.toml must pin uniffi exactly (\"=x.y.z\"), not {workspace:?}");
    };
    assert_eq!(
        bindgen.as_deref(),
        Some(format!("={pinned}").as_str()),
        "bindings/uniffi/bindgen/Cargo.toml must pin the same uniffi"
    );
    assert_eq!(
        locked(&read(&root.join("Cargo.lock"))).as_deref(),
        Some(pinned),
        "Cargo.lock"
    );
    assert_eq!(
        locked(&read(&here.join("bindgen/Cargo.lock"))).as_deref(),
        Some(pinned),
        "bindings/uniffi/bindgen/Cargo.lock"
    );
}

#[test]
fn the_readers_find_what_they_look_for() {
    assert_eq!(
        requirement("[dependencies]\nuniffi = { version = \"=1.2.3\", features = [\"cli\"] }\n"),
        Some("=1.2.3".to_owned())
    );
    assert_eq!(requirement("uniffi_core = { version = \"1\" }"), None);
    assert_eq!(
        locked("[[package]]\nname = \"uniffi\"\nversion = \"1.2.3\"\n"),
        Some("1.2.3".to_owned())
    );
    assert_eq!(
        locked("name = \"uniffi_core\"\nversion = \"1.2.3\"\n"),
        None
    );
}
