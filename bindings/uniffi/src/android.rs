//! `AndroidPlatform.init(context)` (Kotlin, `bindings/kotlin/src/main/kotlin`): gives the
//! platform's TLS verifier the app's `Context`, so that `TlsRoots.Platform` can be used
//! on Android (svc-core's `http::android::init`).
//!
//! uniffi's Kotlin calls the library through JNA, which cannot hand a Java object to
//! Rust; this one call is a JNI native method instead (the Kotlin loads the library
//! with `System.loadLibrary` for it). Built on every target: off Android it checks the
//! `Context` and does nothing else, which lets the JVM tests cross it.

// `no_mangle`: the JVM finds a native method by its unmangled name.
#![allow(unsafe_code)]

use jni::EnvUnowned;
use jni::errors::ThrowRuntimeExAndDefault;
use jni::objects::{JClass, JObject};
use jni::strings::JNIString;

/// `svc.sdk.AndroidPlatform.nativeInit(context: Any?)`: throws
/// `IllegalStateException` with the reason when the `Context` is missing or refused.
#[unsafe(no_mangle)]
pub extern "system" fn Java_svc_sdk_AndroidPlatform_nativeInit<'caller>(
    mut unowned_env: EnvUnowned<'caller>,
    _class: JClass<'caller>,
    context: JObject<'caller>,
) {
    unowned_env
        .with_env(|env| -> jni::errors::Result<()> {
            match init(env, context) {
                Ok(()) => Ok(()),
                Err(reason) => env.throw_new(
                    jni::jni_str!("java/lang/IllegalStateException"),
                    JNIString::new(reason),
                ),
            }
        })
        .resolve::<ThrowRuntimeExAndDefault>();
}

fn init(env: &mut jni::Env<'_>, context: JObject<'_>) -> Result<(), String> {
    if context.is_null() {
        return Err("AndroidPlatform.init was given no Context (null)".into());
    }
    #[cfg(target_os = "android")]
    {
        svc_core::http::android::init(env, context)
    }
    #[cfg(not(target_os = "android"))]
    {
        let _ = env;
        Ok(())
    }
}
