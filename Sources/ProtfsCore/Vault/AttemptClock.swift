import Glibc
import ProtfsSystem

/// A moment, as the wrong-passcode delays measure it: the wall clock, which survives a
/// reboot but can be set back, and the boot clock (`CLOCK_BOOTTIME`: counts suspend, and no
/// one can set it) with the boot it belongs to.
public struct AttemptClock: Sendable, Equatable {
    /// UNIX time, with a fraction.
    public var wall: Double
    /// Seconds since boot.
    public var sinceBoot: Double
    /// `/proc/sys/kernel/random/boot_id`; empty when unknown.
    public var bootID: String

    public init(wall: Double, sinceBoot: Double, bootID: String) {
        self.wall = wall
        self.sinceBoot = sinceBoot
        self.bootID = bootID
    }

    public static func now() -> AttemptClock {
        AttemptClock(wall: seconds(CLOCK_REALTIME), sinceBoot: seconds(CLOCK_BOOTTIME), bootID: currentBootID)
    }

    /// Seconds from `earlier` to this moment, never negative: by the boot clock within one
    /// boot, so a wall clock set back (or forward) changes nothing; by the wall clock across
    /// a reboot, where a clock set back can at worst restart a delay, never lengthen it.
    public func seconds(since earlier: AttemptClock) -> Double {
        if !bootID.isEmpty, bootID == earlier.bootID { return max(0, sinceBoot - earlier.sinceBoot) }
        return max(0, wall - earlier.wall)
    }

    private static func seconds(_ clock: clockid_t) -> Double {
        var ts = timespec()
        clock_gettime(clock, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    private static let currentBootID: String = {
        guard let file = try? OwnedDescriptor.open(path: "/proc/sys/kernel/random/boot_id", .readOnly) else { return "" }
        let bytes = (try? file.borrowed.readAll(limit: 64)) ?? []
        return String(decoding: bytes.prefix { $0 != 0x0A }, as: UTF8.self)
    }()
}
