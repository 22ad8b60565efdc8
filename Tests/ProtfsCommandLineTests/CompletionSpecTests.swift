@testable import ProtfsCommandLine
import Testing

/// What completion offers is read from the synopses: operands and their kinds, option
/// values, internal options left out.
@Suite struct CompletionSpecTests {
    static let table = CommandTable(tool: "tool", manualPage: "tool(1)", commands: [
        Command(name: "class set", synopsis: "[-R [--progress | --json]] CLASS PATH...", flags: ["-R", "--progress", "--json"]) { _ in },
        Command(name: "mount", synopsis: "BACKING MOUNTPOINT [-f] [-o OPTIONS]", valueOptions: ["-o", "--ready-fd"], flags: ["-f"]) { _ in },
        Command(name: "lock", synopsis: "[--wait|--now] MOUNTPOINT", flags: ["--wait", "--now"]) { _ in },
        Command(name: "backup", synopsis: "BACKING ARCHIVE [--kdf a|b] [--class CLASS] | --verify ARCHIVE",
                valueOptions: ["--kdf", "--class"], flags: ["--verify"]) { _ in },
        Command(name: "item add", synopsis: "MOUNTPOINT --service S [--accessible V]", valueOptions: ["--service", "--accessible"]) { _ in },
    ])

    func entry(_ name: String) throws -> CompletionSpec.Entry {
        try #require(CompletionSpec(Self.table).entries.first { $0.words.joined(separator: " ") == name })
    }

    @Test func operandsFollowTheSynopsis() throws {
        let classSet = try entry("class set")
        #expect(classSet.operands == [.protectionClass, .file] && classSet.repeatsLast)
        #expect(try entry("lock").operands == [.mountpoint])
        #expect(try entry("mount").operands == [.file, .file], "a mount to make is any directory")
        #expect(try entry("backup").operands == [.file, .file], "the alternative form after | is not more operands")
        #expect(try entry("item add").operands == [.mountpoint], "an option's value is no operand")
    }

    @Test func optionsAndTheirValues() throws {
        let mount = try entry("mount")
        #expect(mount.options.map(\.name) == ["-f", "-o"], "--ready-fd is not in the synopsis: internal")
        let backup = try entry("backup")
        #expect(backup.options.first { $0.name == "--kdf" }?.value == .words(["a", "b"]))
        #expect(backup.options.first { $0.name == "--class" }?.value == .protectionClass)
        #expect(backup.options.first { $0.name == "--verify" }.map { $0.value == nil } == true)
        let item = try entry("item add")
        #expect(item.options.first { $0.name == "--accessible" }?.value == .accessibility)
        #expect(item.options.first { $0.name == "--service" }?.value == .text)
        #expect(CompletionSpec(Self.table).firstWords == ["class", "mount", "lock", "backup", "item"])
        #expect(CompletionSpec(Self.table).secondWords(after: "item") == ["add"])
    }

    @Test func classNamesHaveTheirAliases() {
        #expect(CompletionSpec.Kind.classNames.count == 12)
        #expect(CompletionSpec.Kind.classNames.contains("NSFileProtectionCompleteUnlessOpen"))
        #expect(CompletionSpec.Kind.accessibilityNames.contains("kSecAttrAccessibleAfterFirstUnlock"))
    }
}
