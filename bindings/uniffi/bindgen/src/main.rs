//! `uniffi-bindgen generate --library <libsvc_ffi.so> --language kotlin|swift
//! --out-dir <dir>`, run from the main workspace's root (it reads `cargo metadata` and
//! `bindings/uniffi/uniffi.toml`).
//!
//! uniffi's generator, then one change to the Kotlin it writes ([`kotlin`]): the call
//! status of every call into Rust is reused instead of allocated.

mod kotlin;

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    uniffi::uniffi_bindgen_main();
    if args.first().map(String::as_str) != Some("generate") {
        return;
    }
    // Whatever languages were asked for, every Kotlin file written is patched; when
    // Kotlin was asked for, one must have been.
    let kotlin = args
        .iter()
        .any(|arg| matches!(arg.as_str(), "kotlin" | "--language=kotlin" | "-lkotlin"));
    let patched = match out_dir(&args) {
        Some(dir) => kotlin::patch_dir(&dir).map_err(|e| e.to_string()),
        None => Err("pass --out-dir, so that the generated Kotlin can be patched".to_owned()),
    };
    match patched {
        Ok(0) if kotlin => fail(
            "no generated Kotlin file has the call helper this generator patches \
             (see bindings/uniffi/bindgen/src/kotlin.rs)",
        ),
        Ok(_) => {}
        Err(_) if !kotlin => {}
        Err(error) => fail(&error),
    }
}

fn fail(why: &str) -> ! {
    eprintln!("uniffi-bindgen: {why}");
    std::process::exit(1);
}

/// The output folder of `generate` (`--out-dir <dir>`, `--out-dir=<dir>`, `-o <dir>`,
/// `-o<dir>`).
fn out_dir(args: &[String]) -> Option<PathBuf> {
    let mut rest = args.iter().skip(1);
    let mut found = None;
    while let Some(arg) = rest.next() {
        if arg == "--out-dir" || arg == "-o" {
            found = rest.next().map(PathBuf::from);
        } else if let Some(dir) = arg.strip_prefix("--out-dir=") {
            found = Some(PathBuf::from(dir));
        } else if let Some(dir) = arg.strip_prefix("-o").filter(|dir| !dir.is_empty()) {
            found = Some(PathBuf::from(dir));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn finds_the_output_folder_of_a_generation() {
        for line in [
            "generate --library lib.so --language kotlin --no-format --out-dir out",
            "generate -l kotlin -o out --library lib.so",
            "generate --language=kotlin --out-dir=out --library lib.so",
            "generate -lkotlin -oout --library lib.so",
            "generate --language swift --out-dir out",
        ] {
            assert_eq!(out_dir(&args(line)), Some(PathBuf::from("out")), "{line}");
        }
        for line in ["generate --library lib.so --language kotlin", "generate"] {
            assert_eq!(out_dir(&args(line)), None, "{line}");
        }
    }
}
