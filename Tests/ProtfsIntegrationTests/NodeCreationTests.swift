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
        vault.check("python3 '\(CommandRunner.scriptPath("mount/mknod-releases-files.py"))' \(daemon) '\(vault.backing)'")
    }

    @Test("files, mknod files, FIFOs, sockets and directories get the mode asked less the caller's umask, whatever the daemon's")
    func modesFollowTheCallersUmask() throws {
        let vault = try TestVault()
        // The daemon's own umask as strict as it gets: none of it may show.
        try vault.mount(launcher: ["/bin/sh", "-c", "umask 077 && exec \"$@\"", "sh"])
        defer { try? vault.unmount() }
        vault.check("python3 '\(CommandRunner.scriptPath("mount/creation-modes.py"))'")
    }
}
