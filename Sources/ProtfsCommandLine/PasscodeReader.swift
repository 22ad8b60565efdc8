import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// Reads a passcode into locked memory, never through a Swift `String`: from a file (its
/// first line), else from the terminal without echo when standard input is one, else the
/// first line of standard input. Passcodes never come from argv or the environment.
/// A line loses exactly one trailing `\n` (and a `\r` just before it); its bytes are taken
/// as given; an empty one is refused.
public struct PasscodeReader: Sendable {
    public static let maximumByteCount = PasscodeLimits.maximumByteCount
    public let passcodeFile: String?

    public init(passcodeFile: String?) { self.passcodeFile = passcodeFile }

    /// An existing passcode (unlock, mount, the old one of `passwd`).
    public func read(prompt: String = "Passcode: ") throws(PasscodeInputError) -> SecureBuffer {
        try readOnce(prompt: prompt)
    }

    /// A passcode being chosen (`init`, the new one of `passwd`): on a terminal it is asked
    /// twice and both entries must match.
    public func readNew(prompt: String = "New passcode: ", confirmation: String = "Repeat the new passcode: ") throws(PasscodeInputError) -> SecureBuffer {
        let first = try readOnce(prompt: prompt)
        guard passcodeFile == nil, isatty(STDIN_FILENO) == 1 else { return first }
        let second = try readOnce(prompt: confirmation)
        guard Self.same(first, second) else { throw .entriesDiffer }
        return first
    }

    private func readOnce(prompt: String) throws(PasscodeInputError) -> SecureBuffer {
        if let passcodeFile {
            let fd: FileDescriptor
            do { fd = try FileDescriptor.open(path: passcodeFile, [.readOnly]) } catch {
                throw .system(operation: "open passcode file", path: passcodeFile, errno: error)
            }
            defer { fd.close() }
            return try Self.readLine(from: fd.rawValue, source: passcodeFile)
        }
        guard isatty(STDIN_FILENO) == 1 else { return try Self.readLine(from: STDIN_FILENO, source: "standard input") }
        return try Self.readFromTerminal(prompt: prompt)
    }

    /// Prompts on stderr and reads standard input with echo off, restoring the terminal after.
    private static func readFromTerminal(prompt: String) throws(PasscodeInputError) -> SecureBuffer {
        writeToStandardError(prompt)
        var saved = termios()
        let haveSettings = tcgetattr(STDIN_FILENO, &saved) == 0
        if haveSettings {
            var quiet = saved
            quiet.c_lflag &= ~tcflag_t(ECHO)
            quiet.c_lflag |= tcflag_t(ECHONL)
            _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
        }
        defer {
            if haveSettings { _ = tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved) }
        }
        return try readLine(from: STDIN_FILENO, source: "the terminal")
    }

    /// Reads one line a byte at a time, so nothing after it is consumed (`passwd` reads the
    /// old and the new passcode as two lines of the same input).
    static func readLine(from fd: Int32, source: String) throws(PasscodeInputError) -> SecureBuffer {
        let scratch = SecureBuffer(count: maximumByteCount + 1)
        var length = 0
        var sawNewline = false
        try scratch.withUnsafeMutableBytes { (buffer) throws(PasscodeInputError) in
            while length < buffer.count {
                let n: Int
                do throws(Errno) { n = try syscallRetrying { Glibc.read(fd, buffer.baseAddress! + length, 1) } } catch {
                    throw .system(operation: "read a passcode from", path: source, errno: error)
                }
                if n == 0 { break }
                if buffer[length] == 0x0A {
                    buffer[length] = 0
                    sawNewline = true
                    break
                }
                length += 1
            }
            guard length > 0 || sawNewline else { throw .missing }
            guard length <= maximumByteCount else { throw .tooLong(limit: maximumByteCount) }
            if sawNewline && length > 0 && buffer[length - 1] == 0x0D {
                length -= 1
                buffer[length] = 0
            }
        }
        guard length > 0 else { throw .empty }
        return scratch.withUnsafeBytes { SecureBuffer(copying: UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }

    /// Byte equality of two entries (both typed by the same person: timing reveals nothing).
    private static func same(_ a: SecureBuffer, _ b: SecureBuffer) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in zip(x, y).allSatisfy { $0 == $1 } } }
    }

    private static func writeToStandardError(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }
}
