import CProtfsSys
import Glibc
import Synchronization

/// Memory for plaintext on its way through the daemon (request, reply and chunk buffers):
/// pages of its own, locked in RAM so that none is written to swap, where it would outlive
/// the lock, and left out of core dumps. Pages are locked as they are first touched
/// (`MLOCK_ONFAULT`), so the part of a buffer no request reaches costs no memory. Past
/// RLIMIT_MEMLOCK (a daemon that is not root) the kernel refuses: the memory is then used
/// unlocked, and the first refusal is reported, once.
public enum PlaintextMemory {
    private struct Refusals {
        var count = 0
        var reported = false
        var reporter: (@Sendable (String) -> Void)?
    }
    private static let refusals = Mutex(Refusals())

    /// Maps `byteCount` bytes of zeros (whole pages), locked if the kernel allows; nil when
    /// out of memory.
    public static func map(byteCount: Int) -> UnsafeMutableRawBufferPointer? {
        guard let memory = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
              memory != MAP_FAILED else { return nil }
        _ = protfs_exclude_from_core_dumps(memory, byteCount)
        if protfs_mlock_on_fault(memory, byteCount) != 0 { refused() }
        return UnsafeMutableRawBufferPointer(start: memory, count: byteCount)
    }

    /// Unmaps (and so unlocks) what `map` returned; the caller has wiped what it used.
    public static func unmap(_ buffer: UnsafeMutableRawBufferPointer) {
        munmap(buffer.baseAddress, buffer.count)
    }

    /// Zeroes `buffer` in a way the compiler cannot elide.
    public static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let start = buffer.baseAddress, !buffer.isEmpty else { return }
        protfs_wipe(start, buffer.count)
    }

    /// How many mappings the kernel refused to lock so far.
    public static var refusedCount: Int { refusals.withLock { $0.count } }

    /// Where the one warning goes (the daemon's log); a refusal before this call is reported now.
    public static func reportRefusal(to reporter: @escaping @Sendable (String) -> Void) {
        let pending = refusals.withLock { r -> Bool in
            r.reporter = reporter
            return r.count > 0
        }
        if pending { report() }
    }

    private static func refused() {
        refusals.withLock { $0.count += 1 }
        report()
    }

    private static func report() {
        let reporter: (@Sendable (String) -> Void)? = refusals.withLock { r in
            guard !r.reported, let reporter = r.reporter else { return nil }
            r.reported = true
            return reporter
        }
        reporter?("cannot lock plaintext buffers in memory (RLIMIT_MEMLOCK): they may be written to swap; "
                  + "raise the limit (ulimit -l, LimitMEMLOCK=) or mount as root")
    }
}
