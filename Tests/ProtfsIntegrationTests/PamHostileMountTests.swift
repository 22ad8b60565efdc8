import Foundation
import Glibc
import Testing

/// What a local user can put in pam_protfs's way through the mount table: FUSE mounts of
/// their own that look like vaults, or that hang whoever looks inside (docs/LOGIN.md).
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
        let decoys = try UnansweredFuseMounts(by: other, mountpoints: points)
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

    @Test("a FUSE mount nobody answers over /run/user/UID/protfs: the user's screen locker goes on without looking inside it, and says why")
    func aHangingRuntimeMount() throws {
        let user = try TestUser.withPassword("pfpam-hung", Self.password)
        defer { user.retire() }
        let vault = try TestVault()
        try vault.mount(for: user)
        // No socket in /run/protfs, so the module looks in the user's runtime directory.
        let aside = try SocketAside(vault)
        let runtime = try user.makeRuntimeSocketDirectory()
        let hung: UnansweredFuseMounts
        do { hung = try UnansweredFuseMounts(by: user, mountpoints: [runtime], seconds: 90) } catch {
            try? FileManager.default.removeItem(atPath: "/run/user/\(user.uid)")
            throw error
        }
        defer {
            hung.end()  // before anything looks inside
            try? FileManager.default.removeItem(atPath: "/run/user/\(user.uid)")
        }
        let stack = try PamStack(configuration: ["* *"], options: ["timeout=2"])
        // As the user's screen locker runs: wholly as the user, the one uid the mount lets in
        // (without allow_other FUSE refuses every other, root included). The runner's
        // deadline (60 s) only keeps a hang from hanging the tests: the mount holds for 90 s,
        // so a login that waited on it ends only after the runner gives up.
        let login = stack.pamtester(user, ["authenticate"], input: Self.password + "\n",
                                    wrapper: ["setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--init-groups"], timeout: 60)
        #expect(login.succeeded, "\(login.status): \(login.stderr)")
        #expect(hung.holding, "the mount was still unanswered when the login ended: nothing waited on it")
        #expect(stack.moduleLog.contains { $0.contains("\(vault.mountpoint): ") && $0.contains("which a mount covers") },
                "\(stack.wholeLog)")
        aside.restore()
    }
}
