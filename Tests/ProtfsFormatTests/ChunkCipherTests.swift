import Testing
import ProtfsTestSupport
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem

/// Every property of a chunk's seal, for both content AEADs.
@Suite struct ChunkCipherTests {
    struct Chunks {
        let cipher: ChunkCipher

        init(_ aead: ContentAEAD) { cipher = ChunkCipher(fileKey: .random(), fileID: .random(), aead: aead) }
        init(cipher: ChunkCipher) { self.cipher = cipher }

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
    }

    @Test(arguments: ContentAEAD.allCases) func roundTrip(_ aead: ContentAEAD) throws {
        let chunks = Chunks(aead)
        let plaintext = (0..<4096).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let sealed = chunks.seal(plaintext, index: 5, isLast: false)
        #expect(sealed.count == 4136)
        #expect(try chunks.open(sealed, index: 5, isLast: false) == plaintext)
        #expect(try chunks.open(chunks.seal([1, 2, 3], index: 0, isLast: true), index: 0, isLast: true) == [1, 2, 3])
    }

    @Test(arguments: ContentAEAD.allCases) func associatedDataBindsIndexLastFlagAndFile(_ aead: ContentAEAD) {
        let chunks = Chunks(aead)
        let sealed = chunks.seal([1, 2, 3, 4], index: 7, isLast: true)
        #expect(throws: Errno.io) { try chunks.open(sealed, index: 8, isLast: true) }
        #expect(throws: Errno.io) { try chunks.open(sealed, index: 7, isLast: false) }
        #expect(throws: Errno.io) { try chunks.open(sealed, index: 7 + (1 << 32), isLast: true) }
        let otherFile = ChunkCipher(fileKey: .random(), fileID: .random(), aead: aead)
        #expect(throws: Errno.io) { try chunks.open(sealed, index: 7, isLast: true, with: otherFile) }
    }

    @Test(arguments: ContentAEAD.allCases) func allZeroChunkIsAHole(_ aead: ContentAEAD) throws {
        let chunks = Chunks(aead)
        #expect(try chunks.open([UInt8](repeating: 0, count: 4136), index: 3, isLast: false) == [UInt8](repeating: 0, count: 4096))
        #expect(try chunks.open([UInt8](repeating: 0, count: 50), index: 3, isLast: true) == [UInt8](repeating: 0, count: 10))
    }

    @Test(arguments: ContentAEAD.allCases) func tamperedChunkFails(_ aead: ContentAEAD) {
        let chunks = Chunks(aead)
        for position in [0, 23, 30, 42] {  // nonce, nonce's last byte, ciphertext, tag
            var sealed = chunks.seal([9, 9, 9], index: 0, isLast: true)
            sealed[position] ^= 1
            #expect(throws: Errno.io) { try chunks.open(sealed, index: 0, isLast: true) }
        }
    }

    @Test(arguments: ContentAEAD.allCases) func aChunkOfTheOtherCipherFails(_ aead: ContentAEAD) {
        // The same key and file under the other AEAD: what a vault whose keybag names the
        // wrong cipher would see.
        let key = LockedKey.random(), fileID = ObjectID.random()
        let other: ContentAEAD = aead == .aes256GCM ? .xchacha20Poly1305 : .aes256GCM
        let sealer = Chunks(cipher: ChunkCipher(fileKey: key, fileID: fileID, aead: aead))
        let sealed = sealer.seal([UInt8](repeating: 5, count: 100), index: 0, isLast: true)
        #expect(throws: Errno.io) {
            try sealer.open(sealed, index: 0, isLast: true, with: ChunkCipher(fileKey: key, fileID: fileID, aead: other))
        }
    }
}
