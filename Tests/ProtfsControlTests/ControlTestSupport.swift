import Foundation
import Glibc
@testable import ProtfsControl
@testable import ProtfsControlProtocol
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem
import ProtfsTestSupport

/// A server with a fake handler on a socket in a fresh temporary directory (`<root>/protfs`,
/// as `$XDG_RUNTIME_DIR/protfs` would be with XDG_RUNTIME_DIR=<root>), stopped and removed
/// in deinit.
final class ServerFixture {
    let root: String
    let handler = FakeHandler()
    let server: ControlServer
    /// A mount point no real daemon serves: unique and never resolvable.
    let mountpoint = "/nonexistent-protfs-test/\(UUID().uuidString)"

    var directory: String { root + "/protfs" }

    init(mountingUser: uid_t = getuid(), start: Bool = true) throws {
        root = NSTemporaryDirectory() + "protfs-control-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o755])
        server = try ControlServer(handler: handler, mountpoint: mountpoint, mountingUser: mountingUser, directory: root + "/protfs")
        if start { try server.start() }
    }

    func client() throws(ControlFailure) -> ControlClient {
        try ControlClient(mountpoint: mountpoint, directories: [ControlSocketDirectory(directory, trusting: [getuid(), 0])])
    }

    /// A connection that speaks bytes, not the protocol.
    func rawConnection() throws -> UnixSocket {
        try UnixSocket.connected(to: server.socketPath)
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(atPath: root)
    }
}

extension UnixSocket {
    func send(_ bytes: [UInt8]) throws {
        try bytes.withUnsafeBytes { buffer in Result { () throws(Errno) in try send(buffer) } }.get()
    }

    /// The next reply, waiting at most `timeout`; nil when the server closed the connection.
    func reply(within timeout: Duration = .seconds(10)) throws -> ControlReply? {
        try reading(until: Deadline(after: timeout)) { source throws(ControlWireError) in try ControlWire.readReply(from: &source) }
    }
}

/// The freshly built `protfsctl`, beside the test bundle in the build directory.
var builtProtfsctl: String {
    let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
    var directory = URL(fileURLWithPath: exe).deletingLastPathComponent()
    while directory.path != "/" && !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("protfsctl").path) {
        directory.deleteLastPathComponent()
    }
    return directory.appendingPathComponent("protfsctl").path
}

/// Runs a program to completion with a deadline; returns its status and both outputs.
func runProgram(_ path: String, _ arguments: [String], environment: [String: String] = [:],
                stdin: String = "", timeout: TimeInterval = 30) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
    let output = Pipe(), errors = Pipe(), input = Pipe()
    process.standardOutput = output
    process.standardError = errors
    process.standardInput = input
    try process.run()
    input.fileHandleForWriting.write(Data(stdin.utf8))
    try input.fileHandleForWriting.close()
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning && Date() < deadline { usleep(10_000) }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    let out = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let err = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return (process.terminationStatus, out, err)
}
