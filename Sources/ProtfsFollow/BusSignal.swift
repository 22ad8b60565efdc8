import CSystemd
import ProtfsBus

/// The signals the follower subscribes to, decoded while their message is alive. A signal
/// whose arguments do not have the documented form is `.malformed`: logged, never obeyed.
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
        let member = sd_bus_message_get_member(message).map { String(cString: $0) } ?? ""
        let path = sd_bus_message_get_path(message).map { String(cString: $0) } ?? ""
        let reader = BusReply(message, what: "the signal \(member)")
        do throws(BusError) {
            switch member {
            case "Lock": self = .sessionLock(path: path)
            case "PropertiesChanged":
                guard try reader.string() == Logind.sessionInterface else { self = .other; return }
                let hint = try reader.booleanProperty("LockedHint")
                self = .sessionProperties(path: path, lockedHint: hint, lockedHintInvalidated: try reader.strings().contains("LockedHint"))
            case "ActiveChanged": self = .screenSaverActive(try reader.bool())
            case "PrepareForSleep": self = .prepareForSleep(try reader.bool())
            case "NameOwnerChanged":
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
