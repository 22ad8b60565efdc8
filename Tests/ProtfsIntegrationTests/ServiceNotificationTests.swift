import Foundation
import Glibc
import Testing

/// The daemon under a `Type=notify` unit: it tells the service manager through
/// `NOTIFY_SOCKET` when the mount is live, every lock state, and when it stops. The test is
/// the service manager: a datagram socket of its own.
@Suite("systemd notifications")
struct ServiceNotificationTests {
    /// A bound `AF_UNIX` datagram socket, as systemd makes for a unit.
    final class NotifySocket {
        let path: String
        let fd: Int32

        init(path: String) throws {
            self.path = path
            fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &address.sun_path) { raw in
                _ = path.utf8CString.withUnsafeBytes { memcpy(raw.baseAddress!, $0.baseAddress!, min($0.count, raw.count - 1)) }
            }
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            guard fd >= 0, bound == 0 else { throw TestFailure("cannot bind \(path): \(String(cString: strerror(errno)))") }
            var wait = timeval(tv_sec: 1, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        }

        deinit { close(fd) }

        /// Datagrams until one contains `wanted` (all of them, in order), or nil after `seconds`.
        func messages(until wanted: String, within seconds: TimeInterval = 20) -> [String]? {
            var seen: [String] = []
            let deadline = Date().addingTimeInterval(seconds)
            var buffer = [UInt8](repeating: 0, count: 4096)
            while Date() < deadline {
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n > 0 else { continue }
                let message = String(decoding: buffer[..<n], as: UTF8.self)
                seen.append(message)
                if message.split(separator: "\n").contains(where: { $0 == wanted }) { return seen }
            }
            return nil
        }
    }

    @Test("READY=1 once mounted, STATUS= with each lock state, STOPPING=1 at unmount")
    func notifications() throws {
        let vault = try TestVault()
        let notify = try NotifySocket(path: vault.root.path + "/notify")
        vault.daemonEnvironment["NOTIFY_SOCKET"] = notify.path
        try vault.mount(options: ["passcode_file=\(vault.passcodeFile)", "grace=1"])
        defer { try? vault.unmount() }
        let mountpoint = URL(fileURLWithPath: vault.mountpoint).resolvingSymlinksInPath().path

        let ready = try #require(notify.messages(until: "READY=1"), "no READY=1")
        #expect(ready.last?.contains("STATUS=\(mountpoint): unlocked") == true, "\(ready)")
        try vault.lock()
        #expect(notify.messages(until: "STATUS=\(mountpoint): locking") != nil)
        #expect(notify.messages(until: "STATUS=\(mountpoint): locked") != nil)
        #expect(!vault.protfsctl(["unlock", vault.mountpoint], stdin: "not the passcode\n").succeeded)
        try vault.unmount()
        #expect(notify.messages(until: "STOPPING=1") != nil)
        // No journal here: the lines (each of a kind with its MESSAGE_ID under journald) fell
        // back to the daemon's standard error.
        for line in ["serving", "\(mountpoint) is locking", "\(mountpoint) is locked", "wrong passcode for \(mountpoint)",
                     "unmounted \(mountpoint)"] {
            #expect(vault.daemonOutput.contains(line), "no '\(line)' in: \(vault.daemonOutput)")
        }
    }
}
