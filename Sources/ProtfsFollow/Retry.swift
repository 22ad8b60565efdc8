import ProtfsSystem

/// When to try again to reach something that failed (a bus, logind), and what to say: the
/// first failure of a series and the recovery are logged, the attempts between are not.
struct Retry {
    private var backoff = Backoff()
    /// Monotonic nanoseconds of the next attempt.
    private(set) var due: UInt64 = 0
    private var failing = false

    func isDue(_ now: UInt64) -> Bool { now >= due }

    mutating func failed(_ log: (String) -> Void, _ why: String) {
        let wait = backoff.failed()
        if !failing { log("\(why); trying again with a backoff of up to \(backoff.longest.components.seconds) s") }
        failing = true
        due = MonotonicClock.nanoseconds(after: wait)
    }

    mutating func succeeded(_ log: (String) -> Void, _ what: String) {
        backoff.succeeded()
        if failing { log("\(what) again") } else { log(what) }
        failing = false
        due = 0
    }
}
