//! Exit codes, so that scripts can tell failure kinds apart.

use std::process::ExitCode;

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

impl From<UnitError> for Failure {
    fn from(e: UnitError) -> Self {
        let code = match &e {
            UnitError::Api {
                status: 401 | 403, ..
            } => AUTH,
            UnitError::Api { status: 409, .. } => CONFLICT,
            UnitError::Api {
                status: 400 | 422, ..
            }
            | UnitError::InvalidRequest { .. } => INVALID,
            UnitError::Api { status: 404, .. } => NOT_FOUND,
            UnitError::Unreachable { .. } => UNREACHABLE,
            _ => FAILURE,
        };
        Self {
            code,
            message: e.to_string(),
        }
    }
}

impl From<CloudError> for Failure {
    fn from(e: CloudError) -> Self {
        let code = match &e {
            CloudError::Api {
                status: 401 | 403, ..
            }
            | CloudError::Authentication { .. } => AUTH,
            CloudError::Api { status: 409, .. } => CONFLICT,
            CloudError::Api {
                status: 400 | 422, ..
            }
            | CloudError::InvalidInput { .. } => INVALID,
            CloudError::Api { status: 404, .. } => NOT_FOUND,
            CloudError::Config { .. } => USAGE,
            CloudError::Transport { .. } => UNREACHABLE,
            _ => FAILURE,
        };
        Self {
            code,
            message: e.to_string(),
        }
    }
}
