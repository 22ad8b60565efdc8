import Foundation
import Glibc
import Testing

/// docs/CONTROL.md on real mounts, apart from the lock matrix (ItemLockMatrixTests): owners,
/// secrets byte-exact at every size, nothing secret left in the backing directory, the log or
/// the daemon's memory, records bound to their place and vault, and `kill -9` in the middle.
@Suite("Keychain items", .serialized)
struct ItemTests {
    @Test("another uid sees nothing of alice's items; root acts for her only with --uid, and the lock refuses it too")
    func ownersAreSeparate() throws {
        let alice = try TestUser.named("protfs-alice").uid, bob = try TestUser.named("protfs-bob").uid
        let vault = try TestVault()
        try vault.mount(options: ["grace=600"])
        defer { try? vault.unmount() }
        let identity = ["--service", "mail", "--account", "alice@example.org"]
        try #require(vault.item("add", identity + ["--label", "Mail"], as: alice, stdin: "alice's password").succeeded)
        #expect(vault.item("get", identity, as: alice).stdout == "alice's password")
        #expect(vault.item("list", [], as: alice).stdout.contains("alice@example.org"))

        #expect(vault.item("list", [], as: bob).stdout.isEmpty)
        #expect(vault.item("list", ["--json"], as: bob).stdout == "[]\n")
        for verb in ["get", "delete"] {
            let refused = vault.item(verb, identity, as: bob)
            #expect(refused.status == 6 && refused.stderr.contains("no item"), "\(verb): \(refused.stderr)")
        }
        #expect(vault.item("update", identity + ["--label", "mine"], as: bob).status == 6)
        // bob asking for alice by --uid is not root.
        let posing = vault.item("get", identity + ["--uid", String(alice)], as: bob)
        #expect(posing.status == 1 && posing.stderr.contains("not allowed"), "\(posing.stderr)")
        // Nor is root alice: its own list is empty, and with --uid it acts for her.
        #expect(vault.item("list", []).stdout.isEmpty)
        #expect(vault.item("get", identity).status == 6)
        #expect(vault.item("get", identity + ["--uid", String(alice)]).stdout == "alice's password")
        #expect(try vault.itemCount(as: alice) == 1)
        #expect(try vault.itemCount(as: bob) == 0)

        try vault.lock(now: true)
        let locked = vault.item("get", identity + ["--uid", String(alice)])
        #expect(locked.status == 5 && locked.stdout.isEmpty, "\(locked.stderr)")
        #expect(vault.item("get", identity, as: alice).status == 5)
        #expect(vault.item("list", ["--uid", String(alice)]).stdout.contains("Mail"))
        #expect(vault.item("get", identity, as: alice).stdout.isEmpty)
    }

    /// Root of a user namespace anybody can make is uid 0 there only: the daemon reads the
    /// peer's uid in its own namespace, so such a "root" owns nothing of root's, cannot act
    /// for another uid, and counts among the users who share one room (ItemStoreTests).
    @Test("unshare -Ur makes no root for items: the item is the user's, --uid is refused, root's items stay unseen")
    func aUserNamespaceRootIsNotRoot() throws {
        let user = try TestUser.named("protfs-items")
        let vault = try TestVault()
        try vault.mount(options: ["allow_other", "grace=600"])
        defer { try? vault.unmount() }
        let identity = ["--service", "ns", "--account", "a"]
        try #require(vault.item("add", identity, stdin: "root's").succeeded)
        let namespaced = "\(user.runs) unshare -Ur \(TestVault.protfsctl) item"
        let added = vault.shell("printf %s from-the-namespace | \(namespaced) add \(vault.mountpoint) \(identity.joined(separator: " "))")
        #expect(added.succeeded, "\(added.stderr)")
        #expect(vault.item("get", identity, as: user.uid).stdout == "from-the-namespace")
        #expect(vault.item("get", identity).stdout == "root's")
        let posing = vault.shell("\(namespaced) get \(vault.mountpoint) \(identity.joined(separator: " ")) --uid 0")
        #expect(posing.status == 1 && posing.stderr.contains("not allowed"), "\(posing.stderr)")
        #expect(try vault.itemCount(as: user.uid) == 1)
    }

