import CProtfsSys

/// The two ends of a new pipe or stream socket pair, each with its owner. Both close on exec
/// from the moment they exist, so a program spawned meanwhile by another thread inherits
/// neither; the one end a child is meant to have reaches it through the spawn's `dup2`.
public struct DescriptorPair: ~Copyable, Sendable {
    public let readEnd: OwnedDescriptor
    public let writeEnd: OwnedDescriptor

    private init(_ create: (UnsafeMutablePointer<Int32>) -> Int32) throws(Errno) {
        var ends: (Int32, Int32) = (-1, -1)
        let created = withUnsafeMutablePointer(to: &ends) { $0.withMemoryRebound(to: Int32.self, capacity: 2, create) }
        guard created == 0 else { throw .current }
        readEnd = OwnedDescriptor(adopting: FileDescriptor(rawValue: ends.0))
        writeEnd = OwnedDescriptor(adopting: FileDescriptor(rawValue: ends.1))
    }

    /// A pipe: bytes written to `writeEnd` are read from `readEnd`.
    public static func pipe() throws(Errno) -> DescriptorPair { try DescriptorPair(protfs_pipe_cloexec) }

    /// Closes the write end, once a child has its copy, and keeps the read end: reading then
    /// ends when the child (and whatever it started) has let go of its copy.
    public consuming func closingWriteEnd() -> OwnedDescriptor {
        let kept = readEnd
        return kept
    }

    /// A connected pair of Unix stream sockets (both ends read and write; a send with
    /// `MSG_NOSIGNAL` to a peer that is gone fails instead of raising SIGPIPE).
    public static func socketPair() throws(Errno) -> DescriptorPair { try DescriptorPair(protfs_socketpair_cloexec) }
}
