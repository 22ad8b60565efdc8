import Dispatch
import Glibc
import ProtfsCore
@testable import ProtfsFuse
import ProtfsSystem
import Testing

@Suite("Node releaser: forgotten nodes let go in the background, within the descriptor budget")
struct NodeReleaserTests {
    static func isOpen(_ descriptor: Int32) -> Bool { fcntl(descriptor, F_GETFD) >= 0 }

    @Test("Waiting nodes keep their descriptors up to the capacity; past it they close at once")
    func capacityBoundsTheDescriptorsHeld() throws {
        let directory = try FileDescriptor.open(path: "/", [.directory, .path])
        defer { directory.close() }
        let queue = DispatchQueue(label: "test.node-release")
        queue.suspend()
        let releaser = NodeReleaser(capacity: 4, queue: queue)
        var descriptors: [Int32] = []
        for _ in 0 ..< 10 {
            let node = try BackingNode.open(".", in: directory)
            descriptors.append(node.descriptor.rawValue)
            releaser.release(node)
        }
        #expect(releaser.waiting == 4)
        #expect(descriptors.prefix(4).allSatisfy(Self.isOpen))
        #expect(!descriptors.dropFirst(4).contains(where: Self.isOpen))

        queue.resume()
        queue.sync {}
        #expect(releaser.waiting == 0)
        #expect(!descriptors.contains(where: Self.isOpen))
    }

    @Test("Beside a small node table the releaser holds an eighth of it, beside a large one 1,024")
    func capacityFollowsTheTable() {
        #expect(NodeReleaser(besideTableOf: 688).capacity == 86)
        #expect(NodeReleaser(besideTableOf: 16_000).capacity == 1024)
        #expect(NodeReleaser(besideTableOf: .max).capacity == 1024)
        #expect(NodeReleaser(besideTableOf: 3).capacity == 1)
    }
}
