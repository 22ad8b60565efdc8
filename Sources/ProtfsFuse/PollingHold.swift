/// When `RequestLoop` asks the kernel to keep idle CPUs polling (`CPULatencyRequest`): the
/// pure decisions.
///
/// A program working through the mount (tar, a build, `cp -r`) sleeps in the kernel until
/// each answer comes, and its CPU, idle meanwhile, halts. Waking it again costs a request
/// an interrupt and, in a virtual machine, an exit to the hypervisor: as much as the
/// daemon's own work for a small request. So once requests come back to back
/// (`streakToHold` in a row, each within `burstGap` of the one before), idle CPUs are asked
/// to poll, until the reader has slept `RequestLoop.linger` without a request. The cost is
/// CPU time: idle CPUs spin while a stream lasts, and a little after. Requests now and then
/// (an `ls`, a `cat`) never hold it.
struct PollingHold {
    enum Change: Equatable {
        case hold, release
    }

    /// Requests in a row, each within `burstGap` of the one before, before the hold.
    let streakToHold: Int
    /// The longest time between two requests of one stream. The time a
    /// program takes between an answer and its next request, when its CPU halted meanwhile,
    /// varies, often past the reader's polling (`RequestLoop.spinFor`).
    let burstGap: Duration
    private(set) var streak = 0
    private(set) var holding = false
    private var lastRequest: UInt64?

    init(streakToHold: Int, burstGap: Duration) {
        self.streakToHold = streakToHold
        self.burstGap = burstGap
    }

    /// A request was read at `now` (a `MonotonicClock` reading).
    mutating func requestRead(at now: UInt64) -> Change? {
        if let lastRequest, now - lastRequest <= burstGap.wholeNanoseconds {
            streak += 1
        } else {
            streak = 1
        }
        lastRequest = now
        guard !holding, streak >= streakToHold else { return nil }
        holding = true
        return .hold
    }

    /// The reader has slept its linger time without a request.
    mutating func lingered() -> Change? {
        streak = 0
        guard holding else { return nil }
        holding = false
        return .release
    }
}
