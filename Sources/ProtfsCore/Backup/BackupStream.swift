import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Writes an archive front to back in constant memory: one chunk held until the next byte
/// shows it is not the last, then sealed and written by a `ChunkSealer`.
final class BackupStreamWriter {
    private let file: FileDescriptor
    private let path: String
    private let sealer: ChunkSealer
    /// The chunk being filled (nil once the last has gone to the sealer).
    private var pending: UnsafeMutableRawBufferPointer?
    private var pendingCount = 0
    private var index: UInt64 = 0

    init(file: FileDescriptor, path: String, header: BackupArchiveHeader, keys: BackupKeys) throws(BackupError) {
        self.file = file
        self.path = path
        let bytes = header.encoded(keys: keys)
        do throws(Errno) {
            try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try file.write(b, at: 0) } }.get()
        } catch {
            throw .system(operation: "write", path: path, errno: error)
        }
        sealer = try ChunkSealer(file: file, path: path, prefix: header.prefix, key: keys.stream, headerByteCount: bytes.count)
        pending = sealer.pool.take()
    }

    /// A writer dropped before `finish` (the backup failed): its archive is thrown away.
    deinit {
        if let pending { sealer.pool.give(pending) }
        sealer.abandon()
    }

    func append(_ bytes: [UInt8]) throws(BackupError) {
        try bytes.withUnsafeBytes { b in Result { () throws(BackupError) in try append(b) } }.get()
    }

    func append(_ bytes: UnsafeRawBufferPointer) throws(BackupError) {
        var rest = bytes[...]
        while !rest.isEmpty {
            if pendingCount == BackupChunks.plaintextByteCount { try seal(last: false) }
            guard let pending else { preconditionFailure("appended after finish") }
            let take = min(rest.count, BackupChunks.plaintextByteCount - pendingCount)
            UnsafeMutableRawBufferPointer(rebasing: pending[pendingCount...]).copyMemory(from: UnsafeRawBufferPointer(rebasing: rest.prefix(take)))
            pendingCount += take
            rest = rest.dropFirst(take)
        }
    }

    /// Seals the last chunk (empty only for an empty body), waits for every chunk to be
    /// written, and syncs.
    func finish() throws(BackupError) {
        try seal(last: true)
        try sealer.finish()
        do { try file.sync() } catch { throw .system(operation: "sync", path: path, errno: error) }
    }

    private func seal(last: Bool) throws(BackupError) {
        guard let full = pending else { preconditionFailure("sealed after finish") }
        let chunk = ChunkSealer.Chunk(buffer: full, count: pendingCount, index: index, last: last)
        pending = nil
        pendingCount = 0
        index += 1
        try sealer.submit(chunk)
        if !last { pending = sealer.pool.take() }
    }
}

/// Reads an archive's body back: every chunk opened with its index and, for the chunk that
/// ends the file, the last flag; a byte missing or left over is damage.
final class BackupStreamReader {
    let archiveID: [UInt8]
    let contentAEAD: ContentAEAD
    private let chunkCount: UInt64
    private let chunks: ChunkOpener
    private var index: UInt64 = 0
    /// The chunk being read, `position` bytes into it.
    private var current: ChunkOpener.Opened?
    private var position = 0

    /// Reads and checks the header: `wrongPassphrase` when the check does not match.
    /// `attempt` runs before Argon2id with the archive id and returns what to call once the
    /// passphrase is known to be right (the wrong-passphrase delays); `alongside`, once the
    /// attempt is allowed, with the Argon2id parameters about to be used (to start other
    /// work beside them).
    static func open(file: FileDescriptor, passphrase: SecureBuffer,
                     alongside: (Argon2idParameters) -> Void = { _ in },
                     attempt: (ObjectID) throws(BackupError) -> () throws(BackupError) -> Void) throws(BackupError)
        -> (BackupStreamReader, BackupKeys) {
        let size: Int64
        var headerBytes = [UInt8](repeating: 0, count: BackupArchiveHeader.byteCount)
        do throws(Errno) {
            size = Int64(try file.status().st_size)
            let n = try headerBytes.withUnsafeMutableBytes { b in Result { () throws(Errno) in try file.read(into: b, at: 0) } }.get()
            headerBytes.removeLast(headerBytes.count - n)
        } catch {
            throw .system(operation: "read", path: "the archive", errno: error)
        }
        let (header, check) = try BackupArchiveHeader.decode(headerBytes)
        let succeeded = try attempt(ObjectID(bytes: header.archiveID)!)
        alongside(header.kdf)
        let keys = try header.keys(passphrase: passphrase)
        guard ConstantTime.equal(keys.check(header.prefix), check) else { throw .wrongPassphrase }
        try succeeded()
        let body = size - Int64(BackupArchiveHeader.byteCount)
        let full = UInt64(body / Int64(BackupChunks.sealedByteCount))
        let remainder = Int(body % Int64(BackupChunks.sealedByteCount))
        // The last chunk is full (remainder 0, at least one chunk) or holds its 40 bytes.
        guard body > 0, remainder == 0 || remainder >= XChaCha20Poly1305.overhead else {
            throw .damaged("it is cut short")
        }
        let count = remainder == 0 ? full : full + 1
        let reader = try BackupStreamReader(file: file, prefix: header.prefix, key: keys.stream, archiveID: header.archiveID,
                                            contentAEAD: header.contentAEAD, chunkCount: count,
                                            finalChunkByteCount: remainder == 0 ? BackupChunks.sealedByteCount : remainder)
        return (reader, keys)
    }

    private init(file: FileDescriptor, prefix: [UInt8], key: LockedKey, archiveID: [UInt8], contentAEAD: ContentAEAD,
                 chunkCount: UInt64, finalChunkByteCount: Int) throws(BackupError) {
        self.archiveID = archiveID
        self.contentAEAD = contentAEAD
        self.chunkCount = chunkCount
        chunks = try ChunkOpener(file: file, prefix: prefix, key: key, count: chunkCount, finalChunkByteCount: finalChunkByteCount)
    }

    deinit {
        if let current { chunks.pool.give(current.buffer) }
        chunks.stop()
    }

    /// Exactly `count` bytes of the body.
    func read(_ count: Int) throws(BackupError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        try read(count) { out.append(contentsOf: $0) }
        return out
    }

    /// Exactly `count` bytes of the body, handed to `body` a piece at a time (each piece
    /// valid only during the call), copied nowhere else.
    func read(_ count: Int, _ body: (UnsafeRawBufferPointer) throws(BackupError) -> Void) throws(BackupError) {
        var done = 0
        while done < count {
            if position == current?.count ?? 0 { try openNextChunk() }
            guard let current else { preconditionFailure("no chunk after opening one") }
            let take = min(count - done, current.count - position)
            try body(UnsafeRawBufferPointer(rebasing: current.bytes[position..<(position + take)]))
            position += take
            done += take
        }
    }

    func readInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(BackupError) -> T {
        try read(MemoryLayout<T>.size).littleEndian(at: 0)
    }

    /// The body must end here: every chunk read, nothing left in the last.
    func finish() throws(BackupError) {
        guard position == current?.count ?? 0, index == chunkCount else { throw .damaged("it goes on after its end record") }
    }

    private func openNextChunk() throws(BackupError) {
        guard index < chunkCount else { throw .damaged("it ends in the middle of a record") }
        if let used = current { chunks.pool.give(used.buffer) }
        current = nil
        current = try chunks.chunk(index)
        position = 0
        index += 1
    }
}
