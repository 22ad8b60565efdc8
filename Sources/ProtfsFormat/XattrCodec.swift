import Glibc
import ProtfsCrypto
import ProtfsSystem

/// `user.*` extended attributes on the backing store (FORMAT.md "xattrs"): the mount's
/// `user.NAME` is stored as `user.protfs.x.` + the name scheme applied to NAME (tweak: the
/// object's file or directory id, keys: the xattr name subkeys), and its value sealed with
/// the object id and NAME as associated data, so a value moved to another object or name
/// fails to open.
public enum XattrCodec {
    public static let userNamespace = "user."
    public static let backingPrefix = "user.protfs.x."
    /// Longest NAME: longer ones would encode past the backing filesystem's 255-byte limit.
    public static let maximumNameLength = 159
    /// Longest value: the sealed form must fit the kernel's 64 KiB xattr value limit.
    public static let maximumValueLength = ExtendedAttributeLimits.valueBytes - XChaCha20Poly1305.overhead

    /// The backing name for the mount's attribute `name` (`user.NAME`, as the kernel sends it).
    /// `EOPNOTSUPP` outside `user.`, `EINVAL` for an empty NAME, `ERANGE` for one too long.
    public static func backingName(for name: [UInt8], objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> String {
        var suffix = try suffix(of: name)
        defer { secureZero(&suffix) }
        return backingPrefix + SIVNameCipher.xattrNames(keys).encrypt(suffix, tweak: objectID)
    }

    /// The mount's name (`user.NAME`) for a backing attribute, or nil when it is not a sealed
    /// user attribute (the class hint, a foreign or a damaged name): listxattr skips those.
    public static func name(ofBacking backingName: String, objectID: ObjectID, keys: FilesystemKeys) -> [UInt8]? {
        let bytes = Array(backingName.utf8)
        guard bytes.starts(with: backingPrefix.utf8),
              var suffix = SIVNameCipher.xattrNames(keys).decrypt(String(decoding: bytes[backingPrefix.utf8.count...], as: UTF8.self),
                                                                   tweak: objectID) else { return nil }
        defer { secureZero(&suffix) }
        guard suffix.count <= maximumNameLength else { return nil }
        return Array(userNamespace.utf8) + suffix
    }

    /// Seals the value of attribute `name` (`user.NAME`) of the object `objectID`.
    public static func sealValue(_ value: [UInt8], name: [UInt8], objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> [UInt8] {
        guard value.count <= maximumValueLength else { throw Errno(E2BIG) }
        var associatedData = try associatedData(name: name, objectID: objectID)
        defer { secureZero(&associatedData) }
        return XChaCha20Poly1305.seal(value, authenticating: associatedData, with: keys.xattrValue)
    }

    /// Opens a value sealed by `sealValue`; `EIO` if it fails authentication (tampered, or
    /// moved from another object or attribute).
    public static func openValue(_ sealed: [UInt8], name: [UInt8], objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> [UInt8] {
        var associatedData = try associatedData(name: name, objectID: objectID)
        defer { secureZero(&associatedData) }
        guard let value = try? XChaCha20Poly1305.open(sealed, authenticating: associatedData, with: keys.xattrValue) else {
            throw .io
        }
        return value
    }

    /// `object id || NAME`, the associated data of a value. It holds the plaintext NAME: the
    /// caller wipes it.
    private static func associatedData(name: [UInt8], objectID: ObjectID) throws(Errno) -> [UInt8] {
        var suffix = try suffix(of: name)
        defer { secureZero(&suffix) }
        return objectID.bytes + suffix
    }

    /// NAME of `user.NAME`, checked. It is plaintext: the caller wipes it.
    static func suffix(of name: [UInt8]) throws(Errno) -> [UInt8] {
        guard name.starts(with: userNamespace.utf8) else { throw .notSupported }
        let suffix = Array(name[userNamespace.utf8.count...])
        guard !suffix.isEmpty, !suffix.contains(0) else { throw .invalid }
        guard suffix.count <= maximumNameLength else { throw .range }
        return suffix
    }
}
