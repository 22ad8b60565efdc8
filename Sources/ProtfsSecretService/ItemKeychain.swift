import ProtfsCrypto
import ProtfsDomain

/// What the provider asks of the user's keychain: `KeychainRequests` answers through the
/// daemon's control socket; the unit tests answer from items in memory, so the provider's
/// dispatch and properties are tested without a daemon or a bus.
protocol ItemKeychain: Sendable {
    func state() throws(BusErrorReply) -> LockState
    func search(_ query: ItemQuery) throws(BusErrorReply) -> (found: [KeychainRequests.Found], state: LockState)
    func secret(of identity: ItemKey) throws(BusErrorReply) -> (ItemAttributes, SecureBuffer)
    func add(_ attributes: ItemAttributes, secret: SecureBuffer) throws(BusErrorReply)
    func update(_ identity: ItemKey, _ changes: ItemChanges, secret: SecureBuffer?) throws(BusErrorReply)
    func delete(_ identity: ItemKey) throws(BusErrorReply)
    func lockNow() throws(BusErrorReply)
    func unlock(passcode: SecureBuffer) throws(BusErrorReply)
}

extension KeychainRequests: ItemKeychain {}
