import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// Reads a passcode into locked memory, never through a Swift `String`, from the first of:
/// a file (its first line); a command's output (`PasscodeCommand`); the systemd credential
/// `protfs-passcode` (`$CREDENTIALS_DIRECTORY`, for an existing passcode); the terminal
/// without echo when standard input is one; the first line of standard input when it can
/// have one (a pipe, a file); else, with no input at all (`/dev/null`, closed: a service,
/// fstab at boot), `systemd-ask-password`, which asks the system's password agents.
/// Passcodes never come from argv or the environment.
/// A line loses exactly one trailing `\n` (and a `\r` just before it); its bytes are taken
/// as given; an empty one is refused.
public struct PasscodeReader: Sendable {
    public static let maximumByteCount = PasscodeLimits.maximumByteCount
    /// The credential a systemd unit gives with `LoadCredential=` or `LoadCredentialEncrypted=`.
    public static let credentialName = "protfs-passcode"
    public let passcodeFile: String?
    public let passcodeCommand: String?
    /// What the passcode opens (a mount point, a backing directory), for the password agents.
    public let vault: String?

    public init(passcodeFile: String?, passcodeCommand: String? = nil, vault: String? = nil) {
        self.passcodeFile = passcodeFile
        self.passcodeCommand = passcodeCommand
        self.vault = vault
    }

    /// An existing passcode (unlock, mount, the old one of `passwd`).
    public func read(prompt: String = "Passcode: ") throws(PasscodeInputError) -> SecureBuffer {
        if passcodeFile == nil, passcodeCommand == nil, let credential = Self.credentialPath() {
            return try Self.readFile(credential)
        }
        return try readOnce(prompt: prompt)
    }

    /// `$CREDENTIALS_DIRECTORY/protfs-passcode` when systemd passed it to this service.
    public static func credentialPath() -> String? {
        guard let raw = getenv("CREDENTIALS_DIRECTORY") else { return nil }
        let path = String(cString: raw) + "/" + credentialName
        var st = stat()
        return path.hasPrefix("/") && stat(path, &st) == 0 ? path : nil
    }

    /// A passcode being chosen (`init`, the new one of `passwd`): on a terminal it is asked
    /// twice and both entries must match.
    public func readNew(prompt: String = "New passcode: ", confirmation: String = "Repeat the new passcode: ") throws(PasscodeInputError) -> SecureBuffer {
        let first = try readOnce(prompt: prompt)
        guard passcodeFile == nil, passcodeCommand == nil, isatty(STDIN_FILENO) == 1 else { return first }
        let second = try readOnce(prompt: confirmation)
        guard Self.same(first, second) else { throw .entriesDiffer }
        return first
    }

    private func readOnce(prompt: String) throws(PasscodeInputError) -> SecureBuffer {
        if let passcodeFile { return try Self.readFile(passcodeFile) }
        if let passcodeCommand { return try PasscodeCommand(commandLine: passcodeCommand).read() }
        if isatty(STDIN_FILENO) == 1 { return try Self.readFromTerminal(prompt: prompt) }
        if Self.standardInputIsEmpty { return try askPasswordAgents(prompt: prompt) }
        return try Self.readLine(from: STDIN_FILENO, source: "standard input")
    }

    private static func readFile(_ path: String) throws(PasscodeInputError) -> SecureBuffer {
        let file: OwnedDescriptor
        do { file = try OwnedDescriptor.open(path: path, [.readOnly]) } catch {
            throw .system(operation: "open passcode file", path: path, errno: error)
        }
        return try readLine(from: file.borrowed.rawValue, source: path)
    }

    /// No input can come: standard input is closed or a character device that is no
    /// terminal (`/dev/null`, as services and fstab mounts at boot have).
    public static var standardInputIsEmpty: Bool {
        var st = stat()
        return fstat(STDIN_FILENO, &st) != 0 || st.st_mode & S_IFMT == S_IFCHR
    }

    /// `systemd-ask-password`: the console, Plymouth or a desktop's agent answers. Only when
    /// an agent may answer (`PasswordAgents`): with none, systemd-ask-password would wait
    /// its 90 seconds for nobody. Without the program, the input is simply missing.
    private func askPasswordAgents(prompt: String) throws(PasscodeInputError) -> SecureBuffer {
        guard PasswordAgents.mayAnswer else { throw .noSource }
        let message = prompt.trimmingTrailingSpaces + (vault.map { " (protfs vault \($0))" } ?? " (protfs)")
        let command = PasscodeCommand(arguments: ["systemd-ask-password", "--id=protfs:\(vault ?? "")", message],
                                      name: "systemd-ask-password")
        do {
            return try command.read(ifMissing: .noSource)
        } catch .commandFailed(_, let reason) {
            throw .agentsGaveNone(reason: reason)
        }
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

extension PasscodeReader {
    /// The passcode options every command that reads a passcode takes.
    public static let options: Set = ["--passcode-file", "--passcode-command"]

    /// The reader of a command's `--passcode-file FILE` or `--passcode-command CMD`, which
    /// exclude each other and `--no-passcode`.
    public init(options arguments: ParsedArguments, vault: String? = nil) throws(UsageError) {
        let file = arguments.value("--passcode-file"), command = arguments.value("--passcode-command")
        guard file == nil || command == nil else { throw UsageError("--passcode-file and --passcode-command exclude each other") }
        if arguments.isSet("--no-passcode"), let given = file != nil ? "--passcode-file" : command != nil ? "--passcode-command" : nil {
            throw UsageError("--no-passcode and \(given) exclude each other")
        }
        self.init(passcodeFile: file, passcodeCommand: command, vault: vault)
    }
}
