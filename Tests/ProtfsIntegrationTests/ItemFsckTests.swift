import Foundation
import Glibc
import Testing

/// `protfs fsck` on keychain item records (docs/CONTROL.md, "protfs fsck checks items"): a
/// record copied over another's is damage in every run; a tampered secret is found when the
/// passcode opens its class; `--repair` moves both to protfs.lost+found and leaves the rest.
@Suite("protfs fsck of keychain items", .serialized)
struct ItemFsckTests {
    @Test func damagedRecordsAreFoundAndMovedAside() throws {
        let vault = try TestVault()
        try vault.mount()
        var names: [String: String] = [:]
        for account in ["kept", "swapped", "tampered", "locked away"] {
            let before = vault.itemRecords()
            try #require(vault.item("add", ["--service", "fsck", "--account", account], stdin: "secret of \(account)").succeeded)
            let name = try #require(vault.itemRecords().subtracting(before).first)
            names[account] = name
        }
        try vault.unmount()
        let directory = vault.itemsDirectory + "/"
        try FileManager.default.removeItem(atPath: directory + names["swapped"]!)
        try FileManager.default.copyItem(atPath: directory + names["kept"]!, toPath: directory + names["swapped"]!)
        var tampered = try Data(contentsOf: URL(fileURLWithPath: directory + names["tampered"]!))
        tampered[tampered.count - 1] ^= 0x01  // the secret's tag
        try tampered.write(to: URL(fileURLWithPath: directory + names["tampered"]!))

        let withoutPasscode = fsck(vault, passcode: false)
        #expect(withoutPasscode.status == 8, "\(withoutPasscode.stdout)\(withoutPasscode.stderr)")
        #expect(withoutPasscode.stdout.contains("protfs.items/\(names["swapped"]!)"))
        #expect(!withoutPasscode.stdout.contains(names["tampered"]!))
        #expect(withoutPasscode.stdout.contains("secrets of 3 keychain items"))

        let withPasscode = fsck(vault)
        #expect(withPasscode.status == 8)
        #expect(withPasscode.stdout.contains("protfs.items/\(names["tampered"]!)"), "\(withPasscode.stdout)")
        #expect(withPasscode.stdout.contains("4 keychain items"))

        let repair = fsck(vault, ["--repair"])
        #expect(repair.status == 0, "\(repair.stdout)\(repair.stderr)")
        #expect(vault.itemRecords() == [names["kept"]!, names["locked away"]!])
        #expect(fsck(vault).status == 0)

        try vault.mount()
        defer { try? vault.unmount() }
        #expect(vault.item("get", ["--service", "fsck", "--account", "kept"]).stdout == "secret of kept")
        #expect(vault.item("get", ["--service", "fsck", "--account", "swapped"]).status == 6)
        #expect(vault.item("list", []).stdout.split(separator: "\n").count == 2)
    }

    @Test func plantedNodesAreNeverOpened() throws {
        let vault = try TestVault()
        try vault.mount()
        try #require(vault.item("add", ["--service", "s", "--account", "a"], stdin: "kept").succeeded)
        let record = try #require(vault.itemRecords().first)
        try vault.unmount()
        // A FIFO under the record's own name (opening it would hang a reader) and one under
        // another record-like name.
        let fifo = vault.itemsDirectory + "/" + record
        try FileManager.default.moveItem(atPath: fifo, toPath: vault.root.path + "/record")
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(mkfifo(vault.itemsDirectory + "/" + String(repeating: "A", count: 43), 0o600) == 0)
        try vault.mount()
        let get = vault.item("get", ["--service", "s", "--account", "a"])
        #expect(get.status == 1 && get.stderr.contains("damaged"), "\(get.stderr)")
        #expect(vault.item("list", []).succeeded)
        try vault.unmount()
        let check = fsck(vault)
        #expect(check.status == 0 && check.stdout.contains("foreign"), "\(check.stdout)\(check.stderr)")
    }

    private func fsck(_ vault: TestVault, _ extra: [String] = [], passcode: Bool = true) -> CommandResult {
        var arguments = ["fsck", vault.backing, "--device-key", vault.deviceKey] + extra
        if passcode { arguments += ["--passcode-file", vault.passcodeFile] }
        return CommandRunner.run(TestVault.protfs, arguments)
    }
}
