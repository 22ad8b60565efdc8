import Foundation
import Testing

/// Shell completion (docs/OPERATIONS.md), made by `TOOL completion SHELL` from the command
/// table: bash offers every command of `--help` and every option of each, classes after
/// `class set`, accessibilities after `--accessible`, live mount points; zsh and fish load
/// their scripts without a word.
@Suite("completion", .serialized)
struct CompletionTests {
    private static func script(_ tool: String, _ shell: String) throws -> String {
        let made = CommandRunner.run(CommandRunner.builtExecutable(tool), ["completion", shell])
        guard made.succeeded, !made.stdout.isEmpty else { throw TestFailure("\(tool) completion \(shell): \(made.stderr)") }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-completion-\(UUID().uuidString).\(shell)").path
        try made.stdout.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// What bash offers for the command line `words` (the last word is being completed).
    private static func offered(_ script: String, _ tool: String, _ words: [String]) -> Set<String> {
        let result = CommandRunner.script("drive-bash-completion.sh", [script, "__\(tool)_complete", tool] + words)
        #expect(result.succeeded, "\(words): \(result.stderr)")
        return Set(result.stdout.split(separator: "\n").map(String.init))
    }

    @Test("bash offers every command and option of --help", arguments: ["protfs", "protfsctl"])
    func bashOffersEverything(tool: String) throws {
        let script = try Self.script(tool, "bash")
        defer { try? FileManager.default.removeItem(atPath: script) }
        let help = CommandRunner.run(CommandRunner.builtExecutable(tool), ["--help"]).stdout
        let lines = help.split(separator: "\n").filter { $0.hasPrefix("  \(tool) ") }.map { $0.split(separator: " ").dropFirst().map(String.init) }
        #expect(lines.count >= 5)
        let first = Self.offered(script, tool, [""])
        for line in lines {
            let words = Array(line.prefix { $0.allSatisfy { $0.isLowercase || $0 == "-" } })
            #expect(first.contains(words[0]), "\(words[0]) not offered first: \(first)")
            if words.count > 1 {
                #expect(Self.offered(script, tool, [words[0], ""]).contains(words[1]), "\(words)")
            }
            let options = ManualPageTests.options(in: line.joined(separator: " "))
            guard !options.isEmpty, words != ["completion"] else { continue }
            let offered = Self.offered(script, tool, words + ["-"])
            #expect(options.isSubset(of: offered), "\(words): \(options.subtracting(offered)) not offered")
        }
    }

    @Test("bash offers classes and their aliases after class set, accessibilities, live mount points")
    func bashOffersValues() throws {
        let script = try Self.script("protfsctl", "bash")
        defer { try? FileManager.default.removeItem(atPath: script) }
        let classes = Self.offered(script, "protfsctl", ["class", "set", ""])
        #expect(classes.isSuperset(of: ["complete", "completeUnlessOpen", "completeUntilFirstUserAuthentication", "none",
                                        "NSFileProtectionComplete", "NSFileProtectionNone", "A", "D"]), "\(classes)")
        #expect(Self.offered(script, "protfsctl", ["class", "set", "-R", "NSFileProtectionC"]).count == 3)
        let accessibilities = Self.offered(script, "protfsctl", ["item", "add", "/mnt", "--accessible", "after"])
        #expect(accessibilities == ["afterFirstUnlock", "afterFirstUnlockThisDeviceOnly"], "\(accessibilities)")

        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let mountpoint = URL(fileURLWithPath: vault.mountpoint).resolvingSymlinksInPath().path
        #expect(Self.offered(script, "protfsctl", ["lock", "--now", mountpoint.dropLast(2) + ""]).contains(mountpoint))
        #expect(Self.offered(script, "protfsctl", ["item", "list", ""]).contains(mountpoint))
    }

    @Test("zsh and fish load their scripts without a word; fish completes from them")
    func zshAndFishLoad() throws {
        for tool in ["protfs", "protfsctl"] {
            let zsh = try Self.script(tool, "zsh"), fish = try Self.script(tool, "fish")
            defer {
                try? FileManager.default.removeItem(atPath: zsh)
                try? FileManager.default.removeItem(atPath: fish)
            }
            let zshLoad = CommandRunner.run("zsh", ["-f", "-c", "autoload -U compinit && compinit -u -D && source \"$0\"", zsh])
            #expect(zshLoad.succeeded && zshLoad.stderr.isEmpty && zshLoad.stdout.isEmpty, "\(tool): \(zshLoad.stderr)")
            let fishLoad = CommandRunner.run("fish", ["--no-config", "-c", "source $argv[1]; complete -C '\(tool) '", fish])
            #expect(fishLoad.succeeded && fishLoad.stderr.isEmpty, "\(tool): \(fishLoad.stderr)")
            #expect(fishLoad.stdout.contains(tool == "protfs" ? "fsck" : "class"), "\(fishLoad.stdout)")
        }
        let fish = try Self.script("protfsctl", "fish")
        defer { try? FileManager.default.removeItem(atPath: fish) }
        let classes = CommandRunner.run("fish", ["--no-config", "-c", "source $argv[1]; complete -C 'protfsctl class set NSFile'", fish])
        #expect(classes.stdout.contains("NSFileProtectionCompleteUnlessOpen"), "\(classes.stdout)\(classes.stderr)")
    }
}
