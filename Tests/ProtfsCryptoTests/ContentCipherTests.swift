import COpenSSL
import CSodium
import Dispatch
import Glibc
@testable import ProtfsCrypto
import ProtfsTestSupport
import Synchronization
import Testing

/// The content AEADs through OpenSSL: XChaCha20-Poly1305 byte for byte libsodium's (the
/// draft's published vector in both libraries, and random inputs sealed by both), AES-256-GCM
/// with its 192-bit IV against an independent implementation's answer, and the contexts'
/// memory.
@Suite struct ContentCipherTests {
    static let key = Array(0x80...0x9f).map(UInt8.init)
    static let nonce = Array(0x40...0x57).map(UInt8.init)
    static let ad = hexBytes("50515253c0c1c2c3c4c5c6c7")!
    static let plaintext = Array("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.".utf8)

    static func cipher(_ aead: ContentAEAD, key: [UInt8]) throws -> ContentCipher {
        ContentCipher(aead, key: try key.withUnsafeBytes { try LockedKey.copying($0) })
    }

    /// `nonce || ciphertext || tag` as `cipher` seals it under `nonce`.
    static func seal(_ cipher: ContentCipher, _ plaintext: [UInt8], nonce: [UInt8], ad: [UInt8]) -> [UInt8] {
        var sealed = nonce + [UInt8](repeating: 0, count: plaintext.count + ContentAEAD.tagByteCount)
        plaintext.withUnsafeBytes { p in
            ad.withUnsafeBytes { a in sealed.withUnsafeMutableBytes { cipher.sealKeepingNonce(p, authenticating: a, into: $0) } }
        }
        return sealed
    }

    static func open(_ cipher: ContentCipher, _ sealed: [UInt8], ad: [UInt8]) throws -> [UInt8] {
        var out = [UInt8](repeating: 0xAA, count: sealed.count - ContentAEAD.overhead)
        try sealed.withUnsafeBytes { s in
            try ad.withUnsafeBytes { a in
                try out.withUnsafeMutableBytes { o in try cipher.open(s, authenticating: a, into: o) }
            }
        }
        return out
    }

