import CSodium
import Synchronization

/// Keys live in slabs of locked, guarded memory: one `sodium_malloc` per 2048 keys rather
/// than per key, because each `sodium_malloc` costs several pages and an mlock, and a
/// mount caches thousands of per-file keys.
public final class KeySlabPool: Sendable {
    public static let shared = KeySlabPool()

    static let slotSize = 32
    static let slotsPerSlab = 2048

    private struct State {
        var slabs: [UInt] = []      // base addresses
        var freeSlots: [UInt] = []  // addresses of free 32-byte slots
        var lockFailed = false
    }
    private let state = Mutex(State())

    init() {}

    func allocate() -> UnsafeMutableRawPointer {
        Sodium.ensure()
        let address: UInt = state.withLock { s in
            if s.freeSlots.isEmpty {
                let bytes = Self.slotSize * Self.slotsPerSlab
                guard let slab = sodium_malloc(bytes) else { fatalError("out of locked memory for keys") }
                sodium_memzero(slab, bytes)
                // sodium_malloc ignores a failed mlock; ask again so we can tell.
                if sodium_mlock(slab, bytes) != 0 { s.lockFailed = true }
                let base = UInt(bitPattern: slab)
                s.slabs.append(base)
                s.freeSlots.reserveCapacity(s.freeSlots.count + Self.slotsPerSlab)
                for i in stride(from: Self.slotsPerSlab - 1, through: 0, by: -1) {
                    s.freeSlots.append(base + UInt(i * Self.slotSize))
                }
            }
            return s.freeSlots.removeLast()
        }
        return UnsafeMutableRawPointer(bitPattern: address)!
    }

    func release(_ slot: UnsafeMutableRawPointer) {
        sodium_memzero(slot, Self.slotSize)
        state.withLock { $0.freeSlots.append(UInt(bitPattern: slot)) }
    }

    /// What the pool holds now, for tests and `status`.
    public struct Usage: Sendable, Equatable {
        public let slabs: Int
        public let liveKeys: Int
        /// True when the kernel refused to lock a slab in RAM (RLIMIT_MEMLOCK).
        public let lockFailed: Bool
        /// Address ranges of the slabs (start, byte count), to check them in /proc/self/smaps.
        public let ranges: [ClosedRange<UInt>]
    }

    public var usage: Usage {
        state.withLock { s in
            let bytes = UInt(Self.slotSize * Self.slotsPerSlab)
            return Usage(slabs: s.slabs.count,
                         liveKeys: s.slabs.count * Self.slotsPerSlab - s.freeSlots.count,
                         lockFailed: s.lockFailed,
                         ranges: s.slabs.map { $0...($0 + bytes - 1) })
        }
    }
}
