import Dispatch
import Glibc
import ProtfsCore
@testable import ProtfsFuse
import ProtfsSystem
import Testing

@Suite("Node releaser: forgotten nodes let go in the background, within the descriptor budget")
struct NodeReleaserTests {
    /// Whether a node still exists, without keeping it: a node's descriptor closes when it
    /// goes. (Descriptor numbers cannot tell: the other tests of the process reuse them.)
    final class Watch {
        weak var node: BackingNode?
        init(_ node: BackingNode) { self.node = node }
        var alive: Bool { node != nil }
    }

    @Test("Waiting nodes keep their descriptors up to the capacity; past it they close at once")
    func capacityBoundsTheDescriptorsHeld() throws {
        let root = try OwnedDescriptor.open(path: "/", [.directory, .path])
        let directory = root.borrowed
        let queue = DispatchQueue(label: "test.node-release")
        queue.suspend()
        let releaser = NodeReleaser(capacity: 4, queue: queue)
        var watches: [Watch] = []
        for _ in 0 ..< 10 {
            let node = try BackingNode.open(".", in: directory)
            watches.append(Watch(node))
            releaser.release(node)
        }
        #expect(releaser.waiting == 4)
        #expect(watches.prefix(4).allSatisfy { $0.alive })
        #expect(!watches.dropFirst(4).contains { $0.alive })

        // The drain runs `gathering` after the first node, once the queue runs again.
        queue.resume()
        let deadline = MonotonicClock.nanoseconds(after: .seconds(5))
        while releaser.waiting > 0, MonotonicClock.nanoseconds() < deadline { usleep(1000) }
        queue.sync {}
        #expect(releaser.waiting == 0)
        #expect(!watches.contains { $0.alive })
    }

    @Test("Nodes forgotten together are let go together, a gathering after the first")
    func nodesForgottenTogetherGoTogether() throws {
        let root = try OwnedDescriptor.open(path: "/", [.directory, .path])
        let releaser = NodeReleaser(capacity: 64)
        var watches: [Watch] = []
        let start = MonotonicClock.nanoseconds()
        for _ in 0 ..< 8 {
            let node = try BackingNode.open(".", in: root.borrowed)
            watches.append(Watch(node))
            releaser.release(node)
        }
        let deadline = MonotonicClock.nanoseconds(after: .seconds(5))
        while watches.contains(where: { $0.alive }), MonotonicClock.nanoseconds() < deadline { usleep(200) }
        let waited = MonotonicClock.nanoseconds() - start
        #expect(!watches.contains { $0.alive })
        #expect(waited >= NodeReleaser.gathering.wholeNanoseconds)
    }

    @Test("Beside a small node table the releaser holds an eighth of it, beside a large one 1,024")
    func capacityFollowsTheTable() {
        #expect(NodeReleaser(besideTableOf: 688).capacity == 86)
        #expect(NodeReleaser(besideTableOf: 16_000).capacity == 1024)
        #expect(NodeReleaser(besideTableOf: .max).capacity == 1024)
        #expect(NodeReleaser(besideTableOf: 3).capacity == 1)
    }
}
