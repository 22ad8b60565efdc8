import Foundation
import ProtfsCrypto
@testable import ProtfsFormat
import Testing
import ProtfsTestSupport

/// The version-2 keybag of a vault without a passcode (docs/BACKUP.md, FORMAT.md "Keybag"):
/// known answers computed from the format page alone (Vectors/keybag-v2/make-vectors.py), and
/// the passcode set and removed again over the same class keys.
@Suite struct NoPasscodeKeybagTests {
    typealias F = KeybagFixture

    struct Facts: Decodable {
        let vaultID: String
        let generation: UInt64
        let keys: [String: String]
    }

    static func vector(_ name: String) throws -> [UInt8] {
        let directory = try #require(Bundle.module.url(forResource: "Vectors", withExtension: nil)).appendingPathComponent("keybag-v2")
        return Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    @Test func knownAnswersFromTheFormatPage() throws {
        let facts = try JSONDecoder().decode(Facts.self, from: Data(try Self.vector("facts.json")))
        let deviceKeys = DeviceKeys(deviceKey: try Self.vector("device.key").withUnsafeBytes { try LockedKey.copying($0) })
        let bytes = try Self.vector("protfs.keybag")
        let keybag = try Keybag.decode(bytes, deviceKeys: deviceKeys)
        #expect(!keybag.passcodeSet && keybag.version == 2 && keybag.contentAEAD == .xchacha20Poly1305)
        #expect("\(keybag.vaultID)" == facts.vaultID && keybag.generation == facts.generation)
        #expect(keybag.encoded() == bytes)
        let keys = try keybag.unlockWithoutPasscode(deviceKeys: deviceKeys)
        #expect(hex(keys.complete.testBytes) == facts.keys["complete"])
        #expect(hex(keys.completeUntilFirstUserAuthentication.testBytes) == facts.keys["completeUntilFirstUserAuthentication"])
        #expect(hex(keys.completeUnlessOpenPrivate.testBytes) == facts.keys["completeUnlessOpenPrivate"])
        #expect(hex(try keybag.unwrapFilesystemKey(deviceKeys: deviceKeys).testBytes) == facts.keys["filesystem"])
        #expect(hex(try keybag.unwrapNoneKey(deviceKeys: deviceKeys).testBytes) == facts.keys["none"])
        // A passcode request on it is refused before any Argon2id.
        #expect(throws: KeybagError.noPasscodeSet) { try keybag.unlock(passcode: passcode("x"), deviceKeys: deviceKeys) }
    }

    @Test func theFlagIsAuthenticatedAndBoundToTheVersion() throws {
        let keys = try #require(try F.keybag.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys))
        let open = try F.keybag.changingPasscode(to: nil, classKeys: keys, deviceKeys: F.deviceKeys)
        let bytes = open.encoded()
        #expect(bytes[8] == 2 && bytes[10] == 1)
        #expect(Array(bytes[52..<68]) == [UInt8](repeating: 0, count: 16))
        // Clearing the flag or the version without the device key fails the MAC; with it
        // (re-signed), the entry kinds no longer match: damage either way.
        for (offset, value) in [(10, UInt8(0)), (8, UInt8(1))] {
            var changed = bytes
            changed[offset] = value
            let error = #expect(throws: KeybagError.self) { try Keybag.decode(changed, deviceKeys: F.deviceKeys) }
            guard case .damaged = error else { Issue.record("expected damage, got \(String(describing: error))"); continue }
        }
        let forged = Keybag(version: 1, flags: 0, vaultID: open.vaultID, generation: open.generation, kdf: open.kdf, salt: open.salt,
                            deviceKeyCheck: open.deviceKeyCheck, classBPublicKey: open.classBPublicKey, entries: open.entries,
                            mac: []).signed(deviceKeys: F.deviceKeys)
        #expect(throws: KeybagError.self) { try Keybag.decode(forged.encoded(), deviceKeys: F.deviceKeys) }
    }

    @Test func passcodeRemovedThenSetKeepsEveryKey() throws {
        let keys = try #require(try F.keybag.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys))
        let open = try Keybag.decode(try F.keybag.changingPasscode(to: nil, classKeys: keys, deviceKeys: F.deviceKeys).encoded(),
                                     deviceKeys: F.deviceKeys)
        #expect(!open.passcodeSet && open.generation == 2)
        let opened = try open.unlockWithoutPasscode(deviceKeys: F.deviceKeys)
        #expect(opened.complete.isEqual(to: keys.complete))
        #expect(opened.completeUnlessOpenPrivate.isEqual(to: keys.completeUnlessOpenPrivate))
        let closed = try Keybag.decode(try open.changingPasscode(to: passcode("again"), classKeys: opened, deviceKeys: F.deviceKeys)
                                           .encoded(), deviceKeys: F.deviceKeys)
        #expect(closed.passcodeSet && closed.version == 1 && closed.generation == 3)
        #expect(throws: KeybagError.passcodeRequired) { try closed.unlockWithoutPasscode(deviceKeys: F.deviceKeys) }
        let reopened = try #require(try closed.unlock(passcode: passcode("again"), deviceKeys: F.deviceKeys))
        #expect(reopened.completeUntilFirstUserAuthentication.isEqual(to: keys.completeUntilFirstUserAuthentication))
        #expect(try closed.unwrapFilesystemKey(deviceKeys: F.deviceKeys).isEqual(to: F.keybag.unwrapFilesystemKey(deviceKeys: F.deviceKeys)))
    }

    @Test func aNewVaultWithoutPasscodeOpensWithTheDeviceAlone() throws {
        let bag = try Keybag.create(passcode: nil, kdf: .interactive, contentAEAD: .xchacha20Poly1305, deviceKeys: F.deviceKeys)
        let decoded = try Keybag.decode(bag.encoded(), deviceKeys: F.deviceKeys)
        #expect(!decoded.passcodeSet)
        let keys = try decoded.unlockWithoutPasscode(deviceKeys: F.deviceKeys)
        #expect(X25519.publicKey(for: keys.completeUnlessOpenPrivate) == decoded.classBPublicKey)
        // Another device key opens nothing.
        #expect(throws: KeybagError.deviceKeyMismatch) { try Keybag.decode(bag.encoded(), deviceKeys: DeviceKeys(deviceKey: .random())) }
    }
}
