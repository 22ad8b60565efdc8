import Foundation
import Glibc

/// A vault in a fresh temporary directory: backing directory, mount point, its own device
/// key and passcode file, and the daemon as a child process. Always unmounted in teardown.
final class TestVault {
    static let passcode = "correct horse battery staple"

    let root: URL
    // Plain strings, computed without Foundation's URL path appending, which stats the
    // result (a request to the daemon each time, which would hold off auto-lock).
    /// The backing directory: in the temporary directory unless a test put it elsewhere (on
    /// a filesystem of its own) before `initialize`.
    var backing: String
    var mountpoint: String { root.path + "/mnt" }
    var deviceKey: String { root.path + "/keys/device.key" }
    var passcodeFile: String { root.path + "/passcode" }
    var daemon: Process?
    /// Added to the daemon's environment at every mount (test hooks such as
    /// `PROTFS_TEST_DELAY_SCALE`).
    var daemonEnvironment: [String: String] = [:]
    private var daemonLog: URL { URL(fileURLWithPath: root.path + "/daemon.log", isDirectory: false) }

    /// `PROTFS_TEST_PROTFS` runs the tests against another build of the daemon (say one with
    /// ThreadSanitizer, see ConcurrencyTests).
    static var protfs: String {
        ProcessInfo.processInfo.environment["PROTFS_TEST_PROTFS"] ?? CommandRunner.builtExecutable("protfs")
    }
    static var protfsctl: String { CommandRunner.builtExecutable("protfsctl") }

    /// A vault under `directory` (the temporary directory unless a test needs another
    /// filesystem beneath it).
    init(protectionClass: String? = nil, initialize: Bool = true, in directory: String = NSTemporaryDirectory()) throws {
        root = URL(fileURLWithPath: directory, isDirectory: true)
            .appendingPathComponent("protfs-test-\(UUID().uuidString.prefix(8))", isDirectory: true)
        backing = root.path + "/backing"
        try FileManager.default.createDirectory(atPath: root.path + "/mnt", withIntermediateDirectories: true)
        try (Self.passcode + "\n").write(toFile: passcodeFile, atomically: true, encoding: .utf8)
        if initialize { try self.initialize(protectionClass: protectionClass) }
    }

    /// `protfs init` of the backing directory, with this vault's device key and passcode
    /// (and `--cipher` when a test names one).
    func initialize(protectionClass: String? = nil, cipher: String? = nil) throws {
        var arguments = ["init", backing, "--device-key", deviceKey, "--passcode-file", passcodeFile, "--kdf", "interactive"]
        if let protectionClass { arguments += ["--class", protectionClass] }
        if let cipher { arguments += ["--cipher", cipher] }
        let result = CommandRunner.run(Self.protfs, arguments)
        guard result.succeeded else { throw TestFailure("protfs init failed (\(result.status)): \(result.stderr)") }
    }

    /// Mounts in the foreground as a child process and waits until the kernel shows the mount.
    /// `launcher` runs the daemon through another program that execs it (setpriv, say);
    /// `asker`, when the daemon is another user's, runs the readiness check as that user
    /// (with `daemonEnvironment`, for its runtime directory).
    func mount(passcode: Bool = true, options: [String] = [], launcher: [String] = [], asker: [String] = []) throws {
        var all = ["device_key=\(deviceKey)"] + Self.transportOptions(besides: options) + options
        if passcode { all.append("passcode_file=\(passcodeFile)") }
        let process = Process()
        let command = launcher + [Self.protfs, "mount", backing, mountpoint, "-f", "-o", all.joined(separator: ",")]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(daemonEnvironment) { $1 }
        _ = FileManager.default.createFile(atPath: daemonLog.path, contents: nil)
        let log = try FileHandle(forWritingTo: daemonLog)
        process.standardOutput = log
        process.standardError = log
        process.standardInput = FileHandle.nullDevice
        try process.run()
        daemon = process
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            // The daemon's own control socket answering with its pid: a dead mount left at the
            // same place by an earlier daemon is listed in /proc/mounts too.
            if Self.isMounted(mountpoint) && servedByDaemon(process.processIdentifier, asker: asker) { return }
            if !process.isRunning {
                daemon = nil
                throw TestFailure("daemon exited with \(process.terminationStatus): \(daemonOutput)")
            }
            usleep(20_000)
        }
        try? unmount()
        throw TestFailure("mount did not appear within 20 s: \(daemonOutput)")
    }

    /// `PROTFS_TEST_TRANSPORT=io_uring` mounts every vault with `-o io_uring` (FUSE over
    /// io_uring where the kernel offers it: `scripts/test` runs the integration tests so
    /// once more), unless a test chose its transport itself; `dev_fuse` or nothing, as given.
    static func transportOptions(besides options: [String]) -> [String] {
        guard ProcessInfo.processInfo.environment["PROTFS_TEST_TRANSPORT"] == "io_uring",
              !options.contains(where: { $0.split(separator: ",").contains { $0 == "io_uring" || $0 == "noio_uring" } })
        else { return [] }
        return ["io_uring"]
    }

    private func servedByDaemon(_ pid: Int32, asker: [String]) -> Bool {
        let command = asker + [Self.protfsctl, "status", "--json", mountpoint]
        let status = CommandRunner.run(command[0], Array(command.dropFirst()), environment: asker.isEmpty ? nil : daemonEnvironment,
                                       timeout: 10)
        guard status.succeeded,
              let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any] else { return false }
        return (object["pid"] as? Int).map(Int32.init) == pid
    }

    var daemonOutput: String { (try? String(contentsOf: daemonLog, encoding: .utf8)) ?? "" }

    /// /proc/mounts, read to its end: String(contentsOfFile:) stops at the first page of a
    /// /proc file, and a machine with a few dozen mounts has a longer table.
    static var mountTable: String {
        guard let table = FileHandle(forReadingAtPath: "/proc/mounts") else { return "" }
        defer { try? table.close() }
        return String(decoding: table.readDataToEndOfFile(), as: UTF8.self)
    }

    static func isMounted(_ path: String) -> Bool {
        mountTable.split(separator: "\n").contains { $0.split(separator: " ").dropFirst().first.map(String.init) == path }
    }

    /// Unmounts and waits for the daemon; a hung mount is aborted through fusectl.
    func unmount() throws {
        if Self.isMounted(mountpoint) {
            var result = CommandRunner.run("fusermount3", ["-u", mountpoint], timeout: 15)
            if !result.succeeded {
                usleep(300_000)
                result = CommandRunner.run("fusermount3", ["-u", mountpoint], timeout: 15)
            }
            if !result.succeeded { Self.abortConnection(mountpoint) }
        }
        if let daemon {
            let deadline = Date().addingTimeInterval(15)
            while daemon.isRunning && Date() < deadline { usleep(20_000) }
            if daemon.isRunning {
                // Not waitUntilExit: Foundation sees the exit only once the processes that
                // inherited the daemon's descriptors (its fusermount3 helper) are gone too.
                kill(daemon.processIdentifier, SIGKILL)
                while !Self.hasDied(daemon.processIdentifier) && Date() < deadline.addingTimeInterval(15) { usleep(20_000) }
            }
            self.daemon = nil
        }
    }

    /// Last resort for a hung mount: abort its FUSE connection, then lazily unmount.
    static func abortConnection(_ mountpoint: String) {
        _ = CommandRunner.script("requests/abort-fuse-connection.sh", [mountpoint], timeout: 20)
    }

    func path(_ relative: String) -> String { mountpoint + "/" + relative }

    deinit {
        try? unmount()
        try? FileManager.default.removeItem(at: root)
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
