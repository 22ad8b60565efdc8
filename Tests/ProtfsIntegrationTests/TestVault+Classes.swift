import Foundation
import Testing

/// Protection classes seen through the kernel: directories made per class with `setfattr`,
/// and the class of a path read back with `getfattr`.
extension TestVault {
    /// The canonical names (docs/CLASSES.md), most permissive first.
    static let classNames = ["none", "completeUntilFirstUserAuthentication", "completeUnlessOpen", "complete"]

    /// The directory of one class that `makeClassDirectories` creates.
    static func classDirectory(_ protectionClass: String) -> String { "d-\(protectionClass)" }

    /// Runs a bash script with the mount point as its working directory.
    @discardableResult
    func shell(_ script: String, timeout: TimeInterval = 60) -> CommandResult {
        CommandRunner.shell("cd '\(mountpoint)' && \(script)", timeout: timeout)
    }

    /// Runs a bash script under `set -e` in the mount point and expects it to succeed (every
    /// assertion in it a command of its own: `set -e` ignores `&&` lists and `!` pipelines).
    func check(_ script: String, timeout: TimeInterval = 120, sourceLocation: SourceLocation = #_sourceLocation) {
        let result = CommandRunner.shell("set -e\ncd '\(mountpoint)'\n" + script, timeout: timeout)
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)\ndaemon: \(daemonOutput)", sourceLocation: sourceLocation)
    }

    /// Runs a script kept in `Scripts/` with the mount point as its first argument and expects
    /// it to succeed.
    func checkScript(_ name: String, _ arguments: [String] = [], timeout: TimeInterval = 120,
                     sourceLocation: SourceLocation = #_sourceLocation) {
        let result = CommandRunner.script(name, [mountpoint] + arguments, timeout: timeout)
        #expect(result.succeeded, "\(name): \(result.stdout)\(result.stderr)\ndaemon: \(daemonOutput)",
                sourceLocation: sourceLocation)
    }

    /// Makes `d-CLASS` for every class (re-classed with `setfattr`, so what is created in it
    /// inherits CLASS) holding `files`, name to contents, while the vault is unlocked.
    func makeClassDirectories(holding files: [String: String] = [:]) throws {
        for protectionClass in Self.classNames {
            let directory = Self.classDirectory(protectionClass)
            let made = shell("mkdir \(directory) && setfattr -n user.protfs.class -v \(protectionClass) \(directory)")
            guard made.succeeded else { throw TestFailure("cannot make \(directory): \(made.stderr)") }
            for (name, contents) in files {
                try Data(contents.utf8).write(to: URL(fileURLWithPath: path("\(directory)/\(name)")))
                let got = self.protectionClass(of: "\(directory)/\(name)")
                guard got == protectionClass else { throw TestFailure("\(directory)/\(name) has class '\(got)'") }
            }
        }
    }

    /// `getfattr --only-values -n user.protfs.class` of a mount-relative path: the raw value,
    /// so a trailing NUL or newline would show; the error message when there is none.
    func protectionClass(of relative: String) -> String {
        let result = shell("getfattr --only-values -n user.protfs.class '\(relative)'")
        return result.succeeded ? result.stdout : "error: \(result.stderr)"
    }
}
