import FoundationEssentials
import Glibc
import ProtfsDomain
import ProtfsFormat
import ProtfsSystem

/// What protfs remembers about a vault beside its device key, never in the backing
/// directory: the keybag generation (so an older keybag copied back is refused) and the
/// wrong-passcode counter (so restarting the daemon does not reset the delays).
/// `DIR(device key)/vaults/<vault id hex>.state`, mode 0600, JSON, replaced atomically.
///
/// Every change is a read-modify-write of the file under an exclusive `flock` of
/// `<vault id hex>.lock` beside it, so that every process of the vault (two daemons of
/// copies of one backing directory, a `protfs fsck`) counts on the same counter.
///
/// The file is the counter's only witness, so a missing one is not a fresh start: once a
/// vault exists (its keybag is there), passcode attempts are refused until the file is
/// restored, or deliberately re-created (`protfs fsck --repair`, which needs the device key:
/// whoever can run it could guess offline anyway) with the counter at the last free attempt.
public struct VaultState: Sendable, Equatable {
    public static let directoryName = "vaults"

    public let path: String
    public private(set) var generation: UInt64 = 0
    public private(set) var failedAttempts = 0
    /// When the last wrong passcode was counted; nil when none.
    public private(set) var lastFailure: AttemptClock?
    /// No file at `path` (deleted, or never written): passcode attempts are refused.
    public private(set) var isMissing = false

    private struct Record: Codable {
        var generation: UInt64
        var failedAttempts: Int
        /// UNIX time of the last wrong passcode (with a fraction), 0 when none.
        var lastFailure: Double
        /// The boot clock at the last wrong passcode, and that boot's id.
        var lastFailureSinceBoot: Double?
        var bootID: String?
    }

    /// The state of `vaultID` kept beside `deviceKey`; `isMissing` when there is none (a
    /// new vault, a deleted file, or a device key moved to another machine without it).
    public static func load(beside deviceKey: DeviceKeyFile, vaultID: ObjectID) throws(VaultError) -> VaultState {
        var state = VaultState(path: "\(deviceKey.directory)/\(directoryName)/\(vaultID).state")
        try state.reload()
        return state
    }

    /// The wrong-passphrase record of a backup archive (docs/BACKUP.md), kept like a vault's
    /// beside the device key: `DIR(device key)/backups/<archive id hex>.state`. A new archive
    /// starts a record at zero (only `generation` 0 and the counter are used).
    public static func load(beside deviceKey: DeviceKeyFile, archiveID: ObjectID) throws(VaultError) -> VaultState {
        var state = VaultState(path: "\(deviceKey.directory)/backups/\(archiveID).state")
        try state.reload()
        if state.isMissing { try state.record(generation: 0) }
        return state
    }

    private init(path: String) { self.path = path }

    /// Records the generation of a keybag this process has just written (creating the file
    /// for a new vault).
    public mutating func record(generation: UInt64) throws(VaultError) {
        try underLock { (state) throws(VaultError) in
            state.generation = max(state.generation, generation)
            try state.save()
        }
    }

    /// `fsck --repair` of a missing file: a new one for a keybag of `generation`, with the
    /// counter at the last attempt before the delays (the next wrong passcode starts one), not
    /// at zero. False when the file exists (restored meanwhile): nothing changed.
    public mutating func recreate(generation: UInt64) throws(VaultError) -> Bool {
        try underLock { (state) throws(VaultError) in
            guard state.isMissing else { return false }
            state.generation = generation
            state.failedAttempts = WrongPasscodeDelays.firstDelayedFailure - 1
            state.lastFailure = nil
            try state.save()
            return true
        }
    }

    /// This state as its file holds it now; this one when the file cannot be read.
    public func refreshed() -> VaultState {
        var current = self
        do { try current.reload() } catch { return self }
        return current
    }

    // MARK: wrong passcodes

    /// Seconds until the next passcode attempt is accepted, rounded up; nil when now.
    public func retryAfterSeconds(now: AttemptClock = .now()) -> Int? {
        let delay = WrongPasscodeDelays.delay(afterFailures: failedAttempts)
        guard delay > .zero, let lastFailure else { return nil }
        let elapsed = now.elapsed(since: lastFailure)
        guard elapsed < delay else { return nil }
        return max(1, (delay - elapsed).secondsRoundedUp)
    }

