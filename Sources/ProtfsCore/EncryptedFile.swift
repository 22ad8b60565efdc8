import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem
import Synchronization

/// A regular file's contents, read and written at random offsets through its backing object
/// (docs/FORMAT.md, "Regular files"). Owns the backing descriptor (closed when the object
/// goes) and the per-file key (wiped when the last reference goes: dropping the object is
/// how a lock forgets a file's key). Reads run in parallel; writes, truncations and
/// re-classes are exclusive. Errors are `Errno`: `EIO` for damage or failed
/// authentication, `EACCES` for a missing class key. Nothing here logs.
public final class EncryptedFile: Sendable {
    /// Chunks handled per backing `pread`/`pwrite`: 1 MiB of plaintext, one FUSE request.
    static let chunksPerRun: Int64 = 256

    public let fileID: ObjectID
    private let descriptor: FileDescriptor
    private let fileKey: LockedKey
    private let cipher: ChunkCipher
    private let lock = ReadWriteLock()
    private let headerState: Mutex<FileHeader>
    /// Why the backing object could only be opened for reading (a backing mode without the
    /// owner's write bit, a read-only backing filesystem); changes then fail with it.
    private let writeRefusal: Errno?
    /// Where this file's key is counted while it lives.
    private let census: FileKeyCensus

    private init(descriptor: FileDescriptor, header: FileHeader, fileKey: LockedKey, keyring: ClassKeyring,
                 writeRefusal: Errno? = nil) {
        self.descriptor = descriptor
        self.fileKey = fileKey
        self.writeRefusal = writeRefusal
        fileID = header.fileID
        cipher = ChunkCipher(fileKey: fileKey, fileID: header.fileID)
        headerState = Mutex(header)
        census = keyring.fileKeys
        census.enrol(self)
    }

    deinit {
        census.leave(self)
        descriptor.close()
    }

    public var header: FileHeader { headerState.withLock { $0 } }

    /// Takes the header a re-class through another descriptor has just committed (same file
    /// id and key, re-wrapped), so the file's class as seen here stays the truth.
    func adopt(rewrapped header: FileHeader) {
        precondition(header.fileID == fileID)
        headerState.withLock { $0 = header }
    }

    /// Sets an xattr of the backing file through the descriptor already open (no /proc
    /// walk): the class hint of a file just created.
    public func setBackingAttribute(_ name: String, _ value: [UInt8]) throws(Errno) {
        try descriptor.setExtendedAttribute(name, value)
    }
    public var protectionClass: ProtectionClass { header.protectionClass }

    // MARK: creating and opening

    /// Creates `name` in `directory` (`O_CREAT|O_EXCL`) as an empty file of `protectionClass`
    /// and writes its header (not synced: the caller decides). `EACCES` when the class key
    /// (for `completeUnlessOpen`, its public key) is not in `keyring`; nothing is created then.
    public static func create(in directory: FileDescriptor, name: String, mode: mode_t,
                              protectionClass: ProtectionClass, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        let (header, fileKey) = try FileHeader.create(protectionClass: protectionClass, keyring: keyring)
        let descriptor = try FileDescriptor.open(name, in: directory, [.create, .exclusive, .readWrite, .nonBlocking], mode: mode)
        do {
            try header.encoded().withUnsafeBytes { bytes in
                Result { () throws(Errno) in try descriptor.write(bytes, at: 0) }
            }.get()
        } catch {
            descriptor.close()
            try? directory.removeFile(name)
            throw error
        }
        return EncryptedFile(descriptor: descriptor, header: header, fileKey: fileKey, keyring: keyring)
    }

    /// Opens a file from a descriptor the caller opened for reading and writing (`O_NONBLOCK`).
    /// On success the file owns the descriptor; on failure the caller still does. `EIO` if it
    /// is not a regular file or its header is damaged (see `FileHeader.diagnose`), `EACCES`
    /// if its class key is not installed.
    public static func open(_ descriptor: FileDescriptor, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        try open(descriptor, keyring: keyring, writeRefusal: nil)
    }

    private static func open(_ descriptor: FileDescriptor, keyring: ClassKeyring, writeRefusal: Errno?) throws(Errno) -> EncryptedFile {
        guard try descriptor.status().isRegularFile else { throw .io }
        let header = try FileHeader.read(from: descriptor, keyring: keyring)
        return EncryptedFile(descriptor: descriptor, header: header, fileKey: try header.unwrapFileKey(keyring: keyring),
                             keyring: keyring, writeRefusal: writeRefusal)
    }

