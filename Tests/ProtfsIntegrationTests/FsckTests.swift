import Foundation
import Testing

/// `protfs fsck` as a user runs it, on vaults written through real mounts.
@Suite("protfs fsck", .serialized)
struct FsckTests {
    /// A file whose backing object is found by its size: 50000 plaintext bytes are 12 full
    /// chunks and one of 848 bytes after the 328-byte header.
    static let damagedSize = 50000
    static let damagedBackingSize = 328 + 12 * 4136 + 848 + 40

    func fsck(_ vault: TestVault, _ extra: [String] = [], passcode: Bool = true, timeout: TimeInterval = 60) -> CommandResult {
        var arguments = ["fsck", vault.backing, "--device-key", vault.deviceKey] + extra
        if passcode { arguments += ["--passcode-file", vault.passcodeFile] }
        return CommandRunner.run(TestVault.protfs, arguments, timeout: timeout)
    }

    /// Runs fsck and expects its exit status and `text` in what it prints.
    func expectFsck(_ vault: TestVault, _ extra: [String] = [], status: Int32, saying text: String,
                    sourceLocation: SourceLocation = #_sourceLocation) {
        let result = fsck(vault, extra)
        #expect(result.status == status, "\(result.stdout)\(result.stderr)", sourceLocation: sourceLocation)
        #expect(result.stdout.contains(text), "\(result.stdout)", sourceLocation: sourceLocation)
    }

    /// Mounts, writes a small tree (one file of `damagedSize` bytes), and unmounts.
    func populate(_ vault: TestVault) throws {
        try vault.mount()
        defer { try? vault.unmount() }
        let result = CommandRunner.script("fsck/make-fsck-tree.sh", [vault.mountpoint, String(Self.damagedSize)])
        #expect(result.succeeded, "\(result.stdout)\(result.stderr)")
    }

