import ProtfsDomain
import Testing
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport

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
        let active = Self.slotStart(header.activeSlotIndex), unused = Self.slotStart(1 - header.activeSlotIndex)
        // Slot bytes 0..<48 are hidden under the pfhdrcls stream, the sealed key's nonce as nonce.
        let hidden = XChaCha20.xor(Array(bytes[active ..< active + 48]), nonce: Array(bytes[active + 48 ..< active + 72]),
                                   key: keyring.deviceKeys.headerClass)
        #expect(hidden[0] == 1 && hidden[1..<8].allSatisfy { $0 == 0 }, "generation 1")
        #expect(hidden[8] == protectionClass.rawValue)
        #expect(hidden[9] == (protectionClass == .completeUnlessOpen ? 3 : 4))
        #expect(hidden[10..<16].allSatisfy { $0 == 0 })
        #expect(hidden[16...].allSatisfy { $0 == 0 } == (protectionClass != .completeUnlessOpen), "the ephemeral key, for class B only")
        #expect(!bytes[unused ..< unused + 152].allSatisfy { $0 == 0 }, "the unused slot is random bytes, not zeros")
        let decoded = try FileHeader.decode(bytes, keyring: keyring)
        #expect(decoded.fileID == header.fileID)
        #expect(decoded.protectionClass == protectionClass)
        #expect(decoded.generation == 1)
        #expect(try decoded.unwrapFileKey(keyring: keyring).isEqual(to: fileKey))
    }

    /// What a backing observer sees of a header must not depend on its class: a byte that is
    /// the same in every header of one class must be that same value for every class (the
    /// magic, the version). Format 1 fails this, which shows the check can fail.
    @Test func theClassIsHiddenFromTheBackingBytes() throws {
        func headers(_ protectionClass: ProtectionClass, version: UInt16) throws -> [[UInt8]] {
            try (0..<24).map { _ in try FileHeader.create(protectionClass: protectionClass, keyring: keyring, version: version).0.encoded() }
        }
        #expect(try tellingOffsets(ProtectionClass.allCases.map { try headers($0, version: 2) }) == [])
        let formatOne = try tellingOffsets(ProtectionClass.allCases.map { try headers($0, version: 1) })
        #expect(formatOne.contains(24 + 8) && formatOne.contains(24 + 9), "format 1 stored the class and wrap kind in the clear")
    }

    /// Nor whether it was ever re-classed: a file made in its parent's class would otherwise
    /// give its class away through the parent's, and a re-classed one stand out.
    @Test func aReclassIsHiddenFromTheBackingBytes() throws {
        func groups(version: UInt16) throws -> [[[UInt8]]] {
            let fresh = try (0..<24).map { _ in try FileHeader.create(protectionClass: .none, keyring: keyring, version: version).0.encoded() }
            let reclassed = try (0..<24).map { _ in
                var (header, fileKey) = try FileHeader.create(protectionClass: .complete, keyring: keyring, version: version)
                try header.rewrap(to: .none, fileKey: fileKey, keyring: keyring)
                return header.encoded()
            }
            return [fresh, reclassed]
        }
        #expect(try tellingOffsets(groups(version: 2)) == [])
        #expect(try tellingOffsets(groups(version: 1)).contains(24), "format 1 showed the generation and slot")
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
        let sameDevice = ClassKeyring(vaultID: .random(), deviceKeys: keyring.deviceKeys, classBPublicKey: keyring.classBPublicKey,
                                      contentAEAD: keyring.contentAEAD)
        #expect(throws: Errno.io) { try FileHeader.decode(header.encoded(), keyring: sameDevice) }
    }

    static func slotStart(_ index: Int) -> Int { FileHeader.prefixByteCount + index * HeaderSlot.byteCount }

    @Test func rewrapMovesToTheOtherSlotAndOverwritesTheOldOne() throws {
        var (header, fileKey) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        let first = header.activeSlotIndex, old = Self.slotStart(first)
        let before = header.encoded()
        try header.rewrap(to: .none, fileKey: fileKey, keyring: keyring)
        #expect(header.activeSlotIndex == 1 - first && header.generation == 2 && header.protectionClass == .none)
        let bytes = header.encoded()
        #expect(bytes[old ..< old + 152] != before[old ..< old + 152], "the wrap under the old class is gone")
        let decoded = try FileHeader.decode(bytes, keyring: keyring)
        #expect(decoded.protectionClass == .none && decoded.generation == 2)
        #expect(try decoded.unwrapFileKey(keyring: keyring).isEqual(to: fileKey))

        keyring.remove([.completeUnlessOpen, .complete])
        var again = decoded
        try again.rewrap(to: .completeUnlessOpen, fileKey: fileKey, keyring: keyring)
        #expect(again.activeSlotIndex == first && again.generation == 3)
        #expect(throws: Errno.permissionDenied) { try again.rewrap(to: .complete, fileKey: fileKey, keyring: keyring) }
        keyring.install(keys.classKeys[.completeUnlessOpen]!, for: .completeUnlessOpen)
        #expect(try FileHeader.decode(again.encoded(), keyring: keyring).unwrapFileKey(keyring: keyring).isEqual(to: fileKey))
    }

    /// Both slots valid, as after a crash between the two syncs of a re-class (`complete` at
    /// generation 1 in the old slot, `none` at generation 2 in the new), and where each starts.
    func headerWithBothSlots() throws -> (bytes: [UInt8], old: Int, new: Int) {
        var (header, fileKey) = try FileHeader.create(protectionClass: .complete, keyring: keyring)
        var bytes = header.encoded()
        try header.rewrap(to: .none, fileKey: fileKey, keyring: keyring)
        let new = Self.slotStart(header.activeSlotIndex)
        bytes.replaceSubrange(new ..< new + 152, with: header.encoded()[new ..< new + 152])
        return (bytes, Self.slotStart(1 - header.activeSlotIndex), new)
    }

    @Test func highestValidGenerationWins() throws {
        let (bytes, old, new) = try headerWithBothSlots()
        #expect(try FileHeader.decode(bytes, keyring: keyring).protectionClass == .none)
        for offset in [0, 8, 9, 10, 20, 60, 119, 120, 151].map({ new + $0 }) {
            var damaged = bytes
            damaged[offset] ^= 0x10
            let decoded = try FileHeader.decode(damaged, keyring: keyring)
            #expect(decoded.protectionClass == .complete && decoded.generation == 1, "byte \(offset)")
        }
        for offset in [0, 8, 60, 151].map({ old + $0 }) {
            var damaged = bytes
            damaged[offset] ^= 0x10
            #expect(try FileHeader.decode(damaged, keyring: keyring).protectionClass == .none, "byte \(offset)")
        }
    }

    @Test func everyHeaderBitMattersWhenOneSlotIsValid() throws {
        let (header, _) = try FileHeader.create(protectionClass: .completeUntilFirstUserAuthentication, keyring: keyring)
        let bytes = header.encoded()
        let active = Self.slotStart(header.activeSlotIndex)
        for offset in Array(0..<FileHeader.prefixByteCount) + Array(active ..< active + 152) {
            for bit in [0, 7] {
                var damaged = bytes
                damaged[offset] ^= UInt8(1 << bit)
                #expect(throws: Errno.io, "byte \(offset) bit \(bit)") { try FileHeader.decode(damaged, keyring: keyring) }
            }
        }
        // Both slots damaged: nothing is in force.
        var both = try headerWithBothSlots().bytes
        both[30] ^= 1
        both[200] ^= 1
        #expect(FileHeader.diagnose(both, keyring: keyring) == .noValidSlot)
    }

    @Test func classChangeWithoutTheMACIsRejected() throws {
        let (header, _) = try FileHeader.create(protectionClass: .complete, keyring: keyring, version: 1)
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
