import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The body of an archive: plaintext records cut into 64 KiB chunks, each sealed like file
/// contents (XChaCha20-Poly1305, random nonce) with the header, the chunk index and a
/// last-chunk flag as associated data, so a changed, reordered, dropped or cut chunk does not
/// open. Nothing follows the last chunk.
enum BackupChunks {
    static let plaintextByteCount = 64 * 1024
    static let sealedByteCount = plaintextByteCount + XChaCha20Poly1305.overhead

    static func associatedData(prefix: [UInt8], index: UInt64, last: Bool) -> [UInt8] {
        var ad = prefix
        ad.appendLittleEndian(index)
        ad.append(last ? 1 : 0)
        return ad
    }
}

/// Writes an archive front to back in constant memory: one chunk held until the next byte
/// shows it is not the last.
final class BackupStreamWriter {
    private let file: FileDescriptor
    private let path: String
    private let prefix: [UInt8]
    private let key: LockedKey
    private var pending: [UInt8] = []
    private var index: UInt64 = 0
    private var offset: Int64

    init(file: FileDescriptor, path: String, header: BackupArchiveHeader, keys: BackupKeys) throws(BackupError) {
        self.file = file
        self.path = path
        prefix = header.prefix
        key = keys.stream
        offset = 0
        pending.reserveCapacity(BackupChunks.plaintextByteCount)
        try write(header.encoded(keys: keys))
    }

    func append(_ bytes: [UInt8]) throws(BackupError) {
        var rest = bytes[...]
        while !rest.isEmpty {
            if pending.count == BackupChunks.plaintextByteCount { try seal(last: false) }
            let take = min(rest.count, BackupChunks.plaintextByteCount - pending.count)
            pending += rest.prefix(take)
            rest = rest.dropFirst(take)
        }
    }

    /// Seals the last chunk (empty only for an empty body) and syncs.
    func finish() throws(BackupError) {
        try seal(last: true)
        do { try file.sync() } catch { throw .system(operation: "sync", path: path, errno: error) }
    }

    private func seal(last: Bool) throws(BackupError) {
        let ad = BackupChunks.associatedData(prefix: prefix, index: index, last: last)
        try write(XChaCha20Poly1305.seal(pending, authenticating: ad, with: key))
        secureZero(&pending)
        pending.removeAll(keepingCapacity: true)
        index += 1
    }

    private func write(_ bytes: [UInt8]) throws(BackupError) {
        do throws(Errno) {
            try bytes.withUnsafeBytes { b in Result { () throws(Errno) in try file.write(b, at: offset) } }.get()
        } catch {
            throw .system(operation: "write", path: path, errno: error)
        }
        offset += Int64(bytes.count)
    }
}

/// Reads an archive's body back: every chunk opened with its index and, for the chunk that
/// ends the file, the last flag; a byte missing or left over is damage.
final class BackupStreamReader {
    private let file: FileDescriptor
    private let prefix: [UInt8]
    private let key: LockedKey
    let archiveID: [UInt8]
    private let chunkCount: UInt64
    private let finalChunkByteCount: Int
    private var index: UInt64 = 0
    private var current: [UInt8] = []
    private var position = 0

    /// Reads and checks the header: `wrongPassphrase` when the check does not match.
    /// `attempt` runs before Argon2id with the archive id and returns what to call once the
    /// passphrase is known to be right (the wrong-passphrase delays).
    static func open(file: FileDescriptor, passphrase: SecureBuffer,
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
        let reader = BackupStreamReader(file: file, prefix: header.prefix, key: keys.stream, archiveID: header.archiveID,
                                        chunkCount: count,
                                        finalChunkByteCount: remainder == 0 ? BackupChunks.sealedByteCount : remainder)
        return (reader, keys)
    }

    private init(file: FileDescriptor, prefix: [UInt8], key: LockedKey, archiveID: [UInt8], chunkCount: UInt64,
                 finalChunkByteCount: Int) {
        self.file = file
        self.prefix = prefix
        self.key = key
        self.archiveID = archiveID
        self.chunkCount = chunkCount
        self.finalChunkByteCount = finalChunkByteCount
    }

    /// Exactly `count` bytes of the body.
    func read(_ count: Int) throws(BackupError) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(count)
        while out.count < count {
            if position == current.count { try openNextChunk() }
            let take = min(count - out.count, current.count - position)
            out += current[position..<(position + take)]
            position += take
        }
        return out
    }

    func readInteger<T: FixedWidthInteger>(_ type: T.Type = T.self) throws(BackupError) -> T {
        try read(MemoryLayout<T>.size).littleEndian(at: 0)
    }

    /// The body must end here: every chunk read, nothing left in the last.
    func finish() throws(BackupError) {
        guard position == current.count, index == chunkCount else { throw .damaged("it goes on after its end record") }
    }

    private func openNextChunk() throws(BackupError) {
        guard index < chunkCount else { throw .damaged("it ends in the middle of a record") }
        let last = index == chunkCount - 1
        var sealed = [UInt8](repeating: 0, count: last ? finalChunkByteCount : BackupChunks.sealedByteCount)
        let offset = Int64(BackupArchiveHeader.byteCount) + Int64(index) * Int64(BackupChunks.sealedByteCount)
        let n: Int
        do throws(Errno) {
            n = try sealed.withUnsafeMutableBytes { b in Result { () throws(Errno) in try file.read(into: b, at: offset) } }.get()
        } catch {
            throw .system(operation: "read", path: "the archive", errno: error)
        }
        guard n == sealed.count else { throw .damaged("a chunk is cut short") }
        secureZero(&current)
        do {
            current = try XChaCha20Poly1305.open(sealed, authenticating: BackupChunks.associatedData(prefix: prefix, index: index, last: last),
                                                 with: key)
        } catch {
            throw .damaged("chunk \(index) does not authenticate")
        }
        position = 0
        index += 1
    }
}
