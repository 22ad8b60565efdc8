import Glibc
import CProtfsSys
import ProtfsSystem

/// A Unix stream socket and the few calls the control socket needs. It owns its descriptor
/// and cannot be copied, so the socket closes exactly once, when its one owner goes (share
/// it between threads through `SharedSocket`). Sends never raise SIGPIPE (a client that went
/// away is an error return, not a dead daemon); reads wait with `poll` against a deadline,
/// so a half-sent message cannot hold a thread.
public struct UnixSocket: ~Copyable, Sendable {
    private let descriptor: OwnedDescriptor

    /// The descriptor for the calls of this module; valid while this owner lives.
    var fd: Int32 { descriptor.borrowed.rawValue }

    private init(adopting fd: Int32) { descriptor = OwnedDescriptor(adopting: FileDescriptor(rawValue: fd)) }

    /// Credentials of the process at the other end (`SO_PEERCRED`), taken when it connected.
    public struct Peer: Sendable {
        public let uid: uid_t
        public let gid: gid_t
        public let pid: pid_t
    }

    private static func make() throws(Errno) -> UnixSocket {
        UnixSocket(adopting: try syscallRetrying { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) })
    }

    /// Binds a new socket to `path` and listens.
    public static func listening(at path: String, backlog: Int32) throws(Errno) -> UnixSocket {
        let socket = try make()
        _ = try syscallRetrying { withAddress(path) { bind(socket.fd, $0, $1) } }
        _ = try syscallRetrying { listen(socket.fd, backlog) }
        return socket
    }

    public static func connected(to path: String) throws(Errno) -> UnixSocket {
        let socket = try make()
        // connect is not restarted after EINTR once it has begun; a Unix socket connect
        // either completes or fails at once, so a retry sees the true outcome.
        _ = try syscallRetrying { withAddress(path) { connect(socket.fd, $0, $1) } }
        return socket
    }

    /// Calls `body` with a `sockaddr_un` for `path`; ENAMETOOLONG when it does not fit.
    private static func withAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard bytes.count < capacity, !bytes.contains(0) else {
            protfs_set_errno(ENAMETOOLONG)
            return -1
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    public func accept() throws(Errno) -> UnixSocket {
        UnixSocket(adopting: try syscallRetrying { protfs_accept_cloexec(fd) })
    }

    public func peer() -> Peer? {
        var uid: uid_t = 0, gid: gid_t = 0, pid: pid_t = 0
        guard protfs_peer_credentials(fd, &uid, &gid, &pid) == 0 else { return nil }
        return Peer(uid: uid, gid: gid, pid: pid)
    }

    /// Bounds how long one blocking send may wait for a peer that does not read.
    public func setSendTimeout(_ timeout: Duration) {
        let microseconds = Int(timeout.wholeNanoseconds / 1_000)
        var time = timeval(tv_sec: microseconds / 1_000_000, tv_usec: microseconds % 1_000_000)
        _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends all of `bytes`. `nonBlocking`: fail with EAGAIN rather than wait for room
    /// (a watch event must never stall the daemon's lock transition).
    public func send(_ bytes: UnsafeRawBufferPointer, nonBlocking: Bool = false) throws(Errno) {
        try Self.send(bytes, on: fd, nonBlocking: nonBlocking)
    }

    /// `send` on the bare descriptor: also what the sink this socket lends out calls.
    fileprivate static func send(_ bytes: UnsafeRawBufferPointer, on fd: Int32, nonBlocking: Bool) throws(Errno) {
        let flags = Int32(MSG_NOSIGNAL) | (nonBlocking ? Int32(MSG_DONTWAIT) : 0)
        var done = 0
        while done < bytes.count {
            done += try syscallRetrying { Glibc.send(fd, bytes.baseAddress! + done, bytes.count - done, flags) }
        }
    }

    /// Reads up to `buffer.count` bytes, waiting until `deadline` (forever when nil); 0 at
    /// end of stream.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline?) throws(ControlWireError) -> Int {
        try Self.receive(into: buffer, on: fd, deadline: deadline)
    }

    /// `receive` on the bare descriptor: also what the source this socket lends out calls.
    fileprivate static func receive(into buffer: UnsafeMutableRawBufferPointer, on fd: Int32,
                                    deadline: Deadline?) throws(ControlWireError) -> Int {
        while true {
            try waitUntilReadable(fd, deadline: deadline)
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return n }
            let error = protfs_errno()
            if error == EINTR || error == EAGAIN { continue }
            throw .system(operation: "recv", errno: error)
        }
    }

    /// Returns once there is something to read (or the end of stream); `.timedOut` at `deadline`.
    func waitUntilReadable(deadline: Deadline?) throws(ControlWireError) {
        try Self.waitUntilReadable(fd, deadline: deadline)
    }

    private static func waitUntilReadable(_ fd: Int32, deadline: Deadline?) throws(ControlWireError) {
        while true {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = deadline.map { Int32(clamping: $0.millisecondsLeft) } ?? -1
            if wait == 0 { throw .timedOut }
            let ready = poll(&poller, 1, wait)
            if ready > 0 { return }
            if ready == 0 { throw .timedOut }
            if protfs_errno() != EINTR { throw .system(operation: "poll", errno: protfs_errno()) }
        }
    }

    /// Wakes every thread blocked on this socket (reads see end of stream, accept fails).
    public func shutdown() { _ = Glibc.shutdown(fd, Int32(SHUT_RDWR)) }

    /// Runs `body` with this socket as a message source whose every fill must be complete by
    /// `deadline` (none when nil). The source is valid inside `body` only.
    public func reading<Result, Failure: Error>(until deadline: Deadline?,
                                                _ body: (inout SocketByteSource) throws(Failure) -> Result) throws(Failure) -> Result {
        var source = SocketByteSource(fd: fd, deadline: deadline)
        return try body(&source)
    }

    /// Runs `body` with this socket as a message sink, valid inside `body` only.
    public func writing<Result, Failure: Error>(_ body: (inout SocketByteSink) throws(Failure) -> Result) throws(Failure) -> Result {
        var sink = SocketByteSink(fd: fd)
        return try body(&sink)
    }
}

/// A point in monotonic time a wait must not pass.
public struct Deadline: Sendable {
    private let nanoseconds: UInt64

    public init(after timeout: Duration) {
        nanoseconds = MonotonicClock.nanoseconds(after: timeout)
    }

    /// Whole milliseconds left, rounded up so that a wait never ends early; 0 once passed.
    public var millisecondsLeft: Int {
        let now = MonotonicClock.nanoseconds()
        guard nanoseconds > now else { return 0 }
        return Int((nanoseconds - now + 999_999) / 1_000_000)
    }
}

/// A socket as a message source (`UnixSocket.reading`): every fill must be complete by one
/// deadline. It borrows the socket's descriptor, so it lives only inside the call that lent it.
public struct SocketByteSource: ControlByteSource {
    fileprivate let fd: Int32
    public let deadline: Deadline?

    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError) {
        var done = 0
        while done < buffer.count {
            let n = try UnixSocket.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), on: fd, deadline: deadline)
            if n == 0 { throw done == 0 ? .closed : .truncated }
            done += n
        }
    }
}

/// A socket as a message sink (`UnixSocket.writing`), living only inside the call that lent it.
public struct SocketByteSink: ControlByteSink {
    fileprivate let fd: Int32

    public mutating func send(_ bytes: UnsafeRawBufferPointer) throws(ControlWireError) {
        do {
            try UnixSocket.send(bytes, on: fd, nonBlocking: false)
        } catch {
            throw .system(operation: "send", errno: error.rawValue)
        }
    }
}
