import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// The changes a file takes: writes, truncation, `fallocate` and re-classing.
extension EncryptedFile {
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
}
