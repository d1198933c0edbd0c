//! Who holds a lease, and whether that holder can be proven dead.
//!
//! A [`Holder`] is an opaque random token (what lease columns store) plus, for a process that
//! can name itself reliably, its [`ProcessIdentity`]: the machine and boot it runs on, its PID
//! namespace, its process id and the time it started. The identity is stored as typed columns
//! of the `db_holders` table ([`crate::Db::register_holder`]), never parsed back out of the
//! token.
//!
//! A process may free another holder's leases before they expire only when it can *prove*
//! that holder dead ([`ProcessIdentity::liveness`]): same machine, same boot, same PID
//! namespace (so a process id means the same process to both), and that process id is not
//! running or belongs to a process started at another time (a reused id). Anything else — a
//! holder of another machine, of another container on this one, of an earlier boot, a holder
//! without an identity, a lease written by an older build — is not provably dead: its leases
//! expire.

use std::fmt;
use std::path::Path;
use std::sync::OnceLock;

/// Where the Linux machine id is read from (systemd's `machine-id(5)`).
pub const MACHINE_ID_PATH: &str = "/etc/machine-id";
/// Where the kernel's boot id (a random UUID drawn at every boot) is read from.
pub const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";
/// The process file system the liveness of a process id is read from.
pub const PROC_ROOT: &str = "/proc";

/// Identifies one holder of leases: a process, or one worker of it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Holder {
    token: String,
    process: Option<ProcessIdentity>,
}

impl Holder {
    /// A new holder for this process: a random token, with this process's identity when it
    /// can be read ([`ProcessIdentity::current`]).
    pub fn new() -> Holder {
        Holder {
            token: uuid::Uuid::new_v4().simple().to_string(),
            process: ProcessIdentity::current().cloned(),
        }
    }

    /// A holder with a given token and no identity (tests, or an operator-chosen worker
    /// name): its leases are never freed early, they expire.
    pub fn named(name: impl Into<String>) -> Holder {
        Holder {
            token: name.into(),
            process: None,
        }
    }

    /// A holder with a given token and identity (tests of the liveness rules).
    pub fn with_identity(name: impl Into<String>, process: ProcessIdentity) -> Holder {
        Holder {
            token: name.into(),
            process: Some(process),
        }
    }

    /// The token as stored in lease columns.
    pub fn as_str(&self) -> &str {
        &self.token
    }

    /// The process holding, when it could name itself reliably.
    pub fn process(&self) -> Option<&ProcessIdentity> {
        self.process.as_ref()
    }
}

impl Default for Holder {
    fn default() -> Self {
        Holder::new()
    }
}

impl fmt::Display for Holder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.process {
            Some(p) => write!(f, "{} ({p})", self.token),
            None => write!(f, "{} (no process identity)", self.token),
        }
    }
}

/// Where process ids mean one thing: a machine, one boot of it, one PID namespace.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostIdentity {
    /// `/etc/machine-id` (32 hex digits), when the machine has one.
    pub machine_id: Option<String>,
    /// The boot id (a UUID, random per boot): same boot id, same running kernel.
    pub boot_id: String,
    /// The inode of the PID namespace (`/proc/self/ns/pid`): containers and `unshare -p` give
    /// processes of one kernel their own process ids.
    pub pid_namespace: u64,
}

/// One process, named so that no other process (on any machine, in any container, after a
/// reboot or a reused process id) has the same name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcessIdentity {
    /// The machine, boot and PID namespace it runs in.
    pub host: HostIdentity,
    /// Its process id in that namespace.
    pub pid: u32,
    /// When it started, in clock ticks after boot (`/proc/PID/stat` field 22): a later
    /// process given the same id has another start time.
    pub started: u64,
}

impl fmt::Display for ProcessIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "pid {} started at tick {} in PID namespace {} of boot {} of machine {}",
            self.pid,
            self.started,
            self.host.pid_namespace,
            self.host.boot_id,
            self.host.machine_id.as_deref().unwrap_or("(none)")
        )
    }
}

/// Why this process cannot name itself reliably (it then frees no one's leases).
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// A file that names the machine or the process could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file was read but does not hold what it should.
    #[error("{path} does not hold {what}")]
    Malformed {
        /// The file.
        path: String,
        /// What was expected.
        what: &'static str,
    },
    /// `/proc` shows another PID namespace than this process's (a container sharing the
    /// host's `/proc`): process ids read there are not this process's.
    #[error("{PROC_ROOT} belongs to another PID namespace than this process")]
    ForeignProc,
}

