//! The one change made to uniffi's Kotlin: the call status is reused.
//!
//! uniffi 0.32's Kotlin makes every call into Rust (a function, and each `RustBuffer`
//! allocation and release a call needs) through `uniffiRustCallWithError`, which
//! creates a new `UniffiRustCallStatus`: a JNA `Structure` whose constructor allocates
//! native memory twice (the status and its `RustBuffer` field). JNA tracks each such
//! `Memory` in a global map and frees it from its cleaner thread once the garbage
//! collector has found it unreachable. A loop of calls fills that map faster than the
//! collector empties it; measured on `settingsDiff` of two empty trees (four calls), the
//! allocation and its bookkeeping were half of the call's time (19 µs of it, where a
//! reused status leaves 8.5 µs).
//!
//! The patched helper takes a status from a small per-thread pool, resets it (success,
//! no error buffer) and gives it back after the call. A call made while another is in
//! progress on the same thread (a callback into Kotlin calling Rust again, the error
//! buffer freed while it is read) takes another status from the pool, so no status is
//! used by two calls at once. None of the lambdas uniffi's template passes it suspends
//! (async calls complete through it synchronously), so a status never leaves its
//! thread. A thread keeps its statuses (a few, one per nesting level) while it lives.
//!
//! uniffi's newer Kotlin generator (JNI instead of JNA) removes this cost altogether;
//! when svc-ffi moves to it, this module goes. If uniffi's template changes, the
//! generator fails (no file patched) rather than leaving the slow helper in place.

use std::path::Path;

/// The helper as uniffi 0.32's `Helpers.kt` writes it.
const GENERATED: &str = "\
private inline fun <U, E: kotlin.Exception> uniffiRustCallWithError(errorHandler: UniffiRustCallStatusErrorHandler<E>, callback: (UniffiRustCallStatus) -> U): U {
    var status = UniffiRustCallStatus()
    val return_value = callback(status)
    uniffiCheckCallStatus(errorHandler, status)
    return return_value
}";

/// The same helper with a per-thread pool of statuses.
const PATCHED: &str = "\
// Reused call statuses, one per call in progress on the thread (patched in by svc-ffi's
// uniffi-bindgen: a new status is two native allocations that JNA frees later, from its
// cleaner thread; see bindings/uniffi/bindgen/src/kotlin.rs).
// (`initialValue` rather than `ThreadLocal.withInitial`, which Android has from API 26 only.)
private val uniffiCallStatuses: ThreadLocal<ArrayList<UniffiRustCallStatus>> =
    object : ThreadLocal<ArrayList<UniffiRustCallStatus>>() {
        override fun initialValue() = ArrayList<UniffiRustCallStatus>(4)
    }

private inline fun <U, E: kotlin.Exception> uniffiRustCallWithError(errorHandler: UniffiRustCallStatusErrorHandler<E>, callback: (UniffiRustCallStatus) -> U): U {
    val statuses = uniffiCallStatuses.get()
    val status = if (statuses.isEmpty()) UniffiRustCallStatus() else statuses.removeAt(statuses.size - 1)
    status.code = UNIFFI_CALL_SUCCESS
    status.error_buf.capacity = 0
    status.error_buf.len = 0
    status.error_buf.data = null
    try {
        val return_value = callback(status)
        uniffiCheckCallStatus(errorHandler, status)
        return return_value
    } finally {
        statuses.add(status)
    }
}";

/// The start of the helper, patched or not.
const SIGNATURE: &str = "fun <U, E: kotlin.Exception> uniffiRustCallWithError(";

/// `source` with the helper patched; `None` when it does not have uniffi's helper.
pub fn patch(source: &str) -> Option<String> {
    (source.matches(GENERATED).count() == 1).then(|| source.replacen(GENERATED, PATCHED, 1))
}

/// Whether `source` has a call helper that is not the patched one.
fn unpatched(source: &str) -> bool {
    source.contains(SIGNATURE) && !source.contains(PATCHED)
}

/// Patches every Kotlin file under `dir` that has uniffi's helper (uniffi writes one
/// file per crate); how many were patched. Fails when a file has a helper this does not
/// know (another uniffi template): the binding would stay slow unnoticed.
pub fn patch_dir(dir: &Path) -> std::io::Result<usize> {
    let mut patched = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            patched += patch_dir(&path)?;
        } else if path.extension().is_some_and(|e| e == "kt") {
            let source = std::fs::read_to_string(&path)?;
            if let Some(new) = patch(&source) {
                std::fs::write(&path, new)?;
                patched += 1;
            } else if unpatched(&source) {
                return Err(std::io::Error::other(format!(
                    "{}: uniffi's call helper is not the one this generator patches \
                     (see bindings/uniffi/bindgen/src/kotlin.rs)",
                    path.display()
                )));
            }
        }
    }
    Ok(patched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_helper_once_and_nothing_else() {
        let source = format!("// head\n{GENERATED}\n\nprivate fun other() {{}}\n");
        let Some(patched) = patch(&source) else {
            panic!("the helper is there")
        };
        assert!(patched.starts_with("// head\n"));
        assert!(patched.ends_with("\n\nprivate fun other() {}\n"));
        assert!(!patched.contains("var status = UniffiRustCallStatus()"));
        assert_eq!(patched.matches(SIGNATURE).count(), 1);
        // Patched already: nothing to do. Another template: not patched, and known.
        assert_eq!(patch(&patched), None);
        assert!(!unpatched(&patched));
        let other = GENERATED.replace("var status", "val status");
        assert_eq!(patch(&other), None);
        assert!(unpatched(&other));
    }

    #[test]
    fn patches_the_kotlin_files_of_a_folder() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("svc-bindgen-test-{}", std::process::id()));
        let nested = dir.join("svc/sdk");
        std::fs::create_dir_all(&nested)?;
        std::fs::write(nested.join("svc_ffi.kt"), GENERATED)?;
        std::fs::write(nested.join("other.kt"), "fun f() {}")?;
        std::fs::write(nested.join("notes.txt"), GENERATED)?;
        let patched = patch_dir(&dir)?;
        let kotlin = std::fs::read_to_string(nested.join("svc_ffi.kt"))?;
        let text = std::fs::read_to_string(nested.join("notes.txt"))?;
        // Once more: patched already, nothing to do.
        let again = patch_dir(&dir)?;
        // A helper of another template: an error, not a silently slow binding.
        std::fs::write(
            nested.join("new.kt"),
            GENERATED.replace("var status", "val status"),
        )?;
        let other = patch_dir(&dir);
        std::fs::remove_dir_all(&dir)?;
        assert_eq!(patched, 1);
        assert!(kotlin.contains("uniffiCallStatuses"));
        assert_eq!(text, GENERATED);
        assert_eq!(again, 0);
        assert!(other.is_err());
        Ok(())
    }
}
