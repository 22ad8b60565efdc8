import Testing
@testable import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

@Suite struct FileHeaderTests {
    let keys = ContentTestKeys()
    var keyring: ClassKeyring { keys.keyring }

    @Test(arguments: ProtectionClass.allCases)
    func wrapAndUnwrapEachClass(_ protectionClass: ProtectionClass) throws {
        let (header, fileKey) = try FileHeader.create(protectionClass: protectionClass, keyring: keyring)
        let bytes = header.encoded()
        #expect(bytes.count == FileHeader.byteCount)
        #expect(Array(bytes[0..<4]) == Array("PFSF".utf8))
        #expect(bytes[4] == 2 && bytes[5] == 0, "format 2")
        #expect(bytes[24] == 1 && bytes[25..<32].allSatisfy { $0 == 0 }, "generation 1")
        // Slot bytes 8..<48 are hidden under the pfhdrcls stream, the sealed key's nonce as nonce.
        let hidden = XChaCha20.xor(Array(bytes[32..<72]), nonce: Array(bytes[72..<96]), key: keyring.deviceKeys.headerClass)
        #expect(hidden[0] == protectionClass.rawValue)
        #expect(hidden[1] == (protectionClass == .completeUnlessOpen ? 3 : 4))
        #expect(hidden[2..<8].allSatisfy { $0 == 0 })
        #expect(hidden[8...].allSatisfy { $0 == 0 } == (protectionClass != .completeUnlessOpen), "the ephemeral key, for class B only")
        #expect(bytes[176...].allSatisfy { $0 == 0 }, "slot 1 starts empty")
        let decoded = try FileHeader.decode(bytes, keyring: keyring)
        #expect(decoded.fileID == header.fileID)
        #expect(decoded.protectionClass == protectionClass)
        #expect(decoded.generation == 1)
        #expect(try decoded.unwrapFileKey(keyring: keyring).isEqual(to: fileKey))
    }

    /// What a backing observer sees of a header must not depend on its class: a byte that is
    /// the same in every header of one class must be that same value for every class (the
    /// magic, the version, the generation, the empty slot). Format 1 fails this, which shows
    /// the check can fail.
    @Test func theClassIsHiddenFromTheBackingBytes() throws {
        func classDependentOffsets(version: UInt16) throws -> [Int] {
            var constants: [ProtectionClass: [Int: UInt8]] = [:]
            for protectionClass in ProtectionClass.allCases {
                let headers = try (0..<24).map { _ in
                    try FileHeader.create(protectionClass: protectionClass, keyring: keyring, version: version).0.encoded()
                }
                constants[protectionClass] = Dictionary(uniqueKeysWithValues: (0..<FileHeader.byteCount).compactMap { offset in
                    Set(headers.map { $0[offset] }).count == 1 ? (offset, headers[0][offset]) : nil
                })
            }
            let all = Array(constants.values)
            return (0..<FileHeader.byteCount).filter { offset in Set(all.map { $0[offset] }).count > 1 }
        }
        #expect(try classDependentOffsets(version: 2) == [])
        let formatOne = try classDependentOffsets(version: 1)
        #expect(formatOne.contains(24 + 8) && formatOne.contains(24 + 9), "format 1 stored the class and wrap kind in the clear")
    }

    @Test func aFormatOneHeaderStaysFormatOneThroughAReclass() throws {
        var (header, fileKey) = try FileHeader.create(protectionClass: .none, keyring: keyring, version: 1)
        #expect(header.encoded()[24 + 8] == ProtectionClass.none.rawValue, "format 1: the class in the clear")
        try header.rewrap(to: .completeUnlessOpen, fileKey: fileKey, keyring: keyring)
        let decoded = try FileHeader.decode(header.encoded(), keyring: keyring)
        #expect(decoded.version == 1 && decoded.protectionClass == .completeUnlessOpen && decoded.generation == 2)
        #expect(try decoded.unwrapFileKey(keyring: keyring).isEqual(to: fileKey))
        // The wrap binds the version: the same slot under a format-2 prefix does not open.
        var relabelled = header.encoded()
        relabelled[4] = 2
        #expect(throws: Errno.io) { try FileHeader.decode(relabelled, keyring: keyring) }
    }

