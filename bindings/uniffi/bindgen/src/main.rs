//! `uniffi-bindgen generate --library <libsvc_ffi.so> --language kotlin|swift
//! --out-dir <dir>`, run from the main workspace's root (it reads `cargo metadata` and
//! `bindings/uniffi/uniffi.toml`): uniffi's own generator, with three changes to what
//! it writes: Swift task cancellation, the names of Swift error cases and the message
//! of a Kotlin exception (below). Everything else is used as uniffi writes it; what uniffi does not do is done in the Rust library
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
//!
//! # Swift error cases
//!
//! uniffi names an error enum's cases in UpperCamel (`SvcError.NotFound`,
//! `LinkError.Closed`) where it names every other enum's in lowerCamel, as Swift's API
//! guidelines want. This generator renames them (`.notFound`, `.closed`; a keyword is
//! declared with backticks, `` case `internal` ``) in the enum and in its converter, and
//! fails if a case is not found exactly where uniffi writes it.
//!
//! # Kotlin exception messages
//!
//! uniffi writes an exception's `message` as a list of its fields (`reason=…,
//! status=…, title=…`), which is what `e.message`, a `Toast` or a crash report shows.
//! This generator makes it the `reason` (the sentence the library wrote) for every
//! exception that has one; the fields stay readable one by one.

use std::path::{Path, PathBuf};

