import Glibc
import ProtfsControlProtocol
import ProtfsDomain
import ProtfsSystem

/// `protfsctl follow`: locks a vault when the session's screen locks (with the mount's grace)
/// and before the machine sleeps (at once, holding sleep back with a logind delay inhibitor
/// until the vault is `locked`). One thread, one poll loop over the system bus, the session
/// bus and the daemon's event stream; buses and logind that go away are reached again with
/// a backoff. Returns when the mount goes away. Obeys only broadcasts whose sender may say
/// them: logind's current unique name, the bus driver, the user's own session bus.
public final class Follower {
    private let vault: FollowedVault
    private let explicitSession: String?
    private let triggers: FollowTriggers
    private let log: (String) -> Void

    private var system: Bus?
    private var systemRetry = Retry()
    private var session: Bus?
    private var sessionRetry = Retry()
    /// Whether logind answered since the system bus connected (or logind restarted).
    private var logindAttached = false
    /// logind's unique name on the system bus (`GetNameOwner`, then the driver's
    /// `NameOwnerChanged`): the only sender whose logind signals are obeyed.
    private var logindOwner: String?
    private var logindRetry = Retry()
    private var sessionPath: String?
    private var lockedHint = false
    private var inhibitor = SleepInhibitor()
    private var pending: [ReceivedSignal] = []

    public init(vault: FollowedVault, session: String?, triggers: FollowTriggers, log: @escaping (String) -> Void) {
        self.vault = vault
        explicitSession = session
        self.triggers = triggers
        self.log = log
    }

    /// Follows until the mount goes away. Throws only when following cannot start.
    public func run() throws(Errno) {
        let streamEnded = try StreamEndSignal()
        try vault.signalWhenStreamEnds(to: streamEnded)
        log("following \(vault.mountpoint) on \(triggers.description)")
        while true {
            connectWhereDue()
            process()
            if try mountWentAway(streamEnded) { break }
            wait(streamEnded)
        }
        inhibitor.release()
        log("\(vault.mountpoint) is no longer mounted; stopping")
    }

    // MARK: connections

    private func connectWhereDue() {
        let now = MonotonicInstant.now
        if system == nil && systemRetry.isDue(now) { connectSystem() }
        if system != nil && !logindAttached && logindRetry.isDue(now) { attachLogind() }
        if triggers.contains(.screenLock) && session == nil && sessionRetry.isDue(now) { connectSession() }
    }

    private func connectSystem() {
        do {
            let bus = try Bus(.system) { [unowned self] in pending.append($0) }
            try bus.match(sender: BusDriver.name, path: BusDriver.path, interface: BusDriver.name,
                          member: "NameOwnerChanged", arg0: Logind.name)
            if triggers.contains(.sleep) {
                try bus.match(sender: Logind.name, path: Logind.managerPath, interface: Logind.managerInterface, member: "PrepareForSleep")
            }
            if triggers.contains(.screenLock) {
                // Any session's signals; only the followed one's are obeyed (its path can
                // change when logind restarts).
                try bus.match(sender: Logind.name, interface: Logind.sessionInterface, member: "Lock")
                try bus.match(sender: Logind.name, interface: Logind.propertiesInterface, member: "PropertiesChanged",
                              arg0: Logind.sessionInterface)
            }
            system = bus
            systemRetry.succeeded(log, "connected to the system bus")
            logindAttached = false
            logindRetry = Retry()
            attachLogind()
        } catch {
            systemRetry.failed(log, error.description)
        }
    }

    /// Finds the session and takes the sleep inhibitor: at connection, and when logind
    /// (re)starts.
    private func attachLogind() {
        guard let system else { return }
        do {
            // Asked after the matches are in place, so that a restart in between is seen.
            logindOwner = try BusDriver.owner(of: Logind.name, on: system)
            if triggers.contains(.screenLock) {
                let (path, how) = try Logind.session(on: system, explicit: explicitSession)
                sessionPath = path
                lockedHint = (try? Logind.lockedHint(on: system, session: path)) ?? false
                log("following the screen lock of \(how), \(path)")
            }
            if triggers.contains(.sleep) {
                try inhibitor.take(on: system, for: vault.mountpoint)
                log("holding a sleep delay inhibitor: \(vault.mountpoint) locks before the machine sleeps")
            }
            logindAttached = true
            logindRetry.succeeded(log, "logind answered")
        } catch {
            logindRetry.failed(log, "logind: \(error.description)")
        }
    }

    private func connectSession() {
        do {
            let bus = try Bus(.session) { [unowned self] in pending.append($0) }
            try bus.match(interface: "org.freedesktop.ScreenSaver", member: "ActiveChanged")
            session = bus
            sessionRetry.succeeded(log, "following org.freedesktop.ScreenSaver on the session bus")
        } catch {
            sessionRetry.failed(log, error.description)
        }
    }

    // MARK: signals

    private func process() {
        if let bus = system, !bus.process() {
            bus.disconnect()
            system = nil
            logindAttached = false
            logindOwner = nil
            // The inhibitor's descriptor is worth nothing without the connection we took it on.
            inhibitor.release()
            systemRetry.failed(log, "the system bus went away")
        }
        if let bus = session, !bus.process() {
            bus.disconnect()
            session = nil
            sessionRetry.failed(log, "the session bus went away")
        }
        while !pending.isEmpty {
            let received = pending.removeFirst()
            if mayObey(received) { handle(received.signal) }
        }
    }

