import Glibc

/// How the daemon's descriptors (its `RLIMIT_NOFILE`, raised to the hard limit at start) are
/// shared out. Every node the kernel knows holds an `O_PATH` descriptor, and every open file
/// one more for its contents (shared by the handles on that file); on an `allow_other`
/// mount any user can make the kernel hold as many of both as that user's own limits allow.
///
/// - A fifth of the limit (at least 512) is kept from the node table, for open files,
///   listings in progress, the control socket's connections and the daemon's own work
///   (unlock, `passwd` and lock open the keybag and state files; a backup its archive and
///   the backing tree). The node table beyond `nodeCapacity` asks the kernel to forget the
///   least recently used nodes (`InodePruner`), and refuses new ones at `nodeCeiling`.
/// - Of the node table, a uid other than root and the vault's owner holds at most an
///   eighth, and those uids together at most half: nodes kept alive by their open files,
///   working directories or descriptors count against them.
/// - Of the reserve, such a uid holds at most an eighth in open handles, and those uids
///   together at most half; the other half stays for root, the owner and the daemon.
public struct DescriptorShares: Sendable, Equatable {
    /// The daemon's descriptor limit these shares are cut from.
    public let limit: Int

    public init(limit: Int) {
        self.limit = limit
    }

    /// This process's shares, from its open-file limit now.
    public static func ofThisProcess() -> DescriptorShares {
        var files = rlimit()
        // RLIM_INFINITY is all ones, beyond Int.max; the kernel's ceiling (fs.nr_open) is
        // 2^20 by default.
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &files) == 0,
              files.rlim_cur < rlim_t(Int.max) else { return DescriptorShares(limit: 1 << 20) }
        return DescriptorShares(limit: Int(files.rlim_cur))
    }

    /// Descriptors kept from the node table.
    public var reserve: Int { max(limit / 5, 512) }

    /// Nodes the table holds before it asks the kernel to forget some.
    public var nodeCapacity: Int { max(limit - reserve, 64) }

    /// Nodes the table holds at most, whoever asks: when nodes kept in use (which the kernel
    /// does not forget) fill it beyond its capacity, an eighth of the reserve more. The rest
    /// of the reserve covers the other uids' open handles (half of it), the forgotten nodes
    /// waiting to be closed, and root's, the owner's and the daemon's own descriptors.
    public var nodeCeiling: Int { nodeCapacity + reserve / 8 }

    public var nodes: UserShares { Self.eighthEach(of: nodeCapacity) }

    public var handles: UserShares { Self.eighthEach(of: reserve) }

    /// An eighth of `room` for each uid, four such shares (half of it) for all of them.
    private static func eighthEach(of room: Int) -> UserShares {
        let perUser = max(room / 8, 1)
        return UserShares(perUser: perUser, otherUsers: perUser * 4)
    }
}
