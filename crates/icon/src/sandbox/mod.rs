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

pub(crate) mod budget;
mod helper;
mod parent;

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

pub use budget::{
    Budget, SandboxError, DECODE_SUBCOMMAND, SANDBOX_CPU_TIME, SANDBOX_MAX_HELPERS,
    SANDBOX_MAX_INPUT_BYTES, SANDBOX_MAX_OUTPUT_BYTES, SANDBOX_MAX_OUTPUT_PIXELS,
    SANDBOX_MAX_STDERR_BYTES, SANDBOX_MEMORY_BUDGET, SANDBOX_WALL_TIME,
};
pub use helper::run_helper;

use crate::decode::decode_icon;
use crate::error::IconError;
use crate::png::Png64;
use parent::Helper;

/// The helper program: which executable, with which leading arguments, and its budgets.
/// Clones share one limit of [`SANDBOX_MAX_HELPERS`] helpers running at once.
#[derive(Debug, Clone)]
pub struct Sandbox {
    turns: Arc<Semaphore>,
    helper: Helper,
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
            helper: Helper {
                program: program.into(),
                args: args.into_iter().map(Into::into).collect(),
                memory_budget: SANDBOX_MEMORY_BUDGET,
                cpu_time: SANDBOX_CPU_TIME,
                wall_time: SANDBOX_WALL_TIME,
            },
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
        self.helper.memory_budget = memory_bytes;
        self.helper.cpu_time = cpu_time;
        self.helper.wall_time = wall_time;
        self
    }

    /// The running executable with `subcommand` ([`DECODE_SUBCOMMAND`] for `jittybot`).
    pub fn current_exe(subcommand: &str) -> std::io::Result<Sandbox> {
        Ok(Sandbox::new(std::env::current_exe()?, [subcommand]))
    }

    /// The program run.
    pub fn program(&self) -> &std::path::Path {
        &self.helper.program
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
        parent::decode(&self.helper, bytes, content_type).await
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
