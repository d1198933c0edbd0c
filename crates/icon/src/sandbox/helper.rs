//! The helper's side: limit this process, read the image from standard input, decode it,
//! answer on standard output. Single-threaded, and nothing is read before the limits hold.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::process::ExitCode;

use rustix::process::{setrlimit, Resource, Rlimit};

use super::budget::{SANDBOX_CPU_TIME, SANDBOX_MAX_INPUT_BYTES, SANDBOX_MEMORY_BUDGET};
use crate::decode::decode_icon;
use crate::error::IconError;

/// Exit code: the decoder refused the image; standard output holds its kind and message.
pub(super) const EXIT_REFUSED: u8 = 3;
/// Exit code: the limits could not be applied; nothing was decoded.
pub(super) const EXIT_SETUP: u8 = 4;
/// Exit code: the helper was called with arguments it does not know.
pub(super) const EXIT_USAGE: u8 = 2;

/// Flag: the address space the decode may add, in bytes.
pub(super) const MEMORY_FLAG: &str = "--memory-budget=";
/// Flag: the CPU time the helper may use, in whole seconds.
pub(super) const CPU_FLAG: &str = "--cpu-seconds=";
/// Flag: the response said `image/svg+xml`.
pub(super) const SVG_FLAG: &str = "--svg";

/// What the parent asked for.
struct Request {
    memory_budget: u64,
    cpu_seconds: u64,
    svg: bool,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Option<Request> {
    let mut request = Request {
        memory_budget: SANDBOX_MEMORY_BUDGET,
        cpu_seconds: SANDBOX_CPU_TIME.as_secs(),
        svg: false,
    };
    for arg in args {
        let arg = arg.into_string().ok()?;
        if let Some(value) = arg.strip_prefix(MEMORY_FLAG) {
            request.memory_budget = value.parse().ok()?;
        } else if let Some(value) = arg.strip_prefix(CPU_FLAG) {
            request.cpu_seconds = value.parse().ok()?;
        } else if arg == SVG_FLAG {
            request.svg = true;
        } else {
            return None;
        }
    }
    Some(request)
}

/// Runs the sandbox's helper: `args` are its flags (what follows the program name, or the
/// hidden subcommand). Call it first thing in `main`, before starting threads or reading
/// anything: its memory limit counts what the process has mapped by then.
///
/// The image comes on standard input; the 64×64 PNG goes to standard output (exit 0), or
/// the decoder's refusal (exit 3). The process limits itself first: address space, CPU time
/// (`RLIMIT_AS`, `RLIMIT_CPU`), no core dump, no file written; when it cannot, it decodes
/// nothing (exit 4).
pub fn run_helper(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    let Some(request) = parse(args) else {
        eprintln!("usage: {MEMORY_FLAG}BYTES {CPU_FLAG}SECONDS [{SVG_FLAG}] < image > png");
        return ExitCode::from(EXIT_USAGE);
    };
    if let Err(message) = limit_this_process(&request) {
        eprintln!("{message}");
        return ExitCode::from(EXIT_SETUP);
    }
    let mut bytes = Vec::new();
    let read = std::io::stdin()
        .lock()
        .take(SANDBOX_MAX_INPUT_BYTES as u64 + 1)
        .read_to_end(&mut bytes);
    if let Err(error) = read {
        eprintln!("cannot read the image: {error}");
        return ExitCode::from(EXIT_SETUP);
    }
    let content_type = request.svg.then_some("image/svg+xml");
    let decoded = std::panic::catch_unwind(|| decode_icon(&bytes, content_type))
        .unwrap_or(Err(IconError::DecoderPanicked));
    let mut stdout = std::io::stdout().lock();
    let (answer, code) = match decoded {
        Ok(png) => (png.into_bytes(), ExitCode::SUCCESS),
        Err(error) => (
            format!("{}\n{error}", error.kind().name()).into_bytes(),
            ExitCode::from(EXIT_REFUSED),
        ),
    };
    // A parent that stopped listening has its answer already (a timeout): nothing to do.
    let _ = stdout.write_all(&answer).and_then(|()| stdout.flush());
    code
}

/// Applies the limits to this process; refuses to go on without them.
fn limit_this_process(request: &Request) -> Result<(), String> {
    let mapped = mapped_bytes().ok_or("cannot read this process's size")?;
    let address_space = mapped.saturating_add(request.memory_budget);
    let limits = [
        // Killed by a limit, the helper must not leave a core file of its memory.
        (Resource::Core, 0, 0),
        // It writes nothing but its pipes.
        (Resource::Fsize, 0, 0),
        (Resource::As, address_space, address_space),
        // SIGXCPU at the soft limit, SIGKILL a second later should it be caught.
        (
            Resource::Cpu,
            request.cpu_seconds,
            request.cpu_seconds.saturating_add(1),
        ),
    ];
    for (resource, current, maximum) in limits {
        let limit = Rlimit {
            current: Some(current),
            maximum: Some(maximum),
        };
        setrlimit(resource, limit).map_err(|error| format!("setrlimit {resource:?}: {error}"))?;
    }
    Ok(())
}

/// The address space this process maps now (`VmSize` of `/proc/self/status`), in bytes.
fn mapped_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|line| line.starts_with("VmSize:"))?;
    let kib: u64 = line
        .trim_start_matches("VmSize:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    kib.checked_mul(1024)
}
