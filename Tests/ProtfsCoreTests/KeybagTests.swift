import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto

@Suite struct KeybagTests {
    typealias F = KeybagFixture

    @Test func encodingIsTheDocumentedLayout() throws {
        let bytes = F.bytes
        #expect(bytes.count == 534)
        #expect(Array(bytes[0..<8]) == Array("PROTFSKB".utf8))
        #expect(bytes[8] == 1 && bytes[9] == 0 && bytes[10] == 0 && bytes[11] == 0)
        #expect(Array(bytes[12..<28]) == F.keybag.vaultID.bytes)
        #expect(bytes.littleEndian(at: 28, as: UInt64.self) == 1)
        #expect(bytes.littleEndian(at: 36, as: UInt64.self) == 2)
        #expect(bytes.littleEndian(at: 44, as: UInt64.self) == 64 << 20)
        #expect(Array(bytes[100..<132]) == F.keybag.classBPublicKey)
        let entryHeads: [[UInt8]] = (0..<5).map { (i: Int) -> [UInt8] in
            let start = 132 + i * 74
            return [bytes[start], bytes[start + 1]]
        }
        #expect(entryHeads == [[0, 1], [4, 1], [3, 2], [1, 2], [2, 2]])
    }

    @Test func roundTripAndUnlock() throws {
        let decoded = try Keybag.decode(F.bytes, deviceKeys: F.deviceKeys)
        #expect(decoded == F.keybag)
        let keys = try #require(try decoded.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys))
        #expect(X25519.publicKey(for: keys.completeUnlessOpenPrivate) == decoded.classBPublicKey)
        #expect(!keys.complete.isEqual(to: keys.completeUntilFirstUserAuthentication))
        // Device entries open without a passcode, and are distinct keys.
        let fs = try decoded.unwrapFilesystemKey(deviceKeys: F.deviceKeys)
        let none = try decoded.unwrapNoneKey(deviceKeys: F.deviceKeys)
        #expect(!fs.isEqual(to: none))
    }

    @Test func wrongPasscodeIsNil() throws {
        #expect(try F.keybag.unlock(passcode: passcode("correct horse battery stapl"), deviceKeys: F.deviceKeys) == nil)
    }

    @Test func wrongDeviceKeyHasItsOwnError() {
        let other = DeviceKeys(deviceKey: .random())
        #expect(throws: KeybagError.deviceKeyMismatch) { try Keybag.decode(F.bytes, deviceKeys: other) }
        #expect(VaultError(.deviceKeyMismatch).exitCode == .failure)
        #expect("\(VaultError(.deviceKeyMismatch))".contains("device key does not match this vault"))
    }

    @Test func substitutedPublicKeyFailsTheMAC() {
        var bytes = F.bytes
        let attacker = X25519.publicKey(for: X25519.generatePrivateKey())
        bytes.replaceSubrange(100..<132, with: attacker)
        let error = #expect(throws: KeybagError.self) { try Keybag.decode(bytes, deviceKeys: F.deviceKeys) }
        guard case .damaged = error else { Issue.record("expected damage, got \(String(describing: error))"); return }
        #expect(error.map { VaultError($0).exitCode } == .damage)
    }

