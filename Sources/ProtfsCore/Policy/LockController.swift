import Dispatch
import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// What the lock transition needs from the kernel side: writing back and dropping the cached
/// pages of the nodes it selects (the FUSE adapter implements it with
/// `fuse_lowlevel_notify_inval_inode`). Called from the controller's own thread, which holds
/// no lock a request needs, so the write requests the kernel sends meanwhile are served.
public protocol KernelPageCache: Sendable {
    func dropPages(where selected: (any CachedNode) -> Bool)
}

/// What the transition selects a node by (the filesystem's backing nodes are such): the class
/// of the file as its header was last read (nil for a directory, a symlink, or a file whose
/// header no request has read), and whether a handle of it is open.
public protocol CachedNode: AnyObject, Sendable {
    var cachedProtectionClass: ProtectionClass? { get }
    var hasOpenHandles: Bool { get }
}

/// What the lock transition needs from the filesystem: forgetting the per-file keys of the
/// open files of a class (the vault filesystem implements it). Called with no request in
/// flight.
public protocol ContentKeyHolder: AnyObject, Sendable {
    func dropContentKeys(of protectionClass: ProtectionClass)
}

/// Decides, request by request, what the lock state allows, and carries out the
/// transitions and the lock sequence of docs/CLASSES.md.
///
/// Every content request holds the state shared from its policy check to the end of its
/// crypto. A transition takes it exclusively only to flip the phase and drop keys (so a key
/// is never wiped under a request using it), never across a cache drop.
public final class LockController: Sendable {
    /// The controller's own view: `sealing` is the end of the grace (shown as `locking`),
    /// when `complete` files take writes (the kernel's write-back) but no reads or opens.
    enum Phase: Equatable {
        case beforeFirstUnlock
        case unlocked
        case locking(deadline: MonotonicInstant)
        case sealing
        case locked

        var state: LockState {
            switch self {
            case .beforeFirstUnlock: .beforeFirstUnlock
            case .unlocked: .unlocked
            case .locking, .sealing: .locking
            case .locked: .locked
            }
        }
    }

    /// How long `complete` stays available after a lock starts.
    public let grace: Duration
    /// How long without a request before the vault locks by itself; zero: never.
    public let autolock: Duration
    private let gate = ReadWriteLock()
    private let phase: Mutex<Phase>
    /// Serialises transitions (unlock, lock start, the end of the grace) with one another.
    private let transitions = Mutex<Void>(())
    private let queue = DispatchQueue(label: "protfs.lock-controller")
    /// The latest request's `MonotonicInstant`, as its nanoseconds (what an `Atomic` holds).
    private let lastActivity = Atomic<UInt64>(0)
    private let listeners = Mutex<[UInt64: @Sendable (LockEvent) -> Bool]>([:])
    private let nextListener = Atomic<UInt64>(0)
    private let waiters = Mutex<[DispatchSemaphore]>([])
    private let cache = Mutex<(any KernelPageCache)?>(nil)
    /// Weak: the filesystem holds the controller, and the controller needs the filesystem
    /// only while it lives.
    private let contentKeys = Mutex(WeakContentKeys())
    private struct WeakContentKeys { weak var holder: (any ContentKeyHolder)? }
    private let vault: Vault

    public init(vault: Vault, initialState: LockState, grace: Duration, autolock: Duration) {
        self.vault = vault
        self.grace = grace
        self.autolock = autolock
        phase = Mutex(initialState == .unlocked ? .unlocked : .beforeFirstUnlock)
        noteActivity()
    }

    /// Connects the pieces that exist only once the mount does.
    public func attach(contentKeys: any ContentKeyHolder, cache: any KernelPageCache) {
        self.contentKeys.withLock { $0.holder = contentKeys }
        self.cache.withLock { $0 = cache }
        if autolock > .zero { scheduleAutolockCheck(after: autolock) }
    }

    public var state: LockState { phase.withLock { $0.state } }

    /// Seconds left in the grace period while `locking`.
    public var graceSecondsLeft: Int? {
        guard case .locking(let deadline) = phase.withLock({ $0 }) else { return nil }
        return deadline.duration(since: .now).secondsRoundedUp
    }

    // MARK: requests

    /// What the lock allows while a request holds the state shared: the phase cannot change
    /// until the hold ends. Every check goes through here, so the end of the grace (`sealing`,
    /// reported as `locking`) is applied alike to every kind of request.
    public struct HeldState: Sendable {
        fileprivate let phase: Phase

        public var state: LockState { phase.state }

