import Testing
import ProtfsTestSupport
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

@Suite struct ChunkCipherTests {
    let cipher = ChunkCipher(fileKey: .random(), fileID: .random())

    func seal(_ plaintext: [UInt8], index: Int64, isLast: Bool) -> [UInt8] {
        var sealed = [UInt8](repeating: 0, count: plaintext.count + 40)
        plaintext.withUnsafeBytes { p in sealed.withUnsafeMutableBytes { cipher.seal(p, index: index, isLast: isLast, into: $0) } }
        return sealed
    }

    func open(_ sealed: [UInt8], index: Int64, isLast: Bool, with other: ChunkCipher? = nil) throws(Errno) -> [UInt8] {
        var out = [UInt8](repeating: 0xAA, count: sealed.count - 40)
        try sealed.withUnsafeBytes { s in
            out.withUnsafeMutableBytes { o in
                Result { () throws(Errno) in try (other ?? cipher).open(s, index: index, isLast: isLast, into: o) }
            }
        }.get()
        return out
    }

    @Test func roundTrip() throws {
        let plaintext = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let sealed = seal(plaintext, index: 5, isLast: false)
        #expect(sealed.count == 4136)
        #expect(try open(sealed, index: 5, isLast: false) == plaintext)
        #expect(try open(seal([1, 2, 3], index: 0, isLast: true), index: 0, isLast: true) == [1, 2, 3])
    }

    @Test func associatedDataBindsIndexLastFlagAndFile() {
        let sealed = seal([1, 2, 3, 4], index: 7, isLast: true)
        #expect(throws: Errno.io) { try open(sealed, index: 8, isLast: true) }
        #expect(throws: Errno.io) { try open(sealed, index: 7, isLast: false) }
        #expect(throws: Errno.io) { try open(sealed, index: 7 + (1 << 32), isLast: true) }
        let otherFile = ChunkCipher(fileKey: .random(), fileID: .random())
        #expect(throws: Errno.io) { try open(sealed, index: 7, isLast: true, with: otherFile) }
    }

    @Test func allZeroChunkIsAHole() throws {
        #expect(try open([UInt8](repeating: 0, count: 4136), index: 3, isLast: false) == [UInt8](repeating: 0, count: 4096))
        #expect(try open([UInt8](repeating: 0, count: 50), index: 3, isLast: true) == [UInt8](repeating: 0, count: 10))
    }

    @Test func tamperedChunkFails() {
        var sealed = seal([9, 9, 9], index: 0, isLast: true)
        sealed[30] ^= 1
        #expect(throws: Errno.io) { try open(sealed, index: 0, isLast: true) }
    }
}
