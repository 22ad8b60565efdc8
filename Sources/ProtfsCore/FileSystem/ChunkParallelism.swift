import Dispatch
import Glibc
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// Spreads the crypto of one large request over the cores: a 1 MiB request is 256 chunks to
/// seal or open, and with a single-threaded writer (dd, cp) the kernel sends one request at a
/// time, so only splitting the request keeps both cores busy.
enum ChunkParallelism {
    /// Below this many chunks the hand-off costs more than it saves.
    static let minimumChunks = 32
    static let workers = max(1, min(4, sysconfCores()))

    /// Calls `body` for every index of `indices`, in parallel slices when there are many;
    /// the first error (if any) is rethrown after every slice has finished.
    static func forEach(_ indices: Range<Int64>, _ body: (Int64) throws(Errno) -> Void) throws(Errno) {
        guard indices.count >= minimumChunks, workers > 1 else {
            for index in indices { try body(index) }
            return
        }
        let failure = Mutex<Errno?>(nil)
        let sliceLength = (Int64(indices.count) + Int64(workers) - 1) / Int64(workers)
        withoutActuallyEscaping(body) { body in
            let shared = UncheckedSendable(body)
            DispatchQueue.concurrentPerform(iterations: workers) { worker in
                // A pool thread created by a thread bound to one CPU is bound there too.
                ThreadPinning.undoInherited()
                let start = indices.lowerBound + Int64(worker) * sliceLength
                let end = min(start + sliceLength, indices.upperBound)
                guard start < end else { return }
                do throws(Errno) {
                    for index in start ..< end { try shared.value(index) }
                } catch {
                    failure.withLock { $0 = $0 ?? error }
                }
            }
        }
        if let error = failure.withLock({ $0 }) { throw error }
    }

    private static func sysconfCores() -> Int {
        Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    }
}

/// Hands a value that is safe to share for the duration of a call (buffers partitioned by
/// index, a non-escaping closure) to concurrently running slices.
struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
