import Testing
import ProtfsTestSupport
@testable import ProtfsCore
@testable import ProtfsFormat
import ProtfsCrypto

/// A restore's new passcode stretched on a thread of its own, ahead of the keybag: the
/// keybag made of it opens with that passcode (and no other) under the new device only.
@Suite struct PasscodeStretchTests {
    typealias F = KeybagFixture

    @Test func aKeybagOfTheStretchedPasscodeOpensWithIt() throws {
        let classKeys = try #require(try F.keybag.unlock(passcode: passcode(F.passcodeText), deviceKeys: F.deviceKeys))
        let keys = VaultKeys(vaultID: F.keybag.vaultID, kdf: F.keybag.kdf, classBPublicKey: F.keybag.classBPublicKey,
                             filesystem: try F.keybag.unwrapFilesystemKey(deviceKeys: F.deviceKeys),
                             none: try F.keybag.unwrapNoneKey(deviceKeys: F.deviceKeys), classKeys: classKeys,
                             contentAEAD: F.keybag.contentAEAD)
        let stretch = try #require(PasscodeStretch(passcode("a new passcode"), kdf: keys.kdf))
        defer { stretch.join() }
        let stretched = try #require(stretch.wait())
        let newDevice = DeviceKeys(deviceKey: .random())
        let restored = try Keybag.restoring(keys, generation: 3, stretched: stretched, deviceKeys: newDevice)
        let opened = try #require(try restored.unlock(passcode: passcode("a new passcode"), deviceKeys: newDevice))
        #expect(opened.complete.isEqual(to: classKeys.complete))
        #expect(try restored.unlock(passcode: passcode(F.passcodeText), deviceKeys: newDevice) == nil)
        #expect(restored.generation == 3 && restored.passcodeSet)
    }
}
