import Foundation
import Glibc
import ProtfsSystem

/// A TPM 2.0 of its own for a test: `swtpm` on two free local ports (commands and control),
/// its state in a fresh directory, killed by its pid when released. Without a resource
/// manager: whatever protfs loads into it, protfs must flush.
public final class SoftwareTPM {
    public let port: UInt16
    private let directory = TemporaryDirectory()
    private let pid: pid_t

    /// The TCTI string protfs and tpm2-tools take (the host is the default, localhost: no
    /// comma, so it fits in a mount's `-o` list).
    public var tcti: String { "swtpm:port=\(port)" }

    public struct StartFailure: Error, CustomStringConvertible {
        public let description: String
    }

    public init() throws {
        port = try Self.freePortPair()
        let pidFile = directory.child("swtpm.pid")
        let state = directory.child("state")
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        // Absolute paths: the daemon changes to `/`, and a relative state directory puts
        // the TPM in failure mode. The first process exits once the daemon runs.
        let started = try Self.run(["swtpm", "socket", "--tpm2", "--tpmstate", "dir=\(state)",
                                    "--server", "type=tcp,bindaddr=127.0.0.1,port=\(port)",
                                    "--ctrl", "type=tcp,bindaddr=127.0.0.1,port=\(port + 1)",
                                    "--flags", "not-need-init,startup-clear", "--daemon", "--pid", "file=\(pidFile)"])
        guard started == .exited(0),
              let text = try? String(contentsOfFile: pidFile, encoding: .utf8), let pid = pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw StartFailure(description: "swtpm did not start (\(started))") }
        self.pid = pid
    }

    deinit {
        // SIGKILL: swtpm inherits the test runner's blocked signals, SIGTERM among them, and
        // its state is thrown away anyway.
        kill(pid, SIGKILL)
        // The state directory goes with the helper; wait (briefly) until swtpm has let it go.
        for _ in 0..<100 where kill(pid, 0) == 0 { usleep(10_000) }
    }

    /// Runs a tpm2-tools command (`tpm2_dictionarylockout`, `tpm2_pcrextend`, ...) on this
    /// TPM; how it ended (its errors go to the test's standard error).
    @discardableResult
    public func tool(_ name: String, _ arguments: [String]) throws -> ChildProcess.Termination {
        try Self.run(["env", "TPM2TOOLS_TCTI=\(tcti)", name] + arguments)
    }

    /// Runs a program to its end, its standard output discarded. `posix_spawn` and `waitpid`:
    /// Foundation's `Process` does not reap a child that daemonizes.
    private static func run(_ arguments: [String]) throws -> ChildProcess.Termination {
        let null = try OwnedDescriptor.open(path: "/dev/null", .writeOnly)
        return try ChildProcess.spawn(arguments, standardOutput: null.borrowed).wait()
    }

    /// Two consecutive free TCP ports on the loopback (P for commands, P + 1 for control).
    private static func freePortPair() throws -> UInt16 {
        for _ in 0..<50 {
            let candidate = UInt16.random(in: 20_000...59_998)
            if isFree(candidate) && isFree(candidate + 1) { return candidate }
        }
        throw StartFailure(description: "no two free consecutive ports for swtpm")
    }

    private static func isFree(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