/// What can be proven about a holder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// It runs (or it is the asking process).
    Alive,
    /// It is proven gone: its process id is free, or taken by a process started later, on
    /// this machine, boot and PID namespace.
    Dead,
    /// Nothing can be proven (another machine, boot or namespace): wait for its leases to
    /// expire.
    Unknown,
}

impl ProcessIdentity {
    /// This process's identity, read once; `None` (with a warning in the log, once) when it
    /// cannot be read reliably.
    pub fn current() -> Option<&'static ProcessIdentity> {
        static CURRENT: OnceLock<Option<ProcessIdentity>> = OnceLock::new();
        CURRENT
            .get_or_init(|| match ProcessIdentity::read(Path::new(PROC_ROOT)) {
                Ok(identity) => Some(identity),
                Err(error) => {
                    tracing::warn!(
                        error = %error,
                        cause = ?std::error::Error::source(&error).map(ToString::to_string),
                        "this process cannot name its machine reliably: it will free no \
                         lease of another process early (leases expire instead)"
                    );
                    None
                }
            })
            .as_ref()
    }

    /// Reads this process's identity from `proc_root` (normally [`PROC_ROOT`]),
    /// [`MACHINE_ID_PATH`] and [`BOOT_ID_PATH`].
    pub fn read(proc_root: &Path) -> Result<ProcessIdentity, IdentityError> {
        let boot_id = read_text(Path::new(BOOT_ID_PATH))?;
        if !is_uuid(&boot_id) {
            return Err(IdentityError::Malformed {
                path: BOOT_ID_PATH.into(),
                what: "a UUID",
            });
        }
        // A machine without a machine id (some container images) is still named by its boot
        // id; an unreadable or uninitialised one is simply not recorded.
        let machine_id = read_text(Path::new(MACHINE_ID_PATH))
            .ok()
            .filter(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()));
        let pid = std::process::id();
        let own = proc_root.join("self");
        let shown = std::fs::read_link(&own).map_err(|source| IdentityError::Read {
            path: own.display().to_string(),
            source,
        })?;
        if shown.to_str() != Some(pid.to_string().as_str()) {
            return Err(IdentityError::ForeignProc);
        }
        let ns_path = proc_root.join("self/ns/pid");
        let ns = std::fs::read_link(&ns_path).map_err(|source| IdentityError::Read {
            path: ns_path.display().to_string(),
            source,
        })?;
        let pid_namespace = ns
            .to_str()
            .and_then(|s| s.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok())
            .ok_or(IdentityError::Malformed {
                path: ns_path.display().to_string(),
                what: "pid:[INODE]",
            })?;
        let started = match process_start(proc_root, pid) {
            ProcStat::Running { started } => started,
            ProcStat::Gone | ProcStat::Unreadable => {
                return Err(IdentityError::Malformed {
                    path: proc_root
                        .join(pid.to_string())
                        .join("stat")
                        .display()
                        .to_string(),
                    what: "this process's start time",
                })
            }
        };
        Ok(ProcessIdentity {
            host: HostIdentity {
                machine_id,
                boot_id,
                pid_namespace,
            },
            pid,
            started,
        })
    }

    /// Whether the process `self` names is alive, as far as `me` (the asking process, whose
    /// `/proc` is `proc_root`) can prove.
    pub fn liveness(&self, me: &ProcessIdentity, proc_root: &Path) -> Liveness {
        if self.host != me.host {
            return Liveness::Unknown;
        }
        if self.pid == me.pid {
            return if self.started == me.started {
                Liveness::Alive
            } else {
                Liveness::Dead
            };
        }
        match process_start(proc_root, self.pid) {
            ProcStat::Gone => Liveness::Dead,
            ProcStat::Running { started } if started != self.started => Liveness::Dead,
            ProcStat::Running { .. } => Liveness::Alive,
            ProcStat::Unreadable => Liveness::Unknown,
        }
    }
}

/// What `/proc/PID/stat` says of a process id.
enum ProcStat {
    /// No such process (or only its zombie: it has exited and holds nothing any more).
    Gone,
    /// A process runs under that id, started at this tick.
    Running { started: u64 },
    /// The file exists but could not be read or understood: prove nothing.
    Unreadable,
}

fn process_start(proc_root: &Path, pid: u32) -> ProcStat {
    let path = proc_root.join(pid.to_string()).join("stat");
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return ProcStat::Gone,
        // ESRCH: the process exited between the directory lookup and the read.
        Err(e) if e.raw_os_error() == Some(3) => return ProcStat::Gone,
        Err(_) => return ProcStat::Unreadable,
    };
    // `pid (comm) state ppid ...`: the command name may hold spaces and parentheses, so the
    // fields are counted after its last ')'. Field 3 (state) is the first, 22 (starttime) the
    // twentieth.
    let Some(rest) = text.rsplit_once(')').map(|(_, rest)| rest) else {
        return ProcStat::Unreadable;
    };
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next();
    let started = fields.nth(18).and_then(|s| s.parse::<u64>().ok());
    match (state, started) {
        (Some("Z" | "X" | "x"), _) => ProcStat::Gone,
        (Some(_), Some(started)) => ProcStat::Running { started },
        _ => ProcStat::Unreadable,
    }
}

