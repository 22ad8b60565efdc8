import CSystemd
import ProtfsBus

/// The signals the follower subscribes to, decoded while their message is alive. A signal
/// whose arguments do not have the documented form is `.malformed`: logged, never obeyed.
/// Each is recognised by its interface and member together: a `Lock` of another interface
/// is `.other`.
enum BusSignal: Equatable {
    /// `org.freedesktop.login1.Session.Lock` on the session's object.
    case sessionLock(path: String)
    /// `PropertiesChanged` of a session: its `LockedHint` when changed (nil when only
    /// invalidated, or not among them).
    case sessionProperties(path: String, lockedHint: Bool?, lockedHintInvalidated: Bool)
    /// `org.freedesktop.ScreenSaver.ActiveChanged`.
    case screenSaverActive(Bool)
    /// `org.freedesktop.login1.Manager.PrepareForSleep`.
    case prepareForSleep(Bool)
    /// `org.freedesktop.DBus.NameOwnerChanged`: `name` has a new owner, or none (empty).
    case nameOwnerChanged(name: String, newOwner: String)
    case malformed(String)
    case other

    init(_ message: OpaquePointer) {
        let interface = sd_bus_message_get_interface(message).map { String(cString: $0) } ?? ""
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
        let reader = BusReply(message, what: "the signal \(member)")
        do throws(BusFailure) {
            switch (interface, member) {
            case (Logind.sessionInterface, "Lock"): self = .sessionLock(path: path)
            case (Logind.propertiesInterface, "PropertiesChanged"):
                guard try reader.string() == Logind.sessionInterface else { self = .other; return }
                let hint = try reader.booleanProperty("LockedHint")
                self = .sessionProperties(path: path, lockedHint: hint, lockedHintInvalidated: try reader.strings().contains("LockedHint"))
            case ("org.freedesktop.ScreenSaver", "ActiveChanged"): self = .screenSaverActive(try reader.bool())
            case (Logind.managerInterface, "PrepareForSleep"): self = .prepareForSleep(try reader.bool())
            case (BusDriver.name, "NameOwnerChanged"):
                let name = try reader.string()
                _ = try reader.string()
                self = .nameOwnerChanged(name: name, newOwner: try reader.string())
            default: self = .other
            }
        } catch {
            let signature = sd_bus_message_get_signature(message, 1).map { String(cString: $0) } ?? "?"
            self = .malformed("\(member) from \(path) with arguments '\(signature)', not as documented")
        }
    }
}

/// A signal as it arrived, with what the bus daemon stamped on it and no peer can choose:
/// the sender's unique name, and whether it was addressed to this connection alone. A
/// unicast signal reaches a connection whatever its match rules, and sd-bus lets a rule's
/// well-known sender match any unique name: so the follower decides from these, never from
/// the rules it subscribed with.
struct ReceivedSignal {
    let signal: BusSignal
    let bus: BusKind
    /// The sender's unique name (`:1.42`), or `org.freedesktop.DBus` for the bus driver.
    let sender: String
    let unicast: Bool

    init(_ message: OpaquePointer, on bus: BusKind) {
        signal = BusSignal(message)
        self.bus = bus
        sender = sd_bus_message_get_sender(message).map { String(cString: $0) } ?? ""
        unicast = sd_bus_message_get_destination(message) != nil
    }
}

/// The message bus itself: the sender of `NameOwnerChanged`, and the owner of every name.
enum BusDriver {
    static let name = "org.freedesktop.DBus"
    static let path = "/org/freedesktop/DBus"

    /// The unique name that owns `name` now (`GetNameOwner`).
    static func owner(of name: String, on bus: Bus) throws(BusFailure) -> String {
        try bus.call(Self.name, path, Self.name, "GetNameOwner", arguments: [.string(name)]) { r throws(BusFailure) in try r.string() }
    }
}
