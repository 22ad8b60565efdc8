import Foundation
import Testing

/// FUSE over io_uring's switch in the kernel (Linux 6.14+ with CONFIG_FUSE_IO_URING).
private let kernelSwitch = "/sys/module/fuse/parameters/enable_uring"

/// FUSE over io_uring (`-o io_uring`, `RingTransport`): used when the kernel offers it, with
/// `/dev/fuse` as the fallback. The kernel's switch is machine-wide and root's: each test
/// sets it as it needs and puts back what it found.
@Suite("FUSE over io_uring", .serialized,
       .enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: kernelSwitch)))
struct IoUringTransportTests {
    static let enableSwitch = kernelSwitch

    /// Runs `body` with the kernel's switch at `enabled`, then restores it.
    func withKernelSwitch(_ enabled: Bool, _ body: () throws -> Void) throws {
        let previous = try String(contentsOfFile: Self.enableSwitch, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        try (enabled ? "1" : "0").write(toFile: Self.enableSwitch, atomically: false, encoding: .utf8)
        defer { try? previous.write(toFile: Self.enableSwitch, atomically: false, encoding: .utf8) }
        try body()
    }

    /// A fresh vault mounted with `options` while the kernel's switch is at `enabled`.
    func withVault(kernelSwitch enabled: Bool, options: [String], _ body: (TestVault) throws -> Void) throws {
        try withKernelSwitch(enabled) {
            let vault = try TestVault()
            try vault.mount(options: options)
            defer { try? vault.unmount() }
            try body(vault)
        }
    }

    /// Completions the daemon's io_uring instances have posted (each request the kernel
    /// sent through a ring is one), from their `fdinfo`; nil without any ring.
    func ringCompletions(of pid: Int32) -> Int? {
        let listing = CommandRunner.shell("""
            for fd in /proc/\(pid)/fd/*; do
                [ "$(readlink "$fd")" = "anon_inode:[io_uring]" ] && awk '/^CqTail:/ { print $2 }' "/proc/\(pid)/fdinfo/${fd##*/}"
            done
            """).stdout
        let tails = listing.split(separator: "\n").compactMap { Int($0) }
        return tails.isEmpty ? nil : tails.reduce(0, +)
    }

    @Test("with the kernel's switch on, -o io_uring serves requests through the rings, and says so")
    func servesThroughRings() throws {
        try withVault(kernelSwitch: true, options: ["io_uring"]) { vault in
            let before = try #require(ringCompletions(of: vault.daemonPID), "no io_uring: \(vault.daemonOutput)")
            // 300 lookups of names that do not exist: none is answered from a cache.
            vault.check("for i in $(seq 300); do ! stat absent-$i 2>/dev/null; done; echo hello > f; test \"$(cat f)\" = hello")
            let after = try #require(ringCompletions(of: vault.daemonPID))
            #expect(after - before >= 300, "\(before) -> \(after)")
            #expect(vault.daemonOutput.contains("transport: io_uring ("), "\(vault.daemonOutput)")
        }
    }

    @Test("with the kernel's switch off, -o io_uring says once why not and serves through /dev/fuse")
    func fallsBack() throws {
        try withVault(kernelSwitch: false, options: ["io_uring"]) { vault in
            vault.check("echo hello > f; test \"$(cat f)\" = hello; ls -l > /dev/null")
            #expect(ringCompletions(of: vault.daemonPID) == nil)
            let lines = vault.daemonOutput.split(separator: "\n").filter { $0.contains("transport:") }
            #expect(lines == ["protfs: transport: /dev/fuse (io_uring not used: the kernel has it switched off "
                              + "(\(Self.enableSwitch) is N; root can write 1))"], "\(vault.daemonOutput)")
        }
    }

    @Test("without -o io_uring the daemon keeps to /dev/fuse, whatever the kernel offers")
    func notAsked() throws {
        try withVault(kernelSwitch: true, options: ["noio_uring"]) { vault in
            vault.check("echo hello > f; test \"$(cat f)\" = hello")
            #expect(ringCompletions(of: vault.daemonPID) == nil)
            #expect(vault.daemonOutput.contains("protfs: transport: /dev/fuse\n"), "\(vault.daemonOutput)")
        }
    }

    @Test("through the rings, a lock takes complete files away (EACCES) and an unlock gives them back")
    func lockAndUnlock() throws {
        try withVault(kernelSwitch: true, options: ["io_uring", "grace=0"]) { vault in
            try vault.makeClassDirectories(holding: ["f": "secret"])
            try vault.lock()
            try vault.waitForState(.locked)
            vault.check("""
                test "$(cat d-none/f)" = secret
                ! cat d-complete/f 2>/dev/null
                cat d-complete/f 2>&1 | grep -q 'Permission denied'
                """)
            try vault.unlock()
            vault.check("test \"$(cat d-complete/f)\" = secret")
            #expect(ringCompletions(of: vault.daemonPID) != nil, "\(vault.daemonOutput)")
        }
    }

    /// Ring threads are bound to their CPU; libdispatch's workers, which spread a large
    /// request's crypto over the cores, are created by whichever thread first needs them and
    /// inherit its CPUs.
    @Test("after large requests through the rings, the crypto's pool threads may run on every CPU",
          .enabled(if: sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1))
    func poolThreadsNotPinned() throws {
        try withVault(kernelSwitch: true, options: ["io_uring"]) { vault in
            vault.check("dd if=/dev/zero of=big bs=1M count=16 oflag=direct 2>/dev/null; dd if=big of=/dev/null bs=1M iflag=direct 2>/dev/null")
            let threads = CommandRunner.shell("""
                for task in /proc/\(vault.daemonPID)/task/*; do
                    echo "$(cat "$task/comm")|$(awk '/^Cpus_allowed_list:/ { print $2 }' "$task/status")"
                done
                """).stdout.split(separator: "\n")
            let pool = threads.filter { $0.contains("default-qos") }
            #expect(!pool.isEmpty, "\(threads)")
            let boundToOne = pool.filter { Int($0.split(separator: "|").last ?? "") != nil }
            #expect(boundToOne.isEmpty, "bound to one CPU: \(threads)")
        }
    }

    @Test("a mount ended while requests stream through the rings ends at once, its daemon too",
          arguments: ["term", "lazy"])
    func endedWithRequestsInFlight(how: String) throws {
        try withVault(kernelSwitch: true, options: ["io_uring"]) { vault in
            #expect(ringCompletions(of: vault.daemonPID) != nil, "\(vault.daemonOutput)")
            let ended = CommandRunner.script("requests/unmount-during-requests.sh", [vault.mountpoint, String(vault.daemonPID), how], timeout: 60)
            #expect(ended.stdout == "ended\n", "\(ended.stdout)\(ended.stderr)\ndaemon: \(vault.daemonOutput)")
            #expect(!TestVault.isMounted(vault.mountpoint))
        }
    }
}
