//! The parent's side: start the helper, feed it, read its answer within the wall-clock
//! budget, and say what its ending means.

use std::ffi::OsString;
use std::io::Cursor;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use image::{ImageFormat, ImageReader, Limits};
use rustix::process::Signal;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, Command};

use super::budget::{
    Budget, SandboxError, SANDBOX_MAX_INPUT_BYTES, SANDBOX_MAX_OUTPUT_BYTES,
    SANDBOX_MAX_OUTPUT_PIXELS, SANDBOX_MAX_STDERR_BYTES,
};
use super::helper::{CPU_FLAG, EXIT_REFUSED, EXIT_SETUP, MEMORY_FLAG, SVG_FLAG};
use crate::decode::is_svg_type;
use crate::error::{IconError, IconErrorKind};
use crate::limits::ICON_SIZE;
use crate::png::Png64;

/// The helper program of a [`Sandbox`](super::Sandbox): which executable, with which leading
/// arguments, and its budgets.
#[derive(Debug, Clone)]
pub(super) struct Helper {
    pub(super) program: PathBuf,
    pub(super) args: Vec<OsString>,
    pub(super) memory_budget: u64,
    pub(super) cpu_time: Duration,
    pub(super) wall_time: Duration,
}

/// What Rust's runtime prints before it aborts on a failed allocation.
const ALLOCATION_FAILED: &str = "memory allocation of";
/// What Rust's runtime prints before it aborts on a stack overflow.
const STACK_OVERFLOWED: &str = "has overflowed its stack";

/// Everything the helper said.
struct Ending {
    status: ExitStatus,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

pub(super) async fn decode(
    sandbox: &Helper,
    bytes: &[u8],
    content_type: Option<&str>,
) -> Result<Png64, IconError> {
    // The cheap refusals need no process.
    if bytes.is_empty() {
        return Err(IconError::Empty);
    }
    if bytes.len() > SANDBOX_MAX_INPUT_BYTES {
        return Err(IconError::TooLarge {
            limit: SANDBOX_MAX_INPUT_BYTES,
        });
    }
    let mut command = Command::new(&sandbox.program);
    command
        .args(&sandbox.args)
        .arg(format!("{MEMORY_FLAG}{}", sandbox.memory_budget))
        .arg(format!("{CPU_FLAG}{}", whole_seconds(sandbox.cpu_time)));
    if content_type.is_some_and(is_svg_type) {
        command.arg(SVG_FLAG);
    }
    // Nothing of this process's environment (RUST_LOG, credentials) reaches the helper.
    command
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(|source| SandboxError::Spawn {
        program: sandbox.program.clone(),
        source,
    })?;
    let ended = tokio::time::timeout(sandbox.wall_time, converse(&mut child, bytes)).await;
    let ending = match ended {
        Ok(ending) => ending,
        Err(_elapsed) => {
            // Killed and reaped here, not left to finish its CPU budget.
            let _ = child.kill().await;
            return Err(IconError::OverBudget(Budget::WallTime));
        }
    };
    let ending = match ending {
        Ok(ending) => ending,
        Err(error) => {
            let _ = child.kill().await;
            return Err(error.into());
        }
    };
    judge(ending)
}

/// `RLIMIT_CPU` counts whole seconds: a budget is rounded up, and is at least one.
fn whole_seconds(time: Duration) -> u64 {
    let seconds = time.as_secs() + u64::from(time.subsec_nanos() > 0);
    seconds.max(1)
}

/// Writes the image, reads both answers (capped) and waits for the exit.
async fn converse(child: &mut Child, bytes: &[u8]) -> Result<Ending, SandboxError> {
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        return Err(SandboxError::Io(std::io::Error::other("no pipes")));
    };
    let write = async move {
        // A helper that stops reading (it died, or refused early) breaks the pipe: its
        // ending says why, not this write.
        let _ = stdin.write_all(bytes).await;
        drop(stdin);
        Ok(())
    };
    let answer = async {
        let answer = read_capped(stdout, SANDBOX_MAX_OUTPUT_BYTES)
            .await
            .map_err(SandboxError::Io)?;
        if answer.len() > SANDBOX_MAX_OUTPUT_BYTES {
            // Stop here: the caller kills the helper.
            return Err(SandboxError::Output {
                reason: "longer than the output cap",
            });
        }
        Ok(answer)
    };
    let last_words = async {
        let mut stderr = stderr;
        let kept = read_capped(&mut stderr, SANDBOX_MAX_STDERR_BYTES)
            .await
            .map_err(SandboxError::Io)?;
        // The rest is drained unread, so that a chatty helper never blocks on a full pipe.
        tokio::io::copy(&mut stderr, &mut tokio::io::sink())
            .await
            .map_err(SandboxError::Io)?;
        Ok(kept)
    };
    let ((), stdout, stderr) = tokio::try_join!(write, answer, last_words)?;
    let status = child.wait().await.map_err(SandboxError::Io)?;
    Ok(Ending {
        status,
        stdout,
        stderr,
    })
}

