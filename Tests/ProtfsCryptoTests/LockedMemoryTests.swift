import Glibc
import ProtfsCrypto
import ProtfsSystem
import Testing

/// Secrets stay in locked memory (never swapped) and are wiped when let go: keys in the
/// slab pool, plaintext in the daemon's buffers.
@Suite struct LockedMemoryTests {
    /// /proc/self/smaps, read to its end (/proc files report size 0).
    func smaps() throws -> String {
        let fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC)
        try #require(fd >= 0, "open /proc/self/smaps: errno \(errno)")
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            try #require(count >= 0, "read /proc/self/smaps: errno \(errno)")
            if count == 0 { return String(decoding: bytes, as: UTF8.self) }
            bytes += chunk[..<count]
        }
    }

    /// The `Locked:` size (kB) of the /proc/self/smaps mapping that contains `address`.
    func lockedKilobytes(containing address: UInt) throws -> Int? {
        var inside = false
        for line in try smaps().split(separator: "\n") {
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
        let keys = (0..<5).map { _ in LockedKey.random() }
        let usage = KeySlabPool.shared.usage
        #expect(!usage.lockFailed)
        #expect(usage.liveKeys >= keys.count)
        let address = keys[0].withUnsafeBytes { UInt(bitPattern: $0.baseAddress) }
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
            let secret = key!.withUnsafeBytes { Array($0) }
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
