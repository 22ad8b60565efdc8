import Glibc
import CProtfsSys

/// A pthread read-write lock that prefers writers. Shared holds must not nest on one thread
/// (a waiting writer would deadlock them).
public final class ReadWriteLock: @unchecked Sendable {
    private let lock: UnsafeMutablePointer<pthread_rwlock_t>

    public init() {
        lock = .allocate(capacity: 1)
        precondition(protfs_rwlock_init_writer_preferring(lock) == 0)
    }

    deinit {
        pthread_rwlock_destroy(lock)
        lock.deallocate()
    }

    public func withShared<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_rdlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }

    public func withExclusive<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_rwlock_wrlock(lock)
        defer { pthread_rwlock_unlock(lock) }
        return try body()
    }
}
