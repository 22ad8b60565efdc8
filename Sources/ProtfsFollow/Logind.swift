import Glibc
import ProtfsSystem
import ProtfsBus

/// systemd-logind's documented D-Bus API, the part the follower uses: finding the session,
/// the sleep inhibitor, the session's `LockedHint`.
enum Logind {
    static let name = "org.freedesktop.login1"
    static let managerPath = "/org/freedesktop/login1"
    static let managerInterface = "org.freedesktop.login1.Manager"
    static let sessionInterface = "org.freedesktop.login1.Session"
    static let userInterface = "org.freedesktop.login1.User"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"

    /// The session to follow and how it was found: `explicit` (`--session`), else
    /// `XDG_SESSION_ID`, else the session of this process, else the user's display session
    /// (a user service runs in no session of its own).
    static func session(on bus: Bus, explicit: String?) throws(BusFailure) -> (path: String, how: String) {
        if let id = explicit ?? environment("XDG_SESSION_ID") {
            let how = explicit != nil ? "session \(id) (--session)" : "session \(id) (XDG_SESSION_ID)"
            return (try callManager(bus, "GetSession", [.string(id)]) { r throws(BusFailure) in try r.objectPath() }, how)
        }
        if let path = try? callManager(bus, "GetSessionByPID", [.uint32(UInt32(getpid()))], read: { r throws(BusFailure) in try r.objectPath() }) {
            return (path, "the session of this process")
        }
        let user = try callManager(bus, "GetUser", [.uint32(getuid())]) { r throws(BusFailure) in try r.objectPath() }
        let display = try bus.call(name, user, propertiesInterface, "Get", arguments: [.string(userInterface), .string("Display")]) {
            r throws(BusFailure) in
            try r.variant("(so)") { () throws(BusFailure) -> String in
                try r.structure("so") { () throws(BusFailure) -> String in
                    _ = try r.string()
                    return try r.objectPath()
                }
            }
        }
        // logind's "no display session" is the root path.
        guard display != "/" else { throw BusFailure("user \(getuid()) has no display session; name one with --session", errno: ENOENT) }
        return (display, "the display session of user \(getuid())")
    }

    static func lockedHint(on bus: Bus, session: String) throws(BusFailure) -> Bool {
        try bus.call(name, session, propertiesInterface, "Get", arguments: [.string(sessionInterface), .string("LockedHint")]) {
            r throws(BusFailure) in try r.variant("b") { () throws(BusFailure) -> Bool in try r.bool() }
        }
    }

    /// A delay inhibitor for sleep: logind waits for its descriptor to close (at most its
    /// `InhibitDelayMaxSec`) before the machine sleeps.
    static func inhibitSleep(on bus: Bus, why: String) throws(BusFailure) -> OwnedDescriptor {
        let fd = try callManager(bus, "Inhibit", [.string("sleep"), .string("protfs"), .string(why), .string("delay")]) {
            r throws(BusFailure) in try r.fileDescriptor()
        }
        return OwnedDescriptor(adopting: FileDescriptor(rawValue: fd))
    }

    private static func callManager<T>(_ bus: Bus, _ member: String, _ arguments: [BusArgument],
                                       read: (BusReply) throws(BusFailure) -> T) throws(BusFailure) -> T {
        try bus.call(name, managerPath, managerInterface, member, arguments: arguments, read: read)
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        return String(cString: value)
    }
}
