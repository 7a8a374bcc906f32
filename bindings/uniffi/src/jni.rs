//! `settingsDiff` over JNI: the JVM's and Android's own native interface, beside
//! uniffi's JNA calls, for the one call of the binding that moves tens of kilobytes
//! each way and is made in loops (a fleet's exports, an app comparing what it reads
//! from a unit with what it wants).
//!
//! Through JNA, uniffi 0.32's Kotlin crosses with `RustBuffer` structures: each text
//! is copied into a buffer that Rust allocates (a call of its own), the patch comes
//! back in another that Kotlin frees (one more), and every structure passed or
//! returned by value goes through JNA's reflection. On the unit's tree that is about
//! a quarter of the call. Here the Kotlin `ByteArray`s are read in place
//! (`GetPrimitiveArrayCritical`) and the patch comes back as a `ByteArray` in
//! uniffi's own serialization of a `SettingsPatch`, which the generated
//! `FfiConverterTypeSettingsPatch` reads: one conversion, the generated one.
//!
//! The texts are read in place inside a JNI critical region, which holds the JVM's
//! collector back (before JDK 22, and on Android's runtime) for as long as it lasts: so
//! only the one-pass diff of texts of the same shape runs there
//! (`diff_json_text_same_shape`, linear in the texts' length), and only for texts of up to
//! [`MAX_BYTES`] together.
//!
//! Kotlin calls it first and falls back to the uniffi function whenever it returns
//! `null`: texts of different shapes (the uniffi call runs the general diff), a text
//! that is not JSON (the uniffi call raises the typed `SvcException`), larger texts, a
//! panic. Memory exhaustion is the exception: the JVM's `OutOfMemoryError` is thrown.
//! The Kotlin side is written into the generated bindings by svc-ffi's uniffi-bindgen
//! (`bindings/uniffi/bindgen/src/kotlin.rs`); it uses this entry point only once
//! [`Java_svc_sdk_SettingsJni_instance`] shows that JNI bound the very library JNA loaded.
//! uniffi's newer Kotlin generator (JNI throughout) would make this module unnecessary.
//!
//! Not built for iOS: Swift calls the C functions directly.

#![allow(unsafe_code)]

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr::null_mut;

use jni_sys::{JNI_ABORT, JNIEnv, jbyteArray, jclass, jlong, jsize};
use uniffi::Lower;

use crate::UniFfiTag;
use crate::settings::SettingsPatch;

/// The largest texts (together) diffed here: about a millisecond in the critical region
/// (larger ones take the uniffi call, where the crossing is a small part of the diff).
const MAX_BYTES: usize = 1 << 20;

/// The patch from `old` to `new` (JSON texts of the same shape), serialized as uniffi
/// lowers a `SettingsPatch` (what the generated Kotlin reads): `settings_diff`'s
/// result; `None` when the texts do not have the same shape or are not JSON.
pub(crate) fn diff_lowered(old: &[u8], new: &[u8]) -> Option<Vec<u8>> {
    let patch = svc_core::settings::diff_json_text_same_shape(old, new)?;
    let record = SettingsPatch::from(patch);
    Some(<SettingsPatch as Lower<UniFfiTag>>::lower_into_rust_buffer(record).destroy_into_vec())
}

/// A byte of this copy of the library: its address is this copy's (a static that is not
/// exported, reached relative to the code, so no other copy's symbol can stand in).
static INSTANCE: u8 = 0;

/// `svc.sdk.SettingsJni.instance(): Long`: the address of [`INSTANCE`] in the copy of the
/// library this call runs in. Kotlin calls it through JNI and through JNA (the
/// arguments are not read: JNA passes nulls) and uses JNI only if both give the same:
/// two builds of the library on one machine must not serve one binding (the bytes
/// [`Java_svc_sdk_SettingsJni_diffUtf8`] returns are read by converters generated for
/// JNA's). The address of an exported function would not do: another copy loaded
/// before may stand in for it.
#[unsafe(no_mangle)]
pub extern "system" fn Java_svc_sdk_SettingsJni_instance(
    _env: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    std::ptr::addr_of!(INSTANCE) as usize as jlong
}

/// `svc.sdk.SettingsJni.diffUtf8(old: ByteArray, new: ByteArray): ByteArray?`.
#[unsafe(no_mangle)]
pub extern "system" fn Java_svc_sdk_SettingsJni_diffUtf8(
    env: *mut JNIEnv,
    _class: jclass,
    old: jbyteArray,
    new: jbyteArray,
) -> jbyteArray {
    // SAFETY: the JVM calls this as the native method it is declared as: `env` is the
    // calling thread's environment, `old` and `new` local references to `byte[]`s (or
    // null).
    catch_unwind(AssertUnwindSafe(|| unsafe { diff(env, old, new) })).unwrap_or(null_mut())
}

