import Foundation
import Glibc
import Testing

/// Where a passcode may come from besides a file (docs/OPERATIONS.md): a command's output,
/// the system's password agents through `systemd-ask-password`, a systemd credential. Never
/// argv or the environment.
@Suite("passcode sources", .serialized)
struct PasscodeSourceTests {
    private static func state(_ vault: TestVault) -> String? {
        let result = vault.protfsctl(["status", "--json", vault.mountpoint])
        let object = try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        return object?["state"] as? String
    }

    private static func canonical(_ path: String) -> String { URL(fileURLWithPath: path).resolvingSymlinksInPath().path }

    @Test("passcode_command: its output unlocks at mount and in protfsctl unlock; the passcode is in neither its argv nor its environment")
    func passcodeCommand() throws {
        let vault = try TestVault()
        let record = vault.root.path + "/record"
        let command = "\(CommandRunner.scriptPath("commands/passcode-command.sh")) \(record) \(vault.passcodeFile)"
        try vault.mount(passcode: false, options: ["passcode_command=\(command)"])
        defer { try? vault.unmount() }
        #expect(Self.state(vault) == "unlocked", "\(vault.daemonOutput)")
        var seen = try String(contentsOfFile: record, encoding: .utf8)
        #expect(seen.contains(vault.passcodeFile) && !seen.contains(TestVault.passcode), "\(seen)")

        try vault.lock(now: true)
        try FileManager.default.removeItem(atPath: record)
        let unlock = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-command", command])
        #expect(unlock.succeeded, "\(unlock.stderr)")
        #expect(Self.state(vault) == "unlocked")
        seen = try String(contentsOfFile: record, encoding: .utf8)
        #expect(!seen.contains(TestVault.passcode), "\(seen)")
    }

    @Test("a passcode command that fails, is missing or says nothing: a clear error, exit 1, nothing unlocked")
    func failingPasscodeCommand() throws {
        let vault = try TestVault()
        try vault.mount(passcode: false)
        defer { try? vault.unmount() }
        let cases = [("/bin/false", "'/bin/false' exited with 1"),
                     ("/nonexistent/askpass", "'/nonexistent/askpass' cannot be started"),
                     ("/bin/true", "the input ended before a line was read")]
        for (command, message) in cases {
            let result = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-command", command])
            #expect(result.status == 1, "\(command): \(result.stderr)")
            #expect(result.stderr.contains(message), "\(command): \(result.stderr)")
        }
        #expect(Self.state(vault) == "beforeFirstUnlock")
        let both = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-command", "/bin/true", "--passcode-file", vault.passcodeFile])
        #expect(both.status == 2)

        let other = try TestVault()
        #expect(throws: TestFailure.self) { try other.mount(passcode: false, options: ["passcode_command=/bin/false"]) }
        defer { try? other.unmount() }
        #expect(other.daemonOutput.contains("the passcode command '/bin/false' exited with 1; no passcode was read"),
                "\(other.daemonOutput)")
    }

    /// An agent the test serves answers the question `systemd-ask-password` asks in
    /// /run/systemd/ask-password (no systemd needed as PID 1).
    private static func agent(answering id: String, with passcodeFile: String) throws -> Process {
        let agent = Process()
        let watching = passcodeFile + ".agent-watching"
        try? FileManager.default.removeItem(atPath: watching)
        agent.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        agent.arguments = [CommandRunner.scriptPath("commands/password-agent.py"), id, passcodeFile, "30", watching]
        agent.standardOutput = Pipe()
        try agent.run()
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: watching) && agent.isRunning && Date() < deadline { usleep(20_000) }
        guard FileManager.default.fileExists(atPath: watching) else { throw TestFailure("the password agent never watched") }
        return agent
    }

    private static func finish(_ agent: Process) -> String {
        let deadline = Date().addingTimeInterval(30)
        while agent.isRunning && Date() < deadline { usleep(20_000) }
        if agent.isRunning { agent.terminate() }
        agent.waitUntilExit()
        let output = (agent.standardOutput as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data()
        return String(decoding: output, as: UTF8.self)
    }

    @Test("no terminal and no input: systemd-ask-password asks the password agents, for ask_passcode and unlock")
    func passwordAgents() throws {
        let vault = try TestVault()
        let id = "protfs:" + Self.canonical(vault.mountpoint)
        var agent = try Self.agent(answering: id, with: vault.passcodeFile)
        try vault.mount(passcode: false, options: ["ask_passcode"])  // its standard input is /dev/null
        defer { try? vault.unmount() }
        var message = Self.finish(agent)
        #expect(agent.terminationStatus == 0, "\(vault.daemonOutput)")
        #expect(message.contains(Self.canonical(vault.mountpoint)), "\(message)")
        #expect(Self.state(vault) == "unlocked", "\(vault.daemonOutput)")

        try vault.lock(now: true)
        agent = try Self.agent(answering: id, with: vault.passcodeFile)
        let unlock = CommandRunner.run("/bin/sh", ["-c", "exec \"$0\" unlock \"$1\" < /dev/null", TestVault.protfsctl, vault.mountpoint])
        message = Self.finish(agent)
        #expect(unlock.succeeded, "\(unlock.stderr)")
        #expect(message.hasPrefix("Passcode"), "\(message)")
        #expect(Self.state(vault) == "unlocked")
    }

    @Test("no terminal, no input and no password agent: unlock fails at once, saying so")
    func noSourceAtAll() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try vault.lock(now: true)
        // systemd-ask-password with no agent waits 90 s: well past this command's 30.
        let unlock = CommandRunner.run("/bin/sh", ["-c", "exec \"$0\" unlock \"$1\" < /dev/null", TestVault.protfsctl, vault.mountpoint],
                                       timeout: 30)
        #expect(unlock.status == 1, "\(unlock.status): \(unlock.stderr)")
        #expect(unlock.stderr.contains("no password agent is running"), "\(unlock.stderr)")
        #expect(!unlock.stderr.contains("passcode command"), "\(unlock.stderr)")
        #expect(Self.state(vault) == "locked")
    }

    @Test("$CREDENTIALS_DIRECTORY/protfs-passcode unlocks at mount and in protfsctl unlock")
    func systemdCredential() throws {
        let vault = try TestVault()
        let credentials = vault.root.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: vault.passcodeFile, toPath: credentials + "/protfs-passcode")
        vault.daemonEnvironment["CREDENTIALS_DIRECTORY"] = credentials
        try vault.mount(passcode: false)
        defer { try? vault.unmount() }
        #expect(Self.state(vault) == "unlocked", "\(vault.daemonOutput)")

        try vault.lock(now: true)
        let unlock = CommandRunner.run(TestVault.protfsctl, ["unlock", vault.mountpoint], stdin: "not the passcode\n",
                                       environment: ["CREDENTIALS_DIRECTORY": credentials])
        #expect(unlock.succeeded, "\(unlock.stderr)")
        #expect(Self.state(vault) == "unlocked")
    }
}