    /// Issue 15: a deleted wrong-passcode record was a fresh one, its counter at zero.
    @Test("a deleted wrong-passcode record refuses passcodes until restored or re-created by --repair")
    func missingAttemptRecord() throws {
        let vault = try TestVault()
        let states = vault.root.path + "/keys/vaults"
        let record = try #require(try FileManager.default.contentsOfDirectory(atPath: states).first { $0.hasSuffix(".state") })
        try FileManager.default.removeItem(atPath: states + "/" + record)
        let mount = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-o",
                                                         "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile)"])
        #expect(mount.status == 1 && mount.stderr.contains("the wrong-passcode record \(states)/\(record) of this vault is missing"),
                "\(mount.status): \(mount.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
        let check = fsck(vault)
        #expect(check.status == 8 && check.stdout.contains("damaged: the wrong-passcode record \(states)/\(record) is missing"),
                "\(check.status): \(check.stdout)\(check.stderr)")
        let repair = fsck(vault, ["--repair"])
        #expect(repair.status == 0 && repair.stdout.contains("repaired: the wrong-passcode record \(states)/\(record) was missing"),
                "\(repair.status): \(repair.stdout)\(repair.stderr)")
        let text = try String(contentsOfFile: states + "/" + record, encoding: .utf8)
        #expect(text.contains("\"failedAttempts\":0"), "the right passcode of the repair reset the counter: \(text)")
        try vault.mount()
        try vault.unmount()
    }

    @Test("a clean vault exits 0; without a passcode the protected classes are named as not checked")
    func cleanVault() throws {
        let vault = try TestVault()
        try populate(vault)
        let result = fsck(vault)
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("protfs fsck: checked 7 objects (3 files, 3 directories, 1 symlink)"), "\(result.stdout)")
        #expect(result.stdout.contains("0 damaged"))

        let withoutPasscode = fsck(vault, passcode: false)
        #expect(withoutPasscode.status == 0, "\(withoutPasscode.stdout)\(withoutPasscode.stderr)")
        #expect(withoutPasscode.stdout.contains("not checked without the passcode: contents of classes complete, completeUnlessOpen, "
                                                + "completeUntilFirstUserAuthentication (2 files)"), "\(withoutPasscode.stdout)")
    }

    @Test("a mounted vault is refused with a clear message and exit 1")
    func mountedVault() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let result = fsck(vault, timeout: 30)
        #expect(result.status == 1)
        #expect(result.stderr.contains("\(vault.backing) is in use by another protfs process"), "\(result.stderr)")
        #expect(result.stderr.contains("unmount it"))
        #expect(TestVault.isMounted(vault.mountpoint))
    }

    @Test("a tampered chunk exits 8 naming the plaintext path; --repair, then a clean run, and the mount serves the rest")
    func tamperedChunkThenRepair() throws {
        let vault = try TestVault()
        try populate(vault)
        let tamper = CommandRunner.script("fsck/flip-byte-of-sized-file.sh", [vault.backing, String(Self.damagedBackingSize)])
        #expect(tamper.succeeded, "\(tamper.stdout)\(tamper.stderr)")

        expectFsck(vault, status: 8, saying: "damaged: /docs/report.txt: chunk 1 of 13 (plaintext bytes from 4096) fails authentication")
        expectFsck(vault, ["--repair"], status: 0, saying: "moved to protfs.lost+found/")
        expectFsck(vault, status: 0, saying: "0 damaged")

        try vault.mount()
        defer { try? vault.unmount() }
        let check = CommandRunner.script("fsck/fsck-repaired-tree.sh", [vault.mountpoint])
        #expect(check.succeeded, "\(check.stdout)\(check.stderr)")
    }

    /// Symlinks as builds before format 2 wrote them (targets sealed to no location): the
    /// mount reads them, fsck counts them (no damage), `--repair` rewrites them in format 3,
    /// and every link resolves to the same target as before.
    @Test("format-1 symlinks read, are reported, and --repair rewrites them in format 3")
    func formatOneSymlinks() throws {
        let vault = try TestVault()
        let names = ["docs/link", "top", "long"]
        try vault.mount()
        let made = CommandRunner.script("mount/format-one-symlinks.sh", ["make", vault.mountpoint])
        try #require(made.succeeded, "\(made.stdout)\(made.stderr)")
        let targets = try names.map { try Array(Self.readLink(vault.path($0)).utf8) }
        let backing = try vault.backingPaths(of: names)
        let keys = try VaultKeys(of: vault)
        try vault.unmount()
        for (path, target) in zip(backing, targets) { try keys.rewriteInFormatOne(symlink: path, target: target) }
        let formatOne = try backing.map { try Self.readLink(vault.backing + "/" + $0) }
        #expect(formatOne.allSatisfy { !$0.hasPrefix("2.") } && formatOne[2].hasPrefix("@"), "\(formatOne), targets of \(targets.map(\.count)) bytes")

        try vault.mount()
        let read = CommandRunner.script("mount/format-one-symlinks.sh", ["verify", vault.mountpoint])
        #expect(read.succeeded, "format 1 still reads: \(read.stdout)\(read.stderr)")
        try vault.unmount()

        expectFsck(vault, status: 0, saying: "in format 1, their target not bound to their name: 3 symlinks (--repair rewrites them)")
        expectFsck(vault, ["--repair"], status: 0, saying: "3 symlinks rewritten in format 3")
        let formatThree = try backing.map { try Self.readLink(vault.backing + "/" + $0) }
        #expect(formatThree.allSatisfy { $0.hasPrefix("3.@") }, "\(formatThree)")
        let links = try FileManager.default.contentsOfDirectory(atPath: vault.backing + "/protfs.links")
        #expect(Set(links) == Set(formatThree.map { String($0.dropFirst(3)) }), "only the new targets are left: \(links)")
        let again = fsck(vault)
        #expect(again.status == 0 && !again.stdout.contains("format"), "\(again.stdout)\(again.stderr)")

        try vault.mount()
        defer { try? vault.unmount() }
        let resolved = CommandRunner.script("mount/format-one-symlinks.sh", ["verify", vault.mountpoint])
        #expect(resolved.succeeded, "after the upgrade: \(resolved.stdout)\(resolved.stderr)")
    }

    static func readLink(_ path: String) throws -> String {
        let result = CommandRunner.run("readlink", [path])
        guard result.succeeded else { throw TestFailure("readlink \(path): \(result.stderr)") }
        return String(result.stdout.dropLast())
    }
}
