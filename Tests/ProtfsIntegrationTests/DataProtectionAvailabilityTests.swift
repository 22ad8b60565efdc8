import DataProtection
import Foundation
import Synchronization
import Testing

/// README.md's availability: `isProtectedDataAvailable`, UIKit's notifications and the
/// event sequence, fed by the daemon's `watch`, across a lock, an unlock and a restart.
@Suite("DataProtection: protected data availability", .serialized)
struct DataProtectionAvailabilityTests {
    /// What an observer saw, in order.
    final class Recorder: Sendable {
        private let seen = Mutex<[String]>([])

        func record(_ name: String) { seen.withLock { $0.append(name) } }

        /// Waits (generously: never a timing claim) until `count` names arrived. It sleeps as
        /// a task, not a thread: the events' consumer is a task too, and on a 2-core machine
        /// running the suite in parallel, a thread blocked here could be the cooperative pool's
        /// last free one, and the consumer would never run.
        func waitFor(_ count: Int, within seconds: TimeInterval = 20) async -> [String] {
            let deadline = Date().addingTimeInterval(seconds)
            while seen.withLock({ $0.count }) < count && Date() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            return seen.withLock { $0 }
        }
    }

    @Test func isProtectedDataAvailableFollowsTheLock() throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=600"])
        defer { try? vault.unmount() }
        #expect(try ProtectedData.isProtectedDataAvailable(mountpoint: vault.mountpoint))
        try vault.lock()
        #expect(try ProtectedData.isProtectedDataAvailable(mountpoint: vault.mountpoint), "the grace period keeps it")
        try vault.lock(now: true)
        #expect(try !ProtectedData.isProtectedDataAvailable(mountpoint: vault.mountpoint))
        #expect(throws: DataProtectionError.self) { try ProtectedData.isProtectedDataAvailable(mountpoint: vault.root.path) }
    }

    @Test func notificationsAndEventsFollowLocksUnlocksAndARestart() async throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=1"])
        defer { try? vault.unmount() }
        let center = NotificationCenter()
        let notified = Recorder()
        let names: [Notification.Name] = [.protectedDataWillBecomeUnavailable, .protectedDataDidBecomeUnavailable,
                                          .protectedDataDidBecomeAvailable]
        let observers = names.map { name in
            center.addObserver(forName: name, object: nil, queue: nil) { notified.record($0.name.rawValue) }
        }
        defer { observers.forEach(center.removeObserver) }
        let monitor = ProtectedDataMonitor(mountpoint: vault.mountpoint, center: center)
        defer { monitor.stop() }
        let sequenced = Recorder()
        let events = monitor.events
        let consumer = Task {
            for await event in events { sequenced.record(event.rawValue) }
        }
        #expect(monitor.isProtectedDataAvailable, "the monitor is subscribed once it is made")

        try vault.lock()
        try vault.waitForState(.locked)
        try vault.unlock()
        let cycle = ["UIApplicationProtectedDataWillBecomeUnavailable", "ProtfsProtectedDataDidBecomeUnavailable",
                     "UIApplicationProtectedDataDidBecomeAvailable"]
        #expect(await notified.waitFor(3) == cycle)
        #expect(await sequenced.waitFor(3) == ["willBecomeUnavailable", "didBecomeUnavailable", "didBecomeAvailable"])

        // An unmount takes the keys away: posted as a lock, before any new daemon. A restarted
        // daemon starts before first unlock: the monitor reconnects and follows it.
        try vault.unmount()
        #expect(await notified.waitFor(5) == cycle + cycle.prefix(2))
        #expect(!monitor.isProtectedDataAvailable)
        try vault.mount(passcode: false, options: ["grace=1"])
        try vault.unlock()
        #expect(await notified.waitFor(6) == cycle + cycle)
        try vault.lock(now: true)
        #expect(await notified.waitFor(8) == cycle + cycle + cycle.prefix(2))
        #expect(await sequenced.waitFor(8).count == 8)
        #expect(!monitor.isProtectedDataAvailable)

        monitor.stop()
        await consumer.value  // the sequence ends when the monitor stops
        try vault.unlock()
        usleep(300_000)
        #expect(await notified.waitFor(8, within: 0).count == 8, "nothing is posted after stop")
    }
}
