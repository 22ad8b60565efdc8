import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain

/// What the provider asks of the daemon of the user's keychain vault: the mount point given on
/// the command line, else as every Swift client chooses (`KeychainChoice`). The connection is
/// kept (`KeychainConnection`): chosen once, reconnected and chosen again when its daemon goes,
/// so a provider started before the mount serves it once it is there. Each method is one
/// request. The daemon acts for this process's uid (it checks the peer), so the provider
/// sees only its user's items.
struct KeychainRequests: Sendable {
    let connection: KeychainConnection

    init(given: String?) {
        connection = KeychainConnection(given: given, givenSource: "the command line")
    }

    /// An item as a search shows it: its attributes, and whether the daemon would refuse its
    /// secret now.
    struct Found: Sendable {
        let item: ItemAttributes
        let locked: Bool
    }

    private func send(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(BusErrorReply) -> ControlReplyMessage {
        do { return try connection.exchange(request, secrets: secrets) } catch { throw Self.busError(error) }
    }

    func state() throws(BusErrorReply) -> LockState {
        guard case .status(let report) = try send(.status).reply else { throw .failed("unexpected reply to status") }
        return report.state
    }

    /// The items `query` matches, each with the daemon's verdict on its lock, and the lock state.
    func search(_ query: ItemQuery) throws(BusErrorReply) -> (found: [Found], state: LockState) {
        var query = query
        query.reportsLocks = true
        guard case .itemsWithLocks(let items, let locked, let state) = try send(.item(ItemRequest(uid: nil, .search(query)))).reply else {
            throw .failed("unexpected reply to a search")
        }
        return (zip(items, locked).map { Found(item: $0, locked: $1) }, state)
    }

    func secret(of identity: ItemKey) throws(BusErrorReply) -> (ItemAttributes, SecureBuffer) {
        let message = try send(.item(ItemRequest(uid: nil, .get(service: identity.service, account: identity.account))))
        guard case .item(let attributes) = message.reply, let secret = message.secret else {
            message.secret?.wipe()
            throw .failed("unexpected reply to a secret's request")
        }
        return (attributes, secret)
    }

    func add(_ attributes: ItemAttributes, secret: SecureBuffer) throws(BusErrorReply) {
        _ = try send(.item(ItemRequest(uid: nil, .add(attributes))), secrets: [secret])
    }

    func update(_ identity: ItemKey, _ changes: ItemChanges, secret: SecureBuffer?) throws(BusErrorReply) {
        _ = try send(.item(ItemRequest(uid: nil, .update(service: identity.service, account: identity.account, changes: changes,
                                                         changesSecret: secret != nil))), secrets: secret.map { [$0] } ?? [])
    }

    func delete(_ identity: ItemKey) throws(BusErrorReply) {
        _ = try send(.item(ItemRequest(uid: nil, .delete(service: identity.service, account: identity.account))))
    }

    func lockNow() throws(BusErrorReply) { _ = try send(.lock(.now)) }

    /// On a connection of its own: deriving the passcode's key takes a while, and the bus
    /// thread's requests must not wait for it.
    func unlock(passcode: SecureBuffer) throws(BusErrorReply) {
        do { _ = try connection.exchangeAlone(.unlock, secrets: [passcode]) } catch { throw Self.busError(error) }
    }

    /// The daemon's refusals as the API's errors; messages carry no secret.
    static func busError(_ error: KeychainConnectionError) -> BusErrorReply {
        switch error {
        case .noKeychain(let reason): .failed(reason)
        case .unreachable(_, let failure): .failed(failure.message)
        case .refused(let failure):
            switch failure.exitCode {
            case .refusedByLockState: .isLocked(failure.message)
            case .notFound: BusErrorReply(name: "org.freedesktop.Secret.Error.NoSuchObject", message: failure.message)
            case .usage: .invalidArguments(failure.message)
            default: .failed(failure.message)
            }
        }
    }
}
