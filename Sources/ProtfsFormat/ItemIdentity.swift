import ProtfsCrypto

/// Who owns an item and what names it: unique per vault. The record's backing name is a
/// keyed hash of it, so a lookup needs no scan and the name tells an observer nothing.
public struct ItemIdentity: Sendable, Hashable {
    public let owner: UInt32
    public let service: String
    public let account: String

    public init(owner: UInt32, service: String, account: String) {
        self.owner = owner
        self.service = service
        self.account = account
    }

    /// Characters of every record name: base64url of 32 bytes.
    package static let recordNameLength = Base64URL.encodedLength(ofByteCount: 32)

    /// `base64url(BLAKE2b-256(key = pfitmnam, owner (4) || len (4) || service || len (4) || account))`.
    package func recordName(keys: FilesystemKeys) -> String {
        var hash = BLAKE2b(key: keys.itemName, outputByteCount: 32)
        hash.update(littleEndian: owner)
        for text in [service, account] {
            let bytes = Array(text.utf8)
            hash.update(littleEndian: UInt32(bytes.count))
            hash.update(bytes)
        }
        return Base64URL.encode(hash.finalize())
    }

    /// Whether a backing name in `protfs.items` can be a record's (not a temporary or foreign file).
    package static func isRecordName(_ name: String) -> Bool {
        name.utf8.count == recordNameLength && Base64URL.decode(name)?.count == 32
    }
}
