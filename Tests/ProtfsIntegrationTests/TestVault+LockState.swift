import Foundation

/// The lock states as `protfsctl status --json` spells them (docs/CLASSES.md).
enum MountState: String, CaseIterable, Sendable {
    case beforeFirstUnlock
    case unlocked
    case locking
    case locked
}

/// Driving a mounted TestVault's lock state through `protfsctl`, as a user would.
extension TestVault {
    @discardableResult
    func protfsctl(_ arguments: [String], stdin: String? = nil, timeout: TimeInterval = 30) -> CommandResult {
        CommandRunner.run(Self.protfsctl, arguments, stdin: stdin, timeout: timeout)
    }

    /// The backing path (relative to the backing directory) of each mount path, by
    /// `protfsctl backing-path` on the live mount.
    func backingPaths(of relatives: [String]) throws -> [String] {
        try relatives.map { relative in
            let result = protfsctl(["backing-path", path(relative)])
            guard result.succeeded else { throw TestFailure("backing-path \(relative): \(result.stderr)") }
            return result.stdout.trimmingCharacters(in: .newlines)
        }
    }

    /// The `state` field of `protfsctl status --json`.
    func state() throws -> MountState {
        let result = protfsctl(["status", mountpoint, "--json"])
        guard result.succeeded,
              let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
              let spelled = object["state"] as? String, let state = MountState(rawValue: spelled)
        else {
            throw TestFailure("protfsctl status --json gave no state (exit \(result.status)): \(result.stdout)\(result.stderr)")
        }
        return state
    }

    /// Polls the state until it is `expected`; the deadline is generous, never a timing claim.
    func waitForState(_ expected: MountState, within seconds: TimeInterval = 15) throws {
        let deadline = Date().addingTimeInterval(seconds)
        var last = try state()
        while last != expected && Date() < deadline {
            usleep(100_000)
            last = try state()
        }
        guard last == expected else { throw TestFailure("state is still \(last.rawValue) after \(seconds) s, expected \(expected.rawValue)") }
    }

    /// `protfsctl lock [--now] MOUNTPOINT`, then checks the state it promises on return:
    /// `locking` (or `locked` when the grace is 0), `locked` with `--now`.
    func lock(now: Bool = false) throws {
        let result = protfsctl(["lock"] + (now ? ["--now"] : []) + [mountpoint])
        guard result.succeeded else { throw TestFailure("protfsctl lock failed (\(result.status)): \(result.stderr)") }
        let state = try state()
        let promised: Set<MountState> = now ? [.locked] : [.locking, .locked]
        guard promised.contains(state) else { throw TestFailure("protfsctl lock returned in state \(state.rawValue)") }
    }

    func unlock() throws {
        let result = protfsctl(["unlock", mountpoint, "--passcode-file", passcodeFile])
        guard result.succeeded else { throw TestFailure("protfsctl unlock failed (\(result.status)): \(result.stderr)") }
        let state = try state()
        guard state == .unlocked else { throw TestFailure("protfsctl unlock returned in state \(state.rawValue)") }
    }

    /// Mounts and brings the vault into `state`: the passcode at mount for `unlocked`, none for
    /// `beforeFirstUnlock`, then `protfsctl lock` (by default with a grace far longer than any
    /// test) or `lock --now`. `prepare` runs while unlocked, before the lock or the remount.
    func mount(in state: MountState, grace: Int = 600, options: [String] = [], prepare: () throws -> Void = {}) throws {
        let all = options + ["grace=\(grace)"]
        try mount(passcode: true, options: all)
        try prepare()
        switch state {
        case .unlocked: break
        case .beforeFirstUnlock:
            try unmount()
            try mount(passcode: false, options: all)
        case .locking: try lock()
        case .locked: try lock(now: true)
        }
    }
}
