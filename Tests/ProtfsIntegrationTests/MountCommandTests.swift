import Foundation
import Testing

/// `protfs mount` and `mount.protfs` as a user meets them: refusals, options, the
/// background daemon, SIGTERM.
@Suite("The mount command", .serialized)
struct MountCommandTests {
    func mount(_ vault: TestVault, _ extra: [String] = [], mountpoint: String? = nil) -> CommandResult {
        CommandRunner.run(TestVault.protfs, ["mount", vault.backing, mountpoint ?? vault.mountpoint, "-o",
                                             (["device_key=\(vault.deviceKey)", "passcode_file=\(vault.passcodeFile)"]
                                              + TestVault.transportOptions(besides: extra) + extra)
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
        // Beyond a day: refused at mount, not a trap at the first lock (issue 15).
        for option in ["grace=86401", "autolock=9223372036854775807"] {
            let tooLong = mount(vault, [option])
            #expect(tooLong.status == 2 && tooLong.stderr.contains("from 0 to 86400 (a day)"), "\(option): \(tooLong.stderr)")
            #expect(!TestVault.isMounted(vault.mountpoint))
        }

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
        let mounts = TestVault.mountTable
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

    /// The pid of the daemon answering on the vault's control socket, nil if none does.
    func daemonPID(_ vault: TestVault) -> Int32? {
        let status = CommandRunner.run(TestVault.protfsctl, ["status", "--json", vault.mountpoint], timeout: 10)
        let object = (try? JSONSerialization.jsonObject(with: Data(status.stdout.utf8))) as? [String: Any]
        return (object?["pid"] as? Int).map(Int32.init)
    }

    /// Ends every daemon of the vault, hung or not, and clears its mount: a failing test must
    /// not leave one spinning.
    func stopDaemons(of vault: TestVault) {
        let daemons = daemons(of: vault)
        if daemons.isEmpty {
            _ = CommandRunner.run("fusermount3", ["-u", vault.mountpoint], timeout: 15)
        } else {
            daemons.forEach { kill($0, SIGKILL) }
            TestVault.abortConnection(vault.mountpoint)
        }
        let deadline = Date().addingTimeInterval(10)
        while daemons.contains(where: { kill($0, 0) == 0 }) && Date() < deadline { usleep(20_000) }
    }

    /// Issue 15: the background daemon was a forked child of the command, whose main thread
    /// kept the parent's thread id in the Swift runtime's locks; the first contended runtime
    /// lock it held (a lazy global, say) spun for ever. The probe makes the daemon's main
    /// thread hold one under contention before it reports ready.
    @Test("the daemon runs a program image of its own: its main thread can hold a contended runtime lock")
    func daemonIsExecuted() throws {
        let vault = try TestVault()
        defer { stopDaemons(of: vault) }
        let started = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-o",
                                                           (["device_key=\(vault.deviceKey)", "passcode_file=\(vault.passcodeFile)"]
                                                            + TestVault.transportOptions(besides: [])).joined(separator: ",")],
                                        environment: ["PROTFS_TEST_RUNTIME_LOCK_PROBE": "1"], timeout: 15)
        #expect(started.succeeded, "\(started.stderr)")
        let pid = try #require(daemonPID(vault))
        let image = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        #expect(image == URL(fileURLWithPath: TestVault.protfs).resolvingSymlinksInPath().path)
    }

    /// A daemon whose mount the kernel refuses (here fusermount3, for a user who may not
    /// write to the mount point) ends with the reason, not a crash (the session was freed
    /// twice on the way out).
    @Test("a mount the kernel refuses ends the daemon with its reason, not a crash")
    func refusedMountEndsCleanly() throws {
        let vault = try TestVault()
        let runtime = vault.root.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: false)
        #expect(CommandRunner.run("chown", ["-R", "65534:65534", vault.root.path]).succeeded)
        #expect(CommandRunner.run("chown", ["0:0", vault.mountpoint]).succeeded)
        vault.daemonEnvironment["XDG_RUNTIME_DIR"] = runtime
        #expect(throws: TestFailure.self) {
            try vault.mount(launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"])
        }
        defer { try? vault.unmount() }
        #expect(vault.daemonOutput.hasSuffix("could not mount on \(vault.mountpoint)\n"), "\(vault.daemonOutput)")
        #expect(!TestVault.isMounted(vault.mountpoint))
    }

