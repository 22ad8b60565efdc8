import DataProtection
import Foundation
import Testing

/// A copy and an atomic rewrite of a protected file, as iOS treats them (docs/DATAPROTECTION.md):
/// a copy keeps its source's class, a directory's copy each of its files' classes; an atomic
/// rewrite without a protection option is a new file, in the class new files get in its
/// directory, and with one keeps the class asked for. And a manager of the program's own,
/// `FileManager()`, protects as the shared one does.
@Suite("DataProtection: copies and atomic rewrites on a mount", .serialized)
struct DataProtectionCopyTests {
    @Test func aCopyKeepsItsSourcesClassBeforeItsFirstByte() throws {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount()
        defer { try? vault.unmount() }
        let manager = FileManager.default
        #expect(manager.createFile(atPath: vault.path("secret"), contents: Data("secret".utf8),
                                   attributes: [.protectionKey: FileProtectionType.complete, .posixPermissions: 0o640]))
        try manager.copyItem(atPath: vault.path("secret"), toPath: vault.path("copy"))
        #expect(vault.protectionClass(of: "copy") == "complete")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault.path("copy"))) == Data("secret".utf8))
        #expect(try manager.attributesOfItem(atPath: vault.path("copy"))[.posixPermissions] as? Int == 0o640)
        try manager.copyItem(at: URL(fileURLWithPath: vault.path("secret")), to: URL(fileURLWithPath: vault.path("url-copy")))
        #expect(vault.protectionClass(of: "url-copy") == "complete")
        let overCopy = #expect(throws: CocoaError.self) { try manager.copyItem(atPath: vault.path("secret"), toPath: vault.path("copy")) }
        #expect(overCopy?.code == .fileWriteFileExists)

        try manager.createDirectory(atPath: vault.path("tree/inner"), withIntermediateDirectories: true,
                                    attributes: [.protectionKey: FileProtectionType.completeUnlessOpen])
        #expect(manager.createFile(atPath: vault.path("tree/inner/strong"), contents: Data("s".utf8),
                                   attributes: [.protectionKey: FileProtectionType.complete]))
        #expect(manager.createFile(atPath: vault.path("tree/weak"), contents: Data("w".utf8),
                                   attributes: [.protectionKey: FileProtectionType.none]))
        try manager.copyItem(atPath: vault.path("tree"), toPath: vault.path("tree-copy"))
        #expect(vault.protectionClass(of: "tree-copy") == "completeUnlessOpen")
        #expect(vault.protectionClass(of: "tree-copy/inner") == "completeUnlessOpen")
        #expect(vault.protectionClass(of: "tree-copy/inner/strong") == "complete")
        #expect(vault.protectionClass(of: "tree-copy/weak") == "none")

        // Foundation's own copy, which a file without the import gets, takes the directory's class.
        try Foundation.FileManager.default.copyItem(atPath: vault.path("secret"), toPath: vault.path("foundation-copy"))
        #expect(vault.protectionClass(of: "foundation-copy") == "none")
    }

    @Test func aCopyOfALockedCompleteFileIsRefusedAndLeavesNothing() throws {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(FileManager.default.createFile(atPath: vault.path("secret"), contents: Data("secret".utf8),
                                               attributes: [.protectionKey: FileProtectionType.complete]))
        try vault.lock(now: true)
        let refused = #expect(throws: CocoaError.self) {
            try FileManager.default.copyItem(atPath: vault.path("secret"), toPath: vault.path("copy"))
        }
        #expect(refused?.code == .fileReadNoPermission)
        #expect(!Foundation.FileManager.default.fileExists(atPath: vault.path("copy")))
        try vault.unlock()
    }

    /// iOS's atomic write makes a new file and renames it over the old one, carrying over its
    /// mode but not its class: without a protection option the result has its directory's class.
    @Test func anAtomicRewriteTakesTheClassItAsksForElseItsDirectorys() throws {
        let vault = try TestVault(protectionClass: "completeUntilFirstUserAuthentication")
        try vault.mount()
        defer { try? vault.unmount() }
        let url = URL(fileURLWithPath: vault.path("notes"))
        try Data("v1".utf8).writeProtected(to: url, options: [.atomic, .completeFileProtection])
        #expect(vault.protectionClass(of: "notes") == "complete")
        try Data("v2".utf8).writeProtected(to: url, options: [.atomic, .completeFileProtection])
        #expect(vault.protectionClass(of: "notes") == "complete")
        try Data("v3".utf8).write(to: url, options: .atomic)
        #expect(vault.protectionClass(of: "notes") == "completeUntilFirstUserAuthentication")
        #expect(try Data(contentsOf: url) == Data("v3".utf8))
    }

    /// `Examples/DataProtectionIdioms --own-manager`: iOS code that calls `FileManager()`
    /// compiles with only the import and classes what it creates.
    @Test func aManagerOfItsOwnProtects() throws {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.run(CommandRunner.builtExecutable("DataProtectionIdioms"), ["--own-manager", vault.mountpoint])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout == "FileManager(): created true, NSFileProtectionComplete\n")
        #expect(vault.protectionClass(of: "own.txt") == "complete")
    }
}
