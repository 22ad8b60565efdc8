import ProtfsDomain
import ProtfsTestSupport
import Foundation
import Glibc
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

@Suite struct EncryptedFileTests {
    let keys = ContentTestKeys()
    let directory: ContentTestDirectory
    var keyring: ClassKeyring { keys.keyring }

    init() throws { directory = try ContentTestDirectory() }

    func create(_ name: String = "f", _ protectionClass: ProtectionClass = .complete) throws -> EncryptedFile {
        try EncryptedFile.create(in: directory.descriptor, name: name, mode: 0o600, protectionClass: protectionClass, keyring: keyring)
    }

    func reopen(_ name: String = "f") throws -> EncryptedFile {
        try EncryptedFile.open(name, in: directory.descriptor, keyring: keyring)
    }

    @Test(arguments: [0, 1, 4095, 4096, 4097, 8192, 3 << 20 | 123])
    func roundTrip(size: Int) throws {
        var generator = SeededGenerator(seed: UInt64(size))
        let data = randomBytes(size, using: &generator)
        let file = try create()
        try file.write(data, at: 0)
        #expect(try file.size() == Int64(size))
        #expect(try file.readAll() == data)
        #expect(try Int64(directory.backingStatus("f").st_size) == ContentLayout.backingSize(plaintextSize: Int64(size)))
        let again = try reopen()
        #expect(again.fileID == file.fileID)
        #expect(try again.readAll() == data)
        #expect(try again.read(count: 100, at: Int64(size)) == [])
        #expect(try again.read(count: 10, at: Int64(size) + 5000) == [])
    }

    @Test("a read returning the backing status reads what read does and reports that file's status")
    func readReturningStatus() throws {
        var generator = SeededGenerator(seed: 7)
        let data = randomBytes(10_000, using: &generator)
        let file = try create()
        try file.write(data, at: 0)
        for (offset, count) in [(0, 4096), (4000, 4096), (9_999, 100), (10_000, 10), (20_000, 10)] {
            // Taken just before: the read's own pread may move the access time after its fstat.
            let backing = try directory.backingStatus("f")
            var buffer = [UInt8](repeating: 0, count: count)
            let (read, status) = try buffer.withUnsafeMutableBytes { b in try file.readReturningStatus(into: b, at: Int64(offset)) }
            #expect(status.st_ino == backing.st_ino && status.st_size == backing.st_size)
            #expect(status.st_atim.tv_sec == backing.st_atim.tv_sec && status.st_atim.tv_nsec == backing.st_atim.tv_nsec)
            #expect(status.st_mtim.tv_sec == backing.st_mtim.tv_sec && status.st_mtim.tv_nsec == backing.st_mtim.tv_nsec)
            #expect(Array(buffer[0..<read]) == (try file.read(count: count, at: Int64(offset))))
            #expect(read == max(0, min(count, data.count - offset)))
        }
    }

    @Test func newFileIsJustAHeader() throws {
        let file = try create("empty", .none)
        #expect(try file.size() == 0)
        #expect(try directory.backingStatus("empty").st_size == 328)
        #expect(try directory.backingStatus("empty").st_mode & 0o777 == 0o600)
        #expect(throws: Errno.exists) { try create("empty", .none) }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomWritesMatchTheModel(seed: UInt64) throws {
        var generator = SeededGenerator(seed: seed)
        var model = PlaintextModel()
        let file = try create()
        for step in 0..<150 {
            let choice = Int.random(in: 0..<10, using: &generator)
            if choice == 0 {
                let size = Int.random(in: 0..<40_000, using: &generator)
                try file.truncate(to: Int64(size))
                model.truncate(to: size)
            } else {
                let offset = Int.random(in: 0..<36_000, using: &generator)
                let count = Int.random(in: 0..<(choice < 8 ? 5000 : 20_000), using: &generator)
                let data = randomBytes(count, using: &generator)
                try file.write(data, at: Int64(offset))
                model.write(data, at: offset)
            }
            #expect(try file.size() == Int64(model.bytes.count), "step \(step)")
            let readOffset = Int.random(in: 0...model.bytes.count, using: &generator)
            let readCount = Int.random(in: 0..<9000, using: &generator)
            let expected = Array(model.bytes[readOffset ..< min(readOffset + readCount, model.bytes.count)])
            #expect(try file.read(count: readCount, at: Int64(readOffset)) == expected, "step \(step)")
        }
        #expect(try file.readAll() == model.bytes)
        #expect(try reopen().readAll() == model.bytes)
    }

    @Test func largeWritesSpanSeveralRuns() throws {
        var generator = SeededGenerator(seed: 99)
        var model = PlaintextModel()
        let file = try create()
        for (offset, count) in [(0, 3 << 20), (1000, (1 << 20) + 4097), (5 << 20 | 17, 2 << 20)] {
            let data = randomBytes(count, using: &generator)
            try file.write(data, at: Int64(offset))
            model.write(data, at: offset)
        }
        #expect(try file.readAll() == model.bytes)
        #expect(try file.read(count: 3 << 20, at: 4095) == Array(model.bytes[4095 ..< 4095 + (3 << 20)]))
    }

