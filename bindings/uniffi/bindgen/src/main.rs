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
    let Some(out_dir) = kotlin_out_dir(&args) else {
        return;
    };
    match kotlin::patch_dir(&out_dir) {
        Ok(0) => {
            eprintln!(
                "uniffi-bindgen: no generated Kotlin file under {} has the call helper this \
                 generator patches (see bindings/uniffi/bindgen/src/kotlin.rs)",
                out_dir.display()
            );
            std::process::exit(1);
        }
        Ok(_) => {}
        Err(error) => {
            eprintln!("uniffi-bindgen: {error}");
            std::process::exit(1);
        }
    }
}

/// The output folder of a `generate` that writes Kotlin (`--language`/`-l kotlin`,
/// `--out-dir`/`-o <dir>`, each also as `--flag=value`).
fn kotlin_out_dir(args: &[String]) -> Option<PathBuf> {
    if args.first().map(String::as_str) != Some("generate") {
        return None;
    }
    let mut kotlin = false;
    let mut out_dir = None;
    let mut rest = args.iter().skip(1);
    while let Some(arg) = rest.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with('-') => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || inline.clone().or_else(|| rest.next().cloned());
        match flag {
            "--language" | "-l" => kotlin |= value().as_deref() == Some("kotlin"),
            "--out-dir" | "-o" => out_dir = value().map(PathBuf::from),
            _ => {}
        }
    }
    out_dir.filter(|_| kotlin)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn finds_the_output_folder_of_a_kotlin_generation() {
        for line in [
            "generate --library lib.so --language kotlin --no-format --out-dir out",
            "generate -l kotlin -o out --library lib.so",
            "generate --language=kotlin --out-dir=out --library lib.so",
            "generate --language swift --language kotlin --out-dir out",
        ] {
            assert_eq!(
                kotlin_out_dir(&args(line)),
                Some(PathBuf::from("out")),
                "{line}"
            );
        }
        for line in [
            "generate --library lib.so --language swift --out-dir out",
            "generate --library lib.so --language kotlin",
            "print-repr lib.so --language kotlin --out-dir out",
            "",
        ] {
            assert_eq!(kotlin_out_dir(&args(line)), None, "{line}");
        }
    }
}
