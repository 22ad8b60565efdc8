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

    /// An observer registered by the notification's raw string, in a program that names no
    /// notification of the library and calls `SecItemCopyMatching` once, fires for a lock.
    @Test func rawNameObserversFire() throws {
        let vault = try TestVault.mountedForExamples()
        defer { try? vault.unmount() }
        let program = try LineStream("/usr/bin/env", ["PROTFS_KEYCHAIN=\(vault.mountpoint)",
                                                      CommandRunner.builtExecutable("DataProtectionIdioms"), "--raw-observer"])
        defer { program.stop() }
        #expect(program.waitForLines(2, seconds: 60) == ["SecItemCopyMatching: -25300", "ready"])
        try vault.lock()
        #expect(program.waitForExit(seconds: 90) == 0)
        #expect(program.lines.dropFirst(2).first == "raw-name observer: UIApplicationProtectedDataWillBecomeUnavailable")
    }
}
