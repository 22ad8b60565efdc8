import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// `protfs device-key` (docs/OPERATIONS.md, "The TPM"): a vault moved to a fresh device key,
/// plain or sealed, in O(1): only the keybag is rewrapped; file headers and device-bound
/// items stay keyed with the vault's first device key, which the keybag's device-origin file
/// keeps under the new one.
extension Vault {
    /// The keybag under the key file's key, the device keys it needs (with the vault's first
    /// device key once it has moved) and that first key. A key that does not match while a
    /// staged new key does is an interrupted move: the staged key is put in place.
    static func openKeybag(_ bytes: [UInt8], root: FileDescriptor, backingPath: String, deviceKeyFile: DeviceKeyFile,
                           sealer: (any DeviceKeySealer)?, recovery: RecoveryKey?) throws(VaultError) -> (Keybag, DeviceKeys, LockedKey) {
        var deviceKey: LockedKey
        if let recovery {
            deviceKey = try RecoveryFile.openDeviceKey(in: root, with: recovery, backingPath: backingPath)
        } else {
            deviceKey = try deviceKeyFile.load(sealer: sealer)
        }
        var keybag: Keybag
        do {
            keybag = try VaultError.keybag { () throws(KeybagError) in try Keybag.decode(bytes, deviceKeys: DeviceKeys(deviceKey: deviceKey)) }
        } catch .deviceKeyMismatch {
            guard let staged = try? deviceKeyFile.pending.load(sealer: sealer),
                  let decoded = try? Keybag.decode(bytes, deviceKeys: DeviceKeys(deviceKey: staged)) else { throw .deviceKeyMismatch }
            try deviceKeyFile.adoptPending()
            deviceKey = staged
            keybag = decoded
        }
        guard keybag.deviceKeyMoved else { return (keybag, DeviceKeys(deviceKey: deviceKey), deviceKey) }
        let origin = try DeviceOriginFile.read(in: root, vaultID: keybag.vaultID, deviceKeys: DeviceKeys(deviceKey: deviceKey),
                                               backingPath: backingPath)
        return (keybag, DeviceKeys(deviceKey: deviceKey, originKey: origin), origin)
    }

    /// Replaces the device key with a fresh one, sealed by `newSealer` when given (else a
    /// plain key), after checking `passcode` (nil for a vault without one) through the
    /// delays. Refused when other vaults' records sit beside the key file: replacing it would
    /// lose them. The order keeps every crash recoverable: the origin, the passcode seal and
    /// the new key (staged beside the old) first, the keybag (the commit), then the key put
    /// in place, then the old files removed. A vault with a recovery key keeps it on a sealed
    /// key (its device key sealed again to it), and drops it on a plain one.
    public func moveDeviceKey(passcode: SecureBuffer?, to newSealer: (any DeviceKeySealer)?) throws(VaultError) {
        try refuseSharedKeyFile()
        let deviceKeys = keyring.deviceKeys
        try passcodeRecord.withLock { (record) throws(VaultError) in
            let keys: PasscodeClassKeys
            if let passcode { keys = try verify(passcode, record: &record) } else {
                keys = try VaultError.keybag { () throws(KeybagError) in try record.keybag.unlockWithoutPasscode(deviceKeys: deviceKeys) }
            }
            let newKey = LockedKey.random()
            let newDeviceKeys = DeviceKeys(deviceKey: newKey, originKey: originKey)
            let sealing = passcode == nil ? nil : newSealer.map(PasscodeSecretSealing.init)
            let moved = try VaultError.keybag { () throws(KeybagError) in
                try record.keybag.rekeyed(to: newDeviceKeys, passcode: passcode, classKeys: keys, deviceKeys: deviceKeys,
                                          sealing: sealing?.seal)
            }
            try DeviceOriginFile.write(originKey, in: backingRoot, vaultID: vaultID, deviceKeys: newDeviceKeys, backingPath: backingPath)
            try sealing?.write(in: backingRoot, generation: moved.generation, backingPath: backingPath)
            try deviceKeyFile.stagePending(newKey, sealer: newSealer)
            try VaultError.keybag { () throws(KeybagError) in try moved.write(in: backingRoot, backingPath: backingPath) }
            try deviceKeyFile.adoptPending()
            PasscodeSealFile.removeAll(in: backingRoot, except: moved.passcodeCountedByHardware ? moved.generation : nil)
            DeviceOriginFile.removeAll(in: backingRoot, except: newDeviceKeys)
            if newSealer != nil, let publicKey = RecoveryFile.publicKey(in: backingRoot) {
                try RecoveryFile.write(deviceKey: newKey, publicKey: publicKey, in: backingRoot, backingPath: backingPath)
            } else {
                RecoveryFile.removeAll(in: backingRoot)
            }
            record.keybag = moved
            try record.state.record(generation: moved.generation)
        }
    }

    /// Whether the vault has a recovery key (a `protfs.recovery` seal) standing in for its TPM.
    public var hasRecoveryKey: Bool { RecoveryFile.publicKey(in: backingRoot) != nil }

    /// The key file is this vault's alone: no other vault's record beside it.
    private func refuseSharedKeyFile() throws(VaultError) {
        let records = "\(deviceKeyFile.directory)/\(VaultState.directoryName)"
        let names = (try? OwnedDescriptor.open(path: records, [.readOnly, .directory]).borrowed.entryNames()) ?? []
        let others = names.filter { $0.hasSuffix(".state") && $0 != "\(vaultID).state" }
        guard others.isEmpty else { throw .deviceKeyShared(path: deviceKeyFile.path, vaults: others.count) }
    }
}
