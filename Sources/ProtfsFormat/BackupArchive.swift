import ProtfsCrypto

/// The fixed start of a backup archive (docs/BACKUP.md): what a passphrase needs to derive
/// the archive's keys, in the clear, and a check that tells a wrong passphrase from damage.
/// Every chunk after it authenticates these bytes too. Version 1 is the archive of a vault
/// sealed with XChaCha20-Poly1305 (older builds restore it); version 2 names another content
/// AEAD in byte 10, which a restore keeps, since the archive carries the sealed chunks.
public struct BackupArchiveHeader: Sendable {
    public static let byteCount = 92
    package static let magic = Array("PROTFSBA".utf8)
    package static let version: UInt16 = 2
    package static let checkContext = Array("protfs backup passphrase check v1".utf8)

    public let kdf: Argon2idParameters
    package let salt: [UInt8]
    /// Random per archive: binds the chunks and the backup keybag to this archive.
    package let archiveID: [UInt8]
    /// What the archived vault's file contents are sealed with.
    package let contentAEAD: ContentAEAD

    package init(kdf: Argon2idParameters, contentAEAD: ContentAEAD) {
        self.kdf = kdf
        salt = SecureRandom.bytes(Argon2id.saltByteCount)
        archiveID = SecureRandom.bytes(16)
        self.contentAEAD = contentAEAD
    }

    /// Bytes 0..<60, which the check and every chunk authenticate.
    package var prefix: [UInt8] {
        var out = Self.magic
        out.appendLittleEndian(contentAEAD == .xchacha20Poly1305 ? UInt16(1) : Self.version)
        out += [contentAEAD.rawValue, 0]
        out.appendLittleEndian(kdf.opsLimit)
        out.appendLittleEndian(kdf.memLimit)
        return out + salt + archiveID
    }

    package func encoded(keys: BackupKeys) -> [UInt8] { prefix + keys.check(prefix) }

    /// Parses the header; the check is verified by `keys(passphrase:)`.
    package static func decode(_ bytes: [UInt8]) throws(BackupError) -> (BackupArchiveHeader, check: [UInt8]) {
        guard bytes.count == byteCount, Array(bytes[0..<8]) == magic else { throw .notAnArchive }
        let version: UInt16 = bytes.littleEndian(at: 8)
        guard version <= Self.version else { throw .newerVersion(version) }
        guard version >= 1, let aead = ContentAEAD(rawValue: bytes[10]), (aead == .xchacha20Poly1305) == (version == 1),
              bytes[11] == 0 else {
            throw .damaged("its header is malformed")
        }
        let kdf = Argon2idParameters(opsLimit: bytes.littleEndian(at: 12), memLimit: bytes.littleEndian(at: 20))
        guard kdf.meetsMinimum else { throw .damaged("it asks for Argon2id parameters below the minimum") }
        return (BackupArchiveHeader(kdf: kdf, salt: Array(bytes[28..<44]), archiveID: Array(bytes[44..<60]), contentAEAD: aead),
                Array(bytes[60..<92]))
    }

    private init(kdf: Argon2idParameters, salt: [UInt8], archiveID: [UInt8], contentAEAD: ContentAEAD) {
        self.kdf = kdf
        self.salt = salt
        self.archiveID = archiveID
        self.contentAEAD = contentAEAD
    }

    /// Argon2id of the passphrase, then one subkey per purpose.
    package func keys(passphrase: SecureBuffer) throws(BackupError) -> BackupKeys {
        let stretched: LockedKey
        do { stretched = try Argon2id.deriveKey(passcode: passphrase, salt: salt, parameters: kdf) } catch {
            throw .passphraseHashFailed
        }
        return BackupKeys(stream: stretched.deriveSubkey(context: KDFContexts.backupStream),
                          keybag: stretched.deriveSubkey(context: KDFContexts.backupKeybag))
    }
}

/// The keys a backup passphrase gives: the chunk key and the backup keybag's wrapping key.
package struct BackupKeys {
    package let stream: LockedKey
    package let keybag: LockedKey

    package func check(_ prefix: [UInt8]) -> [UInt8] {
        BLAKE2b.mac(key: stream, outputByteCount: 32, BackupArchiveHeader.checkContext, prefix)
    }
}