    @Test("secrets of 0 bytes, binary with NUL and newlines, and 64 KiB round-trip byte-exact; 64 KiB + 1 is a usage error")
    func secretsRoundTripByteExact() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let secrets: [(String, [UInt8])] = [
            ("empty", []),
            ("binary", [0x00, 0x0A, 0x0A, 0x00, 0xFF, 0x0D, 0x0A, 0x20, 0x00]),
            ("largest", (0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }),
        ]
        for (account, bytes) in secrets {
            let file = try vault.secretFile("in-\(account)", bytes)
            try #require(vault.item("add", ["--service", "sizes", "--account", account, "--secret-file", file]).succeeded)
            let out = vault.root.path + "/out-\(account)"
            let get = CommandRunner.shell("'\(TestVault.protfsctl)' item get '\(vault.mountpoint)' --service sizes "
                                          + "--account \(account) > '\(out)' && cmp '\(file)' '\(out)'")
            #expect(get.succeeded, "\(account): \(get.stdout)\(get.stderr)")
            // Standard input too, byte-exact (nothing stripped).
            let viaStdin = CommandRunner.shell("'\(TestVault.protfsctl)' item update '\(vault.mountpoint)' --service sizes "
                                               + "--account \(account) --secret-stdin < '\(file)' && '\(TestVault.protfsctl)' item get "
                                               + "'\(vault.mountpoint)' --service sizes --account \(account) | cmp '\(file)' -")
            #expect(viaStdin.succeeded, "\(account) via stdin: \(viaStdin.stdout)\(viaStdin.stderr)")
            let json = vault.item("get", ["--service", "sizes", "--account", account, "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
            #expect((object?["secret"] as? String).flatMap { Data(base64Encoded: $0) } == Data(bytes), "\(account) as JSON")
        }
        let tooLarge = try vault.secretFile("in-too-large", [UInt8](repeating: 0x41, count: 65537))
        let refused = vault.item("add", ["--service", "sizes", "--account", "too large", "--secret-file", tooLarge])
        #expect(refused.status == 2 && refused.stderr.contains("file of the same class"), "\(refused.stderr)")
        #expect(vault.item("get", ["--service", "sizes", "--account", "too large"]).status == 6)
        let updateRefused = vault.item("update", ["--service", "sizes", "--account", "empty", "--secret-file", tooLarge])
        #expect(updateRefused.status == 2)
    }

    @Test("Apple's constants are aliases, always warns, and usage mistakes are exit 2")
    func spellingsWarningsAndUsage() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let always = vault.item("add", ["--service", "s", "--account", "a", "--accessible", "kSecAttrAccessibleAlwaysThisDeviceOnly"],
                                stdin: "x")
        #expect(always.succeeded && always.stderr.contains("deprecated by Apple"), "\(always.stderr)")
        #expect(vault.item("list", []).stdout == "s\ta\talwaysThisDeviceOnly\t\n")
        let quiet = vault.item("add", ["--service", "s", "--account", "b", "--accessible", "kSecAttrAccessibleAfterFirstUnlock"],
                               stdin: "x")
        #expect(quiet.succeeded && quiet.stderr.isEmpty, "\(quiet.stderr)")
        #expect(vault.item("add", ["--service", "s", "--account", "c", "--accessible", "whenunlocked"], stdin: "x").status == 2)
        #expect(vault.item("add", ["--account", "c"], stdin: "x").status == 2)
        #expect(vault.item("get", ["--service", "s", "--account", "a", "--uid", "alice"]).status == 2)
        #expect(vault.item("update", ["--service", "s", "--account", "a", "--secret-stdin", "--secret-file", "/dev/null"]).status == 2)
        #expect(vault.item("add", ["--service", "s", "--account", "a"], stdin: "again").status == 7)
        #expect(vault.item("delete", ["--service", "s", "--account", "nobody"]).status == 6)
    }

