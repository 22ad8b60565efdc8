import Glibc
import ProtfsControlProtocol
import ProtfsCrypto
import ProtfsDomain
import ProtfsSystem

/// The daemon side of the control socket. The server checks the peer (SO_PEERCRED) before it
/// calls the privileged members, decodes the requests and encodes the replies; the daemon
/// implements this protocol and knows nothing of the wire format.
public protocol ControlHandler: Sendable {
    /// `caller`: the peer's uid (nil when unknown), whose items are counted.
    func status(caller: uid_t?) -> StatusReport
    /// Returns when the request is satisfied (`locking`, or `locked` for `.wait`/`.now`);
    /// `requester` is who asked, for the log.
    func lock(_ request: LockRequest, by requester: Requester) throws(ControlFailure)
    /// `passcode` nil: a vault without one, opened by the device key.
    func unlock(passcode: SecureBuffer?, by requester: Requester) throws(ControlFailure)
    /// `old` nil sets a passcode on a vault without one; `new` nil removes the passcode (and
    /// the `whenPasscodeSetThisDeviceOnly` items).
    func changePasscode(old: SecureBuffer?, new: SecureBuffer?) throws(ControlFailure)
    /// The backing object of the mount-relative path `components` (plaintext names from the
    /// root), relative to the backing directory.
    func backingPath(of components: [[UInt8]]) throws(ControlFailure) -> String
    /// Calls `listener` with every later event until it returns false (the client went away);
    /// returns the state at the moment of subscribing, for the `state <current>` line.
    func watch(_ listener: @escaping @Sendable (LockEvent) -> Bool) -> LockState
    /// A keychain item request for `owner` (the peer's uid, or the uid root named); `secret`
    /// is the one the request carries, if any. Returns `done`, `item` with the secret, `items`, or
    /// `itemsWithSecrets` with the secrets one after the other.
    func item(_ operation: ItemRequest.Operation, owner: uid_t, secret: SecureBuffer?) throws(ControlFailure) -> ControlReplyMessage
    /// A backup of the vault (docs/BACKUP.md) streamed into `archive`, the client's file, which
    /// the handler checks before it writes. `passcode` nil: the client says the vault has none.
    /// `progress` gets the objects and file bytes so far after each object; it returns false
    /// once the client is gone, and the walk stops. `caller` (the peer's uid): the archive of a
    /// caller other than root carries only the caller's items. Returns the items left out.
    func backup(into archive: FileDescriptor, passcode: SecureBuffer?, passphrase: SecureBuffer, caller: uid_t,
                progress: @escaping (_ objects: UInt64, _ bytes: UInt64) -> Bool) throws(ControlFailure) -> BackupItemsLeftOut
}
