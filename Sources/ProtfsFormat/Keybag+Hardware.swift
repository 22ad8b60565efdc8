import ProtfsCrypto

/// The keybag's part in the TPM (docs/FORMAT.md, "Sealed key files"): the auth value and the
/// wrapping key of a passcode the TPM counts, and the keybag of a vault moved to another
/// device key.
extension Keybag {
    /// `BLAKE2b-256(key = passcode key, "protfs tpm auth v1")`: what the TPM checks before it
    /// releases the passcode secret. The TPM never sees the passcode, nor the wrapping key.
    public static func hardwareAuth(passcodeKey: LockedKey) -> LockedKey {
        var auth = BLAKE2b(key: passcodeKey, outputByteCount: LockedKey.byteCount)
        auth.update(Array("protfs tpm auth v1".utf8))
        return auth.finalizeKey()
    }

    /// `BLAKE2b-256(key = passcode key, "protfs tpm passcode v1" || passcode secret)`: the
    /// passcode entries' wrapping key when the TPM counts guesses.
    static func harden(_ passcodeKey: LockedKey, with secret: LockedKey) -> LockedKey {
        var hardened = BLAKE2b(key: passcodeKey, outputByteCount: LockedKey.byteCount)
        hardened.update(Array("protfs tpm passcode v1".utf8))
        hardened.update(secret)
        return hardened.finalizeKey()
    }

    /// The same keys under another device key (`protfs device-key`): generation + 1, the
    /// passcode entries under `passcode` (the vault's, checked by the caller) and `newDevice`,
    /// with the passcode secret `sealing` makes if any; flagged as moved, since file headers
    /// stay keyed with the vault's first device key.
    public func rekeyed(to newDevice: DeviceKeys, passcode: SecureBuffer?, classKeys: PasscodeClassKeys,
                        deviceKeys: DeviceKeys, sealing: PasscodeSecretSealer?) throws(KeybagError) -> Keybag {
        try Self.assemble(vaultID: vaultID, generation: generation + 1, kdf: kdf, contentAEAD: contentAEAD, passcode: passcode,
                          classBPublicKey: classBPublicKey,
                          deviceEntryKeys: (filesystem: try unwrapFilesystemKey(deviceKeys: deviceKeys),
                                            none: try unwrapNoneKey(deviceKeys: deviceKeys)),
                          classKeys: classKeys, deviceKeys: newDevice, sealing: sealing, deviceKeyMoved: true)
    }
}
