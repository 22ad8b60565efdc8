import ProtfsSystem

/// When to try again to reach something that failed (a bus, logind), and what to say: the
/// first failure of a series and the recovery are logged, the attempts between are not.
struct Retry {
    private var backoff = Backoff()
    /// When the next attempt is due; at once at first.
    private(set) var due = MonotonicInstant(nanosecondsSinceStart: 0)
    private var failing = false

    func isDue(_ now: MonotonicInstant) -> Bool { now >= due }

    mutating func failed(_ log: (String) -> Void, _ why: String) {
        let wait = backoff.failed()
        if !failing { log("\(why); trying again with a backoff of up to \(backoff.longest.components.seconds) s") }
        failing = true
        due = MonotonicInstant.now.advanced(by: wait)
    }

    mutating func succeeded(_ log: (String) -> Void, _ what: String) {
        backoff.succeeded()
        if failing { log("\(what) again") } else { log(what) }
        failing = false
        due = MonotonicInstant(nanosecondsSinceStart: 0)
    }
}
