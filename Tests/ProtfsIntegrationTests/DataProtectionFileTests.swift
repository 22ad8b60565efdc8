import DataProtection
import Foundation
import Testing

/// README.md's files, through `import DataProtection` as another package would use it,
/// on a real mount: classes set and read back (and seen by `getfattr`), writes with each
/// protection option, Foundation's errors after a lock, and the off-mount error.
@Suite("DataProtection: files on a mount", .serialized)
struct DataProtectionFileTests {
    static let types: [FileProtectionType] = [.none, .completeUntilFirstUserAuthentication, .completeUnlessOpen, .complete]
    static let options: [(Data.WritingOptions, String)] = [
        (.noFileProtection, "none"),
        (.completeFileProtectionUntilFirstUserAuthentication, "completeUntilFirstUserAuthentication"),
        (.completeFileProtectionUnlessOpen, "completeUnlessOpen"),
        (.completeFileProtection, "complete"),
    ]

    /// The canonical name `getfattr` prints for a Foundation value.
    static func canonical(_ type: FileProtectionType) -> String {
        String(type.rawValue.dropFirst("NSFileProtection".count)).replacingOccurrences(of: "None", with: "none")
            .replacingOccurrences(of: "Complete", with: "complete", options: .anchored)
    }

    /// Names in the mount that are not `expected`: a temporary file left behind shows here.
    static func strays(in directory: String, expected: Set<String>) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).filter { !expected.contains($0) }
    }

    @Test func setAttributesCreateFileAndCreateDirectoryClassEveryType() throws {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount()
        defer { try? vault.unmount() }
        let manager = ProtectedFileManager.default
        for type in Self.types {
            let name = Self.canonical(type)
            let file = vault.path("set-\(name)")
            #expect(FileManager.default.createFile(atPath: file, contents: Data("x".utf8)))
            try manager.setAttributes([.protectionKey: type, .posixPermissions: 0o640], ofItemAtPath: file)
            #expect((try manager.attributesOfItem(atPath: file)[.protectionKey] as? FileProtectionType)?.rawValue == type.rawValue)
            #expect(try manager.attributesOfItem(atPath: file)[.posixPermissions] as? Int == 0o640)
            #expect(vault.protectionClass(of: "set-\(name)") == name)

            #expect(manager.createFile(atPath: vault.path("new-\(name)"), contents: Data("secret".utf8),
                                       attributes: [.protectionKey: type]))
            #expect(vault.protectionClass(of: "new-\(name)") == name)
            #expect(try Data(contentsOf: URL(fileURLWithPath: vault.path("new-\(name)"))) == Data("secret".utf8))
            #expect(try URL(fileURLWithPath: vault.path("new-\(name)")).fileProtection?.rawValue == type.rawValue)

            try manager.createDirectory(atPath: vault.path("dir-\(name)/a/b"), withIntermediateDirectories: true,
                                        attributes: [.protectionKey: type])
            for directory in ["dir-\(name)", "dir-\(name)/a", "dir-\(name)/a/b"] {
                #expect(vault.protectionClass(of: directory) == name, "\(directory)")
            }
            try manager.createDirectory(at: URL(fileURLWithPath: vault.path("url-\(name)")), withIntermediateDirectories: false,
                                        attributes: [.protectionKey: type])
            #expect(vault.protectionClass(of: "url-\(name)") == name)
            // What is created in a classed directory inherits its class.
            #expect(FileManager.default.createFile(atPath: vault.path("dir-\(name)/a/b/child"), contents: nil))
            #expect(vault.protectionClass(of: "dir-\(name)/a/b/child") == name)
        }
        let reclassed = URL(fileURLWithPath: vault.path("set-none"))
        try reclassed.setFileProtection(.complete)
        #expect(vault.protectionClass(of: "set-none") == "complete")
        #expect(try Self.strays(in: vault.mountpoint, expected: Set(Self.types.flatMap { type in
            let name = Self.canonical(type)
            return ["set-\(name)", "new-\(name)", "dir-\(name)", "url-\(name)"]
        })) == [])
    }

    /// A new file gets its class before its first byte, even in a `complete` directory while
    /// locked: a `none` file made there never holds a byte under `complete`.
    @Test func eachWritingOptionLandsWithItsClassAtomicOrNot() throws {
        let vault = try TestVault(protectionClass: "complete")
        try vault.mount()
        defer { try? vault.unmount() }
        var names: Set<String> = []
        for (options, name) in Self.options {
            for extra in [Data.WritingOptions.atomic, [], [.atomic, .withoutOverwriting], .withoutOverwriting] {
                let file = "w-\(name)-\(extra.rawValue)"
                names.insert(file)
                let url = URL(fileURLWithPath: vault.path(file))
                try Data("first".utf8).writeProtected(to: url, options: options.union(extra))
                #expect(vault.protectionClass(of: file) == name, "\(file)")
                #expect(try Data(contentsOf: url) == Data("first".utf8))
                if extra.contains(.withoutOverwriting) {
                    let refusal = #expect(throws: CocoaError.self) {
                        try Data("again".utf8).writeProtected(to: url, options: options.union(extra))
                    }
                    #expect(refusal?.code == .fileWriteFileExists)
                    #expect(try Data(contentsOf: url) == Data("first".utf8))
                } else {
                    // Over an existing file of another class: the new class, the new bytes.
                    try Data("second".utf8).writeProtected(to: url, options: [.atomic, .noFileProtection])
                    try Data("third".utf8).writeProtected(to: url, options: options.union(extra))
                    #expect(vault.protectionClass(of: file) == name, "\(file)")
                    #expect(try Data(contentsOf: url) == Data("third".utf8))
                }
            }
        }
        #expect(try Self.strays(in: vault.mountpoint, expected: names) == [])
    }

    /// After `lock --now`: reading a `complete` file is 257, writing one 513, with the path;
    /// a refused atomic write leaves no temporary file; `none` still works.
    @Test func refusalsAfterALockAreFoundationsErrors() throws {
        let vault = try TestVault(protectionClass: "none")
        try vault.mount(in: .locked) {
            try Data("kept".utf8).writeProtected(to: URL(fileURLWithPath: vault.path("c")), options: [.atomic, .completeFileProtection])
            try ProtectedFileManager.default.createDirectory(atPath: vault.path("cd"), withIntermediateDirectories: false,
                                                             attributes: [.protectionKey: FileProtectionType.complete])
            try Data("unprotected".utf8).writeProtected(to: URL(fileURLWithPath: vault.path("o")), options: .noFileProtection)
        }
        defer { try? vault.unmount() }
        let complete = URL(fileURLWithPath: vault.path("c"))
        do {
            _ = try Data(contentsOf: complete)
            Issue.record("a locked complete file was read")
        } catch let error as CocoaError {
            #expect(error.code == .fileReadNoPermission)
            #expect(error.code.rawValue == 257)
        }
        let attempts: [(URL, Data.WritingOptions)] = [(complete, .completeFileProtection),
                               (complete, [.atomic, .completeFileProtection]),
                               (URL(fileURLWithPath: vault.path("cd/new")), [.atomic, .completeFileProtection]),
                               (URL(fileURLWithPath: vault.path("n")), [.atomic, .completeFileProtection])]
        for (url, options) in attempts {
            do {
                try Data("lost".utf8).writeProtected(to: url, options: options)
                Issue.record("a write in complete succeeded while locked: \(url.path)")
            } catch let error as CocoaError {
                #expect(error.code == .fileWriteNoPermission, "\(url.path): \(error)")
                #expect(error.code.rawValue == 513)
                #expect(error.userInfo[NSFilePathErrorKey] as? String == url.path)
            }
        }
        // A write in place that the lock refuses leaves the file as it was, not emptied.
        let open = URL(fileURLWithPath: vault.path("o"))
        let refusal = #expect(throws: CocoaError.self) {
            try Data("replaced".utf8).writeProtected(to: open, options: .completeFileProtection)
        }
        #expect(refusal?.code == .fileWriteNoPermission)
        #expect(try Data(contentsOf: open) == Data("unprotected".utf8))
        #expect(vault.protectionClass(of: "o") == "none")
        #expect(!ProtectedFileManager.default.createFile(atPath: vault.path("cd/made"), contents: Data("x".utf8),
                                                         attributes: [.protectionKey: FileProtectionType.complete]))
        try Data("open".utf8).writeProtected(to: URL(fileURLWithPath: vault.path("n")), options: [.atomic, .noFileProtection])
        #expect(vault.protectionClass(of: "n") == "none")
        #expect(try Self.strays(in: vault.mountpoint, expected: ["c", "cd", "n", "o"]) == [])
        #expect(try Self.strays(in: vault.path("cd"), expected: []) == [])
        try vault.unlock()
        #expect(try Data(contentsOf: complete) == Data("kept".utf8))
    }

    /// The mount that holds a path decides, not the first protfs mount above it: a tmpfs
    /// mounted inside the vault is off protfs.
    @Test func aMountInsideTheVaultIsNotProtfs() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        vault.check("mkdir inner && mount -t tmpfs -o size=1m protfs-test-inner inner")
        defer { vault.shell("umount inner") }
        #expect(throws: DataProtectionError.notOnProtfs(path: vault.path("inner/f"))) {
            try Data("x".utf8).writeProtected(to: URL(fileURLWithPath: vault.path("inner/f")), options: .completeFileProtection)
        }
        try Data("x".utf8).writeProtected(to: URL(fileURLWithPath: vault.path("beside")), options: .completeFileProtection)
        #expect(vault.protectionClass(of: "beside") == "complete")
    }

    /// Off protfs a class cannot be enforced: a clear error, unless the process opted in.
    @Test func outsideAMountTheClassIsRefusedUnlessOptedIn() throws {
        let directory = NSTemporaryDirectory() + "dp-off-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = URL(fileURLWithPath: directory + "/f")
        #expect(throws: DataProtectionError.notOnProtfs(path: file.path)) {
            try Data("x".utf8).writeProtected(to: file, options: [.atomic, .completeFileProtection])
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(throws: DataProtectionError.self) {
            try ProtectedFileManager.default.createDirectory(atPath: directory + "/d", withIntermediateDirectories: false,
                                                             attributes: [.protectionKey: FileProtectionType.complete])
        }
        try Data("x".utf8).write(to: file)
        #expect(throws: DataProtectionError.self) { try file.setFileProtection(.complete) }
        let message = "\(DataProtectionError.notOnProtfs(path: file.path))"
        #expect(message.contains("not on a protfs mount") && message.contains("outsideProtfs"))

        ProtectedFileManager.outsideProtfs = .ignore
        defer { ProtectedFileManager.outsideProtfs = .fail }
        try Data("y".utf8).writeProtected(to: file, options: [.atomic, .completeFileProtection])
        #expect(try Data(contentsOf: file) == Data("y".utf8))
        try file.setFileProtection(.complete)
        #expect(try file.fileProtection?.rawValue == nil)
        try ProtectedFileManager.default.createDirectory(atPath: directory + "/d", withIntermediateDirectories: false,
                                                         attributes: [.protectionKey: FileProtectionType.complete])
        #expect(try ProtectedFileManager.default.attributesOfItem(atPath: directory + "/d")[.protectionKey] == nil)
    }
}
