import Foundation
import Testing

/// A bundle identifier on Linux (docs/DATAPROTECTION.md): Foundation reads the Info.plist
/// beside the executable; without one the library's application identifier is the
/// executable's name. Run on a copy of `DataProtectionIdioms` in a directory of its own.
@Suite("DataProtection: bundle identifiers")
struct BundleIdentifierTests {
    static func runCopy(in directory: URL, vault: TestVault) throws -> [String] {
        let copy = directory.appendingPathComponent("idioms-copy").path
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: CommandRunner.builtExecutable("DataProtectionIdioms"), toPath: copy)
        let run = CommandRunner.run(copy, ["--identity"], environment: ["PROTFS_KEYCHAIN": vault.mountpoint])
        #expect(run.succeeded, "\(run.stderr)")
        return run.stdout.split(separator: "\n").map(String.init)
    }

    /// A vault, and a directory of its own for the copy, both gone after `body`.
    static func withCopyDirectory(_ body: (URL, TestVault) throws -> Void) throws {
        let vault = try TestVault.mountedForExamples()
        defer { try? vault.unmount() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("protfs-bundle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try body(directory, vault)
    }

    @Test func withoutAnInfoPlistTheStandInIsTheExecutablesName() throws {
        try Self.withCopyDirectory { directory, vault in
            let lines = try Self.runCopy(in: directory, vault: vault)
            #expect(lines.prefix(3) == ["bundleIdentifier: nil", "applicationIdentifier: idioms-copy", "accessGroups: idioms-copy"])
            // As on iOS with a nil service, and saying why.
            let added = lines.last ?? ""
            #expect(added.hasPrefix("SecItemAdd: -50 ") && added.contains("kSecAttrService is nil"), "\(lines)")
        }
    }

    @Test func anInfoPlistBesideTheExecutableNamesTheBundle() throws {
        try Self.withCopyDirectory { directory, vault in
            let info: [String: Any] = ["CFBundleIdentifier": "com.example.idioms", "keychain-access-groups": ["TEAMID.shared"]]
            let plist = try PropertyListSerialization.data(fromPropertyList: info, format: .xml, options: 0)
            try plist.write(to: directory.appendingPathComponent("Info.plist"))
            let lines = try Self.runCopy(in: directory, vault: vault)
            #expect(lines == ["bundleIdentifier: com.example.idioms", "applicationIdentifier: com.example.idioms",
                              "accessGroups: com.example.idioms,TEAMID.shared", "SecItemAdd: 0 (No error.)"])
            let listed = vault.item("list", []).stdout
            #expect(listed.contains("com.example.idioms\tseed"), "\(listed)")
        }
    }
}
