import Glibc

/// Every protfs mount this process can see, for `protfsctl list`.
extension MountTable {
    /// One line of `/proc/self/mountinfo` whose type is `fuse.protfs`.
    public struct ProtfsMount: Sendable, Equatable {
        public let mountpoint: String
        /// The mount's source: the canonical backing directory (`fsname`).
        public let source: String
        /// The uid that mounted it (the kernel's `user_id=`); nil when the line has none.
        public let mountingUser: UInt32?
        /// Its device, `major:minor` (`MountTable.deviceName`): what `st_dev` of every object on it says.
        public let device: String
    }

    /// Whether the object with device `device` (`st_dev`) is on a protfs mount.
    public static func isOnProtfsMount(device: dev_t) -> Bool {
        let name = deviceName(device)
        return protfsMounts().contains { $0.device == name }
    }

    /// The protfs mounts, in the kernel's order (oldest first).
    public static func protfsMounts() -> [ProtfsMount] {
        lines(of: "/proc/self/mountinfo").compactMap { line in
            let fields = line.split(separator: " ")
            // id parent major:minor root mountpoint options [optional...] - type source superoptions
            guard fields.count >= 7, let separator = fields.dropFirst(6).firstIndex(of: "-"),
                  separator + 3 < fields.count, fields[separator + 1] == protfsType else { return nil }
            let userOption = fields[separator + 3].split(separator: ",").first { $0.hasPrefix("user_id=") }
            return ProtfsMount(mountpoint: unescape(String(fields[4])), source: unescape(String(fields[separator + 2])),
                               mountingUser: userOption.flatMap { UInt32($0.dropFirst("user_id=".count)) },
                               device: String(fields[2]))
        }
    }
}