/// The body of [`Java_svc_sdk_SettingsJni_diffUtf8`].
///
/// # Safety
///
/// `env` is the current thread's JNI environment; `old` and `new` are null or local
/// references to `byte[]`s.
unsafe fn diff(env: *mut JNIEnv, old: jbyteArray, new: jbyteArray) -> jbyteArray {
    if env.is_null() || old.is_null() || new.is_null() {
        return null_mut();
    }
    // SAFETY (every block below): the function table of a valid environment; each
    // function is called as the JNI specification defines it, with this environment
    // and references of the types it takes.
    let jni = unsafe { &**env };
    let (old_len, new_len) = unsafe {
        (
            (jni.v1_1.GetArrayLength)(env, old),
            (jni.v1_1.GetArrayLength)(env, new),
        )
    };
    let (Ok(old_len), Ok(new_len)) = (usize::try_from(old_len), usize::try_from(new_len)) else {
        return null_mut();
    };
    if old_len.saturating_add(new_len) > MAX_BYTES {
        return null_mut();
    }
    // From here to the releases, no other JNI call (the JVM may hold its collector
    // back meanwhile): the one-pass diff only reads the two arrays.
    let old_bytes = unsafe { (jni.v1_2.GetPrimitiveArrayCritical)(env, old, null_mut()) };
    if old_bytes.is_null() {
        // Out of memory: the JVM has an `OutOfMemoryError` pending, thrown on return.
        return null_mut();
    }
    let new_bytes = unsafe { (jni.v1_2.GetPrimitiveArrayCritical)(env, new, null_mut()) };
    if new_bytes.is_null() {
        unsafe { (jni.v1_2.ReleasePrimitiveArrayCritical)(env, old, old_bytes, JNI_ABORT) };
        return null_mut();
    }
    let lowered = {
        // SAFETY: the JVM gives the arrays' elements (`old_len` and `new_len` bytes),
        // pinned or copied, until they are released below; nothing writes them.
        let (old, new) = unsafe {
            (
                std::slice::from_raw_parts(old_bytes.cast::<u8>(), old_len),
                std::slice::from_raw_parts(new_bytes.cast::<u8>(), new_len),
            )
        };
        // A panic must not skip the releases.
        catch_unwind(|| diff_lowered(old, new))
    };
    // `JNI_ABORT`: nothing to copy back (a copy, if the JVM made one, is freed).
    unsafe {
        (jni.v1_2.ReleasePrimitiveArrayCritical)(env, new, new_bytes, JNI_ABORT);
        (jni.v1_2.ReleasePrimitiveArrayCritical)(env, old, old_bytes, JNI_ABORT);
    }
    let Ok(Some(bytes)) = lowered else {
        return null_mut();
    };
    let Ok(len) = jsize::try_from(bytes.len()) else {
        return null_mut();
    };
    let out = unsafe { (jni.v1_1.NewByteArray)(env, len) };
    if !out.is_null() {
        unsafe { (jni.v1_1.SetByteArrayRegion)(env, out, 0, len, bytes.as_ptr().cast()) };
    }
    out
}

#[cfg(test)]
mod tests {
    use uniffi::{Lift, RustBuffer};

    use super::*;
    use crate::settings::settings_diff;

    /// What the generated Kotlin reads back is what the uniffi function returns.
    #[test]
    fn the_lowered_patch_is_the_uniffi_functions_result() -> Result<(), String> {
        let old = br#"{"a": {"x": 1, "y": "on"}, "b": [1, 2], "c": false}"#;
        let new = br#"{"a":{"x":2,"y":"on"},"b":[1,3],"c":true}"#;
        let bytes = diff_lowered(old, new).ok_or("JSON texts")?;
        let read = <SettingsPatch as Lift<UniFfiTag>>::try_lift(RustBuffer::from_vec(bytes))
            .map_err(|e| e.to_string())?;
        let through_uniffi =
            settings_diff(old.to_vec().into(), new.to_vec().into()).map_err(|e| e.to_string())?;
        assert_eq!(read, through_uniffi);
        assert_eq!(read.changed, ["a/x", "b", "c"]);
        Ok(())
    }

    /// A text that is not JSON, or texts of different shapes: no patch here (Kotlin then
    /// makes the uniffi call, which raises the typed error or runs the general diff).
    #[test]
    fn no_patch_when_a_text_is_not_json_or_the_shapes_differ() {
        assert_eq!(diff_lowered(b"{", b"{}"), None);
        assert_eq!(diff_lowered(b"{}", b"{\"a\": tru}"), None);
        assert_eq!(diff_lowered(b"{}", &[b'{', 0xff, b'}']), None);
        assert_eq!(diff_lowered(br#"{"a": 1}"#, br#"{"a": 1, "b": 2}"#), None);
        assert_eq!(
            diff_lowered(br#"{"a": 1, "b": 2}"#, br#"{"b": 2, "a": 1}"#),
            None
        );
    }
}
