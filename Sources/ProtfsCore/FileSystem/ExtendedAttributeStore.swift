import Glibc
import ProtfsCrypto
import ProtfsFormat
import ProtfsSystem

/// The `user.*` attributes of one backing object, in their two forms (docs/FORMAT.md
/// "xattrs"): values up to `PackedXattrs.maximumPackedValueLength` packed in one sealed
/// blob, longer ones (and every one written before the blob existed) each in a backing xattr
/// of its own. When both forms name an attribute, the blob wins; every move between forms
/// writes the new place first, and the blob's rewrite is the commit point, so a crash leaves
/// either the old or the new state visible, at worst with a stale copy that `fsck` removes.
///
/// Changes are read-modify-write of the blob: the caller serialises them per object.
struct ExtendedAttributeStore {
    let object: FileDescriptor
    let objectID: ObjectID
    let keys: FilesystemKeys

    /// The packed attributes (empty without a blob); `EIO` for a damaged blob.
    func packed() throws(Errno) -> PackedXattrs {
        let sealed: [UInt8]
        do { sealed = try object.extendedAttribute(PackedXattrs.backingName) } catch .noData { return PackedXattrs() }
        return try PackedXattrs.open(sealed, objectID: objectID, keys: keys)
    }

    func value(of name: [UInt8]) throws(Errno) -> [UInt8] {
        var packed = try packed()
        defer { packed.wipe() }
        if let value = try packed.value(of: name) { return value }
        let sealed = try object.extendedAttribute(try XattrCodec.backingName(for: name, objectID: objectID, keys: keys))
        return try XattrCodec.openValue(sealed, name: name, objectID: objectID, keys: keys)
    }

    /// The packed names, then those in their own backing xattr that the blob does not shadow.
    func names() throws(Errno) -> [[UInt8]] {
        var packed = try packed()
        defer { packed.wipe() }
        let packedNames = packed.names
        let shadowed = Set(packedNames)
        return packedNames + (try object.extendedAttributeNames()).compactMap { backingName in
            guard let name = XattrCodec.name(ofBacking: backingName, objectID: objectID, keys: keys),
                  !shadowed.contains(name) else { return nil }
            return name
        }
    }

    /// `setxattr` with its `XATTR_CREATE`/`XATTR_REPLACE` answers. The backing filesystem's
    /// `ENOSPC` or `E2BIG` comes back as it is, with the former state intact.
    func set(_ name: [UInt8], _ value: [UInt8], flags: Int32) throws(Errno) {
        let ownName = try XattrCodec.backingName(for: name, objectID: objectID, keys: keys)
        let backingNames = Set(try object.extendedAttributeNames())
        var packed = backingNames.contains(PackedXattrs.backingName) ? try packed() : PackedXattrs()
        defer { packed.wipe() }
        let wasPacked = try packed.remove(name)
        let hasOwn = backingNames.contains(ownName)
        if flags & ExtendedAttributeFlag.create != 0, wasPacked || hasOwn { throw .exists }
        if flags & ExtendedAttributeFlag.replace != 0, !wasPacked, !hasOwn { throw .noData }

        if value.count <= PackedXattrs.maximumPackedValueLength {
            try packed.set(name, value)
            do throws(Errno) {
                try write(packed)  // the commit point: the blob wins over the own copy
                if hasOwn { try removeIfPresent(ownName) }
                return
            } catch where error == Errno(E2BIG) {
                // Did not fit the blob (beyond the kernel's value limit): its own xattr then.
                try packed.remove(name)
            }
        }
        try object.setExtendedAttribute(ownName, try XattrCodec.sealValue(value, name: name, objectID: objectID, keys: keys))
        if wasPacked { try write(packed) }  // the commit point: the packed copy goes
    }

    /// `removexattr`: the own copy first, then the blob, so a crash in between leaves the
    /// attribute (the blob's copy) rather than bring back an older own copy.
    func remove(_ name: [UInt8]) throws(Errno) {
        let ownName = try XattrCodec.backingName(for: name, objectID: objectID, keys: keys)
        var packed = try packed()
        defer { packed.wipe() }
        guard try packed.remove(name) else {
            try object.removeExtendedAttribute(ownName)
            return
        }
        try removeIfPresent(ownName)
        try write(packed)
    }

    /// One backing `setxattr` replacing the blob (atomically), or its removal once empty.
    private func write(_ packed: PackedXattrs) throws(Errno) {
        if packed.isEmpty { return try removeIfPresent(PackedXattrs.backingName) }
        try object.setExtendedAttribute(PackedXattrs.backingName, try packed.sealed(objectID: objectID, keys: keys))
    }

    private func removeIfPresent(_ backingName: String) throws(Errno) {
        do { try object.removeExtendedAttribute(backingName) } catch .noData {}
    }
}
