//! The icon sandbox's helper on its own: limits itself, decodes the image on standard input,
//! writes the 64×64 PNG on standard output (see `icon::run_helper`). For library users and
//! tests; `jittybot` runs the same code as its hidden `__decode-icon` subcommand.

fn main() -> std::process::ExitCode {
    icon::run_helper(std::env::args_os().skip(1))
}
