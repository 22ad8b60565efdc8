import Foundation
import ProtfsControlProtocol
import ProtfsDomain
import Synchronization

/// Follows the lock state of one protfs mount through its daemon's control socket
/// (`watch`), posting UIKit's protected-data notifications and feeding `events`.
///
/// ```swift
/// let monitor = ProtectedDataMonitor(mountpoint: "/srv/vault")
/// NotificationCenter.default.addObserver(forName: .protectedDataWillBecomeUnavailable, object: nil, queue: nil) { _ in
///     closeCompleteFiles()
/// }
/// ```
///
/// When the daemon goes away (unmount, restart) the monitor posts the events of a lock (its
/// keys are gone), then reconnects, waiting 0.1 s at first and twice as long after each
/// failure, up to 5 s; on reconnecting it posts the events that lead from before first
/// unlock (where a restarted daemon starts) to the daemon's current state. It runs until
/// `stop()`.
public final class ProtectedDataMonitor: Sendable {
    /// The mount point followed.
    public let mountpoint: String
    private let center: NotificationCenter?
    private let cancellation = WatchCancellation()
    private let shared = Mutex(Shared())
    private let finished = DispatchSemaphore(value: 0)
    /// Cuts a wait between reconnections short when the monitor stops.
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled once the first attempt to subscribe succeeded or failed.
    private let started = DispatchSemaphore(value: 0)

    private struct Shared {
        var state: LockState?
        var continuations: [UUID: AsyncStream<ProtectedDataEvent>.Continuation] = [:]
    }

    static let firstRetry: Duration = .milliseconds(100)
    static let longestRetry: Duration = .seconds(5)
    /// The longest `init` waits for the daemon's first answer.
    public static let subscriptionWait: Duration = .seconds(5)

    /// Starts following `mountpoint`; notifications go to `center` (none when nil). The
    /// object of each notification is the monitor. Returns once subscribed to the daemon
    /// (so no later lock goes unnoticed), once the first attempt failed, or after
    /// `subscriptionWait` at most (a daemon that does not answer holds no caller).
    public init(mountpoint: String, center: NotificationCenter? = .default) {
        self.mountpoint = mountpoint
        self.center = center
        if postsToDefaultCenter { DefaultCenterPosters.register(self) }
        let thread = Thread { [self] in follow() }
        thread.name = "protfs watch \(mountpoint)"
        thread.start()
        _ = started.wait(timeout: .now() + Self.subscriptionWait / .seconds(1))
    }

    /// Whether protected data is available on the mount as of the last state the daemon
    /// reported: unlocked, or locking (the grace period); false before the first report.
    public var isProtectedDataAvailable: Bool {
        shared.withLock { $0.state.map(ProtectedData.isAvailable) ?? false }
    }

    private var postsToDefaultCenter: Bool { center === NotificationCenter.default }

    /// Whether the daemon has reported a state yet.
    var hasState: Bool { shared.withLock { $0.state != nil } }

    /// The events from now on, for as long as the monitor runs.
    public var events: AsyncStream<ProtectedDataEvent> {
        let (stream, continuation) = AsyncStream<ProtectedDataEvent>.makeStream()
        let id = UUID()
        let running = shared.withLock { shared in
            guard !cancellation.isCancelled else { return false }
            shared.continuations[id] = continuation
            return true
        }
        guard running else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.shared.withLock { $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Stops following: no notification is posted once this returns, and every `events`
    /// sequence ends.
    public func stop() {
        cancellation.cancel()
        wake.signal()
        finished.wait()
        finished.signal()  // a second stop returns at once
        if postsToDefaultCenter { DefaultCenterPosters.unregister(self) }
        let continuations = shared.withLock { shared in
            defer { shared.continuations = [:] }
            return Array(shared.continuations.values)
        }
        continuations.forEach { $0.finish() }
    }

    private func follow() {
        defer { finished.signal() }
        var retry = Self.firstRetry
        var starting = true
        func announceStart() {
            if starting {
                starting = false
                started.signal()
            }
        }
        defer { announceStart() }
        while !cancellation.isCancelled {
            do {
                let client = try ControlClient(mountpoint: mountpoint)
                try client.watch(cancellation: cancellation) { line in
                    switch line {
                    case .state(let state):
                        retry = Self.firstRetry
                        deliver(ProtectedDataEvent.missed(from: shared.withLock { $0.state }, to: state), state: state)
                        announceStart()
                    case .event(let event):
                        let change = ProtectedDataEvent(event)
                        deliver([change], state: change.resultingState)
                    }
                    return !cancellation.isCancelled
                }
            } catch {
                // No daemon (yet): unmounted, restarting, or not mounted at all. Try again.
            }
            announceStart()
            guard !cancellation.isCancelled else { return }
            // The daemon is gone (unmounted, stopped): its keys are gone with it, as in a lock.
            if let state = shared.withLock({ $0.state }) {
                deliver(ProtectedDataEvent.missed(from: state, to: .beforeFirstUnlock), state: .beforeFirstUnlock)
            }
            _ = wake.wait(timeout: .now() + retry / .seconds(1))
            retry = min(retry * 2, Self.longestRetry)
        }
    }

    private func deliver(_ events: [ProtectedDataEvent], state: LockState) {
        let continuations = shared.withLock { shared in
            shared.state = state
            return Array(shared.continuations.values)
        }
        // Another monitor of this mount posts to the default center (DefaultCenterPosters).
        let posts = !postsToDefaultCenter || DefaultCenterPosters.mayPost(self)
        for event in events where !cancellation.isCancelled {
            if posts { center?.post(name: event.notificationName, object: self) }
            continuations.forEach { $0.yield(event) }
        }
    }
}
