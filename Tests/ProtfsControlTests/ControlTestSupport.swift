import Foundation
import Glibc
@testable import ProtfsControl
@testable import ProtfsControlClient
import ProtfsCore
import ProtfsCrypto
import ProtfsSystem

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
        try ControlClient(mountpoint: mountpoint, directories: [directory])
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
        var source = SocketByteSource(socket: self, deadline: Deadline(after: timeout))
        return try ControlWire.readReply(from: &source)
    }
}

/// Whole messages in memory, for the decoder tests.
struct MemorySource: ControlByteSource {
    let bytes: [UInt8]
    var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError) {
        guard buffer.count > 0 else { return }
        guard offset < bytes.count else { throw .closed }
        guard bytes.count - offset >= buffer.count else {
            offset = bytes.count
            throw .truncated
        }
        bytes[offset..<offset + buffer.count].withUnsafeBytes { buffer.copyMemory(from: $0) }
        offset += buffer.count
    }
}

struct MemorySink: ControlByteSink {
    var bytes: [UInt8] = []

    mutating func send(_ buffer: UnsafeRawBufferPointer) throws(ControlWireError) {
        bytes.append(contentsOf: buffer)
    }
}

func secret(_ bytes: [UInt8]) -> SecureBuffer {
    bytes.withUnsafeBytes { SecureBuffer(copying: $0) }
}

/// The encoded form of a request, as protfsctl would send it.
func encodedRequest(_ request: ControlRequest, secrets: [[UInt8]] = []) throws -> [UInt8] {
    var sink = MemorySink()
    try ControlWire.write(request, secrets: secrets.map(secret), to: &sink)
    return sink.bytes
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
