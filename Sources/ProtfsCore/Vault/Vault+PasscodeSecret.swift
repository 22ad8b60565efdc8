import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// A passcode the TPM counts (docs/FORMAT.md, "Sealed key files"): the passcode entries
/// also need a secret the TPM releases only for an auth value derived from the right
/// passcode, and the TPM's dictionary-attack counter records every wrong one.
extension Vault {
    /// A passcode set now will be counted by the TPM: the device key is sealed by it.
    var countsPasscodesInHardware: Bool { sealer != nil && deviceKeyFile.isSealed }

    /// Seconds until the TPM counting this vault's passcodes accepts an attempt again; nil
    /// when it would now, or when no TPM counts them.
    public var hardwareLockoutRetryAfterSeconds: Int? {
        guard passcodeCountedByHardware else { return nil }
        return sealer?.lockoutRetryAfterSeconds()
    }

    /// Argon2id, then (for a keybag that says so) the TPM's passcode secret, then the
    /// passcode entries; nil for a wrong passcode, which the TPM has counted too.
    static func openPasscodeEntries(_ passcode: SecureBuffer, keybag: Keybag, deviceKeys: DeviceKeys,
                                    sealer: (any DeviceKeySealer)?, recovery: RecoveryKey?, root: FileDescriptor,
                                    backingPath: String) throws(VaultError) -> PasscodeClassKeys? {
        let passcodeKey = try VaultError.keybag { () throws(KeybagError) in try keybag.passcodeKey(for: passcode, deviceKeys: deviceKeys) }
        var secret: LockedKey?
        if keybag.passcodeCountedByHardware, let recovery {
            // The recovery key stands in for the TPM: no counter, only the daemon's delays
            // and Argon2id; the keybag still refuses a wrong passcode.
            secret = try RecoveryFile.openPasscodeSecret(in: root, generation: keybag.generation, with: recovery, backingPath: backingPath)
        } else if keybag.passcodeCountedByHardware {
            guard let sealer else {
                throw .passcodeSealFailed(reason: "this vault's passcodes are counted by a TPM, which this command does not reach")
            }
            let sealed = try PasscodeSealFile.read(in: root, generation: keybag.generation, backingPath: backingPath)
            guard let unsealed = try sealer.unsealPasscodeSecret(sealed, auth: Keybag.hardwareAuth(passcodeKey: passcodeKey)) else {
                return nil
            }
            secret = unsealed
        }
        return try VaultError.keybag { () throws(KeybagError) in try keybag.unlock(passcodeKey: passcodeKey, passcodeSecret: secret) }
    }
}

/// What a keybag being assembled calls to seal a fresh passcode secret on the TPM, keeping
/// the sealed bytes for the caller to write beside it.
final class PasscodeSecretSealing {
    private let sealer: any DeviceKeySealer
    private(set) var sealed: [UInt8]?
    /// The secret itself, until `write` has sealed it to the recovery key too.
    private var secret: LockedKey?

    init(_ sealer: any DeviceKeySealer) { self.sealer = sealer }

    /// The `Keybag.PasscodeSecretSealer` that records what it sealed here.
    var seal: Keybag.PasscodeSecretSealer { { (auth) throws(KeybagError) in try self.sealFreshSecret(auth: auth) } }

    private func sealFreshSecret(auth: LockedKey) throws(KeybagError) -> LockedKey {
        let secret = LockedKey.random()
        self.secret = secret
        do throws(VaultError) { sealed = try sealer.sealPasscodeSecret(secret, auth: auth) } catch {
            guard case .passcodeSealFailed(let reason) = error else { throw .passcodeSealFailed(reason: error.description) }
            throw .passcodeSealFailed(reason: reason)
        }
        return secret
    }

    /// Writes the sealed secret for the keybag of `generation`, if one was sealed, and the
    /// secret sealed to the vault's recovery key if it has one; then forgets the secret.
    func write(in root: FileDescriptor, generation: UInt64, backingPath: String) throws(VaultError) {
        guard let sealed, let secret else { return }
        self.secret = nil
        try RecoveryFile.writePasscodeSecret(secret, in: root, generation: generation, backingPath: backingPath)
        try PasscodeSealFile.write(sealed, in: root, generation: generation, backingPath: backingPath)
    }
}
