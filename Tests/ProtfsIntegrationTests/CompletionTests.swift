import Foundation
import Testing

/// Shell completion (docs/OPERATIONS.md), made by `TOOL completion SHELL` from the command
/// table: bash offers every command of `--help` and every option of each, classes after
/// `class set`, accessibilities after `--accessible`, live mount points, mount options; zsh
/// is driven through its completion system in a pseudo-terminal, fish through `complete -C`.
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
        let result = CommandRunner.script("commands/drive-bash-completion.sh", [script, "__\(tool)_complete", tool] + words)
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

    /// What zsh's completion system offers for `line` (a TAB typed after it in an interactive
    /// zsh under a pseudo-terminal); anything zsh printed besides fails the expectation.
    private static func zshOffered(_ script: String, _ line: String) -> Set<String> {
        let result = CommandRunner.run("zsh", ["-f", CommandRunner.scriptPath("commands/drive-zsh-completion.zsh"), script, line])
        #expect(result.succeeded && result.stderr.isEmpty, "\(line): \(result.stderr)")
        return Set(result.stdout.split(separator: "\n").map(String.init))
    }

    private static func fishOffered(_ script: String, _ line: String) -> Set<String> {
        let result = CommandRunner.run("fish", ["--no-config", "-c", "source $argv[1]; complete -C $argv[2]", script, line])
        #expect(result.succeeded && result.stderr.isEmpty, "\(line): \(result.stderr)")
        return Set(result.stdout.split(separator: "\n").map { String($0.prefix { $0 != "\t" }) })
    }

    @Test("zsh's completion system completes commands, options, values and live mount points")
    func zshCompletes() throws {
        let protfs = try Self.script("protfs", "zsh"), protfsctl = try Self.script("protfsctl", "zsh")
        defer {
            try? FileManager.default.removeItem(atPath: protfs)
            try? FileManager.default.removeItem(atPath: protfsctl)
        }
        #expect(Self.zshOffered(protfs, "protfs mo") == ["mount"])
        #expect(Self.zshOffered(protfs, "protfs fsck --re") == ["--repair"])
        #expect(Self.zshOffered(protfs, "protfs init --kdf ") == ["interactive", "moderate"])
        #expect(Self.zshOffered(protfs, "protfs mount /a /b -o allow_other,noe") == ["noexec"])
        #expect(Self.zshOffered(protfsctl, "protfsctl cl") == ["class"])
        #expect(Self.zshOffered(protfsctl, "protfsctl class set -R NSFileProtectionC").count == 3)
        #expect(Self.zshOffered(protfsctl, "protfsctl item add /mnt --accessible after")
                == ["afterFirstUnlock", "afterFirstUnlockThisDeviceOnly"])

        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let mountpoint = URL(fileURLWithPath: vault.mountpoint).resolvingSymlinksInPath().path
        #expect(Self.zshOffered(protfsctl, "protfsctl lock --now \(mountpoint.dropLast(2))").contains(mountpoint))
    }

    @Test("fish completes commands, classes and mount options from its script")
    func fishCompletes() throws {
        let protfs = try Self.script("protfs", "fish"), protfsctl = try Self.script("protfsctl", "fish")
        defer {
            try? FileManager.default.removeItem(atPath: protfs)
            try? FileManager.default.removeItem(atPath: protfsctl)
        }
        #expect(Self.fishOffered(protfs, "protfs ").isSuperset(of: ["init", "mount", "fsck"]))
        #expect(Self.fishOffered(protfsctl, "protfsctl class set NSFile").contains("NSFileProtectionCompleteUnlessOpen"))
        #expect(Self.fishOffered(protfs, "protfs mount /a /b -o allow_other,noe") == ["allow_other,noexec"])
    }

    @Test("bash completes mount options one list item at a time")
    func bashCompletesMountOptions() throws {
        let script = try Self.script("protfs", "bash")
        defer { try? FileManager.default.removeItem(atPath: script) }
        #expect(Self.offered(script, "protfs", ["mount", "/a", "/b", "-o", ""]).isSuperset(of: ["allow_other", "device_key=", "ro"]))
        #expect(Self.offered(script, "protfs", ["mount", "/a", "/b", "-o", "allow_other,noe"]) == ["allow_other,noexec"])
    }

    /// Where scripts/setup puts each shell's script, and where that shell looks by default.
    @Test("scripts/setup installs each script where its shell looks by default")
    func installedWhereShellsLook() throws {
        let setup = try String(contentsOfFile: CommandRunner.packageRoot.appendingPathComponent("scripts/setup").path, encoding: .utf8)
        func directory(_ shell: String) -> String? {
            setup.split(separator: "\n").first { $0.contains("completion \(shell) >") }
                .flatMap { $0.split(separator: "\"").dropFirst(3).first }
                .map { URL(fileURLWithPath: String($0)).deletingLastPathComponent().path }
        }
        let zshPath = CommandRunner.run("zsh", ["-f", "-c", "print -l $fpath"]).stdout.split(separator: "\n").map(String.init)
        let zsh = try #require(directory("zsh"))
        #expect(zshPath.contains(zsh), "\(zsh) is not on zsh's fpath")
        let fishPath = CommandRunner.run("fish", ["-c", "printf '%s\\n' $fish_complete_path"]).stdout.split(separator: "\n").map(String.init)
        let fish = try #require(directory("fish"))
        #expect(fishPath.contains(fish), "\(fish) is not on fish's fish_complete_path: \(fishPath)")
        // bash-completion loads from each of XDG_DATA_DIRS, by default /usr/local/share:/usr/share.
        let bash = try #require(directory("bash"))
        #expect(["/usr/local/share", "/usr/share"].map { $0 + "/bash-completion/completions" }.contains(bash), "\(bash)")
    }
}
