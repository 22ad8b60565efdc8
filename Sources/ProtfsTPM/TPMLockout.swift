/// The TPM's dictionary-attack state (TPM2_GetCapability, `TPM_PT_LOCKOUT_*`): failures
/// counted, the limit, and how long the TPM takes to forget one.
public struct TPMLockout: Sendable, Equatable {
    public let failures: UInt32
    public let limit: UInt32
    /// Every interval the TPM forgets one failure; with a limit reached, the next attempt is
    /// accepted at most one interval from now.
    public let interval: Duration

    public init(failures: UInt32, limit: UInt32, interval: Duration) {
        self.failures = failures
        self.limit = limit
        self.interval = interval
    }

    public var isLockedOut: Bool { limit == 0 || failures >= limit }

    /// Seconds until the TPM accepts an attempt again, an upper bound (the TPM does not say
    /// when in its interval it is); nil when it would now.
    public var retryAfterSeconds: Int? {
        guard isLockedOut else { return nil }
        return max(1, Int(interval.components.seconds))
    }

    public var nextAttemptDescription: String {
        guard let seconds = retryAfterSeconds else {
            return "\(limit - failures) more wrong passcode\(limit - failures == 1 ? "" : "s") before the TPM locks out"
        }
        return "the next attempt can be made in at most \(seconds) s"
    }
}
