import ProtfsSystem
import Synchronization
import Testing
@testable import ProtfsFuse

/// The end of a listing answers the one request that follows it, at that position only,
/// and only soon after.
@Suite struct ListingEndsTests {
    final class ManualClock: Sendable {
        private let now = Atomic<UInt64>(5_000_000_000)
        func advance(nanoseconds: UInt64) { now.add(nanoseconds, ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { [self] in now.load(ordering: .relaxed) } }
    }

    let clock = ManualClock()
    var ends: ListingEnds { ListingEnds(clock: clock.read) }

    @Test("the request at the end's position takes it, once")
    func takenOnce() {
        let ends = ends
        #expect(!ends.takeEnd(of: 7, at: 100), "no listing reached an end")
        ends.reachedEnd(of: 7, at: 100)
        #expect(!ends.takeEnd(of: 8, at: 100), "another directory")
        #expect(ends.takeEnd(of: 7, at: 100))
        #expect(!ends.takeEnd(of: 7, at: 100), "a second request reads the directory")
    }

    @Test("a request at another position (a new listing, a seek) reads the directory, and the end is gone")
    func otherPosition() {
        let ends = ends
        ends.reachedEnd(of: 7, at: 100)
        #expect(!ends.takeEnd(of: 7, at: 0))
        #expect(!ends.takeEnd(of: 7, at: 100))
        ends.reachedEnd(of: 7, at: 100)
        ends.reachedEnd(of: 7, at: 200)
        #expect(ends.takeEnd(of: 7, at: 200), "the latest listing's end counts")
    }

    @Test("an end left too long is not taken")
    func stale() {
        let ends = ends
        ends.reachedEnd(of: 7, at: 100)
        clock.advance(nanoseconds: ListingEnds.lifetime.wholeNanoseconds)
        #expect(!ends.takeEnd(of: 7, at: 100))
    }

    @Test("past the limit the ends are dropped, and the newest is kept")
    func bounded() {
        let ends = ends
        for directory in 0 ..< UInt64(ListingEnds.remembered) { ends.reachedEnd(of: directory, at: 100) }
        ends.reachedEnd(of: 9999, at: 100)
        #expect(!ends.takeEnd(of: 0, at: 100))
        #expect(ends.takeEnd(of: 9999, at: 100))
    }
}