    @Test func classBIsCreatedWithThePublicKeyAlone() throws {
        keyring.remove(ProtectionClass.allCases)
        let (header, fileKey) = try FileHeader.create(protectionClass: .completeUnlessOpen, keyring: keyring)
        let decoded = try FileHeader.decode(header.encoded(), keyring: keyring)
        #expect(decoded.protectionClass == .completeUnlessOpen)
        #expect(throws: Errno.permissionDenied) { try decoded.unwrapFileKey(keyring: keyring) }
        keyring.install(keys.classKeys[.completeUnlessOpen]!, for: .completeUnlessOpen)
        #expect(try decoded.unwrapFileKey(keyring: keyring).isEqual(to: fileKey))
    }

    @Test(arguments: [ProtectionClass.complete, .completeUntilFirstUserAuthentication, .none])
    func missingClassKeyIsPermissionDenied(_ protectionClass: ProtectionClass) throws {
        let (header, _) = try FileHeader.create(protectionClass: protectionClass, keyring: keyring)
        keyring.remove([protectionClass])
        #expect(throws: Errno.permissionDenied) { try FileHeader.create(protectionClass: protectionClass, keyring: keyring) }
        // The class can still be read without any class key.
        let decoded = try FileHeader.decode(header.encoded(), keyring: keyring)
        #expect(decoded.protectionClass == protectionClass)
        #expect(throws: Errno.permissionDenied) { try decoded.unwrapFileKey(keyring: keyring) }
    }

    @Test func wrongClassKeyFailsAuthentication() throws {
        let (header, _) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        keyring.install(.random(), for: .complete)
        #expect(throws: Errno.io) { try header.unwrapFileKey(keyring: keyring) }
        let (classB, _) = try FileHeader.create(protectionClass: .completeUnlessOpen, keyring: keyring)
        keyring.install(X25519.generatePrivateKey(), for: .completeUnlessOpen)
        #expect(throws: Errno.io) { try classB.unwrapFileKey(keyring: keyring) }
    }

    @Test func foreignVaultIsRejected() throws {
        let (header, _) = try FileHeader.create(protectionClass: .none, keyring: keyring)
        let otherVault = ContentTestKeys()
        #expect(throws: Errno.io) { try FileHeader.decode(header.encoded(), keyring: otherVault.keyring) }
        #expect(FileHeader.diagnose(header.encoded(), keyring: otherVault.keyring) == .noValidSlot)
        // Same device key, another vault id: the MAC binds the vault id.
        let sameDevice = ClassKeyring(vaultID: .random(), deviceKeys: keyring.deviceKeys, classBPublicKey: keyring.classBPublicKey)
        #expect(throws: Errno.io) { try FileHeader.decode(header.encoded(), keyring: sameDevice) }
    }

    @Test func rewrapMovesToTheOtherSlotAndEmptiesTheOldOne() throws {
        var (header, fileKey) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        try header.rewrap(to: .none, fileKey: fileKey, keyring: keyring)
        #expect(header.activeSlotIndex == 1 && header.generation == 2 && header.protectionClass == .none)
        let bytes = header.encoded()
        #expect(bytes[24..<176].allSatisfy { $0 == 0 })
        let decoded = try FileHeader.decode(bytes, keyring: keyring)
        #expect(decoded.protectionClass == .none && decoded.generation == 2)
        #expect(try decoded.unwrapFileKey(keyring: keyring).isEqual(to: fileKey))

        keyring.remove([.completeUnlessOpen, .complete])
        var again = decoded
        try again.rewrap(to: .completeUnlessOpen, fileKey: fileKey, keyring: keyring)
        #expect(again.activeSlotIndex == 0 && again.generation == 3)
        #expect(throws: Errno.permissionDenied) { try again.rewrap(to: .complete, fileKey: fileKey, keyring: keyring) }
        keyring.install(keys.classKeys[.completeUnlessOpen]!, for: .completeUnlessOpen)
        #expect(try FileHeader.decode(again.encoded(), keyring: keyring).unwrapFileKey(keyring: keyring).isEqual(to: fileKey))
    }

