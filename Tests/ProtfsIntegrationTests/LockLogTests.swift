import Foundation
import Testing

/// The daemon's log says who locked and unlocked, and why (docs/SYSTEMD.md, "Who locked it"):
/// the requesting process as the kernel tells it, or the auto-lock with its idle time.
@Suite("who locked it")
struct LockLogTests {
    @Test("protfsctl lock and unlock are logged with uid, pid and command; a wrong passcode with who tried")
    func requestsAreLogged() throws {
        let vault = try TestVault()
        try vault.mount()
        defer { try? vault.unmount() }
        try vault.lock(now: true)
        let wrong = vault.protfsctl(["unlock", vault.mountpoint], stdin: "not the passcode\n")
        #expect(!wrong.succeeded)
        #expect(vault.protfsctl(["unlock", vault.mountpoint, "--passcode-file", vault.passcodeFile]).succeeded)
        let log = vault.daemonOutput
        #expect(log.contains("lock (now) of \(vault.mountpoint) requested by uid 0 (pid "), "\(log)")
        #expect(log.contains(", protfsctl)"), "\(log)")
        #expect(log.contains("wrong passcode for \(vault.mountpoint) from uid 0 (pid "), "\(log)")
        #expect(log.contains("\(vault.mountpoint) unlocked by uid 0 (pid ") && log.contains("protfsctl) with the passcode"), "\(log)")
    }

    @Test("the auto-lock says it was the auto-lock, and after how long idle")
    func autolockIsLogged() throws {
        let vault = try TestVault()
        try vault.mount(options: ["autolock=1", "grace=0"])
        defer { try? vault.unmount() }
        let deadline = Date().addingTimeInterval(20)
        while !vault.daemonOutput.contains("auto-lock of") && Date() < deadline { usleep(100_000) }
        #expect(vault.daemonOutput.contains("auto-lock of \(vault.mountpoint): idle for "), "\(vault.daemonOutput)")
        #expect(vault.daemonOutput.contains("(autolock=1)"), "\(vault.daemonOutput)")
    }
}
