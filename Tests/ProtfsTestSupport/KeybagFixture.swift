import ProtfsCrypto
import ProtfsFormat

/// One keybag made once (Argon2id is the slow part) and shared by the tests that only
/// decode, tamper with or unlock it.
public enum KeybagFixture {
    public static let deviceKey = LockedKey.random()
    public static let deviceKeys = DeviceKeys(deviceKey: deviceKey)
    public static let passcodeText = "correct horse battery staple"
    public static let keybag = try! Keybag.create(passcode: passcode(passcodeText), kdf: .interactive, contentAEAD: .xchacha20Poly1305,
                                                    deviceKeys: deviceKeys)
    public static let bytes = keybag.encoded()
}
