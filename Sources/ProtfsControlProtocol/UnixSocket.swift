import Glibc
import CProtfsSys
import ProtfsSystem

/// A Unix stream socket descriptor and the few calls the control socket needs. Sends never
/// raise SIGPIPE (a client that went away is an error return, not a dead daemon); reads
/// wait with `poll` against a deadline, so a half-sent message cannot hold a thread.
public struct UnixSocket: Sendable {
    public let fd: Int32

    /// Credentials of the process at the other end (`SO_PEERCRED`), taken when it connected.
    public struct Peer: Sendable {
        public let uid: uid_t
        public let gid: gid_t
        public let pid: pid_t
    }

    public static func make() throws(Errno) -> UnixSocket {
        UnixSocket(fd: try syscallRetrying { socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0) })
    }

    /// Binds a new socket to `path` and listens.
    public static func listening(at path: String, backlog: Int32) throws(Errno) -> UnixSocket {
        let socket = try make()
        do {
            _ = try syscallRetrying { withAddress(path) { bind(socket.fd, $0, $1) } }
            _ = try syscallRetrying { listen(socket.fd, backlog) }
        } catch {
            socket.close()
            throw error
        }
        return socket
    }

    public static func connected(to path: String) throws(Errno) -> UnixSocket {
        let socket = try make()
        do {
            // connect is not restarted after EINTR once it has begun; a Unix socket connect
            // either completes or fails at once, so a retry sees the true outcome.
            _ = try syscallRetrying { withAddress(path) { connect(socket.fd, $0, $1) } }
        } catch {
            socket.close()
            throw error
        }
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
        UnixSocket(fd: try syscallRetrying { protfs_accept_cloexec(fd) })
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
        let flags = Int32(MSG_NOSIGNAL) | (nonBlocking ? Int32(MSG_DONTWAIT) : 0)
        var done = 0
        while done < bytes.count {
            done += try syscallRetrying { Glibc.send(fd, bytes.baseAddress! + done, bytes.count - done, flags) }
        }
    }

    /// Reads up to `buffer.count` bytes, waiting until `deadline` (forever when nil); 0 at
    /// end of stream.
    public func receive(into buffer: UnsafeMutableRawBufferPointer, deadline: Deadline?) throws(ControlWireError) -> Int {
        while true {
            try waitUntilReadable(deadline: deadline)
            let n = recv(fd, buffer.baseAddress, buffer.count, 0)
            if n >= 0 { return n }
            let error = protfs_errno()
            if error == EINTR || error == EAGAIN { continue }
            throw .system(operation: "recv", errno: error)
        }
    }

    /// Returns once there is something to read (or the end of stream); `.timedOut` at `deadline`.
    func waitUntilReadable(deadline: Deadline?) throws(ControlWireError) {
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

    public func close() { _ = Glibc.close(fd) }
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

/// A socket as a message source: every fill must be complete by one deadline.
public struct SocketByteSource: ControlByteSource {
    public let socket: UnixSocket
    public let deadline: Deadline?

    public init(socket: UnixSocket, deadline: Deadline?) {
        self.socket = socket
        self.deadline = deadline
    }

    public mutating func fill(_ buffer: UnsafeMutableRawBufferPointer) throws(ControlWireError) {
        var done = 0
        while done < buffer.count {
            let n = try socket.receive(into: UnsafeMutableRawBufferPointer(rebasing: buffer[done...]), deadline: deadline)
            if n == 0 { throw done == 0 ? .closed : .truncated }
            done += n
        }
    }
}

/// A socket as a message sink.
public struct SocketByteSink: ControlByteSink {
    public let socket: UnixSocket

    public init(socket: UnixSocket) { self.socket = socket }

    public mutating func send(_ bytes: UnsafeRawBufferPointer) throws(ControlWireError) {
        do {
            try socket.send(bytes)
        } catch {
            throw .system(operation: "send", errno: error.rawValue)
        }
    }
}