    @Test("--attributes: kept, shown, searched while locked, changed by update; not JSON is exit 2")
    func lookupAttributes() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let attributes = #"{"xdg:schema":"org.example.Mail","user":"alice"}"#
        try #require(vault.item("add", ["--service", "mail", "--account", "a", "--attributes", attributes], stdin: "x").succeeded)
        try #require(vault.item("add", ["--service", "web", "--account", "a", "--attributes", #"{"user":"alice"}"#], stdin: "y").succeeded)
        try #require(vault.protfsctl(["lock", vault.mountpoint, "--now"]).succeeded)
        #expect(vault.item("list", ["--attributes", #"{"user":"alice"}"#]).stdout
            == "mail\ta\twhenUnlocked\t\tuser=alice\txdg:schema=org.example.Mail\nweb\ta\twhenUnlocked\t\tuser=alice\n")
        let json = vault.item("list", ["--attributes", #"{"xdg:schema":"org.example.Mail"}"#, "--json"])
        let objects = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]]
        #expect(objects?.count == 1 && objects?.first?["attributes"] as? [String: String] == ["xdg:schema": "org.example.Mail", "user": "alice"])
        try #require(vault.item("update", ["--service", "web", "--account", "a", "--attributes", #"{"user":"bob"}"#]).succeeded)
        #expect(vault.item("list", ["--attributes", #"{"user":"bob"}"#]).stdout.hasPrefix("web\ta\t"))
        #expect(vault.item("list", ["--attributes", "user=bob"]).status == 2)
    }

    @Test("no secret in the backing directory, the daemon's log, or its memory after the lock")
    func noSecretLeftAnywhere() throws {
        let vault = try TestVault()
        try vault.mount(options: ["grace=600"])
        defer { try? vault.unmount() }
        let pid = try #require(vault.daemon?.processIdentifier)
        let marker = (0..<32).map { _ in UInt8.random(in: 0...255) }
        let file = try vault.secretFile("marker", marker)
        try #require(vault.item("add", ["--service", "hygiene", "--account", "a", "--secret-file", file]).succeeded)
        try #require(vault.item("update", ["--service", "hygiene", "--account", "a", "--secret-file", file]).succeeded)
        for _ in 0..<3 { try #require(vault.item("get", ["--service", "hygiene", "--account", "a", "--json"]).succeeded) }
        try FileManager.default.removeItem(atPath: file)

        let markerHex = marker.map { String(format: "%02x", $0) }.joined()
        let backing = CommandRunner.python("""
            import os, sys
            marker = bytes.fromhex(sys.argv[2])
            for top, _, names in os.walk(sys.argv[1]):
                for name in names:
                    with open(os.path.join(top, name), "rb") as f:
                        assert marker not in f.read(), name
            """, [vault.backing, markerHex])
        #expect(backing.succeeded, "\(backing.stderr)")
        #expect(!Data(vault.daemonOutput.utf8).contains(Data(marker)))

        let whileUnlocked = try SecretHygieneTests().scan(pid, for: [("the secret", marker)])
        #expect(whileUnlocked.isEmpty, "found after the requests, while unlocked")
        try vault.lock(now: true)
        let afterTheLock = try SecretHygieneTests().scan(pid, for: [("the secret", marker)])
        #expect(afterTheLock.isEmpty, "found after the lock")
    }

    @Test("a record copied over another's, or into another vault, is refused as damage")
    func recordsAreBoundToTheirPlace() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try #require(vault.item("add", ["--service", "s", "--account", "first"], stdin: "first secret").succeeded)
        let first = vault.itemRecords()
        try #require(vault.item("add", ["--service", "s", "--account", "second"], stdin: "second secret").succeeded)
        let second = try #require(vault.itemRecords().subtracting(first).first)
        let firstName = try #require(first.first)
        try FileManager.default.removeItem(atPath: vault.itemsDirectory + "/" + second)
        try FileManager.default.copyItem(atPath: vault.itemsDirectory + "/" + firstName, toPath: vault.itemsDirectory + "/" + second)
        let swapped = vault.item("get", ["--service", "s", "--account", "second"])
        #expect(swapped.status == 1 && swapped.stderr.contains("damaged") && swapped.stdout.isEmpty, "\(swapped.stderr)")
        #expect(vault.item("get", ["--service", "s", "--account", "first"]).stdout == "first secret")
        #expect(vault.daemonOutput.contains("item record protfs.items/\(second) is damaged"))

        // Another vault with the same device key: the same owner, service and account there.
        let other = try TestVault(initialize: false)
        other.backing = other.root.path + "/backing"
        try FileManager.default.createDirectory(atPath: other.root.path + "/keys", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: vault.deviceKey, toPath: other.deviceKey)
        try other.initialize()
        try other.mount()
        defer { try? other.unmount() }
        try #require(other.item("add", ["--service", "s", "--account", "first"], stdin: "its own").succeeded)
        let otherName = try #require(other.itemRecords().first)
        try FileManager.default.removeItem(atPath: other.itemsDirectory + "/" + otherName)
        try FileManager.default.copyItem(atPath: vault.itemsDirectory + "/" + firstName, toPath: other.itemsDirectory + "/" + otherName)
        let moved = other.item("get", ["--service", "s", "--account", "first"])
        #expect(moved.status == 1 && moved.stderr.contains("damaged"), "\(moved.stderr)")
    }

    @Test("kill -9 of the daemon during add and update leaves the old item or the new one")
    func killDuringAddAndUpdate() throws {
        let vault = try TestVault()
        let old = [UInt8](repeating: 0x6F, count: 65536)
        let new = [UInt8](repeating: 0x6E, count: 65536)
        let oldFile = try vault.secretFile("old", old)
        let newFile = try vault.secretFile("new", new)
        try vault.mount()
        try #require(vault.item("add", ["--service", "crash", "--account", "updated", "--secret-file", oldFile]).succeeded)
        var outcomes: [String: Int] = [:]
        // Each delay once for an update of an item holding `old` (put back after each round)
        // and once for an add: from before the request arrives to after its reply.
        let rounds = ["0", "0.002", "0.005", "0.01", "0.03", "0.2"].flatMap { [("update", $0), ("add", $0)] }
        for (round, (verb, delay)) in rounds.enumerated() {
            let pid = try #require(vault.daemon?.processIdentifier)
            let (account, before): (String, [[UInt8]?]) = verb == "update" ? ("updated", [old, new]) : ("added \(round)", [nil, new])
            if verb == "update" {
                let reset = vault.item("update", ["--service", "crash", "--account", "updated", "--secret-file", oldFile])
                try #require(reset.succeeded, "\(reset.stderr)")
            }
            let kill = CommandRunner.script("commands/item-update-kill.sh", [TestVault.protfsctl, vault.mountpoint, String(pid), verb,
                                                                    account, newFile, delay])
            try #require(kill.succeeded, "\(kill.stderr)")
            try vault.unmount()
            try vault.mount()
            let out = vault.root.path + "/after"
            let get = CommandRunner.shell("'\(TestVault.protfsctl)' item get '\(vault.mountpoint)' --service crash "
                                          + "--account '\(account)' > '\(out)'")
            #expect(get.status == 0 || get.status == 6, "\(account): \(get.stderr)")
            let found: [UInt8]? = get.status == 0 ? Array(try Data(contentsOf: URL(fileURLWithPath: out))) : nil
            #expect(before.contains(found), "\(account) after a kill at \(delay) s holds neither the old nor the new secret")
            outcomes["\(verb): " + (found == new ? "new" : found == nil ? "none" : "old"), default: 0] += 1
        }
        try vault.unmount()
        // Housekeeping: fsck removes temporaries a kill left; nothing is damage.
        let fsck = CommandRunner.run(TestVault.protfs, ["fsck", vault.backing, "--device-key", vault.deviceKey,
                                                       "--passcode-file", vault.passcodeFile])
        #expect(fsck.status == 0, "\(fsck.stdout)\(fsck.stderr)")
        print("item kill outcomes: \(outcomes)")
    }
}
