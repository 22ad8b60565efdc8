import Foundation
import Testing

/// `--help` on every command and `--version` on both tools (docs/OPERATIONS.md): exit 0,
/// on standard output, the usage of the command asked about.
@Suite("help and version")
struct HelpTests {
    @Test("every command of --help answers COMMAND --help with its usage", arguments: ["protfs", "protfsctl"])
    func everyCommandHasHelp(tool: String) throws {
        let executable = CommandRunner.builtExecutable(tool)
        let commands = ManualPageTests.help(tool).commands
        #expect(commands.count >= 5, "\(commands)")
        for command in commands where command != "completion" {
            let words = command.split(separator: " ").map(String.init)
            for asked in [words + ["--help"], words + ["-h"], ["help"] + words] {
                let result = CommandRunner.run(executable, asked)
                #expect(result.succeeded && result.stderr.isEmpty, "\(asked): \(result.status) \(result.stderr)")
                #expect(result.stdout.hasPrefix("usage: \(tool) \(command)"), "\(asked): \(result.stdout)")
            }
        }
    }

    @Test("--help taken as an option's value is that value, not a request for help")
    func helpAsAValue() throws {
        // `--passcode-file --help` names a file called --help: the command runs and fails on it.
        let result = CommandRunner.run(CommandRunner.builtExecutable("protfs"), ["fsck", "/nonexistent", "--passcode-file", "--help"])
        #expect(!result.succeeded && !result.stdout.hasPrefix("usage:"), "\(result.stdout)")
    }

    @Test("--version on both tools says the release", arguments: ["protfs", "protfsctl"])
    func version(tool: String) throws {
        let result = CommandRunner.run(CommandRunner.builtExecutable(tool), ["--version"])
        #expect(result.succeeded && result.stdout.hasPrefix("\(tool) ") && result.stdout.contains("."), "\(result.stdout)\(result.stderr)")
    }
}