    /// The daemons of the vault now running (their pids), found by their command line.
    func daemons(of vault: TestVault) -> [Int32] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap(Int32.init).filter { pid in
            let arguments = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))) ?? Data()
            let words = arguments.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.count > 1 && words[1] == "mount" && words.contains(vault.backing)
        }
    }

    /// A command killed while it waits (a Ctrl-C, a timeout) must not take the daemon with it:
    /// its verdict then has no reader, which on a pipe would have been a SIGPIPE.
    @Test("the daemon serves on when the command waiting for it is killed")
    func daemonOutlivesItsCommand() throws {
        let vault = try TestVault()
        defer { stopDaemons(of: vault) }
        let command = Process()
        command.executableURL = URL(fileURLWithPath: TestVault.protfs)
        command.arguments = ["mount", vault.backing, vault.mountpoint, "-o",
                             (["device_key=\(vault.deviceKey)", "passcode_file=\(vault.passcodeFile)"]
                              + TestVault.transportOptions(besides: [])).joined(separator: ",")]
        // The probe holds the daemon 0.2 s before its verdict, after the passcode's Argon2id.
        command.environment = ProcessInfo.processInfo.environment.merging(["PROTFS_TEST_RUNTIME_LOCK_PROBE": "1"]) { $1 }
        try command.run()
        let deadline = Date().addingTimeInterval(10)
        while daemons(of: vault).filter({ $0 != command.processIdentifier }).isEmpty && Date() < deadline { usleep(1_000) }
        kill(command.processIdentifier, SIGKILL)
        command.waitUntilExit()
        while daemonPID(vault) == nil && Date() < deadline { usleep(20_000) }
        usleep(1_000_000)  // past the daemon's verdict, which went to no one
        #expect(daemonPID(vault) != nil && TestVault.isMounted(vault.mountpoint), "the daemon died with its command")
        #expect(CommandRunner.shell("echo live > '\(vault.path("f"))' && cat '\(vault.path("f"))'", timeout: 10).stdout == "live\n")
    }

    /// What found the hang: many readers at once right after a daemonizing mount, again and
    /// again. Each round must finish within seconds.
    @Test("reads from many processes right after a daemonizing mount never hang")
    func concurrentReadsAfterMount() throws {
        let vault = try TestVault()
        defer { stopDaemons(of: vault) }
        let script = CommandRunner.packageRoot.path + "/Tests/ProtfsIntegrationTests/Scripts/concurrency/read-concurrently.sh"
        for round in 0 ..< 4 {
            let started = mount(vault)
            try #require(started.succeeded, "round \(round): \(started.stderr)")
            if round == 0 {
                #expect(CommandRunner.shell("for i in $(seq 16); do head -c 262144 /dev/urandom > '\(vault.mountpoint)'/f$i; done").succeeded)
            }
            let reads = CommandRunner.run("/bin/bash", [script, vault.mountpoint, "8"], timeout: 10)
            try #require(reads.succeeded, "round \(round): \(reads.stderr)")
            let pid = daemonPID(vault)
            // Retried as TestVault.unmount does: a process that lists every mount (df) holds
            // this one for an instant.
            var unmounted = CommandRunner.run("fusermount3", ["-u", vault.mountpoint], timeout: 10)
            for _ in 0 ..< 3 where !unmounted.succeeded && unmounted.stderr.contains("busy") {
                usleep(300_000)
                unmounted = CommandRunner.run("fusermount3", ["-u", vault.mountpoint], timeout: 10)
            }
            try #require(unmounted.succeeded, "round \(round): \(unmounted.stderr)")
            let deadline = Date().addingTimeInterval(10)
            while let pid, kill(pid, 0) == 0, Date() < deadline { usleep(10_000) }
        }
    }

    /// The mount options the kernel shows for `mountpoint` (one mount there, or nil).
    func kernelOptions(_ mountpoint: String) -> [Substring]? {
        let mounts = TestVault.mountTable.split(separator: "\n")
            .map { $0.split(separator: " ") }.filter { $0.count > 3 && $0[1] == mountpoint }
        return mounts.count == 1 ? mounts[0][3].split(separator: ",") : nil
    }

    /// Issue 15: `mount -o remount,ro` through mount.protfs tried a second mount and failed
    /// with "already a protfs mount".
    @Test("mount -o remount,ro and remount,rw through mount.protfs switch the live mount, never mount again")
    func remount() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let helper = CommandRunner.packageRoot.path + "/mount-helpers/mount.protfs"
        let path = ["PATH": (TestVault.protfs as NSString).deletingLastPathComponent + ":/usr/bin:/bin"]
        #expect(CommandRunner.shell("echo before > '\(vault.path("f"))'").succeeded)

        // As mount(8) runs it for a live mount (found with strace): as mount.fuse.protfs, with
        // the type and the options the kernel shows.
        let kernelShows = "ro,nosuid,nodev,relatime,remount,user_id=0,group_id=0,default_permissions"
        let readOnly = CommandRunner.run("/bin/sh", [helper, vault.backing, vault.mountpoint, "-o", kernelShows, "-t", "fuse.protfs"],
                                         environment: path)
        #expect(readOnly.succeeded && readOnly.stderr.isEmpty, "\(readOnly.stderr)")
        #expect(kernelOptions(vault.mountpoint)?.contains("ro") == true, "\(kernelOptions(vault.mountpoint) ?? [])")
        let refused = CommandRunner.shell("echo after > '\(vault.path("f"))'")
        #expect(!refused.succeeded && refused.stderr.contains("Read-only file system"), "\(refused.stderr)")
        #expect(CommandRunner.shell("cat '\(vault.path("f"))'").stdout == "before\n")

        let readWrite = CommandRunner.run("/bin/sh", [helper, vault.backing, vault.mountpoint, "-o", "rw,remount"], environment: path)
        #expect(readWrite.succeeded, "\(readWrite.stderr)")
        let options = kernelOptions(vault.mountpoint) ?? []
        #expect(options.contains("rw") && options.contains("nosuid") && options.contains("nodev"), "\(options)")
        #expect(CommandRunner.shell("echo after > '\(vault.path("f"))' && cat '\(vault.path("f"))'").stdout == "after\n")
        #expect(vault.daemon?.isRunning == true, "the same daemon serves on: \(vault.daemonOutput)")

        let elsewhere = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.root.path, "-o", "remount,ro"])
        #expect(elsewhere.status == 1 && elsewhere.stderr.contains("is not a protfs mount"), "\(elsewhere.stderr)")
    }

    /// `mount -o remount MOUNTPOINT` passes fstab's options along: repeated as they are in force
    /// they are no change, so nothing is said; one that differs is named.
    @Test("a remount repeating the options in force is silent; one that differs is named")
    func remountWithOptionsInForce() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        let inForce = "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile)"
        let same = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint, "-o", "remount,ro," + inForce])
        #expect(same.succeeded && same.stderr.isEmpty, "\(same.stderr)")
        #expect(kernelOptions(vault.mountpoint)?.contains("ro") == true)
        let other = CommandRunner.run(TestVault.protfs, ["mount", vault.backing, vault.mountpoint,
                                                         "-o", "remount,rw,grace=77,allow_other," + inForce])
        #expect(other.succeeded && other.stderr.contains("these stay as mounted: grace,allow_other\n"), "\(other.stderr)")
        #expect(kernelOptions(vault.mountpoint)?.contains("rw") == true)
    }

    /// mount.protfs, and a PATH that finds the protfs built here first.
    static let mountHelper = CommandRunner.packageRoot.path + "/mount-helpers/mount.protfs"
    static let helperEnvironment = ["PATH": (TestVault.protfs as NSString).deletingLastPathComponent + ":/usr/bin:/bin"]

    @Test("-o suid is refused with a reason, by protfs mount and through mount.protfs; nothing is mounted")
    func suidRefused() throws {
        let vault = try TestVault()
        let options = "suid,device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile)"
        for command in [[TestVault.protfs, "mount", vault.backing, vault.mountpoint, "-o", options],
                        ["/bin/sh", Self.mountHelper, vault.backing, vault.mountpoint, "-o", options]] {
            let result = CommandRunner.run(command[0], Array(command.dropFirst()), environment: Self.helperEnvironment)
            #expect(result.status == 2 && result.stderr.contains("option 'suid' cannot be honoured"), "\(command[0]): \(result.stderr)")
            #expect(!TestVault.isMounted(vault.mountpoint))
        }
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

    @Test("mount.protfs drops mount(8)'s own options, passes every other on, and mounts")
    func mountHelper() throws {
        let vault = try TestVault()
        let helper = Self.mountHelper, bin = (TestVault.protfs as NSString).deletingLastPathComponent
        let options = "rw,defaults,nosuid,nodev,noatime,_netdev,nofail,x-systemd.automount,comment=vault,"
            + "device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile),grace=3"
        let fake = CommandRunner.run("/bin/sh", [helper, vault.backing, vault.mountpoint, "-fv", "-o", options],
                                     environment: ["PATH": "\(bin):/usr/bin:/bin"])
        #expect(fake.succeeded && fake.stderr.contains("-o nosuid,nodev,noatime,device_key=\(vault.deviceKey),passcode_file=\(vault.passcodeFile),grace=3"),
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
