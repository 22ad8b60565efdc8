import Dispatch
import Glibc
import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsSystem

/// Which next files of a directory are read ahead, and when: the choice from a listing and
/// the bookkeeping of the directories being read through.
@Suite struct SiblingReadaheadTests {
    typealias Runs = SiblingReadahead.Runs

    static func file(_ inode: UInt64, _ type: Int = DT_REG, name: String? = nil) -> DirectoryEntry {
        DirectoryEntry(name: name ?? "n\(inode)", inode: inode, type: UInt8(type))
    }

    /// 100 files with inodes 10 to 109, listed in no particular order.
    static let hundred = SiblingFiles((10..<110).reversed().map { file($0) })

    @Test("only vault files count, in inode order: no directories, symlinks, FIFOs or daemon files")
    func vaultFilesInInodeOrder() {
        let files = SiblingFiles([
            Self.file(30), Self.file(5, DT_DIR), Self.file(6, DT_LNK), Self.file(7, DT_FIFO), Self.file(8, DT_UNKNOWN),
            Self.file(9, name: "protfs.dir"), Self.file(11, name: "protfs.tmp.x"),
            Self.file(12, name: "protfs.long.abc.name"), Self.file(13, name: "protfs.long.abc"), Self.file(20),
        ])
        #expect(files.files.map { $0.inode } == [13, 20, 30])
        #expect(files.files.map { $0.name } == ["protfs.long.abc", "n20", "n30"])
    }

    @Test("the window after the opened file, never the opened file, earlier ones, or any read ahead already")
    func windowAfterOpened() throws {
        let window = SiblingReadahead.window
        let first = try #require(Self.hundred.plan(after: 10, window: window, readThrough: nil))
        #expect(first.names == (11...UInt64(10 + window)).map { "n\($0)" })
        #expect(first.readThrough == UInt64(10 + window))
        #expect(first.nextPlanAt == UInt64(10 + window / 2), "half-way through the window")

        let next = try #require(Self.hundred.plan(after: first.nextPlanAt, window: window, readThrough: first.readThrough))
        #expect(next.names == (UInt64(11 + window)...UInt64(10 + window / 2 + window)).map { "n\($0)" })

        let nearEnd = try #require(Self.hundred.plan(after: 105, window: window, readThrough: nil))
        #expect(nearEnd.names == ["n106", "n107", "n108", "n109"])
        let last = try #require(Self.hundred.plan(after: 109, window: window, readThrough: 109))
        #expect(last.names.isEmpty)
        #expect(last.readThrough == 109)

        let behind = try #require(Self.hundred.plan(after: 20, window: window, readThrough: 100))
        #expect(behind.names.isEmpty, "a reader going back gets nothing read twice")
        #expect(Self.hundred.plan(after: 5, window: window, readThrough: nil) == nil, "not in the listing")
        #expect(Self.hundred.plan(after: 200, window: window, readThrough: nil) == nil)
    }

    @Test("a directory with more entries than the limit is not listed")
    func hugeDirectoryIsLeftAlone() throws {
        let directory = TemporaryDirectory()
        for index in 0..<5 { try directory.write([], to: "f\(index)") }
        let descriptor = try directory.openDirectory()
        defer { descriptor.close() }
        #expect(try SiblingFiles.list(descriptor, limit: 5)?.files.count == 5)
        #expect(try SiblingFiles.list(descriptor, limit: 4) == nil)
    }

    @Test("a FIFO in place of a listed file is never opened: the read-ahead does not hang on it")
    func plantedFIFOIsNotOpened() throws {
        let directory = TemporaryDirectory()
        #expect(mkfifo(directory.child("planted"), 0o600) == 0)
        let descriptor = try directory.openDirectory()
        defer { descriptor.close() }
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            SiblingReadahead.readAhead("planted", in: descriptor)
            done.signal()
        }
        let finished = done.wait(timeout: .now() + 10) == .success
        // Let a hung open go, whatever happened.
        if !finished, let writer = try? FileDescriptor.open(path: directory.child("planted"), [.writeOnly, .nonBlocking]) {
            writer.close()
        }
        #expect(finished)
    }

    static func directory(_ inode: UInt64) -> BackingIdentity { BackingIdentity(device: 1, inode: inode) }

    /// Whether each of the opens of `inodes` in `directory`, in turn, called for a plan.
    static func opens(_ inodes: [UInt64], in directory: BackingIdentity, _ runs: inout Runs) -> [Bool] {
        inodes.map { runs.opened($0, in: directory) }
    }

    @Test("the second open in a directory plans; the next waits for the reader half-way through the window")
    func secondOpenPlans() throws {
        var runs = Runs()
        #expect(Self.opens([10, 11, 12], in: Self.directory(1), &runs) == [false, true, false],
                "one file opened alone reads nothing ahead; one plan per directory waits at a time")

        let node = try BackingNode.open(".", in: .currentWorkingDirectory)
        let listing = SiblingReadahead.Listing(modified: timespec(), files: Self.hundred)
        let trigger = SiblingReadahead.Trigger(directory: node, opened: 11)
        #expect(Self.opens([10, 11], in: node.identity, &runs) == [false, true])
        let planned = runs.plan(trigger, from: listing)
        let plan = try #require(planned)
        #expect(plan.names.count == SiblingReadahead.window)
        #expect(Self.opens([12, plan.nextPlanAt], in: node.identity, &runs) == [false, true], "the next plan from half-way")
        let unlisted = runs.plan(trigger, from: nil)
        #expect(unlisted == nil, "a directory that cannot be listed plans nothing")
        #expect(Self.opens([plan.nextPlanAt + 1], in: node.identity, &runs) == [true], "and leaves no plan waiting")
    }

    @Test("a plan the queue dropped does not stop the directory's read-ahead")
    func droppedPlanIsForgotten() {
        let limit = BackgroundReads<SiblingReadahead.Trigger>.limit
        var runs = Runs()
        let reader = Self.directory(1)
        #expect(Self.opens([10, 11], in: reader, &runs) == [false, true])
        // Plans of other directories fill the queue past its limit while the reader's waits.
        var due: [Bool] = []
        for index in 0..<UInt64(limit) {
            #expect(Self.opens([1, 2], in: Self.directory(100 + index), &runs) == [false, true])
            due += Self.opens([12], in: reader, &runs)
        }
        #expect(due == Array(repeating: false, count: limit - 1) + [true])
    }

    @Test("a bounded number of directories is followed")
    func boundedDirectories() {
        var runs = Runs()
        for inode in 0..<UInt64(1000) { _ = Self.opens([inode], in: Self.directory(inode), &runs) }
        #expect(runs.runs.count == SiblingReadahead.rememberedDirectories)
        #expect(runs.runs[Self.directory(999)] != nil, "the newest is kept")
    }
}
