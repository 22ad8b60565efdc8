import Foundation
import Glibc
import Testing

/// What a local user can put in pam_protfs's way through the mount table: FUSE mounts of
/// their own that look like vaults (docs/LOGIN.md).
@Suite(.enabled(if: geteuid() == 0, "accounts, /etc/pam.d and mounts for others need root"))
struct PamHostileMountTests {
    static let password = TestVault.passcode

    @Test("40 decoy fuse.protfs mounts another user made before the vault: the owner's login still unlocks it and the last logout locks it")
    func decoysAreSkipped() throws {
        let owner = try TestUser.withPassword("pfpam-decoyed", Self.password)
        defer { owner.retire() }
        let other = try TestUser.named("pfpam-decoyer")
        let directory = NSTemporaryDirectory() + "protfs-decoys-\(UUID().uuidString.prefix(8))"
        let points = (0..<40).map { directory + "/\($0)" }
        for point in points { try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true) }
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let decoys = try UnansweredFuseMounts(uid: other.uid, mountpoints: points)
        let vault = try TestVault()
        try vault.mount(for: owner)
        let stack = try PamStack(configuration: ["* *"])
        let login = stack.pamtester(owner, ["authenticate", "open_session", "close_session"], input: Self.password + "\n")
        #expect(login.succeeded, "\(login.stderr)")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): unlocked for pfpam-decoyed") }
                && stack.moduleLog.contains { $0.contains("\(vault.mountpoint): locked at the last logout for pfpam-decoyed") },
                "\(stack.wholeLog)")
        #expect(try vault.state() == .locked)
        #expect(stack.moduleLog.allSatisfy { !$0.contains(directory) }, "the decoys are never asked: \(stack.moduleLog)")
        withExtendedLifetime(decoys) {}
    }
}