fn read_text(path: &Path) -> Result<String, IdentityError> {
    let text = std::fs::read_to_string(path).map_err(|source| IdentityError::Read {
        path: path.display().to_string(),
        source,
    })?;
    Ok(text.trim().to_ascii_lowercase())
}

fn is_uuid(text: &str) -> bool {
    text.len() == 36
        && text.char_indices().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => c == '-',
            _ => c.is_ascii_hexdigit(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> ProcessIdentity {
        ProcessIdentity::read(Path::new(PROC_ROOT)).expect("this test runs on Linux with /proc")
    }

    #[test]
    fn this_process_names_itself_and_is_alive() {
        let me = me();
        assert_eq!(me.pid, std::process::id());
        assert!(me.started > 0);
        assert!(is_uuid(&me.host.boot_id), "{}", me.host.boot_id);
        assert_eq!(me.liveness(&me, Path::new(PROC_ROOT)), Liveness::Alive);
        assert_eq!(ProcessIdentity::current(), Some(&me));
        assert_eq!(Holder::new().process(), Some(&me));
    }

    #[test]
    fn a_process_is_dead_when_its_id_is_free_or_reused_and_unknown_elsewhere() {
        let me = me();
        let proc_root = Path::new(PROC_ROOT);
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .expect("sleep runs");
        let ProcStat::Running { started } = process_start(proc_root, child.id()) else {
            panic!("the child runs");
        };
        let other = ProcessIdentity {
            pid: child.id(),
            started,
            ..me.clone()
        };
        assert_eq!(other.liveness(&me, proc_root), Liveness::Alive);
        // The same id with another start time: the id was reused, the holder is gone.
        let earlier = ProcessIdentity {
            started: started - 1,
            ..other.clone()
        };
        assert_eq!(earlier.liveness(&me, proc_root), Liveness::Dead);
        // Another machine, boot or PID namespace: nothing is proven, whatever /proc shows.
        for host in [
            HostIdentity {
                machine_id: Some("0".repeat(32)),
                ..me.host.clone()
            },
            HostIdentity {
                boot_id: "00000000-0000-0000-0000-000000000000".into(),
                ..me.host.clone()
            },
            HostIdentity {
                pid_namespace: me.host.pid_namespace + 1,
                ..me.host.clone()
            },
        ] {
            let elsewhere = ProcessIdentity {
                host,
                ..earlier.clone()
            };
            assert_eq!(elsewhere.liveness(&me, proc_root), Liveness::Unknown);
        }
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(other.liveness(&me, proc_root), Liveness::Dead, "reaped");
        // This process under an earlier start time: an earlier process with the same id.
        let before_me = ProcessIdentity {
            started: me.started - 1,
            ..me.clone()
        };
        assert_eq!(before_me.liveness(&me, proc_root), Liveness::Dead);
    }

    #[test]
    fn a_proc_of_another_namespace_gives_no_identity() {
        let dir = tempfile::tempdir().unwrap();
        // /proc/self pointing at another process id, as in a container sharing the host's
        // /proc.
        std::os::unix::fs::symlink("1", dir.path().join("self")).unwrap();
        if std::process::id() != 1 {
            assert!(matches!(
                ProcessIdentity::read(dir.path()),
                Err(IdentityError::ForeignProc)
            ));
        }
    }

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let dir = tempfile::tempdir().unwrap();
        let stat = |pid: u32, text: &str| {
            std::fs::create_dir_all(dir.path().join(pid.to_string())).unwrap();
            std::fs::write(dir.path().join(pid.to_string()).join("stat"), text).unwrap();
        };
        // A command name with spaces and a ')' in it.
        let tail = "1 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 123456 1000 10";
        stat(7, &format!("7 (a) b (c) S {tail}"));
        stat(8, &format!("8 (zombie) Z {tail}"));
        stat(9, "9 (cut");
        assert!(matches!(
            process_start(dir.path(), 7),
            ProcStat::Running { started: 123456 }
        ));
        assert!(matches!(process_start(dir.path(), 8), ProcStat::Gone));
        assert!(matches!(process_start(dir.path(), 9), ProcStat::Unreadable));
        assert!(matches!(process_start(dir.path(), 10), ProcStat::Gone));
    }
}
