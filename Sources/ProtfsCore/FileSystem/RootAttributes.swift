import Glibc
import ProtfsFormat
import ProtfsSystem

/// The mode and owner the mount's root shows. They cannot be the backing root's own: that
/// stays 0700 (docs/FORMAT.md), whatever `chmod` the mount's root gets. Kept as a small
/// backing xattr of the backing root (modes and owners are visible in the backing store for
/// every other object too, so nothing is hidden by sealing these).
struct RootAttributes: Equatable, Sendable {
    static let attributeName = "user.protfs.root"

    var mode: mode_t
    var uid: uid_t
    var gid: gid_t

    /// What a root that was never changed shows: a fresh `mkdir`'s 0755, owned by the
    /// backing directory's owner.
    static func defaults(for backingRoot: stat) -> RootAttributes {
        RootAttributes(mode: 0o755, uid: backingRoot.st_uid, gid: backingRoot.st_gid)
    }

    static func read(from root: FileDescriptor) throws(Errno) -> RootAttributes {
        let status = try root.status()
        guard let bytes = try? root.extendedAttribute(attributeName), bytes.count == 12 else {
            return defaults(for: status)
        }
        return RootAttributes(mode: mode_t(bytes.littleEndian(at: 0) as UInt32) & 0o7777,
                              uid: bytes.littleEndian(at: 4), gid: bytes.littleEndian(at: 8))
    }

    func write(to root: FileDescriptor) throws(Errno) {
        var bytes: [UInt8] = []
        bytes.appendLittleEndian(UInt32(mode & 0o7777))
        bytes.appendLittleEndian(uid)
        bytes.appendLittleEndian(gid)
        try root.setExtendedAttribute(Self.attributeName, bytes)
    }
}
