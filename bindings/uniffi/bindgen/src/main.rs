//! `uniffi-bindgen generate --library <libsvc_ffi.so> --language kotlin|swift
//! --out-dir <dir>`, run from the main workspace's root (it reads `cargo metadata` and
//! `bindings/uniffi/uniffi.toml`): uniffi's own generator, with one change to the
//! Swift it writes, Swift task cancellation (below). Everything else is used as uniffi
//! writes it; what uniffi does not do is done in the Rust library
//! (`bindings/uniffi/src`) or documented (`docs/mobile.md`).
//!
//! # Swift task cancellation
//!
//! uniffi's Rust side can cancel a call in progress (`rust_future_cancel`: the call
//! answers at once, and freeing it drops its future, which stops the work), and its
//! Kotlin awaits a call so that a cancelled coroutine frees it. Its Swift (0.32) never
//! cancels: a cancelled `Task` keeps waiting until the work ends. This generator makes
//! the Swift helper every `async` call goes through (`uniffiRustCallAsync`) await the
//! call inside `withTaskCancellationHandler`, whose handler calls the call's
//! `rust_future_cancel`; a cancelled call then throws `CancellationError`. No polling,
//! nothing to switch on. It is the change uniffi's own proposal makes
//! (mozilla/uniffi-rs#2887), applied to every call: all of the library's `async` calls
//! already throw. The template's text is checked: if a uniffi upgrade changes it, the
//! generation fails instead of writing Swift without cancellation.

use std::path::{Path, PathBuf};

fn main() {
    uniffi::uniffi_bindgen_main();
    let args: Vec<String> = std::env::args().collect();
    if option(&args, "--language", "-l").as_deref() == Some("swift") {
        let out = option(&args, "--out-dir", "-o").unwrap_or_else(|| ".".into());
        if let Err(e) = cancellable_swift(Path::new(&out)) {
            eprintln!("Swift task cancellation: {e}");
            std::process::exit(1);
        }
    }
}

/// The value of option `long` (or `short`) in `args`.
fn option(args: &[String], long: &str, short: &str) -> Option<String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == long || arg == short {
            return args.next().cloned();
        }
        if let Some(value) = arg.strip_prefix(&format!("{long}=")) {
            return Some(value.to_owned());
        }
    }
    None
}

