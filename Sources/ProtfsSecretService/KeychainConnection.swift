import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// The daemon of the user's keychain vault: the mount point given on the command line, else
/// as every Swift client chooses (`KeychainChoice`: `PROTFS_KEYCHAIN`, `~/.config/protfs/keychain`,
/// else the caller's only vault). Chosen again at each request, so a provider started before
/// the mount serves it once it is there. The daemon acts for this process's uid (it checks
/// the peer), so the provider sees only its user's items.
struct KeychainConnection: Sendable {
    /// The mount point on the command line.
    let given: String?

    private func client() throws(BusErrorReply) -> ControlClient {
        switch KeychainChoice.current(given: given, givenSource: "the command line") {
        case .found(let mountpoint):
            do { return try ControlClient(mountpoint: mountpoint) } catch { throw Self.busError(error) }
        case .none(let reason): throw .failed(reason)
        }
    }

    private func send(_ request: ControlRequest, secrets: [SecureBuffer] = []) throws(BusErrorReply) -> ControlReply {
        let client = try client()
        do throws(ControlFailure) {
            let reply = try client.send(request, secrets: secrets)
            if case .failure(let failure) = reply { throw failure }
            return reply
        } catch { throw Self.busError(error) }
    }

    func state() throws(BusErrorReply) -> LockState {
        guard case .status(let report) = try send(.status) else { throw .failed("unexpected reply to status") }
        return report.state
    }

    func search(_ query: ItemQuery) throws(BusErrorReply) -> [ItemAttributes] {
        guard case .items(let items) = try send(.item(ItemRequest(uid: nil, .search(query)))) else {
            throw .failed("unexpected reply to a search")
        }
        return items
    }

    func secret(of identity: ItemKey) throws(BusErrorReply) -> (ItemAttributes, SecureBuffer) {
        let client = try client()
        do throws(ControlFailure) {
            let message = try client.exchange(.item(ItemRequest(uid: nil, .get(service: identity.service, account: identity.account))))
            if case .failure(let failure) = message.reply { throw failure }
            guard case .item(let attributes) = message.reply, let secret = message.secret else { throw client.unexpected(message.reply) }
            return (attributes, secret)
        } catch { throw Self.busError(error) }
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

    func unlock(passcode: SecureBuffer) throws(BusErrorReply) { _ = try send(.unlock, secrets: [passcode]) }

    /// The daemon's refusals as the API's errors; messages carry no secret.
    static func busError(_ error: ControlFailure) -> BusErrorReply {
        switch error.exitCode {
        case .refusedByLockState: .isLocked(error.message)
        case .notFound: BusErrorReply(name: "org.freedesktop.Secret.Error.NoSuchObject", message: error.message)
        case .usage: .invalidArguments(error.message)
        default: .failed(error.message)
        }
    }
}
