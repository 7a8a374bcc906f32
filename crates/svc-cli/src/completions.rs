//! `svc completions SHELL` and `svc man DIR`: shell completions and man pages, generated
//! from the same clap definitions the commands are parsed with, so they cannot drift.
//! Both commands are hidden: they are for packagers (`cargo xtask dist` ships their
//! output beside the release binaries), not for everyday use.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

/// Arguments of `svc completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: Shell,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

/// Arguments of `svc man`.
#[derive(Args, Debug)]
pub struct ManArgs {
    /// The folder to write the pages into (created if missing): `svc.1` and one page per
    /// subcommand (`svc-device.1`, `svc-device-settings.1`, …).
    out: PathBuf,
}

/// Prints the completion script of `command` for the shell on stdout.
pub fn completions(args: &CompletionsArgs, command: clap::Command) -> ExitCode {
    print!("{}", script(args.shell, command));
    ExitCode::SUCCESS
}

fn script(shell: Shell, mut command: clap::Command) -> String {
    let shell = match shell {
        Shell::Bash => clap_complete::Shell::Bash,
        Shell::Zsh => clap_complete::Shell::Zsh,
        Shell::Fish => clap_complete::Shell::Fish,
    };
    let name = command.get_name().to_owned();
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut command, name, &mut script);
    String::from_utf8_lossy(&script).into_owned()
}

/// Writes the man pages of `command` and its subcommands into the folder.
pub fn man(args: &ManArgs, command: clap::Command) -> ExitCode {
    let written = std::fs::create_dir_all(&args.out)
        .and_then(|()| clap_mangen::generate_to(command, &args.out));
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("svc man: writing {}: {e}", args.out.display());
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn every_shell_completes_the_commands() {
        for shell in [Shell::Bash, Shell::Zsh, Shell::Fish] {
            let text = script(shell, crate::Cli::command());
            for word in ["process", "device", "settings", "webhooks", "verbose"] {
                assert!(text.contains(word), "{shell:?} completions lack {word}");
            }
        }
    }

    #[test]
    fn man_pages_cover_every_visible_subcommand() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let args = ManArgs {
            out: dir.path().join("man"),
        };
        assert_eq!(man(&args, crate::Cli::command()), ExitCode::SUCCESS);
        for page in ["svc.1", "svc-process.1", "svc-device-settings-diff.1"] {
            assert!(args.out.join(page).is_file(), "{page} missing");
        }
        assert!(!args.out.join("svc-man.1").exists());
    }
}
