import ProtfsSystem

/// logind's delay inhibitor for sleep: the descriptor `Inhibit` returned. Sleep waits until
/// it is closed (or logind's `InhibitDelayMaxSec` passes).
struct SleepInhibitor: ~Copyable {
    private var held: OwnedDescriptor?

    var isHeld: Bool { held != nil }

    /// Takes one unless one is held.
    mutating func take(on bus: Bus, for mountpoint: String) throws(BusFailure) {
        guard !isHeld else { return }
        held = try Logind.inhibitSleep(on: bus, why: "lock the protfs vault \(mountpoint) before sleep")
    }

    /// Closes it; whether one was held.
    @discardableResult
    mutating func release() -> Bool {
        guard isHeld else { return false }
        held = nil
        return true
    }
}
