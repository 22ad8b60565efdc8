import ProtfsCrypto
import ProtfsDomain

// The control protocol between `protfsctl` and the daemon, over the Unix stream socket of
// `ControlSocketPath`. One request per connection; every integer is big-endian.
//
//   request  := magic header secret* descriptor?
//   magic    := "PFC" 0x01                       (the protocol version is the last byte)
//   header   := u32 length (1 ... 65536), then that many bytes of UTF-8 JSON:
//                 {"request":"status"}
//                 {"request":"lock","mode":"normal"|"wait"|"now"}
//                 {"request":"unlock"}                          + 1 secret: the passcode
//                 {"request":"passwd"}                          + 2 secrets: old, new
//                 {"request":"unlockWithoutPasscode"}           (a vault without a passcode)
//                 {"request":"setPasscode"}                     + 1 secret: the new passcode
//                 {"request":"removePasscode"}                  + 1 secret: the current one
//                 {"request":"backingPath","components":[[byte, ...], ...]}
//                 {"request":"watch"}
//                 {"request":"backup","passcode":true|false}    + the passcode when true, then
//                                                               the backup passphrase, then
//                                                               the archive's descriptor
//                 {"request":"itemAdd","uid":N|null,"item":{ATTRIBUTES}}     + 1 secret: the item's
//                 {"request":"itemGet","uid":N|null,"service":"...","account":"..."}
//                 {"request":"itemUpdate","uid":N|null,"service":"...","account":"...",
//                  "changes":{SOME ATTRIBUTES},"secret":true|false}        + 1 secret when true
//                 {"request":"itemDelete","uid":N|null,"service":"...","account":"..."}
//                 {"request":"itemList","uid":N|null,"service":"..."|null}
//                 {"request":"itemSearch","uid":N|null,QUERY}
//                 {"request":"itemUpdateMatches","uid":N|null,"match":{QUERY},"changes":{SOME ATTRIBUTES},
//                  "rename":{"service":"...","account":"..." (either, both or none)},"secret":true|false}
//                                                               + 1 secret when true
//                 {"request":"itemDeleteMatches","uid":N|null,"match":{QUERY}}
//   secret   := u32 length, then its bytes: a passcode or backup passphrase 1 ... 4096, an
//               item's secret 0 ... 65536
//   descriptor := one byte 0 carrying the descriptor (SCM_RIGHTS)
//
// ATTRIBUTES: "service", "account", "label", "description", "comment" (strings),
// "generic" (base64), "accessible" (canonical name), and when not empty "attributes" (the
// lookup attributes: {"NAME":"VALUE", ...}) and "contentType"; an item in a reply also has
// "created" and "modified" (Unix seconds).
//
// QUERY (items with all of these): "service", "account" (a string or null: any) and
// "attributes" (lookup attributes the item has: {"NAME":"VALUE", ...}); when given, "label",
// "description", "comment", "generic", "accessible" (equal to the item's), "absent" (names of
// lookup attributes the item lacks), "limit" (N >= 1: the first N by service then account),
// "secrets" (true: answer with the secrets, itemSearch only), "shown" (true: "attributes" are
// matched against the attributes the Secret Service shows: the lookup attributes, or for an
// item without any, "service" and "username") and "locks" (true: answer whether each item is
// locked, itemSearch only, not with "secrets").
//
// The number of secrets follows from the request; the server reads each one straight into
// locked memory, so a passcode or an item's secret never passes through JSON, a String or an
// array. Keys other
// than the ones shown, nesting deeper than 8, a missing or extra byte, or a message not
// complete within 5 s are refused with a `failure` reply (or, for a connection that sent
// nothing, silence) and the connection is closed.
//
//   reply    := u32 length (1 ... 65536), then UTF-8 JSON, one of:
//                 {"reply":"done"}
//                 {"reply":"status","status":{...StatusReport...}}
//                 {"reply":"backingPath","path":"..."}
//                 {"reply":"failure","exitCode":N,"message":"..."}
//                 {"reply":"watching","state":"..."}      then, for as long as the client
//                 {"reply":"event","event":"..."}          stays, one frame per event
//                 {"reply":"item","item":{ATTRIBUTES}}     then 1 secret, as in a request
//                 {"reply":"items","items":[{ATTRIBUTES}, ...]}   (never a secret; itemList, itemSearch)
//                 {"reply":"itemsWithSecrets","items":[{ATTRIBUTES}, ...],"secretLengths":[N, ...]}
//                                       then 1 secret: the items' secrets one after the other,
//                                       at most 4 MiB (itemSearch with "secrets")
//                 {"reply":"itemsWithLocks","items":[{ATTRIBUTES}, ...],"locked":[BOOL, ...],"state":"..."}
//                                       (itemSearch with "locks": whether each item's secret
//                                       cannot be read now, and the lock state)
//                 {"reply":"backupProgress","objects":N,"bytes":N}  a backup, now and then
//                 {"reply":"backedUp","itemsLeftOut":N,"otherUsersItemsLeftOut":N}  a backup, at its end
//
// A reply is at most 64 MiB (a list of many items); the client reads it from its own daemon.
//
// After a reply the client may send its next request on the same connection (a `watch` or a
// `backup` ends it); the daemon closes a connection idle for 30 s between requests, without
// a reply, and at unmount.

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
