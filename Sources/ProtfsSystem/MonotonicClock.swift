import Glibc

/// A `CLOCK_MONOTONIC` reading: a deadline or the moment of an activity, which a change of
/// the wall clock cannot move. Spans between readings are `Duration`s.
public struct MonotonicInstant: Comparable, Hashable, Sendable {
    /// Nanoseconds since the clock's (unspecified) start: what an `Atomic` can hold.
    public let nanosecondsSinceStart: UInt64

    public init(nanosecondsSinceStart: UInt64) { self.nanosecondsSinceStart = nanosecondsSinceStart }

    public static var now: MonotonicInstant { MonotonicInstant(nanosecondsSinceStart: MonotonicClock.nanoseconds()) }

    /// The instant `duration` later (a negative duration: this one).
    public func advanced(by duration: Duration) -> MonotonicInstant {
        MonotonicInstant(nanosecondsSinceStart: nanosecondsSinceStart + duration.wholeNanoseconds)
    }

    /// How long after `earlier` this is; zero when it is not after it.
    public func duration(since earlier: MonotonicInstant) -> Duration {
        nanosecondsSinceStart > earlier.nanosecondsSinceStart
            ? .nanoseconds(nanosecondsSinceStart - earlier.nanosecondsSinceStart) : .zero
    }

    public static func < (a: MonotonicInstant, b: MonotonicInstant) -> Bool { a.nanosecondsSinceStart < b.nanosecondsSinceStart }
}

/// `CLOCK_MONOTONIC` readings in bare nanoseconds, for the hot paths of the request loop that
/// compare them by the million; elsewhere `MonotonicInstant` says what a reading is.
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

    /// The duration in seconds with a fraction: for a file format that stores seconds as a
    /// JSON number.
    public var fractionalSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// The duration `fractionalSeconds` names, to the nanosecond: whole seconds stay exact
    /// (`Duration.seconds(Double)` multiplies into attoseconds, which a `Double` cannot
    /// always hold, so a stored time would come back a hair off). Nil for a number no
    /// duration is (infinite, not a number, beyond Int64 seconds): read from a file, it is damage.
    public init?(fractionalSeconds: Double) {
        let whole = fractionalSeconds.rounded(.down)
        guard whole.isFinite, let seconds = Int64(exactly: whole) else { return nil }
        self = .seconds(seconds) + .nanoseconds(Int64(((fractionalSeconds - whole) * 1e9).rounded()))
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
