import Foundation
import Glibc
import Testing
@testable import ProtfsCore
import ProtfsSystem

/// Directory metadata read ahead of a walker: cached only when it checks out, never a write
/// or a report from the background, never undoing a re-class.
@Suite struct DirectoryPrefetchTests {
    typealias Fixture = LockControllerTests.Fixture

    /// A node of `name` under the root that has cached nothing (as the kernel's first sight of it).
    func freshNode(_ name: String, _ f: Fixture) throws -> BackingNode {
        try f.fileSystem.lookup(Array(name.utf8), in: f.fileSystem.root)
    }

    /// Prefetches `nodes` in order and waits until the last one is cached (the queue is
    /// serial, so every earlier one has been tried by then).
    func prefetch(_ nodes: [BackingNode], _ f: Fixture) throws {
        for node in nodes { f.fileSystem.prefetchDirectoryMetadata(of: node) }
        let deadline = Date().addingTimeInterval(10)
        while nodes.last!.cachedDirectoryMetadata == nil {
            try #require(Date() < deadline, "the prefetch never finished")
            usleep(1000)
        }
    }

    @Test("a prefetched directory's metadata is cached, the same as a read gives")
    func prefetchCaches() throws {
        let f = try Fixture()
        _ = try f.fileSystem.makeDirectory(Array("d".utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        let node = try freshNode("d", f)
        try prefetch([node], f)
        let read = try f.fileSystem.directoryMetadata(of: freshNode("d", f))
        #expect(node.cachedDirectoryMetadata?.directoryID == read.directoryID)
        #expect(node.cachedDirectoryMetadata?.protectionClass == read.protectionClass)
    }

    @Test("a directory whose class hint is missing or wrong is left to its first access")
    func amissIsLeftAlone() throws {
        let f = try Fixture()
        for name in ["missing", "wrong", "healthy"] {
            _ = try f.fileSystem.makeDirectory(Array(name.utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        }
        let missing = try freshNode("missing", f)
        try ClassHint.remove(from: missing.descriptor)
        let wrong = try freshNode("wrong", f)
        let wrongID = try f.fileSystem.directoryMetadata(of: freshNode("wrong", f)).directoryID
        try ClassHint.write(.none, to: wrong.descriptor, objectID: wrongID, keys: f.vault.filesystemKeys)
        try prefetch([missing, wrong, try freshNode("healthy", f)], f)
        #expect(missing.cachedDirectoryMetadata == nil)
        #expect(wrong.cachedDirectoryMetadata == nil)
        #expect(throws: Errno.noData, "the background wrote nothing") {
            try missing.descriptor.extendedAttribute(ClassHint.attributeName)
        }
        #expect(throws: Errno.io) { try f.fileSystem.directoryMetadata(of: wrong) }
        _ = try f.fileSystem.directoryMetadata(of: missing)
        #expect(missing.cachedDirectoryMetadata != nil, "the access repairs the hint and caches")
    }

    @Test("a read that finishes after a re-class does not undo it")
    func lateReadLosesToReclass() throws {
        let f = try Fixture()
        let node = try f.fileSystem.makeDirectory(Array("d".utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        let before = try f.fileSystem.directoryMetadata(of: node)
        try f.fileSystem.reclass(node, to: .completeUntilFirstUserAuthentication)
        #expect(node.cacheReadDirectoryMetadata(before).protectionClass == .completeUntilFirstUserAuthentication)
        #expect(node.cachedDirectoryMetadata?.protectionClass == .completeUntilFirstUserAuthentication)
    }
}
