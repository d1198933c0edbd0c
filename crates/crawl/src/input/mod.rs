//! The small text inputs of `jittybot crawl`: durations, a hosts(5) file, the `--origins` file
//! and seeds files. Every error names the line.

mod duration;
mod files;

pub use duration::{format_duration, parse_duration, DurationError, MAX_DURATION};
pub(crate) use files::each_line;
pub use files::{
    parse_hosts, parse_origins, read_seeds, HostPattern, HostsPin, InputError, InputErrorKind,
    OriginRule, MAX_LINE_BYTES,
};
