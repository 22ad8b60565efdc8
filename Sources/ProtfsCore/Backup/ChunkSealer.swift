import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem
import Synchronization

/// Seals an archive's chunks and writes them on threads of their own, one lane per thread,
/// chunk `i` in lane `i % lanes`: the walk reads the next files while earlier ones are
/// sealed and written, and the cipher runs on both cores (one thread for all of it made a
/// large file's backup wait for the disk and the cipher in turn). Every chunk but the last
/// is full, so each has a known place in the file and lanes need no order between them.
///
/// Chunks are filled in buffers of a `BufferPool`: the same few whatever the archive's size,
/// and a writer that gets ahead waits for one. They hold the backing directory's objects as
/// they are on disk (ciphertext, encrypted names, wrapped keys), so the pool is not a
/// plaintext one.
final class ChunkSealer: Sendable {
    static let lanes = 2
    static let chunksInFlight = 16

    /// The first `count` bytes of `buffer`, a buffer of `pool`, owned by whoever holds the chunk.
    struct Chunk: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int
        let index: UInt64
        let last: Bool
    }

    /// One buffer per chunk queued or being sealed, and the writer's.
    let pool = BufferPool(byteCount: BackupChunks.plaintextByteCount, limit: chunksInFlight + lanes + 1)
    private let queued = (0..<lanes).map { _ in BoundedHandoff<Chunk>(capacity: chunksInFlight / lanes) }
    private let failure = Mutex<BackupError?>(nil)
    private let abandoned = Atomic<Bool>(false)
    private let lanes = ThreadGroup()
    /// The archive, through a descriptor of its own: the caller's may be closed before an
    /// abandoned sealer has stopped. Closed with this object, once the lanes (which hold it)
    /// are gone.
    private let archive: OwnedDescriptor
    private var file: FileDescriptor { archive.borrowed }

    /// Starts sealing chunks into `file` after its `headerByteCount` bytes.
    init(file: FileDescriptor, path: String, prefix: [UInt8], key: LockedKey, headerByteCount: Int) throws(BackupError) {
        do { archive = try file.duplicate() } catch { throw .system(operation: "open", path: path, errno: error) }
        for lane in queued {
            do {
                try lanes.start { [self] in
                    ThreadPinning.undoInherited()
                    seal(lane, path: path, prefix: prefix, key: key, headerByteCount: headerByteCount)
                }
            } catch {
                abandon()
                throw .system(operation: "start a thread for", path: path, errno: error)
            }
        }
    }

    private func seal(_ lane: BoundedHandoff<Chunk>, path: String, prefix: [UInt8], key: LockedKey, headerByteCount: Int) {
        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: BackupChunks.sealedByteCount, alignment: 16)
        defer { sealed.deallocate() }
        while let chunk = lane.take() {
            defer { pool.give(chunk.buffer) }
            // After a failure, or once abandoned, only drained.
            guard !abandoned.load(ordering: .relaxed), failure.withLock({ $0 == nil }) else { continue }
            let ad = BackupChunks.associatedData(prefix: prefix, index: chunk.index, last: chunk.last)
            let out = UnsafeMutableRawBufferPointer(rebasing: sealed[0..<(chunk.count + XChaCha20Poly1305.overhead)])
            ad.withUnsafeBytes { ad in
                XChaCha20Poly1305.seal(UnsafeRawBufferPointer(rebasing: chunk.buffer[0..<chunk.count]), authenticating: ad,
                                       with: key, into: out)
            }
            let offset = Int64(headerByteCount) + Int64(chunk.index) * Int64(BackupChunks.sealedByteCount)
            do { try file.write(UnsafeRawBufferPointer(out), at: offset) } catch {
                failure.withLock { $0 = $0 ?? .system(operation: "write", path: path, errno: error) }
            }
        }
    }

    /// Queues a chunk; throws the failure of an earlier one, if any (so a full disk stops
    /// the walk soon, not at its end).
    func submit(_ chunk: Chunk) throws(BackupError) {
        do { try check() } catch {
            pool.give(chunk.buffer)
            throw error
        }
        queued[Int(chunk.index % UInt64(Self.lanes))].put(chunk)
    }

    /// Waits until every queued chunk is written; throws the first failure.
    func finish() throws(BackupError) {
        stop()
        try check()
    }

    /// Stops without writing what is still queued (the archive is being thrown away).
    func abandon() {
        abandoned.store(true, ordering: .relaxed)
        stop()
    }

    /// Finishes the lanes and joins their threads.
    private func stop() {
        for lane in queued { lane.finish() }
        _ = lanes.joinAll()
    }

    private func check() throws(BackupError) {
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