        /// `EACCES` unless `access` to a file of `protectionClass` is allowed now. `writing`
        /// matters only at the end of the grace, when `complete` files accept the kernel's
        /// write-back and nothing else.
        public func check(_ access: ContentAccess, of protectionClass: ProtectionClass, writing: Bool = false) throws(Errno) {
            if phase == .sealing && protectionClass == .complete {
                guard access == .useOpenHandle && writing || access == .metadata else { throw .permissionDenied }
            } else {
                try AccessPolicy.check(access, of: protectionClass, in: phase.state)
            }
        }

        /// `EACCES` unless a file may move from `old` to `new` now. At the end of the grace no
        /// file moves out of `complete` (it would escape the wipe) or into it.
        public func checkReclass(from old: ProtectionClass, to new: ProtectionClass) throws(Errno) {
            if phase == .sealing && (old == .complete || new == .complete) { throw .permissionDenied }
            guard AccessPolicy.reclassDecision(from: old, to: new, in: phase.state).isAllowed else { throw .permissionDenied }
        }
    }

    /// Runs `body` with the state held shared; `body` gets what the state allows.
    public func withSharedHold<R, E: Error>(_ body: (HeldState) throws(E) -> R) throws(E) -> R {
        try gate.withShared { () throws(E) -> R in try body(HeldState(phase: phase.withLock { $0 })) }
    }

    /// Checks `access` for `protectionClass` and runs `body` under the same shared hold.
    public func perform<R>(_ access: ContentAccess, on protectionClass: ProtectionClass, writing: Bool = false,
                           _ body: () throws(Errno) -> R) throws(Errno) -> R {
        try perform([(access, protectionClass)], writing: writing, body)
    }

    /// Checks every `(access, class)` pair (a keychain item changing its accessibility needs
    /// its old class and its new one) and runs `body` under one shared hold.
    public func perform<R>(_ accesses: [(ContentAccess, ProtectionClass)], writing: Bool = false,
                           _ body: () throws(Errno) -> R) throws(Errno) -> R {
        try withSharedHold { (held) throws(Errno) -> R in
            for (access, protectionClass) in accesses {
                try held.check(access, of: protectionClass, writing: writing)
            }
            return try body()
        }
    }

    /// Every request that reaches the daemon counts as activity for auto-lock.
    public func noteActivity() { lastActivity.store(MonotonicInstant.now.nanosecondsSinceStart, ordering: .relaxed) }

    // MARK: transitions

    /// `unlock`: from any state to `unlocked` (cancelling a lock in progress). `passcode` is
    /// nil for a vault without one, whose keys the device opens.
    public func unlock(passcode: SecureBuffer?) throws(VaultError) {
        // Argon2id, outside every lock
        if let passcode { unlock(installing: try vault.verifyPasscode(passcode)) } else {
            unlock(installing: try vault.classKeysWithoutPasscode())
        }
    }

    /// The transition itself, with keys the passcode has opened.
    func unlock(installing keys: PasscodeClassKeys) {
        transitions.withLock { _ in
            vault.install(keys)
            gate.withExclusive { phase.withLock { $0 = .unlocked } }
        }
        noteActivity()
        announce(.didBecomeAvailable)
        wakeWaiters()
    }

    /// `lock`: from `unlocked` to `locking` (the grace period), or straight through to
    /// `locked` with `now`. Returns once the request is satisfied.
    public func lock(_ request: LockRequest) {
        let started: Bool = transitions.withLock { _ in
            switch phase.withLock({ $0 }) {
            case .unlocked:
                let deadline = MonotonicInstant.now.advanced(by: request == .now ? .zero : grace)
                gate.withExclusive { phase.withLock { $0 = .locking(deadline: deadline) } }
                return true
            default:
                return false
            }
        }
        if started {
            announce(.willBecomeUnavailable)
            if request != .now && grace > .zero {
                queue.asyncAfter(deadline: .now() + .nanoseconds(Int(grace.wholeNanoseconds))) { [self] in
                    endGrace(ifDeadlinePassed: true)
                }
            }
        }
        switch request {
        case .normal:
            if started && grace == .zero { queue.async { [self] in endGrace(ifDeadlinePassed: true) } }
        case .now:
            queue.sync { endGrace(ifDeadlinePassed: false) }
        case .wait:
            if grace == .zero { queue.async { [self] in endGrace(ifDeadlinePassed: true) } }
            waitUntilLockedOrUnlocked()
        }
    }

