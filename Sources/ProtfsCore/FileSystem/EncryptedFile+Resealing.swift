import ProtfsFormat
import ProtfsSystem

/// Sealing chunks again after a write or a size change, with the space reserved first.
extension EncryptedFile {
    func resize(from oldSize: Int64, to newSize: Int64) throws(Errno) {
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
    static func formerLastChunk(from oldSize: Int64, to newSize: Int64) -> Int64? {
        let oldLast = ContentLayout.chunkCount(plaintextSize: oldSize) - 1
        return oldLast >= 0 && oldLast < ContentLayout.chunkCount(plaintextSize: newSize) - 1 ? oldLast : nil
    }

    /// Seals `chunks` again for a file going from `oldSize` to `newSize` bytes. Each chunk's
    /// new plaintext is its old one (zeros where it had none), cut or zero-extended to its
    /// new length, with `data` laid over it at `dataOffset`; a chunk that `data` covers whole
    /// is sealed straight from `data`. The backing space of every chunk is reserved before
    /// anything is written. Chunks past the old end that are not listed stay holes.
    func reseal(_ chunks: [Range<Int64>], from oldSize: Int64, to newSize: Int64,
                        overlaying data: UnsafeRawBufferPointer = UnsafeRawBufferPointer(start: nil, count: 0),
                        at dataOffset: Int64 = 0) throws(Errno) {
        let chunks = ContentLayout.merged(chunks)
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
        for run in chunks.flatMap({ ContentLayout.runs(of: $0, atMost: Self.chunksPerRun) }) {
            let backing = ContentLayout.backingRange(ofChunks: run, plaintextSize: newSize)
            let sealedRun = scratch.sealedRun(byteCount: Int(backing.count))
            func isCovered(_ chunk: Range<Int64>) -> Bool {
                dataRange.lowerBound <= chunk.lowerBound && chunk.upperBound <= dataRange.upperBound
            }
            // Chunks `data` covers whole are sealed straight from it, spread over the cores.
            try ChunkParallelism.forEach(run) { (index) throws(Errno) in
                let chunk = ContentLayout.plaintextRange(ofChunk: index, plaintextSize: newSize)
                guard isCovered(chunk) else { return }
                let plaintext = UnsafeRawBufferPointer(rebasing: data[Int(chunk.lowerBound - dataOffset) ..< Int(chunk.upperBound - dataOffset)])
                cipher.seal(plaintext, index: index, isLast: index == newLast,
                            into: ContentLayout.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count))
            }
            // The others (the edges of a write, a re-sealed last chunk): old plaintext, zero
            // extended, with `data` laid over it.
            for index in run {
                let chunk = ContentLayout.plaintextRange(ofChunk: index, plaintextSize: newSize)
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
                    ContentLayout.slice(plaintext, overlap, relativeTo: chunk.lowerBound)
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: data[Int(overlap.lowerBound - dataOffset) ..< Int(overlap.upperBound - dataOffset)]))
                }
                cipher.seal(UnsafeRawBufferPointer(rebasing: plaintext[0..<chunk.count]), index: index, isLast: index == newLast,
                            into: ContentLayout.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count))
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
}
