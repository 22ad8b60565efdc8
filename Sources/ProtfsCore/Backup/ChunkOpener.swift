import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Reads an archive's chunks and opens them on threads of their own, one lane per thread,
/// chunk `i` in lane `i % lanes`, ahead of the replay that makes files of them: the disk
/// and the cipher (on both cores) work while the replay waits on file creation. At most
/// `chunksAhead` opened chunks wait, in buffers of a `BufferPool` the replay gives back (the
/// same few whatever the archive's size; not a plaintext pool, for the reason
/// `ChunkSealer` gives). A lane stops at the first chunk that does not read or open, which
/// is reported when the replay comes to it.
final class ChunkOpener: Sendable {
    static let lanes = 2
    static let chunksAhead = 16

    /// A chunk's plaintext: the first `count` bytes of `buffer`, a buffer of `pool` owned by
    /// whoever holds the chunk.
    struct Opened: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
        let count: Int

        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: buffer[0..<count]) }
    }

    private let opened = (0..<lanes).map { _ in BoundedHandoff<Result<Opened, BackupError>>(capacity: chunksAhead / lanes) }
    /// One buffer per chunk waiting or being opened, and the replay's.
    let pool = BufferPool(byteCount: BackupChunks.plaintextByteCount, limit: chunksAhead + lanes + 1)
    private let lanes = ThreadGroup()
    /// The archive, through a descriptor of its own: the caller's may be closed before this
    /// has stopped. Closed with this object, once the lanes (which hold it) are gone.
    private let archive: OwnedDescriptor
    private var file: FileDescriptor { archive.borrowed }

    /// Starts reading the `count` chunks of `file`'s body; the last one is
    /// `finalChunkByteCount` long.
    init(file: FileDescriptor, prefix: [UInt8], key: LockedKey, count: UInt64, finalChunkByteCount: Int) throws(BackupError) {
        do { archive = try file.duplicate() } catch { throw .system(operation: "open", path: "the archive", errno: error) }
        for lane in 0..<Self.lanes {
            do {
                try lanes.start { [self] in
                    defer { opened[lane].finish() }
                    ThreadPinning.undoInherited()
                    open(stride(from: UInt64(lane), to: count, by: Self.lanes), into: opened[lane], prefix: prefix, key: key,
                         count: count, finalChunkByteCount: finalChunkByteCount)
                }
            } catch {
                stop()
                throw .system(operation: "start a thread for", path: "the archive", errno: error)
            }
        }
    }

    private func open(_ indices: StrideTo<UInt64>, into lane: BoundedHandoff<Result<Opened, BackupError>>, prefix: [UInt8],
                      key: LockedKey, count: UInt64, finalChunkByteCount: Int) {
        let sealed = UnsafeMutableRawBufferPointer.allocate(byteCount: BackupChunks.sealedByteCount, alignment: 16)
        defer { sealed.deallocate() }
        for index in indices {
            let last = index == count - 1
            let byteCount = last ? finalChunkByteCount : BackupChunks.sealedByteCount
            let plaintextCount = byteCount - XChaCha20Poly1305.overhead
            let buffer = pool.take()
            let chunk = Result { () throws(BackupError) in
                try open(index, UnsafeMutableRawBufferPointer(rebasing: sealed[0..<byteCount]),
                         ad: BackupChunks.associatedData(prefix: prefix, index: index, last: last), key: key,
                         into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<plaintextCount]))
                return Opened(buffer: buffer, count: plaintextCount)
            }
            if case .failure = chunk { pool.give(buffer) }
            guard lane.put(chunk) else {
                if case .success = chunk { pool.give(buffer) }
                return
            }
            guard case .success = chunk else { return }
        }
    }

    /// Chunk `index` (the one after the last taken); its failure if it did not read or open.
    func chunk(_ index: UInt64) throws(BackupError) -> Opened {
        guard let chunk = opened[Int(index % UInt64(Self.lanes))].take() else {
            throw .damaged("it ends in the middle of a record")
        }
        return try chunk.get()
    }

    /// Stops reading ahead and waits for the lanes; the buffers of chunks opened and never
    /// taken go back to the pool.
    func stop() {
        for lane in opened { lane.finish() }
        guard lanes.joinAll() else { return }
        for lane in opened {
            while let chunk = lane.take() { if case .success(let opened) = chunk { pool.give(opened.buffer) } }
        }
    }

    private func open(_ index: UInt64, _ sealed: UnsafeMutableRawBufferPointer, ad: [UInt8], key: LockedKey,
                      into plaintext: UnsafeMutableRawBufferPointer) throws(BackupError) {
        let offset = Int64(BackupArchiveHeader.byteCount) + Int64(index) * Int64(BackupChunks.sealedByteCount)
        let n: Int
        do { n = try file.read(into: sealed, at: offset) } catch { throw .system(operation: "read", path: "the archive", errno: error) }
        guard n == sealed.count else { throw .damaged("a chunk is cut short") }
        do throws(CryptoError) {
            try ad.withUnsafeBytes { ad in
                Result { () throws(CryptoError) in
                    try XChaCha20Poly1305.open(UnsafeRawBufferPointer(sealed), authenticating: ad, with: key, into: plaintext)
                }
            }.get()
        } catch {
            throw .damaged("chunk \(index) does not authenticate")
        }
    }
}
