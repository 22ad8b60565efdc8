/// What the follower makes of the signals it receives: whom it obeys, which lock a signal
/// calls for, and what it learns of logind (its current unique name, the followed session,
/// that session's `LockedHint`). Knows no bus and no vault: `Follower` does what it answers.
struct SignalPolicy {
    /// logind's unique name on the system bus (`GetNameOwner`, then the driver's
    /// `NameOwnerChanged`): the only sender whose logind signals are obeyed.
    var logindOwner: String?
    /// The followed session's object path.
    var sessionPath: String?
    var lockedHint = false

    /// What an obeyed signal calls for.
    enum Response: Equatable {
        /// Lock with the mount's grace (a screen lock), for the reason given.
        case lockWithGrace(because: String)
        /// Lock at once and let the machine sleep after.
        case lockBeforeSleep
        /// The machine woke up: hold a new sleep inhibitor.
        case woke
        /// logind left the system bus (its name has no owner).
        case logindLeft
        /// logind has a new unique name: find the session and take the inhibitor again.
        case logindReplaced
        case ignored(why: String)
    }

    /// Whether the signal comes from who may send it: a broadcast (a signal addressed to this
    /// connection alone comes from whoever chose to send it), from the bus driver for
    /// `NameOwnerChanged`, from logind's current unique name for the rest of the system bus,
    /// and only `ActiveChanged` from the session bus (the user's own). Anything else is
    /// dropped unlogged: any user may send it, as often as they like.
    func mayObey(_ received: ReceivedSignal) -> Bool {
        guard !received.unicast else { return false }
        switch (received.bus, received.signal) {
        case (.session, .screenSaverActive), (.session, .malformed): return true
        case (.session, _): return false
        case (.system, .nameOwnerChanged): return received.sender == BusDriver.name
        case (.system, .screenSaverActive): return false
        case (.system, _): return logindOwner != nil && received.sender == logindOwner
        }
    }

    /// The response to `received`, nil when it calls for none. `readLockedHint` asks logind
    /// for the session's hint when a change only invalidated it.
    mutating func respond(to received: ReceivedSignal, readLockedHint: (String) -> Bool?) -> Response? {
        guard mayObey(received) else { return nil }
        switch received.signal {
        case .sessionLock(let path) where path == sessionPath:
            return .lockWithGrace(because: "the session locked its screen (Lock)")
        case .sessionProperties(let path, let hint, let invalidated) where path == sessionPath:
            var now = hint
            if now == nil && invalidated { now = readLockedHint(path) }
            guard let now else { return nil }
            defer { lockedHint = now }
            return now && !lockedHint ? .lockWithGrace(because: "the session's LockedHint became true") : nil
        case .screenSaverActive(true):
            return .lockWithGrace(because: "the screen saver became active (ActiveChanged)")
        case .prepareForSleep(true):
            return .lockBeforeSleep
        case .prepareForSleep(false):
            return .woke
        case .nameOwnerChanged(Logind.name, let owner):
            logindOwner = owner.isEmpty ? nil : owner
            return owner.isEmpty ? .logindLeft : .logindReplaced
        case .malformed(let why):
            return .ignored(why: why)
        default:
            return nil
        }
    }
}
