import Foundation
import ProtfsTestSupport
import Testing

/// docs/OPERATIONS.md's TPM on real mounts, each test with a swtpm of its own: a vault whose
/// device key the TPM sealed serves every class, a copy of it opens nothing on another TPM,
/// wrong passcodes are counted by the TPM into lockout, a bound PCR changed stops the mount.
@Suite("TPM-sealed vaults (swtpm)", .serialized)
struct TPMTests {
    static let contents = "sealed by the TPM"
    static let sealedMagic = Array("PFTPMSLD".utf8)

    /// `protfs init --tpm2` of a fresh TestVault on `tpm`, with `extra` arguments.
    static func sealedVault(on tpm: SoftwareTPM, _ extra: [String] = []) throws -> TestVault {
        let vault = try TestVault(initialize: false)
        let result = CommandRunner.run(TestVault.protfs, ["init", vault.backing, "--device-key", vault.deviceKey, "--tpm2",
                                                          "--passcode-file", vault.passcodeFile, "--kdf", "interactive"] + extra,
                                       environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
        guard result.succeeded else { throw TestFailure("init --tpm2 failed (\(result.status)): \(result.stderr)") }
        #expect(result.stderr.contains("cleared or replaced TPM loses the vault"), "\(result.stderr)")
        vault.daemonEnvironment = ["PROTFS_TEST_DELAY_SCALE": "0.01"]
        return vault
    }

    static func status(_ vault: TestVault) throws -> [String: Any] {
        let result = vault.protfsctl(["status", vault.mountpoint, "--json"])
        return try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test("a vault made with --tpm2 mounts and serves every class and an item; the key file is a sealed blob, not the key")
    func sealedVaultServesEveryClass() throws {
        let tpm = try SoftwareTPM()
        let vault = try Self.sealedVault(on: tpm)
        let keyFile = try [UInt8](Data(contentsOf: URL(fileURLWithPath: vault.deviceKey)))
        #expect(keyFile.starts(with: Self.sealedMagic) && keyFile.count != 32)
        try vault.mount(options: ["tpm2_tcti=\(tpm.tcti)"])
        defer { try? vault.unmount() }
        try vault.makeClassDirectories(holding: ["f": Self.contents])
        #expect(vault.item("add", ["--service", "tpm", "--account", "a", "--accessible", "whenUnlocked"], stdin: "item secret").succeeded)
        try vault.lock(now: true)
        try vault.unlock()
        for protectionClass in TestVault.classNames {
            let file = vault.path("\(TestVault.classDirectory(protectionClass))/f")
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == Self.contents, "\(protectionClass)")
        }
        #expect(vault.item("get", ["--service", "tpm", "--account", "a"]).stdout == "item secret")
        #expect(try Self.status(vault)["passcodeCountedByTPM"] as? Bool == true)

        // passwd reseals the passcode secret: the new passcode unlocks, the old one does not.
        let changed = vault.protfsctl(["passwd", vault.mountpoint], stdin: TestVault.passcode + "\na new passcode\n")
        #expect(changed.succeeded, "\(changed.stderr)")
        let newPasscode = try vault.secretFile("new", Array("a new passcode\n".utf8))
        let seals = try FileManager.default.contentsOfDirectory(atPath: vault.backing).filter { $0.hasPrefix("protfs.passcode-seal.") }
        #expect(seals == ["protfs.passcode-seal.2"])
        try vault.lock(now: true)
        #expect(vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", vault.passcodeFile]).status == 3)
        #expect(vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", newPasscode]).succeeded)

        // protfs passwd, unmounted, reseals it too.
        try vault.unmount()
        let offline = CommandRunner.run(TestVault.protfs, ["passwd", vault.backing, "--device-key", vault.deviceKey],
                                        stdin: "a new passcode\na third passcode\n", environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
        #expect(offline.succeeded, "\(offline.stderr)")
        let seals3 = try FileManager.default.contentsOfDirectory(atPath: vault.backing).filter { $0.hasPrefix("protfs.passcode-seal.") }
        #expect(seals3 == ["protfs.passcode-seal.3"])
        try "a third passcode\n".write(toFile: vault.passcodeFile, atomically: true, encoding: .utf8)
        try vault.mount(options: ["tpm2_tcti=\(tpm.tcti)"])
        #expect(try Self.status(vault)["state"] as? String == "unlocked")
    }

    @Test("a copy of the backing directory and of everything beside the device key opens nothing on another TPM")
    func copyOnAnotherTPMOpensNothing() throws {
        let first = try SoftwareTPM(), second = try SoftwareTPM()
        let vault = try Self.sealedVault(on: first)
        try vault.mount(options: ["tpm2_tcti=\(first.tcti)"])
        try vault.makeClassDirectories(holding: ["f": Self.contents])
        #expect(vault.item("add", ["--service", "tpm", "--account", "a", "--accessible", "always"], stdin: "item secret").succeeded)
        try vault.unmount()
        // The thief's machine: the whole tree (backing, key file, vault state) on another TPM.
        let copy = try TestVault(initialize: false)
        #expect(CommandRunner.shell("rm -rf \(copy.root.path) && cp -a \(vault.root.path) \(copy.root.path)").succeeded)
        let mount = CommandRunner.run(TestVault.protfs, ["mount", copy.backing, copy.mountpoint, "-f", "-o",
                                                         "device_key=\(copy.deviceKey),tpm2_tcti=\(second.tcti)"], timeout: 30)
        #expect(!mount.succeeded && mount.stderr.contains("sealed by another TPM"), "\(mount.status): \(mount.stderr)")
        #expect(!TestVault.isMounted(copy.mountpoint))
        let fsck = CommandRunner.run(TestVault.protfs, ["fsck", copy.backing, "--device-key", copy.deviceKey],
                                     environment: ["PROTFS_TPM2_TCTI": second.tcti])
        #expect(!fsck.succeeded && fsck.stderr.contains("sealed by another TPM"), "\(fsck.stderr)")
        // The original still opens on its own TPM.
        try vault.mount(options: ["tpm2_tcti=\(first.tcti)"])
        defer { try? vault.unmount() }
        #expect((try? String(contentsOfFile: vault.path("d-none/f"), encoding: .utf8)) == Self.contents)
    }

    @Test("wrong passcodes drive the TPM into lockout; the right one is then refused saying when; cleared, it unlocks")
    func dictionaryAttackLockout() throws {
        let tpm = try SoftwareTPM()
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-s", "-n", "3", "-t", "60", "-l", "60"]) == .exited(0))
        let vault = try Self.sealedVault(on: tpm)
        try vault.mount(options: ["tpm2_tcti=\(tpm.tcti)"])
        defer { try? vault.unmount() }
        try vault.lock(now: true)
        let wrong = try vault.secretFile("wrong", Array("not the passcode\n".utf8))
        for _ in 0..<3 {
            let refused = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", wrong])
            #expect(refused.status == 3, "\(refused.stderr)")
        }
        let right = vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", vault.passcodeFile])
        #expect(right.status == 4 && right.stderr.contains("dictionary-attack lockout")
                    && right.stderr.contains("next attempt can be made in at most 60 s"), "\(right.status): \(right.stderr)")
        #expect(try vault.state() == .locked)
        #expect(try Self.status(vault)["tpmLockoutRetryAfterSeconds"] as? Int == 60)
        #expect(vault.protfsctl(["status", vault.mountpoint]).stdout.contains("TPM lockout"))
        #expect(try tpm.tool("tpm2_dictionarylockout", ["-c"]) == .exited(0))
        try vault.unlock()
        #expect(try Self.status(vault)["tpmLockoutRetryAfterSeconds"] is NSNull)
    }

    @Test("a bound PCR extended: the mount fails naming the PCR, never a wrong passcode")
    func pcrBinding() throws {
        let tpm = try SoftwareTPM()
        let vault = try Self.sealedVault(on: tpm, ["--tpm2-pcrs=16"])
        try vault.mount(options: ["tpm2_tcti=\(tpm.tcti)"])
        try vault.unmount()
        #expect(try tpm.tool("tpm2_pcrextend", ["16:sha256=" + String(repeating: "ab", count: 32)]) == .exited(0))
        let mount = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-f", "-o",
                                                         "device_key=\(vault.deviceKey),tpm2_tcti=\(tpm.tcti)"], timeout: 30)
        #expect(!mount.succeeded && mount.stderr.contains("PCR 16 hold other values"), "\(mount.status): \(mount.stderr)")
        #expect(!mount.stderr.contains("passcode"), "\(mount.stderr)")
    }

    @Test("device-key --to tpm2 keeps every file and item; the old key file opens nothing; --to file moves it back")
    func moveToTheTPMAndBack() throws {
        let tpm = try SoftwareTPM()
        let vault = try TestVault()
        try vault.mount()
        try vault.makeClassDirectories(holding: ["f": Self.contents])
        for accessible in ["whenUnlocked", "alwaysThisDeviceOnly"] {
            #expect(vault.item("add", ["--service", "tpm", "--account", accessible, "--accessible", accessible],
                               stdin: "secret \(accessible)").succeeded)
        }
        let refused = CommandRunner.run(TestVault.protfs, ["device-key", vault.backing, "--device-key", vault.deviceKey, "--to", "tpm2",
                                                           "--passcode-file", vault.passcodeFile],
                                        environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
        #expect(refused.status == 2 && refused.stderr.contains("is mounted"), "\(refused.stderr)")
        try vault.unmount()
        let oldKey = vault.root.path + "/old.key"
        #expect(CommandRunner.shell("cp -p \(vault.deviceKey) \(oldKey)").succeeded)

        for target in ["tpm2", "file"] {
            let moved = CommandRunner.run(TestVault.protfs, ["device-key", vault.backing, "--device-key", vault.deviceKey, "--to", target,
                                                             "--passcode-file", vault.passcodeFile],
                                          environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
            #expect(moved.succeeded, "\(target): \(moved.stderr)")
            let keyFile = try [UInt8](Data(contentsOf: URL(fileURLWithPath: vault.deviceKey)))
            #expect(keyFile.starts(with: Self.sealedMagic) == (target == "tpm2"), "\(target)")
            try vault.mount(options: ["tpm2_tcti=\(tpm.tcti)"])
            for protectionClass in TestVault.classNames {
                let file = vault.path("\(TestVault.classDirectory(protectionClass))/f")
                #expect((try? String(contentsOfFile: file, encoding: .utf8)) == Self.contents, "\(target) \(protectionClass)")
            }
            for accessible in ["whenUnlocked", "alwaysThisDeviceOnly"] {
                #expect(vault.item("get", ["--service", "tpm", "--account", accessible]).stdout == "secret \(accessible)", "\(target)")
            }
            #expect(try Self.status(vault)["passcodeCountedByTPM"] as? Bool == (target == "tpm2"))
            try vault.unmount()
            let fsck = CommandRunner.run(TestVault.protfs, ["fsck", vault.backing, "--device-key", vault.deviceKey,
                                                            "--passcode-file", vault.passcodeFile],
                                         environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
            #expect(fsck.succeeded && !fsck.stdout.contains("foreign"), "\(target): \(fsck.stdout)\(fsck.stderr)")
            // The key the vault had first opens nothing of it now.
            let old = CommandRunner.run(TestVault.protfs, ["fsck", vault.backing, "--device-key", oldKey], stdin: "")
            #expect(!old.succeeded && old.stderr.contains("device key does not match"), "\(target): \(old.stderr)")
        }
    }

    @Test("no TPM at the TCTI, and a TPM whose owner hierarchy was cleared: each said in words, nothing changed")
    func absentAndClearedTPM() throws {
        let tpm = try SoftwareTPM()
        let vault = try Self.sealedVault(on: tpm)
        let keybag = try Data(contentsOf: URL(fileURLWithPath: vault.backing + "/protfs.keybag"))
        let absent = CommandRunner.run(TestVault.protfs, ["fsck", vault.backing, "--device-key", vault.deviceKey], stdin: "",
                                       environment: ["PROTFS_TPM2_TCTI": "swtpm:port=1"])
        #expect(!absent.succeeded && absent.stderr.contains("no TPM at swtpm:port=1"), "\(absent.stderr)")
        #expect(!absent.stderr.contains("ERROR:tcti"), "tpm2-tss's own log lines: \(absent.stderr)")
        #expect(try tpm.tool("tpm2_clear", []) == .exited(0))
        let cleared = CommandRunner.run(TestVault.protfs, ["fsck", vault.backing, "--device-key", vault.deviceKey], stdin: "",
                                        environment: ["PROTFS_TPM2_TCTI": tpm.tcti])
        #expect(!cleared.succeeded && cleared.stderr.contains("owner hierarchy was cleared"), "\(cleared.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: vault.backing + "/protfs.keybag")) == keybag)
    }
}
