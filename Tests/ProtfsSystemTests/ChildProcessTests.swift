import Glibc
import ProtfsSystem
import Testing

@Suite("Spawning a program and reading its output against a deadline")
struct ChildProcessTests {
    /// Reads at most `capacity` bytes of `child`'s output, waiting until `deadline`.
    private func output(of child: borrowing ChildOutput, capacity: Int = 64,
                        until deadline: ContinuousClock.Instant = .now + .seconds(30)) throws -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: capacity)
        let count = try bytes.withUnsafeMutableBytes { buffer in
            try Result { () throws(Errno) in try child.output.borrowed.read(filling: buffer, until: deadline) }.get()
        }
        return count.map { Array(bytes.prefix($0)) }
    }

    @Test("the output arrives whole and ends when the program does: the write end is closed in this process")
    func outputEndsWithTheProgram() throws {
        let child = try ChildProcess.spawnReadingOutput(["printf", "passcode\\n"])
        #expect(try output(of: child) == Array("passcode\n".utf8))
        #expect(child.process.wait() == .exited(0))
    }

    @Test("a program that says nothing costs the deadline, then is killed")
    func silentProgramRunsIntoTheDeadline() throws {
        let child = try ChildProcess.spawnReadingOutput(["sleep", "60"])
        #expect(try output(of: child, until: .now + .milliseconds(200)) == nil)
        child.process.kill()
        #expect(child.process.wait() == .killed(signal: SIGKILL))
    }

    @Test("a program given no input reads the end of its input at once")
    func nullInput() throws {
        let child = try ChildProcess.spawnReadingOutput(["cat"], standardInput: .null)
        #expect(try output(of: child) == [])
        #expect(child.process.wait() == .exited(0))
    }

    @Test("a full buffer ends the read: a program that writes too much is not read to its end")
    func fullBufferStopsTheRead() throws {
        let child = try ChildProcess.spawnReadingOutput(["yes"])
        #expect(try output(of: child, capacity: 5) == Array("y\ny\ny".utf8))
        child.process.kill()
        _ = child.process.wait()
    }

    @Test("a missing program is an error, not a child")
    func missingProgram() {
        #expect(throws: Errno.self) { _ = try ChildProcess.spawnReadingOutput(["/nonexistent/protfs-test-program"]) }
    }

    @Test("both ends of a pipe and of a socket pair close on exec from birth")
    func pairsCloseOnExec() throws {
        func closeOnExec(_ pair: borrowing DescriptorPair) -> Bool {
            [pair.readEnd.borrowed, pair.writeEnd.borrowed].allSatisfy { fcntl($0.rawValue, F_GETFD) & FD_CLOEXEC != 0 }
        }
        #expect(closeOnExec(try DescriptorPair.pipe()))
        #expect(closeOnExec(try DescriptorPair.socketPair()))
    }
}
