//! Decoding untrusted icons in a child process with a memory and CPU-time limit, so that an
//! image that gets past the decoders' own checks (a decompression bomb, an SVG whose drawing
//! costs far more than its size suggests) kills only that child.
//!
//! The parent ([`Sandbox::decode`]) starts the helper (the `icon-decode` binary of this crate,
//! or a program that calls [`run_helper`], such as `jittybot __decode-icon`), writes the image
//! on its standard input and reads the 64×64 PNG from its standard output, within
//! [`SANDBOX_WALL_TIME`] (killed past it). The helper limits itself with `setrlimit` before it
//! reads a byte: address space ([`SANDBOX_MEMORY_BUDGET`] beyond what it maps at its start),
//! CPU time ([`SANDBOX_CPU_TIME`]), no core dump, no file written. How it ended says what
//! happened: the PNG, a typed refusal from the decoder, or a budget exceeded
//! ([`IconError::OverBudget`]).

mod helper;
mod parent;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use helper::run_helper;

use crate::decode::{decode_icon, Png64, MAX_ICON_BYTES};
use crate::error::IconError;

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
/// image is refused before any process starts ([`IconError::TooLarge`]).
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

/// The most helpers one [`Sandbox`] (and its clones) runs at once (2): each may take its
/// memory budget and a core, so a burst of icon searches queues instead of multiplying
/// them. Waiting for a turn counts against the caller's deadline.
pub const SANDBOX_MAX_HELPERS: usize = 2;

/// The hidden subcommand of `jittybot` that runs [`run_helper`].
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

/// The helper program: which executable, with which leading arguments, and its budgets.
/// Clones share one limit of [`SANDBOX_MAX_HELPERS`] helpers running at once.
#[derive(Debug, Clone)]
pub struct Sandbox {
    turns: Arc<Semaphore>,
    program: PathBuf,
    args: Vec<OsString>,
    memory_budget: u64,
    cpu_time: Duration,
    wall_time: Duration,
}

impl Sandbox {
    /// The helper is `program` run with `args` first (then the helper's own flags):
    /// `Sandbox::new(env!("CARGO_BIN_EXE_icon-decode"), [])`, or a binary with a hidden
    /// subcommand, `Sandbox::new("/usr/bin/jittybot", ["__decode-icon"])`.
    pub fn new<I, S>(program: impl Into<PathBuf>, args: I) -> Sandbox
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Sandbox {
            turns: Arc::new(Semaphore::new(SANDBOX_MAX_HELPERS)),
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            memory_budget: SANDBOX_MEMORY_BUDGET,
            cpu_time: SANDBOX_CPU_TIME,
            wall_time: SANDBOX_WALL_TIME,
        }
    }

    /// Other budgets than [`SANDBOX_MEMORY_BUDGET`], [`SANDBOX_CPU_TIME`] (rounded up to
    /// whole seconds, at least one) and [`SANDBOX_WALL_TIME`]: for a slower machine, or an
    /// unoptimised build.
    pub fn with_budgets(
        mut self,
        memory_bytes: u64,
        cpu_time: Duration,
        wall_time: Duration,
    ) -> Sandbox {
        self.memory_budget = memory_bytes;
        self.cpu_time = cpu_time;
        self.wall_time = wall_time;
        self
    }

    /// The running executable with `subcommand` ([`DECODE_SUBCOMMAND`] for `jittybot`).
    pub fn current_exe(subcommand: &str) -> std::io::Result<Sandbox> {
        Ok(Sandbox::new(std::env::current_exe()?, [subcommand]))
    }

    /// The program run.
    pub fn program(&self) -> &std::path::Path {
        &self.program
    }

    /// Decodes `bytes` in a fresh helper process: the 64×64 PNG, the decoder's refusal
    /// ([`IconError::Sandboxed`]), a budget exceeded ([`IconError::OverBudget`]) or a
    /// failure of the sandbox ([`IconError::Sandbox`]). Dropping the future kills the helper.
    pub async fn decode(
        &self,
        bytes: &[u8],
        content_type: Option<&str>,
    ) -> Result<Png64, IconError> {
        // The semaphore is never closed; were it, the decode would go ahead unqueued.
        let _turn = self.turns.acquire().await.ok();
        parent::decode(self, bytes, content_type).await
    }
}

/// How icons are decoded: in a sandboxed helper process (anything fetched from the web), or
/// in this process (trusted bytes, tests).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum IconDecoder {
    /// [`decode_icon`] on a blocking thread of the runtime: no memory or CPU-time limit
    /// beyond the decoders' own checks. For trusted images only.
    InProcess,
    /// [`Sandbox::decode`].
    Sandboxed(Sandbox),
}

impl IconDecoder {
    /// Decodes `bytes` (with the response's `Content-Type`, which only tells SVG apart).
    pub async fn decode(
        &self,
        bytes: Vec<u8>,
        content_type: Option<String>,
    ) -> Result<Png64, IconError> {
        match self {
            IconDecoder::InProcess => {
                let decoding = tokio::task::spawn_blocking(move || {
                    decode_icon(&bytes, content_type.as_deref())
                });
                // A panic inside a decoder is contained to its thread: the icon is broken.
                decoding.await.unwrap_or(Err(IconError::DecoderPanicked))
            }
            IconDecoder::Sandboxed(sandbox) => {
                sandbox.decode(&bytes, content_type.as_deref()).await
            }
        }
    }
}
