/// What the lock controller announces (`protfsctl watch`), after UIKit's protected-data
/// notifications.
public enum LockEvent: String, Sendable, Codable, CaseIterable {
    /// A lock started: the grace period runs.
    case willBecomeUnavailable
    /// The grace period ended: `complete` data is unavailable.
    case didBecomeUnavailable
    /// The passcode was entered.
    case didBecomeAvailable
}

/// What `protfsctl lock` asks for (docs/CLASSES.md).
public enum LockRequest: String, Sendable, Codable, CaseIterable {
    /// Start the grace period and return once the state is `locking`.
    case normal
    /// Return once the state is `locked`.
    case wait
    /// Skip (or end) the grace period.
    case now
}
