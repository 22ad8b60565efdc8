import Glibc
import CProtfsSys
import ProtfsCommandLine
import ProtfsCore
import ProtfsDomain
import ProtfsSystem

/// Running `protfs mount` in the background, as gocryptfs does: the command starts the
/// program again (`/proc/self/exe`, a new process image, in a session of its own) as the
/// daemon and waits for its verdict on a socket, so it returns only once the mount is live
/// and the control socket answers, with the daemon's verdict as its exit code.
///
/// Never `fork` without `exec`: the Swift runtime's locks (`swift_once`, its mutexes) are
/// priority-inheritance futexes that name their owner by a thread id each thread caches,
/// and a forked child's main thread keeps its parent's. The first runtime lock that thread
/// held under contention would never be released: the daemon spun for ever (issue 15).
final class Detachment {
    /// The hidden option that makes `protfs mount` the daemon of a waiting command, with
    /// the descriptor that takes its verdict.
    static let readyOption = "--ready-fd"
    /// Where the spawned daemon finds the verdict socket (the first after the standard streams).
    static let readyDescriptor: Int32 = 3

    /// The daemon's end of the verdict socket, until the verdict went.
    private var verdictSocket: OwnedDescriptor?

    /// The waiting command: spawns the daemon with `mountArguments` (what follows `mount`),
    /// its standard streams, its environment and no other descriptor, then returns the
    /// daemon's verdict (1 if it died first, saying how).
    static func spawnDaemon(mountArguments: [String]) -> ExitCode {
        // A socket, not a pipe: the daemon's verdict goes with MSG_NOSIGNAL, so a command
        // killed while it waits costs the daemon no SIGPIPE. Both ends close on exec: the
        // daemon gets only the end passed to it.
        let ends: DescriptorPair
        do { ends = try DescriptorPair.socketPair() } catch {
            writeError("protfs mount: cannot make a socket to the daemon (\(error)); try -f\n")
            return .failure
        }
        let arguments = [CommandLine.arguments.first ?? "protfs", "mount", readyOption, String(readyDescriptor)] + mountArguments
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var daemon: pid_t = 0
        let spawned = protfs_spawn_in_new_session("/proc/self/exe", argv, environ, ends.writeEnd.borrowed.rawValue, readyDescriptor, &daemon)
        let waiting = ends.closingWriteEnd()  // so that the daemon's death ends the wait
        guard spawned == 0 else {
            writeError("protfs mount: cannot start the daemon (\(Errno(spawned))); try -f\n")
            return .failure
        }
        var code: UInt8 = 0
        let read = withUnsafeMutableBytes(of: &code) { try? waiting.borrowed.read(filling: $0, until: nil) }
        if read == 1 { return ExitCode(rawValue: Int32(code)) ?? .failure }
        let how = ChildProcess(pid: daemon).wait()
        writeError("protfs mount: the daemon \(how) before the mount was ready\n")
        return .failure
    }

    /// The daemon's end of the verdict socket: `descriptor` must be one (usage error
    /// otherwise, for a hand-typed `--ready-fd`). It is closed on exec, so the helpers the
    /// daemon starts (libfuse's `fusermount3`) cannot keep the waiting command waiting.
    init(adopting descriptor: String) throws(UsageError) {
        var st = stat()
        guard let fd = Int32(descriptor), fd > 2, fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFSOCK else {
            throw UsageError("option \(Self.readyOption) is for protfs itself: it takes the socket of a waiting protfs mount")
        }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        verdictSocket = OwnedDescriptor(adopting: FileDescriptor(rawValue: fd))
    }

    /// Tells the waiting command how the mount went (once); on success, detaches from the
    /// terminal.
    func report(_ code: ExitCode) {
        guard let socket = verdictSocket.take() else { return }
        if code == .success { detachStandardStreams() }
        var byte = UInt8(code.rawValue)
        _ = send(socket.borrowed.rawValue, &byte, 1, Int32(MSG_NOSIGNAL))  // the command may be gone: no matter
    }

    private func detachStandardStreams() {
        guard let null = try? OwnedDescriptor.open(path: "/dev/null", .readWrite) else { return }
        let fd = null.borrowed.rawValue
        for stream: Int32 in 0...2 where stream != fd { dup2(fd, stream) }
        if fd <= 2 {  // it took the place of a closed standard stream: it stays, open across exec
            _ = fcntl(null.release().rawValue, F_SETFD, 0)
        }
        _ = chdir("/")
    }
}
