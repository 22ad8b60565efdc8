import Testing
@testable import ProtfsCore
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
            var key: SymmetricKey? = SymmetricKey.random()
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
}
