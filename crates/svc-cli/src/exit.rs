//! Exit codes, so that scripts can tell failure kinds apart.

use std::process::ExitCode;

use svc_core::ErrorKind;
use svc_core::cloud::CloudError;
use svc_core::unit::UnitError;

pub const FAILURE: u8 = 1;
pub const USAGE: u8 = 2;
pub const AUTH: u8 = 3;
pub const CONFLICT: u8 = 4;
pub const INVALID: u8 = 5;
pub const UNREACHABLE: u8 = 6;
pub const NOT_FOUND: u8 = 7;

/// A failure of a command: what to print and the exit code.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl Into<String>) -> Self {
        Self {
            code: USAGE,
            message: message.into(),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Self {
            code: INVALID,
            message: message.into(),
        }
    }

    pub fn other(message: impl Into<String>) -> Self {
        Self {
            code: FAILURE,
            message: message.into(),
        }
    }

    pub fn report(self, program: &str) -> ExitCode {
        eprintln!("{program}: {}", self.message);
        ExitCode::from(self.code)
    }
}

/// A signal asking the command to stop: SIGINT (Ctrl-C) or SIGTERM (what `timeout`,
/// systemd and `docker stop` send). Both get the same cleanup.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT, Ctrl-C.
    Int,
    /// SIGTERM.
    Term,
}

impl Interrupt {
    /// The exit code of a command it stopped: 128 + the signal's number, as shells
    /// report a process the signal ended (130 for SIGINT, 143 for SIGTERM).
    pub fn code(self) -> u8 {
        match self {
            Self::Int => 130,
            Self::Term => 143,
        }
    }

    /// The signal's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Int => "SIGINT",
            Self::Term => "SIGTERM",
        }
    }
}

/// The signals a command listens to while it works. Created first thing, before the
/// command sends a byte (its token request, a login), so that a signal arriving at any
/// moment of it is caught: both handlers are installed by [`listen`](Self::listen)
/// itself, and a signal that arrives before [`next`](Self::next) is asked is kept for
/// it. From then on they no longer end the process by themselves: the command stops,
/// cleans up and exits with the signal's code.
pub struct Signals {
    #[cfg(unix)]
    int: Option<tokio::signal::unix::Signal>,
    #[cfg(unix)]
    term: Option<tokio::signal::unix::Signal>,
}

impl Signals {
    pub fn listen() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Self {
                int: signal(SignalKind::interrupt()).ok(),
                term: signal(SignalKind::terminate()).ok(),
            }
        }
        #[cfg(not(unix))]
        Self {}
    }

    /// The next SIGINT or SIGTERM.
    pub async fn next(&mut self) -> Interrupt {
        #[cfg(unix)]
        if let (Some(int), Some(term)) = (self.int.as_mut(), self.term.as_mut()) {
            return tokio::select! {
                _ = int.recv() => Interrupt::Int,
                _ = term.recv() => Interrupt::Term,
            };
        }
        let _ = tokio::signal::ctrl_c().await;
        Interrupt::Int
    }

    /// Runs `work` (a step before anything can be left half done: a token request, a
    /// listing, a login), unless a signal comes first: then the failure of a command
    /// stopped by it, saying `what` was left undone.
    pub async fn unless_interrupted<T>(
        &mut self,
        work: impl std::future::Future<Output = T>,
        what: &str,
    ) -> Result<T, Failure> {
        tokio::select! {
            result = work => Ok(result),
            signal = self.next() => Err(Failure {
                code: signal.code(),
                message: format!("interrupted by {} {what}", signal.name()),
            }),
        }
    }
}

/// Waits for `work`; on SIGINT or SIGTERM, calls `cancel` and goes on waiting for
/// `work`, which then ends promptly (a canceled workflow or transfer stops and cleans
/// up before it answers), so what was done and what was left is still reported. A
/// second signal during that cleanup ends the process at once, with the signal's code.
/// Returns the work's result and the signal that interrupted it, if any.
pub async fn until_done_or_interrupted<T>(
    signals: &mut Signals,
    work: impl std::future::Future<Output = T>,
    cancel: impl FnOnce(),
) -> (T, Option<Interrupt>) {
    tokio::pin!(work);
    let interrupt = tokio::select! {
        result = &mut work => return (result, None),
        interrupt = signals.next() => interrupt,
    };
    eprintln!(
        "{}: stopping and cleaning up (again to stop at once)",
        interrupt.name()
    );
    cancel();
    let result = tokio::select! {
        result = work => result,
        again = signals.next() => std::process::exit(i32::from(again.code())),
    };
    (result, Some(interrupt))
}

/// The exit code of a kind of failure: one rule for every subsystem (the kinds are
/// svc-core's, shared with the bindings).
pub fn code_for(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::Authentication | ErrorKind::PermissionDenied => AUTH,
        ErrorKind::Conflict => CONFLICT,
        ErrorKind::InvalidInput => INVALID,
        ErrorKind::Unreachable | ErrorKind::Transient | ErrorKind::Timeout => UNREACHABLE,
        ErrorKind::NotFound => NOT_FOUND,
        _ => FAILURE,
    }
}

impl From<UnitError> for Failure {
    fn from(e: UnitError) -> Self {
        Self {
            code: code_for(e.kind()),
            message: e.to_string(),
        }
    }
}

/// The exit code of a cloud error. One rule for settings, whether from a flag or the
/// environment: one that is not given is a usage error (2), one given with an invalid
/// value is invalid input (5).
pub fn cloud_code(e: &CloudError) -> u8 {
    match e {
        CloudError::Config { missing: true, .. } => USAGE,
        _ => code_for(e.kind()),
    }
}

impl From<CloudError> for Failure {
    fn from(e: CloudError) -> Self {
        Self {
            code: cloud_code(&e),
            message: e.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_code() {
        let codes: Vec<(ErrorKind, u8)> =
            ErrorKind::ALL.iter().map(|k| (*k, code_for(*k))).collect();
        for (kind, code) in codes {
            let expected = match kind.as_str() {
                "authentication" | "permission_denied" => 3,
                "conflict" => 4,
                "invalid_input" => 5,
                "unreachable" | "transient" | "timeout" => 6,
                "not_found" => 7,
                _ => 1,
            };
            assert_eq!(code, expected, "{kind}");
        }
    }

    #[test]
    fn an_identity_provider_that_fails_is_not_an_authentication_failure() {
        let unreachable = CloudError::Transport {
            operation: "requestToken",
            kind: svc_core::cloud::TransportKind::Connect,
            reason: "could not connect to the identity provider".to_owned(),
            source: None,
        };
        assert_eq!(Failure::from(unreachable).code, UNREACHABLE);
        let failing = CloudError::Api {
            operation: "requestToken",
            status: 503,
            title: "Service Unavailable".to_owned(),
            details: String::new(),
        };
        assert_eq!(Failure::from(failing).code, UNREACHABLE);
        let config = CloudError::Config {
            setting: "SVC_BASE_URL".to_owned(),
            reason: "is not an http(s):// address".to_owned(),
            missing: false,
        };
        assert_eq!(Failure::from(config).code, INVALID, "as an invalid --url");
        let missing = CloudError::Config {
            setting: "SVC_BASE_URL".to_owned(),
            reason: "is not set".to_owned(),
            missing: true,
        };
        assert_eq!(Failure::from(missing).code, USAGE, "as a missing --url");
    }
}