/// Rewrites every generated Swift file of `out` that awaits Rust futures.
fn cancellable_swift(out: &Path) -> Result<(), String> {
    let entries = std::fs::read_dir(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut rewritten = 0;
    for entry in entries {
        let path: PathBuf = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_none_or(|ext| ext != "swift") {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        if !text.contains(DEFINITION) {
            continue;
        }
        let text = rewrite(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        rewritten += 1;
    }
    if rewritten == 0 {
        return Err(format!(
            "no Swift file of {} defines uniffiRustCallAsync",
            out.display()
        ));
    }
    Ok(())
}

const DEFINITION: &str = "fileprivate func uniffiRustCallAsync<F, T>(";

/// The parameter added to the helper, after `freeFunc`.
const FREE_PARAMETER: &str = "    freeFunc: (UInt64) -> (),\n";
const CANCEL_PARAMETER: &str = "    cancelFunc: @escaping @Sendable (UInt64) -> (),\n";

/// The helper's wait, as uniffi writes it.
const WAIT: &str = "    var pollResult: Int8;
    repeat {
        pollResult = await withUnsafeContinuation {
            pollFunc(
                rustFuture,
                { handle, pollResult in
                    uniffiFutureContinuationCallback(handle: handle, pollResult: pollResult)
                },
                uniffiContinuationHandleMap.insert(obj: $0)
            )
        }
    } while pollResult != UNIFFI_RUST_FUTURE_POLL_READY
";

/// The same wait, cancelled with the awaiting `Task`: the handler (run at once when the
/// `Task` is already cancelled) cancels the Rust call, which then answers at once; the
/// call is not completed (its status would be "cancelled") and throws
/// `CancellationError`. `defer` frees it, which drops its future: the work stops.
const CANCELLABLE_WAIT: &str =
    "    // Cancelling the awaiting Task cancels the call (svc-ffi-bindgen).
    await withTaskCancellationHandler {
        var pollResult: Int8
        repeat {
            pollResult = await withUnsafeContinuation {
                pollFunc(
                    rustFuture,
                    { handle, pollResult in
                        uniffiFutureContinuationCallback(handle: handle, pollResult: pollResult)
                    },
                    uniffiContinuationHandleMap.insert(obj: $0)
                )
            }
        } while pollResult != UNIFFI_RUST_FUTURE_POLL_READY
    } onCancel: {
        cancelFunc(rustFuture)
    }
    if Task.isCancelled {
        throw CancellationError()
    }
";

/// `text` with the cancellable helper, and each call passing its `rust_future_cancel`.
fn rewrite(text: &str) -> Result<String, String> {
    let start = text
        .find(DEFINITION)
        .ok_or("uniffiRustCallAsync is not defined")?;
    let (before, helper) = text.split_at(start);
    let end = helper
        .find("\n}\n")
        .ok_or("uniffiRustCallAsync has no end")?
        + 3;
    let (helper, after) = helper.split_at(end);
    let helper = replace_once(
        helper,
        FREE_PARAMETER,
        &format!("{FREE_PARAMETER}{CANCEL_PARAMETER}"),
    )?;
    let helper = replace_once(&helper, WAIT, CANCELLABLE_WAIT)?;

    let mut calls = 0;
    let mut out = String::with_capacity(text.len() + 16_384);
    with_cancel_funcs(before, &mut out, &mut calls)?;
    out.push_str(&helper);
    with_cancel_funcs(after, &mut out, &mut calls)?;
    // A call that does not throw is awaited with `try!`: cancelling it would crash.
    if text.contains("try!  await uniffiRustCallAsync(")
        || text.contains("try! await uniffiRustCallAsync(")
    {
        return Err(
            "an async call does not throw (`try!`): cancelling it would crash the app; \
                    make the Rust function return a Result"
                .into(),
        );
    }
    let awaited = text.matches("await uniffiRustCallAsync(").count();
    if calls != awaited {
        return Err(format!(
            "{awaited} calls await uniffiRustCallAsync, {calls} pass their freeFunc"
        ));
    }
    Ok(out)
}

/// Copies `part` to `out`, a `cancelFunc:` argument after each call's `freeFunc:`.
fn with_cancel_funcs(part: &str, out: &mut String, calls: &mut usize) -> Result<(), String> {
    for line in part.split_inclusive('\n') {
        out.push_str(line);
        let trimmed = line.trim_start();
        if let Some(free) = trimmed.strip_prefix("freeFunc: ") {
            let free = free.trim_end().trim_end_matches(',');
            let cancel = free.replacen("_rust_future_free_", "_rust_future_cancel_", 1);
            if cancel == free {
                return Err(format!("unexpected freeFunc: {free}"));
            }
            let indent = &line[..line.len() - trimmed.len()];
            // A closure, not the C function itself: Swift 6 takes the closure for
            // `@Sendable`, and warns when converting the function.
            out.push_str(&format!("{indent}cancelFunc: {{ {cancel}($0) }},\n"));
            *calls += 1;
        }
    }
    Ok(())
}

/// `text` with its one occurrence of `from` replaced by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> Result<String, String> {
    match text.matches(from).count() {
        1 => Ok(text.replacen(from, to, 1)),
        n => Err(format!(
            "uniffi's template changed ({n} occurrences of {:?}): review this rewrite",
            from.lines().next().unwrap_or_default()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERATED: &str = "import Foundation
fileprivate func uniffiRustCallAsync<F, T>(
    rustFutureFunc: () -> UInt64,
    pollFunc: (UInt64, @escaping UniffiRustFutureContinuationCallback, UInt64) -> (),
    completeFunc: (UInt64, UnsafeMutablePointer<RustCallStatus>) -> F,
    freeFunc: (UInt64) -> (),
    liftFunc: (F) throws -> T,
    errorHandler: ((RustBuffer) throws -> Swift.Error)?
) async throws -> T {
    uniffiEnsureInitialized()
    let rustFuture = rustFutureFunc()
    defer {
        freeFunc(rustFuture)
    }
    var pollResult: Int8;
    repeat {
        pollResult = await withUnsafeContinuation {
            pollFunc(
                rustFuture,
                { handle, pollResult in
                    uniffiFutureContinuationCallback(handle: handle, pollResult: pollResult)
                },
                uniffiContinuationHandleMap.insert(obj: $0)
            )
        }
    } while pollResult != UNIFFI_RUST_FUTURE_POLL_READY

    return try liftFunc(makeRustCall(
        { completeFunc(rustFuture, $0) },
        errorHandler: errorHandler
    ))
}
func info() async throws -> Info {
    return try await uniffiRustCallAsync(
            rustFutureFunc: { uniffi_svc_ffi_fn_method_insunit_info(self.uniffiCloneHandle()) },
            pollFunc: ffi_svc_ffi_rust_future_poll_rust_buffer,
            completeFunc: ffi_svc_ffi_rust_future_complete_rust_buffer,
            freeFunc: ffi_svc_ffi_rust_future_free_rust_buffer,
            liftFunc: FfiConverterTypeInfo.lift,
            errorHandler: FfiConverterTypeSvcError_lift
        )
}
";

    #[test]
    fn every_call_passes_its_cancel_and_the_helper_awaits_within_a_cancellation_handler() {
        let out = rewrite(GENERATED).expect("rewritten");
        assert!(out.contains(
            "            freeFunc: ffi_svc_ffi_rust_future_free_rust_buffer,\n            \
             cancelFunc: { ffi_svc_ffi_rust_future_cancel_rust_buffer($0) },\n"
        ));
        assert!(out.contains(CANCEL_PARAMETER));
        assert!(out.contains("} onCancel: {\n        cancelFunc(rustFuture)"));
        assert!(!out.contains(WAIT));
        // The helper's own `freeFunc:` parameter is not taken for a call.
        assert_eq!(out.matches("cancelFunc:").count(), 2);
        assert!(out.ends_with("        )\n}\n"));
    }

    #[test]
    fn a_changed_template_fails_the_generation() {
        let changed = GENERATED.replace("var pollResult: Int8;", "var pollResult: Int8 = 0");
        let e = rewrite(&changed).expect_err("refused");
        assert!(e.contains("template changed"), "{e}");
        let unmatched =
            GENERATED.replace("freeFunc: ffi_svc_ffi_rust_future_free", "freeFunc: other");
        assert!(rewrite(&unmatched).is_err());
    }
}
