//! Everything `svc` prints on stdout goes through [`print`] (the crate's `println!` and
//! `print!` macros, defined in `main.rs`, call it): when stdout is closed — `svc … |
//! head -1` — the command ends quietly with exit code 0, as other command-line tools
//! do, instead of panicking ("failed printing to stdout", exit 101).

use std::io::Write as _;

/// Writes `text` to stdout. A closed stdout (a broken pipe) ends the process with
/// exit code 0 and nothing on stderr: whoever read the output has what it wanted. Any
/// other write failure (a full disk behind a redirection) ends it with exit code 1
/// and the reason on stderr.
pub fn print(text: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(text) {
        drop(out);
        exit_on(&e);
    }
}

/// Ends the process after a failed write to stdout.
fn exit_on(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        std::process::exit(0);
    }
    eprintln!("svc: cannot write to stdout: {e}");
    std::process::exit(crate::exit::FAILURE.into());
}