    /// The end of the grace period (docs/CLASSES.md, steps 1-4). Runs on the controller's
    /// queue; gives up as soon as an unlock has intervened.
    private func endGrace(ifDeadlinePassed: Bool) {
        transitions.withLock { _ in
            // Step 1: `complete` stops serving reads and opens; write-back still lands.
            let proceed: Bool = gate.withExclusive {
                phase.withLock { p in
                    guard case .locking(let deadline) = p else { return false }
                    if ifDeadlinePassed && deadline > .now { return false }
                    p = .sealing
                    return true
                }
            }
            guard proceed else { return }
            let cache = self.cache.withLock { $0 }
            let contentKeys = self.contentKeys.withLock { $0.holder }
            // Step 2: the kernel writes dirty pages back through ordinary write requests and
            // drops every cached page of `complete` files.
            cache?.dropPages { $0.cachedProtectionClass == .complete }
            // Step 3: no request in flight; wipe the class keys and the per-file keys.
            gate.withExclusive {
                wipeKeys(contentKeys)
                phase.withLock { $0 = .locked }
            }
            // Step 4: drop again whatever was read in between, and the pages of closed
            // `completeUnlessOpen` files.
            cache?.dropPages { node in
                switch node.cachedProtectionClass {
                case .complete: true
                case .completeUnlessOpen: !node.hasOpenHandles
                default: false
                }
            }
        }
        guard state == .locked else { return }
        announce(.didBecomeUnavailable)
        wakeWaiters()
    }

    /// Step 3's wipe: the class keys leave the keyring, the open `complete` files drop their
    /// per-file keys and with them their key schedules, and then the census must count none. With no request in flight, a key
    /// still alive is a reference kept where none may be: a bug that breaks the one promise of
    /// the class. The daemon stops then, in every build, rather than call itself locked with
    /// a key in memory: its memory goes back to the kernel, the mount fails visibly, and
    /// nothing written is lost (step 2 has written the dirty pages back).
    private func wipeKeys(_ contentKeys: (any ContentKeyHolder)?) {
        vault.keyring.remove([.complete, .completeUnlessOpen])
        contentKeys?.dropContentKeys(of: .complete)
        let left = vault.keyring.fileKeys.count(of: .complete)
        precondition(left == 0, "\(left) per-file keys of complete files outlived the lock's wipe")
        let schedules = vault.keyring.fileKeys.keySchedules(of: .complete)
        precondition(schedules == 0, "\(schedules) key schedules of complete files outlived the lock's wipe")
    }

    /// A `completeUnlessOpen` file's last handle closed while locked: its pages go too.
    public func closedWhileLocked(_ node: any CachedNode) {
        queue.async { [self] in
            guard state == .locked else { return }
            cache.withLock { $0 }?.dropPages { $0 === node }
        }
    }

    // MARK: auto-lock

    /// Told the idle time each time the auto-lock starts a lock, for the daemon's log.
    private let autolockObserver = Mutex<(@Sendable (Duration) -> Void)?>(nil)

    public func observeAutolock(_ observer: @escaping @Sendable (_ idle: Duration) -> Void) {
        autolockObserver.withLock { $0 = observer }
    }

    private func scheduleAutolockCheck(after delay: Duration) {
        let wait = max(delay, .seconds(1))
        queue.asyncAfter(deadline: .now() + .nanoseconds(Int(wait.wholeNanoseconds))) { [self] in
            // A request may stamp its activity between the two reads, later than `now`: that is
            // no idleness at all (`duration(since:)` is then zero).
            let last = MonotonicInstant(nanosecondsSinceStart: lastActivity.load(ordering: .relaxed))
            let idle = MonotonicInstant.now.duration(since: last)
            if idle >= autolock && state == .unlocked {
                autolockObserver.withLock { $0 }?(idle)
                queue.async { [self] in lock(.normal) }
                scheduleAutolockCheck(after: autolock)
            } else {
                scheduleAutolockCheck(after: autolock - min(idle, autolock))
            }
        }
    }

    // MARK: events and waiting

    /// Calls `listener` with every later event until it returns false; returns the state at
    /// the moment of subscribing.
    public func watch(_ listener: @escaping @Sendable (LockEvent) -> Bool) -> LockState {
        let id = nextListener.add(1, ordering: .relaxed).newValue
        return transitions.withLock { _ in
            listeners.withLock { $0[id] = listener }
            return state
        }
    }

    private func announce(_ event: LockEvent) {
        let current = listeners.withLock { $0 }
        for (id, listener) in current where !listener(event) {
            listeners.withLock { $0[id] = nil }
        }
    }

    private func waitUntilLockedOrUnlocked() {
        while true {
            let semaphore = DispatchSemaphore(value: 0)
            waiters.withLock { $0.append(semaphore) }
            let current = state
            if current != .locking { return }
            semaphore.wait()
        }
    }

    private func wakeWaiters() {
        for semaphore in waiters.withLock({ w in defer { w.removeAll() }; return w }) { semaphore.signal() }
    }
}