    /// Opens a file whose header the caller has just read (and checked) from `descriptor`, a
    /// regular file open for reading and writing: only the key is unwrapped. Ownership of the
    /// descriptor as in `open(_:keyring:)`.
    public static func open(_ descriptor: FileDescriptor, header: FileHeader, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        EncryptedFile(descriptor: descriptor, header: header, fileKey: try header.unwrapFileKey(keyring: keyring), keyring: keyring)
    }

    /// Opens the object an `O_PATH` descriptor refers to, for reading and writing. It is
    /// checked to be a regular file before it is opened, through the descriptor's /proc link,
    /// so a FIFO or device node planted in the backing directory is never opened. When the
    /// backing object cannot be opened for writing (say a 0444 file, as git makes, under a
    /// daemon that is not root, or a read-only backing filesystem), it is opened for reading
    /// and writes fail with the error the read-write open got.
    public static func open(reopening pathDescriptor: FileDescriptor, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        guard try pathDescriptor.status().isRegularFile else { throw .io }
        let descriptor: FileDescriptor
        var writeRefusal: Errno?
        do {
            descriptor = try FileDescriptor.open(path: pathDescriptor.procPath, [.readWrite, .nonBlocking])
        } catch {
            guard error == .permissionDenied || error == Errno(EROFS) else { throw error }
            writeRefusal = error
            descriptor = try FileDescriptor.open(path: pathDescriptor.procPath, [.readOnly, .nonBlocking])
        }
        do { return try open(descriptor, keyring: keyring, writeRefusal: writeRefusal) } catch {
            descriptor.close()
            throw error
        }
    }

    /// Opens `name` in `directory` as `open(reopening:keyring:)` does, never opening anything
    /// but a regular file.
    public static func open(_ name: String, in directory: FileDescriptor, keyring: ClassKeyring) throws(Errno) -> EncryptedFile {
        let pathDescriptor = try FileDescriptor.open(name, in: directory, .path)
        defer { pathDescriptor.close() }
        return try open(reopening: pathDescriptor, keyring: keyring)
    }

    // MARK: size

    /// The plaintext size, from the backing size alone.
    public func size() throws(Errno) -> Int64 {
        ContentLayout.plaintextSize(backingSize: Int64(try descriptor.status().st_size))
    }

    /// The plaintext size, or `EIO` when the backing size is one no protfs file can have.
    private func checkedSize() throws(Errno) -> Int64 {
        let backingSize = Int64(try descriptor.status().st_size)
        guard ContentLayout.isWellFormed(backingSize: backingSize) else { throw .io }
        return ContentLayout.plaintextSize(backingSize: backingSize)
    }