    @Test func holesReadAsZerosAndStaySparse() throws {
        let file = try create()
        try file.write([1, 2, 3], at: 0)
        let far: Int64 = 64 << 20
        try file.write([4, 5, 6], at: far)
        #expect(try file.size() == far + 3)
        #expect(try file.read(count: 10, at: 0) == [1, 2, 3] + [UInt8](repeating: 0, count: 7))
        #expect(try file.read(count: 8192, at: 1 << 20) == [UInt8](repeating: 0, count: 8192))
        #expect(try file.read(count: 10, at: far - 7) == [UInt8](repeating: 0, count: 7) + [4, 5, 6])
        // The former last chunk was sealed again as a full chunk; the gap was never written.
        #expect(try directory.backingStatus("f").st_blocks * 512 < 1 << 20)
        #expect(try reopen().read(count: 3, at: far) == [4, 5, 6])
    }

    @Test func offsetsPastFourGiB() throws {
        let file = try create()
        let offset: Int64 = (5 << 30) + 4000
        try file.write(Array("past four GiB".utf8), at: offset)
        #expect(try file.size() == offset + 13)
        #expect(try file.read(count: 13, at: offset) == Array("past four GiB".utf8))
        #expect(try file.read(count: 4096, at: 4 << 30) == [UInt8](repeating: 0, count: 4096))
        try file.write([9], at: offset + 13)
        try file.truncate(to: offset + 5)
        #expect(try reopen().read(count: 100, at: offset) == Array("past ".utf8))
        #expect(try directory.backingStatus("f").st_blocks * 512 < 1 << 20)
    }

    static let boundarySizes = [0, 1, 4095, 4096, 4097, 8191, 8192, 8193, 20_000]

    @Test(arguments: boundarySizes)
    func truncateAroundChunkBoundaries(from: Int) throws {
        var generator = SeededGenerator(seed: UInt64(from))
        for to in Self.boundarySizes {
            let name = "t\(to)"
            var model = PlaintextModel(bytes: randomBytes(from, using: &generator))
            let file = try create(name)
            try file.write(model.bytes, at: 0)
            try file.truncate(to: Int64(to))
            model.truncate(to: to)
            #expect(try file.size() == Int64(to), "\(from) -> \(to)")
            #expect(try file.readAll() == model.bytes, "\(from) -> \(to)")
            #expect(try reopen(name).readAll() == model.bytes, "\(from) -> \(to)")
            #expect(try Int64(directory.backingStatus(name).st_size) == ContentLayout.backingSize(plaintextSize: Int64(to)))
        }
    }

    @Test func truncateUpSealsTheNewLastChunk() throws {
        let file = try create()
        try file.write([7], at: 0)
        try file.truncate(to: 3 * 4096 + 10)
        let backing = try directory.backingBytes("f")
        // Chunk 0 re-sealed full, chunks 1 and 2 holes, chunk 3 sealed with zeros.
        #expect(!backing[328 ..< 328 + 4136].allSatisfy { $0 == 0 })
        #expect(backing[328 + 4136 ..< 328 + 3 * 4136].allSatisfy { $0 == 0 })
        #expect(!backing[(328 + 3 * 4136)...].allSatisfy { $0 == 0 })
        #expect(try file.readAll() == [7] + [UInt8](repeating: 0, count: 3 * 4096 + 9))
    }

    @Test func allocateGrowsAndKeepsContents() throws {
        let file = try create()
        try file.write([1, 2, 3, 4, 5], at: 0)
        try file.allocate(offset: 2, length: 2)
        #expect(try file.size() == 5)
        try file.allocate(offset: 4096, length: 3 * 4096 + 1)
        #expect(try file.size() == 4 * 4096 + 1)
        #expect(try file.readAll() == [1, 2, 3, 4, 5] + [UInt8](repeating: 0, count: 4 * 4096 - 4))
        try file.write([8], at: 2 * 4096)
        #expect(try reopen().read(count: 2, at: 2 * 4096 - 1) == [0, 8])
        #expect(throws: Errno.invalid) { try file.allocate(offset: 0, length: 0) }
        // fsync goes through a copy of the backing descriptor (it needs no key).
        let backing = try file.backingDescriptorCopy().release()
        defer { backing.close() }
        try backing.syncData()
        try backing.sync()
    }

    @Test func invalidArguments() throws {
        let file = try create()
        #expect(throws: Errno.invalid) { try file.read(count: 1, at: -1) }
        #expect(throws: Errno.invalid) { try file.write([1], at: -1) }
        #expect(throws: Errno.invalid) { try file.truncate(to: -1) }
        #expect(throws: Errno.fileTooLarge) { try file.write([1], at: Int64.max - 10) }
        try file.write([], at: 100)
        #expect(try file.size() == 0)
    }

