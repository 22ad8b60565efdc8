import ProtfsCrypto

/// Where the sealed chunks of a regular file sit in its backing object (docs/FORMAT.md,
/// "Regular files"): the header, then plaintext chunk `i` sealed at `header + i * sealed`.
/// Pure arithmetic, no key: `getattr` derives the plaintext size from the backing size alone.
public enum ContentLayout {
    public static let headerByteCount: Int64 = 328
    public static let chunkByteCount = 4096
    public static let chunkOverhead = ContentAEAD.overhead
    public static let sealedChunkByteCount = chunkByteCount + chunkOverhead

    /// The largest plaintext size whose backing size still fits in an `off_t`.
    public static let maximumPlaintextSize: Int64 =
        (Int64.max - headerByteCount) / Int64(sealedChunkByteCount) * Int64(chunkByteCount)

    /// Where chunk `index` starts in the backing object.
    public static func backingOffset(ofChunk index: Int64) -> Int64 {
        headerByteCount + index * Int64(sealedChunkByteCount)
    }

    /// The plaintext size a backing size stands for. Lenient, for `getattr`: a malformed size
    /// (see `isWellFormed`) still maps to a number, and reading the file reports the damage.
    public static func plaintextSize(backingSize: Int64) -> Int64 {
        guard backingSize > headerByteCount else { return 0 }
        let content = backingSize - headerByteCount
        let sealed = Int64(sealedChunkByteCount)
        return content / sealed * Int64(chunkByteCount) + max(content % sealed - Int64(chunkOverhead), 0)
    }

    /// False for sizes no protfs file can have: shorter than the header, or ending in a
    /// stump of 1 to 40 bytes that cannot hold a sealed chunk.
    public static func isWellFormed(backingSize: Int64) -> Bool {
        guard backingSize >= headerByteCount else { return false }
        let remainder = (backingSize - headerByteCount) % Int64(sealedChunkByteCount)
        return remainder == 0 || remainder > Int64(chunkOverhead)
    }

    /// The backing size of a file holding `plaintextSize` bytes.
    public static func backingSize(plaintextSize: Int64) -> Int64 {
        let full = plaintextSize / Int64(chunkByteCount)
        let tail = plaintextSize % Int64(chunkByteCount)
        return backingOffset(ofChunk: full) + (tail > 0 ? tail + Int64(chunkOverhead) : 0)
    }

    /// How many chunks a file of `plaintextSize` bytes has.
    public static func chunkCount(plaintextSize: Int64) -> Int64 {
        (plaintextSize + Int64(chunkByteCount) - 1) / Int64(chunkByteCount)
    }

    /// The plaintext length of chunk `index` in a file of `plaintextSize` bytes (0 past the end).
    public static func chunkLength(ofChunk index: Int64, plaintextSize: Int64) -> Int {
        let start = index * Int64(chunkByteCount)
        return Int(min(max(plaintextSize - start, 0), Int64(chunkByteCount)))
    }

    /// The chunks that hold the plaintext bytes `range`.
    public static func chunks(covering range: Range<Int64>) -> Range<Int64> {
        guard !range.isEmpty else { return 0..<0 }
        return range.lowerBound / Int64(chunkByteCount) ..< (range.upperBound - 1) / Int64(chunkByteCount) + 1
    }

    /// The backing bytes that hold `chunks` in a file of `plaintextSize` bytes (the last
    /// chunk of the file is shorter when its plaintext is). `chunks` is not empty and lies
    /// within the file.
    public static func backingRange(ofChunks chunks: Range<Int64>, plaintextSize: Int64) -> Range<Int64> {
        let last = chunks.upperBound - 1
        let lastLength = chunkLength(ofChunk: last, plaintextSize: plaintextSize)
        return backingOffset(ofChunk: chunks.lowerBound) ..< backingOffset(ofChunk: last) + Int64(lastLength + chunkOverhead)
    }
}

// MARK: arithmetic on the ranges of one read or write

extension ContentLayout {
    /// The plaintext bytes of chunk `index` in a file of `plaintextSize` bytes.
    package static func plaintextRange(ofChunk index: Int64, plaintextSize: Int64) -> Range<Int64> {
        let start = index * Int64(chunkByteCount)
        return start ..< start + Int64(chunkLength(ofChunk: index, plaintextSize: plaintextSize))
    }

    /// The sealed bytes of chunk `index` inside the buffer that holds `run`.
    package static func sealedChunk(_ index: Int64, of run: Range<Int64>, in buffer: UnsafeMutableRawBufferPointer,
                            plaintextLength: Int) -> UnsafeMutableRawBufferPointer {
        let start = Int(index - run.lowerBound) * sealedChunkByteCount
        return UnsafeMutableRawBufferPointer(rebasing: buffer[start ..< start + plaintextLength + chunkOverhead])
    }

    /// The bytes of `buffer` that hold the file range `range`, when `buffer` starts at file offset `origin`.
    package static func slice(_ buffer: UnsafeMutableRawBufferPointer, _ range: Range<Int64>, relativeTo origin: Int64) -> UnsafeMutableRawBufferPointer {
        UnsafeMutableRawBufferPointer(rebasing: buffer[Int(range.lowerBound - origin) ..< Int(range.upperBound - origin)])
    }

    /// `chunks` in pieces of at most `length` chunks, one backing call each.
    package static func runs(of chunks: Range<Int64>, atMost length: Int64) -> [Range<Int64>] {
        stride(from: chunks.lowerBound, to: chunks.upperBound, by: Int(length)).map { $0 ..< min($0 + length, chunks.upperBound) }
    }

    /// Sorted, with overlapping or adjacent ranges joined (so a run is one backing write).
    package static func merged(_ ranges: [Range<Int64>]) -> [Range<Int64>] {
        ranges.filter { !$0.isEmpty }.sorted { $0.lowerBound < $1.lowerBound }.reduce(into: []) { result, range in
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound ..< max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
    }
}
