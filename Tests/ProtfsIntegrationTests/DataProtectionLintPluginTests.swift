import Foundation
import Testing

/// The build-tool plugin, adopted by a package that depends on protfs by path as an app
/// would: `swift build` shows each silent call as a compiler warning at the line to change,
/// and says nothing about code that protects. Each package keeps its build directory in a
/// cache under the temporary directory (keyed by this checkout, and made afresh when protfs'
/// targets change shape), so only the first run builds protfs' library; the source is
/// rewritten each time, so the check reruns.
@Suite("DataProtection: the lint's build-tool plugin", .serialized)
struct DataProtectionLintPluginTests {
    private let templates = CommandRunner.scriptPath("lint-plugin")

    /// Writes the package (only what changed, but always the source) and builds it.
    private func build(_ name: String, dependsOnLibrary: Bool) throws -> (directory: String, result: CommandResult) {
        let checkout = CommandRunner.packageRoot.path
        let key = checkout.replacingOccurrences(of: "/", with: "_")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-lint-plugin\(key)/\(name)").path
        let sources = directory + "/Sources/\(name)"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        // SwiftPM names a package that is a path by the path's last component.
        let package = CommandRunner.packageRoot.lastPathComponent
        let dependency = dependsOnLibrary ? "dependencies: [.product(name: \"DataProtection\", package: \"\(package)\")]," : ""
        let manifest = try String(contentsOfFile: templates + "/Package.swift.template", encoding: .utf8)
            .replacingOccurrences(of: "TARGET", with: name).replacingOccurrences(of: "PROTFS", with: checkout)
            .replacingOccurrences(of: "DEPENDENCIES", with: dependency).replacingOccurrences(of: "PACKAGE", with: package)
        if (try? String(contentsOfFile: directory + "/Package.swift", encoding: .utf8)) != manifest {
            try manifest.write(toFile: directory + "/Package.swift", atomically: true, encoding: .utf8)
        }
        // SwiftPM does not see a path dependency's targets gain or lose files: a build directory
        // made for another shape of protfs is started afresh.
        let shape = try String(contentsOfFile: checkout + "/Package.swift", encoding: .utf8)
            + (try FileManager.default.subpathsOfDirectory(atPath: checkout + "/Sources")).sorted().joined(separator: "\n")
        if (try? String(contentsOfFile: directory + "/protfs-shape", encoding: .utf8)) != shape {
            try? FileManager.default.removeItem(atPath: directory + "/.build")
            try shape.write(toFile: directory + "/protfs-shape", atomically: true, encoding: .utf8)
        }
        try? FileManager.default.removeItem(atPath: sources + "/main.swift")
        try FileManager.default.copyItem(atPath: templates + "/\(name.lowercased())/main.swift", toPath: sources + "/main.swift")
        // The Swift driver leaves a directory of its own in TMPDIR for some of its jobs: it goes
        // into one removed with the build, not into the machine's /tmp.
        let driverTemporary = directory + "/driver-tmp"
        try FileManager.default.createDirectory(atPath: driverTemporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: driverTemporary) }
        let result = CommandRunner.run("swift", ["build", "--package-path", directory], environment: ["TMPDIR": driverTemporary],
                                       timeout: 1500)
        return (directory, result)
    }

    @Test func aSilentCallIsAWarningAtItsLine() throws {
        let (directory, result) = try build("Silent", dependsOnLibrary: false)
        #expect(result.succeeded, "swift build: \(result.stdout)\n\(result.stderr)")
        let warnings = result.stdout.split(separator: "\n").filter { $0.contains("warning:") }
        #expect(warnings.contains { $0.hasPrefix("\(directory)/Sources/Silent/main.swift:6:") && $0.contains("writeProtected(to: url") },
                "no warning at the write: \(result.stdout)")
    }

    @Test func protectingCodeBuildsQuietly() throws {
        let (directory, result) = try build("Protecting", dependsOnLibrary: true)
        #expect(result.succeeded, "swift build: \(result.stdout)\n\(result.stderr)")
        #expect(!result.stdout.contains("Sources/Protecting/main.swift:"), "warnings about protecting code: \(result.stdout)")
        // The check ran: its output says what it read.
        let outputs = CommandRunner.shell("find '\(directory)/.build' -name DataProtectionLintChecked.swift -path '*Protecting*' -exec cat {} +")
        #expect(outputs.stdout.contains("checked 1 files and found 0 silent calls"), "the check did not run: \(outputs.stdout)")
    }
}
