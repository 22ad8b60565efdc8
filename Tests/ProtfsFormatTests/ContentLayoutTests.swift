import Testing
import ProtfsTestSupport
@testable import ProtfsFormat

@Suite struct ContentLayoutTests {
    @Test func backingSizeAndPlaintextSizeAreInverse() {
        for size: Int64 in [0, 1, 40, 41, 4095, 4096, 4097, 8191, 8192, 8193, 1 << 20, (5 << 30) + 123] {
            let backing = ContentLayout.backingSize(plaintextSize: size)
            #expect(ContentLayout.isWellFormed(backingSize: backing))
            #expect(ContentLayout.plaintextSize(backingSize: backing) == size)
        }
    }

    @Test func knownSizes() {
        #expect(ContentLayout.backingSize(plaintextSize: 0) == 328)
        #expect(ContentLayout.backingSize(plaintextSize: 1) == 328 + 41)
        #expect(ContentLayout.backingSize(plaintextSize: 4096) == 328 + 4136)
        #expect(ContentLayout.backingSize(plaintextSize: 4097) == 328 + 4136 + 41)
        #expect(ContentLayout.backingOffset(ofChunk: 3) == 328 + 3 * 4136)
        #expect(ContentLayout.plaintextSize(backingSize: 0) == 0)
        #expect(ContentLayout.plaintextSize(backingSize: 100) == 0)
    }

    @Test func malformedBackingSizes() {
        #expect(!ContentLayout.isWellFormed(backingSize: 0))
        #expect(!ContentLayout.isWellFormed(backingSize: 327))
        for stump: Int64 in 1...40 {
            #expect(!ContentLayout.isWellFormed(backingSize: 328 + stump))
            #expect(!ContentLayout.isWellFormed(backingSize: 328 + 4136 + stump))
            // Lenient for getattr: a stump counts for nothing.
            #expect(ContentLayout.plaintextSize(backingSize: 328 + 4136 + stump) == 4096)
        }
        #expect(ContentLayout.isWellFormed(backingSize: 328 + 41))
    }

    @Test func chunkRanges() {
        #expect(ContentLayout.chunks(covering: 0..<0).isEmpty)
        #expect(ContentLayout.chunks(covering: 0..<1) == 0..<1)
        #expect(ContentLayout.chunks(covering: 0..<4096) == 0..<1)
        #expect(ContentLayout.chunks(covering: 4095..<4097) == 0..<2)
        #expect(ContentLayout.chunks(covering: 4096..<8193) == 1..<3)
        #expect(ContentLayout.chunkCount(plaintextSize: 0) == 0)
        #expect(ContentLayout.chunkCount(plaintextSize: 4097) == 2)
        #expect(ContentLayout.chunkLength(ofChunk: 1, plaintextSize: 4097) == 1)
        #expect(ContentLayout.chunkLength(ofChunk: 0, plaintextSize: 4097) == 4096)
        #expect(ContentLayout.chunkLength(ofChunk: 2, plaintextSize: 4097) == 0)
        #expect(ContentLayout.backingRange(ofChunks: 0..<2, plaintextSize: 4097) == 328 ..< 328 + 4136 + 41)
        #expect(ContentLayout.backingRange(ofChunks: 1..<2, plaintextSize: 9000) == 328 + 4136 ..< 328 + 2 * 4136)
    }

    @Test func offsetsPastFourGiB() {
        let index: Int64 = (5 << 30) / 4096
        #expect(ContentLayout.backingOffset(ofChunk: index) == 328 + index * 4136)
        #expect(ContentLayout.backingOffset(ofChunk: index) > Int64(UInt32.max))
    }
}
