import Glibc
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// One line of `protfsctl watch`.
public enum WatchLine: Sendable, Equatable, CustomStringConvertible {
    /// The state at the moment of subscribing: the first line.
    case state(LockState)
    case event(LockEvent)

    public var description: String {
        switch self {
        case .state(let state): "state \(state.rawValue)"
        case .event(let event): event.rawValue
        }
    }
}

/// `protfsctl`'s side of the control socket: finds the daemon of a mount point, sends one
/// request per connection and decodes the reply. Failures come back as `ControlFailure`s
/// with the exit code `protfsctl` should use.
public struct ControlClient: Sendable {
    /// The mount point as the daemon names it.
    public let mountpoint: String
    /// The sockets that may serve it, in the order they are tried.
    let candidates: [String]
    private let directories: [String]

    /// Finds the daemon's socket without connecting (so that `passwd` can say "no daemon"
    /// before it asks for passcodes); exit 6 when there is none.
    /// The daemon of the vault mounted at `mountpoint`, or, when no daemon serves that path,
    /// of the protfs mount that holds it (a path inside a vault names its vault).
    public init(mountpoint: String, directories: [String] = ControlSocketPath.clientDirectories()) throws(ControlFailure) {
        let canonical = ControlSocketPath.canonicalMountpoint(mountpoint)
        var found = Self.sockets(for: canonical, in: directories)
        if found.isEmpty, let holder = MountTable.protfsMountPoint(containing: canonical) {
            found = Self.sockets(for: holder, in: directories)
            self.mountpoint = holder
        } else {
            self.mountpoint = canonical
        }
        self.directories = directories
        candidates = found
        guard !candidates.isEmpty else { throw Self.noDaemon(canonical, directories) }
    }

    private static func sockets(for mountpoint: String, in directories: [String]) -> [String] {
        let name = ControlSocketPath.fileName(forMountpoint: mountpoint)
        return directories.map { $0 + "/" + name }.filter { path in
            var st = stat()
            return lstat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFSOCK
        }
    }

    /// Sends `request` with its passcodes and returns the daemon's reply; a `failure`
    /// reply is thrown.
    public func send(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(ControlFailure) -> ControlReply {
        try exchange(request, secrets: secrets).reply
    }

    /// Like `send`, with the secret that follows an `item` reply (in locked memory).
    public func exchange(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(ControlFailure) -> ControlReplyMessage {
        let socket = try connect()
        defer { socket.close() }
        try write(request, secrets: secrets, to: socket)
        var source = SocketByteSource(socket: socket, deadline: nil)  // `lock --wait` may take the whole grace
        let message: ControlReplyMessage?
        do {
            message = try ControlWire.readReplyMessage(from: &source)
        } catch {
            throw ControlFailure(.failure, "the reply of the protfs daemon of \(mountpoint) was not understood: \(error)")
        }
        switch message?.reply {
        case .failure(let failure): throw failure
        case .some: return message!
        case nil: throw ControlFailure(.failure, "the protfs daemon of \(mountpoint) closed the connection without answering; see its log")
        }
    }

    /// Subscribes to lock events: `body` gets the state at subscription, then every event,
    /// until it returns false, the daemon ends the stream (at unmount), or `cancellation` is
    /// cancelled from another thread.
    public func watch(cancellation: WatchCancellation? = nil, _ body: (WatchLine) -> Bool) throws(ControlFailure) {
        let socket = try connect()
        defer { socket.close() }
        if let cancellation {
            guard cancellation.register(socket) else { return }
        }
        defer { cancellation?.unregister() }  // runs before the close above: no shutdown of a reused descriptor
        try write(.watch, secrets: [], to: socket)
        var source = SocketByteSource(socket: socket, deadline: nil)
        var subscribed = false
        while let reply = try readReply(from: &source) {
            let line: WatchLine
            switch (reply, subscribed) {
            case (.failure(let failure), _): throw failure
            case (.watching(let state), false): line = .state(state)
            case (.event(let event), true): line = .event(event)
            default: throw unexpected(reply)
            }
            subscribed = true
            guard body(line) else { return }
        }
    }

    /// A reply that does not fit the request.
    public func unexpected(_ reply: ControlReply) -> ControlFailure {
        ControlFailure(.failure, "the protfs daemon of \(mountpoint) answered with an unexpected \(reply); "
                       + "protfsctl and the daemon must come from the same release")
    }

    func connect() throws(ControlFailure) -> UnixSocket {
        var refusal: Errno?
        for path in candidates {
            do {
                return try UnixSocket.connected(to: path)
            } catch {
                // A stale socket (ECONNREFUSED) or one removed meanwhile: try the next.
                if error.rawValue != ECONNREFUSED && error.rawValue != ENOENT { refusal = refusal ?? error }
            }
        }
        if let refusal {
            throw ControlFailure(.failure, "cannot connect to the protfs daemon of \(mountpoint): \(refusal)")
        }
        throw Self.noDaemon(mountpoint, directories)
    }

    func write(_ request: ControlRequest, secrets: [SecureBuffer], to socket: UnixSocket) throws(ControlFailure) {
        var sink = SocketByteSink(socket: socket)
        do {
            try ControlWire.write(request, secrets: secrets, to: &sink)
        } catch {
            // A daemon that refuses a connection at once (too many of this user's, say) says
            // why and closes it, perhaps before the request went out: its reason beats EPIPE.
            var source = SocketByteSource(socket: socket, deadline: Deadline(after: .seconds(1)))
            if case .failure(let refusal)? = try? ControlWire.readReply(from: &source) { throw refusal }
            throw ControlFailure(.failure, "cannot send the request to the protfs daemon of \(mountpoint): \(error)")
        }
    }

    func readReply(from source: inout SocketByteSource) throws(ControlFailure) -> ControlReply? {
        do {
            return try ControlWire.readReply(from: &source)
        } catch {
            throw ControlFailure(.failure, "the reply of the protfs daemon of \(mountpoint) was not understood: \(error)")
        }
    }

    private static func noDaemon(_ mountpoint: String, _ places: [String]) -> ControlFailure {
        ControlFailure(.notFound, "no protfs daemon serves \(mountpoint) (looked in \(places.joined(separator: " and "))); "
                       + "mount it with 'protfs mount BACKING \(mountpoint)'")
    }
}
