//! `cargo xtask generate --check` passes on the committed tree and fails, with a diff,
//! after any edit to a document or to a crate's embedded copy of one. Runs the real
//! binary on a copy of the tree.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

const FILES: &[&str] = &[
    "openapi/cloud.yaml",
    "openapi/notification.yaml",
    "openapi/ins-device.yaml",
    "crates/svc-cloud-api/src/generated/cloud.rs",
    "crates/svc-cloud-api/src/generated/notification.rs",
    "crates/svc-cloud-api/src/generated/enums.rs",
    "crates/ins-device-api/src/generated/device.rs",
    "crates/ins-device-api/src/generated/enums.rs",
    "crates/ins-device-api/src/generated/rights.rs",
    EMULATOR_COPY,
];

/// The emulator's embedded copy of `openapi/ins-device.yaml` (kept byte-identical).
const EMULATOR_COPY: &str = "crates/svc-emulator/src/device/ins-device.yaml";

/// A copy of the documents and the committed generated code in a fresh folder.
fn copy_tree() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let n = NEXT.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("xtask-drift-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for f in FILES {
        let to = dir.join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), &to).unwrap();
    }
    dir
}

fn check(dir: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["generate", "--check"])
        .env("XTASK_ROOT", dir)
        .output()
        .unwrap()
}

#[test]
fn committed_code_is_current_and_any_edit_is_caught() {
    let dir = copy_tree();
    let out = check(&dir);
    assert!(
        out.status.success(),
        "fresh copy: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&dir).unwrap();

    for (doc, from, to, stale) in [
        // A description-only edit changes the recorded source hash...
        (
            "openapi/cloud.yaml",
            "title:",
            "title:  ",
            "crates/svc-cloud-api/src/generated/cloud.rs",
        ),
        // ...a schema edit changes the code (and the emulator's copy)...
        (
            "openapi/ins-device.yaml",
            "minItems: 3",
            "minItems: 2",
            EMULATOR_COPY,
        ),
        // ...and the copy is compared byte for byte: even an edit that leaves the same
        // YAML (one more space) is drift.
        (EMULATOR_COPY, "openapi:", "openapi: ", EMULATOR_COPY),
    ] {
        let dir = copy_tree();
        let path = dir.join(doc);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(from));
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        let out = check(&dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "an edit of {doc} must be caught");
        assert!(stderr.contains("generated code is stale"), "{stderr}");
        assert!(
            stderr.contains(&format!("{stale} (committed)")),
            "{stale} is named: {stderr}"
        );
        assert!(stderr.contains("Run `cargo xtask generate`"), "{stderr}");
        assert!(
            stderr.contains("(committed)") && stderr.contains("(generated)"),
            "a diff is shown: {stderr}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn an_invalid_document_is_a_clear_error() {
    let dir = copy_tree();
    let path = dir.join("openapi/notification.yaml");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen(
            "operationId: listMissedWebhooks",
            "operationId: listWebhookEndpoints",
            1,
        ),
    )
    .unwrap();
    let out = check(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("operationId `listWebhookEndpoints` is used twice"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
