import Foundation
import Glibc
import Testing

/// Issue 38: `status` counted the caller's items under the index lock that every item
/// request holds while it reads records, so four searches of another user made it take 7-9 s;
/// pam_protfs' status round timed out and the login did not unlock. Here each record a search
/// reads waits (`PROTFS_TEST_ITEM_RECORD_DELAY`), so searches hold the index for a minute.
@Suite("status beside item work", .serialized)
struct StatusBesideItemsTests {
    /// pam_protfs' default deadline for one round with the daemon (docs/LOGIN.md).
    static let pamRoundSeconds: TimeInterval = 5

    @Test("status answers within a login's deadline, with the caller's item count, while another uid's searches hold the index")
    func statusNeverWaitsOnItemWork() throws {
        let alice = try TestUser.named("protfs-alice"), bob = try TestUser.named("protfs-bob")
        let vault = try TestVault()
        vault.daemonEnvironment = ["PROTFS_TEST_ITEM_RECORD_DELAY": "15"]
        try vault.mount()
        defer { try? vault.unmount() }
        try #require(vault.item("add", ["--service", "mail", "--account", "alice"], as: alice.uid, stdin: "a").succeeded)
        for account in ["1", "2", "3", "4"] {
            try #require(vault.item("add", ["--service", "s", "--account", account], as: bob.uid, stdin: "b").succeeded)
        }
        let searches = (0 ..< 2).map { _ in
            let search = Process()
            search.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            search.arguments = ["--reuid=\(bob.uid)", "--regid=\(bob.gid)", "--clear-groups", TestVault.protfsctl,
                                "item", "list", vault.mountpoint]
            search.standardOutput = FileHandle.nullDevice
            search.standardError = FileHandle.nullDevice
            return search
        }
        for search in searches { try search.run() }
        defer {
            for search in searches where search.isRunning { kill(search.processIdentifier, SIGKILL) }
        }
        usleep(500_000)  // the searches hold the index: each waits 15 s before each of bob's 4 records
        for round in 0 ..< 3 {
            let status = CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(alice.uid)", "--regid=\(alice.gid)", "--clear-groups",
                                                                TestVault.protfsctl, "status", vault.mountpoint, "--json"],
                                           timeout: Self.pamRoundSeconds)
            #expect(status.succeeded, "round \(round): \(status.stderr)")
            let object = try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            #expect(object?["items"] as? Int == 1, "round \(round): \(status.stdout)")
        }
        let searching = searches.allSatisfy { $0.isRunning }
        #expect(searching, "the searches ended before status was asked: the test proves nothing")
    }
}