    /// Whether the signal comes from who may send it: a broadcast (a signal addressed to this
    /// connection alone comes from whoever chose to send it), from the bus driver for
    /// `NameOwnerChanged`, from logind's current unique name for the rest of the system bus,
    /// and only `ActiveChanged` from the session bus (the user's own). Anything else is
    /// dropped unlogged: any user may send it, as often as they like.
    private func mayObey(_ received: ReceivedSignal) -> Bool {
        guard !received.unicast else { return false }
        switch (received.bus, received.signal) {
        case (.session, .screenSaverActive), (.session, .malformed): return true
        case (.session, _): return false
        case (.system, .nameOwnerChanged): return received.sender == BusDriver.name
        case (.system, .screenSaverActive): return false
        case (.system, _): return logindOwner != nil && received.sender == logindOwner
        }
    }

    private func handle(_ signal: BusSignal) {
        switch signal {
        case .sessionLock(let path) where path == sessionPath:
            lockWithGrace(because: "the session locked its screen (Lock)")
        case .sessionProperties(let path, let hint, let invalidated) where path == sessionPath:
            var now = hint
            if now == nil && invalidated, let system { now = try? Logind.lockedHint(on: system, session: path) }
            guard let now else { return }
            defer { lockedHint = now }
            if now && !lockedHint { lockWithGrace(because: "the session's LockedHint became true") }
        case .screenSaverActive(true):
            lockWithGrace(because: "the screen saver became active (ActiveChanged)")
        case .prepareForSleep(true):
            lockBeforeSleep()
        case .prepareForSleep(false):
            guard let system, logindAttached else { return }
            do {
                try inhibitor.take(on: system, for: vault.mountpoint)
                log("the machine woke up; holding a new sleep delay inhibitor")
            } catch {
                logindAttached = false
                logindRetry.failed(log, "logind: \(error.description)")
            }
        case .nameOwnerChanged(Logind.name, let owner):
            inhibitor.release()
            logindAttached = false
            logindOwner = owner.isEmpty ? nil : owner
            if owner.isEmpty { log("logind left the system bus; waiting for it") } else { logindRetry = Retry() }
        case .malformed(let why):
            log("ignored a signal: \(why)")
        default:
            break
        }
    }

    private func lockWithGrace(because reason: String) {
        do {
            switch try vault.lockWithGrace() {
            case let after? where after.state == .locking:
                log("\(reason): locking \(vault.mountpoint) with its \(after.grace.secondsRoundedUp) s grace")
            case let after?:
                log("\(reason): \(vault.mountpoint) is \(after.state.rawValue)")
            case nil:
                log("\(reason): locking \(vault.mountpoint) (its daemon did not tell its state within "
                    + "\(FollowedVault.statusWait.components.seconds) s)")
            }
        } catch {
            log("\(reason), but \(vault.mountpoint) could not be locked: \(error.description)")
        }
    }

    /// Locks at once and waits for `locked`, then lets the machine sleep.
    private func lockBeforeSleep() {
        let start = MonotonicInstant.now
        do {
            let state = try vault.lockNow()
            let took = MonotonicInstant.now.duration(since: start)
            switch state {
            case let state? where state == .locked || state == .beforeFirstUnlock:
                log("the machine is going to sleep: \(vault.mountpoint) is \(state.rawValue) after \(took.wholeMilliseconds) ms")
            case let state?:
                log("the machine is going to sleep, but \(vault.mountpoint) is still \(state.rawValue)")
            case nil:
                log("the machine is going to sleep: \(vault.mountpoint) answered the lock after \(took.wholeMilliseconds) ms "
                    + "(its daemon did not tell its state within \(FollowedVault.statusWait.components.seconds) s)")
            }
        } catch {
            log("the machine is going to sleep, but \(vault.mountpoint) could not be locked: \(error.description)")
        }
        // Held no longer in any case: logind would sleep after its delay anyway.
        if inhibitor.release() { log("released the sleep inhibitor") }
    }

    // MARK: waiting

    /// Whether the daemon's stream ended because the mount is gone (a stream that ended while
    /// the daemon still answers, a refused connection say, is watched again).
    private func mountWentAway(_ streamEnded: StreamEndSignal) throws(Errno) -> Bool {
        guard streamEnded.take() else { return false }
        if (try? vault.status()) == nil { return true }
        sleep(for: .seconds(1))
        try vault.signalWhenStreamEnds(to: streamEnded)
        return false
    }

    private func wait(_ streamEnded: StreamEndSignal) {
        var fds = [streamEnded.pollRequest]
        var deadline = MonotonicInstant.now.advanced(by: .seconds(30))
        for bus in [system, session].compactMap({ $0 }) {
            guard let request = bus.pollRequest() else { continue }
            fds.append(request.pollfd)
            if let wake = request.deadline { deadline = min(deadline, wake) }
        }
        for retry in [system == nil ? systemRetry : nil, system != nil && !logindAttached ? logindRetry : nil,
                      triggers.contains(.screenLock) && session == nil ? sessionRetry : nil].compactMap({ $0 }) {
            deadline = min(deadline, retry.due)
        }
        let left = deadline.duration(since: .now)
        let milliseconds = left > .zero ? Int32(min(left.wholeNanoseconds / 1_000_000 + 1, 30_000)) : 0
        _ = poll(&fds, nfds_t(fds.count), milliseconds)
    }
}

extension Duration {
    var wholeMilliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
