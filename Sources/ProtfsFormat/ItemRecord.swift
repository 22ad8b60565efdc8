import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// One keychain item as stored: `BACKING/protfs.items/<record name>` (docs/FORMAT.md,
/// "Keychain items"). The attributes are sealed under the metadata key (readable in every
/// state), the secret under a random per-item key, which is wrapped under the class key of the
/// item's accessibility (bound to the device key as well for `...ThisDeviceOnly`). Every part
/// is bound to the vault, the item id and the record name (so to the owner, service and
/// account); the key and the secret to the accessibility too. Version 2 added the lookup
/// attributes and the content type to the sealed attributes; version 1 records are read, and
/// stay version 1 until a change needs more (their key and secret are bound to the version).
package struct ItemRecord: Sendable, Equatable {
    package static let magic = Array("PROTFSIT".utf8)
    package static let currentVersion: UInt16 = 2
    /// Magic, version, reserved, item id, metadata length.
    package static let fixedByteCount = 32
    package static let wrappedKeyByteCount = LockedKey.byteCount + XChaCha20Poly1305.overhead
    private static let deviceBindingContext = Array("protfs item device binding v1".utf8)

    /// Which sealed part associated data is for.
    package enum Part: UInt8 {
        case metadata = 1
        case key = 2
        case secret = 3
    }

    package let version: UInt16
    package let itemID: ObjectID
    package let sealedMetadata: [UInt8]
    package let wrappedKey: [UInt8]
    package let sealedSecret: [UInt8]

    package var secretLength: Int { sealedSecret.count - XChaCha20Poly1305.overhead }
    /// The bytes of its attributes (`ItemMetadata`), as the bounds count them.
    package var attributeLength: Int { sealedMetadata.count - XChaCha20Poly1305.overhead }

    /// The largest record a secret of the maximum length and the largest attributes make.
    package static let maximumByteCount = fixedByteCount + ItemMetadata.maximumByteCount + XChaCha20Poly1305.overhead
        + wrappedKeyByteCount + ItemLimits.maximumSecretLength + XChaCha20Poly1305.overhead

    // MARK: bytes

    package var bytes: [UInt8] {
        var out = Self.magic
        out.appendLittleEndian(version)
        out.appendLittleEndian(UInt16(0))
        out += itemID.bytes
        out.appendLittleEndian(UInt32(sealedMetadata.count))
        return out + sealedMetadata + wrappedKey + sealedSecret
    }

    /// The structure only (no key): `EIO` for anything malformed.
    package init(parsing bytes: [UInt8]) throws(Errno) {
        guard bytes.count >= Self.fixedByteCount, Array(bytes[0..<8]) == Self.magic,
              (1...Self.currentVersion).contains(bytes.littleEndian(at: 8, as: UInt16.self)),
              bytes.littleEndian(at: 10, as: UInt16.self) == 0 else { throw .io }
        version = bytes.littleEndian(at: 8)
        let maximumMetadata = version == 1 ? ItemMetadata.maximumVersion1ByteCount : ItemMetadata.maximumByteCount
        let metadataLength = Int(bytes.littleEndian(at: 28, as: UInt32.self))
        let keyStart = Self.fixedByteCount + metadataLength
        let secretStart = keyStart + Self.wrappedKeyByteCount
        guard metadataLength >= XChaCha20Poly1305.overhead + ItemMetadata.minimumByteCount,
              metadataLength <= XChaCha20Poly1305.overhead + maximumMetadata,
              bytes.count >= secretStart + XChaCha20Poly1305.overhead,
              bytes.count - secretStart <= ItemLimits.maximumSecretLength + XChaCha20Poly1305.overhead
        else { throw .io }
        itemID = ObjectID(bytes: Array(bytes[12..<28]))!
        sealedMetadata = Array(bytes[Self.fixedByteCount..<keyStart])
        wrappedKey = Array(bytes[keyStart..<secretStart])
        sealedSecret = Array(bytes[secretStart...])
    }

    private init(version: UInt16, itemID: ObjectID, sealedMetadata: [UInt8], wrappedKey: [UInt8], sealedSecret: [UInt8]) {
        self.version = version
        self.itemID = itemID
        self.sealedMetadata = sealedMetadata
        self.wrappedKey = wrappedKey
        self.sealedSecret = sealedSecret
    }

    /// Reads the record `name` in `directory` (a regular file, else `EIO`) and authenticates
    /// its structure and attributes, which needs no class key.
    package static func read(_ name: String, in directory: FileDescriptor, vaultID: ObjectID,
                     keys: FilesystemKeys) throws(Errno) -> (ItemRecord, ItemMetadata) {
        let file = try OwnedDescriptor.openRegularFile(name, in: directory)
        return try open(try file.borrowed.readAll(limit: maximumByteCount), recordName: name, vaultID: vaultID, keys: keys)
    }

    /// The record in `bytes`, named `recordName`, with its attributes authenticated; `EIO`
    /// for anything malformed or sealed for another name or vault.
    package static func open(_ bytes: [UInt8], recordName: String, vaultID: ObjectID,
                     keys: FilesystemKeys) throws(Errno) -> (ItemRecord, ItemMetadata) {
        guard bytes.count <= maximumByteCount else { throw .io }
        let record = try ItemRecord(parsing: bytes)
        return (record, try record.openMetadata(recordName: recordName, vaultID: vaultID, keys: keys))
    }

    // MARK: sealing

    /// Seals a new record (or a new version of one: a fresh item key and nonces every time).
    /// `EACCES` when the class key of the accessibility is not in memory.
    package static func seal(_ metadata: ItemMetadata, secret: SecureBuffer, itemID: ObjectID, recordName: String,
                     keyring: some ClassKeySource, keys: FilesystemKeys) throws(Errno) -> ItemRecord {
        let accessibility = metadata.attributes.accessibility
        let wrapKey = try wrappingKey(for: accessibility, keyring: keyring)
        let itemKey = LockedKey.random()
        let ad = associatedData(version: currentVersion, vaultID: keyring.vaultID, itemID: itemID, recordName: recordName)
        var sealedSecret = [UInt8](repeating: 0, count: secret.count + XChaCha20Poly1305.overhead)
        let secretAD = ad + [Part.secret.rawValue, accessibility.rawValue]
        secret.withUnsafeBytes { plaintext in
            secretAD.withUnsafeBytes { a in
                sealedSecret.withUnsafeMutableBytes { XChaCha20Poly1305.seal(plaintext, authenticating: a, with: itemKey, into: $0) }
            }
        }
        return ItemRecord(version: currentVersion, itemID: itemID,
                          sealedMetadata: XChaCha20Poly1305.seal(metadata.bytes(version: currentVersion),
                                                                 authenticating: ad + [Part.metadata.rawValue], with: keys.itemMetadata),
                          wrappedKey: XChaCha20Poly1305.wrap(itemKey, authenticating: ad + [Part.key.rawValue, accessibility.rawValue],
                                                             with: wrapKey),
                          sealedSecret: sealedSecret)
    }

    /// Whether `metadata` can replace this record's attributes alone: the accessibility is
    /// unchanged and the record's version can hold them.
    package func canReplaceMetadata(with metadata: ItemMetadata, accessibility: ItemAccessibility) -> Bool {
        metadata.attributes.accessibility == accessibility && (version >= 2 || metadata.fitsVersion1)
    }

    /// The same key and secret with other attributes (see `canReplaceMetadata`): needs no
    /// class key, so labels change in every state.
    package func replacingMetadata(_ metadata: ItemMetadata, recordName: String, vaultID: ObjectID,
                           keys: FilesystemKeys) -> ItemRecord {
        let ad = Self.associatedData(version: version, vaultID: vaultID, itemID: itemID, recordName: recordName)
        return ItemRecord(version: version, itemID: itemID,
                          sealedMetadata: XChaCha20Poly1305.seal(metadata.bytes(version: version),
                                                                 authenticating: ad + [Part.metadata.rawValue], with: keys.itemMetadata),
                          wrappedKey: wrappedKey, sealedSecret: sealedSecret)
    }

    /// The attributes and owner; `EIO` when they do not authenticate here (tampered, or
    /// copied from another record or vault) or do not hash to `recordName`.
    package func openMetadata(recordName: String, vaultID: ObjectID, keys: FilesystemKeys) throws(Errno) -> ItemMetadata {
        let ad = Self.associatedData(version: version, vaultID: vaultID, itemID: itemID, recordName: recordName)
        guard let plaintext = try? XChaCha20Poly1305.open(sealedMetadata, authenticating: ad + [Part.metadata.rawValue],
                                                          with: keys.itemMetadata),
              let metadata = ItemMetadata(parsing: plaintext, version: version),
              metadata.identity.recordName(keys: keys) == recordName else { throw .io }
        return metadata
    }

    /// The secret, in locked memory: `EACCES` without the class key, `EIO` when it does not
    /// authenticate.
    package func openSecret(accessibility: ItemAccessibility, recordName: String, keyring: some ClassKeySource) throws(Errno) -> SecureBuffer {
        let ad = Self.associatedData(version: version, vaultID: keyring.vaultID, itemID: itemID, recordName: recordName)
        let wrapKey = try Self.wrappingKey(for: accessibility, keyring: keyring)
        let itemKey: LockedKey
        do {
            itemKey = try XChaCha20Poly1305.unwrap(wrappedKey, authenticating: ad + [Part.key.rawValue, accessibility.rawValue],
                                                   with: wrapKey)
        } catch { throw .io }
        let secret = SecureBuffer(count: secretLength)
        let secretAD = ad + [Part.secret.rawValue, accessibility.rawValue]
        do {
            try sealedSecret.withUnsafeBytes { sealed in
                try secretAD.withUnsafeBytes { a in
                    try secret.withUnsafeMutableBytes { out in
                        try XChaCha20Poly1305.open(sealed, authenticating: a, with: itemKey, into: out)
                    }
                }
            }
        } catch { throw .io }
        return secret
    }

    /// `"PROTFSIT" || version (2) || vault id || item id || record name`; each part appends
    /// its id, the key and the secret the accessibility id too.
    package static func associatedData(version: UInt16, vaultID: ObjectID, itemID: ObjectID, recordName: String) -> [UInt8] {
        var ad = magic
        ad.appendLittleEndian(version)
        return ad + vaultID.bytes + itemID.bytes + Array(recordName.utf8)
    }

    /// The class key, or for `...ThisDeviceOnly` a key bound to the device as well:
    /// `BLAKE2b-256(key = pfitmdev, "protfs item device binding v1" || vault id || class key)`.
    package static func wrappingKey(for accessibility: ItemAccessibility, keyring: some ClassKeySource) throws(Errno) -> LockedKey {
        guard let classKey = keyring.key(for: accessibility.protectionClass) else { throw .permissionDenied }
        guard accessibility.isThisDeviceOnly else { return classKey }
        var hash = BLAKE2b(key: keyring.deviceKeys.itemDevice, outputByteCount: LockedKey.byteCount)
        hash.update(deviceBindingContext)
        hash.update(keyring.vaultID.bytes)
        hash.update(classKey)
        return hash.finalizeKey()
    }
}
