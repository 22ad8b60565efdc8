import Foundation
import ProtfsDomain
import Testing
@testable import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore
import Synchronization

/// `watch`: the state line first, then every event in order, at once; a watcher that
/// leaves is dropped.
@Suite struct ControlWatchTests {
    /// Runs `client.watch` on a thread until `count` lines arrived; returns them.
    private func collect(_ count: Int, from client: ControlClient, while act: () -> Void) throws -> [WatchLine] {
        let lines = Mutex<[WatchLine]>([])
        let finished = Mutex<Result<Void, ControlFailure>?>(nil)
        Thread.detachNewThread {
            let result = Result { () throws(ControlFailure) in
                try client.watch { line in
                    lines.withLock { $0.append(line) }
                    return lines.withLock { $0.count } < count
                }
            }
            finished.withLock { $0 = result }
        }
        try waitFor { lines.withLock { !$0.isEmpty } || finished.withLock { $0 != nil } }
        act()
        try waitFor { finished.withLock { $0 != nil } }
        try finished.withLock { $0! }.get()
        return lines.withLock { $0 }
    }

    private func waitFor(seconds: Double = 10, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            guard Date() < deadline else { throw WatchTimeout() }
            usleep(5_000)
        }
    }

    struct WatchTimeout: Error {}

    @Test func stateLineThenEventsInOrder() throws {
        let fixture = try ServerFixture()
        let events: [LockEvent] = [.willBecomeUnavailable, .didBecomeUnavailable, .didBecomeAvailable,
                                   .willBecomeUnavailable, .didBecomeAvailable]
        let lines = try collect(1 + events.count, from: fixture.client()) {
            for event in events { fixture.handler.emit(event) }
        }
        #expect(lines == [.state(.unlocked)] + events.map(WatchLine.event))
        #expect(lines.map(\.description).prefix(2) == ["state unlocked", "willBecomeUnavailable"])
    }

    @Test func eventsDuringSubscriptionComeAfterTheStateLine() throws {
        let fixture = try ServerFixture()
        fixture.handler.record.withLock {
            $0.state = .locking
            $0.eventsDuringSubscribe = [.didBecomeUnavailable]
        }
        let lines = try collect(3, from: fixture.client()) { fixture.handler.emit(.didBecomeAvailable) }
        #expect(lines == [.state(.locking), .event(.didBecomeUnavailable), .event(.didBecomeAvailable)])
    }

    @Test func aWatcherThatLeavesIsDropped() throws {
        let fixture = try ServerFixture()
        _ = try collect(1, from: fixture.client()) {}
        #expect(fixture.handler.listenerCount == 1)
        try waitFor { fixture.server.connectionCount == 0 }
        fixture.handler.emit(.willBecomeUnavailable)
        #expect(fixture.handler.listenerCount == 0)
        #expect(try fixture.client().send(.status) != .done)  // still serving
    }

    @Test func stopEndsTheStream() throws {
        let fixture = try ServerFixture()
        let lines = try collect(5, from: fixture.client()) { fixture.server.stop() }
        #expect(lines == [.state(.unlocked)])
    }
}