    /// Both slots valid, as after a crash between the two syncs of a re-class.
    func headerWithBothSlots() throws -> [UInt8] {
        var (header, fileKey) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        let old = header.encoded()
        try header.rewrap(to: .none, fileKey: fileKey, keyring: keyring)
        return Array(old[0..<176]) + Array(header.encoded()[176...])
    }

    @Test func highestValidGenerationWins() throws {
        let bytes = try headerWithBothSlots()
        #expect(try FileHeader.decode(bytes, keyring: keyring).protectionClass == .none)
        for offset in [176, 176 + 8, 176 + 9, 176 + 10, 176 + 20, 176 + 60, 176 + 119, 176 + 120, 176 + 151] {
            var damaged = bytes
            damaged[offset] ^= 0x10
            let decoded = try FileHeader.decode(damaged, keyring: keyring)
            #expect(decoded.protectionClass == .complete && decoded.generation == 1, "byte \(offset)")
        }
        for offset in [24, 24 + 8, 24 + 60, 24 + 151] {
            var damaged = bytes
            damaged[offset] ^= 0x10
            #expect(try FileHeader.decode(damaged, keyring: keyring).protectionClass == .none, "byte \(offset)")
        }
    }

    @Test func everyHeaderBitMattersWhenOneSlotIsValid() throws {
        let (header, _) = try FileHeader.create(protectionClass: .completeUntilFirstUserAuthentication, keyring: keyring)
        let bytes = header.encoded()
        for offset in 0..<176 {
            for bit in [0, 7] {
                var damaged = bytes
                damaged[offset] ^= UInt8(1 << bit)
                #expect(throws: Errno.io, "byte \(offset) bit \(bit)") { try FileHeader.decode(damaged, keyring: keyring) }
            }
        }
        // Both slots damaged: nothing is in force.
        var both = try headerWithBothSlots()
        both[30] ^= 1
        both[200] ^= 1
        #expect(FileHeader.diagnose(both, keyring: keyring) == .noValidSlot)
    }

    @Test func classChangeWithoutTheMACIsRejected() throws {
        let (header, _) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        var bytes = header.encoded()
        bytes[24 + 8] = ProtectionClass.none.rawValue
        #expect(throws: Errno.io) { try FileHeader.decode(bytes, keyring: keyring) }
    }

    @Test func defectsAreDiagnosed() throws {
        let (header, _) = try FileHeader.create(protectionClass: .none, keyring: keyring)
        let bytes = header.encoded()
        #expect(FileHeader.diagnose(bytes, keyring: keyring) == nil)
        #expect(FileHeader.diagnose(Array(bytes[0..<327]), keyring: keyring) == .truncated)
        #expect(FileHeader.diagnose([], keyring: keyring) == .truncated)
        var magic = bytes
        magic[0] = UInt8(ascii: "X")
        #expect(FileHeader.diagnose(magic, keyring: keyring) == .malformed)
        var newer = bytes
        newer[4] = 3
        #expect(FileHeader.diagnose(newer, keyring: keyring) == .newerVersion(3))
        #expect(throws: Errno.io) { try FileHeader.decode(newer, keyring: keyring) }
        var zero = bytes
        zero[4] = 0
        #expect(FileHeader.diagnose(zero, keyring: keyring) == .malformed)
        var reserved = bytes
        reserved[6] = 1
        #expect(FileHeader.diagnose(reserved, keyring: keyring) == .malformed)
    }
}
