import Glibc
import CProtfsSys
import ProtfsSystem

/// Passing a descriptor over the control socket (SCM_RIGHTS), as one byte that carries it:
/// the archive of a backup through the daemon, which the client creates and owns.
extension UnixSocket {
    public func sendDescriptor(_ passed: Int32) throws(Errno) {
        _ = try syscallRetrying { protfs_send_descriptor(fd, passed) }
    }

    /// The descriptor the next byte carries; nil when the byte came without one. Waits until `deadline`; `.closed` when the peer closed first.
    public func receiveDescriptor(deadline: Deadline) throws(ControlWireError) -> OwnedDescriptor? {
        while true {
            try waitUntilReadable(deadline: deadline)
            var passed: Int32 = -1
            let n = protfs_receive_descriptor(fd, &passed)
            if n > 0 { return passed >= 0 ? OwnedDescriptor(adopting: FileDescriptor(rawValue: passed)) : nil }
            if n == 0 { throw .closed }
            let error = protfs_errno()
            if error == EINTR || error == EAGAIN { continue }
            throw .system(operation: "recvmsg", errno: error)
        }
    }

    /// Whether the peer has closed its end or sent anything (a client that sends nothing
    /// more after its request): checked without waiting.
    public var peerHasHungUp: Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)  // an end of stream reads as input
        return poll(&poller, 1, 0) > 0  // an interrupted poll says nothing
    }
}
