import Glibc

/// docs/CONTROL.md's delays after wrong passcodes: failures 1-4 none; the 5th 60 s; the 6th
/// 5 min; the 7th and 8th 15 min; the 9th and later 60 min. A schedule, with no state: the
/// count and the time of the last failure are the vault's (`VaultState`).
public enum WrongPasscodeDelays {
    public static let firstDelayedFailure = 5

    /// The test hook: `PROTFS_TEST_DELAY_SCALE` multiplies every delay by a factor in
    /// (0, 1] so integration tests can watch a delay run out and survive a restart without
    /// waiting minutes. It is read only when set, can only shorten delays, and anything
    /// that is not a number in that range is ignored. Release behaviour never depends on it
    /// otherwise. (Whoever can set a daemon's environment can already read its device key
    /// and guess offline, so this adds nothing for an attacker.)
    public static let testScaleVariable = "PROTFS_TEST_DELAY_SCALE"

    /// The delay that follows `failures` consecutive wrong passcodes, unscaled.
    public static func nominalDelay(afterFailures failures: Int) -> Duration {
        switch failures {
        case ..<firstDelayedFailure: .zero
        case 5: .seconds(60)
        case 6: .seconds(5 * 60)
        case 7, 8: .seconds(15 * 60)
        default: .seconds(60 * 60)
        }
    }

    /// The delay in force after `failures`, with the test scale applied.
    public static func delay(afterFailures failures: Int) -> Duration {
        nominalDelay(afterFailures: failures) * scale
    }

    static let scale: Double = {
        guard let raw = getenv(testScaleVariable), let value = Double(String(cString: raw)),
              value > 0, value <= 1 else { return 1 }
        return value
    }()
}
