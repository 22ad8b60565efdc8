import Foundation
import Glibc
import ProtfsSystem

/// What protfs remembers about a vault beside its device key, never in the backing
/// directory: the keybag generation (so an older keybag copied back is refused) and the
/// wrong-passcode counter (so restarting the daemon does not reset the delays).
/// `DIR(device key)/vaults/<vault id hex>.state`, mode 0600, JSON, replaced atomically.
public struct VaultState: Sendable, Equatable {
    public static let directoryName = "vaults"

    public let path: String
    public private(set) var generation: UInt64 = 0
    public private(set) var failedAttempts = 0
    /// UNIX time of the last wrong passcode (with a fraction), 0 when none.
    public private(set) var lastFailure: Double = 0

    private struct Record: Codable {
        var generation: UInt64
        var failedAttempts: Int
        var lastFailure: Double
    }

    /// The state of `vaultID` kept beside `deviceKey`; a fresh record when there is none
    /// yet (a new vault, or a device key moved to another machine).
    public static func load(beside deviceKey: DeviceKeyFile, vaultID: ObjectID) throws(VaultError) -> VaultState {
        var state = VaultState(path: "\(deviceKey.directory)/\(directoryName)/\(vaultID).state")
        let fd: FileDescriptor
        do {
            fd = try FileDescriptor.open(path: state.path, [.readOnly, .nonBlocking])
        } catch .noEntry {
            return state
        } catch {
            throw .system(operation: "open vault state", path: state.path, errno: error)
        }
        defer { fd.close() }
        let bytes: [UInt8]
        do throws(Errno) {
            guard try fd.status().isRegularFile else { throw Errno.invalid }
            bytes = try fd.readAll(limit: 4096)
        } catch {
            throw .system(operation: "read vault state", path: state.path, errno: error)
        }
        guard let record = try? JSONDecoder().decode(Record.self, from: Data(bytes)), record.failedAttempts >= 0 else {
            throw .stateDamaged(path: state.path)
        }
        state.generation = record.generation
        state.failedAttempts = record.failedAttempts
        state.lastFailure = record.lastFailure
        return state
    }

    private init(path: String) { self.path = path }

    /// Records the generation of a keybag this process has just written.
    public mutating func record(generation: UInt64) throws(VaultError) {
        self.generation = generation
        try save()
    }

    // MARK: wrong passcodes

    /// Seconds until the next passcode attempt is accepted, rounded up; nil when now.
    public func retryAfterSeconds(now: Double = Self.now()) -> Int? {
        let delay = RateLimiter.delay(afterFailures: failedAttempts)
        guard delay > 0 else { return nil }
        // A clock set back must not stretch the delay beyond its length.
        let elapsed = max(0, now - lastFailure)
        guard elapsed < delay else { return nil }
        return max(1, Int((delay - elapsed).rounded(.up)))
    }

    /// Called before Argon2id runs: refuses during a delay (the refused attempt does not
    /// count), else counts the attempt as a failure and syncs it, so killing the process
    /// during the hash cannot skip the count. `recordSuccess` undoes it.
    public mutating func beginPasscodeAttempt(now: Double = Self.now()) throws(VaultError) {
        if let seconds = retryAfterSeconds(now: now) { throw .rateLimited(retryAfterSeconds: seconds) }
        failedAttempts += 1
        lastFailure = now
        try save()
    }

    public mutating func recordSuccess() throws(VaultError) {
        guard failedAttempts != 0 || lastFailure != 0 else { return }
        failedAttempts = 0
        lastFailure = 0
        try save()
    }

    public static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: persistence

    /// Atomic replace: temporary file, fsync, rename, fsync the directory.
    private func save() throws(VaultError) {
        let split = PathSplit(path)
        try DeviceKeyFile.makeDirectories(split.directory)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let record = Record(generation: generation, failedAttempts: failedAttempts, lastFailure: lastFailure)
        guard let json = try? encoder.encode(record) else { throw .stateDamaged(path: path) }
        do {
            let dir = try FileDescriptor.open(path: split.directory, [.readOnly, .directory])
            defer { dir.close() }
            try dir.writeFileAtomically(split.name, contents: Array(json) + [0x0A], syncDirectory: true)
        } catch {
            throw .system(operation: "write vault state", path: path, errno: error)
        }
    }
}
