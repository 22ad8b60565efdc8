import Testing
@testable import DataProtection

/// What a reconnecting monitor reports for the states it missed, in the daemon's order.
@Suite struct MissedEventsTests {
    @Test func eventsBetweenStates() {
        #expect(ProtectedDataEvent.missed(from: nil, to: .locked) == [])
        #expect(ProtectedDataEvent.missed(from: .unlocked, to: .unlocked) == [])
        #expect(ProtectedDataEvent.missed(from: .unlocked, to: .locking) == [.willBecomeUnavailable])
        #expect(ProtectedDataEvent.missed(from: .unlocked, to: .beforeFirstUnlock) == [.willBecomeUnavailable, .didBecomeUnavailable])
        #expect(ProtectedDataEvent.missed(from: .unlocked, to: .locked) == [.willBecomeUnavailable, .didBecomeUnavailable])
        #expect(ProtectedDataEvent.missed(from: .locking, to: .locked) == [.didBecomeUnavailable])
        #expect(ProtectedDataEvent.missed(from: .locking, to: .unlocked) == [.didBecomeAvailable])
        #expect(ProtectedDataEvent.missed(from: .beforeFirstUnlock, to: .unlocked) == [.didBecomeAvailable])
        #expect(ProtectedDataEvent.missed(from: .locked, to: .locking) == [.didBecomeAvailable, .willBecomeUnavailable])
        #expect(ProtectedDataEvent.missed(from: .locked, to: .beforeFirstUnlock) == [])
    }

    @Test func notificationNamesAreUIKits() {
        #expect(ProtectedDataEvent.willBecomeUnavailable.notificationName.rawValue == "UIApplicationProtectedDataWillBecomeUnavailable")
        #expect(ProtectedDataEvent.didBecomeAvailable.notificationName.rawValue == "UIApplicationProtectedDataDidBecomeAvailable")
    }
}
