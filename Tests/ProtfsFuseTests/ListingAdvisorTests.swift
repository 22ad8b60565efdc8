import Glibc
import Synchronization
import Testing
@testable import ProtfsFuse

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
    /// Two walkers (threads that make requests).
    let du: ListingAdvisor.Walker = 4100
    let find: ListingAdvisor.Walker = 4200
    var advisor: ListingAdvisor { ListingAdvisor(window: .seconds(1), clock: clock.read) }

    @Test("a fresh advisor lists bare; directories and untyped entries carry attributes anyway")
    func bareByDefault() {
        #expect(!advisor.beginReply(listing: 7, to: du))
        #expect(ListingAdvisor.entryCarriesAttributes(type: UInt8(DT_DIR)))
        #expect(ListingAdvisor.entryCarriesAttributes(type: UInt8(DT_UNKNOWN)))
        for type in [DT_REG, DT_LNK, DT_FIFO, DT_SOCK, DT_CHR, DT_BLK] {
            #expect(!ListingAdvisor.entryCarriesAttributes(type: UInt8(type)))
        }
    }

    @Test("a file looked up after its directory was listed bare: every entry, for the window")
    func lookupAfterBareListing() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7, to: du))
        clock.advance(milliseconds: 10)
        advisor.lookedUp(directory: false, in: 7, by: du)
        #expect(advisor.beginReply(listing: 8, to: du))
        clock.advance(milliseconds: 900)
        #expect(advisor.beginReply(listing: 7, to: du))
        clock.advance(milliseconds: 1001)
        #expect(!advisor.beginReply(listing: 9, to: du), "a pause as long as the window ends it; the walker has to show itself again")
        advisor.lookedUp(directory: false, in: 9, by: du)
        #expect(advisor.beginReply(listing: 10, to: du))
    }

    @Test("a walk that goes on listing keeps its advice past the window (rm -rf, du over many directories)")
    func longWalk() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7, to: du))
        advisor.lookedUp(directory: false, in: 7, by: du)
        for directory in UInt64(8) ..< 28 {
            clock.advance(milliseconds: 300)
            #expect(advisor.beginReply(listing: directory, to: du), "listed \(directory - 7) times 300 ms apart")
        }
        #expect(!advisor.beginReply(listing: 7, to: find), "still du's advice only")
    }

    @Test("what does not switch: directories looked up, other directories, stale listings")
    func nonTriggers() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7, to: find))
        advisor.lookedUp(directory: true, in: 7, by: find)
        #expect(!advisor.beginReply(listing: 7, to: find), "find descends into directories and stats nothing")
        advisor.lookedUp(directory: false, in: 99, by: du)
        #expect(!advisor.beginReply(listing: 7, to: du), "a lookup in a directory nobody listed is an open by path")
        clock.advance(milliseconds: 1500)
        advisor.lookedUp(directory: false, in: 7, by: find)
        #expect(!advisor.beginReply(listing: 7, to: find), "a listing long past says nothing about this lookup")
    }

    @Test("advice is per walker: another walker's listings stay bare, and its lookups switch nothing")
    func perWalker() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7, to: du))
        advisor.lookedUp(directory: false, in: 7, by: find)
        #expect(!advisor.beginReply(listing: 8, to: du), "find looked up what du listed")
        advisor.lookedUp(directory: false, in: 7, by: du)
        #expect(advisor.beginReply(listing: 8, to: du))
        #expect(!advisor.beginReply(listing: 9, to: find), "du's habit is not find's")
        advisor.lookedUp(directory: false, in: 9, by: find)
        #expect(advisor.beginReply(listing: 10, to: find))
        #expect(advisor.beginReply(listing: 11, to: du))
    }

    @Test("many walkers advised at once: the newest advice holds")
    func manyWalkers() {
        let advisor = advisor
        for walker in 1 ... ListingAdvisor.Walker(3 * ListingAdvisor.rememberedListings) {
            #expect(!advisor.beginReply(listing: UInt64(walker), to: walker))
            advisor.lookedUp(directory: false, in: UInt64(walker), by: walker)
        }
        #expect(advisor.beginReply(listing: 1, to: ListingAdvisor.Walker(3 * ListingAdvisor.rememberedListings)))
    }

    @Test("many listings: the recent ones are still remembered")
    func manyListings() {
        let advisor = advisor
        for directory in 0 ..< UInt64(3 * ListingAdvisor.rememberedListings) {
            #expect(!advisor.beginReply(listing: directory, to: du))
            clock.advance(milliseconds: 10)
        }
        advisor.lookedUp(directory: false, in: UInt64(3 * ListingAdvisor.rememberedListings - 1), by: du)
        #expect(advisor.beginReply(listing: 1, to: du))
    }

    @Test("a time older than one already stored (another thread's) counts as recent, and never traps")
    func olderTime() {
        let advisor = advisor
        #expect(!advisor.beginReply(listing: 7, to: du))
        clock.rewind(milliseconds: 5)
        advisor.lookedUp(directory: false, in: 7, by: du)
        #expect(advisor.beginReply(listing: 8, to: du))
    }
}
