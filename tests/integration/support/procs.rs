//! Other processes as /proc shows them (Linux): a process's state and the children a process
//! started, for the tests of a parent's children (calibrate's, check's).

/// A process's state letter from /proc (R, S, T for stopped, Z), None once it is gone.
pub fn proc_state(pid: u32) -> Option<char> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.chars().next()
}

/// Whether the process has ended: gone, or a zombie no one has reaped yet (an orphan whose
/// new parent, PID 1 in a container, may never reap it).
pub fn ended(pid: u32) -> bool {
    proc_state(pid).is_none_or(|s| s == 'Z')
}

/// The PIDs whose parent is `parent`, from /proc.
pub fn children_of(parent: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    s.rsplit_once(") ")?
                        .1
                        .split(' ')
                        .nth(1)?
                        .parse::<u32>()
                        .ok()
                })
                == Some(parent)
        })
        .collect()
}
