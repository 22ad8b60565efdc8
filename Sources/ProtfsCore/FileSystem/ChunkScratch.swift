import ProtfsFormat
import ProtfsSystem

/// The buffers of one read or write call, taken from pools rather than allocated per call
/// or per chunk: the sealed bytes of a run, one sealed chunk, and one chunk of plaintext
/// (locked in memory, wiped before it goes back). At most `limit` calls hold them at once (the others wait):
/// more than two cores can use, and slack for calls that wait on the disk.
struct ChunkScratch {
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
