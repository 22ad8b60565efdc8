import Glibc
import ProtfsCrypto
import ProtfsDomain

/// Asks the user for the vault's passcode through the machine's own agent, for an `Unlock`
/// prompt (docs/SECRETS.md): a configured askpass program (run as `PROGRAM TEXT`, the
/// passcode on its standard output), else `systemd-ask-password --no-tty` (its agents: the
/// desktop's, a console's). Spawned, never forked; the passcode goes from the pipe into locked
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
        guard let argv else { return nil }
        var ends: [Int32] = [0, 0]
        // Both ends close on exec (Glibc hides pipe2): only the dup2 copy reaches the program.
        guard pipe(&ends) == 0 else { return nil }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        defer { Glibc.close(ends[0]) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], 1)
        var pid: pid_t = 0
        let arguments = argv.map { strdup($0) } + [nil]
        defer { arguments.forEach { free($0) } }
        let spawned = posix_spawn(&pid, argv[0], &actions, nil, arguments, environ)
        Glibc.close(ends[1])
        guard spawned == 0 else { return nil }
        let passcode = read(from: ends[0], until: ContinuousClock.now + timeout)
        if passcode == nil { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard let passcode else { return nil }
        // WIFEXITED && WEXITSTATUS == 0, spelled out: the macros do not import.
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0, passcode.count > 0 else {
            passcode.wipe()
            return nil
        }
        return passcode
    }

    /// Everything the program writes, up to the passcode limit, before `deadline`; nil on
    /// timeout or overflow.
    private func read(from descriptor: Int32, until deadline: ContinuousClock.Instant) -> SecureBuffer? {
        let limit = PasscodeLimits.maximumByteCount + 1
        let staging = SecureBuffer(count: limit + 1)
        defer { staging.wipe() }
        var total = 0
        while true {
            let left = ContinuousClock.now.duration(to: deadline)
            guard left > .zero else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(min(left / .milliseconds(1), 60_000).rounded(.up))
            let ready = poll(&poller, 1, milliseconds)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { return nil }
            if ready == 0 { continue }
            let n = staging.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + total, limit + 1 - total) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { return nil }
            if n == 0 { break }
            total += n
            guard total <= limit else { return nil }
        }
        let end = staging.withUnsafeBytes { bytes in total > 0 && bytes[total - 1] == 0x0A ? total - 1 : total }
        return staging.prefix(end)
    }
}
