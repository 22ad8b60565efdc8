import Foundation
import ProtfsTestSupport
import Testing

/// docs/OPERATIONS.md's recovery key: a vault made with `--tpm2 --recovery-key`, its TPM lost,
/// opens with the recovery key and nothing else.
@Suite("TPM recovery keys (swtpm)", .serialized)
struct TPMRecoveryTests {
    static let contents = "recovered"
    static let items = ["whenUnlocked", "alwaysThisDeviceOnly"]

    /// `protfs init --tpm2 --recovery-key` of a fresh TestVault on `tpm`: the vault and the
    /// recovery key it printed. With a `passcode`, it is left mounted with a file in every class.
    static func recoverableVault(on tpm: SoftwareTPM, passcode: Bool = true) throws -> (TestVault, String) {
        let vault = try TestVault(initialize: false)
        let result = CommandRunner.run(TestVault.protfs, ["init", vault.backing, "--device-key", vault.deviceKey, "--tpm2",
                                                          "--recovery-key", "--kdf", "interactive"]
                                           + (passcode ? ["--passcode-file", vault.passcodeFile] : ["--no-passcode"]),
                                       environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
        guard result.succeeded else { throw TestFailure("init --tpm2 --recovery-key failed (\(result.status)): \(result.stderr)") }
        #expect(result.stderr.contains("shown once"), "\(result.stderr)")
        let key = try #require(result.stdout.split(separator: "\n").last.map(String.init))
        #expect(key.count == 80 && key.split(separator: "-").count == 9, "\(key)")
        vault.daemonEnvironment = ["PROTFS_TEST_DELAY_SCALE": "0.01"]
        if passcode {
            try vault.mount(options: ["tpm2_tcti=\(tpm.tcti)"])
            try vault.makeClassDirectories(holding: ["f": contents])
        }
        return (vault, key)
    }

    static func backingNames(_ vault: TestVault) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: vault.backing).filter { $0.hasPrefix("protfs.") }.sorted()
    }

    @Test("the TPM lost: the recovery key (and only it) moves the vault to a key file, every class and item there")
    func recoverOnAnotherTPM() throws {
        let first = try SoftwareTPM(), second = try SoftwareTPM()
        let (vault, recoveryKey) = try Self.recoverableVault(on: first)
        for accessible in Self.items {
            #expect(vault.item("add", ["--service", "r", "--account", accessible, "--accessible", accessible],
                               stdin: "secret \(accessible)").succeeded)
        }
        // A passcode changed later is sealed to the recovery key too, without it at hand.
        let changed = vault.protfsctl(["passwd", vault.mountpoint], stdin: TestVault.passcode + "\na new passcode\n")
        #expect(changed.succeeded, "\(changed.stderr)")
        try vault.unmount()
        let fsck = CommandRunner.run(TestVault.protfs, ["fsck", vault.backing, "--device-key", vault.deviceKey, "--passcode-file",
                                                        try vault.secretFile("new", Array("a new passcode\n".utf8))],
                                     environment: ["PROTFS_TPM2_TCTI": first.tcti])
        #expect(fsck.succeeded && !fsck.stdout.contains("foreign"), "\(fsck.stdout)\(fsck.stderr)")
        #expect(try Self.backingNames(vault).filter { $0.hasPrefix("protfs.passcode-seal.") || $0 == "protfs.recovery" }
                    == ["protfs.passcode-seal.2", "protfs.passcode-seal.2.recovery", "protfs.recovery"])

        // The first TPM is lost: the whole tree on a second one.
        let copy = try TestVault(initialize: false)
        #expect(CommandRunner.shell("rm -rf \(copy.root.path) && cp -a \(vault.root.path) \(copy.root.path)").succeeded)
        try "a new passcode\n".write(toFile: copy.passcodeFile, atomically: true, encoding: .utf8)
        let tcti = ["PROTFS_TPM2_TCTI": second.tcti]
        let without = CommandRunner.run(TestVault.protfs, ["device-key", copy.backing, "--device-key", copy.deviceKey, "--to", "file",
                                                           "--passcode-file", copy.passcodeFile], environment: tcti)
        #expect(!without.succeeded && without.stderr.contains("sealed by another TPM"), "\(without.stderr)")

        // A wrong recovery key (another vault's) and a mistyped one: refused, nothing changed.
        let (_, otherKey) = try Self.recoverableVault(on: second, passcode: false)
        let mistyped = String(recoveryKey.prefix(4)) + (recoveryKey.dropFirst(4).first == "c" ? "b" : "c") + recoveryKey.dropFirst(5)
        let keybag = try Data(contentsOf: URL(fileURLWithPath: copy.backing + "/protfs.keybag"))
        let keyFile = try Data(contentsOf: URL(fileURLWithPath: copy.deviceKey))
        for (wrong, words) in [(otherKey, "does not open this vault's protfs.recovery"), (mistyped, "checksum does not match")] {
            let file = try copy.secretFile("wrong-recovery", Array((wrong + "\n").utf8))
            let refused = CommandRunner.run(TestVault.protfs, ["device-key", copy.backing, "--device-key", copy.deviceKey, "--to", "file",
                                                               "--recovery-key-file", file, "--passcode-file", copy.passcodeFile],
                                            environment: tcti)
            #expect(!refused.succeeded && refused.stderr.contains("recovery key refused") && refused.stderr.contains(words),
                    "\(refused.stderr)")
            #expect(!refused.stderr.contains(wrong), "the key itself in a message")
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy.backing + "/protfs.keybag")) == keybag)
            #expect(try Data(contentsOf: URL(fileURLWithPath: copy.deviceKey)) == keyFile)
        }

        let right = try copy.secretFile("recovery", Array((recoveryKey + "\n").utf8))
        let moved = CommandRunner.run(TestVault.protfs, ["device-key", copy.backing, "--device-key", copy.deviceKey, "--to", "file",
                                                         "--recovery-key-file", right, "--passcode-file", copy.passcodeFile],
                                      environment: tcti)
        #expect(moved.succeeded, "\(moved.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: copy.deviceKey)).count == 32)
        #expect(try Self.backingNames(copy).filter { $0.hasPrefix("protfs.passcode-seal.") || $0 == "protfs.recovery" } == [])
        copy.daemonEnvironment = vault.daemonEnvironment
        try copy.mount()
        defer { try? copy.unmount() }
        for protectionClass in TestVault.classNames {
            let file = copy.path("\(TestVault.classDirectory(protectionClass))/f")
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == Self.contents, "\(protectionClass)")
        }
        for accessible in Self.items {
            #expect(copy.item("get", ["--service", "r", "--account", accessible]).stdout == "secret \(accessible)")
        }
        #expect(try TPMTests.status(copy)["passcodeCountedByTPM"] as? Bool == false)
        try copy.lock(now: true)
        try copy.unlock()
    }

    @Test("recovered onto a new TPM: the vault serves there, and the same recovery key still stands in for it")
    func recoverOntoANewTPM() throws {
        let first = try SoftwareTPM(), second = try SoftwareTPM()
        let (vault, recoveryKey) = try Self.recoverableVault(on: first)
        try vault.unmount()
        let recovery = try vault.secretFile("recovery", Array((recoveryKey + "\n").utf8))
        let tcti = ["PROTFS_TPM2_TCTI": second.tcti]
        let moved = CommandRunner.run(TestVault.protfs, ["device-key", vault.backing, "--device-key", vault.deviceKey, "--to", "tpm2",
                                                         "--recovery-key-file", recovery, "--passcode-file", vault.passcodeFile],
                                      environment: tcti)
        #expect(moved.succeeded && moved.stderr.contains("unless its recovery key stands in"), "\(moved.stderr)")
        #expect(try Self.backingNames(vault).contains("protfs.recovery"))
        try vault.mount(options: ["tpm2_tcti=\(second.tcti)"])
        #expect((try? String(contentsOfFile: vault.path("d-complete/f"), encoding: .utf8)) == Self.contents)
        #expect(try TPMTests.status(vault)["passcodeCountedByTPM"] as? Bool == true)
        try vault.unmount()
        // The second TPM lost in turn: the same recovery key opens the vault's new seals.
        let again = CommandRunner.run(TestVault.protfs, ["device-key", vault.backing, "--device-key", vault.deviceKey, "--to", "file",
                                                         "--recovery-key-file", recovery, "--passcode-file", vault.passcodeFile],
                                      environment: ["PROTFS_TPM2_TCTI": first.tcti])
        #expect(again.succeeded, "\(again.stderr)")
        try vault.mount()
        defer { try? vault.unmount() }
        #expect((try? String(contentsOfFile: vault.path("d-complete/f"), encoding: .utf8)) == Self.contents)
    }
}
