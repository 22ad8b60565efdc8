import Glibc
import Synchronization
import Testing
@testable import ProtfsCore

/// When listings carry every entry's attributes: only after a walker has shown that it
/// looks up what it lists, and only for the advisor's window.
@Suite struct ListingAdvisorTests {
    /// A clock the test moves by hand (milliseconds, in nanoseconds).
    final class ManualClock: Sendable {
        private let now = Atomic<UInt64>(1_000_000_000)
        func advance(milliseconds: UInt64) { now.add(milliseconds * 1_000_000, ordering: .relaxed) }
        /// As a time read by one thread just before another stored a later one.
        func rewind(milliseconds: UInt64) { now.subtract(milliseconds * 1_000_000, ordering: .relaxed) }
        var read: @Sendable () -> UInt64 { { [self] in now.load(ordering: .relaxed) } }
    }

    let clock = ManualClock()
    var advisor: ListingAdvisor { ListingAdvisor(windowNanoseconds: 1_000_000_000, clock: clock.read) }

    @Test("a fresh advisor lists bare; directories and untyped entries carry attributes anyway")
    func bareByDefault() {
        #expect(!advisor.beginReply(listing: 7))
        #expect(ListingAdvisor.entryCarriesAttributes(type: UInt8(DT_DIR)))
        #expect(ListingAdvisor.entryCarriesAttributes(type: UInt8(DT_UNKNOWN)))
        for type in [DT_REG, DT_LNK, DT_FIFO, DT_SOCK, DT_CHR, DT_BLK] {
            #expect(!ListingAdvisor.entryCarriesAttributes(type: UInt8(type)))
        }
    }

    @Test("a file looked up after its directory was listed bare: every entry, for the window")
    func lookupAfterBareListing() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7))
        clock.advance(milliseconds: 10)
        advisor.lookedUp(directory: false, in: 7)
        #expect(advisor.beginReply(listing: 8))
        clock.advance(milliseconds: 900)
        #expect(advisor.beginReply(listing: 7))
        clock.advance(milliseconds: 200)
        #expect(!advisor.beginReply(listing: 9), "the window ends; the walker has to show itself again")
        advisor.lookedUp(directory: false, in: 9)
        #expect(advisor.beginReply(listing: 10))
    }

    @Test("what does not switch: directories looked up, other directories, stale listings")
    func nonTriggers() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7))
        advisor.lookedUp(directory: true, in: 7)
        #expect(!advisor.beginReply(listing: 7), "find descends into directories and stats nothing")
        advisor.lookedUp(directory: false, in: 99)
        #expect(!advisor.beginReply(listing: 7), "a lookup in a directory nobody listed is an open by path")
        clock.advance(milliseconds: 1500)
        advisor.lookedUp(directory: false, in: 7)
        #expect(!advisor.beginReply(listing: 7), "a listing long past says nothing about this lookup")
    }

    @Test("many listings: the recent ones are still remembered")
    func manyListings() {
        let advisor = advisor
        for directory in 0 ..< UInt64(3 * ListingAdvisor.rememberedListings) {
            #expect(!advisor.beginReply(listing: directory))
            clock.advance(milliseconds: 10)
        }
        advisor.lookedUp(directory: false, in: UInt64(3 * ListingAdvisor.rememberedListings - 1))
        #expect(advisor.beginReply(listing: 1))
    }

    @Test("a time older than one already stored (another thread's) counts as recent, and never traps")
    func olderTime() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7))
        clock.rewind(milliseconds: 5)
        advisor.lookedUp(directory: false, in: 7)
        #expect(advisor.beginReply(listing: 8))
    }
}
