import Foundation
import Testing

/// `protfs mount` and `mount.protfs` as a user meets them: refusals, options, the
/// background daemon, SIGTERM.
@Suite("The mount command", .serialized)
struct MountCommandTests {
    func mount(_ vault: TestVault, _ extra: [String] = [], mountpoint: String? = nil) -> CommandResult {
        CommandRunner.run(TestVault.protfs, ["mount", vault.backing, mountpoint ?? vault.mountpoint, "-o",
                                             (["device_key=\(vault.deviceKey)", "passcode_file=\(vault.passcodeFile)"] + extra)
                                                .joined(separator: ",")], timeout: 60)
    }

    @Test("refuses nested, double and non-empty mount points, and names a bad option")
    func refusals() throws {
        let vault = try TestVault()
        let inside = vault.backing + "/inside"
        try FileManager.default.createDirectory(atPath: inside, withIntermediateDirectories: true)
        let nested = mount(vault, mountpoint: inside)
        #expect(nested.status == 1 && nested.stderr.contains("must not contain each other"), "\(nested.stderr)")
        try FileManager.default.removeItem(atPath: inside)

        _ = FileManager.default.createFile(atPath: vault.mountpoint + "/stray", contents: Data("x".utf8))
        let busy = mount(vault)
        #expect(busy.status == 1 && busy.stderr.contains("not empty"), "\(busy.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
        try FileManager.default.removeItem(atPath: vault.mountpoint + "/stray")

        let badUsage = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "--frobnicate"])
        #expect(badUsage.status == 2 && badUsage.stderr.contains("--frobnicate"), "\(badUsage.stderr)")
        let badValue = mount(vault, ["grace=soon"])
        #expect(badValue.status == 2 && badValue.stderr.contains("grace"), "\(badValue.stderr)")

        try vault.mount()
        defer { try? vault.unmount() }
        let twice = mount(vault, ["nonempty"])
        #expect(twice.status == 1 && twice.stderr.contains("already a protfs mount"), "\(twice.stderr)")
    }

    @Test("refuses strictatime with a usage error: reads from the page cache never reach the daemon")
    func refusesStrictAccessTimes() throws {
        let vault = try TestVault()
        let strict = mount(vault, ["strictatime"])
        #expect(strict.status == 2 && strict.stderr.contains("strictatime"), "\(strict.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
    }

    @Test("detaches once the mount is live, shows fuse.protfs, and SIGTERM unmounts cleanly")
    func backgroundAndSigterm() throws {
        let vault = try TestVault()
        let started = mount(vault)
        #expect(started.succeeded, "\(started.stderr)")
        #expect(TestVault.isMounted(vault.mountpoint))
        let mounts = (try? String(contentsOfFile: "/proc/mounts", encoding: .utf8)) ?? ""
        #expect(mounts.contains("\(vault.backing) \(vault.mountpoint) fuse.protfs "), "\(mounts)")
        #expect(CommandRunner.shell("echo live > '\(vault.path("f"))' && cat '\(vault.path("f"))'").stdout == "live\n")
        let status = CommandRunner.run(TestVault.protfsctl, ["status", "--json", vault.mountpoint])
        let pid = ((try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any])?["pid"] as? Int
        #expect(pid != nil, "\(status.stdout)\(status.stderr)")
        guard let pid else { return }
        // Detached: stdin, stdout and stderr are /dev/null, in a session of its own.
        let fds = CommandRunner.shell("readlink /proc/\(pid)/fd/0 /proc/\(pid)/fd/1 /proc/\(pid)/fd/2").stdout
        #expect(fds == "/dev/null\n/dev/null\n/dev/null\n", "\(fds)")
        kill(Int32(pid), SIGTERM)
        let deadline = Date().addingTimeInterval(15)
        while TestVault.isMounted(vault.mountpoint) && Date() < deadline { usleep(50_000) }
        #expect(!TestVault.isMounted(vault.mountpoint))
        while kill(Int32(pid), 0) == 0 && Date() < deadline { usleep(50_000) }
        #expect(kill(Int32(pid), 0) != 0, "the daemon exits after SIGTERM")
        try vault.mount()
        defer { try? vault.unmount() }
        #expect(CommandRunner.shell("cat '\(vault.path("f"))'").stdout == "live\n")
    }

    @Test("SIGTERM to a foreground daemon exits 0")
    func foregroundExitStatus() throws {
        let vault = try TestVault()
        try vault.mount()
        guard let daemon = vault.daemon else { return }
        kill(daemon.processIdentifier, SIGTERM)
        daemon.waitUntilExit()
        #expect(daemon.terminationStatus == 0, "\(vault.daemonOutput)")
        #expect(!TestVault.isMounted(vault.mountpoint))
    }

    @Test("mount.protfs maps mount(8)'s generic options, passes the access-time ones on, and mounts")
    func mountHelper() throws {
        let vault = try TestVault()
        let helper = CommandRunner.packageRoot.path + "/mount-helpers/mount.protfs"
        let bin = (TestVault.protfs as NSString).deletingLastPathComponent
        let options = "rw,defaults,nosuid,nodev,noatime,_netdev,nofail,x-systemd.automount,comment=vault,"
            + "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile),grace=3"
        let fake = CommandRunner.run("/bin/sh", [helper, vault.backing, vault.mountpoint, "-fv", "-o", options],
                                     environment: ["PATH": "\(bin):/usr/bin:/bin"])
        #expect(fake.succeeded && fake.stderr.contains("-o noatime,device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile),grace=3"),
                "\(fake.stderr)")
        #expect(!TestVault.isMounted(vault.mountpoint))
        let real = CommandRunner.run("/bin/sh", [helper, vault.backing, vault.mountpoint, "-o", options],
                                     environment: ["PATH": "\(bin):/usr/bin:/bin"], timeout: 60)
        #expect(real.succeeded, "\(real.stderr)")
        defer { _ = CommandRunner.run("fusermount3", ["-u", vault.mountpoint]) }
        let status = CommandRunner.run(TestVault.protfsctl, ["status", "--json", vault.mountpoint])
        #expect(status.stdout.contains("\"grace\":3") && status.stdout.contains("\"state\":\"unlocked\""), "\(status.stdout)")
    }
}
