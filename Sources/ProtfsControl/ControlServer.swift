import Glibc
import ProtfsControlProtocol
import ProtfsSystem
import Synchronization

/// Why the control socket could not be served.
public enum ControlServerError: Error, Sendable, Equatable, CustomStringConvertible {
    case noRuntimeDirectory
    case unsafeDirectory(path: String)
    case pathTooLong(path: String)
    case alreadyServed(path: String)
    case occupied(path: String)
    case system(operation: String, path: String, errno: Errno)

    public var description: String {
        switch self {
        case .noRuntimeDirectory:
            "XDG_RUNTIME_DIR is not set, so a daemon not running as root has no place for its control socket; "
                + "log in through a session that sets it (or set it to a private directory)"
        case .unsafeDirectory(let path):
            "\(path) is not a directory owned by this user or root and closed to others; remove it or fix its owner and mode"
        case .pathTooLong(let path):
            "the control socket path \(path) is longer than a Unix socket allows; use a shorter XDG_RUNTIME_DIR"
        case .alreadyServed(let path):
            "a live protfs daemon already answers on \(path); it serves this mount point"
        case .occupied(let path):
            "\(path) exists and is not a socket; remove it"
        case .system(let operation, let path, let errno):
            "cannot \(operation) \(path): \(errno)"
        }
    }
}

/// The daemon's control socket (docs/CONTROL.md): created at `start()`, served by an accept
/// thread and one thread per connection (within the bounds of `ControlAdmission`; more are
/// refused with a message), removed at `stop()`.
public final class ControlServer: Sendable {
    public let socketPath: String
    private let directory: String
    private let handler: any ControlHandler
    private let mountpoint: String
    private let mountingUser: uid_t
    private let admission: ControlAdmission
    private let state = Mutex(State())

    private struct State {
        var listener: SharedSocket?
        /// The listener's inode, so `stop()` removes only the socket it created.
        var inode: ino_t = 0
        var acceptRunning = false
        var stopping = false
        var connections: [ObjectIdentifier: SharedSocket] = [:]
        /// Who holds each connection.
        var tenants: [ObjectIdentifier: ControlAdmission.Tenant] = [:]
    }

    /// - Parameters:
    ///   - mountpoint: the canonical mount point (`ControlSocketPath.canonicalMountpoint`).
    ///   - mountingUser: the vault's owner (`-o owner=`, by default the user who mounted):
    ///     who may lock, unlock, change the passcode and look up backing paths (besides root).
    ///   - directory: where the socket goes; by default `/run/protfs` for root and
    ///     `$XDG_RUNTIME_DIR/protfs` for others.
    public init(handler: any ControlHandler, mountpoint: String, mountingUser: uid_t,
                directory: String? = nil) throws(ControlServerError) {
        guard let directory = directory ?? ControlSocketPath.serverDirectory() else { throw .noRuntimeDirectory }
        self.directory = directory
        self.handler = handler
        self.mountpoint = mountpoint
        self.mountingUser = mountingUser
        admission = ControlAdmission(mountpoint: mountpoint, mountingUser: mountingUser)
        socketPath = directory + "/" + ControlSocketPath.fileName(forMountpoint: mountpoint)
        guard socketPath.utf8.count <= ControlSocketPath.maximumPathLength else { throw .pathTooLong(path: socketPath) }
    }

    /// Creates the directory (0755) and the socket (0666), removing a stale socket left by
    /// a daemon that died; refuses when a live daemon answers there. Returns once clients
    /// can connect.
    public func start() throws(ControlServerError) {
        try prepareDirectory()
        try removeStaleSocket()
        let listener: SharedSocket
        do {
            listener = SharedSocket(try UnixSocket.listening(at: socketPath, backlog: 16))
        } catch {
            throw .system(operation: "listen on", path: socketPath, errno: error)
        }
        var st = stat()
        guard chmod(socketPath, ControlSocketPath.socketMode) == 0, lstat(socketPath, &st) == 0 else {
            let error = Errno.current
            unlink(socketPath)
            throw .system(operation: "set the mode of", path: socketPath, errno: error)
        }
        state.withLock { state in
            state.listener = listener
            state.inode = st.st_ino
            state.acceptRunning = true
        }
        do { try JoinableThread.detach { [self] in acceptConnections(on: listener) } } catch {
            state.withLock { state in
                state.listener = nil
                state.acceptRunning = false
            }
            unlink(socketPath)
            throw .system(operation: "start a thread for", path: socketPath, errno: error)
        }
    }

    /// Closes and removes the socket and ends every connection (watchers see the end of
    /// their stream); waits a little for requests in progress to finish.
    public func stop() {
        let inode: ino_t? = state.withLock { state in
            guard !state.stopping, let listener = state.listener else { return nil }
            state.stopping = true
            listener.socket.shutdown()
            state.listener = nil  // closed once the accept thread lets go of it too
            return state.inode
        }
        guard let inode else { return }
        waitUntil(within: .seconds(5)) { !$0.acceptRunning }
        var st = stat()
        if lstat(socketPath, &st) == 0, st.st_ino == inode { unlink(socketPath) }
        state.withLock { state in
            for connection in state.connections.values { connection.socket.shutdown() }
        }
        waitUntil(within: .seconds(2)) { $0.connections.isEmpty }
    }

    /// Connections being served now (watchers included).
    var connectionCount: Int { state.withLock { $0.connections.count } }

    // MARK: accepting

