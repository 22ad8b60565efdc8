import Foundation
import Glibc
import ProtfsCrypto

extension TestVault {
    /// The file name of the daemon's control socket: SHA-256 of the mount point, as the
    /// daemon and pam_protfs name it.
    var controlSocketName: String {
        SHA256.hash(Array(mountpoint.utf8)).prefix(8).map { String(format: "%02x", $0) }.joined() + ".sock"
    }

    /// The real daemon's socket in /run/protfs.
    var systemControlSocket: String { "/run/protfs/" + controlSocketName }
}

extension TestUser {
    /// `/run/user/UID/protfs`, the user's, where a daemon the user runs serves; the caller
    /// removes `/run/user/UID`.
    func makeRuntimeSocketDirectory() throws -> String {
        let runtime = "/run/user/\(uid)/protfs"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true)
        guard chown(runtime, uid, gid) == 0 else { throw TestFailure("cannot give \(runtime) to \(name)") }
        return runtime
    }
}

/// The real daemon's socket moved out of the way while a test's own daemon answers in its
/// place, and back at `restore()` or deinit (the unmount needs it).
final class SocketAside {
    private let path: String
    private var restored = false

    init(_ vault: TestVault) throws {
        path = vault.systemControlSocket
        guard rename(path, path + ".held") == 0 else { throw TestFailure("cannot move \(path) aside: \(errno)") }
    }

    func restore() {
        guard !restored else { return }
        restored = true
        unlink(path)  // a stand-in's socket
        rename(path + ".held", path)
    }

    deinit { restore() }
}

/// `Scripts/pam/hostile-daemon.py` serving `socket` in `mode`, as `user` (nil: root); killed at
/// deinit.
final class StandInDaemon {
    private let process = Process()

    init(socket: String, mode: String, as user: TestUser? = nil, capture: String? = nil) throws {
        let script = [CommandRunner.scriptPath("pam/hostile-daemon.py"), socket, mode] + (capture.map { [$0] } ?? [])
        if let user {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "/usr/bin/python3"] + script
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            process.arguments = script
        }
        try process.run()
        for _ in 0..<200 where access(socket, F_OK) != 0 { usleep(50_000) }
        guard access(socket, F_OK) == 0 else { throw TestFailure("the stand-in daemon did not listen on \(socket)") }
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }
}

/// FUSE mounts nobody answers (`Scripts/pam/unanswered-fuse-mounts.py`), made as `user`'s
/// fusermount3 would make them: decoys in the mount table, or a mount that hangs whoever
/// looks inside. Ended (ENOTCONN for anyone waiting) and detached at deinit, or ended by
/// themselves after `seconds`.
final class UnansweredFuseMounts {
    private let process = Process()
    private let mountpoints: [String]
    private var ended = false

    init(by user: TestUser, mountpoints: [String], seconds: Int = 300) throws {
        self.mountpoints = mountpoints
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = [CommandRunner.scriptPath("pam/unanswered-fuse-mounts.py"), String(user.uid), String(user.gid),
                             String(seconds)] + mountpoints
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        // "ready" once every mount is made; the end of the pipe if the script failed.
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        guard said.hasPrefix("ready") else { throw TestFailure("the unanswered FUSE mounts were not made") }
    }

    /// Whether the connections are still held (nothing has ended them yet).
    var holding: Bool { process.isRunning }

    /// Ends the connections (whoever waits gets ENOTCONN) and detaches the mounts.
    func end() {
        guard !ended else { return }
        ended = true
        kill(process.processIdentifier, SIGKILL)  // its descriptors close: the connections end
        process.waitUntilExit()
        for point in mountpoints { umount2(point, Int32(MNT_DETACH)) }
    }

    deinit { end() }
}