/// Up to `cap + 1` bytes (one past the cap tells "too long"); the rest is not read.
async fn read_capped(reader: impl AsyncRead + Unpin, cap: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    reader.take(cap as u64 + 1).read_to_end(&mut bytes).await?;
    Ok(bytes)
}

/// What the helper's ending means.
fn judge(ending: Ending) -> Result<Png64, IconError> {
    let Ending {
        status,
        stdout,
        stderr,
    } = ending;
    let said = String::from_utf8_lossy(&stderr);
    if status.success() {
        return checked_png(stdout).map_err(IconError::from);
    }
    match (status.code(), status.signal()) {
        (Some(code), _) if code == i32::from(EXIT_REFUSED) => Err(refusal(&stdout)?),
        (Some(code), _) if code == i32::from(EXIT_SETUP) => Err(SandboxError::Setup {
            message: said.trim().to_owned(),
        }
        .into()),
        // The soft CPU limit's signal, or the hard limit's kill a second later (the parent
        // kills only past the wall-clock budget, which it reports itself).
        (_, Some(signal)) if signal == Signal::XCPU.as_raw() || signal == Signal::KILL.as_raw() => {
            Err(IconError::OverBudget(Budget::CpuTime))
        }
        _ if said.contains(ALLOCATION_FAILED) => Err(IconError::OverBudget(Budget::Memory)),
        _ if said.contains(STACK_OVERFLOWED) => Err(IconError::OverBudget(Budget::Stack)),
        _ => Err(SandboxError::Crashed { status }.into()),
    }
}

/// The decoder's refusal, as the helper wrote it: its kind, a newline, its message.
fn refusal(stdout: &[u8]) -> Result<IconError, SandboxError> {
    let bad = SandboxError::Output {
        reason: "a refusal without a known kind",
    };
    let text = std::str::from_utf8(stdout).map_err(|_| SandboxError::Output {
        reason: "a refusal that is not text",
    })?;
    let (name, message) = text.split_once('\n').ok_or(bad)?;
    let kind = IconErrorKind::from_name(name).ok_or(SandboxError::Output {
        reason: "a refusal without a known kind",
    })?;
    Ok(IconError::Sandboxed {
        kind,
        message: message.to_owned(),
    })
}

/// The helper's PNG, checked to be one 64×64 PNG before it is trusted: read under limits
/// that allow nothing larger.
fn checked_png(bytes: Vec<u8>) -> Result<Png64, SandboxError> {
    let mut limits = Limits::default();
    limits.max_image_width = Some(ICON_SIZE);
    limits.max_image_height = Some(ICON_SIZE);
    limits.max_alloc = Some(SANDBOX_MAX_OUTPUT_PIXELS * 4 * 2);
    let mut reader = ImageReader::with_format(Cursor::new(&bytes), ImageFormat::Png);
    reader.limits(limits);
    let image = reader.decode().map_err(|_| SandboxError::Output {
        reason: "not a PNG within the output limits",
    })?;
    let pixels = u64::from(image.width()) * u64::from(image.height());
    if (image.width(), image.height()) != (ICON_SIZE, ICON_SIZE)
        || pixels > SANDBOX_MAX_OUTPUT_PIXELS
    {
        return Err(SandboxError::Output {
            reason: "not 64x64",
        });
    }
    Ok(Png64::from_checked(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_budgets_round_up_to_whole_seconds() {
        assert_eq!(whole_seconds(Duration::ZERO), 1);
        assert_eq!(whole_seconds(Duration::from_millis(1)), 1);
        assert_eq!(whole_seconds(Duration::from_secs(2)), 2);
        assert_eq!(whole_seconds(Duration::from_millis(2001)), 3);
    }

    #[test]
    fn refusals_are_read_by_kind() {
        let error = refusal(b"svg-too-complex\nthe SVG expands").expect("a refusal");
        assert_eq!(error.kind(), IconErrorKind::SvgTooComplex);
        assert_eq!(error.to_string(), "the SVG expands");
        assert!(refusal(b"no-such-kind\nx").is_err());
        assert!(refusal(b"\xff\xfe").is_err());
    }
}
