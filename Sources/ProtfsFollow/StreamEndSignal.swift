import Glibc
import ProtfsSystem

/// A pipe the follower polls beside its buses: a watcher thread writes a byte when the
/// daemon's event stream ends. Watcher threads and the follower hold it together; it closes
/// when the last of them lets go, so a late watcher never writes to a reused descriptor.
final class StreamEndSignal: Sendable {
    private let pipe: DescriptorPair

    init() throws(Errno) { pipe = try DescriptorPair.pipe() }

    /// Says that a stream ended (from a watcher thread).
    func raise() {
        var byte: UInt8 = 1
        _ = write(pipe.writeEnd.borrowed.rawValue, &byte, 1)
    }

    /// What `poll` waits on: readable once a stream ended.
    var pollRequest: pollfd { pollfd(fd: pipe.readEnd.borrowed.rawValue, events: Int16(POLLIN), revents: 0) }

    /// Takes one signal without waiting; whether there was one.
    func take() -> Bool {
        var byte: UInt8 = 0
        var ready = pollRequest
        return poll(&ready, 1, 0) == 1 && read(pipe.readEnd.borrowed.rawValue, &byte, 1) == 1
    }
}
