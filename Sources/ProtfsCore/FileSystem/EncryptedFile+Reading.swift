import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// Reading: whole runs of sealed chunks per backing `pread`, opened in parallel.
extension EncryptedFile {
    /// Reads up to `buffer.count` bytes at `offset`; fewer only at end of file. A damaged
    /// chunk anywhere in the range fails the whole read with `EIO` (never a short read: the
    /// kernel would take it for end of file), and `buffer` is zeroed.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int64) throws(Errno) -> Int {
        try readReturningStatus(into: buffer, at: offset).count
    }

    /// `read(into:at:)`, also returning the backing file's status it took for the size: a
    /// caller that needs the file's times too (relatime) then makes no `fstat` of its own,
    /// one system call less per `READ`.
    public func readReturningStatus(into buffer: UnsafeMutableRawBufferPointer,
                                    at offset: Int64) throws(Errno) -> (count: Int, status: stat) {
        guard offset >= 0 else { throw .invalid }
        return try lock.withShared { () throws(Errno) -> (count: Int, status: stat) in
            let status = try descriptor.status()
            let size = try Self.checkedSize(backingSize: Int64(status.st_size))
            guard offset < size, !buffer.isEmpty else { return (0, status) }
            let output = UnsafeMutableRawBufferPointer(rebasing: buffer[0..<Int(min(size - offset, Int64(buffer.count)))])
            do throws(Errno) {
                try decrypt(into: output, at: offset, plaintextSize: size)
            } catch {
                secureZero(output)
                throw error
            }
            return (output.count, status)
        }
    }

    private func decrypt(into output: UnsafeMutableRawBufferPointer, at offset: Int64, plaintextSize size: Int64) throws(Errno) {
        let wanted = offset ..< offset + Int64(output.count)
        let chunks = ContentLayout.chunks(covering: wanted)
        let lastChunk = ContentLayout.chunkCount(plaintextSize: size) - 1
        let scratch = ChunkScratch()
        defer { scratch.release() }
        for run in ContentLayout.runs(of: chunks, atMost: Self.chunksPerRun) {
            let backing = ContentLayout.backingRange(ofChunks: run, plaintextSize: size)
            let sealedRun = scratch.sealedRun(byteCount: Int(backing.count))
            guard try descriptor.read(into: sealedRun, at: backing.lowerBound) == sealedRun.count else { throw .io }
            // Chunks the read covers whole open straight into `output`, spread over the cores;
            // the (at most two) partial ones go through the scratch plaintext.
            try ChunkParallelism.forEach(run) { (index) throws(Errno) in
                let chunk = ContentLayout.plaintextRange(ofChunk: index, plaintextSize: size)
                guard chunk.clamped(to: wanted) == chunk else { return }
                let sealed = ContentLayout.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count)
                try cipher.open(UnsafeRawBufferPointer(sealed), index: index, isLast: index == lastChunk,
                                into: ContentLayout.slice(output, chunk, relativeTo: offset))
            }
            for index in Set([run.lowerBound, run.upperBound - 1]) {
                let chunk = ContentLayout.plaintextRange(ofChunk: index, plaintextSize: size)
                let visible = chunk.clamped(to: wanted)
                guard visible != chunk else { continue }
                let sealed = ContentLayout.sealedChunk(index, of: run, in: sealedRun, plaintextLength: chunk.count)
                let plaintext = scratch.plaintext(byteCount: chunk.count)
                try cipher.open(UnsafeRawBufferPointer(sealed), index: index, isLast: index == lastChunk, into: plaintext)
                ContentLayout.slice(output, visible, relativeTo: offset)
                    .copyMemory(from: UnsafeRawBufferPointer(ContentLayout.slice(plaintext, visible, relativeTo: chunk.lowerBound)))
            }
        }
    }
}
