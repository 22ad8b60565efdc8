import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// The backing xattr `user.protfs.class`: the object's class sealed under the class-hint key
/// and bound to its file or directory id, so an observer of the backing directory cannot
/// tell the sensitive files and a hint cannot be moved to another object. A fast hint only:
/// the header (files) or `protfs.dir` (directories) is the truth.
public enum ClassHint {
    public static let attributeName = "user.protfs.class"

    /// `seal(class id, ad = object id, key = pfclshnt)`: 41 bytes.
    public static func seal(_ protectionClass: ProtectionClass, objectID: ObjectID, keys: FilesystemKeys) -> [UInt8] {
        XChaCha20Poly1305.seal([protectionClass.rawValue], authenticating: objectID.bytes, with: keys.classHint)
    }

    /// The class in a hint value; `EIO` when it fails authentication (tampered, or copied
    /// from another object) or holds no known class.
    public static func open(_ value: [UInt8], objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> ProtectionClass {
        guard value.count == 1 + XChaCha20Poly1305.overhead,
              let plain = try? XChaCha20Poly1305.open(value, authenticating: objectID.bytes, with: keys.classHint),
              let protectionClass = ProtectionClass(rawValue: plain[0]) else { throw .io }
        return protectionClass
    }

    /// The hint on a backing object (any descriptor, `O_PATH` included); nil when it has none
    /// (to be rewritten silently), `EIO` when it does not authenticate.
    public static func read(from object: FileDescriptor, objectID: ObjectID, keys: FilesystemKeys) throws(Errno) -> ProtectionClass? {
        let value: [UInt8]
        do { value = try object.extendedAttribute(attributeName) } catch .noData { return nil }
        return try open(value, objectID: objectID, keys: keys)
    }

    public static func write(_ protectionClass: ProtectionClass, to object: FileDescriptor, objectID: ObjectID,
                             keys: FilesystemKeys) throws(Errno) {
        try object.setExtendedAttribute(attributeName, seal(protectionClass, objectID: objectID, keys: keys))
    }

    /// Takes the hint away before the truth changes: a crash before the new hint is written
    /// then leaves a missing hint, which is rewritten silently, never a stale one (EIO).
    public static func remove(from object: FileDescriptor) throws(Errno) {
        do { try object.removeExtendedAttribute(attributeName) } catch .noData {}
    }
}
