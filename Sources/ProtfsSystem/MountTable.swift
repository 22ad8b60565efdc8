import Glibc

/// The kernel's table of mounts (`/proc/mounts`), read by `protfs mount` (is a protfs mount
/// already there?) and `protfsctl backing-path` (which mount holds this path?).
public enum MountTable {
    /// The filesystem type the kernel shows for a protfs mount (`subtype=protfs`).
    public static let protfsType = "fuse.protfs"

    /// The mount points of the protfs mounts, octal escapes decoded.
    public static func protfsMountPoints() -> [String] {
        lines(of: "/proc/mounts").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[2] == protfsType else { return nil }
            return unescape(String(fields[1]))
        }
    }

    /// The protfs mount that holds the absolute, canonical `path`: the longest mount point
    /// that is `path` or one of its ancestors.
    public static func protfsMountPoint(containing path: String) -> String? {
        protfsMountPoints().filter { mountpoint in
            path == mountpoint || path.hasPrefix(mountpoint == "/" ? "/" : mountpoint + "/")
        }.max { $0.count < $1.count }
    }

    /// The source (for protfs, the canonical backing directory) of the newest mount at
    /// `mountpoint`.
    public static func source(of mountpoint: String) -> String? {
        lines(of: "/proc/mounts").last { line in
            let fields = line.split(separator: " ")
            return fields.count >= 2 && unescape(String(fields[1])) == mountpoint
        }.map { unescape(String($0.split(separator: " ")[0])) }
    }

    /// The options the kernel shows for the newest mount at `mountpoint` (`rw`, `nosuid`,
    /// `noexec`, `sync`, ...), or nil when nothing is mounted there.
    public static func options(of mountpoint: String) -> Set<String>? {
        lines(of: "/proc/mounts").last { line in
            let fields = line.split(separator: " ")
            return fields.count >= 4 && unescape(String(fields[1])) == mountpoint
        }.map { Set($0.split(separator: " ")[3].split(separator: ",").map(String.init)) }
    }

    /// The `major:minor` device of the newest mount at `mountpoint` (from
    /// `/proc/self/mountinfo`, so nothing asks the mounted filesystem itself).
    public static func device(of mountpoint: String) -> String? {
        lines(of: "/proc/self/mountinfo").last { line in
            let fields = line.split(separator: " ")
            return fields.count >= 5 && unescape(String(fields[4])) == mountpoint
        }.map { String($0.split(separator: " ")[2]) }
    }

    /// A device number as `/proc/self/mountinfo` writes it, `major:minor`.
    public static func deviceName(_ device: dev_t) -> String {
        let major = (device >> 8) & 0xFFF | (device >> 32) & ~0xFFF
        let minor = device & 0xFF | (device >> 12) & ~0xFF
        return "\(major):\(minor)"
    }

    /// The mount points of the protfs mounts of the backing directory `canonicalBacking`
    /// (their source, which `fsname` set), from `/proc/self/mountinfo`.
    public static func protfsMountPoints(ofBacking canonicalBacking: String) -> [String] {
        lines(of: "/proc/self/mountinfo").compactMap { line in
            let fields = line.split(separator: " ")
            // id parent major:minor root mountpoint options [optional...] - type source options
            guard fields.count >= 7, let separator = fields.dropFirst(6).firstIndex(of: "-"),
                  separator + 2 < fields.count, fields[separator + 1] == protfsType,
                  unescape(String(fields[separator + 2])) == canonicalBacking else { return nil }
            return unescape(String(fields[4]))
        }
    }

    /// The lines of a kernel table (none when it cannot be read).
    static func lines(of path: String) -> [Substring] {
        guard let file = try? OwnedDescriptor.open(path: path, .readOnly), let bytes = try? file.borrowed.readAll() else { return [] }
        return String(decoding: bytes, as: UTF8.self).split(separator: "\n")
    }

    /// The kernel writes space, tab, newline and backslash in a mount point as `\ooo`.
    static func unescape(_ field: String) -> String {
        var bytes: [UInt8] = []
        var utf8 = Array(field.utf8)[...]
        while let byte = utf8.first {
            if byte == UInt8(ascii: "\\"), utf8.count >= 4,
               let value = UInt8(String(decoding: utf8.dropFirst().prefix(3), as: UTF8.self), radix: 8) {
                bytes.append(value)
                utf8 = utf8.dropFirst(4)
            } else {
                bytes.append(byte)
                utf8 = utf8.dropFirst()
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

extension MountTable {
    /// A mount as this process sees it.
    public struct Mount: Sendable, Equatable {
        public let mountpoint: String
        /// The filesystem type, `fuse.protfs` for protfs.
        public let type: String

        public var isProtfs: Bool { type == MountTable.protfsType }
    }

    /// The mount that holds `canonicalPath` (absolute, no symlinks): the newest mount at the
    /// longest mount point that is a prefix of it, from `/proc/self/mountinfo` (this process's
    /// mount namespace). Nil when the table cannot be read.
    public static func mount(holding canonicalPath: String) -> Mount? {
        var best: Mount?
        for line in lines(of: "/proc/self/mountinfo") {
            let fields = line.split(separator: " ")
            // id parent major:minor root mountpoint options [optional...] - type source options
            guard fields.count >= 7, let separator = fields.dropFirst(6).firstIndex(of: "-"),
                  separator + 1 < fields.count else { continue }
            let mount = Mount(mountpoint: unescape(String(fields[4])), type: String(fields[separator + 1]))
            guard contains(mount.mountpoint, canonicalPath),
                  mount.mountpoint.utf8.count >= (best?.mountpoint.utf8.count ?? 0) else { continue }
            best = mount
        }
        return best
    }

    /// Whether `path` is `directory` or lies below it, component by component.
    private static func contains(_ directory: String, _ path: String) -> Bool {
        directory == "/" || path == directory || path.hasPrefix(directory + "/")
    }
}
