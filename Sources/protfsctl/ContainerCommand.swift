import Glibc
import ProtfsCommandLine
import ProtfsDomain
import ProtfsSystem

/// `protfsctl container MOUNTPOINT APP [--class CLASS] [-- PROGRAM [ARGUMENT...]]`: iOS's app
/// container on a vault (docs/DATAPROTECTION.md, "The app container"). An iOS app's files go
/// to its container, and a new file takes the app's default class whatever API wrote it. Here
/// `MOUNTPOINT/Containers/APP` is made with iOS's layout, its directories in the class (the
/// class is inherited by what is made below), and the program runs with its home and the
/// directories Foundation on Linux reads from the environment pointed into it: unchanged code
/// that writes its documents, application support, caches or temporary files writes them
/// into the vault, in that class, at a plain write's cost. Without a program, the variables
/// are printed for a shell to `eval`.
enum ContainerCommand {
    static let command = Command(name: "container", synopsis: "MOUNTPOINT APP [--class CLASS] [-- PROGRAM [ARGUMENT...]]",
                                 valueOptions: ["--class"]) { arguments in
        guard arguments.operands.count >= 2 else { throw UsageError(arguments.operands.isEmpty ? "missing MOUNTPOINT" : "missing APP") }
        let app = arguments.operands[1]
        // Absolute, so the program may change its directory; on a vault, or nothing protects.
        guard let mountpoint = CanonicalPath.resolved(arguments.operands[0]),
              MountTable.protfsMountPoint(containing: mountpoint) != nil else {
            throw ContainerFailure(description: "\(arguments.operands[0]) is not on a protfs mount: its files would not be protected")
        }
        guard !app.isEmpty, app != ".", app != "..", app.utf8.count <= 255,
              app.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) }) else {
            throw UsageError("APP '\(app)' is not a name: letters, digits, '.', '_' and '-' only, as an application identifier")
        }
        var protectionClass = ProtectionClass.completeUntilFirstUserAuthentication  // iOS's default since iOS 7
        if let spelling = arguments.value("--class") {
            guard let given = ProtectionClass(spelling: spelling) else { throw UsageError("unknown class '\(spelling)'") }
            protectionClass = given
        }
        let container = try make(app, in: mountpoint, protectionClass)
        let environment = variables(of: container)
        let program = Array(arguments.operands.dropFirst(2))
        guard let name = program.first else {
            for (variable, value) in environment { writeOutput("export \(variable)='\(value.replacing("'", with: "'\\''"))'\n") }
            return
        }
        for (variable, value) in environment { setenv(variable, value, 1) }
        let argv = program.map { strdup($0) } + [nil]
        execvp(name, argv)
        throw ContainerFailure(description: "cannot run \(name): \(Errno.current)")
    }

    /// The directories of the container, each made if missing, in `protectionClass` when made
    /// (an existing one keeps the class it has: `class set` changes it).
    static let layout = ["Documents", "Library", "Library/Application Support", "Library/Caches", "Library/Preferences", "tmp"]

    private static func make(_ app: String, in mountpoint: String, _ protectionClass: ProtectionClass) throws -> String {
        let containers = mountpoint + "/Containers", container = containers + "/" + app
        try makeDirectory(containers, mode: 0o755, protectionClass: nil)
        try makeDirectory(container, mode: 0o700, protectionClass: protectionClass)
        for relative in layout { try makeDirectory(container + "/" + relative, mode: 0o700, protectionClass: protectionClass) }
        return container
    }

    private static func makeDirectory(_ path: String, mode: mode_t, protectionClass: ProtectionClass?) throws {
        guard mkdir(path, mode) == 0 else {
            guard errno == EEXIST else { throw ContainerFailure(description: "cannot make \(path): \(Errno.current)") }
            return
        }
        guard let protectionClass else { return }
        do {
            try OwnedDescriptor.open(path: path, [.readOnly, .directory]).closeAfter { (directory) throws(Errno) in
                try directory.setExtendedAttribute(ClassCommands.attribute, Array(protectionClass.name.utf8))
            }
        } catch {
            throw ContainerFailure(description: "cannot give \(path) the class \(protectionClass.name): \(error)")
        }
    }

    /// What Foundation on Linux reads for the container directories: `HOME` (`~/Documents`,
    /// `NSHomeDirectory()`), `XDG_DATA_HOME` (`.applicationSupportDirectory`), `XDG_CACHE_HOME`
    /// (`.cachesDirectory`), `XDG_CONFIG_HOME` (preferences) and `TMPDIR` (`NSTemporaryDirectory()`).
    static func variables(of container: String) -> [(String, String)] {
        [("HOME", container), ("XDG_DATA_HOME", container + "/Library/Application Support"),
         ("XDG_CACHE_HOME", container + "/Library/Caches"), ("XDG_CONFIG_HOME", container + "/Library/Preferences"),
         ("TMPDIR", container + "/tmp/")]
    }
}

struct ContainerFailure: CommandError {
    let description: String
    var exitCode: ExitCode { .failure }
}
