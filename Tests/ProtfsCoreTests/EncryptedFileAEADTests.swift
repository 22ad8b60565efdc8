import Dispatch
import Synchronization
import ProtfsDomain
import ProtfsTestSupport
import Testing
@testable import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

/// An encrypted file under each content AEAD: random writes and truncations against a model,
/// readers in parallel (a cipher context each), and a vault whose keybag names the other
/// AEAD reading it: `EIO`, never other bytes.
@Suite struct EncryptedFileAEADTests {
    let directory: ContentTestDirectory

    init() throws { directory = try ContentTestDirectory() }

    @Test(arguments: ContentAEAD.allCases)
    func randomWritesTruncationsAndParallelReads(_ aead: ContentAEAD) throws {
        let keys = ContentTestKeys(aead: aead)
        let file = try EncryptedFile.create(in: directory.descriptor, name: "f", mode: 0o600, protectionClass: .complete,
                                            keyring: keys.keyring)
        var generator = SeededGenerator(seed: UInt64(aead.rawValue) + 40)
        var model = PlaintextModel()
        for _ in 0..<60 {
            if Int.random(in: 0..<8, using: &generator) == 0 {
                let size = Int.random(in: 0..<30_000, using: &generator)
                try file.truncate(to: Int64(size))
                model.truncate(to: size)
            } else {
                let offset = Int.random(in: 0..<30_000, using: &generator)
                let data = randomBytes(Int.random(in: 0..<9000, using: &generator), using: &generator)
                try file.write(data, at: Int64(offset))
                model.write(data, at: offset)
            }
        }
        let expected = model.bytes
        let mismatches = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            if (try? file.readAll()) != expected { mismatches.withLock { $0 += 1 } }
        }
        #expect(mismatches.withLock { $0 } == 0)
        #expect(file.cipher.keyScheduleCount >= 1)
        #expect(try EncryptedFile.open("f", in: directory.descriptor, keyring: keys.keyring).readAll() == expected)
    }

    @Test(arguments: ContentAEAD.allCases)
    func theOtherAEADReadsNothing(_ aead: ContentAEAD) throws {
        let keys = ContentTestKeys(aead: aead)
        try EncryptedFile.create(in: directory.descriptor, name: "f", mode: 0o600, protectionClass: .none, keyring: keys.keyring)
            .write([UInt8](repeating: 7, count: 5000), at: 0)
        let other = ClassKeyring(vaultID: keys.keyring.vaultID, deviceKeys: keys.keyring.deviceKeys,
                                 classBPublicKey: keys.keyring.classBPublicKey,
                                 contentAEAD: aead == .aes256GCM ? .xchacha20Poly1305 : .aes256GCM)
        for (protectionClass, key) in keys.classKeys { other.install(key, for: protectionClass) }
        let file = try EncryptedFile.open("f", in: directory.descriptor, keyring: other)
        #expect(throws: Errno.io) { try file.readAll() }
    }
}
