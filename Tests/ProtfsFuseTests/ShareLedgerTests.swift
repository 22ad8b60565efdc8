import ProtfsDomain
import Glibc
@testable import ProtfsFuse
import Testing

@Suite("Per-uid shares of the daemon's descriptors: no uid takes another's room, nor root's or the owner's")
struct ShareLedgerTests {
    let privilege = MountPrivilege(owner: 1000)
    let shares = UserShares(perUser: 3, otherUsers: 5)

    /// `ledger.take(for: uid)`, outside `#expect` (which cannot mutate).
    func take(_ uid: uid_t, in ledger: inout ShareLedger) -> Bool { ledger.take(for: uid) }

    @Test("a uid is refused past its own share; another uid still gets its own")
    func perUser() {
        var ledger = ShareLedger(shares, privilege: privilege)
        for _ in 0 ..< 3 { #expect(take(2001, in: &ledger)) }
        #expect(!take(2001, in: &ledger))
        #expect(ledger.holding(2001) == 3)
        #expect(take(2002, in: &ledger))
        ledger.giveBack(for: 2001)
        #expect(take(2001, in: &ledger))
    }

    @Test("the other uids together stop at their pool; root and the owner are never refused nor counted")
    func pool() {
        var ledger = ShareLedger(shares, privilege: privilege)
        for uid: uid_t in [2001, 2002] { for _ in 0 ..< 2 { #expect(take(uid, in: &ledger)) } }
        #expect(take(2003, in: &ledger))
        #expect(!take(2004, in: &ledger))
        #expect(ledger.othersHeld == 5)
        for _ in 0 ..< 1000 {
            #expect(take(0, in: &ledger))
            #expect(take(1000, in: &ledger))
        }
        #expect(ledger.othersHeld == 5)
        #expect(ledger.holding(0) == 0)
        // Giving back what was never counted changes nothing.
        ledger.giveBack(for: 0)
        ledger.giveBack(for: 2999)
        #expect(ledger.othersHeld == 5)
    }

    @Test("added past the share (a node admitted before it was made) is counted and given back")
    func admittedBeyond() {
        var ledger = ShareLedger(shares, privilege: privilege)
        for _ in 0 ..< 4 { ledger.add(for: 2001) }
        #expect(ledger.holding(2001) == 4)
        #expect(!ledger.admits(2001))
        for _ in 0 ..< 4 { ledger.giveBack(for: 2001) }
        #expect(ledger.holding(2001) == 0)
        #expect(ledger.held.isEmpty)
    }

    @Test("shares from the descriptor limit: one uid's descriptors stay well under the reserve kept for the others",
          arguments: [1200, 20_000, 1_048_576])
    func fromLimit(limit: Int) {
        let cut = DescriptorShares(limit: limit)
        #expect(cut.nodeCapacity + cut.reserve == limit)
        // What all bounded uids pin together (a node and a backing descriptor per handle, the
        // nodes counted in the table) leaves half the reserve and half the table.
        #expect(cut.handles.otherUsers * 2 <= cut.reserve)
        #expect(cut.nodes.otherUsers * 2 <= cut.nodeCapacity)
        // One uid's share is a quarter of the pool: three others still find room.
        #expect(cut.handles.perUser * 4 == cut.handles.otherUsers)
        #expect(cut.nodes.perUser * 4 == cut.nodes.otherUsers)
        // A handle needs a node: one uid can use its whole share of handles.
        #expect(cut.handles.perUser <= cut.nodes.perUser)
        // A table at its ceiling, the other uids' handles and the forgotten nodes waiting to
        // be closed still leave descriptors for root, the owner and the daemon's own work.
        let waiting = NodeReleaser(besideTableOf: cut.nodeCapacity).capacity
        #expect(cut.nodeCeiling + cut.handles.otherUsers + waiting + 64 <= limit)
    }

    @Test("the numbers the threat model gives for a limit of 20,000")
    func documentedNumbers() {
        let cut = DescriptorShares(limit: 20_000)
        #expect(cut.reserve == 4000)
        #expect(cut.nodeCapacity == 16_000)
        #expect(cut.nodeCeiling == 16_500)
        #expect(cut.nodes == UserShares(perUser: 2000, otherUsers: 8000))
        #expect(cut.handles == UserShares(perUser: 500, otherUsers: 2000))
    }
}
