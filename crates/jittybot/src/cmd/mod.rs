//! One module per subcommand.

use std::process::ExitCode;

pub mod analyze;
pub mod check;
pub mod robots;

/// Exit status when at least one URL asked about is disallowed.
pub fn exit_disallowed() -> ExitCode {
    ExitCode::from(1)
}

/// Exit status for a usage or input error.
pub fn exit_error() -> ExitCode {
    ExitCode::from(2)
}
