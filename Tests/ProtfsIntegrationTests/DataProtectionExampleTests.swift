import Foundation
import Testing

/// `Examples/DataProtectionExample`, iOS snippets with only the import changed, run on a real
/// mount: set up while unlocked, then what it can and cannot read once the vault locks.
@Suite("DataProtection: the example program")
struct DataProtectionExampleTests {
    @Test func theExampleRunsAcrossALock() throws {
        let vault = try TestVault.mountedForExamples()
        defer { try? vault.unmount() }
        let example = try vault.startExample("DataProtectionExample")
        defer { example.stop() }
        #expect(example.waitForLines(4, seconds: 30) == [
            "notes.txt: NSFileProtectionComplete", "SecItemAdd: 0", "SecItemCopyMatching: 0, token s3cr3t-token",
            "ready: lock the vault now (protfsctl lock \(vault.mountpoint))",
        ])
        try vault.lock()
        #expect(example.waitForExit(seconds: 60) == 0)
        #expect(Array(example.lines.dropFirst(4)) == [
            "protectedDataWillBecomeUnavailable: closed notes.txt",
            "read notes.txt: refused, CocoaError 257",
            "read cache.txt: public cache",
            "write notes.txt: refused, CocoaError 513",
            "SecItemCopyMatching: -25308",
            "isProtectedDataAvailable: false",
        ])
        #expect(vault.protectionClass(of: "app/Documents") == "complete")
        #expect(vault.protectionClass(of: "app/cache.txt") == "none")
    }
}