    /// Called before Argon2id runs: refuses during a delay (the refused attempt does not
    /// count) and while the file is missing, else counts the attempt as a failure and syncs
    /// it, so killing the process during the hash cannot skip the count. `recordSuccess`
    /// undoes it.
    public mutating func beginPasscodeAttempt(now: AttemptClock = .now()) throws(VaultError) {
        try underLock { (state) throws(VaultError) in
            guard !state.isMissing else { throw .stateMissing(path: state.path) }
            if let seconds = state.retryAfterSeconds(now: now) { throw .rateLimited(retryAfterSeconds: seconds) }
            state.failedAttempts += 1
            state.lastFailure = now
            try state.save()
        }
    }

    public mutating func recordSuccess() throws(VaultError) {
        try underLock { (state) throws(VaultError) in
            guard !state.isMissing, state.failedAttempts != 0 || state.lastFailure != nil else { return }
            state.failedAttempts = 0
            state.lastFailure = nil
            try state.save()
        }
    }

    // MARK: persistence

    /// Runs `change` on the state as the file holds it now, under the vault's state lock.
    private mutating func underLock<T>(_ change: (inout VaultState) throws(VaultError) -> T) throws(VaultError) -> T {
        let split = PathSplit(path)
        try DeviceKeyFile.makeDirectories(split.directory)
        let lockPath = String(path.dropLast(".state".count)) + ".lock"
        // Its owner's end releases the flock.
        let lock: OwnedDescriptor
        do { lock = try OwnedDescriptor.open(path: lockPath, [.readWrite, .create], mode: 0o600) } catch {
            throw .system(operation: "open the vault state lock", path: lockPath, errno: error)
        }
        try Vault.lockExclusively(lock.borrowed, path: lockPath, timeout: Vault.lockTimeout)
        try reload()
        return try change(&self)
    }

    private mutating func reload() throws(VaultError) {
        let file: OwnedDescriptor
        do {
            file = try OwnedDescriptor.open(path: path, [.readOnly, .nonBlocking])
        } catch .noEntry {
            self = VaultState(path: path)
            isMissing = true
            return
        } catch {
            throw .system(operation: "open vault state", path: path, errno: error)
        }
        let bytes: [UInt8]
        do throws(Errno) {
            guard try file.borrowed.status().isRegularFile else { throw Errno.invalid }
            bytes = try file.borrowed.readAll(limit: 4096)
        } catch {
            throw .system(operation: "read vault state", path: path, errno: error)
        }
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)), record.failedAttempts >= 0,
              let wall = Duration(fractionalSeconds: record.lastFailure),
              let sinceBoot = Duration(fractionalSeconds: record.lastFailureSinceBoot ?? 0) else {
            throw .stateDamaged(path: path)
        }
        generation = record.generation
        failedAttempts = record.failedAttempts
        lastFailure = record.lastFailure == 0 ? nil : AttemptClock(wall: wall, sinceBoot: sinceBoot, bootID: record.bootID ?? "")
        isMissing = false
    }

    /// Atomic replace: temporary file, fsync, rename, fsync the directory.
    private mutating func save() throws(VaultError) {
        let split = PathSplit(path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let record = Record(generation: generation, failedAttempts: failedAttempts, lastFailure: lastFailure?.wall.fractionalSeconds ?? 0,
                            lastFailureSinceBoot: lastFailure?.sinceBoot.fractionalSeconds, bootID: lastFailure?.bootID)
        guard let json = try? encoder.encode(record) else { throw .stateDamaged(path: path) }
        do {
            try OwnedDescriptor.open(path: split.directory, [.readOnly, .directory]).closeAfter { (dir) throws(Errno) in
                try dir.writeFileAtomically(split.name, contents: Array(json) + [0x0A], syncDirectory: true)
            }
        } catch {
            throw .system(operation: "write vault state", path: path, errno: error)
        }
        isMissing = false
    }
}
