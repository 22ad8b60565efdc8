import ProtfsCrypto
import ProtfsDomain

// The control protocol between `protfsctl` and the daemon, over the Unix stream socket of
// `ControlSocketPath`: its grammar is docs/CONTROL.md's ("Messages"), and
// `ControlGrammarDocumentTests` holds that grammar to the names and limits below.

/// The name a request's header gives its kind (`"request"`), one per request the wire knows.
public enum ControlRequestKind: String, CaseIterable, Codable, Sendable {
    case status, lock, unlock, passwd, unlockWithoutPasscode, setPasscode, removePasscode, backingPath, watch, backup
    case itemAdd, itemGet, itemUpdate, itemDelete, itemList, itemSearch, itemUpdateMatches, itemDeleteMatches
}

/// The name a reply frame gives its kind (`"reply"`).
public enum ControlReplyKind: String, CaseIterable, Codable, Sendable {
    case done, status, backingPath, failure, watching, event, item, items, itemsWithSecrets, itemsWithLocks, backupProgress, backedUp
}

/// A request of `protfsctl`, without its secrets (`ControlRequestMessage` carries both).
public enum ControlRequest: Sendable, Equatable {
    case status
    case lock(LockRequest)
    case unlock
    case changePasscode
    /// Vaults without a passcode (docs/BACKUP.md): unlock with the device key alone, set a
    /// passcode on such a vault, remove the passcode of a vault.
    case unlockWithoutPasscode
    case setPasscode
    case removePasscode
    /// The plaintext names from the mount's root to the object.
    case backingPath([[UInt8]])
    case watch
    case item(ItemRequest)
    /// A backup of the mounted vault (docs/BACKUP.md) into the descriptor that follows the
    /// secrets; `passcode`: the vault has one, and it comes first.
    case backup(passcode: Bool)

    /// The secrets that follow the header on the wire: how many, and the lengths each may have.
    public var secretLengths: [ClosedRange<Int>] {
        let passcode = 1...ControlLimits.maximumSecretLength
        switch self {
        case .unlock: return [passcode]
        case .changePasscode: return [passcode, passcode]
        case .setPasscode, .removePasscode: return [passcode]
        case .item(let request): return request.secretLengths
        case .backup(let withPasscode): return (withPasscode ? [passcode] : []) + [passcode]
        case .status, .lock, .backingPath, .watch, .unlockWithoutPasscode: return []
        }
    }

    public var secretCount: Int { secretLengths.count }

    /// Only the owner (by default the mounting user) and root may change the state, the passcode, or learn backing
    /// names; anyone may ask for the status or watch.
    public var needsMountingUser: Bool {
        switch self {
        case .status, .watch, .item: false
        case .lock, .unlock, .changePasscode, .backingPath, .unlockWithoutPasscode, .setPasscode, .removePasscode, .backup: true
        }
    }

    /// What the request does, for "not allowed: ..." messages.
    public var action: String {
        switch self {
        case .status: "ask for the status of"
        case .lock: "lock"
        case .unlock, .unlockWithoutPasscode: "unlock"
        case .changePasscode, .setPasscode, .removePasscode: "change the passcode of"
        case .backingPath: "look up backing paths in"
        case .watch: "watch"
        case .item: "use the keychain items of"
        case .backup: "make a backup of"
        }
    }
}

/// A request as the server received it: the passcodes are in locked memory, wiped when the
/// message is released.
public struct ControlRequestMessage: Sendable {
    public let request: ControlRequest
    public let secrets: [SecureBuffer]
}

/// A reply as the client received it: the secret of an `item` reply (or the secrets of an
/// `itemsWithSecrets` reply, one after the other) in locked memory.
public struct ControlReplyMessage: Sendable {
    public let reply: ControlReply
    public let secret: SecureBuffer?

    public init(reply: ControlReply, secret: SecureBuffer? = nil) {
        self.reply = reply
        self.secret = secret
    }
}

/// One reply frame of the daemon.
public enum ControlReply: Sendable, Equatable {
    case done
    case status(StatusReport)
    case backingPath(String)
    case failure(ControlFailure)
    /// The first frame of a watch: subscribed, and the state at that moment.
    case watching(LockState)
    case event(LockEvent)
    /// An item's attributes; its secret follows the frame.
    case item(ItemAttributes)
    /// Attributes only, never a secret.
    case items([ItemAttributes])
    /// Items and their secrets: one secret frame follows, the secrets one after the other in
    /// the items' order, each as long as `secretLengths` says.
    case itemsWithSecrets([ItemAttributes], secretLengths: [Int])
    /// Items, whether each one's secret cannot be read now (the daemon's access table decides),
    /// and the vault's lock state, as of one moment (a search that `reportsLocks`).
    case itemsWithLocks([ItemAttributes], locked: [Bool], state: LockState)
    /// How far a backup is: objects and file bytes so far.
    case backupProgress(objects: UInt64, bytes: UInt64)
    /// A backup is complete and synced; how many `...ThisDeviceOnly` items it left out.
    case backedUp(BackupItemsLeftOut)
}

extension ControlReply {
    /// Whether a secret frame follows this one.
    var carriesSecret: Bool {
        switch self {
        case .item, .itemsWithSecrets: true
        default: false
        }
    }
}

/// The limits every frame is held to, on both sides.
public enum ControlLimits {
    public static let maximumHeaderLength = 64 * 1024
    /// A reply listing many items may be longer than a request.
    public static let maximumReplyLength = 64 * 1024 * 1024
    /// At most two secrets follow a header (`passwd`); how many is fixed by the request.
    public static let maximumSecretLength = PasscodeLimits.maximumByteCount
    public static let maximumJSONDepth = 8
    /// A path of PATH_MAX bytes has at most this many components.
    public static let maximumPathComponents = 2048
    public static let maximumNameLength = 255
    /// How long a client has to send its whole request.
    public static let requestTimeout = Duration.seconds(5)
    /// How long the daemon keeps a connection open between a client's requests: a provider
    /// or a program calling `SecItem*` sends its next one on the same connection
    /// (`KeptControlConnection`) and reconnects after a longer pause.
    public static let idleTimeout = Duration.seconds(30)
}
