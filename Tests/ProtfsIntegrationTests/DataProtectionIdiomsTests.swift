import Foundation
import Testing

/// `Examples/DataProtectionIdioms`: iOS code with only its import changed (the seeds' four
/// snippets and the rest of the vocabulary), run on a real mount across a lock, each outcome
/// iOS's.
@Suite("DataProtection: iOS idioms unchanged")
struct DataProtectionIdiomsTests {
    @Test func theSeedsProtectAcrossALock() throws {
        let vault = try TestVault.mountedForExamples()
        defer { try? vault.unmount() }
        let program = try vault.startExample("DataProtectionIdioms")
        defer { program.stop() }
        #expect(program.waitForLines(8, seconds: 60) == [
            "classed.txt: complete", "createFile: true", "resource.txt: complete", "SecItemAdd: 0",
            "SecItemCopyMatching: 0, hunter2", "isProtectedDataAvailable: true", "idioms: ok", "ready",
        ])
        try vault.lock()
        #expect(program.waitForExit(seconds: 60) == 0)
        #expect(Array(program.lines.dropFirst(8)) == [
            "protectedDataWillBecomeUnavailable",
            "isProtectedDataAvailable: false",
            "read classed.txt: CocoaError 257",
            "read created.txt: CocoaError 257",
            "read resource.txt: CocoaError 257",
            "SecItemCopyMatching: -25308 (User interaction is not allowed.)",
        ])
        for file in ["classed.txt", "created.txt", "resource.txt"] {
            #expect(vault.protectionClass(of: "app/\(file)") == "complete", "\(file)")
        }
    }
}
