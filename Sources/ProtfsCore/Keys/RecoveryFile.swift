import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The recovery seals in the backing root (docs/FORMAT.md, "Recovery seals"):
/// `protfs.recovery` holds `PFRECOV1`, the recovery key's public key and the device key
/// sealed to it; `protfs.passcode-seal.<generation>.recovery` that generation's passcode
/// secret sealed to it, written with the TPM's seal, so a passcode changed later stays
/// recoverable without the recovery key at hand.
enum RecoveryFile {
    static let magic = Array("PFRECOV1".utf8)
    static let byteCount = magic.count + X25519.publicKeyByteCount + SealedBox.byteCount
    static let passcodeSuffix = ".recovery"

    static func passcodeName(generation: UInt64) -> String { PasscodeSealFile.name(generation: generation) + passcodeSuffix }

    /// The public key to seal to; nil when the vault has no recovery key.
    static func publicKey(in root: FileDescriptor) -> [UInt8]? {
        guard let bytes = try? read(ReservedNames.recovery, in: root), bytes.count == byteCount, bytes.starts(with: magic) else {
            return nil
        }
        return Array(bytes[magic.count..<magic.count + X25519.publicKeyByteCount])
    }

    /// Seals `deviceKey` to `publicKey` into `protfs.recovery`, replacing what is there.
    static func write(deviceKey: LockedKey, publicKey: [UInt8], in root: FileDescriptor, backingPath: String) throws(VaultError) {
        try writeFile(ReservedNames.recovery, magic + publicKey + seal(deviceKey, to: publicKey), in: root, backingPath: backingPath)
    }

    /// Seals a generation's passcode secret beside its TPM seal, if the vault has a recovery key.
    static func writePasscodeSecret(_ secret: LockedKey, in root: FileDescriptor, generation: UInt64,
                                    backingPath: String) throws(VaultError) {
        guard let publicKey = publicKey(in: root) else { return }
        try writeFile(passcodeName(generation: generation), seal(secret, to: publicKey), in: root, backingPath: backingPath)
    }

    static func openDeviceKey(in root: FileDescriptor, with recovery: RecoveryKey, backingPath: String) throws(VaultError) -> LockedKey {
        let bytes: [UInt8]
        do { bytes = try read(ReservedNames.recovery, in: root) } catch .noEntry {
            throw .recoveryKeyRefused(reason: "\(backingPath) has no \(ReservedNames.recovery): it was made without --recovery-key")
        } catch {
            throw .system(operation: "read the recovery seal in", path: backingPath, errno: error)
        }
        guard bytes.count == byteCount, bytes.starts(with: magic) else {
            throw .recoveryKeyRefused(reason: "\(backingPath)/\(ReservedNames.recovery) is damaged")
        }
        return try open(Array(bytes[(magic.count + X25519.publicKeyByteCount)...]), with: recovery, what: ReservedNames.recovery)
    }

    static func openPasscodeSecret(in root: FileDescriptor, generation: UInt64, with recovery: RecoveryKey,
                                   backingPath: String) throws(VaultError) -> LockedKey {
        let name = passcodeName(generation: generation)
        let bytes: [UInt8]
        do { bytes = try read(name, in: root) } catch .noEntry {
            throw .recoveryKeyRefused(reason: "\(backingPath)/\(name) is missing: this passcode was set without the recovery key's seal")
        } catch {
            throw .system(operation: "read the recovery seal in", path: backingPath, errno: error)
        }
        return try open(bytes, with: recovery, what: name)
    }

    /// Removes every recovery seal (a vault moved to a plain key file needs none).
    static func removeAll(in root: FileDescriptor) {
        guard let names = try? root.entryNames() else { return }
        for name in names where name == ReservedNames.recovery
            || (name.hasPrefix(ReservedNames.passcodeSealPrefix) && name.hasSuffix(passcodeSuffix)) {
            try? root.removeFile(name)
        }
    }

    private static func seal(_ key: LockedKey, to publicKey: [UInt8]) throws(VaultError) -> [UInt8] {
        do { return try SealedBox.seal(key, to: publicKey) } catch {
            throw .recoveryKeyRefused(reason: "the recovery seal's public key is damaged")
        }
    }

    private static func open(_ sealed: [UInt8], with recovery: RecoveryKey, what: String) throws(VaultError) -> LockedKey {
        do { return try SealedBox.open(sealed, privateKey: recovery.privateKey) } catch {
            throw .recoveryKeyRefused(reason: "it does not open this vault's \(what): it is another vault's key, or mistyped")
        }
    }

    private static func read(_ name: String, in root: FileDescriptor) throws(Errno) -> [UInt8] {
        let file = try OwnedDescriptor.openRegularFile(name, in: root)
        return try file.borrowed.readAll(limit: byteCount)
    }

    private static func writeFile(_ name: String, _ contents: [UInt8], in root: FileDescriptor, backingPath: String) throws(VaultError) {
        do { try root.writeFileAtomically(name, contents: contents, syncDirectory: true) } catch {
            throw .system(operation: "write the recovery seal in", path: backingPath, errno: error)
        }
    }
}
