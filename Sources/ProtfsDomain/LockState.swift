/// The lock states of docs/CLASSES.md.
public enum LockState: String, CaseIterable, Sendable, Hashable, Codable {
    /// Mounted, and no passcode entered since mount.
    case beforeFirstUnlock
    /// Every class key in memory.
    case unlocked
    /// Lock requested; the `complete` key is kept for the grace period.
    case locking
    /// After first unlock; `complete` key and `completeUnlessOpen` private key wiped.
    case locked
}
