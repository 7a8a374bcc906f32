//! Who acts on a unit: a user's name checked against the unit's users, and passwords
//! read from the environment, from stdin or at a prompt (never from a command-line
//! argument, which other users of the machine can read).

use std::io::IsTerminal as _;

use svc_core::unit::{Password, UserName};

use crate::exit::Failure;

pub(crate) fn user_name(name: &str) -> Result<UserName, Failure> {
    let user = UserName::from(name);
    if user.is_known() {
        Ok(user)
    } else {
        Err(Failure::usage(format!(
            "unknown user `{name}`; users are {}",
            UserName::KNOWN.join(", ")
        )))
    }
}

pub(crate) fn read_secret(
    env: &str,
    from_stdin: bool,
    prompt: &str,
    confirm: bool,
) -> Result<Option<Password>, Failure> {
    if let Ok(value) = std::env::var(env) {
        return Ok(Some(Password::new(value)));
    }
    if from_stdin {
        let mut line = String::new();
        std::io::stdin()
            .read_line(&mut line)
            .map_err(|e| Failure::other(format!("reading stdin: {e}")))?;
        return Ok(Some(Password::new(line.trim_end_matches(['\r', '\n']))));
    }
    if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password(prompt)
            .map_err(|e| Failure::other(format!("prompt: {e}")))?;
        if confirm {
            let again = rpassword::prompt_password("Repeat it: ")
                .map_err(|e| Failure::other(format!("prompt: {e}")))?;
            if again != first {
                return Err(Failure::usage("the two passwords differ"));
            }
        }
        return Ok(Some(Password::new(first)));
    }
    Ok(None)
}
