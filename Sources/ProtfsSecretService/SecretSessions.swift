import ProtfsCrypto

/// The sessions clients open (`OpenSession`): `plain`, or an AES key agreed by
/// Diffie-Hellman. Each belongs to the bus name that opened it; at most `limit` live at once
/// (the oldest goes first), so a client that never closes its sessions cannot grow them.
struct SecretSessions {
    enum Algorithm {
        case plain
        case encrypted(key: SecureBuffer)
    }

    struct Session {
        let path: String
        let owner: String
        let algorithm: Algorithm
    }

    static let limit = 256
    static let pathPrefix = ObjectPaths.root + "/session/s"

    private var sessions: [String: Session] = [:]
    private var order: [String] = []
    private var next = 1

    mutating func open(_ algorithm: Algorithm, owner: String) -> String {
        let path = Self.pathPrefix + String(next)
        next += 1
        sessions[path] = Session(path: path, owner: owner, algorithm: algorithm)
        order.append(path)
        if order.count > Self.limit { close(order[0]) }
        return path
    }

    /// The session at `path`, for its owner only.
    func session(_ path: String, for sender: String) throws(BusErrorReply) -> Session {
        guard let session = sessions[path], session.owner == sender else { throw .noSession }
        return session
    }

    mutating func close(_ path: String) {
        guard let session = sessions.removeValue(forKey: path) else { return }
        if case .encrypted(let key) = session.algorithm { key.wipe() }
        order.removeAll { $0 == path }
    }

    func exists(_ path: String) -> Bool { sessions[path] != nil }
}