    /// libsodium's `crypto_aead_xchacha20poly1305_ietf_encrypt`, as `nonce || ciphertext || tag`.
    static func libsodiumSeal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], ad: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: plaintext.count + ContentAEAD.tagByteCount)
        var written: UInt64 = 0
        _ = sodium_init()
        let rc = crypto_aead_xchacha20poly1305_ietf_encrypt(&out, &written, plaintext, UInt64(plaintext.count), ad, UInt64(ad.count),
                                                            nil, nonce, key)
        precondition(rc == 0)
        return nonce + out
    }

    @Test func xchachaGivesTheDraftVectorInBothLibraries() throws {
        let expected = Self.nonce + hexBytes(
            "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb"
            + "96b72e1213b4522f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff921f9664c97637da9768812f615c68b13b52e"
            + "c0875924c1c7987947deafd8780acf49")!
        #expect(Self.libsodiumSeal(Self.plaintext, key: Self.key, nonce: Self.nonce, ad: Self.ad) == expected)
        let cipher = try Self.cipher(.xchacha20Poly1305, key: Self.key)
        #expect(Self.seal(cipher, Self.plaintext, nonce: Self.nonce, ad: Self.ad) == expected)
        #expect(try Self.open(cipher, expected, ad: Self.ad) == Self.plaintext)
    }

    @Test func aesGCMWithA192BitIVGivesAnIndependentImplementationsAnswer() throws {
        // Python's `cryptography` (AESGCM, a 24-byte nonce) on the same key, IV, data and text.
        let expected = Self.nonce + hexBytes(
            "61bb1a43987e4c5cc584f54f7aadb495639c60b21202c92f7cf0f599ed69f3861ab94b72d8d417eedd00ec89cc47ba3f9bb7695f9b41748cd3c2"
            + "1aadbdba9dd3ee11e3b6ae3e9e1c4a6d82e51a29e23612f73b99824049d49d17c330fb7bdbb17bc2c2f6cf6154c437f413e58545171d9d6c"
            + "4591e5c6d4fe098b8683cb54dd128064")!
        let cipher = try Self.cipher(.aes256GCM, key: Self.key)
        #expect(Self.seal(cipher, Self.plaintext, nonce: Self.nonce, ad: Self.ad) == expected)
        #expect(try Self.open(cipher, expected, ad: Self.ad) == Self.plaintext)
    }

    @Test(arguments: [0, 1, 63, 64, 65, 4095, 4096])
    func xchachaIsLibsodiumsByteForByte(_ length: Int) throws {
        let key = SecureRandom.bytes(32), ad = SecureRandom.bytes(25)
        let cipher = try Self.cipher(.xchacha20Poly1305, key: key)
        for _ in 0..<8 {
            let nonce = SecureRandom.bytes(24), plaintext = SecureRandom.bytes(length)
            let bySodium = Self.libsodiumSeal(plaintext, key: key, nonce: nonce, ad: ad)
            #expect(Self.seal(cipher, plaintext, nonce: nonce, ad: ad) == bySodium)
            #expect(try Self.open(cipher, bySodium, ad: ad) == plaintext)
        }
    }

    @Test(arguments: ContentAEAD.allCases)
    func anyChangeFailsAndLeavesNoPlaintext(_ aead: ContentAEAD) throws {
        let cipher = ContentCipher(aead, key: .random())
        let plaintext = SecureRandom.bytes(100)
        var sealed = [UInt8](repeating: 0, count: 140)
        let none = UnsafeRawBufferPointer(start: nil, count: 0)
        plaintext.withUnsafeBytes { p in sealed.withUnsafeMutableBytes { cipher.seal(p, authenticating: none, into: $0) } }
        #expect(try Self.open(cipher, sealed, ad: []) == plaintext)
        for position in [0, 12, 23, 24, 80, 123, 124, 139] {
            var changed = sealed
            changed[position] ^= 0x04
            var out = [UInt8](repeating: 0xAA, count: 100)
            #expect(throws: CryptoError.authenticationFailed) {
                try changed.withUnsafeBytes { s in
                    try out.withUnsafeMutableBytes { o in
                        try cipher.open(s, authenticating: none, into: o)
                    }
                }
            }
            #expect(out == [UInt8](repeating: 0, count: 100), "a failed open leaves zeros")
        }
        #expect(throws: CryptoError.authenticationFailed) { try Self.open(cipher, sealed, ad: [1]) }
    }

    @Test(arguments: ContentAEAD.allCases)
    func concurrentChunksEachGetAContext(_ aead: ContentAEAD) throws {
        let cipher = ContentCipher(aead, key: .random())
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 64) { i in
            let plaintext = [UInt8](repeating: UInt8(truncatingIfNeeded: i), count: 4096)
            let sealed = Self.seal(cipher, plaintext, nonce: SecureRandom.bytes(24), ad: [UInt8(i)])
            if (try? Self.open(cipher, sealed, ad: [UInt8(i)])) != plaintext { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
        // The slots' contexts stay for the next chunks; any made beyond them went after use.
        #expect((1...ContentCipher.slotCount).contains(cipher.contextCount))
    }

    @Test func contextsLiveInLockedMemoryWipedWhenFreed() async {
        // In a process of its own, where nothing has called OpenSSL yet: as in the daemon.
        await #expect(processExitsWith: .success) {
            func check(_ condition: Bool, _ what: String) {
                if !condition { print("failed: \(what)"); exit(EXIT_FAILURE) }
            }
            check(OpenSSLLockedHeap.usage.installed, "OpenSSL allocates in the locked heap")
            for aead in ContentAEAD.allCases {
                let warmUp = ContentCipher(aead, key: .random())
                _ = ContentCipherTests.seal(warmUp, [1], nonce: SecureRandom.bytes(24), ad: [])
                let before = OpenSSLLockedHeap.usage.liveAllocations
                var cipher: ContentCipher? = ContentCipher(aead, key: .random())
                _ = ContentCipherTests.seal(cipher!, [1], nonce: SecureRandom.bytes(24), ad: [])
                check(OpenSSLLockedHeap.usage.liveAllocations > before, "a context is allocated in the locked heap")
                cipher = nil
                check(OpenSSLLockedHeap.usage.liveAllocations == before, "freeing the cipher frees its context")
                withExtendedLifetime(warmUp) {}
            }
            // A block OpenSSL frees is wiped (but for the free list's link in its first 8 bytes).
            guard let block = CRYPTO_malloc(256, nil, 0) else { exit(EXIT_FAILURE) }
            check(OpenSSLLockedHeap.contains(block), "the block is in the locked heap")
            block.initializeMemory(as: UInt8.self, repeating: 0xAB, count: 256)
            CRYPTO_free(block, nil, 0)
            let left = UnsafeRawBufferPointer(start: block + 8, count: 248)
            check(left.allSatisfy { $0 == 0 }, "a freed block is wiped")
            // A block too large for the size classes has a mapping of its own, which a
            // realloc moves with its bytes and a free unmaps.
            let mapped = OpenSSLLockedHeap.usage.mappedBytes
            guard let large = CRYPTO_malloc(100_000, nil, 0) else { exit(EXIT_FAILURE) }
            large.initializeMemory(as: UInt8.self, repeating: 0xCD, count: 100_000)
            guard let moved = CRYPTO_realloc(large, 300_000, nil, 0) else { exit(EXIT_FAILURE) }
            check(OpenSSLLockedHeap.contains(moved), "the moved block is in the locked heap")
            check(UnsafeRawBufferPointer(start: moved, count: 100_000).allSatisfy { $0 == 0xCD }, "realloc keeps the bytes")
            CRYPTO_free(moved, nil, 0)
            check(OpenSSLLockedHeap.usage.mappedBytes == mapped, "a large block's mapping goes with it")
            exit(EXIT_SUCCESS)
        }
    }
}
