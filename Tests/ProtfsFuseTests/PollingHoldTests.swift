@testable import ProtfsFuse
import Testing

@Suite("Polling hold: when idle CPUs are kept polling")
struct PollingHoldTests {
    static let gap: UInt64 = 1_000

    func hold() -> PollingHold { PollingHold(streakToHold: 4, burstGap: .nanoseconds(Self.gap)) }

    @Test("A stream of requests, each within the gap of the one before, holds once")
    func streamHolds() {
        var hold = hold()
        #expect(hold.requestRead(at: 0) == nil)
        #expect(hold.requestRead(at: 900) == nil)
        #expect(hold.requestRead(at: 1_900) == nil)
        #expect(hold.requestRead(at: 2_900) == .hold)
        #expect(hold.holding)
        // Further requests keep the hold without asking again.
        #expect(hold.requestRead(at: 3_000) == nil)
        #expect(hold.requestRead(at: 9_000) == nil)
        #expect(hold.holding)
    }

    @Test("A gap longer than the burst gap starts the count again")
    func gapsRestart() {
        var hold = hold()
        for time: UInt64 in [0, 500, 1_000] { #expect(hold.requestRead(at: time) == nil) }
        #expect(hold.requestRead(at: 2_001) == nil)
        #expect(hold.streak == 1)
        for time: UInt64 in [2_500, 3_000] { #expect(hold.requestRead(at: time) == nil) }
        #expect(hold.requestRead(at: 3_500) == .hold)
    }

    @Test("Requests now and then never hold")
    func sparseRequests() {
        var hold = hold()
        for request in 0..<100 { #expect(hold.requestRead(at: UInt64(request) * 5_000) == nil) }
        #expect(!hold.holding)
    }

    @Test("Lingering releases a hold once, and the next stream must build up again")
    func lingerReleases() {
        var hold = hold()
        #expect(hold.lingered() == nil)
        for time: UInt64 in [0, 10, 20] { _ = hold.requestRead(at: time) }
        #expect(hold.requestRead(at: 30) == .hold)
        #expect(hold.lingered() == .release)
        #expect(!hold.holding)
        #expect(hold.lingered() == nil)
        for time: UInt64 in [40, 50, 60] { #expect(hold.requestRead(at: time) == nil) }
        #expect(hold.requestRead(at: 70) == .hold)
    }
}
