/// The wait before the next attempt to reach a bus or logind that went away: doubling from
/// `first` up to `longest`, and back to `first` once one succeeds, so a restart is noticed
/// quickly and a bus that stays away costs almost nothing.
struct Backoff {
    let first: Duration
    let longest: Duration
    private(set) var next: Duration

    init(first: Duration = .milliseconds(100), longest: Duration = .seconds(10)) {
        self.first = first
        self.longest = longest
        next = first
    }

    /// The wait before this attempt; the one after waits twice as long (at most `longest`).
    mutating func failed() -> Duration {
        defer { next = min(next * 2, longest) }
        return next
    }

    mutating func succeeded() { next = first }
}
