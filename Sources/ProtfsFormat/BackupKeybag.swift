import ProtfsCrypto

/// The first record of an archive (docs/BACKUP.md): the vault id, its Argon2id parameters
/// and class-B public key in the plaintext of the stream, and six keys each sealed under the
/// passphrase's keybag key: the transport key (which stands for a device key in the headers
/// of the archive), the filesystem key, and the `none`, `completeUntilFirstUserAuthentication`,
/// `complete` and `completeUnlessOpen` private keys. No device key and nothing derived from one.
package enum BackupKeybag {
    package static let byteCount = 16 + 8 + 8 + 32 + 6 * (LockedKey.byteCount + XChaCha20Poly1305.overhead)
    package static let context = Array("protfs backup keybag v1".utf8)

    package static func encode(_ keys: VaultKeys, transport: LockedKey, archiveID: [UInt8], with key: LockedKey) -> [UInt8] {
        var out = keys.vaultID.bytes
        out.appendLittleEndian(keys.kdf.opsLimit)
        out.appendLittleEndian(keys.kdf.memLimit)
        out += keys.classBPublicKey
        let secrets = [transport, keys.filesystem, keys.none, keys.classKeys.completeUntilFirstUserAuthentication,
                       keys.classKeys.complete, keys.classKeys.completeUnlessOpenPrivate]
        for (index, secret) in secrets.enumerated() {
            out += XChaCha20Poly1305.wrap(secret, authenticating: associatedData(archiveID, index), with: key)
        }
        return out
    }

    package static func decode(_ bytes: [UInt8], archiveID: [UInt8], contentAEAD: ContentAEAD,
                       with key: LockedKey) throws(BackupError) -> (VaultKeys, transport: LockedKey) {
        let sealedByteCount = LockedKey.byteCount + XChaCha20Poly1305.overhead
        var secrets: [LockedKey] = []
        for index in 0..<6 {
            let start = 64 + index * sealedByteCount
            do {
                secrets.append(try XChaCha20Poly1305.unwrap(Array(bytes[start..<(start + sealedByteCount)]),
                                                            authenticating: associatedData(archiveID, index), with: key))
            } catch {
                throw .damaged("its keybag does not open")
            }
        }
        let classKeys = PasscodeClassKeys(complete: secrets[4], completeUntilFirstUserAuthentication: secrets[3],
                                          completeUnlessOpenPrivate: secrets[5])
        let publicKey = Array(bytes[32..<64])
        guard ConstantTime.equal(X25519.publicKey(for: classKeys.completeUnlessOpenPrivate), publicKey) else {
            throw .damaged("its completeUnlessOpen private key does not match its public key")
        }
        let kdf = Argon2idParameters(opsLimit: bytes.littleEndian(at: 16), memLimit: bytes.littleEndian(at: 24))
        guard kdf.meetsMinimum else { throw .damaged("its vault's Argon2id parameters are below the minimum") }
        return (VaultKeys(vaultID: ObjectID(bytes: Array(bytes[0..<16]))!, kdf: kdf, classBPublicKey: publicKey,
                          filesystem: secrets[1], none: secrets[2], classKeys: classKeys, contentAEAD: contentAEAD), secrets[0])
    }

    private static func associatedData(_ archiveID: [UInt8], _ index: Int) -> [UInt8] {
        context + archiveID + [UInt8(index)]
    }
}
