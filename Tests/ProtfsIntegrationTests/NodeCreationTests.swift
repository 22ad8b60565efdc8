import Foundation
import Testing

/// What creating a node leaves behind: the mode the caller asked for, and nothing held open.
@Suite("Creating nodes", .serialized)
struct NodeCreationTests {
    @Test("mknod of regular files holds no descriptor: 500 mknod+unlink, and a removed file's space is freed")
    func mknodHoldsNothingOpen() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let daemon = try #require(vault.daemon).processIdentifier
        vault.check("python3 '\(TestScripts.path("mknod-releases-files.py"))' \(daemon) '\(vault.backing)'")
    }

}
