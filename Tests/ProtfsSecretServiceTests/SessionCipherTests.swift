import ProtfsCrypto
import Testing
@testable import ProtfsSecretService

/// The encrypted session's construction (docs/SECRETS.md): two sides agree on one key, a
/// secret round-trips through AES-128-CBC with PKCS#7, and hostile inputs are refused.
@Suite struct SessionCipherTests {
    @Test func bothSidesAgreeAndSecretsRoundTrip() throws {
        // The first side's public value stands in for a client's; each side derives from the other's.
        let client = try #require(DiffieHellmanSession(peerPublicKey: [5]))
        let server = try #require(DiffieHellmanSession(peerPublicKey: client.publicKey))
        let clientAgain = try #require(DiffieHellmanSession(peerPublicKey: server.publicKey))
        #expect(server.publicKey.count == 128 && client.publicKey != server.publicKey)
        for length in [0, 1, 15, 16, 17, 4096] {
            let secret = SecureBuffer(count: length)
            secret.withUnsafeMutableBytes { for i in $0.indices { $0[i] = UInt8(i % 251) } }
            let (iv, ciphertext) = try #require(SessionCipher.encrypt(secret, key: server.key))
            #expect(ciphertext.count == (length / 16 + 1) * 16)
            let opened = try #require(ciphertext.withUnsafeBytes { SessionCipher.decrypt($0, iv: iv, key: server.key) })
            #expect(opened.withUnsafeBytes { Array($0) } == secret.withUnsafeBytes { Array($0) })
            // Another exchange yields another key: the padding check refuses almost always, and
            // never returns the plaintext.
            let other = ciphertext.withUnsafeBytes { SessionCipher.decrypt($0, iv: iv, key: clientAgain.key) }
            #expect(other.map { $0.withUnsafeBytes { Array($0) } } != secret.withUnsafeBytes { Array($0) } || length == 0 && other == nil)
        }
    }

    @Test func hostileInputsAreRefused() throws {
        let prime = DiffieHellmanSession.primeBytes
        var primeMinusOne = prime
        primeMinusOne[prime.count - 1] -= 1
        for bad in [[], [0], [1], primeMinusOne, prime, [UInt8](repeating: 0xFF, count: 129)] {
            #expect(DiffieHellmanSession(peerPublicKey: bad) == nil)
        }
        let key = try #require(DiffieHellmanSession(peerPublicKey: [2])).key
        let block = [UInt8](repeating: 7, count: 16)
        for (ciphertext, iv) in [([UInt8](), block), ([UInt8](repeating: 1, count: 15), block), (block, [UInt8](repeating: 0, count: 8))] {
            #expect(ciphertext.withUnsafeBytes { SessionCipher.decrypt($0, iv: iv, key: key) } == nil)
        }
    }
}
