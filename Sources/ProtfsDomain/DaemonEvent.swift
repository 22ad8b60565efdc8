/// The kinds of event the daemon's log reports, each with an identity of its own in the
/// journal (`MESSAGE_ID`, docs/SYSTEMD.md), so that `journalctl` can select one kind.
public enum DaemonEvent: String, Sendable, CaseIterable {
    case mounted
    case locking
    case locked
    case unlocked
    case wrongPasscode
    /// A lock asked for through the control socket, with who asked.
    case lockRequested
    /// An unlock through the control socket, with who asked.
    case unlockRequested
    /// The auto-lock's idle time ran out.
    case autolock
    case damage
    case unmounted
}
