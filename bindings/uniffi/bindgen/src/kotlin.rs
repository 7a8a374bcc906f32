//! The two changes made to uniffi's Kotlin: the call status is reused, and
//! `settingsDiff` crosses over JNI when it can.
//!
//! # The call status
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
//!
//! # `settingsDiff` over JNI
//!
//! The settings diff moves tens of kilobytes each way and is called in loops. Through
//! JNA a quarter of its time was the crossing: the texts copied into buffers Rust
//! allocates, the patch in one Kotlin frees, each a JNA call with structures passed by
//! value. The library also exports a JNI entry point for it (`bindings/uniffi/src/jni.rs`)
//! that reads the Kotlin byte arrays in place and returns the patch in uniffi's own
//! serialization. `settingsDiff` tries it first ([`SETTINGS_JNI`], appended to the file)
//! and makes the uniffi call when it gives nothing: texts of different shapes (the
//! general diff), a text that is not JSON (the uniffi call raises the typed error),
//! large texts, the library not loaded for JNI. JNI loads the file JNA loaded (by its
//! path; by name where JNA has none, as on Android) and is used only if JNI bound the
//! copy JNA loaded (a function of the library, called both ways, gives the address of a
//! static of its own copy): a library found by name could be another build than JNA's
//! (`cargo run` puts `target/debug` on `LD_LIBRARY_PATH`, which the JVM searches), whose
//! bytes the generated converters would misread.

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

/// `settingsDiff` as uniffi 0.32 writes it: the line where its body starts.
const SETTINGS_DIFF: &str =
    "fun `settingsDiff`(`old`: JsonText, `new`: JsonText): SettingsPatch {\n";

/// The first line of its body once patched: the JNI call first.
const SETTINGS_DIFF_JNI: &str = "    SettingsJni.diff(`old`, `new`)?.let { return it }\n";

/// The JNI side of `settingsDiff`, appended to the file that defines it.
const SETTINGS_JNI: &str = r#"
// `settingsDiff` over JNI (patched in by svc-ffi's uniffi-bindgen; see
// bindings/uniffi/bindgen/src/kotlin.rs and bindings/uniffi/src/jni.rs): texts of the
// same shape are read in place and the patch comes back in uniffi's serialization.
// `null` (texts of other shapes, a text that is not JSON, large texts, the library not
// loaded for JNI) makes the uniffi call instead, which runs the general diff or raises
// the typed error.
internal object SettingsJni {
    @JvmStatic private external fun diffUtf8(old: ByteArray, new: ByteArray): ByteArray?

    @JvmStatic private external fun instance(): Long

    @Volatile @JvmField var loaded: Boolean = load()

    /** Loads the library for JNI; whether JNI bound the very copy JNA loaded. */
    private fun load(): Boolean {
        val name = findLibraryName("svc_ffi")
        // The instance `Native.register` made (the same options).
        val options = java.util.Collections.singletonMap(com.sun.jna.Library.OPTION_CLASSLOADER, UniffiLib::class.java.classLoader)
        return try {
            val library = com.sun.jna.NativeLibrary.getInstance(name, options)
            val file = library.file
            if (file != null && file.isAbsolute && file.exists()) {
                System.load(file.path)
            } else {
                // Android: the app's jniLibs, where JNA finds it too.
                System.loadLibrary(name)
            }
            // Found by name, it could be another build (`cargo run` puts target/debug on
            // LD_LIBRARY_PATH, which the JVM searches): JNI must have bound JNA's copy.
            instance() == library.getFunction("Java_svc_sdk_SettingsJni_instance").invokeLong(arrayOf<Any?>(null, null))
        } catch (e: LinkageError) {
            // Not found, not loadable, no such entry point.
            false
        } catch (e: Exception) {
            // Whatever else loading throws (a security manager, JNA's own errors): the
            // uniffi call, rather than a settingsDiff that cannot initialize.
            false
        }
    }

    fun diff(old: JsonText, new: JsonText): SettingsPatch? {
        if (!loaded) return null
        val bytes = try {
            diffUtf8(old.toByteArray(Charsets.UTF_8), new.toByteArray(Charsets.UTF_8))
        } catch (e: UnsatisfiedLinkError) {
            // A library without the entry point: JNA from now on.
            loaded = false
            null
        } ?: return null
        return FfiConverterTypeSettingsPatch.read(ByteBuffer.wrap(bytes))
    }
}
"#;

/// `source` with `settingsDiff` going over JNI first; `None` when it does not define
/// `settingsDiff` as uniffi 0.32 does (or is patched already).
pub fn patch_settings_diff(source: &str) -> Option<String> {
    if source.matches(SETTINGS_DIFF).count() != 1 || source.contains(SETTINGS_DIFF_JNI) {
        return None;
    }
    let mut patched = source.replacen(
        SETTINGS_DIFF,
        &format!("{SETTINGS_DIFF}{SETTINGS_DIFF_JNI}"),
        1,
    );
    patched.push_str(SETTINGS_JNI);
    Some(patched)
}

