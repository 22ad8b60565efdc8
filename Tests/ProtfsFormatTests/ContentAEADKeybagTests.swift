import ProtfsCrypto
@testable import ProtfsFormat
import ProtfsTestSupport
import Testing

/// The content AEAD in the keybag (docs/FORMAT.md, "Keybag"): XChaCha20-Poly1305 vaults keep
/// versions 1 and 2, an AES-256-GCM vault is version 3 with the AEAD in its flags, and the
/// choice is authenticated, bound to the entries and kept by `passwd`.
@Suite struct ContentAEADKeybagTests {
    typealias F = KeybagFixture
    static let keys = try! F.keybag.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys)!
    /// The fixture's keys in an AES-256-GCM vault's keybag, with and without a passcode.
    static let withPasscode = try! VaultKeys.of(F.keybag, classKeys: keys, aead: .aes256GCM)
    static let aes = try! Keybag.restoring(withPasscode, generation: 1, passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys)

    @Test func anXChaChaVaultKeepsTheVersionsOlderBuildsRead() {
        #expect(F.keybag.version == 1 && F.keybag.flags == 0 && F.keybag.contentAEAD == .xchacha20Poly1305)
    }

    @Test func anAESVaultIsVersionThreeWithTheAEADInItsFlags() throws {
        let bytes = Self.aes.encoded()
        #expect(bytes[8] == 3 && bytes[10] == 0 && bytes[11] == 1)
        let decoded = try Keybag.decode(bytes, deviceKeys: F.deviceKeys)
        #expect(decoded.contentAEAD == .aes256GCM && decoded.passcodeSet)
        #expect(try decoded.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys) != nil)
        let open = try decoded.changingPasscode(to: nil, classKeys: Self.keys, deviceKeys: F.deviceKeys)
        let reopened = try Keybag.decode(open.encoded(), deviceKeys: F.deviceKeys)
        #expect(reopened.version == 3 && reopened.flags == 0x0101 && !reopened.passcodeSet && reopened.contentAEAD == .aes256GCM,
                "passwd keeps the AEAD")
        #expect(throws: Never.self) { try reopened.unlockWithoutPasscode(deviceKeys: F.deviceKeys) }
    }

    @Test func theAEADIsAuthenticatedAndBoundToTheEntries() throws {
        var bytes = Self.aes.encoded()
        bytes[11] = 0  // without the device key: the MAC fails
        #expect(throws: KeybagError.damaged(reason: "its MAC does not verify (tampered or corrupted)")) {
            try Keybag.decode(bytes, deviceKeys: F.deviceKeys)
        }
        // With it (re-MACed): version 1 or an unknown AEAD is damage, and an AES vault's
        // entries do not open as a version-1 keybag's.
        for (version, flags): (UInt16, UInt16) in [(3, 0), (3, 0x0200), (3, 0x0103), (1, 0x0100), (2, 0x0101)] {
            let forged = Keybag(version: version, flags: flags, vaultID: Self.aes.vaultID, generation: 1, kdf: Self.aes.kdf,
                                salt: Self.aes.salt, deviceKeyCheck: Self.aes.deviceKeyCheck, classBPublicKey: Self.aes.classBPublicKey,
                                entries: Self.aes.entries, mac: []).signed(deviceKeys: F.deviceKeys)
            let error = #expect(throws: KeybagError.self) { try Keybag.decode(forged.encoded(), deviceKeys: F.deviceKeys) }
            guard case .damaged = error else { Issue.record("\(version)/\(flags): expected damage, got \(String(describing: error))"); continue }
        }
        let downgraded = Keybag(version: 1, flags: 0, vaultID: Self.aes.vaultID, generation: 1, kdf: Self.aes.kdf, salt: Self.aes.salt,
                                deviceKeyCheck: Self.aes.deviceKeyCheck, classBPublicKey: Self.aes.classBPublicKey,
                                entries: Self.aes.entries, mac: []).signed(deviceKeys: F.deviceKeys)
        let decoded = try Keybag.decode(downgraded.encoded(), deviceKeys: F.deviceKeys)
        #expect(throws: KeybagError.self) { try decoded.unwrapFilesystemKey(deviceKeys: F.deviceKeys) }
    }
}

extension VaultKeys {
    /// Every key of `keybag` (whose class keys are `classKeys`), for a vault sealed with `aead`.
    static func of(_ keybag: Keybag, classKeys: PasscodeClassKeys, aead: ContentAEAD) throws -> VaultKeys {
        VaultKeys(vaultID: keybag.vaultID, kdf: keybag.kdf, classBPublicKey: keybag.classBPublicKey,
                  filesystem: try keybag.unwrapFilesystemKey(deviceKeys: F.deviceKeys),
                  none: try keybag.unwrapNoneKey(deviceKeys: F.deviceKeys), classKeys: classKeys, contentAEAD: aead)
    }

    private typealias F = KeybagFixture
}
