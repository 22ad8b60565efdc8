import Foundation
import Glibc
import Synchronization
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsSystem

/// Directory metadata read ahead of a walker: cached only when it checks out, never a write
/// or a report from the background, never undoing a re-class.
@Suite struct DirectoryPrefetchTests {
    typealias Fixture = LockControllerTests.Fixture

    /// A node of `name` under the root that has cached nothing (as the kernel's first sight of it).
    func freshNode(_ name: String, _ f: Fixture) throws -> BackingNode {
        try f.fileSystem.lookup(Array(name.utf8), in: f.fileSystem.root)
    }

    /// Prefetches `nodes` as one listing shows them and waits until every read has finished.
    func prefetch(_ nodes: [BackingNode], _ f: Fixture) throws {
        f.fileSystem.prefetchDirectoryMetadata(of: nodes)
        try waitUntilIdle(f.fileSystem.prefetcher)
    }

    func waitUntilIdle(_ prefetcher: DirectoryPrefetcher) throws {
        let deadline = Date().addingTimeInterval(10)
        while !prefetcher.isIdle {
            try #require(Date() < deadline, "the readers never stopped")
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

    /// The `protfs.dir` of each subdirectory of `directory`, in listing order, opened for
    /// reading; the caller closes them.
    func subdirectoryRecords(of directory: BackingNode) throws -> [FileDescriptor] {
        try directory.descriptor.entries()
            .filter { $0.type == UInt8(DT_DIR) && ReservedNames.isVaultEntry($0.name) }
            .map { (entry) throws -> FileDescriptor in
                let subdirectory = try FileDescriptor.open(entry.name, in: directory.descriptor, [.path, .directory])
                defer { subdirectory.close() }
                return try OwnedDescriptor.openRegularFile(DirectoryMetadata.fileName, in: subdirectory).release()
            }
    }

    /// Written back and dropped from the page cache.
    func evict(_ record: FileDescriptor) throws {
        try record.sync()
        try #require(posix_fadvise(record.rawValue, 0, 0, POSIX_FADV_DONTNEED) == 0)
    }

    /// Whether the first page of `record` is in the page cache (`mincore` of a mapping,
    /// which faults nothing in).
    func isResident(_ record: FileDescriptor) throws -> Bool {
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        let map = try #require(mmap(nil, page, PROT_READ, MAP_SHARED, record.rawValue, 0))
        try #require(map != MAP_FAILED)
        defer { munmap(map, page) }
        var residency: UInt8 = 0
        try #require(mincore(map, page, &residency) == 0)
        return residency & 1 != 0
    }

    /// `d` under the root with subdirectories `s0`... and a file, its subdirectories'
    /// records out of the page cache, and a fresh node of `d`.
    func directoryWithColdSubdirectories(_ count: Int, _ f: Fixture) throws -> (node: BackingNode, records: [FileDescriptor]) {
        let d = try f.fileSystem.makeDirectory(Array("d".utf8), in: f.fileSystem.root, mode: 0o700, caller: f.caller)
        for index in 0..<count {
            _ = try f.fileSystem.makeDirectory(Array("s\(index)".utf8), in: d, mode: 0o700, caller: f.caller)
        }
        f.fileSystem.release(try f.fileSystem.createFile(Array("file".utf8), in: d, mode: 0o600, caller: f.caller).1)
        let records = try subdirectoryRecords(of: d)
        try #require(records.count == count)
        for record in records { try evict(record) }
        try #require(try records.allSatisfy { try !isResident($0) }, "eviction works here")
        return (try freshNode("d", f), records)
    }

    @Test("a prefetched directory's subdirectories have their records read into memory, one level further ahead")
    func subdirectoryRecordsAreWarmed() throws {
        let f = try Fixture()
        let (node, records) = try directoryWithColdSubdirectories(3, f)
        defer { records.forEach { $0.close() } }
        try prefetch([node], f)
        #expect(node.cachedDirectoryMetadata != nil)
        for (index, record) in records.enumerated() { #expect(try isResident(record), "record \(index)") }
    }

    @Test("records are read for the first subdirectories only, in listing order")
    func warmingIsBounded() throws {
        let f = try Fixture()
        let (node, records) = try directoryWithColdSubdirectories(3, f)
        defer { records.forEach { $0.close() } }
        f.fileSystem.warmSubdirectoryRecords(of: node, limit: 2)
        #expect(try records.map(isResident) == [true, true, false])
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

    /// `count` fresh directories under the root of a new vault, for the tests whose reads are
    /// stand-ins (only the nodes' identities matter to them).
    func directories(_ count: Int) throws -> [BackingNode] {
        let f = try Fixture()
        return try (0..<count).map { (index) throws -> BackingNode in
            let name = Array("d\(index)".utf8)
            _ = try f.fileSystem.makeDirectory(name, in: f.fileSystem.root, mode: 0o700, caller: f.caller)
            return try f.fileSystem.lookup(name, in: f.fileSystem.root)
        }
    }

    /// Reads that record their order; the first signals `started` and then waits until
    /// `release` is signalled, so that what is queued meanwhile waits behind it.
    final class HeldReads: Sendable {
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let order = Mutex<[ObjectIdentifier]>([])
        let done = DispatchSemaphore(value: 0)

        /// Starts with `first` read on `prefetcher`, held until `release`.
        init(holding first: BackingNode, on prefetcher: DirectoryPrefetcher) throws {
            prefetcher.prefetch([first], with: read)
            try #require(started.wait(timeout: .now() + 10) == .success)
        }

        func read(_ node: BackingNode) {
            let first = order.withLock { order in
                order.append(ObjectIdentifier(node))
                return order.count == 1
            }
            if first {
                started.signal()
                release.wait()
            }
            done.signal()
        }
    }

    @Test("the newest listing's subdirectories are read first, in the order listed; the oldest waiting are dropped past the limit")
    func depthFirstOrder() throws {
        let nodes = try directories(5)
        let prefetcher = DirectoryPrefetcher(readers: 1)
        let held = try HeldReads(holding: nodes[0], on: prefetcher)
        prefetcher.prefetch([nodes[1], nodes[2]], with: held.read)
        prefetcher.prefetch([nodes[3], nodes[4]], with: held.read)
        held.release.signal()
        for _ in nodes { #expect(held.done.wait(timeout: .now() + 10) == .success) }
        #expect(held.order.withLock { $0 } == [0, 3, 4, 1, 2].map { ObjectIdentifier(nodes[$0]) })

        let crowded = try HeldReads(holding: nodes[0], on: prefetcher)
        let oldest = Array(repeating: nodes[1], count: 10)
        let newer = Array(repeating: nodes[2], count: DirectoryPrefetcher.limit)
        prefetcher.prefetch(oldest, with: crowded.read)
        prefetcher.prefetch(newer, with: crowded.read)
        crowded.release.signal()
        for _ in 0 ..< 1 + DirectoryPrefetcher.limit { #expect(crowded.done.wait(timeout: .now() + 10) == .success) }
        #expect(crowded.done.wait(timeout: .now() + 0.2) == .timedOut, "the oldest ten were dropped")
        #expect(!crowded.order.withLock { $0 }.contains(ObjectIdentifier(nodes[1])))
    }

    @Test("a second reader reads while the first waits on its directory")
    func readersOverlap() throws {
        let nodes = try directories(3)
        let prefetcher = DirectoryPrefetcher(readers: 2)
        let held = try HeldReads(holding: nodes[0], on: prefetcher)
        prefetcher.prefetch([nodes[1], nodes[2]], with: held.read)
        #expect(held.done.wait(timeout: .now() + 10) == .success, "the second reader is not held up")
        #expect(held.done.wait(timeout: .now() + 10) == .success)
        #expect(!prefetcher.isIdle, "the first read is still held")
        held.release.signal()
        #expect(held.done.wait(timeout: .now() + 10) == .success)
        #expect(held.order.withLock { $0 } == [0, 1, 2].map { ObjectIdentifier(nodes[$0]) })
        try waitUntilIdle(prefetcher)
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