/// Whether `source` defines a `settingsDiff` that does not go over JNI.
fn settings_diff_unpatched(source: &str) -> bool {
    source.contains("fun `settingsDiff`(") && !source.contains(SETTINGS_DIFF_JNI)
}

/// Patches every Kotlin file under `dir` that has uniffi's helper or `settingsDiff`
/// (uniffi writes one file per crate); how many were patched. Fails when a file has a
/// helper or a `settingsDiff` this does not know (another uniffi template): the binding
/// would stay slow unnoticed.
pub fn patch_dir(dir: &Path) -> std::io::Result<usize> {
    let mut patched = 0;
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            patched += patch_dir(&path)?;
        } else if path.extension().is_some_and(|e| e == "kt") {
            let source = std::fs::read_to_string(&path)?;
            let unknown = |what: &str| {
                std::io::Error::other(format!(
                    "{}: uniffi's {what} is not the one this generator patches \
                     (see bindings/uniffi/bindgen/src/kotlin.rs)",
                    path.display()
                ))
            };
            let mut text = match patch(&source) {
                Some(new) => new,
                None if unpatched(&source) => return Err(unknown("call helper")),
                None => source.clone(),
            };
            match patch_settings_diff(&text) {
                Some(new) => text = new,
                None if settings_diff_unpatched(&text) => return Err(unknown("settingsDiff")),
                None => {}
            }
            if text != source {
                std::fs::write(&path, text)?;
                patched += 1;
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

    /// `settingsDiff` as uniffi writes it, around the line the patch looks for.
    fn settings_diff_source() -> String {
        format!(
            "{GENERATED}\n    @Throws(SvcException::class) {SETTINGS_DIFF}            \
             return FfiConverterTypeSettingsPatch.lift(\n    )\n    }}\n"
        )
    }

    #[test]
    fn settings_diff_tries_jni_first() {
        let source = settings_diff_source();
        let Some(patched) = patch_settings_diff(&source) else {
            panic!("settingsDiff is there")
        };
        // The JNI call is the first line of the body; the object is appended once.
        assert!(patched.contains(&format!(
            "{SETTINGS_DIFF}{SETTINGS_DIFF_JNI}            return"
        )));
        assert!(patched.ends_with(SETTINGS_JNI));
        assert_eq!(patched.matches("internal object SettingsJni").count(), 1);
        assert!(!settings_diff_unpatched(&patched));
        assert_eq!(patch_settings_diff(&patched), None);
        // Another signature: not patched, and known to be unpatched.
        let other = source.replace("`new`: JsonText", "`new`: String");
        assert_eq!(patch_settings_diff(&other), None);
        assert!(settings_diff_unpatched(&other));
        // A file without it: nothing to do.
        assert_eq!(patch_settings_diff(GENERATED), None);
        assert!(!settings_diff_unpatched(GENERATED));
    }

    #[test]
    fn patches_the_kotlin_files_of_a_folder() -> std::io::Result<()> {
        let dir = std::env::temp_dir().join(format!("svc-bindgen-test-{}", std::process::id()));
        let nested = dir.join("svc/sdk");
        std::fs::create_dir_all(&nested)?;
        std::fs::write(nested.join("svc_ffi.kt"), GENERATED)?;
        std::fs::write(nested.join("other.kt"), "fun f() {}")?;
        std::fs::write(nested.join("notes.txt"), GENERATED)?;
        std::fs::write(nested.join("settings.kt"), settings_diff_source())?;
        let patched = patch_dir(&dir)?;
        let kotlin = std::fs::read_to_string(nested.join("svc_ffi.kt"))?;
        let settings = std::fs::read_to_string(nested.join("settings.kt"))?;
        let text = std::fs::read_to_string(nested.join("notes.txt"))?;
        // Once more: patched already, nothing to do.
        let again = patch_dir(&dir)?;
        // A helper of another template: an error, not a silently slow binding.
        std::fs::write(
            nested.join("new.kt"),
            GENERATED.replace("var status", "val status"),
        )?;
        let other = patch_dir(&dir);
        std::fs::remove_file(nested.join("new.kt"))?;
        // A `settingsDiff` of another template: an error too.
        std::fs::write(
            nested.join("new.kt"),
            settings_diff_source().replace("`new`: JsonText", "`new`: String"),
        )?;
        let other_diff = patch_dir(&dir);
        std::fs::remove_dir_all(&dir)?;
        assert_eq!(patched, 2);
        assert!(kotlin.contains("uniffiCallStatuses"));
        assert!(settings.contains("uniffiCallStatuses") && settings.contains(SETTINGS_DIFF_JNI));
        assert!(other_diff.is_err());
        assert_eq!(text, GENERATED);
        assert_eq!(again, 0);
        assert!(other.is_err());
        Ok(())
    }
}
