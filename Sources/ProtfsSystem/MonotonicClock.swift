import Glibc

/// `CLOCK_MONOTONIC` readings in nanoseconds: deadlines and idle times that a change of the
/// wall clock cannot move. A reading is a `UInt64` so that it fits an `Atomic`; spans of time
/// are `Duration`s, turned into nanoseconds (`wholeNanoseconds`) only to add to or compare
/// with readings.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// The reading `duration` from now.
    public static func nanoseconds(after duration: Duration) -> UInt64 {
        nanoseconds() + duration.wholeNanoseconds
    }
}

extension Duration {
    /// The duration in whole nanoseconds (a fraction of one dropped, a negative duration 0),
    /// for arithmetic on `MonotonicClock` readings.
    public var wholeNanoseconds: UInt64 {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        return UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000)
    }

    /// The duration in whole seconds, rounded up (what a person is told to wait).
    public var secondsRoundedUp: Int {
        guard self > .zero else { return 0 }
        let (seconds, attoseconds) = components
        return Int(seconds) + (attoseconds > 0 ? 1 : 0)
    }
}

/// Suspends the calling thread for `duration` (to the microsecond; a signal may end it early).
public func sleep(for duration: Duration) {
    usleep(useconds_t(duration.wholeNanoseconds / 1_000))
}
