import CProtfsSys
import Glibc

extension FileDescriptor {
    /// Reads into `buffer` until it is full or the input ends (every writer of a pipe gone):
    /// the count read, or nil once `deadline` passes first (never, when nil). Each read waits
    /// in `poll`, so a writer that neither writes nor closes holds the caller until the
    /// deadline at most.
    public func read(filling buffer: UnsafeMutableRawBufferPointer, until deadline: ContinuousClock.Instant?) throws(Errno) -> Int? {
        var total = 0
        while total < buffer.count {
            guard try waitUntilReadable(until: deadline) else { return nil }
            let n = try syscallRetrying { Glibc.read(rawValue, buffer.baseAddress! + total, buffer.count - total) }
            if n == 0 { break }
            total += n
        }
        return total
    }

    /// Whether there is input (or its end) before `deadline`.
    private func waitUntilReadable(until deadline: ContinuousClock.Instant?) throws(Errno) -> Bool {
        while true {
            var timeout: Int32 = -1
            if let deadline {
                let left = ContinuousClock.now.duration(to: deadline)
                guard left > .zero else { return false }
                timeout = Int32(min(left / .milliseconds(1), 60_000).rounded(.up))
            }
            var poller = pollfd(fd: rawValue, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, timeout)
            if ready > 0 { return true }
            if ready < 0 && protfs_errno() != EINTR { throw .current }
        }
    }
}
