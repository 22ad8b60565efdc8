import Glibc

/// `CLOCK_MONOTONIC` in nanoseconds: deadlines and idle times that a change of the wall
/// clock cannot move.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
