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
    /// The sockets that may serve it, in the order they are tried, with the uids trusted there.
    let candidates: [(path: String, directory: ControlSocketDirectory)]
    private let directories: [ControlSocketDirectory]

    /// Finds the daemon's socket without connecting (so that `passwd` can say "no daemon"
    /// before it asks for passcodes); exit 6 when there is none, a failure saying why when
    /// the only sockets there are in places or of owners this user may not trust. When no
    /// daemon serves `mountpoint` itself, the protfs mount that holds it is asked (a path
    /// inside a vault names its vault).
    public init(mountpoint: String, directories: [ControlSocketDirectory] = ControlSocketPath.clientDirectories())
        throws(ControlFailure) {
        let canonical = ControlSocketPath.canonicalMountpoint(mountpoint)
        var (found, distrust) = Self.sockets(for: canonical, in: directories)
        var named = canonical
        if found.isEmpty, distrust == nil, let holder = MountTable.protfsMountPoint(containing: canonical) {
            (found, distrust) = Self.sockets(for: holder, in: directories)
            named = holder
        }
        self.mountpoint = named
        self.directories = directories
        candidates = found
        if candidates.isEmpty, let distrust { throw Self.untrusted(named, distrust) }
        guard !candidates.isEmpty else { throw Self.noDaemon(canonical, directories) }
    }

    /// The trusted sockets for `mountpoint` in `directories`, and why the first untrusted one
    /// was not.
    private static func sockets(for mountpoint: String, in directories: [ControlSocketDirectory])
        -> (found: [(path: String, directory: ControlSocketDirectory)], distrust: String?) {
        let name = ControlSocketPath.fileName(forMountpoint: mountpoint)
        var found: [(path: String, directory: ControlSocketDirectory)] = []
        var distrust: String?
        for directory in directories {
            let path = directory.path + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            if let why = directory.distrust(ofSocket: path) { distrust = distrust ?? why } else { found.append((path, directory)) }
        }
        return (found, distrust)
    }

    /// Sends `request` with its passcodes and returns the daemon's reply; a `failure`
    /// reply is thrown.
    public func send(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(ControlFailure) -> ControlReply {
        try exchange(request, secrets: secrets).reply
    }

    /// Like `send`, with the secret that follows an `item` reply (in locked memory).
    public func exchange(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(ControlFailure) -> ControlReplyMessage {
        let socket = try connect()
        try write(request, secrets: secrets, to: socket)
        let message: ControlReplyMessage?
        do {
            // No deadline: `lock --wait` may take the whole grace.
            message = try socket.reading(until: nil) { source throws(ControlWireError) in try ControlWire.readReplyMessage(from: &source) }
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
        let shared = SharedSocket(try connect())
        if let cancellation {
            guard cancellation.register(shared) else { return }
        }
        defer { cancellation?.unregister() }
        try write(.watch, secrets: [], to: shared.socket)
        try shared.socket.reading(until: nil) { source throws(ControlFailure) in
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
    }

    /// A reply that does not fit the request.
    public func unexpected(_ reply: ControlReply) -> ControlFailure {
        ControlFailure(.failure, "the protfs daemon of \(mountpoint) answered with an unexpected \(reply); "
                       + "protfsctl and the daemon must come from the same release")
    }

    /// A connection to a daemon this user may trust: nothing has been sent on it yet.
    func connect() throws(ControlFailure) -> UnixSocket {
        var refusal: Errno?
        var distrust: String?
        for (path, directory) in candidates {
            let socket: UnixSocket
            do {
                socket = try UnixSocket.connected(to: path)
            } catch {
                // A stale socket (ECONNREFUSED) or one removed meanwhile: try the next.
                if error.rawValue != ECONNREFUSED && error.rawValue != ENOENT { refusal = refusal ?? error }
                continue
            }
            guard let why = directory.distrust(ofPeer: socket, at: path) else { return socket }
            distrust = distrust ?? why
        }
        if let distrust { throw Self.untrusted(mountpoint, distrust) }
        if let refusal {
            throw ControlFailure(.failure, "cannot connect to the protfs daemon of \(mountpoint): \(refusal)")
        }
        throw Self.noDaemon(mountpoint, directories)
    }

    func write(_ request: ControlRequest, secrets: [SecureBuffer], to socket: borrowing UnixSocket) throws(ControlFailure) {
        do {
            try socket.writing { sink throws(ControlWireError) in try ControlWire.write(request, secrets: secrets, to: &sink) }
        } catch {
            // A daemon that refuses a connection at once (too many of this user's, say) says
            // why and closes it, perhaps before the request went out: its reason beats EPIPE.
            let answer = try? socket.reading(until: Deadline(after: .seconds(1))) { source throws(ControlWireError) in
                try ControlWire.readReply(from: &source)
            }
            if case .failure(let refusal)? = answer { throw refusal }
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

    private static func untrusted(_ mountpoint: String, _ why: String) -> ControlFailure {
        ControlFailure(.failure, "nothing was sent to the protfs daemon of \(mountpoint): \(why)")
    }

    private static func noDaemon(_ mountpoint: String, _ places: [ControlSocketDirectory]) -> ControlFailure {
        ControlFailure(.notFound, "no protfs daemon serves \(mountpoint) (looked in \(places.map(\.path).joined(separator: " and "))); "
                       + "mount it with 'protfs mount BACKING \(mountpoint)'")
    }
}
