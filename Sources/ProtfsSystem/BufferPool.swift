import Dispatch
import Synchronization

/// Fixed-size buffers reused across requests: a fresh megabyte per request costs an mmap, a
/// page fault per page and an munmap. At most `limit` buffers ever exist, all kept for reuse:
/// `take` waits while every one is in use, so the daemon's memory stays bounded however many
/// requests the kernel has in flight (four 1 MiB reads ahead of a sequential reader, more
/// with several readers, each otherwise holding megabytes of its own). A pool for plaintext
/// keeps its buffers in locked memory (`PlaintextMemory`, locked once, when first made) and
/// wipes what a buffer held as it is given back.
public final class BufferPool: Sendable {
    public let byteCount: Int
    public let limit: Int
    public let holdsPlaintext: Bool
    private let available: DispatchSemaphore
    private struct State {
        var idle: [UInt] = []
        var taken = 0
    }
    private let state = Mutex(State())

    public init(byteCount: Int, limit: Int, holdsPlaintext: Bool = false) {
        precondition(limit > 0)
        self.byteCount = byteCount
        self.limit = limit
        self.holdsPlaintext = holdsPlaintext
        available = DispatchSemaphore(value: limit)
    }

    deinit {
        // libdispatch traps when a semaphore goes below its initial value at disposal: a
        // buffer never given back (a test's) is counted back first.
        let (idle, taken) = state.withLock { ($0.idle, $0.taken) }
        for _ in 0..<taken { available.signal() }
        for address in idle { free(UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: address), count: byteCount)) }
    }

    /// Out of memory is fatal here, as for any allocation.
    private func allocate(byteCount: Int) -> UnsafeMutableRawBufferPointer {
        guard holdsPlaintext else { return .allocate(byteCount: byteCount, alignment: 64) }
        guard let mapped = PlaintextMemory.map(byteCount: byteCount) else { fatalError("out of memory for \(byteCount) bytes") }
        return mapped
    }

    private func free(_ buffer: UnsafeMutableRawBufferPointer) {
        if holdsPlaintext { PlaintextMemory.unmap(buffer) } else { buffer.deallocate() }
    }

    /// A buffer of `byteCount` bytes, waiting for one to be given back if `limit` are taken.
    /// A caller must not take a second buffer from the same pool while it holds one.
    public func take() -> UnsafeMutableRawBufferPointer {
        available.wait()
        let reused: UInt? = state.withLock { s in
            s.taken += 1
            return s.idle.popLast()
        }
        if let reused { return UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: reused), count: byteCount) }
        return allocate(byteCount: byteCount)
    }

    /// Gives a buffer back. A plaintext pool wipes its first `used` bytes (all by default):
    /// only what a request reached, not a whole megabyte after every small read.
    public func give(_ buffer: UnsafeMutableRawBufferPointer, used: Int? = nil) {
        precondition(buffer.count == byteCount)
        if holdsPlaintext { PlaintextMemory.wipe(UnsafeMutableRawBufferPointer(rebasing: buffer[0 ..< min(used ?? byteCount, byteCount)])) }
        state.withLock { s in
            s.taken -= 1
            s.idle.append(UInt(bitPattern: buffer.baseAddress))
        }
        available.signal()
    }

    /// Runs `body` with a pooled buffer of `count` bytes (a fresh one when larger); in a
    /// plaintext pool those bytes are wiped when `body` returns.
    public func withBuffer<R, E: Error>(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let pooled = count <= byteCount
        let buffer = pooled ? take() : allocate(byteCount: count)
        defer {
            if pooled {
                give(buffer, used: count)
            } else {
                if holdsPlaintext { PlaintextMemory.wipe(buffer) }
                free(buffer)
            }
        }
        return try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }
}
