import Glibc

/// The kernel's `in_group_or_capable` for a caller: whether it is in a file's group or holds
/// CAP_FSETID, which decides whether a write, truncate, chown or chmod drops the file's
/// set-group-ID bit. A request carries the caller's uid, gid and pid only: supplementary
/// groups and capabilities are read from /proc/PID/status, and capabilities count only for a
/// process of the daemon's own user namespace (they are relative to the caller's). Read after
/// the fact, the pid may name another process by then; the answer only decides whether a bit
/// is dropped, never grants access, and when the process is gone the bit goes.
public enum CallerCredentials {
    public static func isInGroupOrCapable(_ caller: Caller, group: gid_t) -> Bool {
        if caller.gid == group { return true }
        if ProcessStatus.of(caller.pid)?.groups.contains(group) == true { return true }
        return ProcessStatus.holds(ProcessStatus.fsetid, caller.pid)
    }
}
