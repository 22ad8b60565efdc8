import Foundation
import Testing

/// The scripts the tests run are checked before any of them runs: a syntax error in a step
/// that a test expects to fail would otherwise pass for the wrong reason.
@Suite("script syntax")
struct ScriptSyntaxTests {
    static let scriptsDirectory = CommandRunner.scriptPath("")

    /// The scripts in the folders of `Scripts/` (one per feature) whose names end in `suffix`,
    /// as full paths.
    static func scripts(endingIn suffix: String) throws -> [String] {
        try ScriptLayoutTests.scriptFiles().filter { $0.hasSuffix(suffix) }
            .map { URL(fileURLWithPath: scriptsDirectory).appendingPathComponent($0).path }
    }

    /// Runs `executable arguments FILE` for each file; a failure names the file and what the
    /// checker said.
    static func expectEach(_ files: [String], pass executable: String, _ arguments: [String]) {
        #expect(!files.isEmpty, "no scripts found in \(scriptsDirectory)")
        for file in files {
            let result = CommandRunner.run(executable, arguments + [file])
            #expect(result.succeeded, "\(file): \(result.stdout)\(result.stderr)")
        }
    }

    @Test("every bash script parses (bash -n)")
    func bashParses() throws {
        Self.expectEach(try Self.scripts(endingIn: ".sh"), pass: "/bin/bash", ["-n"])
    }

    @Test("every zsh script parses (zsh -n)")
    func zshParses() throws {
        Self.expectEach(try Self.scripts(endingIn: ".zsh"), pass: "zsh", ["-n"])
    }

    @Test("every bash script has no error that shellcheck finds")
    func bashHasNoShellcheckErrors() throws {
        // scripts/install-dependencies installs shellcheck.
        Self.expectEach(try Self.scripts(endingIn: ".sh"), pass: "shellcheck", ["--severity=error"])
    }

    @Test("every Python script parses, Tests/model/run included")
    func pythonParses() throws {
        // ast.parse, not py_compile: nothing is written into the tree.
        let model = CommandRunner.packageRoot.appendingPathComponent("Tests/model/run").path
        Self.expectEach(try Self.scripts(endingIn: ".py") + [model], pass: "python3",
                        ["-c", "import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])"])
    }
}
