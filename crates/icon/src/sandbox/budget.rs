//! What the helper may use, and how the sandbox itself fails: below the rest of the sandbox
//! and the crate's [`IconError`](crate::IconError), which wraps both.

use std::path::PathBuf;
use std::time::Duration;

use crate::limits::MAX_ICON_BYTES;

/// The address space the helper may map beyond what it has mapped when it starts (256 MiB):
/// a raster decode allocates at most [`MAX_DECODE_ALLOC`](crate::MAX_DECODE_ALLOC) for its
/// pixels, plus a copy or two while shrinking; an SVG render far less. An allocation past it
/// fails, and the helper aborts: [`Budget::Memory`].
pub const SANDBOX_MEMORY_BUDGET: u64 = 256 * 1024 * 1024;

/// The CPU time the helper may use (2 s; `RLIMIT_CPU` counts whole seconds): the costliest
/// icons the decoders accept take about half a second of one core in a release build. Past
/// it the kernel stops the helper (`SIGXCPU`, then `SIGKILL` a second later):
/// [`Budget::CpuTime`].
pub const SANDBOX_CPU_TIME: Duration = Duration::from_secs(2);

/// How long the parent waits for the helper, start to exit (10 s): its CPU budget with room
/// for a loaded machine, where the helper waits its turn for a core. Past it the helper is
/// killed: [`Budget::WallTime`].
pub const SANDBOX_WALL_TIME: Duration = Duration::from_secs(10);

/// The most bytes given to the helper: the decoders' own cap, [`MAX_ICON_BYTES`]; a larger
/// image is refused before any process starts
/// ([`IconError::TooLarge`](crate::IconError::TooLarge)).
pub const SANDBOX_MAX_INPUT_BYTES: usize = MAX_ICON_BYTES;

/// The most bytes read from the helper's standard output (64 KiB): a 64×64 RGBA PNG is at
/// most about 17 KiB. A helper writing more is killed and its output discarded
/// ([`SandboxError::Output`]).
pub const SANDBOX_MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// The most pixels the helper's PNG may have: one [`ICON_SIZE`](crate::ICON_SIZE)-square
/// icon (4,096). The parent reads the header under this limit, so that even a misbehaving
/// helper cannot hand it a bomb; anything but a 64×64 PNG is [`SandboxError::Output`].
pub const SANDBOX_MAX_OUTPUT_PIXELS: u64 = 64 * 64;

/// The most bytes kept of the helper's standard error (4 KiB): enough for the runtime's last
/// words ("memory allocation of N bytes failed"), which tell an exceeded memory budget from
/// a crash.
pub const SANDBOX_MAX_STDERR_BYTES: usize = 4 * 1024;

/// The most helpers one [`Sandbox`](crate::Sandbox) (and its clones) runs at once (2): each
/// may take its memory budget and a core, so a burst of icon searches queues instead of
/// multiplying them. Waiting for a turn counts against the caller's deadline.
pub const SANDBOX_MAX_HELPERS: usize = 2;

/// The hidden subcommand of `jittybot` that runs [`run_helper`](crate::run_helper).
pub const DECODE_SUBCOMMAND: &str = "__decode-icon";

/// Which budget an image exceeded in the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// [`SANDBOX_MEMORY_BUDGET`]: an allocation failed.
    Memory,
    /// [`SANDBOX_CPU_TIME`]: the kernel stopped the helper.
    CpuTime,
    /// [`SANDBOX_WALL_TIME`]: the parent killed the helper.
    WallTime,
    /// The helper's stack overflowed (deep recursion in a decoder).
    Stack,
}

impl std::fmt::Display for Budget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Budget::Memory => "memory",
            Budget::CpuTime => "CPU-time",
            Budget::WallTime => "wall-clock",
            Budget::Stack => "stack",
        })
    }
}

/// Why the sandbox itself failed (not the image): the helper could not be started, or
/// ended in a way that says nothing about the image.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The helper program could not be started.
    #[error("the icon decoder {program} could not be started: {source}")]
    Spawn {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Talking to the helper failed.
    #[error("the icon decoder's pipes failed: {0}")]
    Io(#[source] std::io::Error),
    /// The helper could not apply its limits, and decoded nothing.
    #[error("the icon decoder could not limit itself: {message}")]
    Setup {
        /// What it said.
        message: String,
    },
    /// The helper ended in a way no image explains (a crash, an unexpected exit code).
    #[error("the icon decoder ended unexpectedly ({status})")]
    Crashed {
        /// Its exit status.
        status: std::process::ExitStatus,
    },
    /// The helper's answer was not what it must send (too long, not a 64×64 PNG).
    #[error("the icon decoder's answer is not a 64x64 PNG: {reason}")]
    Output {
        /// What was wrong.
        reason: &'static str,
    },
}
