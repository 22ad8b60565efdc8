import Dispatch
import Synchronization

/// Fixed-size buffers reused across requests: a fresh megabyte per request costs an mmap, a
/// page fault per page and an munmap. At most `limit` buffers ever exist, all kept for reuse:
/// `take` waits while every one is in use, so the daemon's memory stays bounded however many
/// requests the kernel has in flight (four 1 MiB reads ahead of a sequential reader, more
/// with several readers, each otherwise holding megabytes of its own). A buffer that held
/// plaintext is wiped by the caller before it is given back.
public final class BufferPool: Sendable {
    public let byteCount: Int
    public let limit: Int
    private let available: DispatchSemaphore
    private struct State {
        var idle: [UInt] = []
        var taken = 0
    }
    private let state = Mutex(State())

    public init(byteCount: Int, limit: Int) {
        precondition(limit > 0)
        self.byteCount = byteCount
        self.limit = limit
        available = DispatchSemaphore(value: limit)
    }

    deinit {
        // libdispatch traps when a semaphore goes below its initial value at disposal: a
        // buffer never given back (a test's) is counted back first.
        let (idle, taken) = state.withLock { ($0.idle, $0.taken) }
        for _ in 0..<taken { available.signal() }
        for address in idle {
            UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: address), count: byteCount).deallocate()
        }
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
        return .allocate(byteCount: byteCount, alignment: 64)
    }

    public func give(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count == byteCount)
        state.withLock { s in
            s.taken -= 1
            s.idle.append(UInt(bitPattern: buffer.baseAddress))
        }
        available.signal()
    }

    /// Runs `body` with a pooled buffer of at least `count` bytes (a fresh one when larger).
    public func withBuffer<R, E: Error>(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let buffer = count <= byteCount ? take() : .allocate(byteCount: count, alignment: 64)
        defer { count <= byteCount ? give(buffer) : buffer.deallocate() }
        return try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }
}
