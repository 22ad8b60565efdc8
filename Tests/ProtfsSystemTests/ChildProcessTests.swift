import Glibc
import ProtfsSystem
import Testing

/// `posix_spawnp` through the wrapper: a program that cannot start is its errno, the
/// child's output reaches the caller's descriptor, and its end is told as it happened.
@Suite("child processes")
struct ChildProcessTests {
    @Test("a missing program is ENOENT, nothing started")
    func missingProgram() throws {
        let sink = try OwnedDescriptor.open(path: "/dev/null", .writeOnly)
        #expect(throws: Errno.noEntry) {
            _ = try ChildProcess.spawn(["protfs-no-such-program-here"], standardOutput: sink.borrowed.rawValue)
        }
    }

    @Test("the output reaches the caller; an exit code and a killing signal are told apart")
    func outputAndTermination() throws {
        let ends = try pipeEnds()
        let readEnd = OwnedDescriptor(adopting: ends.read), writeEnd = OwnedDescriptor(adopting: ends.write)
        let child = try ChildProcess.spawn(["sh", "-c", "printf spawned; exit 3"], standardOutput: writeEnd.borrowed.rawValue)
        _ = consume writeEnd
        var output: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64)
        while case let count = read(readEnd.borrowed.rawValue, &buffer, buffer.count), count > 0 { output += buffer[0..<count] }
        #expect(String(decoding: output, as: UTF8.self) == "spawned")
        #expect(child.wait() == .exited(3))

        let sink = try OwnedDescriptor.open(path: "/dev/null", .writeOnly)
        let killed = try ChildProcess.spawn(["sh", "-c", "kill -9 $$"], standardOutput: sink.borrowed.rawValue)
        #expect(killed.wait() == .killed(signal: SIGKILL))
    }
}
