import Foundation
import Glibc
import ProtfsCrypto
import Testing

/// The Swift clients' trust in a socket of the runtime directory (docs/THREAT-MODEL.md), as
/// pam_protfs checks it: the directory and its parent, the socket and the process serving it
/// must belong to the caller or root, or nothing is sent. Before, root with a user's
/// `XDG_RUNTIME_DIR` sent a passcode to that user's listener, and a socket in a user's own
/// directory was used whoever served it.
@Suite("a listener in the runtime directory", .serialized)
struct RuntimeListenerTests {
    static let passcode = "runtime-listener-passcode"

    /// A scratch directory (root's, open to all for reading) with a mount point no daemon serves.
    final class Scratch {
        let root: String
        var mountpoint: String { root + "/mnt" }
        var capture: String { root + "/capture/bytes" }

        init() throws {
            root = NSTemporaryDirectory() + "protfs-runtime-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: root + "/mnt", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: root + "/capture", withIntermediateDirectories: true)
            chmod(root, 0o755)
            chmod(root + "/capture", 0o777)
        }

        /// The socket path of the mount point in `runtime`/protfs.
        func socket(in runtime: String) -> String {
            let digest = SHA256.hash(Array(mountpoint.utf8)).prefix(8)
            return runtime + "/protfs/" + digest.map { String(format: "%02x", $0) }.joined() + ".sock"
        }

        /// A listener run by `user` at `socket`, keeping whatever it is sent.
        func listen(as user: TestUser, at socket: String) throws -> Process {
            let listener = Process()
            listener.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            listener.arguments = ["--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "/usr/bin/python3",
                                  CommandRunner.scriptPath("pam/impostor-daemon.py"), socket, capture]
            try listener.run()
            for _ in 0..<200 where access(socket, F_OK) != 0 { usleep(50_000) }
            return listener
        }

        var captured: Data { (try? Data(contentsOf: URL(fileURLWithPath: capture))) ?? Data() }

        deinit { try? FileManager.default.removeItem(atPath: root) }
    }

    /// A runtime directory `run` with its `protfs` below, owned by `user`.
    static func runtimeDirectory(_ scratch: Scratch, owner user: TestUser, mode: mode_t) throws -> String {
        let runtime = scratch.root + "/run"
        try FileManager.default.createDirectory(atPath: runtime + "/protfs", withIntermediateDirectories: true)
        for (path, bits) in [(runtime, mode), (runtime + "/protfs", 0o755 as mode_t)] {
            #expect(chown(path, user.uid, user.gid) == 0 && chmod(path, bits) == 0)
        }
        return runtime
    }

    @Test("root with a user's XDG_RUNTIME_DIR sends that user's listener no passcode")
    func rootInAUsersRuntimeDirectory() throws {
        let mallory = try TestUser.named("pfrt-mallory")
        let scratch = try Scratch()
        let runtime = try Self.runtimeDirectory(scratch, owner: mallory, mode: 0o700)
        let listener = try scratch.listen(as: mallory, at: scratch.socket(in: runtime))
        defer { kill(listener.processIdentifier, SIGKILL) }
        let unlock = CommandRunner.run(TestVault.protfsctl, ["unlock", scratch.mountpoint], stdin: Self.passcode + "\n",
                                       environment: ["XDG_RUNTIME_DIR": runtime], timeout: 30)
        #expect(!unlock.succeeded && unlock.stderr.contains("nothing was sent"), "\(unlock.status): \(unlock.stderr)")
        #expect(unlock.stderr.contains("\(runtime) is not a directory of root"), "\(unlock.stderr)")
        #expect(scratch.captured.isEmpty, "the listener got \(scratch.captured.count) bytes")
    }

    @Test("a socket in the user's own runtime directory, served by another uid, gets no passcode")
    func anotherUidServesInTheUsersDirectory() throws {
        let alice = try TestUser.named("pfrt-alice"), mallory = try TestUser.named("pfrt-mallory")
        let scratch = try Scratch()
        // Open while mallory binds, then alice's, the socket file too: only the peer tells.
        let runtime = try Self.runtimeDirectory(scratch, owner: alice, mode: 0o777)
        chmod(runtime + "/protfs", 0o777)
        let socket = scratch.socket(in: runtime)
        let listener = try scratch.listen(as: mallory, at: socket)
        defer { kill(listener.processIdentifier, SIGKILL) }
        #expect(chmod(runtime, 0o700) == 0 && chmod(runtime + "/protfs", 0o755) == 0 && chown(socket, alice.uid, alice.gid) == 0)
        let unlock = CommandRunner.run("/usr/bin/setpriv", ["--reuid=\(alice.uid)", "--regid=\(alice.gid)", "--clear-groups",
                                                            TestVault.protfsctl, "unlock", scratch.mountpoint],
                                       stdin: Self.passcode + "\n", environment: ["XDG_RUNTIME_DIR": runtime], timeout: 30)
        #expect(!unlock.succeeded && unlock.stderr.contains("is served by a process of uid \(mallory.uid), not one this user may trust"),
                "\(unlock.status): \(unlock.stderr)")
        #expect(scratch.captured.isEmpty, "the listener got \(scratch.captured.count) bytes")
    }
}
