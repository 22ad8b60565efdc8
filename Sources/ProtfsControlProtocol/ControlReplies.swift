import ProtfsDomain
import ProtfsSystem

/// `protfsctl status --json`: docs/CONTROL.md's fields and the caller's item count.
public struct StatusReport: Sendable, Codable, Equatable {
    public var state: LockState
    public var graceSecondsLeft: Int?
    /// The daemon's pid and the backing directory: for the owner and root only (nil for
    /// anyone else: where the ciphertext lives and which process holds the keys are the
    /// owner's business).
    public var pid: Int32?
    public var mountpoint: String
    public var backing: String?
    /// The uid that may lock, unlock and change the passcode besides root (`-o owner=`),
    /// filled in by the control server, which decides who may do what.
    public var owner: UInt32?
    public var passcodeSet: Bool
    /// How long files of class `complete` stay readable after a lock (`-o grace=`).
    public var grace: Duration
    /// How long without requests before the vault locks itself; zero: never (`-o autolock=`).
    public var autolock: Duration
    public var failedAttempts: Int
    public var retryAfterSeconds: Int?
    /// Whether the TPM counts this vault's wrong passcodes (nil from an older daemon).
    public var passcodeCountedByTPM: Bool?
    /// Seconds until the TPM, in dictionary-attack lockout, accepts a passcode again (an upper
    /// bound); nil when it would now, or when no TPM counts.
    public var tpmLockoutRetryAfterSeconds: Int?
    /// The caller's keychain items (docs/CONTROL.md); nil when the store could not be read.
    public var items: Int?
    /// Whether the caller may lock, unlock and change the passcode: the control server fills
    /// it in (it checks the peer); nil from an older daemon.
    public var callerMayLock: Bool?
    /// The AEAD the vault seals file contents with (`aes-256-gcm`, `xchacha20-poly1305`);
    /// nil from an older daemon.
    public var cipher: String?
    /// How many control requests the daemon has read since it started (this one included):
    /// for the owner and root only, who count what a client costs; nil for anyone else and
    /// from an older daemon.
    public var requestsServed: Int?

    public init(state: LockState, graceSecondsLeft: Int?, pid: Int32?, mountpoint: String, backing: String?,
                passcodeSet: Bool, grace: Duration, autolock: Duration, failedAttempts: Int, retryAfterSeconds: Int?, items: Int? = nil,
                cipher: String? = nil,
                passcodeCountedByTPM: Bool? = nil, tpmLockoutRetryAfterSeconds: Int? = nil) {
        self.state = state
        self.graceSecondsLeft = graceSecondsLeft
        self.pid = pid
        self.mountpoint = mountpoint
        self.backing = backing
        self.passcodeSet = passcodeSet
        self.grace = grace
        self.autolock = autolock
        self.failedAttempts = failedAttempts
        self.retryAfterSeconds = retryAfterSeconds
        self.items = items
        self.cipher = cipher
        self.passcodeCountedByTPM = passcodeCountedByTPM
        self.tpmLockoutRetryAfterSeconds = tpmLockoutRetryAfterSeconds
    }
}

extension StatusReport {
    private enum CodingKeys: String, CodingKey {
        case state, graceSecondsLeft, pid, mountpoint, backing, passcodeSet, grace, autolock, failedAttempts, retryAfterSeconds
        case items, owner, callerMayLock, cipher, passcodeCountedByTPM, tpmLockoutRetryAfterSeconds, requestsServed
    }

    /// `grace` and `autolock` go as whole seconds under their old names (docs/CONTROL.md says
    /// why): the daemon and clients of every release read the same object.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        state = try container.decode(LockState.self, forKey: .state)
        graceSecondsLeft = try container.decodeIfPresent(Int.self, forKey: .graceSecondsLeft)
        pid = try container.decodeIfPresent(Int32.self, forKey: .pid)
        mountpoint = try container.decode(String.self, forKey: .mountpoint)
        backing = try container.decodeIfPresent(String.self, forKey: .backing)
        passcodeSet = try container.decode(Bool.self, forKey: .passcodeSet)
        grace = .seconds(try container.decode(Int.self, forKey: .grace))
        autolock = .seconds(try container.decode(Int.self, forKey: .autolock))
        failedAttempts = try container.decode(Int.self, forKey: .failedAttempts)
        retryAfterSeconds = try container.decodeIfPresent(Int.self, forKey: .retryAfterSeconds)
        items = try container.decodeIfPresent(Int.self, forKey: .items)
        owner = try container.decodeIfPresent(UInt32.self, forKey: .owner)
        callerMayLock = try container.decodeIfPresent(Bool.self, forKey: .callerMayLock)
        cipher = try container.decodeIfPresent(String.self, forKey: .cipher)
        passcodeCountedByTPM = try container.decodeIfPresent(Bool.self, forKey: .passcodeCountedByTPM)
        tpmLockoutRetryAfterSeconds = try container.decodeIfPresent(Int.self, forKey: .tpmLockoutRetryAfterSeconds)
        requestsServed = try container.decodeIfPresent(Int.self, forKey: .requestsServed)
    }

    /// Every key, with `null` for a value that does not apply now, so that `status --json`
    /// always has the same shape.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(graceSecondsLeft, forKey: .graceSecondsLeft)
        try container.encode(pid, forKey: .pid)
        try container.encode(mountpoint, forKey: .mountpoint)
        try container.encode(backing, forKey: .backing)
        try container.encode(passcodeSet, forKey: .passcodeSet)
        try container.encode(grace.secondsRoundedUp, forKey: .grace)
        try container.encode(autolock.secondsRoundedUp, forKey: .autolock)
        try container.encode(failedAttempts, forKey: .failedAttempts)
        try container.encode(retryAfterSeconds, forKey: .retryAfterSeconds)
        try container.encode(items, forKey: .items)
        try container.encode(owner, forKey: .owner)
        try container.encode(callerMayLock, forKey: .callerMayLock)
        try container.encode(cipher, forKey: .cipher)
        try container.encode(passcodeCountedByTPM, forKey: .passcodeCountedByTPM)
        try container.encode(tpmLockoutRetryAfterSeconds, forKey: .tpmLockoutRetryAfterSeconds)
        try container.encode(requestsServed, forKey: .requestsServed)
    }
}

/// A refusal to send back to `protfsctl`: its message and the exit code it should use.
public struct ControlFailure: Error, Sendable, Equatable {
    public let exitCode: ExitCode
    public let message: String

    public init(_ exitCode: ExitCode, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }
}

extension ControlFailure: CommandError {
    public var description: String { message }
}
