import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// Asks the user for the vault's passcode through the machine's own agent, for an `Unlock`
/// prompt (docs/SECRETS.md): a configured askpass program (run as `PROGRAM TEXT`, the
/// passcode on its standard output), else `systemd-ask-password --no-tty` (its agents: the
/// desktop's, a console's). Spawned, never forked, with no input and none of this process's
/// descriptors (`ChildProcess`); the passcode goes from the pipe into locked
/// memory. Bounded: after `timeout` the program is killed and the prompt is dismissed, so a
/// machine without an agent never holds a client for ever.
struct PasscodeAgent: Sendable {
    static let text = "Passcode of the protfs keychain vault:"
    static let systemAgent = "/usr/bin/systemd-ask-password"

    let program: String?
    let timeout: Duration

    /// The argument vector, or nil when there is no agent to ask.
    var argv: [String]? {
        if let program { return [program, Self.text] }
        guard access(Self.systemAgent, X_OK) == 0 else { return nil }
        let seconds = max(1, Int(timeout.components.seconds))
        return [Self.systemAgent, "--no-tty", "--timeout=\(seconds)", "--id=protfs-secret-service", Self.text]
    }

    /// The passcode (without its final newline), or nil: no agent, cancelled, timed out, empty.
    func ask() -> SecureBuffer? {
        guard let argv, let child = try? ChildProcess.spawnReadingOutput(argv, standardInput: .null) else { return nil }
        let passcode = read(from: child.output.borrowed, until: ContinuousClock.now + timeout)
        if passcode == nil { child.process.kill() }
        let termination = child.process.wait()
        guard let passcode else { return nil }
        guard termination == .exited(0), passcode.count > 0 else {
            passcode.wipe()
            return nil
        }
        return passcode
    }

    /// Everything the program writes, up to the passcode limit, before `deadline`; nil on
    /// timeout or overflow.
    private func read(from output: FileDescriptor, until deadline: ContinuousClock.Instant) -> SecureBuffer? {
        let limit = PasscodeLimits.maximumByteCount + 1
        let staging = SecureBuffer(count: limit + 1)
        defer { staging.wipe() }
        let read = staging.withUnsafeMutableBytes { buffer in try? output.read(filling: buffer, until: deadline) }
        guard let total = read ?? nil, total <= limit else { return nil }
        let end = staging.withUnsafeBytes { bytes in total > 0 && bytes[total - 1] == 0x0A ? total - 1 : total }
        return staging.prefix(end)
    }
}
