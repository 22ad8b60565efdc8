import ProtfsDomain
import ProtfsSystem

/// Why an item request was refused: each says what and what to do, with docs/CONTROL.md's exit
/// code. No case carries a secret.
public enum ItemError: CommandError, Sendable, Equatable {
    case notFound(service: String, account: String)
    /// A search, update or delete of matches found none.
    case noMatch
    case duplicate(service: String, account: String)
    /// The class of the accessibility forbids it in this state (`errSecInteractionNotAllowed`).
    case refusedByLock(accessibility: ItemAccessibility, state: LockState)
    /// `whenPasscodeSetThisDeviceOnly` on a vault without a passcode.
    case passcodeNotSet
    case invalid(String)
    case tooMany(limit: Int)
    case tooLarge(total: Int, limit: Int)
    /// The owner's attributes (not the secrets) would total more than one owner may keep.
    case attributesTooLarge(total: Int, limit: Int)
    /// The room that every owner but root and the mounting user share is taken.
    case othersRoomFull(items: Int, secretBytes: Int, attributeBytes: Int)
    /// A listing or search whose reply could take more than one reply may (judged before any
    /// record is read).
    case listingTooLarge(items: Int, bytes: Int, limit: Int)
    case damaged(service: String, account: String)
    case system(operation: String, errno: Errno)

    public var exitCode: ExitCode {
        switch self {
        case .notFound, .noMatch: .notFound
        case .duplicate: .alreadyExists
        case .refusedByLock, .passcodeNotSet: .refusedByLockState
        case .invalid: .usage
        case .tooMany, .tooLarge, .attributesTooLarge, .othersRoomFull, .listingTooLarge, .damaged, .system: .failure
        }
    }

    public var description: String {
        switch self {
        case .notFound(let service, let account):
            "no item with service '\(service)' and account '\(account)'"
        case .noMatch:
            "none of your items matches the query"
        case .duplicate(let service, let account):
            "an item with service '\(service)' and account '\(account)' exists already; use 'protfsctl item update'"
        case .refusedByLock(let accessibility, let state):
            "the vault is \(state.rawValue), and an item that is \(accessibility.name) needs the key of class "
                + "\(accessibility.protectionClass.name), which this state does not allow; unlock the vault with 'protfsctl unlock'"
        case .passcodeNotSet:
            "whenPasscodeSetThisDeviceOnly items need a vault with a passcode, and this vault has none"
        case .invalid(let reason): reason
        case .tooMany(let limit):
            "you have \(limit) items in this vault, the most one user may keep; delete some first"
        case .tooLarge(let total, let limit):
            "your items' secrets would total \(total) bytes, more than the \(limit) one user may keep; delete some, "
                + "or keep large secrets in files of the same class"
        case .attributesTooLarge(let total, let limit):
            "your items' attributes would total \(total) bytes, more than the \(limit) one user may keep; delete some, "
                + "or keep fewer or shorter attributes"
        case .othersRoomFull(let items, let secretBytes, let attributeBytes):
            "the users of this vault other than root and its owner share room for \(items) items, \(secretBytes) bytes "
                + "of secrets and \(attributeBytes) bytes of attributes, and it is taken; delete some, or ask the vault's owner"
        case .listingTooLarge(let items, let bytes, let limit):
            "the \(items) items that may match could take \(bytes) bytes in one answer, more than the \(limit) it may "
                + "take; narrow the query (a service, more attributes, a limit)"
        case .damaged(let service, let account):
            "the record of the item with service '\(service)' and account '\(account)' is damaged (it does not "
                + "authenticate); run 'protfs fsck --repair' on the unmounted vault to move it aside"
        case .system(let operation, let errno):
            "cannot \(operation) the item store: \(errno)"
        }
    }
}
