import ProtfsCrypto
import ProtfsDomain

// The control protocol between `protfsctl` and the daemon, over the Unix stream socket of
// `ControlSocketPath`. One request per connection; every integer is big-endian.
//
//   request  := magic header secret*
//   magic    := "PFC" 0x01                       (the protocol version is the last byte)
//   header   := u32 length (1 ... 65536), then that many bytes of UTF-8 JSON:
//                 {"request":"status"}
//                 {"request":"lock","mode":"normal"|"wait"|"now"}
//                 {"request":"unlock"}                          + 1 secret: the passcode
//                 {"request":"passwd"}                          + 2 secrets: old, new
//                 {"request":"backingPath","components":[[byte, ...], ...]}
//                 {"request":"watch"}
//   secret   := u32 length (1 ... 4096), then the passcode's bytes
//
// The number of secrets follows from the request; the server reads each one straight into
// locked memory, so a passcode never passes through JSON, a String or an array. Keys other
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
//
// The daemon closes the connection after its reply, or at unmount for `watch`.

/// A request of `protfsctl`, without its secrets (`ControlRequestMessage` carries both).
public enum ControlRequest: Sendable, Equatable {
    case status
    case lock(LockRequest)
    case unlock
    case changePasscode
    /// The plaintext names from the mount's root to the object.
    case backingPath([[UInt8]])
    case watch

    /// The passcodes that follow the header on the wire.
    public var secretCount: Int {
        switch self {
        case .unlock: 1
        case .changePasscode: 2
        case .status, .lock, .backingPath, .watch: 0
        }
    }

    /// Only the mounting user and root may change the state, the passcode, or learn backing
    /// names; anyone may ask for the status or watch.
    public var needsMountingUser: Bool {
        switch self {
        case .status, .watch: false
        case .lock, .unlock, .changePasscode, .backingPath: true
        }
    }

    /// What the request does, for "not allowed: ..." messages.
    public var action: String {
        switch self {
        case .status: "ask for the status of"
        case .lock: "lock"
        case .unlock: "unlock"
        case .changePasscode: "change the passcode of"
        case .backingPath: "look up backing paths in"
        case .watch: "watch"
        }
    }
}

/// A request as the server received it: the passcodes are in locked memory, wiped when the
/// message is released.
public struct ControlRequestMessage: Sendable {
    public let request: ControlRequest
    public let secrets: [SecureBuffer]
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
}

/// The limits every frame is held to, on both sides.
public enum ControlLimits {
    public static let maximumHeaderLength = 64 * 1024
    /// At most two secrets follow a header (`passwd`); how many is fixed by the request.
    public static let maximumSecretLength = PasscodeLimits.maximumByteCount
    public static let maximumJSONDepth = 8
    /// A path of PATH_MAX bytes has at most this many components.
    public static let maximumPathComponents = 2048
    public static let maximumNameLength = 255
    /// How long a client has to send its whole request.
    public static let requestTimeout = Duration.seconds(5)
}