    @Test func mismatchedPrivateKeyFailsTheUnlockCheck() throws {
        // Someone with the device key re-MACs a keybag whose public key is not the private
        // key's: the MAC passes, the unlock check does not.
        let forged = Keybag(version: F.keybag.version, flags: F.keybag.flags, vaultID: F.keybag.vaultID, generation: F.keybag.generation,
                            kdf: F.keybag.kdf, salt: F.keybag.salt, deviceKeyCheck: F.keybag.deviceKeyCheck,
                            classBPublicKey: X25519.publicKey(for: X25519.generatePrivateKey()),
                            entries: F.keybag.entries, mac: []).signed(deviceKeys: F.deviceKeys)
        let decoded = try Keybag.decode(forged.encoded(), deviceKeys: F.deviceKeys)
        #expect(throws: KeybagError.damaged(reason: "the completeUnlessOpen private key does not match its public key")) {
            try decoded.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys)
        }
    }

    @Test func olderGenerationIsARollback() throws {
        let dir = TemporaryDirectory()
        var state = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: F.keybag.vaultID)
        try state.record(generation: 2)
        #expect(throws: VaultError.keybagRollback(found: 1, recorded: 2)) { try F.keybag.admit(into: &state) }
        // No record at all: nothing to compare with, and nothing is written (that would start
        // the wrong-passcode counter again at zero); passcodes are refused meanwhile.
        var missing = try VaultState.load(beside: DeviceKeyFile(path: dir.child("elsewhere/device.key")), vaultID: F.keybag.vaultID)
        try F.keybag.admit(into: &missing)
        #expect(missing.isMissing && missing.generation == 0)
    }

    @Test func weakerParametersAreRefused() throws {
        var bytes = F.bytes
        bytes.replaceSubrange(44..<52, with: withUnsafeBytes(of: UInt64(32 << 20).littleEndian, Array.init))
        let resigned = Array(bytes[0..<502]) + BLAKE2b.mac(key: F.deviceKeys.keybagMAC, Array(bytes[0..<502]))
        let weak = try Keybag.decode(resigned, deviceKeys: F.deviceKeys)
        let dir = TemporaryDirectory()
        var state = try VaultState.load(beside: DeviceKeyFile(path: dir.child("device.key")), vaultID: weak.vaultID)
        #expect(throws: VaultError.keybagWeakParameters(opsLimit: 2, memLimit: 32 << 20)) { try weak.admit(into: &state) }
        #expect(state.generation == 0)
    }

    @Test func truncatedGarbageAndTamperedFilesAreDamaged() {
        let samples: [[UInt8]] = [
            [], Array(F.bytes[0..<533]), F.bytes + [0], SecureRandom.bytes(534),
            [0x58] + Array(F.bytes[1...]),
        ]
        for sample in samples {
            let error = #expect(throws: KeybagError.self) { try Keybag.decode(sample, deviceKeys: F.deviceKeys) }
            #expect(error.map { VaultError($0).exitCode } == .damage)
        }
        // Any flipped bit after the device key check fails the MAC.
        for offset in [28, 40, 60, 110, 150, 300, 501, 520] {
            var bytes = F.bytes
            bytes[offset] ^= 0x10
            let error = #expect(throws: KeybagError.self) { try Keybag.decode(bytes, deviceKeys: F.deviceKeys) }
            #expect(error.map { VaultError($0).exitCode } == .damage)
        }
    }

    @Test func newerVersionIsRefusedClearly() {
        var bytes = F.bytes
        // Version 2 is the keybag of a vault without a passcode (NoPasscodeKeybagTests), 3 of
        // one sealed with AES-256-GCM (ContentAEADKeybagTests).
        bytes[8] = 4
        #expect(throws: KeybagError.newerVersion(4)) { try Keybag.decode(bytes, deviceKeys: F.deviceKeys) }
        #expect("\(VaultError(.newerVersion(4)))".contains("newer protfs"))
    }

    @Test func passwdRewrapsAndOnlyTheNewPasscodeWorks() throws {
        let keys = try #require(try F.keybag.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys))
        let changed = try F.keybag.changingPasscode(to: passcode("new one"), classKeys: keys, deviceKeys: F.deviceKeys)
        #expect(changed.generation == 2)
        #expect(changed.vaultID == F.keybag.vaultID && changed.classBPublicKey == F.keybag.classBPublicKey)
        #expect(changed.salt != F.keybag.salt)
        let decoded = try Keybag.decode(changed.encoded(), deviceKeys: F.deviceKeys)
        #expect(try decoded.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys) == nil)
        let newKeys = try #require(try decoded.unlock(passcode: passcode("new one"), deviceKeys: F.deviceKeys))
        #expect(newKeys.complete.isEqual(to: keys.complete))
        #expect(newKeys.completeUntilFirstUserAuthentication.isEqual(to: keys.completeUntilFirstUserAuthentication))
        #expect(newKeys.completeUnlessOpenPrivate.isEqual(to: keys.completeUnlessOpenPrivate))
        #expect(try decoded.unwrapFilesystemKey(deviceKeys: F.deviceKeys).isEqual(to: F.keybag.unwrapFilesystemKey(deviceKeys: F.deviceKeys)))
        #expect(try decoded.unwrapNoneKey(deviceKeys: F.deviceKeys).isEqual(to: F.keybag.unwrapNoneKey(deviceKeys: F.deviceKeys)))
    }

    @Test func entriesAreBoundToTheirGeneration() throws {
        // Splicing generation-1 entries into a generation-2 keybag (re-MACed) fails to open.
        let spliced = Keybag(version: 1, flags: 0, vaultID: F.keybag.vaultID, generation: 2, kdf: F.keybag.kdf, salt: F.keybag.salt,
                             deviceKeyCheck: F.keybag.deviceKeyCheck, classBPublicKey: F.keybag.classBPublicKey,
                             entries: F.keybag.entries, mac: []).signed(deviceKeys: F.deviceKeys)
        #expect(throws: KeybagError.self) { try spliced.unwrapFilesystemKey(deviceKeys: F.deviceKeys) }
    }
}
