import Glibc
import CProtfsSys
import ProtfsCore
import ProtfsDomain

/// Running `protfs mount` in the background: the command returns only once the mount is
/// live and the control socket answers, with the child's verdict as its exit code. The fork
/// happens before any thread exists (none would survive it).
struct Detachment {
    private let reportDescriptor: Int32

    /// Forks. The parent waits for the child's report and exits with it (1 if the child died
    /// first); the child, in a new session, gets the reporting end and closes every other
    /// inherited descriptor: a daemon must not hold its caller's pipes and sockets (a caller
    /// waiting for their end would wait for ever). Nil if the fork failed.
    static func fork() -> Detachment? {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return nil }
        let child = Glibc.fork()
        if child < 0 {
            close(ends[0])
            close(ends[1])
            return nil
        }
        if child > 0 {
            close(ends[1])
            var code: UInt8 = 0
            var n: Int
            repeat { n = read(ends[0], &code, 1) } while n < 0 && errno == EINTR
            exit(n == 1 ? Int32(code) : ExitCode.failure.rawValue)
        }
        close(ends[0])
        setsid()
        var kept = ends[1]
        protfs_close_descriptors_except(&kept, 1)
        return Detachment(reportDescriptor: ends[1])
    }

    /// Tells the waiting parent how the mount went (once); on success, detaches from the
    /// terminal.
    func report(_ code: ExitCode) {
        if code == .success { detachStandardStreams() }
        var byte = UInt8(code.rawValue)
        _ = write(reportDescriptor, &byte, 1)
        close(reportDescriptor)
    }

    private func detachStandardStreams() {
        let null = open("/dev/null", O_RDWR)
        guard null >= 0 else { return }
        for stream: Int32 in 0...2 { dup2(null, stream) }
        if null > 2 { close(null) }
        _ = chdir("/")
    }
}
