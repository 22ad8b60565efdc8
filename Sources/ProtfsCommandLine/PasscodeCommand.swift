import Glibc
import ProtfsCrypto
import ProtfsSystem

/// A program whose standard output is the passcode (its first line): `--passcode-command` /
/// `-o passcode_command=` (as gocryptfs' `-extpass`), and `systemd-ask-password`. Spawned,
/// never through a shell: the command line is split at spaces and tabs, with no quoting, so
/// nothing in it is interpreted; anything more is a script of the user's. It shares our
/// standard input and error (to prompt the user itself) and our environment; the passcode
/// travels only through the pipe, into locked memory.
struct PasscodeCommand {
    let arguments: [String]
    /// How messages name it: the command line as given.
    let name: String

    init(commandLine: String) throws(PasscodeInputError) {
        let words = commandLine.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !words.isEmpty else { throw .commandFailed(command: commandLine, reason: "is empty") }
        self.init(arguments: words, name: commandLine)
    }

    init(arguments: [String], name: String) {
        self.arguments = arguments
        self.name = name
    }

    /// Runs the command and returns the first line of its output. Its exit status decides:
    /// anything but 0 is a failure, whatever it wrote. `ifMissing`: the error when the
    /// program is not installed.
    func read(ifMissing: PasscodeInputError? = nil) throws(PasscodeInputError) -> SecureBuffer {
        let child: ChildOutput
        do {
            child = try ChildProcess.spawnReadingOutput(arguments)
        } catch {
            if error.rawValue == ENOENT, let ifMissing { throw ifMissing }
            throw .commandFailed(command: name, reason: "cannot be started (\(error))")
        }
        let output = child.output.borrowed.rawValue
        let line = Result { () throws(PasscodeInputError) in try PasscodeReader.readLine(from: output, source: "the output of '\(name)'") }
        Self.drain(output)  // the rest, so that the command does not die of SIGPIPE
        let termination = child.process.wait()
        guard termination == .exited(0) else { throw .commandFailed(command: name, reason: termination.description) }
        return try line.get()
    }

    /// Reads and drops what follows the first line, wiping it (it may be more secrets).
    private static func drain(_ fd: Int32) {
        let scratch = SecureBuffer(count: 4096)
        scratch.withUnsafeMutableBytes { buffer in
            while let n = try? syscallRetrying({ Glibc.read(fd, buffer.baseAddress!, buffer.count) }), n > 0 {}
        }
    }
}