    @Test func concurrentReadersAndWriters() throws {
        let file = try create()
        let block = 3 * 4096 + 100
        try file.write([UInt8](repeating: 0, count: 8 * block), at: 0)
        DispatchQueue.concurrentPerform(iterations: 16) { i in
            let slot = i % 8
            if i < 8 {
                for round in 0..<20 {
                    try! file.write([UInt8](repeating: UInt8(slot * 20 + round), count: block), at: Int64(slot * block))
                }
            } else {
                for _ in 0..<20 {
                    let bytes = try! file.read(count: block, at: Int64(slot * block))
                    // A read sees one whole write, never a mix, since writes are exclusive.
                    #expect(Set(bytes).count == 1)
                }
            }
        }
        let final = try file.readAll()
        for slot in 0..<8 { #expect(final[slot * block ..< (slot + 1) * block].allSatisfy { $0 == UInt8(slot * 20 + 19) }) }
    }

    @Test func missingClassKeyIsPermissionDenied() throws {
        try create("a", .complete).write([1, 2, 3], at: 0)
        try create("b", .completeUnlessOpen).write([4, 5, 6], at: 0)
        keyring.remove([.complete, .completeUnlessOpen])
        #expect(throws: Errno.permissionDenied) { try reopen("a") }
        #expect(throws: Errno.permissionDenied) { try reopen("b") }
        #expect(throws: Errno.permissionDenied) { try create("c", .complete) }
        #expect(throws: Errno.noEntry) { try directory.backingStatus("c") }
        // Class B: created with the public key alone, written through its handle.
        let created = try create("d", .completeUnlessOpen)
        try created.write([7, 8], at: 0)
        #expect(try created.readAll() == [7, 8])
        keyring.install(keys.classKeys[.completeUnlessOpen]!, for: .completeUnlessOpen)
        #expect(try reopen("b").readAll() == [4, 5, 6])
        #expect(try reopen("d").readAll() == [7, 8])
    }

    @Test func reclassKeepsContents() throws {
        var generator = SeededGenerator(seed: 5)
        let data = randomBytes(10_000, using: &generator)
        let file = try create("r", .complete)
        try file.write(data, at: 0)
        let oldSlot = 24 + file.header.activeSlotIndex * 152
        let before = try directory.backingBytes("r")[oldSlot ..< oldSlot + 152]
        try file.reclass(to: .none, keyring: keyring)
        #expect(file.protectionClass == .none)
        #expect(try reopen("r").protectionClass == .none)
        #expect(try reopen("r").readAll() == data)
        // The old wrap under `complete` is gone from the backing file.
        #expect(try directory.backingBytes("r")[oldSlot ..< oldSlot + 152] != before)

        keyring.remove([.complete, .completeUnlessOpen])
        try file.reclass(to: .completeUnlessOpen, keyring: keyring)
        #expect(throws: Errno.permissionDenied) { try file.reclass(to: .complete, keyring: keyring) }
        #expect(throws: Errno.permissionDenied) { try reopen("r") }
        keyring.install(keys.classKeys[.completeUnlessOpen]!, for: .completeUnlessOpen)
        let reopened = try reopen("r")
        #expect(reopened.protectionClass == .completeUnlessOpen && reopened.header.generation == 3)
        #expect(try reopened.readAll() == data)
    }

    @Test func tornReclassLeavesTheOldClassInForce() throws {
        let file = try create("r", .complete)
        try file.write([1, 2, 3], at: 0)
        var header = file.header
        let fileKey = try header.unwrapFileKey(keyring: keyring)
        try header.rewrap(to: .none, fileKey: fileKey, keyring: keyring)
        let start = 24 + header.activeSlotIndex * 152
        let newSlot = Array(header.encoded()[start ..< start + 152])
        // Half of the new slot reached the disk.
        try directory.patchBacking("r", at: Int64(start), Array(newSlot[0..<76]))
        var reopened = try reopen("r")
        #expect(reopened.protectionClass == .complete && reopened.header.generation == 1)
        #expect(try reopened.readAll() == [1, 2, 3])
        // All of it, but not the emptying of the old slot: the new class is in force.
        try directory.patchBacking("r", at: Int64(start), newSlot)
        reopened = try reopen("r")
        #expect(reopened.protectionClass == .none && reopened.header.generation == 2)
        #expect(try reopened.readAll() == [1, 2, 3])
    }

    @Test func onlyRegularFilesAreOpened() throws {
        #expect(mkfifo(directory.path + "/fifo", 0o600) == 0)
        #expect(throws: Errno.io) { try reopen("fifo") }
        try directory.descriptor.makeDirectory("dir", mode: 0o700)
        #expect(throws: Errno.io) { try reopen("dir") }
        try directory.descriptor.makeSymlink("link", target: "f")
        _ = try create()
        #expect(throws: Errno.io) { try reopen("link") }
    }
}
