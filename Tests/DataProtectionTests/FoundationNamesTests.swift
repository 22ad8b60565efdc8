import DataProtection
import Foundation
import Testing

/// Foundation's names as iOS code uses them, meaning the protecting ones with `import
/// DataProtection`.
@Suite struct FoundationNamesTests {
    /// Foundation's own manager returns success here and does nothing; the name
    /// `FileManager` now means the protecting one, which refuses a class it cannot enforce.
    @Test func theNameFileManagerIsTheProtectingManager() throws {
        let directory = Foundation.FileManager.default.temporaryDirectory.appendingPathComponent("pfios-\(UUID())")
        try Foundation.FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? Foundation.FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("notes.txt").path
        #expect(!FileManager.default.createFile(atPath: path, contents: Data("x".utf8),
                                                attributes: [.protectionKey: FileProtectionType.complete]))
        #expect(Foundation.FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        #expect(throws: DataProtectionError.notOnProtfs(path: path)) {
            try FileManager.default.setAttributes([.protectionKey: FileProtectionType.complete], ofItemAtPath: path)
        }
    }

    /// `FileManager()` was ambiguous (two types named `FileManager`, two `init()`): it is a
    /// new protecting manager, not the shared one.
    @Test func anInitialisedFileManagerIsAProtectingOne() throws {
        let manager = FileManager()
        #expect(manager !== FileManager.default)
        let path = Foundation.FileManager.default.temporaryDirectory.appendingPathComponent("pfios-\(UUID())").path
        #expect(throws: DataProtectionError.notOnProtfs(path: path)) {
            try manager.createDirectory(atPath: path, withIntermediateDirectories: false,
                                        attributes: [.protectionKey: FileProtectionType.complete])
        }
    }

    @Test func protectionTypesCompareSwitchAndHash() {
        let classes: Set<FileProtectionType> = [.complete, .completeUnlessOpen, .complete]
        #expect(classes.count == 2)
        #expect(URLFileProtection.complete == FileProtectionType.complete)
        let name: String = switch FileProtectionType.completeUntilFirstUserAuthentication {
        case .complete: "complete"
        case .completeUntilFirstUserAuthentication: "untilFirstUserAuthentication"
        default: "other"
        }
        #expect(name == "untilFirstUserAuthentication")
        #expect(URLResourceKey.fileProtectionKey.rawValue == "NSURLFileProtectionKey")
    }
}
