import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

@Suite struct LockedMemoryTests {
    /// The `Locked:` size (kB) of the /proc/self/smaps mapping that contains `address`.
    func lockedKilobytes(containing address: UInt) throws -> Int? {
        // /proc files report size 0, so read them to the end rather than by their size.
        let fd = try FileDescriptor.open(path: "/proc/self/smaps", [.readOnly])
        defer { fd.close() }
        let smaps = String(decoding: try fd.readAll(limit: 64 << 20), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if let range = fields.first, range.contains("-"), !range.hasSuffix(":") {
                let bounds = range.split(separator: "-").compactMap { UInt($0, radix: 16) }
                inside = bounds.count == 2 && bounds[0] <= address && address < bounds[1]
            } else if inside, fields.first == "Locked:", fields.count >= 2 {
                return Int(fields[1])
            }
        }
        return nil
    }

    @Test func keysLiveInLockedMemory() throws {
        let deviceKeys = DeviceKeys(deviceKey: .random())
        let usage = KeySlabPool.shared.usage
        #expect(!usage.lockFailed)
        #expect(usage.liveKeys >= 5)
        let address = deviceKeys.wrap.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
        let slab = try #require(usage.ranges.first { $0.contains(address) })
        let locked = try #require(try lockedKilobytes(containing: slab.lowerBound))
        #expect(locked > 0)
    }

    @Test func releasingAKeyWipesItsSlot() throws {
        // Other tests allocate keys in parallel and may take the freed slot at once, so the
        // check is that our bytes are gone, and that at least one try saw the slot all zero.
        var sawZero = false
        for _ in 0..<5 {
            var key: LockedKey? = LockedKey.random()
            let secret = key!.testBytes
            let address = key!.withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
            key = nil
            let after = Array(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: 32))
            #expect(after != secret)
            if after.allSatisfy({ $0 == 0 }) { sawZero = true }
            _ = key
        }
        #expect(sawZero)
    }
    /// Issue 15, item 7: buffers that hold plaintext (requests, replies, chunk scratch) are
    /// locked in memory, so none goes to swap, and wiped as they are given back.
    @Test func plaintextBuffersAreLockedAndWipedAfterUse() throws {
        let refusedBefore = PlaintextMemory.refusedCount
        let pool = BufferPool(byteCount: 64 << 10, limit: 1, holdsPlaintext: true)
        let buffer = pool.take()
        let address = UInt(bitPattern: buffer.baseAddress)
        buffer.initializeMemory(as: UInt8.self, repeating: 0xA5)
        // Every page touched is locked (pages never touched are not even allocated).
        // (A mapping next to another locked one may be merged with it: hence at least.)
        #expect(try #require(try lockedKilobytes(containing: address)) >= 64)
        pool.give(buffer, used: 1000)
        let given = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: 64 << 10)
        #expect(given[0..<1000].allSatisfy { $0 == 0 }, "the bytes used are wiped")
        #expect(given[1000...].allSatisfy { $0 == 0xA5 }, "only the bytes used: a small read does not wipe a megabyte")
        let again = pool.withBuffer(count: 4096) { (reused) -> UInt in
            reused.initializeMemory(as: UInt8.self, repeating: 0x5A)
            return UInt(bitPattern: reused.baseAddress)
        }
        #expect(again == address)
        #expect(given[0..<4096].allSatisfy { $0 == 0 }, "withBuffer wipes what it handed out")
        let larger = pool.withBuffer(count: 128 << 10) { (fresh) -> Int? in
            fresh.initializeMemory(as: UInt8.self, repeating: 1)
            return try? lockedKilobytes(containing: UInt(bitPattern: fresh.baseAddress))
        }
        #expect(try #require(larger) >= 128, "a buffer larger than the pool's is locked too")
        #expect(PlaintextMemory.refusedCount == refusedBefore, "root may lock memory: nothing was refused")
    }
}
