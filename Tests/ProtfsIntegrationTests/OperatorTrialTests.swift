import Foundation
import Glibc
import Testing

/// Issue 38, from the operator trial: `class set` on a plaintext file exited 0 and `class get`
/// then said `complete`; `mount.protfs` dropped `noexec`, `sync` and `lazytime`; a relative
/// `device_key=` mounted, then the daemon (working from `/`) made `vaults/ID.lock` in `/`.
@Suite("Operator trial", .serialized)
struct OperatorTrialTests {
    static let helper = CommandRunner.packageRoot.appendingPathComponent("mount-helpers/mount.protfs").path

    @Test("class set and class get refuse a path outside every protfs mount with exit 9, with -R too, and set nothing")
    func classOutsideProtfs() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let plain = vault.root.path + "/plain"
        try FileManager.default.createDirectory(atPath: plain + "/below", withIntermediateDirectories: true)
        try "plaintext\n".write(toFile: plain + "/below/file", atomically: true, encoding: .utf8)
        for arguments in [["set", "complete", plain + "/below/file"], ["set", "-R", "complete", plain],
                          ["get", plain + "/below/file"], ["get", plain, plain + "/below/file"]] {
            let result = vault.protfsctl(["class"] + arguments)
            #expect(result.status == 9 && result.stderr.contains("is not on a protfs mount"), "\(arguments): \(result.stderr)")
            #expect(!result.stdout.contains("complete"), "\(arguments): \(result.stdout)")
        }
        let attributes = CommandRunner.run("getfattr", ["-R", "-d", "-m", "-", plain])
        #expect(!attributes.stdout.contains("protfs"), "\(attributes.stdout)")
        // On the mount it works as before.
        #expect(vault.shell("echo x > f").succeeded)
        #expect(vault.protfsctl(["class", "set", "complete", vault.path("f")]).succeeded)
        #expect(vault.protfsctl(["class", "get", vault.path("f")]).stdout == "complete\n")
    }

    @Test("mount.protfs honours noexec, sync and dirsync, keeps them at a remount, and refuses lazytime and dev with the reason")
    func helperOptions() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        let built = URL(fileURLWithPath: TestVault.protfs).deletingLastPathComponent().path
        let environment = ["PATH": built + ":/usr/bin:/bin"]
        let own = "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile)"
        for refused in ["lazytime", "dev"] {
            let result = CommandRunner.run("/bin/sh", [Self.helper, vault.backing, vault.mountpoint, "-o", "\(own),\(refused)"],
                                           environment: environment, timeout: 60)
            #expect(result.status == 2 && result.stderr.contains("option '\(refused)' cannot be honoured"), "\(result.stderr)")
            #expect(!TestVault.isMounted(vault.mountpoint))
        }
        let mounted = CommandRunner.run("/bin/sh", [Self.helper, vault.backing, vault.mountpoint, "-o",
                                                    "\(own),noexec,sync,dirsync,nolazytime,nofail,x-systemd.automount"],
                                        environment: environment, timeout: 60)
        try #require(mounted.succeeded, "\(mounted.stderr)")
        let flags = Self.flags(of: vault.mountpoint)
        #expect(flags.isSuperset(of: ["noexec", "sync", "dirsync", "nosuid", "nodev"]), "\(flags)")
        // A remount as mount(8) runs it (the options the kernel shows, with ro) keeps them and
        // says nothing; a kernel flag it cannot change is named.
        let shown = flags.subtracting(["rw"]).sorted().joined(separator: ",")
        let readOnly = CommandRunner.run("/bin/sh", [Self.helper, vault.backing, vault.mountpoint, "-o", "ro,remount,\(shown)",
                                                     "-t", "fuse.protfs"], environment: environment)
        #expect(readOnly.succeeded && readOnly.stderr.isEmpty, "\(readOnly.stderr)")
        #expect(Self.flags(of: vault.mountpoint).isSuperset(of: ["ro", "noexec", "sync", "dirsync"]), "\(Self.flags(of: vault.mountpoint))")
        let exec = CommandRunner.run("/bin/sh", [Self.helper, vault.backing, vault.mountpoint, "-o", "rw,remount,exec"],
                                     environment: environment)
        #expect(exec.succeeded && exec.stderr.contains("these stay as mounted: exec"), "\(exec.stderr)")
        #expect(Self.flags(of: vault.mountpoint).isSuperset(of: ["rw", "noexec", "sync", "dirsync"]), "\(Self.flags(of: vault.mountpoint))")
        #expect(CommandRunner.run("fusermount3", ["-u", vault.mountpoint]).succeeded)
    }

    /// The options the kernel shows for the mount at `mountpoint`.
    static func flags(of mountpoint: String) -> Set<String> {
        let line = TestVault.mountTable.split(separator: "\n").first { $0.split(separator: " ").dropFirst().first == Substring(mountpoint) }
        return Set((line?.split(separator: " ").dropFirst(3).first ?? "").split(separator: ",").map(String.init))
    }

    @Test("a relative device_key is resolved before the daemon detaches: the vault unlocks, nothing appears in /")
    func relativeDeviceKey() throws {
        let vault = try TestVault()
        defer { try? vault.unmount() }
        let rootBefore = Set(try FileManager.default.contentsOfDirectory(atPath: "/"))
        let vaultsBefore = Set((try? FileManager.default.contentsOfDirectory(atPath: "/vaults")) ?? [])
        let relativeKey = String(vault.deviceKey.dropFirst(vault.root.path.count + 1))
        let mounted = CommandRunner.shell("cd '\(vault.root.path)' && '\(TestVault.protfs)' mount backing mnt -o device_key=\(relativeKey)")
        try #require(mounted.succeeded, "\(mounted.stderr)")
        #expect(vault.protfsctl(["unlock", vault.mountpoint], stdin: "a wrong passcode\n").status == 3)
        let unlock = vault.protfsctl(["unlock", vault.mountpoint], stdin: TestVault.passcode + "\n")
        #expect(unlock.succeeded, "\(unlock.stderr)")
        #expect(Set(try FileManager.default.contentsOfDirectory(atPath: "/")) == rootBefore)
        #expect(Set((try? FileManager.default.contentsOfDirectory(atPath: "/vaults")) ?? []) == vaultsBefore)
        #expect(CommandRunner.run("fusermount3", ["-u", vault.mountpoint]).succeeded)
    }
}
