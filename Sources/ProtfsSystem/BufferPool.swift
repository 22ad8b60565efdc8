import Synchronization

/// Fixed-size buffers reused across requests: a fresh megabyte per request costs an mmap, a
/// page fault per page and an munmap. Up to `keep` idle buffers are kept; a buffer that held
/// plaintext is wiped by the caller before it is given back.
public final class BufferPool: Sendable {
    public let byteCount: Int
    private let keep: Int
    private let idle = Mutex<[UInt]>([])

    public init(byteCount: Int, keep: Int) {
        self.byteCount = byteCount
        self.keep = keep
    }

    public func take() -> UnsafeMutableRawBufferPointer {
        if let address = idle.withLock({ $0.popLast() }) {
            return UnsafeMutableRawBufferPointer(start: UnsafeMutableRawPointer(bitPattern: address), count: byteCount)
        }
        return .allocate(byteCount: byteCount, alignment: 64)
    }

    public func give(_ buffer: UnsafeMutableRawBufferPointer) {
        precondition(buffer.count == byteCount)
        let kept = idle.withLock { list in
            guard list.count < keep else { return false }
            list.append(UInt(bitPattern: buffer.baseAddress))
            return true
        }
        if !kept { buffer.deallocate() }
    }

    /// Runs `body` with a pooled buffer of at least `count` bytes (a fresh one when larger).
    public func withBuffer<R, E: Error>(count: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let buffer = count <= byteCount ? take() : .allocate(byteCount: count, alignment: 64)
        defer { count <= byteCount ? give(buffer) : buffer.deallocate() }
        return try body(UnsafeMutableRawBufferPointer(rebasing: buffer[0..<count]))
    }
}