    // MARK: reading

    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file. A damaged
    /// chunk anywhere in the range fails the whole read with `EIO` (never a short read: the
    /// kernel would take it for end of file), and `buffer` is zeroed.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        guard offset >= 0 else { throw .invalid }
        return try lock.withShared { () throws(Errno) -> Int in
            let size = try checkedSize()
            guard offset < size, !buffer.isEmpty else { return 0 }
            let output = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(size - offset, Int64(buffer.count)))])
            do throws(Errno) {
                try decrypt(into: output, at: offset, plaintextSize: size)
            } catch {
                secureZero(output)
                throw error
            }
            return output.count
        }
    }

    private func decrypt(into output: UnsafeMutableRawBufferPointer, at offset: Int64, plaintextSize size: Int64) throws(Errno) {
        let wanted = offset ..< offset + Int64(output.count)
        let chunks = ContentLayout.chunks(covering: wanted)
        let lastChunk = ContentLayout.chunkCount(plaintextSize: size) - 1
        let scratch = ChunkScratch()
        defer { scratch.release() }
        for run in Self.runs(of: chunks) {
            let backing = ContentLayout.backingRange(ofChunks: run, plaintextSize: size)
            let sealedRun = scratch.sealedRun(byteCount: Int(backing.count))
            guard try descriptor.read(into: sealedRun, at: backing.lowerBound) == sealedRun.count else { throw .io }
            // Chunks the read covers whole open straight into `output`, spread over the cores;
            // the (at most two) partial ones go through the scratch plaintext.
            try ChunkParallelism.forEach(run) { (index) throws(Errno) in
                let chunk = Self.plaintextRange(ofChunk: index, plaintextSize: size)
                guard chunk.clamped(to: wanted) == chunk else { return }
                let sealed = Self.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count)
                try cipher.open(UnsafeRawBufferPointer(sealed), index: index, isLast: index == lastChunk,
                                into: Self.slice(output, chunk, relativeTo: offset))
            }
            for index in Set([run.lowerBound, run.upperBound - 1]) {
                let chunk = Self.plaintextRange(ofChunk: index, plaintextSize: size)
                let visible = chunk.clamped(to: wanted)
                guard visible != chunk else { continue }
                let sealed = Self.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count)
                let plaintext = scratch.plaintext(byteCount: chunk.count)
                try cipher.open(UnsafeRawBufferPointer(sealed), index: index, isLast: index == lastChunk, into: plaintext)
                Self.slice(output, visible, relativeTo: offset)
                    .copyMemory(from: UnsafeRawBufferPointer(Self.slice(plaintext, visible, relativeTo: chunk.lowerBound)))
            }
        }
    }

    // MARK: writing

    /// Writes all of `data` at `offset`, growing the file if needed (the gap stays a hole).
    /// Space is reserved first, so `ENOSPC` leaves the file as it was. `data` is plaintext:
    /// the caller wipes it afterwards.
    public func write(_ data: UnsafeRawBufferPointer, at offset: Int64) throws(Errno) {
        guard offset >= 0 else { throw .invalid }
        guard !data.isEmpty else { return }
        guard offset <= ContentLayout.maximumPlaintextSize - Int64(data.count) else { throw .fileTooLarge }
        try ensureWritable()
        try lock.withExclusive { () throws(Errno) in
            let oldSize = try checkedSize()
            let written = offset ..< offset + Int64(data.count)
            let newSize = max(oldSize, written.upperBound)
            var chunks = [ContentLayout.chunks(covering: written)]
            if let formerLast = Self.formerLastChunk(from: oldSize, to: newSize) { chunks.append(formerLast ..< formerLast + 1) }
            do throws(Errno) {
                try reseal(chunks, from: oldSize, to: newSize, overlaying: data, at: offset)
            } catch {
                // What the write added goes again: the file keeps its old size and chunks.
                if newSize > oldSize { try? descriptor.truncate(to: ContentLayout.backingSize(plaintextSize: oldSize)) }
                throw error
            }
        }
    }

    /// Sets the plaintext size. Shrinking re-seals the new last chunk as the last one; growing
    /// re-seals the old last chunk as a full one and seals the new last chunk explicitly (so
    /// cutting the file stays detectable); the chunks in between are holes.
    public func truncate(to size: Int64) throws(Errno) {
        guard size >= 0 else { throw .invalid }
        guard size <= ContentLayout.maximumPlaintextSize else { throw .fileTooLarge }
        try ensureWritable()
        try lock.withExclusive { () throws(Errno) in try resize(from: checkedSize(), to: size) }
    }

    /// `fallocate` mode 0: reserves backing space for the plaintext bytes
    /// `offset ..< offset + length` and grows the file to cover them; contents are kept.
    /// `EOPNOTSUPP` when the backing filesystem cannot reserve space.
    public func allocate(offset: Int64, length: Int64) throws(Errno) {
        guard offset >= 0, length > 0 else { throw .invalid }
        guard offset <= ContentLayout.maximumPlaintextSize - length else { throw .fileTooLarge }
        try ensureWritable()
        try lock.withExclusive { () throws(Errno) in
            let oldSize = try checkedSize()
            let range = offset ..< offset + length
            let newSize = max(oldSize, range.upperBound)
            // Reserved blocks read as zeros, which is a hole: no chunk changes meaning.
            let backing = ContentLayout.backingRange(ofChunks: ContentLayout.chunks(covering: range), plaintextSize: newSize)
            try descriptor.allocate(offset: backing.lowerBound, length: Int64(backing.count), keepSize: true)
            try resize(from: oldSize, to: newSize)
        }
    }

    /// A descriptor of the backing object of its own, which the caller closes: what `fsync`
    /// needs, without the key.
    public func backingDescriptorCopy() throws(Errno) -> FileDescriptor { try descriptor.duplicate() }

    /// Re-wraps the file key for `newClass` and writes the header crash-atomically; contents
    /// are not re-encrypted. `EACCES` when the new class's key (for `completeUnlessOpen`, its
    /// public key) is not in `keyring`. Whether the lock state allows it is the caller's call.
    public func reclass(to newClass: ProtectionClass, keyring: ClassKeyring) throws(Errno) {
        try ensureWritable()
        try lock.withExclusive { () throws(Errno) in
            var header = self.header
            guard header.protectionClass != newClass else { return }
            try header.rewrap(to: newClass, fileKey: fileKey, keyring: keyring)
            try header.commitRewrap(to: descriptor)
            headerState.withLock { $0 = header }
        }
    }

    private func ensureWritable() throws(Errno) {
        if let writeRefusal { throw writeRefusal }
    }

    // MARK: re-sealing

    private func resize(from oldSize: Int64, to newSize: Int64) throws(Errno) {
        guard newSize != oldSize else { return }
        let newLast = ContentLayout.chunkCount(plaintextSize: newSize) - 1
        if newSize < oldSize {
            // Re-seal first, within space the file already has, then cut.
            if newLast >= 0 { try reseal([newLast ..< newLast + 1], from: oldSize, to: newSize) }
            try descriptor.truncate(to: ContentLayout.backingSize(plaintextSize: newSize))
        } else {
            var chunks = [newLast ..< newLast + 1]
            if let formerLast = Self.formerLastChunk(from: oldSize, to: newSize) { chunks.append(formerLast ..< formerLast + 1) }
            try reseal(chunks, from: oldSize, to: newSize)
        }
    }

    /// The old last chunk when growing the file leaves it in the middle: it must be sealed
    /// again as a full chunk that is not the last.
    private static func formerLastChunk(from oldSize: Int64, to newSize: Int64) -> Int64? {
        let oldLast = ContentLayout.chunkCount(plaintextSize: oldSize) - 1
        return oldLast >= 0 && oldLast < ContentLayout.chunkCount(plaintextSize: newSize) - 1 ? oldLast : nil
    }

    /// Seals `chunks` again for a file going from `oldSize` to `newSize` bytes. Each chunk's
    /// new plaintext is its old one (zeros where it had none), cut or zero-extended to its
    /// new length, with `data` laid over it at `dataOffset`; a chunk that `data` covers whole
    /// is sealed straight from `data`. The backing space of every chunk is reserved before
    /// anything is written. Chunks past the old end that are not listed stay holes.
    private func reseal(_ chunks: [Range<Int64>], from oldSize: Int64, to newSize: Int64,
                        overlaying data: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                        at dataOffset: Int64 = 0) throws(Errno) {
        let chunks = Self.merged(chunks)
        // Only a write that rewrites stored chunks can tear one on a full disk: their space is
        // reserved first. A write that only adds chunks (a new file, most small files) skips
        // the reservation, which would cost a block allocation of its own; if it fails, the
        // caller cuts the file back to its old size.
        let oldLast = ContentLayout.chunkCount(plaintextSize: oldSize) - 1
        if chunks.contains(where: { $0.lowerBound <= oldLast }) {
            for range in chunks {
                try reserve(ContentLayout.backingRange(ofChunks: range, plaintextSize: newSize))
            }
        }
        let dataRange = dataOffset ..< dataOffset + Int64(data.count)
        let newLast = ContentLayout.chunkCount(plaintextSize: newSize) - 1
        let scratch = ChunkScratch()
        defer { scratch.release() }
        for run in chunks.flatMap(Self.runs) {
            let backing = ContentLayout.backingRange(ofChunks: run, plaintextSize: newSize)
            let sealedRun = scratch.sealedRun(byteCount: Int(backing.count))
            func isCovered(_ chunk: Range<Int64>) -> Bool {
                dataRange.lowerBound <= chunk.lowerBound && chunk.upperBound <= dataRange.upperBound
            }
            // Chunks `data` covers whole are sealed straight from it, spread over the cores.
            try ChunkParallelism.forEach(run) { (index) throws(Errno) in
                let chunk = Self.plaintextRange(ofChunk: index, plaintextSize: newSize)
                guard isCovered(chunk) else { return }
                let plaintext = UnsafeRawBufferPointer(rebasing: data[Int(chunk.lowerBound - dataOffset) ..< Int(chunk.upperBound - dataOffset)])
                cipher.seal(plaintext, index: index, isLast: index == newLast,
                            into: Self.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count))
            }
            // The others (the edges of a write, a re-sealed last chunk): old plaintext, zero
            // extended, with `data` laid over it.
            for index in run {
                let chunk = Self.plaintextRange(ofChunk: index, plaintextSize: newSize)
                guard !isCovered(chunk) else { continue }
                let plaintext = scratch.plaintext(byteCount: ContentLayout.chunkByteCount)
                plaintext.initializeMemory(as: UInt8.self, repeating: 0)
                let oldLength = ContentLayout.chunkLength(ofChunk: index, plaintextSize: oldSize)
                if oldLength > 0 {
                    try openStoredChunk(index, plaintextLength: oldLength, isLast: index == oldLast,
                                        into: UnsafeMutableRawBufferPointer(rebasing: plaintext[0..<oldLength]), scratch: scratch)
                }
                let overlap = dataRange.clamped(to: chunk)
                if !overlap.isEmpty {
                    Self.slice(plaintext, overlap, relativeTo: chunk.lowerBound)
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: data[Int(overlap.lowerBound - dataOffset) ..< Int(overlap.upperBound - dataOffset)]))
                }
                cipher.seal(UnsafeRawBufferPointer(rebasing: plaintext[0..<chunk.count]), index: index, isLast: index == newLast,
                            into: Self.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count))
            }
            try descriptor.write(UnsafeRawBufferPointer(sealedRun), at: backing.lowerBound)
        }
    }

    /// Reads and opens one chunk as it is stored now.
    private func openStoredChunk(_ index: Int64, plaintextLength: Int, isLast: Bool,
                                 into plaintext: UnsafeMutableRawBufferPointer, scratch: ChunkScratch) throws(Errno) {
        let sealed = scratch.sealedChunk(byteCount: plaintextLength + ContentLayout.chunkOverhead)
        guard try descriptor.read(into: sealed, at: ContentLayout.backingOffset(ofChunk: index)) == sealed.count else { throw .io }
        try cipher.open(UnsafeRawBufferPointer(sealed), index: index, isLast: isLast, into: plaintext)
    }

    /// Reserves backing space without changing the size, so a later `ENOSPC` cannot tear a
    /// chunk; a backing filesystem without `fallocate` goes without.
    private func reserve(_ backing: Range<Int64>) throws(Errno) {
        do {
            try descriptor.allocate(offset: backing.lowerBound, length: Int64(backing.count), keepSize: true)
        } catch {
            if error != .notSupported { throw error }
        }
    }

    // MARK: arithmetic on ranges

    private static func plaintextRange(ofChunk index: Int64, plaintextSize: Int64) -> Range<Int64> {
        let start = index * Int64(ContentLayout.chunkByteCount)
        return start ..< start + Int64(ContentLayout.chunkLength(ofChunk: index, plaintextSize: plaintextSize))
    }

    /// The sealed bytes of chunk `index` inside the buffer that holds `run`.
    private static func sealedChunk(_ index: Int64, of run: Range<Int64>, in buffer: UnsafeMutableRawBufferPointer,
                                    plaintextLength: Int) -> UnsafeMutableRawBufferPointer {
        let start = Int(index - run.lowerBound) * ContentLayout.sealedChunkByteCount
        return UnsafeMutableRawBufferPointer(rebasing: buffer[start ..< start + plaintextLength + ContentLayout.chunkOverhead])
    }

    /// The bytes of `buffer` that hold the file range `range`, when `buffer` starts at file offset `origin`.
    private static func slice(_ buffer: UnsafeMutableRawBufferPointer, _ range: Range<Int64>, relativeTo origin: Int64) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer[Int(range.lowerBound - origin) ..< Int(range.upperBound - origin)])
    }

    /// `chunks` in pieces of at most `chunksPerRun`, one backing call each.
    private static func runs(of chunks: Range<Int64>) -> [Range<Int64>] {
        stride(from: chunks.lowerBound, to: chunks.upperBound, by: Int(chunksPerRun)).map { $0 ..< min($0 + chunksPerRun, chunks.upperBound) }
    }

    /// Sorted, with overlapping or adjacent ranges joined (so a run is one backing write).
    private static func merged(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        ranges.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }.reduce(into: []) { result, range in
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound ..< max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
    }
}

