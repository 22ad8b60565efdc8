import ProtfsDomain
import Glibc
import ProtfsCore
@testable import ProtfsFuse
import ProtfsSystem
import Testing

@Suite("Node table: a new node counts against the uid that brought it, within its share and the table's ceiling")
struct InodeTableSharesTests {
    /// A directory of `count` empty files, and a node for each (distinct backing objects).
    final class Files {
        let path: String
        private let owner: OwnedDescriptor
        let root: BackingNode
        let nodes: [BackingNode]

        init(_ count: Int) throws {
            var template = Array("/tmp/protfs-inode-shares-XXXXXX".utf8CString)
            guard let made = mkdtemp(&template) else { throw Errno(errno) }
            path = String(cString: made)
            owner = try OwnedDescriptor.open(path: path, [.directory, .path])
            let directory = owner.borrowed
            for index in 0 ..< count {
                _ = try OwnedDescriptor.open("f\(index)", in: directory, [.create, .writeOnly])
            }
            root = try BackingNode.open(".", in: directory)
            nodes = try (0 ..< count).map { index throws(Errno) in try BackingNode.open("f\(index)", in: directory) }
        }

        deinit {
            for index in 0 ..< nodes.count { unlink("\(path)/f\(index)") }
            rmdir(path)
        }
    }

    let privilege = MountPrivilege(owner: 1000)

    @Test("past its share a uid is refused, the same node named again is not; another uid and root go on")
    func shares() throws {
        let files = try Files(8)
        let table = InodeTable(root: files.root, shares: UserShares(perUser: 2, otherUsers: 3), privilege: privilege)
        let a = try table.remember(files.nodes[0], for: 2001)
        _ = try table.remember(files.nodes[1], for: 2001)
        #expect(throws: Errno.tooManyOpenFiles) { try table.remember(files.nodes[2], for: 2001) }
        #expect(try table.remember(files.nodes[0], for: 2001) == a)
        #expect(table.holding(2001) == 2)
        _ = try table.remember(files.nodes[2], for: 2002)
        // Three nodes of other uids: their pool is full, for a uid holding nothing too.
        #expect(throws: Errno.tooManyOpenFiles) { try table.remember(files.nodes[3], for: 2003) }
        for index in 3 ..< 8 { _ = try table.remember(files.nodes[index], for: index.isMultiple(of: 2) ? 0 : 1000) }
        #expect(table.count == 9)
        // Forgotten (both lookups), the node is given back.
        table.forget(a, count: 2)
        #expect(table.holding(2001) == 1)
        #expect(table.admits(2001))
    }

    @Test("past the ceiling nobody gets a new node, root neither; an admitted one is counted anyway")
    func ceiling() throws {
        let files = try Files(4)
        let table = InodeTable(root: files.root, ceiling: 3, shares: UserShares(perUser: 1, otherUsers: 4), privilege: privilege)
        _ = try table.remember(files.nodes[0], for: 0)
        _ = try table.remember(files.nodes[1], for: 1000)
        #expect(table.isFull)
        #expect(!table.admits(0))
        #expect(throws: Errno.tooManyOpenFiles) { try table.remember(files.nodes[2], for: 0) }
        _ = table.rememberAdmitted(files.nodes[2], for: 2001)
        _ = table.rememberAdmitted(files.nodes[3], for: 2001)
        #expect(table.holding(2001) == 2)
    }

    @Test("least recently used of one uid: only its own nodes, the root never")
    func leastRecentlyUsedOfOneUser() throws {
        let files = try Files(4)
        let table = InodeTable(root: files.root, privilege: privilege)
        let ids = try (0 ..< 4).map { index throws(Errno) in try table.remember(files.nodes[index], for: index < 2 ? 2001 : 2002) }
        _ = table.node(ids[0])
        #expect(table.leastRecentlyUsed(4, heldBy: 2001) { _ in false } == [ids[1], ids[0]])
        #expect(table.leastRecentlyUsed(4, heldBy: 2002) { _ in false } == [ids[2], ids[3]])
        #expect(table.leastRecentlyUsed(10) { _ in false }.count == 4)
    }

    @Test("listings give a uid nodes only below half its share")
    func listings() throws {
        let files = try Files(2)
        let table = InodeTable(root: files.root, shares: UserShares(perUser: 4, otherUsers: 16), privilege: privilege)
        #expect(table.hasRoomForListing(2001))
        _ = try table.remember(files.nodes[0], for: 2001)
        _ = try table.remember(files.nodes[1], for: 2001)
        #expect(!table.hasRoomForListing(2001))
        #expect(table.admits(2001))
        #expect(table.hasRoomForListing(0))
    }
}
