//! Reading a process tree's memory from `/proc` (Linux; elsewhere nothing is found).

use std::collections::HashMap;

/// The bytes of a memory page, as `/proc/PID/statm` counts them (4 KiB on the platforms the
/// crawler runs on).
const PAGE_BYTES: u64 = 4096;

/// True while process `pid` runs (it exists and is not a zombie waiting to be reaped).
pub(crate) fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|r| r.split_whitespace().next());
        !matches!(state, Some("Z" | "X" | "x"))
    })
}

/// Kill process `pid` (`SIGKILL`: it works on a stopped process too); a process already
/// gone is not an error.
pub(crate) fn kill(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
}

/// Memory of process `root` and every descendant of it: their proportional set sizes
/// (`Pss` of `/proc/PID/smaps_rollup`: a page shared by n processes counts 1/n in each), so
/// what Chromium's processes share (its binary, shared memory) is counted once, not once per
/// process as a sum of resident sizes would. A process whose `smaps_rollup` cannot be read
/// counts its resident size.
pub(crate) fn tree_memory_bytes(root: u32) -> u64 {
    tree_pids(root).into_iter().map(process_memory_bytes).sum()
}

/// Resident bytes of process `root` and every descendant of it, summed (what they share is
/// counted once per process).
#[cfg(test)]
pub(crate) fn tree_resident_bytes(root: u32) -> u64 {
    tree_pids(root).into_iter().filter_map(resident_bytes).sum()
}

/// The proportional set size of `pid`, else its resident size, else 0.
fn process_memory_bytes(pid: u32) -> u64 {
    let pss_kib = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|rollup| {
            rollup
                .lines()
                .find_map(|l| l.strip_prefix("Pss:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        });
    pss_kib
        .map(|kib| kib * 1024)
        .or_else(|| resident_bytes(pid))
        .unwrap_or(0)
}

/// The resident size of `pid` (`/proc/PID/statm`).
fn resident_bytes(pid: u32) -> Option<u64> {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).ok()?;
    let pages = statm.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(pages * PAGE_BYTES)
}

/// Process `root` and its descendants.
fn tree_pids(root: u32) -> Vec<u32> {
    let mut parent: HashMap<u32, u32> = HashMap::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // The command name may hold spaces and parentheses: fields follow the last ')'.
        let ppid = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parent.insert(pid, ppid);
        }
    }
    let in_tree = |mut pid: u32| {
        // Bounded: a parent chain is short, and a cycle cannot loop forever.
        for _ in 0..64 {
            if pid == root {
                return true;
            }
            match parent.get(&pid) {
                Some(&p) if p != pid => pid = p,
                _ => return false,
            }
        }
        false
    };
    parent.keys().copied().filter(|&pid| in_tree(pid)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_resident_memory() {
        assert!(tree_resident_bytes(std::process::id()) > 0);
        assert_eq!(tree_resident_bytes(u32::MAX), 0);
        let shared_once = tree_memory_bytes(std::process::id());
        assert!(shared_once > 0);
        // Shared pages count a share each: never more than the resident size.
        assert!(shared_once <= tree_resident_bytes(std::process::id()) + 64 * 1024 * 1024);
        assert_eq!(tree_memory_bytes(u32::MAX), 0);
        assert!(running(std::process::id()));
        assert!(!running(u32::MAX));
    }
}
