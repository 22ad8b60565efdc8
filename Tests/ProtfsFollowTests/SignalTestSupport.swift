import CSystemd
import ProtfsBusTestSupport
@testable import ProtfsFollow

/// Signals as the follower receives them, made without a bus daemon (`LocalBus`): stamped
/// with a sender and, for a unicast one, a destination.
final class SignalMaker {
    private let bus: LocalBus

    init() throws { bus = try LocalBus() }

    /// The signal as the follower receives it on `kind`'s bus.
    func received(_ path: String, _ interface: String, _ member: String, from sender: String, on kind: BusKind = .system,
                  to destination: String? = nil, _ append: (OpaquePointer) -> Void = { _ in }) throws -> ReceivedSignal {
        let message = try bus.signal(path, interface, member)
        defer { sd_bus_message_unref(message) }
        append(message)
        try bus.arrive(message, from: sender, to: destination)
        return ReceivedSignal(message, on: kind)
    }

    static let logind = ":1.3"
    static let session = "/org/freedesktop/login1/session/_32"

    func lock(_ path: String = SignalMaker.session, from sender: String = SignalMaker.logind, to destination: String? = nil) throws -> ReceivedSignal {
        try received(path, Logind.sessionInterface, "Lock", from: sender, to: destination)
    }

    func prepareForSleep(_ starting: Bool, from sender: String = SignalMaker.logind) throws -> ReceivedSignal {
        try received(Logind.managerPath, Logind.managerInterface, "PrepareForSleep", from: sender) { MessageWriting.append($0, bool: starting) }
    }

    func nameOwnerChanged(_ name: String, old: String, new: String, from sender: String = BusDriver.name) throws -> ReceivedSignal {
        try received(BusDriver.path, BusDriver.name, "NameOwnerChanged", from: sender) { m in
            for text in [name, old, new] { MessageWriting.append(m, "s", text) }
        }
    }

    /// `PropertiesChanged` of the session: `LockedHint` changed to `hint` when given, and
    /// the names of invalidated properties.
    func lockedHint(_ hint: Bool?, invalidated: [String] = [], path: String = SignalMaker.session,
                    interface: String = Logind.sessionInterface, from sender: String = SignalMaker.logind) throws -> ReceivedSignal {
        try received(path, Logind.propertiesInterface, "PropertiesChanged", from: sender) { m in
            MessageWriting.append(m, "s", interface)
            MessageWriting.open(m, "a", "{sv}") {
                if let hint {
                    MessageWriting.open(m, "e", "sv") {
                        MessageWriting.append(m, "s", "LockedHint")
                        MessageWriting.open(m, "v", "b") { MessageWriting.append(m, bool: hint) }
                    }
                }
            }
            MessageWriting.open(m, "a", "s") { for name in invalidated { MessageWriting.append(m, "s", name) } }
        }
    }

    func screenSaver(_ active: Bool, from sender: String = ":1.40", on kind: BusKind = .session) throws -> ReceivedSignal {
        try received("/org/freedesktop/ScreenSaver", "org.freedesktop.ScreenSaver", "ActiveChanged", from: sender, on: kind) {
            MessageWriting.append($0, bool: active)
        }
    }
}
