import ProtfsCrypto

/// Hardware that keeps the device key out of its file (docs/FORMAT.md, "Sealed key files"):
/// the vault core knows this much of it, the executable wires in a TPM. A key file that is not
/// 32 bytes is handed to the sealer; errors come back as `VaultError`s that say what the
/// hardware refused.
public protocol DeviceKeySealer: Sendable {
    /// The file's contents for `key`: a sealed blob only this hardware opens.
    func seal(_ key: LockedKey, path: String) throws(VaultError) -> [UInt8]
    /// The key from a key file's contents (`path` for messages).
    func unseal(_ contents: [UInt8], path: String) throws(VaultError) -> LockedKey
    /// A passcode secret sealed under `auth`, an auth value derived from the passcode, with
    /// the hardware counting wrong ones.
    func sealPasscodeSecret(_ secret: LockedKey, auth: LockedKey) throws(VaultError) -> [UInt8]
    /// The passcode secret; nil for a wrong `auth` (the hardware counted it); hardware that
    /// refuses every attempt for now throws `passcodeLockout`.
    func unsealPasscodeSecret(_ sealed: [UInt8], auth: LockedKey) throws(VaultError) -> LockedKey?
    /// Seconds until the hardware accepts a passcode attempt again; nil when it would now.
    func lockoutRetryAfterSeconds() -> Int?
}