fn main() {
    uniffi::uniffi_bindgen_main();
    let args: Vec<String> = std::env::args().collect();
    let out = option(&args, "--out-dir", "-o").unwrap_or_else(|| ".".into());
    let rewritten = match option(&args, "--language", "-l").as_deref() {
        Some("swift") => cancellable_swift(Path::new(&out)),
        Some("kotlin") => readable_kotlin_messages(Path::new(&out)),
        _ => Ok(()),
    };
    if let Err(e) = rewritten {
        eprintln!("rewriting the generated code: {e}");
        std::process::exit(1);
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
    rewrite_files(out, "swift", DEFINITION, |text| {
        rewrite(text).and_then(|text| lower_error_cases(&text))
    })
}

/// Rewrites with `change` every file under `out` (its folders included) named `*.ext`
/// whose text contains `marker`; at least one must.
fn rewrite_files(
    out: &Path,
    ext: &str,
    marker: &str,
    change: impl Fn(&str) -> Result<String, String>,
) -> Result<(), String> {
    let mut folders = vec![out.to_path_buf()];
    let mut rewritten = 0;
    while let Some(folder) = folders.pop() {
        let entries =
            std::fs::read_dir(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
        for entry in entries {
            let path: PathBuf = entry.map_err(|e| e.to_string())?.path();
            if path.is_dir() {
                folders.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != ext) {
                continue;
            }
            let text =
                std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            if !text.contains(marker) {
                continue;
            }
            let text = change(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
            rewritten += 1;
        }
    }
    if rewritten == 0 {
        return Err(format!(
            "no .{ext} file under {} contains {marker:?}",
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

/// Rewrites the generated Kotlin files under `out` that declare exceptions.
fn readable_kotlin_messages(out: &Path) -> Result<(), String> {
    rewrite_files(out, "kt", ": kotlin.Exception() {", kotlin_messages)
}

/// The getter uniffi writes for the message of an exception with a `reason`.
const REASON_MESSAGE: &str = "get() = \"reason=${ `reason` }";

/// `text` with the message of every exception that has a `reason` being that reason.
fn kotlin_messages(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut previous = "";
    let mut replaced = 0;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with(REASON_MESSAGE) {
            if previous.trim() != "override val message" {
                return Err(format!(
                    "uniffi's exception template changed ({:?} after {previous:?}): \
                     review this rewrite",
                    trimmed.trim_end()
                ));
            }
            let indent = &line[..line.len() - trimmed.len()];
            out.push_str(indent);
            out.push_str("get() = `reason`\n");
            replaced += 1;
        } else {
            out.push_str(line);
        }
        previous = line;
    }
    if replaced == 0 {
        return Err(
            "no exception message lists a `reason`: uniffi's exception template \
                    changed, review this rewrite"
                .into(),
        );
    }
    Ok(out)
}

/// Swift keywords a case name cannot be without backticks.
const KEYWORDS: &[&str] = &[
    "as",
    "associatedtype",
    "break",
    "case",
    "catch",
    "class",
    "continue",
    "default",
    "defer",
    "deinit",
    "do",
    "else",
    "enum",
    "extension",
    "fallthrough",
    "false",
    "fileprivate",
    "for",
    "func",
    "guard",
    "if",
    "import",
    "in",
    "init",
    "inout",
    "internal",
    "is",
    "let",
    "nil",
    "open",
    "operator",
    "private",
    "protocol",
    "public",
    "repeat",
    "rethrows",
    "return",
    "self",
    "Self",
    "static",
    "struct",
    "subscript",
    "super",
    "switch",
    "throw",
    "throws",
    "true",
    "try",
    "typealias",
    "var",
    "where",
    "while",
];

/// `text` with the cases of every error enum in lowerCamel: declared in the enum, built
/// and matched in its converter (`FfiConverterType<Name>`), once each.
fn lower_error_cases(text: &str) -> Result<String, String> {
    let mut out = text.to_owned();
    let mut errors = 0;
    let mut search = 0;
    while let Some(found) = out[search..].find("\nenum ") {
        let start = search + found + 1;
        search = start;
        let line = out[start..].lines().next().unwrap_or_default();
        let Some(name) = line
            .strip_prefix("enum ")
            .and_then(|rest| rest.split_once(": Swift.Error"))
            .map(|(name, _)| name.to_owned())
        else {
            continue;
        };
        errors += 1;
        let body_len = out[start..]
            .find("\n}\n")
            .ok_or(format!("enum {name} has no end"))?;
        let body = out[start..start + body_len].to_owned();
        let cases: Vec<String> = body
            .lines()
            .filter_map(|l| l.strip_prefix("    case "))
            .map(|rest| rest.split(['(', ' ']).next().unwrap_or_default().to_owned())
            .filter(|case| case.starts_with(|c: char| c.is_ascii_uppercase()))
            .collect();
        if cases.is_empty() {
            return Err(format!("enum {name} has no UpperCamel case"));
        }
        let converter_head =
            format!("public struct FfiConverterType{name}: FfiConverterRustBuffer {{");
        let converter_start = out
            .find(&converter_head)
            .ok_or(format!("no converter for {name}"))?;
        let converter_len = out[converter_start..]
            .find("\n}\n")
            .ok_or(format!("the converter of {name} has no end"))?;
        let mut enum_body = body;
        let mut converter = out[converter_start..converter_start + converter_len].to_owned();
        for case in &cases {
            let lower = format!("{}{}", case[..1].to_ascii_lowercase(), &case[1..]);
            let declared = if KEYWORDS.contains(&lower.as_str()) {
                format!("`{lower}`")
            } else {
                lower.clone()
            };
            enum_body = rename(
                &enum_body,
                &format!("    case {case}"),
                &format!("    case {declared}"),
                1,
                &name,
            )?;
            converter = rename(
                &converter,
                &format!(" .{case}"),
                &format!(" .{lower}"),
                2,
                &name,
            )?;
        }
        // The converter comes after its enum: replace it first, then the enum.
        out.replace_range(converter_start..converter_start + converter_len, &converter);
        out.replace_range(start..start + body_len, &enum_body);
    }
    if errors == 0 {
        return Err("no error enum found".into());
    }
    Ok(out)
}

/// `text` with the `count` occurrences of `from` (followed by `(`, `:`, a space or a
/// line's end: a whole case name) replaced by `to`.
fn rename(text: &str, from: &str, to: &str, count: usize, within: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    let mut found = 0;
    while let Some(at) = rest.find(from) {
        let after = &rest[at + from.len()..];
        out.push_str(&rest[..at]);
        if after.starts_with(['(', ':', ' ', '\n']) || after.is_empty() {
            out.push_str(to);
            found += 1;
        } else {
            out.push_str(from);
        }
        rest = after;
    }
    out.push_str(rest);
    if found == count {
        Ok(out)
    } else {
        Err(format!(
            "uniffi's error template changed ({found} occurrences of {from:?} in {within}, \
             {count} expected): review this rewrite"
        ))
    }
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

    /// An error enum and its converter as uniffi 0.32 writes them (abridged).
    const ERROR: &str = "public 
enum LinkError: Swift.Error, Equatable, Hashable, Foundation.LocalizedError {
    /**
     * The link is closed for good.
     */
    case Closed
    case Internal(reason: String
    )
    public var errorDescription: String? {
        String(reflecting: self)
    }
}

public struct FfiConverterTypeLinkError: FfiConverterRustBuffer {
    typealias SwiftType = LinkError

    public static func read(from buf: inout (data: Data, offset: Data.Index)) throws -> LinkError {
        let variant: Int32 = try readInt(&buf)
        switch variant {
        case 1: return .Closed
        case 2: return .Internal(
            reason: try FfiConverterString.read(from: &buf)
            )
         default: throw UniffiInternalError.unexpectedEnumCase
        }
    }

    public static func write(_ value: LinkError, into buf: inout [UInt8]) {
        switch value {
        case .Closed:
            writeInt(&buf, Int32(1))
        case let .Internal(reason):
            writeInt(&buf, Int32(2))
            FfiConverterString.write(reason, into: &buf)
        }
    }
}
public enum Other { case notAnError }
";

    #[test]
    fn error_cases_are_lower_camel_in_the_enum_and_its_converter() {
        let out = lower_error_cases(ERROR).expect("renamed");
        assert!(out.contains("    case closed\n"), "{out}");
        assert!(out.contains("    case `internal`(reason: String"), "{out}");
        assert!(out.contains("case 1: return .closed\n"));
        assert!(out.contains("case 2: return .internal(\n"));
        assert!(out.contains("case .closed:\n"));
        assert!(out.contains("case let .internal(reason):\n"));
        assert!(
            !out.contains(".Closed") && !out.contains(".Internal"),
            "{out}"
        );
        assert!(out.contains("The link is closed for good."));
    }

    #[test]
    fn an_error_case_not_where_uniffi_writes_it_fails_the_generation() {
        let unmatched = ERROR.replace("case .Closed:", "case LinkError.Closed:");
        let e = lower_error_cases(&unmatched).expect_err("refused");
        assert!(e.contains("error template changed"), "{e}");
        let no_converter = ERROR.replace("FfiConverterTypeLinkError:", "Other:");
        assert!(lower_error_cases(&no_converter).is_err());
        assert!(lower_error_cases("public enum Plain { case a }\n").is_err());
    }

    const EXCEPTIONS: &str = "sealed class LinkException: kotlin.Exception() {
    class Closed(
        ) : LinkException() {
        override val message
            get() = \"\"
    }
    class Io(
        val `reason`: kotlin.String,
        val `status`: Count?
        ) : LinkException() {
        override val message
            get() = \"reason=${ `reason` }, status=${ `status` }\"
    }
}
";

    #[test]
    fn a_kotlin_exception_message_is_its_reason() {
        let out = kotlin_messages(EXCEPTIONS).expect("rewritten");
        assert!(
            out.contains("        override val message\n            get() = `reason`\n    }"),
            "{out}"
        );
        assert!(!out.contains("status=${"), "{out}");
        // An exception without a reason keeps uniffi's message.
        assert!(out.contains("get() = \"\"\n"));
        let moved = EXCEPTIONS.replace(
            "override val message\n            get() = \"reason",
            "get() = \"reason",
        );
        assert!(kotlin_messages(&moved).is_err());
        assert!(kotlin_messages("sealed class E: kotlin.Exception() {}\n").is_err());
    }
}