/// The buffers of one read or write call, taken from pools rather than allocated per call
/// or per chunk: the sealed bytes of a run, one sealed chunk, and one chunk of plaintext
/// (locked in memory, wiped before it goes back). At most `limit` calls hold them at once (the others wait):
/// more than two cores can use, and slack for calls that wait on the disk.
private struct ChunkScratch {
    static let limit = 8
    static let runs = BufferPool(byteCount: Int(EncryptedFile.chunksPerRun) * ContentLayout.sealedChunkByteCount, limit: limit)
    static let chunks = BufferPool(byteCount: ContentLayout.sealedChunkByteCount, limit: limit)
    static let plaintexts = BufferPool(byteCount: ContentLayout.chunkByteCount, limit: limit, holdsPlaintext: true)

    private let run: UnsafeMutableRawBufferPointer
    private let chunk: UnsafeMutableRawBufferPointer
    private let plain: UnsafeMutableRawBufferPointer

    init() {
        run = Self.runs.take()
        chunk = Self.chunks.take()
        plain = Self.plaintexts.take()
    }

    func sealedRun(byteCount: Int) -> UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: run[0..<byteCount]) }
    func sealedChunk(byteCount: Int) -> UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: chunk[0..<byteCount]) }
    func plaintext(byteCount: Int) -> UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: plain[0..<byteCount]) }

    func release() {
        Self.runs.give(run)
        Self.chunks.give(chunk)
        Self.plaintexts.give(plain)
    }
}
