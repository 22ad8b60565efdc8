import Glibc
import ProtfsSystem

/// A moment, as the wrong-passcode delays measure it: the wall clock, which survives a
/// reboot but can be set back, and the boot clock (`CLOCK_BOOTTIME`: counts suspend, and no
/// one can set it) with the boot it belongs to.
public struct AttemptClock: Sendable, Equatable {
    /// UNIX time: since 1970-01-01 00:00 UTC.
    public var wall: Duration
    /// Since boot.
    public var sinceBoot: Duration
    /// `/proc/sys/kernel/random/boot_id`; empty when unknown.
    public var bootID: String

    public init(wall: Duration, sinceBoot: Duration, bootID: String) {
        self.wall = wall
        self.sinceBoot = sinceBoot
        self.bootID = bootID
    }

    public static func now() -> AttemptClock {
        AttemptClock(wall: reading(CLOCK_REALTIME), sinceBoot: reading(CLOCK_BOOTTIME), bootID: currentBootID)
    }

    /// The time from `earlier` to this moment, never negative: by the boot clock within one
    /// boot, so a wall clock set back (or forward) changes nothing; by the wall clock across
    /// a reboot, where a clock set back can at worst restart a delay, never lengthen it.
    public func elapsed(since earlier: AttemptClock) -> Duration {
        if !bootID.isEmpty, bootID == earlier.bootID { return max(.zero, sinceBoot - earlier.sinceBoot) }
        return max(.zero, wall - earlier.wall)
    }

    private static func reading(_ clock: clockid_t) -> Duration {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return .seconds(ts.tv_sec) + .nanoseconds(ts.tv_nsec)
    }

    private static let currentBootID: String = {
        guard let file = try? OwnedDescriptor.open(path: "/proc/sys/kernel/random/boot_id", .readOnly) else { return "" }
        let bytes = (try? file.borrowed.readAll(limit: 64)) ?? []
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }()
}