    private func acceptConnections(on listener: SharedSocket) {
        defer { state.withLock { $0.acceptRunning = false } }
        while true {
            let accepted: UnixSocket
            do {
                accepted = try listener.socket.accept()
            } catch {
                if state.withLock({ $0.stopping }) { return }
                switch error.rawValue {
                case ECONNABORTED, EPROTO: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    sleep(for: .milliseconds(100))  // out of descriptors or memory for now: let connections finish
                    continue
                default: return
                }
            }
            guard let peer = accepted.peer() else {
                refuse(accepted, "the daemon could not tell who is asking")
                continue
            }
            let connection = SharedSocket(accepted)
            let key = ObjectIdentifier(connection)
            let verdict: Admission = state.withLock { state in
                if state.stopping { return .stopping }
                if let refusal = admission.refusal(ofConnectionBy: peer.uid, among: state.tenants.values) {
                    return .refused(refusal)
                }
                state.connections[key] = connection
                state.tenants[key] = ControlAdmission.Tenant(uid: peer.uid)
                return .admitted
            }
            switch verdict {
            case .admitted: break
            case .refused(let reason): refuse(connection.socket, reason); continue
            case .stopping: continue  // the connection closes as it goes
            }
            let session = ControlSession(connection: connection, peer: peer, handler: handler, mountpoint: mountpoint,
                                         mountingUser: mountingUser, startWatch: { [self] in startWatch(on: key) },
                                         startItemRequest: { [self] in startItemRequest(on: key) })
            // The connection closes once the server, this closure and the session let go of it.
            let ended: @Sendable () -> Void = { [self] in
                state.withLock { state in
                    state.connections[key] = nil
                    state.tenants[key] = nil
                }
            }
            do {
                try JoinableThread.detach {
                    session.serve()
                    ended()
                }
            } catch {
                // No thread to serve it: the client sees the connection end.
                ended()
            }
        }
    }

    private enum Admission { case admitted, refused(String), stopping }

    /// Counts the connection `key` as a watch, if its uid may hold one more; else why not.
    private func startWatch(on key: ObjectIdentifier) -> String? {
        state.withLock { state in
            guard let uid = state.tenants[key]?.uid else { return "the daemon is stopping" }
            if let refusal = admission.refusal(ofWatchBy: uid, among: state.tenants.values) { return refusal }
            state.tenants[key]?.watching = true
            return nil
        }
    }

    /// Counts the connection `key` as an item request in flight (until the connection
    /// ends), once its uid may start one more; why not when no room is made within
    /// `ControlAdmission.itemRequestWait`. The wait covers a client's next request, which can
    /// arrive before the thread that answered its last one has ended that connection.
    private func startItemRequest(on key: ObjectIdentifier) -> String? {
        let deadline = Deadline(after: ControlAdmission.itemRequestWait)
        while true {
            let refusal: String? = state.withLock { state in
                guard let uid = state.tenants[key]?.uid else { return "the daemon is stopping" }
                if let refusal = admission.refusal(ofItemRequestBy: uid, among: state.tenants.values) { return refusal }
                state.tenants[key]?.servingItem = true
                return nil
            }
            guard refusal != nil, deadline.millisecondsLeft > 0 else { return refusal }
            sleep(for: .milliseconds(10))
        }
    }

    /// Tells a refused client why, without waiting on it; its owner then closes the connection.
    private func refuse(_ connection: borrowing UnixSocket, _ reason: String) {
        if let frame = try? ControlWire.encoded(.failure(ControlFailure(.failure, reason))) {
            frame.withUnsafeBytes { _ = try? connection.send($0, nonBlocking: true) }
        }
    }

    private func waitUntil(within timeout: Duration, _ condition: (State) -> Bool) {
        let deadline = Deadline(after: timeout)
        while !state.withLock({ condition($0) }) && deadline.millisecondsLeft > 0 { sleep(for: .milliseconds(10)) }
    }

    // MARK: the socket's place

    private func prepareDirectory() throws(ControlServerError) {
        if mkdir(directory, ControlSocketPath.directoryMode) == 0 {
            chmod(directory, ControlSocketPath.directoryMode)  // mkdir's mode went through the umask
        } else if Errno.current != .exists {
            throw .system(operation: "create the directory", path: directory, errno: .current)
        }
        var st = stat()
        guard lstat(directory, &st) == 0 else { throw .system(operation: "inspect", path: directory, errno: .current) }
        let euid = geteuid()
        guard st.isDirectory, st.st_uid == euid || st.st_uid == 0, st.st_mode & 0o022 == 0 else {
            throw .unsafeDirectory(path: directory)
        }
        if st.st_uid == euid, st.st_mode & 0o7777 != ControlSocketPath.directoryMode {
            chmod(directory, ControlSocketPath.directoryMode)
        }
    }

    /// A socket nobody answers on was left by a daemon that died: remove it. One that
    /// answers belongs to a live daemon: refuse.
    private func removeStaleSocket() throws(ControlServerError) {
        var st = stat()
        guard lstat(socketPath, &st) == 0 else {
            if Errno.current == .noEntry { return }
            throw .system(operation: "inspect", path: socketPath, errno: .current)
        }
        guard st.st_mode & S_IFMT == S_IFSOCK else { throw .occupied(path: socketPath) }
        switch Result(catching: { () throws(Errno) in try UnixSocket.connected(to: socketPath) }) {
        case .success:
            throw .alreadyServed(path: socketPath)
        case .failure(let error) where error.rawValue == ECONNREFUSED:
            break
        case .failure(let error):
            throw .system(operation: "probe", path: socketPath, errno: error)
        }
        guard unlink(socketPath) == 0 || Errno.current == .noEntry else {
            throw .system(operation: "remove the stale socket", path: socketPath, errno: .current)
        }
    }
}
