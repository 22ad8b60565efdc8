import ProtfsDomain

/// A D-Bus error reply: its name and a message for people (never a secret).
public struct BusErrorReply: Error, CustomStringConvertible {
    public let name: String
    public let message: String
    public var description: String { message }

    static func invalidArguments(_ message: String) -> BusErrorReply { BusErrorReply(name: "org.freedesktop.DBus.Error.InvalidArgs", message: message) }
    static func noSuchObject(_ path: String) -> BusErrorReply {
        BusErrorReply(name: "org.freedesktop.Secret.Error.NoSuchObject", message: "no such object: \(path)")
    }
    static func isLocked(_ message: String) -> BusErrorReply { BusErrorReply(name: "org.freedesktop.Secret.Error.IsLocked", message: message) }
    static let noSession = BusErrorReply(name: "org.freedesktop.Secret.Error.NoSession", message: "no such session")
    static func notSupported(_ message: String) -> BusErrorReply { BusErrorReply(name: "org.freedesktop.DBus.Error.NotSupported", message: message) }
    static func failed(_ message: String) -> BusErrorReply { BusErrorReply(name: "org.freedesktop.DBus.Error.Failed", message: message) }
    static func accessDenied(_ message: String) -> BusErrorReply { BusErrorReply(name: "org.freedesktop.DBus.Error.AccessDenied", message: message) }
    static func unknownMethod(_ message: String) -> BusErrorReply { BusErrorReply(name: "org.freedesktop.DBus.Error.UnknownMethod", message: message) }
    static func unknownProperty(_ message: String) -> BusErrorReply {
        BusErrorReply(name: "org.freedesktop.DBus.Error.UnknownProperty", message: message)
    }
    static let malformed = invalidArguments("the arguments do not have the types the method takes")
}

/// When the provider itself cannot run (no bus, the name taken): exit 1 with the message.
extension BusErrorReply: CommandError {
    public var exitCode: ExitCode { .failure }
}
