@testable import ProtfsFollow
import Testing

/// The follower's pure pieces: the `--on` list and the reconnection backoff.
@Suite("follow settings")
struct FollowSettingsTests {
    @Test("--on takes screen-lock and sleep in any order, nothing else")
    func triggerLists() {
        #expect(FollowTriggers(list: "screen-lock,sleep") == .all)
        #expect(FollowTriggers(list: "sleep,screen-lock") == .all)
        #expect(FollowTriggers(list: "sleep") == .sleep)
        #expect(FollowTriggers(list: "screen-lock") == .screenLock)
        for refused in ["", "sleep,", "lock", "screen-lock,,sleep", "Sleep"] {
            #expect(FollowTriggers(list: refused) == nil, "accepted '\(refused)'")
        }
        #expect(FollowTriggers.all.description == "screen-lock,sleep")
    }

    @Test("the backoff doubles up to its longest wait and starts over after a success")
    func backoff() {
        var backoff = Backoff(first: .milliseconds(100), longest: .seconds(1))
        let waits = (0..<6).map { _ in backoff.failed() }
        #expect(waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .seconds(1), .seconds(1)])
        backoff.succeeded()
        #expect(backoff.failed() == .milliseconds(100))
    }
}
