import Foundation
import Testing

/// `dataprotection-lint`, run as a developer runs it on Swift files: each call that would set
/// no class on Linux, at its line and column, with its replacement; nothing for code that
/// protects, comments or strings.
@Suite("DataProtection: dataprotection-lint")
struct DataProtectionLintTests {
    private let lint = CommandRunner.builtExecutable("dataprotection-lint")
    private let fixtures = CommandRunner.scriptPath("commands/lint")

    @Test func listsEverySilentCallWithItsPlaceAndReplacement() {
        let file = fixtures + "/silent.swift"
        let result = CommandRunner.run(lint, [file])
        #expect(result.status == 1)
        let places = result.stdout.split(separator: "\n").map { line in
            line.split(separator: ":", maxSplits: 3).prefix(3).joined(separator: ":")
        }
        #expect(places == ["\(file):4:14", "\(file):5:14", "\(file):6:26", "\(file):8:24", "\(file):9:26", "\(file):17:13"])
        let lines = result.stdout.split(separator: "\n")
        #expect(lines[0].hasSuffix("with import DataProtection write `try data.writeProtected(to: url, options: ...)`"))
        #expect(lines[2].contains("NSData.write(toFile:options:)"))
        #expect(lines[3].hasSuffix("write `try url.setFileProtection(.complete)` (the class you set)"))
        #expect(lines[4].hasSuffix("read `try url.fileProtection`"))
    }

    @Test func protectingCodeCommentsAndStringsPass() {
        let result = CommandRunner.run(lint, [fixtures + "/clean.swift"])
        #expect(result.stdout == "")
        #expect(result.status == 0)
    }

    @Test func aTreeIsSearchedAndAMissingPathIsAnError() {
        let tree = CommandRunner.run(lint, [fixtures])
        #expect(tree.status == 1)
        #expect(tree.stdout.split(separator: "\n").count == 6)
        let missing = CommandRunner.run(lint, [fixtures + "/absent.swift"])
        #expect(missing.status == 2)
        #expect(missing.stderr.contains("cannot read"))
    }
}
